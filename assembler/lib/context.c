// SPDX-License-Identifier: LGPL-2.1-or-later
/* The context: probe cache, debug log. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache.h"
#include "context.h"
#include "util.h"

static void ctx_init(struct rootasm_ctx *c, unsigned int flags)
{
	const char *env = secure_getenv("ROOTASM_DEBUG");

	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->dlock, NULL);
	c->scratch_fd = -EBADF;
	c->lock_ns = -EBADF;
	c->lock_userns = -EBADF;
	c->debug = (flags & ROOTASM_CTX_DEBUG) || (env && *env && strcmp(env, "0"));
	clock_gettime(CLOCK_MONOTONIC, &c->t0);
}

int rootasm_ctx_new(unsigned int flags, struct rootasm_ctx **ret)
{
	struct rootasm_ctx *c;

	if (flags & ~ROOTASM_CTX_DEBUG)
		return -EINVAL;
	c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	ctx_init(c, flags);
	*ret = c;
	return 0;
}

void rootasm_ctx_flush(struct rootasm_ctx *ctx)
{
	struct rootasm_ctx *c = ra_ctx(ctx);
	int fds[RA_DEFER_MAX];
	unsigned int n;

	pthread_mutex_lock(&c->dlock);
	n = c->ndeferred;
	memcpy(fds, c->deferred, n * sizeof(int));
	c->ndeferred = 0;
	pthread_mutex_unlock(&c->dlock);
	/* outside the lock: each close may wait for an RCU grace period */
	for (unsigned int i = 0; i < n; i++)
		close(fds[i]);
}

void ra_defer_close(struct rootasm_ctx *ctx, int fd)
{
	struct rootasm_ctx *c = ra_ctx(ctx);
	bool full;

	if (fd < 0)
		return;
	pthread_mutex_lock(&c->dlock);
	full = c->ndeferred == RA_DEFER_MAX;
	if (!full)
		c->deferred[c->ndeferred++] = fd;
	pthread_mutex_unlock(&c->dlock);
	if (full) {
		rootasm_ctx_flush(c);
		close(fd);
	}
}

void rootasm_ctx_free(struct rootasm_ctx *c)
{
	if (!c)
		return;
	rootasm_ctx_flush(c);
	close_fdp(&c->scratch_fd);
	close_fdp(&c->lock_ns);
	close_fdp(&c->lock_userns);
	ra_cache_free(c->images);
	pthread_mutex_destroy(&c->lock);
	pthread_mutex_destroy(&c->dlock);
	free(c);
}

void rootasm_ctx_set_log(struct rootasm_ctx *c, void (*fn)(void *, const char *), void *userdata)
{
	c = ra_ctx(c);
	pthread_mutex_lock(&c->lock);
	c->log = fn;
	c->log_userdata = userdata;
	pthread_mutex_unlock(&c->lock);
}

static struct rootasm_ctx default_ctx;
static pthread_once_t default_once = PTHREAD_ONCE_INIT;

static void default_init(void)
{
	ctx_init(&default_ctx, 0);
}

struct rootasm_ctx *ra_ctx(struct rootasm_ctx *ctx)
{
	if (ctx)
		return ctx;
	pthread_once(&default_once, default_init);
	return &default_ctx;
}

void ra_trace(struct rootasm_ctx *c, const char *fmt, ...)
{
	char line[1024];
	struct timespec t;
	va_list ap;
	int saved = errno, n;

	/* each line says when, in ms since the context was made */
	clock_gettime(CLOCK_MONOTONIC, &t);
	n = snprintf(line, sizeof(line), "%8.3f ", (t.tv_sec - c->t0.tv_sec) * 1e3 + (t.tv_nsec - c->t0.tv_nsec) / 1e6);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	if (c->log)
		c->log(c->log_userdata, line);
	else
		fprintf(stderr, "rootasm: debug: %s\n", line);
	errno = saved;
}

/* ------------------------------------------------- the context's image cache */

int rootasm_ctx_set_cache(struct rootasm_ctx *ctx, const struct rootasm_cache_opts *o)
{
	struct rootasm_ctx *x = ra_ctx(ctx);
	struct ra_cache *c;
	int r;

	/* the size rules of rootasm.h: known fields up to the caller's size, nothing set beyond ours */
	r = o ? ra_opts_size(o, o->size, offsetof(struct rootasm_cache_opts, max_entries), sizeof(*o)) : 0;
	if (r < 0)
		return r;
	if (RA_OPT(o, struct rootasm_cache_opts, flags, 0u))
		return -EINVAL;
	r = ra_cache_new(o, &c);
	if (r < 0)
		return r;
	pthread_mutex_lock(&x->lock);
	if (x->images) {
		pthread_mutex_unlock(&x->lock);
		ra_cache_free(c);
		return -EBUSY;
	}
	x->images = c;
	pthread_mutex_unlock(&x->lock);
	return 0;
}

int rootasm_cache_stats(struct rootasm_ctx *ctx, struct rootasm_cache_stats *st)
{
	return ra_cache_stats(ra_ctx(ctx)->images, st);
}

int rootasm_cache_list(struct rootasm_ctx *ctx, void (*fn)(const struct rootasm_cache_entry_info *i, void *userdata),
		       void *userdata)
{
	return ra_cache_list(ra_ctx(ctx)->images, fn, userdata);
}

int rootasm_cache_trim(struct rootasm_ctx *ctx)
{
	return ra_cache_trim(ra_ctx(ctx)->images);
}

const char *rootasm_version(void)
{
	return ROOTASM_VERSION_STRING;
}
