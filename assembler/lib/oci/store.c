// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The content-addressed store, as rootasm_import() (import.c) fills it:
 *
 *   STORE/layers/sha256/DIFFHEX.erofs|.squashfs   a layer image, keyed by the diff-id
 *   STORE/layers/sha256/DIFFHEX.FS.json           what it was made from (blob digest, sizes)
 *   STORE/images/sha256/MANIFESTHEX.json          an imported image: manifest, config, layers
 *   STORE/images/sha256/MANIFESTHEX.FS.layout.json   its layout (layers bottom first, tmpfs upper)
 *   STORE/tmp/                                    an empty directory (import.c)
 *
 * Here: opening it (made when missing, refused when others can write it),
 * and publishing a file into it so that it appears complete or not at all,
 * taken back when the import fails.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include <jansson.h>

#include "child.h"
#include "context.h"
#include "json.h"
#include "layout.h"
#include "oci.h"
#include "registry.h"
#include "store.h"
#include "sysmnt.h"
#include "unpack.h"
#include "util.h"


static const struct open_how dir_beneath = {
	.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
	.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
};

/* mkdir -p of an absolute or relative @path (0755); the last component must not be a symlink. */
static int open_store_dir(const char *path, struct rootasm_error *e)
{
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, .resolve = RESOLVE_NO_MAGICLINKS };
	_cleanup_free_ char *p = strdup(path);
	int fd;

	if (!p)
		return ra_oom(e, "open store");
	fd = sys_openat2(AT_FDCWD, p, &how);
	if (fd < 0 && errno == ENOENT) {
		for (char *s = p + 1; *s; s++) {
			if (*s != '/')
				continue;
			*s = '\0';
			if (mkdir(p, 0755) < 0 && errno != EEXIST)
				return ra_err(e, errno, -EBADF, "create store", p, NULL);
			*s = '/';
		}
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			return ra_err(e, errno, -EBADF, "create store", p, NULL);
		fd = sys_openat2(AT_FDCWD, p, &how);
	}
	if (fd < 0)
		return ra_err_kind(e, errno == ENOTDIR || errno == ELOOP ? ROOTASM_ERROR_USAGE : ROOTASM_ERROR_RUNTIME,
				   errno, "open store", path, errno == ENOTDIR ?
				   "is not a directory (or is a symbolic link: name its target)" : NULL);
	return fd;
}

static int sub(struct ra_store *s, int dir, const char *name, struct rootasm_error *e)
{
	struct open_how how = dir_beneath;
	int fd;

	if (mkdirat(dir, name, 0755) < 0 && errno != EEXIST)
		return ra_err(e, errno, -EBADF, "create store directory", name, NULL);
	fd = sys_openat2(dir, name, &how);
	if (fd < 0)
		return ra_err(e, errno, -EBADF, "open store directory", name, "in %s", s->path);
	return fd;
}

void ra_store_close(struct ra_store *s)
{
	for (size_t i = 0; i < s->npubs; i++)
		close_fdp(&s->pubs[i].fd);
	free(s->pubs);
	s->pubs = NULL;
	s->npubs = 0;
	close_fdp(&s->fd);
	close_fdp(&s->layers);
	close_fdp(&s->images);
	free(s->path);
}

/* STORE/@name/sha256 (layers/ or images/), made when missing. */
static int sub_sha256(struct ra_store *s, const char *name, struct rootasm_error *e)
{
	_cleanup_close_ int d = sub(s, s->fd, name, e);

	return d < 0 ? d : sub(s, d, "sha256", e);
}

static int store_open(const char *path, struct ra_store *s, struct rootasm_error *e)
{
	_cleanup_close_ int t = -EBADF;
	char abs[PATH_MAX];
	int r;

	*s = (struct ra_store){ .fd = -EBADF, .layers = -EBADF, .images = -EBADF };
	s->fd = open_store_dir(path, e);
	if (s->fd < 0)
		return s->fd;
	/* whoever can write the store can swap the layer images every layout names: ours alone to write */
	r = ra_store_trusted(s->fd, path, false, abs, sizeof(abs), e);
	if (r < 0)
		return r;
	s->path = strdup(abs);
	if (!s->path)
		return ra_oom(e, "open store");
	s->layers = sub_sha256(s, "layers", e);
	if (s->layers < 0)
		return s->layers;
	s->images = sub_sha256(s, "images", e);
	if (s->images < 0)
		return s->images;
	t = sub(s, s->fd, "tmp", e);
	return t < 0 ? t : 0;
}

/*
 * Taking back what a failed import published. A file this import links
 * into the store carries the xattr PROVISIONAL (set on the O_TMPFILE, before
 * the link): only its publisher uses it so far. Any import that uses a file
 * it did not publish itself (a layer image found in the store, a name whose
 * linkat() met EEXIST) first claims it: under flock(LOCK_EX), it checks that
 * the file is still linked and removes the xattr. A publisher whose import
 * fails removes, under the same lock, each file it published that still
 * carries the xattr (nobody claimed it) and is still the one at its name;
 * a claimed file stays: another import's layout may name it. The lock makes
 * "claim" and "take back" exclusive: a claimer that comes second finds the
 * file unlinked (st_nlink 0) and publishes its own. A successful import
 * removes the xattr from its files (they are the store's from then on); one
 * killed leaves it, and the next import to use the file claims it. On a
 * filesystem without user xattrs nothing is marked, and nothing taken back.
 */
#define PROVISIONAL	"user.rootasm.provisional"

/* Claim the file @fd: 1 claimed, 0 no longer linked. */
static int claim_fd(int fd)
{
	struct stat st;
	int r = 1;

	if (flock(fd, LOCK_EX) < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		r = -errno;
	else if (st.st_nlink == 0)
		r = 0;
	else if (fremovexattr(fd, PROVISIONAL) < 0 && errno != ENODATA && errno != EOPNOTSUPP)
		r = -errno;
	flock(fd, LOCK_UN);
	return r;
}

/* Open and claim @dir/@name: its fd, or -ENOENT when it is not (or no longer) there. */
int ra_store_claim(int dir, const char *name)
{
	_cleanup_close_ int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	int r;

	if (fd < 0)
		return -errno;
	r = claim_fd(fd);
	if (r < 0)
		return r;
	return r == 0 ? -ENOENT : take_fd(fd);
}

/* After a failure: remove what this import published and nobody claimed (see above). */
void ra_store_take_back(struct ra_store *s)
{
	for (size_t i = 0; i < s->npubs; i++) {
		struct ra_store_pub *p = &s->pubs[i];
		struct stat a, b;
		char v;

		if (p->with == -2 || (p->with >= 0 && !s->pubs[p->with].removed))
			continue;
		if (flock(p->fd, LOCK_EX) < 0)
			continue;
		if (fgetxattr(p->fd, PROVISIONAL, &v, 1) >= 0 && fstat(p->fd, &a) == 0 &&
		    fstatat(p->dir, p->name, &b, AT_SYMLINK_NOFOLLOW) == 0 && a.st_dev == b.st_dev &&
		    a.st_ino == b.st_ino && unlinkat(p->dir, p->name, 0) == 0)
			p->removed = true;
		flock(p->fd, LOCK_UN);
	}
}

/* After success: the files this import published are the store's. */
void ra_store_settle(struct ra_store *s)
{
	/* one left marked (an error) is claimed by the next import that uses it */
	for (size_t i = 0; i < s->npubs; i++)
		(void)fremovexattr(s->pubs[i].fd, PROVISIONAL);
}

/*
 * Write @fd (an O_TMPFILE) as @dir/@name, complete or not at all: fsync,
 * linkat. Published with the mark of this import and recorded for
 * take_back(), removed with entry @with (-1: on its own, -2: never).
 * 1: written, 0: the name existed (published by another import: claimed).
 */
int ra_store_publish_fd(struct ra_store *s, int fd, int dir, const char *name, int with, const char *what,
			struct rootasm_error *e)
{
	struct ra_store_pub *p;
	int tries = 0;

	if (with != -2)
		(void)fsetxattr(fd, PROVISIONAL, "1", 1, 0);	/* none (EOPNOTSUPP): never taken back */
	if (fsync(fd) < 0)
		return ra_err(e, errno, -EBADF, "fsync", what, NULL);
	p = realloc(s->pubs, (s->npubs + 1) * sizeof(*s->pubs));
	if (!p)
		return ra_oom(e, "publish");
	s->pubs = p;
	p = &s->pubs[s->npubs];
	*p = (struct ra_store_pub){ .dir = dir, .with = with, .fd = -EBADF };
	snprintf(p->name, sizeof(p->name), "%s", name);
	while (linkat(fd, "", dir, name, AT_EMPTY_PATH) < 0) {
		int r;

		if (errno != EEXIST)
			return ra_err(e, errno, -EBADF, "publish", what, NULL);
		/* published by a concurrent import: the same content by its name; ours unless it takes it back */
		r = ra_store_claim(dir, name);
		if (r >= 0) {
			close(r);
			return 0;
		}
		if (r != -ENOENT || ++tries > 16)
			return ra_err(e, -r, -EBADF, "publish", what, "claim the file another import published");
	}
	p->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (p->fd < 0) {
		/* linked but not recorded: it stays, as the store's */
		(void)fremovexattr(fd, PROVISIONAL);
		return ra_err(e, errno, -EBADF, "publish", what, "dup");
	}
	s->npubs++;
	return 1;
}

static int publish_buf(struct ra_store *s, const char *buf, size_t len, int dir, const char *name, int with,
		       const char *what, struct rootasm_error *e)
{
	_cleanup_close_ int fd = openat(dir, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);

	if (fd < 0)
		return ra_err(e, errno, -EBADF, "create", what, "O_TMPFILE in the store");
	for (size_t done = 0; done < len;) {
		ssize_t n = write(fd, buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return ra_err(e, errno, -EBADF, "write", what, NULL);
		done += n;
	}
	return ra_store_publish_fd(s, fd, dir, name, with, what, e);
}

int ra_store_publish_json(struct ra_store *s, json_t *o, bool oom, int dir, const char *name, int with,
			  const char *what, struct rootasm_error *e)
{
	_cleanup_free_ char *buf = NULL;
	int r;

	if (oom || !o) {
		json_decref(o);
		return ra_oom(e, what);
	}
	buf = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (!buf)
		return ra_oom(e, what);
	r = strlen(buf);
	buf[r] = '\n';		/* replaces the NUL: written by length */
	return publish_buf(s, buf, r + 1, dir, name, with, what, e);
}

/* The store, and its lock held shared in *ret_lock: with other imports; rmi and gc wait for it (store.h). */
int ra_store_open_shared(const char *path, struct ra_store *s, int *ret_lock, struct rootasm_error *e)
{
	int r = store_open(path, s, e);

	if (r < 0)
		return r;
	*ret_lock = ra_store_lock(s->fd, LOCK_SH, s->path, e);
	return *ret_lock < 0 ? *ret_lock : 0;
}

