// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The image cache (cache.h): a list in LRU order (most recent first) under
 * one mutex. Each entry owns one detached mount (ra_image_mount(): erofs on
 * its file, else a loop device with autoclear; fsmount, read-only) and is lent out by reference
 * count; an entry that is dropped while lent out ("dead") is closed by the
 * last ra_cache_put().
 *
 *   get   fstat(image fd) -> key -> hit: refs++, to the front; an entry still
 *               being mounted by another assembly is waited for (a condition
 *               variable), so that N assemblies missing at once make one mount
 *               and at most one loop device, not N
 *         miss: a placeholder entry (loading) goes in; unlock, ra_image_mount()
 *               (the slow part, outside the lock), lock; evict LRU entries not
 *               lent out until it fits; if it still does not, it is dropped
 *               from the list at once ("dead": a bypass, used by the
 *               assemblies holding it, closed by the last put); a failed mount
 *               takes the placeholder out and its waiters try for themselves
 *   put   refs--; a dead entry with no refs left is closed
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "cache.h"
#include "sysmnt.h"
#include "uapi.h"
#include "util.h"

#define RA_DIGEST_MAX	80

struct ra_cache_entry {
	struct ra_cache_entry *prev, *next;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
	char digest[RA_DIGEST_MAX];		/* "" when keyed by fstat */
	enum ra_fstype type;			/* as asked (auto stays auto: detected the same way each time) */
	char *path;
	int fd;					/* the detached mount */
	unsigned int refs;
	bool loading;				/* being mounted (outside the lock) by the assembly that missed */
	bool dead;				/* no longer in the list; closed by the last put */
	uint64_t hits;
	uint64_t mnt_id;
};

struct ra_cache {
	pthread_mutex_t lock;
	pthread_cond_t loaded;			/* an entry finished loading (or failed to) */
	struct ra_cache_entry *head, *tail;
	unsigned int n, max_entries;
	uint64_t bytes, max_bytes;
	uint64_t hits, misses, evictions, stale, bypass;
};

#define OPT(o, field, def)	RA_OPT(o, struct rootasm_cache_opts, field, def)

int ra_cache_new(const struct rootasm_cache_opts *o, struct ra_cache **ret)
{
	struct ra_cache *c;

	if (o && o->size < offsetof(struct rootasm_cache_opts, max_entries))
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->loaded, NULL);
	c->max_entries = OPT(o, max_entries, 0u) ? OPT(o, max_entries, 0u) : ROOTASM_CACHE_DEFAULT_ENTRIES;
	c->max_bytes = OPT(o, max_bytes, (uint64_t)0) ? OPT(o, max_bytes, (uint64_t)0) : ROOTASM_CACHE_DEFAULT_BYTES;
	*ret = c;
	return 0;
}

static void entry_close(struct ra_cache_entry *ent)
{
	close_fdp(&ent->fd);
	free(ent->path);
	free(ent);
}

static void unlink_entry(struct ra_cache *c, struct ra_cache_entry *ent)
{
	if (ent->prev)
		ent->prev->next = ent->next;
	else
		c->head = ent->next;
	if (ent->next)
		ent->next->prev = ent->prev;
	else
		c->tail = ent->prev;
	ent->prev = ent->next = NULL;
	c->n--;
	c->bytes -= (uint64_t)ent->size;
}

static void push_front(struct ra_cache *c, struct ra_cache_entry *ent)
{
	ent->prev = NULL;
	ent->next = c->head;
	if (c->head)
		c->head->prev = ent;
	c->head = ent;
	if (!c->tail)
		c->tail = ent;
	c->n++;
	c->bytes += (uint64_t)ent->size;
}

/* Out of the list; closed now, or by the last put when lent out. Locked. */
static void drop(struct ra_cache *c, struct ra_cache_entry *ent)
{
	unlink_entry(c, ent);
	if (ent->refs) {
		ent->dead = true;
		return;
	}
	entry_close(ent);
}

void ra_cache_free(struct ra_cache *c)
{
	if (!c)
		return;
	while (c->head)
		drop(c, c->head);
	pthread_cond_destroy(&c->loaded);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static bool same_time(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

static bool key_eq(const struct ra_cache_entry *ent, const struct stat *st, const char *digest, enum ra_fstype type)
{
	if (digest && *digest)
		return !strcmp(ent->digest, digest) && ent->type == type;
	return !ent->digest[0] && ent->dev == st->st_dev && ent->ino == st->st_ino && ent->size == st->st_size &&
	       same_time(&ent->mtime, &st->st_mtim) && same_time(&ent->ctime, &st->st_ctim) && ent->type == type;
}

/* The entry for the key, to the front, lent out; stale ones dropped on the way. Locked. */
static struct ra_cache_entry *lookup(struct ra_cache *c, const struct stat *st, const char *path, const char *digest,
				     enum ra_fstype type)
{
	struct ra_cache_entry *ent, *next, *found = NULL;

	for (ent = c->head; ent; ent = next) {
		next = ent->next;
		if (key_eq(ent, st, digest, type)) {
			found = ent;
			continue;
		}
		/* the same inode changed, or the same name is another file now: the entry is stale */
		if (!ent->loading && !ent->digest[0] && (!digest || !*digest) && ent->type == type &&
		    ((ent->dev == st->st_dev && ent->ino == st->st_ino) || !strcmp(ent->path, path))) {
			c->stale++;
			drop(c, ent);
		}
	}
	if (found) {
		unlink_entry(c, found);
		push_front(c, found);
		found->refs++;
		found->hits++;
	}
	return found;
}

int ra_cache_get(struct ra_cache *c, int image_fd, const char *path, const char *digest, enum ra_fstype type,
		 struct ra_cache_entry **ret, struct rootasm_error *e)
{
	struct ra_cache_entry *ent;
	struct stat st;
	struct statx sx;
	int fd;

	*ret = NULL;
	if (fstat(image_fd, &st) < 0)
		return ra_err(e, errno, -EBADF, "fstat", path, "image cache key");
	if (digest && strlen(digest) >= RA_DIGEST_MAX)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "image cache", path, "digest longer than %d bytes",
				   RA_DIGEST_MAX - 1);
	pthread_mutex_lock(&c->lock);
	for (;;) {
		ent = lookup(c, &st, path, digest, type);
		if (!ent)
			break;
		/* lent to us now; mounted by someone else still: wait for it */
		while (ent->loading)
			pthread_cond_wait(&c->loaded, &c->lock);
		if (ent->fd >= 0) {
			c->hits++;
			pthread_mutex_unlock(&c->lock);
			*ret = ent;
			return ent->fd;
		}
		/* its mount failed: give it back and try ourselves */
		ent->hits--;
		if (!--ent->refs && ent->dead)
			entry_close(ent);
	}
	c->misses++;
	ent = calloc(1, sizeof(*ent));
	if (ent)
		ent->path = strdup(path);
	if (!ent || !ent->path) {
		pthread_mutex_unlock(&c->lock);
		free(ent);
		return ra_oom(e, "image cache");
	}
	ent->fd = -EBADF;
	ent->dev = st.st_dev;
	ent->ino = st.st_ino;
	ent->size = st.st_size;
	ent->mtime = st.st_mtim;
	ent->ctime = st.st_ctim;
	ent->type = type;
	if (digest)
		snprintf(ent->digest, sizeof(ent->digest), "%s", digest);
	ent->loading = true;
	ent->refs = 1;
	push_front(c, ent);
	pthread_mutex_unlock(&c->lock);

	fd = ra_image_mount(image_fd, path, type, 0, e);
	if (fd >= 0 && statx(fd, "", AT_EMPTY_PATH, RA_STATX_MNT_ID_UNIQUE, &sx) == 0)
		ent->mnt_id = sx.stx_mnt_id;

	pthread_mutex_lock(&c->lock);
	ent->loading = false;
	ent->fd = fd;
	pthread_cond_broadcast(&c->loaded);
	if (fd < 0) {
		/* out of the list; waiters see fd < 0 and try for themselves; the last one frees it */
		if (!ent->dead)
			unlink_entry(c, ent);
		ent->dead = true;
		if (!--ent->refs)
			entry_close(ent);
		pthread_mutex_unlock(&c->lock);
		return fd;
	}
	for (struct ra_cache_entry *v = c->tail, *prev; v && (c->n > c->max_entries || c->bytes > c->max_bytes); v = prev) {
		prev = v->prev;
		if (v->refs)
			continue;
		c->evictions++;
		drop(c, v);
	}
	if (!ent->dead && (c->n > c->max_entries || c->bytes > c->max_bytes)) {
		/* everything is lent out: this mount serves the assemblies holding it, then goes */
		c->bypass++;
		drop(c, ent);
	}
	pthread_mutex_unlock(&c->lock);
	*ret = ent;
	return fd;
}

void ra_cache_put(struct ra_cache *c, struct ra_cache_entry *ent)
{
	bool close_it;

	if (!ent)
		return;
	pthread_mutex_lock(&c->lock);
	close_it = !--ent->refs && ent->dead;
	pthread_mutex_unlock(&c->lock);
	if (close_it)
		entry_close(ent);
}

/* ---------------------------------------- the public calls' halves (context.c) */

int ra_cache_stats(struct ra_cache *c, struct rootasm_cache_stats *st)
{
	size_t size;

	if (!st || st->size < offsetof(struct rootasm_cache_stats, entries))
		return -EINVAL;
	if (!c)
		return -ENOENT;
	size = st->size < sizeof(*st) ? st->size : sizeof(*st);
	{
		struct rootasm_cache_stats s = { .size = size };

		pthread_mutex_lock(&c->lock);
		s.entries = c->n;
		s.bytes = c->bytes;
		s.max_entries = c->max_entries;
		s.max_bytes = c->max_bytes;
		s.hits = c->hits;
		s.misses = c->misses;
		s.evictions = c->evictions;
		s.stale = c->stale;
		s.bypass = c->bypass;
		for (struct ra_cache_entry *ent = c->head; ent; ent = ent->next)
			s.lent += ent->refs;
		pthread_mutex_unlock(&c->lock);
		memcpy(st, &s, size);
	}
	return 0;
}

static const char *const fstype_names[] = { "auto", "squashfs", "erofs" };

int ra_cache_list(struct ra_cache *c, void (*fn)(const struct rootasm_cache_entry_info *i, void *userdata),
		  void *userdata)
{
	int n = 0;

	if (!c)
		return -ENOENT;
	pthread_mutex_lock(&c->lock);
	for (struct ra_cache_entry *ent = c->head; ent; ent = ent->next, n++) {
		struct rootasm_cache_entry_info i = {
			.path = ent->path,
			.digest = ent->digest[0] ? ent->digest : NULL,
			.fstype = fstype_names[ent->type],
			.dev_major = major(ent->dev),
			.dev_minor = minor(ent->dev),
			.ino = ent->ino,
			.bytes = (uint64_t)ent->size,
			.mtime_sec = ent->mtime.tv_sec,
			.mtime_nsec = ent->mtime.tv_nsec,
			.hits = ent->hits,
			.lent = ent->refs,
			.mnt_id = ent->mnt_id,
		};

		/* fn runs under the cache's lock: it must not call into the library */
		fn(&i, userdata);
	}
	pthread_mutex_unlock(&c->lock);
	return n;
}

int ra_cache_trim(struct ra_cache *c)
{
	int n = 0;

	if (!c)
		return -ENOENT;
	pthread_mutex_lock(&c->lock);
	for (struct ra_cache_entry *ent = c->head, *next; ent; ent = next) {
		next = ent->next;
		if (ent->refs)
			continue;
		drop(c, ent);
		n++;
	}
	pthread_mutex_unlock(&c->lock);
	return n;
}
