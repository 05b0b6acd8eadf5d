/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The library's state lives in a context, never in statics: the feature
 * probe cache with its scratch mount, and the debug log. One mutex guards
 * the cache; everything else in a context is set once.
 */
#ifndef ROOTASM_CONTEXT_H
#define ROOTASM_CONTEXT_H

#include <pthread.h>
#include <time.h>

#include "rootasm.h"

struct ra_cache;

#define RA_FEAT_COUNT		(ROOTASM_FEAT_IDMAP_IDMAPPED + 1)
#define RA_DETAIL_MAX		160
#define RA_DEFER_MAX		64

struct rootasm_ctx {
	pthread_mutex_t lock;			/* guards everything below it */
	signed char cache[RA_FEAT_COUNT];	/* 0 unknown, 1 present, -1 absent, -2 not permitted */
	char detail[RA_FEAT_COUNT][RA_DETAIL_MAX];
	int scratch_fd;				/* a detached tmpfs for the probes of one session */
	unsigned int scratch_seq;
	int session;				/* > 0 while a series of probes runs */
	enum { RA_PCACHE_UNREAD, RA_PCACHE_MISS, RA_PCACHE_HIT, RA_PCACHE_IGNORE } pcache;	/* the file (probecache.c) */
	bool pdirty;				/* answers probed since the file was read or written */

	struct ra_cache *images;		/* image cache (cache.h), set once; NULL: none */
	int lock_ns;				/* a mount namespace of one tmpfs, for the tree lock (lock.c) */
	int lock_userns;			/* the user namespace every locked copy is made in (lock.c) */

	pthread_mutex_t dlock;			/* guards the deferred closes */
	int deferred[RA_DEFER_MAX];		/* detached mounts to dissolve later (ra_defer_close()) */
	unsigned int ndeferred;

	bool debug;
	struct timespec t0;			/* when it was made: the trace's clock */
	void (*log)(void *userdata, const char *line);
	void *log_userdata;
};

/* @ctx, or the process-wide default context when NULL (made once, thread-safe). */
struct rootasm_ctx *ra_ctx(struct rootasm_ctx *ctx);

/* One line of debug trace, when the context traces. */
void ra_trace(struct rootasm_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Close @fd, a detached mount, later: dissolving one costs the kernel an RCU
 * grace period (milliseconds on a loaded machine), which does not belong on
 * the way to a finished tree. rootasm_ctx_flush() (or a full list, or
 * rootasm_ctx_free()) closes them; a process that exits leaves them to the
 * kernel's delayed fput. Takes @fd, whatever happens.
 */
void ra_defer_close(struct rootasm_ctx *ctx, int fd);

#define RA_TRACE(ctx, ...) do { if ((ctx)->debug) ra_trace((ctx), __VA_ARGS__); } while (0)

#endif
