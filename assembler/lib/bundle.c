// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rootasm_bundle_prepare() and rootasm_bundle_cleanup() (rootasm.h): the root
 * filesystem of an OCI runtime bundle (config.json + root.path), assembled by
 * rootasm for crun/runc to run; rootasm_bundle_create() writes such a bundle
 * for an image:
 *
 *   create   an image of the store (rootasm_store_lookup()) or a layout file
 *            -> its exec: section (the image config: entrypoint, cmd, env,
 *               workdir, user; a user by name resolved in the assembled tree)
 *            -> BUNDLE/config.json as `crun spec` writes it with that process
 *               (as umoci unpack does) and the annotation org.rootasm.layout,
 *               BUNDLE/rootfs; BUNDLE made when missing, refused when it has
 *               a config.json
 *
 *   prepare  config.json (strict JSON) + the layout (opts->layout, or the
 *            annotation org.rootasm.layout; a JSON layout, as import writes)
 *            -> a layout of the layout's layers (idmapped from
 *               linux.uidMappings/gidMappings), its upper (or opts->upper),
 *               and the config's bind and tmpfs mounts that rootasm takes;
 *               root.readonly stays for the runtime, which remounts the root
 *               read-only once it made its own mount points
 *            -> assembled detached (bundle_assemble(): the one place)
 *            -> the record RUN_DIR/bundles/DEV-INO.json (the tree's unique
 *               mount id, root.path), published with linkat: also the lock
 *            -> BUNDLE/.rootasm/config.json (the original, byte for byte),
 *               BUNDLE/.rootasm/layout.json (what was assembled)
 *            -> one move_mount onto root.path
 *            -> config.json rewritten without the mounts rootasm made, with
 *               the annotation org.rootasm.prepared (the mount id: for people
 *               to read, never read back)
 *   cleanup  detach the mount the record names if the mount at the record's
 *            root.path is still that one (same unique mount id), restore
 *            config.json (none saved: prepare died before it changed it),
 *            remove .rootasm/ and the record
 *
 * Whom to trust: the caller (root) names the bundle, the layout and the
 * upper; the bundle belongs to its owner, who may be anyone. So the bundle
 * directory is opened once, and everything in it (config.json, .rootasm/,
 * root.path) is reached from that fd with openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS): nothing is followed through a
 * symlink, nothing outside the bundle is reached, root.path included. Files
 * are written in their directory's fd (a temporary name, fsync, renameat). The
 * tree is attached on the fd of root.path (MOVE_MOUNT_T_EMPTY_PATH) and
 * detached through the fd of the tree itself. What prepare attached is
 * recorded where the owner cannot write: RUN_DIR/bundles/ (RUN_DIR:
 * $ROOTASM_RUN_DIR for tests, else /run/rootasm), a root-owned directory
 * nobody else may write, one record per bundle keyed by the bundle
 * directory's st_dev and st_ino. cleanup believes the record, not config.json.
 *
 * Which mounts rootasm takes: those of type bind (or with a bind/rbind
 * option) and tmpfs (not with uid/gid mappings: in a user namespace the
 * runtime makes a tmpfs owned by the container's root) whose options it can
 * express, in order, unless the destination lies at or below a mount it
 * leaves to the runtime (proc, devpts, sysfs, cgroup, mqueue, ...): the
 * runtime mounts those after rootasm attached the tree, and would hide what
 * lies below them.
 */
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>

#include <jansson.h>

#include "context.h"
#include "exec.h"
#include "layout.h"
#include "open.h"
#include "passwd.h"
#include "uapi.h"
#include "util.h"

#define CONFIG_MAX		(4u << 20)	/* config.json, the layout */
#define RECORD_MAX		(64u << 10)
#define ANN_LAYOUT		"org.rootasm.layout"
#define ANN_PREPARED		"org.rootasm.prepared"
#define STATE_DIR		".rootasm"
#define DEFAULT_RUN_DIR		"/run/rootasm"
#define RECORDS_DIR		"bundles"

#ifndef STATX_ATTR_MOUNT_ROOT
#define STATX_ATTR_MOUNT_ROOT	0x00002000
#endif

/* json_decrefp() is jansson's own (2.11+) */
#define _cleanup_json_ __attribute__((cleanup(json_decrefp)))

struct bundle {
	const char *op;			/* "bundle prepare", "bundle cleanup": for messages */
	int fd;				/* O_PATH of the bundle directory */
	struct stat st;			/* its identity and owner */
	uid_t author;			/* who may have written config.json: its owner, or the bundle's */
	uid_t read_uid;			/* the owner of what read_beneath() read last */
	char *path;			/* its absolute path, for messages and results */
	int records;			/* O_PATH of RUN_DIR/bundles, or -EBADF */
	char *records_path;
	char record[64];		/* DEV-INO.json */
	char shown[4][PATH_MAX];	/* in_bundle()'s */
	unsigned int nshown;
};

static void bundle_done(struct bundle *b)
{
	close_fdp(&b->fd);
	close_fdp(&b->records);
	free(b->path);
	free(b->records_path);
}

#define USAGE(e, b, err, path, ...) ra_err_kind(e, ROOTASM_ERROR_USAGE, err, (b)->op, path, __VA_ARGS__)

/* @rel (a path inside the bundle) as the caller sees it, in one of b->shown's rotating buffers. */
static const char *in_bundle(struct bundle *b, const char *rel)
{
	char *buf = b->shown[b->nshown++ % ARRAY_SIZE(b->shown)];

	if (rel[0] == '/')
		snprintf(buf, PATH_MAX, "%s", rel);
	else
		snprintf(buf, PATH_MAX, "%s/%s", b->path, rel);
	return buf;
}

/*
 * openat2(@dirfd, @rel) beneath @dirfd, through no symlink at all (the last
 * component neither: O_PATH without O_NOFOLLOW). Returns the fd or -errno.
 */
static int beneath(int dirfd, const char *rel, int flags)
{
	struct open_how how = {
		.flags = flags | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int fd;

	for (int tries = 0; tries < 8; tries++) {
		fd = sys_openat2(dirfd, rel, &how);
		if (fd >= 0 || errno != EAGAIN)	/* EAGAIN: a rename raced with ".." */
			break;
	}
	return fd < 0 ? -errno : fd;
}

/* The error for @rel (@what: how the bundle names it) that beneath() refused with @err. */
static int beneath_err(struct bundle *b, int err, const char *rel, const char *what, struct rootasm_error *e)
{
	const char *p = in_bundle(b, rel);

	err = err < 0 ? -err : err;
	switch (err) {
	case ELOOP:
		return USAGE(e, b, ELOOP, p, "%s is a symbolic link or goes through one: nothing in a bundle is followed "
			     "through a symlink", what);
	case EXDEV:
		return USAGE(e, b, EXDEV, p, "%s does not lie beneath the bundle %s", what, b->path);
	case ENOENT:
	case ENOTDIR:
		return USAGE(e, b, err, p, "%s: %s", what, strerror(err));
	default:
		return ra_err(e, err, -EBADF, b->op, p, "%s", what);
	}
}

static int bundle_open(struct bundle *b, const char *dir, struct rootasm_error *e)
{
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_NO_MAGICLINKS };
	char p[64], abs[PATH_MAX];
	ssize_t n;

	if (!dir || !*dir)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, b->op, "", "no bundle directory");
	b->fd = sys_openat2(AT_FDCWD, dir, &how);
	if (b->fd < 0)
		return ra_err_kind(e, errno == ENOENT || errno == ENOTDIR ? ROOTASM_ERROR_USAGE : ROOTASM_ERROR_RUNTIME,
				   errno, b->op, dir, "%s", strerror(errno));
	if (fstat(b->fd, &b->st) < 0)
		return ra_err(e, errno, -EBADF, b->op, dir, NULL);
	snprintf(p, sizeof(p), "/proc/self/fd/%d", b->fd);
	n = readlink(p, abs, sizeof(abs) - 1);
	if (n <= 0 || abs[0] != '/')
		return ra_err(e, n < 0 ? errno : EINVAL, -EBADF, b->op, dir, "its absolute path");
	abs[n] = '\0';
	b->path = strdup(abs);
	if (!b->path)
		return ra_oom(e, b->op);
	snprintf(b->record, sizeof(b->record), "%llu-%llu.json", (unsigned long long)b->st.st_dev,
		 (unsigned long long)b->st.st_ino);
	return 0;
}

/* Only root may write what cleanup believes: a directory of root's that nobody else can write. */
static int check_private(struct bundle *b, int fd, const char *path, struct rootasm_error *e)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return ra_err(e, errno, -EBADF, b->op, path, NULL);
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022))
		return ra_err_kind(e, ROOTASM_ERROR_PERMISSION, EPERM, b->op, path,
				   "owned by uid %u with mode %04o: the bundle records must be in a directory of root's "
				   "that nobody else can write", (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
	return 0;
}

/*
 * Open RUN_DIR/bundles into b->records; with @create make both (0755, 0700)
 * when missing. Without @create a missing one leaves b->records -EBADF.
 */
static int records_open(struct bundle *b, bool create, struct rootasm_error *e)
{
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, .resolve = RESOLVE_NO_MAGICLINKS };
	const char *run = secure_getenv("ROOTASM_RUN_DIR");
	_cleanup_close_ int rfd = -EBADF;
	int fd, r;

	if (!run || !*run)
		run = DEFAULT_RUN_DIR;
	if (run[0] != '/')
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, b->op, run, "ROOTASM_RUN_DIR must be absolute");
	if (asprintf(&b->records_path, "%s/" RECORDS_DIR, run) < 0) {
		b->records_path = NULL;
		return ra_oom(e, b->op);
	}
	if (create && mkdir(run, 0755) < 0 && errno != EEXIST)
		return ra_err(e, errno, -EBADF, "create", run, NULL);
	rfd = sys_openat2(AT_FDCWD, run, &how);
	if (rfd < 0 && errno == ENOENT && !create)
		return 0;
	if (rfd < 0)
		return ra_err(e, errno, -EBADF, "open", run, errno == ENOTDIR ? "not a directory (or a symbolic link)" : NULL);
	r = check_private(b, rfd, run, e);
	if (r < 0)
		return r;
	if (create && mkdirat(rfd, RECORDS_DIR, 0700) < 0 && errno != EEXIST)
		return ra_err(e, errno, -EBADF, "create", b->records_path, NULL);
	fd = beneath(rfd, RECORDS_DIR, O_PATH | O_DIRECTORY);
	if (fd == -ENOENT && !create)
		return 0;
	if (fd < 0)
		return ra_err(e, -fd, -EBADF, "open", b->records_path,
			      fd == -ELOOP ? "a symbolic link" : fd == -ENOTDIR ? "not a directory" : NULL);
	r = check_private(b, fd, b->records_path, e);
	if (r < 0) {
		close(fd);
		return r;
	}
	b->records = fd;
	return 0;
}

/* Read @rel beneath @dirfd: a regular file of at most @max bytes, through no symlink. Caller frees *ret. */
static int read_beneath(struct bundle *b, int dirfd, const char *rel, const char *shown, size_t max, char **ret,
			size_t *ret_len, struct rootasm_error *e)
{
	_cleanup_close_ int pfd = -EBADF, fd = -EBADF;
	struct stat st;
	int r;

	pfd = beneath(dirfd, rel, O_PATH);
	if (pfd < 0)
		return beneath_err(b, pfd, shown, shown, e);
	if (fstat(pfd, &st) < 0)
		return ra_err(e, errno, -EBADF, b->op, in_bundle(b, shown), NULL);
	if (!S_ISREG(st.st_mode) || (size_t)st.st_size > max)
		return USAGE(e, b, EINVAL, in_bundle(b, shown), "not a regular file of at most %zu bytes", max);
	b->read_uid = st.st_uid;
	fd = ra_reopen(pfd, O_RDONLY);
	if (fd < 0)
		return ra_err(e, errno, -EBADF, b->op, in_bundle(b, shown), NULL);
	r = ra_read_all(fd, max, NULL, NULL, ret, ret_len);
	if (r == -EFBIG)
		return USAGE(e, b, EFBIG, in_bundle(b, shown), "larger than %zu bytes", max);
	if (r == -ENOMEM)
		return ra_oom(e, b->op);
	if (r < 0)
		return ra_err(e, r, -EBADF, "read", in_bundle(b, shown), NULL);
	return 0;
}

/* @buf as one JSON object, strictly (duplicate keys and NUL refused). */
static int parse_object(struct bundle *b, const char *buf, size_t len, const char *shown, json_t **ret,
			struct rootasm_error *e)
{
	json_error_t je;
	json_t *j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);

	if (!j) {
		if (json_error_code(&je) == json_error_out_of_memory)
			return ra_oom(e, "parse JSON");
		return USAGE(e, b, EINVAL, shown, "line %d column %d: %s", je.line, je.column, je.text);
	}
	if (!json_is_object(j)) {
		json_decref(j);
		return USAGE(e, b, EINVAL, shown, "not a JSON object");
	}
	*ret = j;
	return 0;
}

/*
 * Write @len bytes as @dirfd/@name, complete or not at all: a new temporary
 * name in the same directory (O_EXCL: nothing followed), fsync, renameat
 * (which replaces @name itself, symlink or not).
 */
static int write_at(struct bundle *b, int dirfd, const char *name, const char *shown, const char *buf,
		    size_t len, struct rootasm_error *e)
{
	_cleanup_close_ int fd = -EBADF;
	char tmp[NAME_MAX + 1];
	size_t done = 0;
	int r;

	for (int tries = 0; fd < 0 && tries < 16; tries++) {
		uint64_t rnd;

		if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
			return ra_err(e, errno, -EBADF, "getrandom", shown, NULL);
		snprintf(tmp, sizeof(tmp), ".%s.%016llx", name, (unsigned long long)rnd);
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST)
			return ra_err(e, errno, -EBADF, "create", in_bundle(b, shown), "a temporary file beside it");
	}
	if (fd < 0)
		return ra_err(e, EEXIST, -EBADF, "create", in_bundle(b, shown), "a temporary file beside it");
	while (done < len) {
		ssize_t n = write(fd, buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = ra_err(e, errno, -EBADF, "write", in_bundle(b, shown), NULL);
			goto fail;
		}
		done += n;
	}
	if (fchmod(fd, 0644) < 0 || fsync(fd) < 0) {
		r = ra_err(e, errno, -EBADF, "write", in_bundle(b, shown), NULL);
		goto fail;
	}
	if (renameat(dirfd, tmp, dirfd, name) < 0) {
		r = ra_err(e, errno, -EBADF, "write", in_bundle(b, shown), "rename into place");
		goto fail;
	}
	return 0;
fail:
	unlinkat(dirfd, tmp, 0);
	return r;
}

/* @o as indented JSON and a newline; caller frees *ret. */
static int dump(json_t *o, char **ret, size_t *ret_len, struct rootasm_error *e)
{
	char *s = o ? json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
	size_t n;

	if (!s)
		return ra_oom(e, "JSON");
	n = strlen(s);
	*ret = realloc(s, n + 2);
	if (!*ret) {
		free(s);
		return ra_oom(e, "JSON");
	}
	memcpy(*ret + n, "\n", 2);
	*ret_len = n + 1;
	return 0;
}

/* @p made absolute against @base (a directory) when it is relative; caller frees. */
static char *absolute(const char *base, const char *p)
{
	char *r = NULL;

	if (p[0] == '/')
		return strdup(p);
	if (asprintf(&r, "%s/%s", base, p) < 0)
		return NULL;
	return r;
}

static int set_absolute(json_t *o, const char *key, const char *base)
{
	json_t *v = json_object_get(o, key);
	char *a;
	int r;

	if (!json_is_string(v))
		return 0;
	a = absolute(base, json_string_value(v));
	r = a ? json_object_set_new(o, key, json_string(a)) : -1;
	free(a);
	return r < 0 ? -ENOMEM : 0;
}

/* In the layout @l (from @ldir), every relative host path made absolute. */
static int absolutize(json_t *l, const char *ldir)
{
	static const char *const keys[] = { "image", "dir", "bind", "layout" };
	static const char *const sect[] = { "layers", "mounts" };
	json_t *up = json_object_get(l, "upper");

	for (size_t s = 0; s < ARRAY_SIZE(sect); s++) {
		json_t *arr = json_object_get(l, sect[s]), *it;
		size_t i;

		json_array_foreach(arr, i, it) {
			for (size_t k = 0; k < ARRAY_SIZE(keys); k++)
				if (set_absolute(it, keys[k], ldir) < 0)
					return -ENOMEM;
		}
	}
	if (json_is_object(up) && set_absolute(up, "dir", ldir) < 0)
		return -ENOMEM;
	return 0;
}

/* OCI id mappings -> ["inside:outside:count", ...]; NULL (and *isbad set) when malformed. */
static json_t *ranges(json_t *maps, bool *isbad)
{
	json_t *a = json_array(), *m;
	size_t i;

	json_array_foreach(maps, i, m) {
		json_int_t c, h, s;
		char buf[96];

		if (json_unpack(m, "{s:I, s:I, s:I}", "containerID", &c, "hostID", &h, "size", &s) < 0 || c < 0 ||
		    h < 0 || s <= 0) {
			*isbad = true;
			json_decref(a);
			return NULL;
		}
		snprintf(buf, sizeof(buf), "%lld:%lld:%lld", (long long)c, (long long)h, (long long)s);
		json_array_append_new(a, json_string(buf));
	}
	return a;
}

/* The host id that container id 0 maps to in @maps, or -1. */
static long long host_root(json_t *maps)
{
	json_t *m;
	size_t i;

	json_array_foreach(maps, i, m) {
		json_int_t c, h, s;

		if (json_unpack(m, "{s:I, s:I, s:I}", "containerID", &c, "hostID", &h, "size", &s) == 0 && c <= 0 &&
		    0 < c + s)
			return h - c;
	}
	return -1;
}

/*
 * The layout entry for OCI mount @m, or NULL when rootasm leaves it to the runtime
 * (not bind/tmpfs, or an option rootasm cannot express).
 */
static json_t *take_mount(json_t *m, const char *bundle, bool userns)
{
	static const char *const attrs[] = { "ro", "rw", "nosuid", "nodev", "noexec", "nosymfollow", "noatime",
					     "relatime", "strictatime", "nodiratime" };
	static const char *const noops[] = { "suid", "dev", "exec", "atime", "diratime", "bind" };
	static const char *const prop[][2] = { { "private", "private" }, { "rprivate", "private" },
					       { "shared", "shared" }, { "rshared", "shared" },
					       { "slave", "slave" }, { "rslave", "slave" },
					       { "unbindable", "unbindable" }, { "runbindable", "unbindable" } };
	const char *type = json_string_value(json_object_get(m, "type"));
	const char *src = json_string_value(json_object_get(m, "source"));
	const char *dst = json_string_value(json_object_get(m, "destination"));
	json_t *opts = json_object_get(m, "options"), *o, *lopts, *out;
	bool isbind = type && !strcmp(type, "bind"), recursive = false, proped = false;
	size_t i;

	json_array_foreach(opts, i, o) {
		const char *s = json_string_value(o);

		if (s && (!strcmp(s, "bind") || !strcmp(s, "rbind")))
			isbind = true;
	}
	if (!dst || dst[0] != '/' || strstr(dst, "/../") || !strcmp(dst, "/"))
		return NULL;
	if (!isbind && !(type && !strcmp(type, "tmpfs")))
		return NULL;
	/* in a user namespace a tmpfs must belong to the container's root: the runtime makes it there */
	if (!isbind && userns)
		return NULL;
	if (isbind && !src)
		return NULL;
	lopts = json_array();
	json_array_foreach(opts, i, o) {
		const char *s = json_string_value(o);
		bool ok = false;

		if (!s)
			goto leave;
		for (size_t k = 0; k < ARRAY_SIZE(noops); k++)
			ok |= !strcmp(s, noops[k]);
		if (ok)
			continue;
		if (!strcmp(s, "rbind")) {
			recursive = true;
			continue;
		}
		for (size_t k = 0; k < ARRAY_SIZE(attrs); k++)
			ok |= !strcmp(s, attrs[k]);
		for (size_t k = 0; !ok && k < ARRAY_SIZE(prop); k++) {
			if (!strcmp(s, prop[k][0])) {
				if (proped)
					goto leave;
				proped = ok = true;
				s = prop[k][1];
			}
		}
		if (!ok && !isbind && (!strncmp(s, "size=", 5) || !strncmp(s, "mode=", 5) || !strncmp(s, "nr_inodes=", 10)))
			ok = true;
		if (!ok)
			goto leave;
		json_array_append_new(lopts, json_string(s));
	}
	if (recursive)
		json_array_append_new(lopts, json_string("recursive"));
	if (isbind) {
		char *a = absolute(bundle, src);

		out = json_pack("{s:s?, s:s, s:o}", "bind", a, "target", dst, "options", lopts);
		free(a);
	} else {
		out = json_pack("{s:s, s:o}", "tmpfs", dst, "options", lopts);
	}
	return out;
leave:
	json_decref(lopts);
	return NULL;
}

/* The unique id of the mount @fd is on, and whether @fd is that mount's root; 0 when unknown. */
static uint64_t mount_of(int fd, bool *is_root)
{
	struct statx sx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, RA_STATX_MNT_ID_UNIQUE, &sx) < 0 ||
	    !(sx.stx_mask & RA_STATX_MNT_ID_UNIQUE))
		return 0;
	if (is_root)
		*is_root = (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) && (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
	return sx.stx_mnt_id;
}

/* Detach the mount whose root @fd is (and everything below it), through the fd: no path is resolved again. */
static int detach_fd(int fd)
{
	char p[64];

	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	return umount2(p, MNT_DETACH) < 0 ? -errno : 0;
}

/*
 * root.path as a path beneath the bundle: relative as it is, absolute when
 * it names a place inside the bundle's absolute path. Caller frees *ret.
 */
static int root_rel(struct bundle *b, const char *root, char **ret, struct rootasm_error *e)
{
	size_t n = strlen(b->path);
	const char *rel = root;

	if (root[0] == '/') {
		if (strncmp(root, b->path, n) || (root[n] != '/' && root[n] != '\0'))
			return USAGE(e, b, EXDEV, in_bundle(b, "config.json"),
				     "root.path '%s' does not lie beneath the bundle %s", root, b->path);
		rel = root + n;
		while (*rel == '/')
			rel++;
	}
	*ret = strdup(*rel ? rel : ".");
	if (!*ret)
		return ra_oom(e, b->op);
	/* "rootfs/" is "rootfs" */
	for (n = strlen(*ret); n > 1 && (*ret)[n - 1] == '/'; n--)
		(*ret)[n - 1] = '\0';
	return 0;
}

/*
 * Open root.path @rel (O_PATH), made (0755) when missing: beneath the
 * bundle, through no symlink, not the bundle itself, not a mount point.
 * *@made: whether prepare made it (@parent and @name to remove it again).
 */
static int root_open(struct bundle *b, const char *rel, const char *shown, bool *made, int *ret_parent,
		     char **ret_name, struct rootasm_error *e)
{
	_cleanup_free_ char *dir = strdup(rel);
	_cleanup_close_ int parent = -EBADF, fd = -EBADF;
	const char *name = NULL;
	struct stat st;
	char *slash;
	bool is_root = false;

	if (!dir)
		return ra_oom(e, b->op);
	*made = false;
	fd = beneath(b->fd, rel, O_PATH | O_DIRECTORY);
	if (fd == -ENOENT) {
		slash = strrchr(dir, '/');
		if (slash) {
			*slash = '\0';
			name = slash + 1;
			parent = beneath(b->fd, *dir ? dir : ".", O_PATH | O_DIRECTORY);
		} else {
			name = rel;
			parent = beneath(b->fd, ".", O_PATH | O_DIRECTORY);
		}
		if (parent < 0)
			return beneath_err(b, parent, rel, shown, e);
		if (!*name || !strcmp(name, ".") || !strcmp(name, ".."))
			return USAGE(e, b, EINVAL, in_bundle(b, rel), "%s: not a directory's name", shown);
		if (mkdirat(parent, name, 0755) < 0)
			return ra_err(e, errno, -EBADF, "mkdir", in_bundle(b, rel), "%s", shown);
		*made = true;
		fd = beneath(parent, name, O_PATH | O_DIRECTORY);
		if (fd < 0) {
			unlinkat(parent, name, AT_REMOVEDIR);
			*made = false;
		}
	}
	if (fd < 0)
		return beneath_err(b, fd, rel, shown, e);
	if (fstat(fd, &st) < 0)
		return ra_err(e, errno, -EBADF, b->op, in_bundle(b, rel), NULL);
	if (st.st_dev == b->st.st_dev && st.st_ino == b->st.st_ino)
		return USAGE(e, b, EINVAL, in_bundle(b, rel), "%s is the bundle directory itself", shown);
	if (!mount_of(fd, &is_root))
		return ra_err(e, EOPNOTSUPP, -EBADF, "statx", in_bundle(b, rel), "no unique mount id (Linux 6.8)");
	if (is_root)
		return USAGE(e, b, EBUSY, in_bundle(b, rel), "is a mount point already");
	if (*made) {
		*ret_parent = take_fd(parent);
		*ret_name = strdup(name);
		if (!*ret_name) {
			unlinkat(*ret_parent, name, AT_REMOVEDIR);
			close_fdp(ret_parent);
			*made = false;
			return ra_oom(e, b->op);
		}
	}
	return take_fd(fd);
}

/*
 * The one place where a bundle's tree is loaded and assembled: @text, the
 * layout prepare made (every host path in it absolute), named @name in
 * messages. Returns the tree's fd (the caller owns it).
 */
static int bundle_assemble(struct rootasm_ctx *ctx, struct bundle *b, const char *text, size_t len,
			   const char *name, struct rootasm_error *e)
{
	struct rootasm_load_opts lo = { .size = sizeof(lo), .name = name };
	struct rootasm_principal *p = NULL;
	struct rootasm_layout *l = NULL;
	int r;

	/*
	 * The principal: the bundle's owner, as fstat of the bundle's fd says
	 * (or, in root's bundle, config.json's owner when that is not root: the
	 * one who wrote what it asks for). root's bundle is an administrator's;
	 * anyone else's is that user's: the layout's host objects are opened
	 * with its rights, it gets no more than it could reach itself, and its
	 * tree is nosuid,nodev (authorize.c).
	 */
	if (b->author != 0) {
		struct passwd pw, *pwp = NULL;
		char buf[4096];
		gid_t groups[256];
		int n = 256;
		gid_t gid = b->author == b->st.st_uid ? b->st.st_gid : b->author;

		if (getpwuid_r(b->author, &pw, buf, sizeof(buf), &pwp) == 0 && pwp) {
			gid = pw.pw_gid;
			if (getgrouplist(pw.pw_name, gid, groups, &n) < 0)
				n = 0;
		} else {
			n = 0;
		}
		r = rootasm_principal_user(b->author, gid, groups, (size_t)n, -EBADF, &p, e);
		if (r < 0)
			return r;
		lo.principal = p;
	}
	RA_TRACE(ctx, "bundle %s: owned by %u:%u, assembling %s for %s", b->path, (unsigned)b->st.st_uid,
		 (unsigned)b->st.st_gid, name, rootasm_principal_describe(p));
	r = rootasm_layout_load_mem(ctx, text, len, &lo, &l, e);
	rootasm_principal_free(p);
	if (r < 0)
		return r;
	r = rootasm_assemble_with(ctx, l, NULL, e);
	rootasm_layout_free(l);
	return r;
}

#define OPT(o, field, def) \
	((o) && (o)->size >= offsetof(struct rootasm_bundle_opts, field) + sizeof((o)->field) ? (o)->field : (def))

/* The size and flag rules of rootasm.h; 0 or a usage error in @e. */
/* The size and flag rules of rootasm.h; a layout and an upper are prepare's (@prepare). */
static int opts_check(const struct rootasm_bundle_opts *o, const char *op, const char *what, bool prepare,
		      struct rootasm_error *e)
{
	int r = o ? ra_opts_size(o, o->size, offsetof(struct rootasm_bundle_opts, flags) + sizeof(o->flags),
				 sizeof(*o)) : 0;

	if (r == -E2BIG)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, E2BIG, op, what,
				   "struct rootasm_bundle_opts of %zu bytes sets fields this library (%s) does not know",
				   o->size, ROOTASM_VERSION_STRING);
	if (r < 0)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, op, what,
				   "struct rootasm_bundle_opts.size is %zu: set it to sizeof(struct rootasm_bundle_opts)",
				   o->size);
	if (o && o->flags)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, op, what, "unknown flags 0x%x", o->flags);
	if (!prepare && (OPT(o, layout, NULL) || OPT(o, upper, NULL)))
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, op, what, "a layout and an upper go with prepare");
	return 0;
}

/* A JSON array of strings as a NULL-terminated array; caller frees. */
static int strv_of(json_t *a, char ***ret, size_t *n)
{
	size_t i, k = json_array_size(a);
	char **v = calloc(k + 1, sizeof(*v));
	json_t *s;

	if (!v)
		return -ENOMEM;
	json_array_foreach(a, i, s) {
		v[i] = strdup(json_string_value(s) ? json_string_value(s) : "?");
		if (!v[i]) {
			while (i--)
				free(v[i]);
			free(v);
			return -ENOMEM;
		}
	}
	*ret = v;
	*n = k;
	return 0;
}

void rootasm_bundle_result_free(struct rootasm_bundle_result *res)
{
	if (!res)
		return;
	free(res->root);
	free(res->layout);
	strv_free(res->rootasm_mounts);
	strv_free(res->runtime_mounts);
	memset(res, 0, sizeof(*res));
}

/* Read the layout @path (relative: beneath the bundle) into @ret, its absolute name in *@shown. */
static int read_layout(struct bundle *b, const char *path, json_t **ret, char **shown, struct rootasm_error *e)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	int r;

	*shown = path[0] == '/' ? strdup(path) : absolute(b->path, path);
	if (!*shown)
		return ra_oom(e, b->op);
	if (path[0] == '/') {
		/* the caller's, or the annotation's: the principal's to open (bundle_assemble()) */
		struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_MAGICLINKS };
		_cleanup_close_ int pfd = sys_openat2(AT_FDCWD, path, &how), fd = -EBADF;
		struct stat st;

		if (pfd < 0)
			return ra_err_kind(e, errno == ENOENT ? ROOTASM_ERROR_USAGE : ROOTASM_ERROR_RUNTIME, errno,
					   "open", path, "%s", strerror(errno));
		if (fstat(pfd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > CONFIG_MAX)
			return USAGE(e, b, EINVAL, path, "not a regular file of at most %u bytes", CONFIG_MAX);
		fd = ra_reopen(pfd, O_RDONLY);
		r = fd < 0 ? -errno : ra_read_all(fd, CONFIG_MAX, NULL, NULL, &buf, &len);
		if (r == -ENOMEM)
			return ra_oom(e, b->op);
		if (r < 0)
			return ra_err(e, r, -EBADF, "read", path, NULL);
	} else {
		r = read_beneath(b, b->fd, path, path, CONFIG_MAX, &buf, &len, e);
		if (r < 0)
			return r;
	}
	return parse_object(b, buf, len, *shown, ret, e);
}

/* Remove what prepare wrote in .rootasm/ (and .rootasm/ itself when it made it). */
static void state_remove(struct bundle *b, int state, bool made)
{
	unlinkat(state, "layout.json", 0);
	unlinkat(state, "config.json", 0);
	unlinkat(state, "state.json", 0);	/* an older rootasm's */
	if (made)
		unlinkat(b->fd, STATE_DIR, AT_REMOVEDIR);
}

int rootasm_bundle_prepare(struct rootasm_ctx *ctx, const char *bundle_dir, const struct rootasm_bundle_opts *opts,
			   struct rootasm_bundle_result *res, struct rootasm_error *e)
{
	struct bundle b = { .op = "bundle prepare", .fd = -EBADF, .records = -EBADF };
	_cleanup_json_ json_t *cfg = NULL, *base = NULL, *lay = NULL, *kept = NULL, *taken_dst = NULL,
			      *left_dst = NULL, *rec = NULL;
	_cleanup_free_ char *orig = NULL, *lshown = NULL, *rel = NULL, *ltext = NULL, *ctext = NULL, *rtext = NULL,
			    *made_name = NULL, *lname = NULL;
	_cleanup_close_ int root_fd = -EBADF, made_parent = -EBADF, tree_fd = -EBADF, state = -EBADF,
			    rfd = -EBADF;
	const char *layout, *upper, *rootpath = "rootfs";
	size_t origlen = 0, llen = 0, clen = 0, rlen = 0, i;
	json_t *ann, *linux_, *m, *lmounts, *idmap = NULL;
	struct stat rst;
	bool idmapped = false, made_root = false, made_state = false, published = false, attached = false;
	int readonly = 0, r;		/* readonly: read to check its type; the runtime's to act on */
	uint64_t id;

	ctx = ra_ctx(ctx);
	if (res)
		memset(res, 0, sizeof(*res));
	r = opts_check(opts, b.op, bundle_dir, true, e);
	if (r < 0)
		return r;
	layout = OPT(opts, layout, NULL);
	upper = OPT(opts, upper, NULL);
	if (upper && upper[0] != '/')
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, b.op, upper, "the upper directory must be absolute");
	r = bundle_open(&b, bundle_dir, e);
	if (r < 0)
		goto out;
	/* a directory anyone may write (not sticky): anyone may have written its config.json */
	if ((b.st.st_mode & 022) && !(b.st.st_mode & S_ISVTX)) {
		r = USAGE(e, &b, EPERM, b.path, "the bundle directory is writable by others (mode %04o): anyone could "
			  "have written its config.json", (unsigned)(b.st.st_mode & 07777));
		goto out;
	}
	r = read_beneath(&b, b.fd, "config.json", "config.json", CONFIG_MAX, &orig, &origlen, e);
	if (r >= 0)
		r = parse_object(&b, orig, origlen, in_bundle(&b, "config.json"), &cfg, e);
	if (r < 0)
		goto out;
	/* root's bundle with another user's config.json (a sticky directory): that user wrote what it asks */
	b.author = b.st.st_uid != 0 ? b.st.st_uid : b.read_uid;
	ann = json_object_get(cfg, "annotations");
	if (json_is_object(ann) && json_object_get(ann, ANN_PREPARED)) {
		r = USAGE(e, &b, EBUSY, in_bundle(&b, "config.json"), "already prepared by rootasm (annotation "
			  ANN_PREPARED "); run rootasm bundle cleanup first");
		goto out;
	}
	r = records_open(&b, true, e);
	if (r < 0)
		goto out;
	if (faccessat(b.records, b.record, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
		r = USAGE(e, &b, EBUSY, b.path, "an earlier prepare of this bundle did not finish (%s/%s); run rootasm "
			  "bundle cleanup first", b.records_path, b.record);
		goto out;
	}
	if (!layout && json_is_object(ann))
		layout = json_string_value(json_object_get(ann, ANN_LAYOUT));
	if (!layout) {
		r = USAGE(e, &b, EINVAL, in_bundle(&b, "config.json"), "no layout: give --layout or the annotation "
			  ANN_LAYOUT);
		goto out;
	}
	if (json_unpack(cfg, "{s?{s?s, s?b}}", "root", "path", &rootpath, "readonly", &readonly) < 0) {
		r = USAGE(e, &b, EINVAL, in_bundle(&b, "config.json"), "root: path must be a string, readonly a boolean");
		goto out;
	}
	r = root_rel(&b, rootpath, &rel, e);
	if (r < 0)
		goto out;
	r = read_layout(&b, layout, &base, &lshown, e);
	if (r < 0)
		goto out;
	{
		_cleanup_free_ char *ldir = strdup(lshown);

		if (!ldir || absolutize(base, dirname(ldir)) < 0) {
			r = ra_oom(e, b.op);
			goto out;
		}
	}

	/* the id mappings: every layer idmapped (on-disk ids are the container's) */
	linux_ = json_object_get(cfg, "linux");
	if (json_is_object(linux_) && (json_object_get(linux_, "uidMappings") || json_object_get(linux_, "gidMappings"))) {
		bool isbad = false;
		json_t *u = ranges(json_object_get(linux_, "uidMappings"), &isbad);
		json_t *g = ranges(json_object_get(linux_, "gidMappings"), &isbad);

		if (isbad || !json_array_size(u) || !json_array_size(g)) {
			json_decref(u);
			json_decref(g);
			r = USAGE(e, &b, EINVAL, in_bundle(&b, "config.json"), "linux.uidMappings and gidMappings: both "
				  "needed, each entry {containerID, hostID, size > 0}");
			goto out;
		}
		idmap = json_pack("{s:o, s:o}", "uids", u, "gids", g);
		if (!idmap) {
			r = ra_oom(e, b.op);
			goto out;
		}
		idmapped = true;
		/*
		 * The merged root directory is the upper's: owned by the container's
		 * root, or that root cannot create anything at / (crun's mount points).
		 */
		if (upper) {
			long long hu = host_root(json_object_get(linux_, "uidMappings"));
			long long hg = host_root(json_object_get(linux_, "gidMappings"));
			char up[PATH_MAX];

			snprintf(up, sizeof(up), "%s/upper", upper);
			if ((mkdir(up, 0755) < 0 && errno != EEXIST) ||
			    (hu >= 0 && hg >= 0 && fchownat(AT_FDCWD, up, hu, hg, AT_SYMLINK_NOFOLLOW) < 0)) {
				json_decref(idmap);
				r = ra_err(e, errno, -EBADF, "prepare upper", up, NULL);
				goto out;
			}
		}
	}
	lay = json_object();
	if (!lay) {
		json_decref(idmap);
		r = ra_oom(e, b.op);
		goto out;
	}
	json_object_set_new(lay, "version", json_integer(1));
	json_object_set(lay, "layers", json_object_get(base, "layers"));
	json_array_foreach(json_object_get(lay, "layers"), i, m)
		if (idmap && !json_object_get(m, "idmap"))
			json_object_set(m, "idmap", idmap);
	json_decref(idmap);
	/*
	 * root.readonly stays the runtime's: it remounts the root read-only after
	 * it made its own mount points, which needs the upper until then.
	 */
	if (upper)
		json_object_set_new(lay, "upper", json_pack("{s:s}", "dir", upper));
	else if (json_object_get(base, "upper"))
		json_object_set(lay, "upper", json_object_get(base, "upper"));
	if (json_object_get(base, "overlay"))
		json_object_set(lay, "overlay", json_object_get(base, "overlay"));
	lmounts = json_array();
	json_array_foreach(json_object_get(base, "mounts"), i, m)
		json_array_append(lmounts, m);
	/* the config's mounts: taken by rootasm or left to the runtime, in order */
	kept = json_array();
	taken_dst = json_array();
	left_dst = json_array();
	if (!lmounts || !kept || !taken_dst || !left_dst) {
		json_decref(lmounts);
		r = ra_oom(e, b.op);
		goto out;
	}
	json_array_foreach(json_object_get(cfg, "mounts"), i, m) {
		const char *dst = json_string_value(json_object_get(m, "destination"));
		bool under = false;
		json_t *t = NULL, *ld;
		size_t k;

		json_array_foreach(left_dst, k, ld)
			under |= dst && ra_path_below(dst, json_string_value(ld));
		if (!under)
			t = take_mount(m, b.path, idmapped);
		if (t) {
			json_array_append_new(lmounts, t);
			json_array_append_new(taken_dst, json_string(dst));
		} else {
			json_array_append(kept, m);
			json_array_append_new(left_dst, json_string(dst ? dst : "?"));
		}
	}
	json_object_set_new(lay, "mounts", lmounts);
	if (json_object_get(base, "attributes"))
		json_object_set(lay, "attributes", json_object_get(base, "attributes"));
	r = dump(lay, &ltext, &llen, e);
	if (r < 0)
		goto out;

	/* root.path: beneath the bundle, made when missing, not a mount point */
	{
		char what[PATH_MAX + 16];

		snprintf(what, sizeof(what), "root.path '%s'", rootpath);
		root_fd = root_open(&b, rel, what, &made_root, &made_parent, &made_name, e);
		if (root_fd < 0) {
			r = root_fd;
			goto out;
		}
	}
	if (fstat(root_fd, &rst) < 0) {
		r = ra_err(e, errno, -EBADF, b.op, in_bundle(&b, rel), NULL);
		goto out;
	}
	if (asprintf(&lname, "%s/" STATE_DIR "/layout.json", b.path) < 0) {
		lname = NULL;
		r = ra_oom(e, b.op);
		goto out;
	}
	tree_fd = bundle_assemble(ctx, &b, ltext, llen, lname, e);
	if (tree_fd < 0) {
		r = tree_fd;
		goto out;
	}
	id = mount_of(tree_fd, NULL);
	if (!id) {
		r = ra_err(e, EOPNOTSUPP, -EBADF, "statx", lname, "the tree's unique mount id (Linux 6.8)");
		goto out;
	}

	/*
	 * The record first, where only root writes: what cleanup believes, and
	 * the lock (linkat: one prepare of a bundle at a time). Then .rootasm/:
	 * the original config and the layout; then the attach; config.json last.
	 */
	rec = json_pack("{s:i, s:s, s:I, s:I, s:I, s:I, s:s, s:I, s:I, s:I}", "version", 1, "bundle", b.path,
			"bundle_dev", (json_int_t)b.st.st_dev, "bundle_ino", (json_int_t)b.st.st_ino,
			"owner_uid", (json_int_t)b.st.st_uid, "owner_gid", (json_int_t)b.st.st_gid, "root", rel,
			"root_dev", (json_int_t)rst.st_dev, "root_ino", (json_int_t)rst.st_ino,
			"mount_id", (json_int_t)id);
	r = dump(rec, &rtext, &rlen, e);
	if (r < 0)
		goto out;
	rfd = openat(b.records, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	if (rfd < 0) {
		r = ra_err(e, errno, -EBADF, "create", b.records_path, "O_TMPFILE for the record");
		goto out;
	}
	if (write(rfd, rtext, rlen) != (ssize_t)rlen || fsync(rfd) < 0) {
		r = ra_err(e, errno ? errno : EIO, -EBADF, "write", b.records_path, "the record %s", b.record);
		goto out;
	}
	if (linkat(rfd, "", b.records, b.record, AT_EMPTY_PATH) < 0) {
		if (errno == EEXIST)
			r = USAGE(e, &b, EBUSY, b.path, "prepared by another rootasm at the same time (%s/%s)",
				  b.records_path, b.record);
		else
			r = ra_err(e, errno, -EBADF, "publish", b.records_path, "the record %s", b.record);
		goto out;
	}
	published = true;

	if (mkdirat(b.fd, STATE_DIR, 0700) == 0)
		made_state = true;
	else if (errno != EEXIST) {
		r = ra_err(e, errno, -EBADF, "mkdir", in_bundle(&b, STATE_DIR), NULL);
		goto out;
	}
	state = beneath(b.fd, STATE_DIR, O_PATH | O_DIRECTORY);
	if (state < 0) {
		if (made_state)
			unlinkat(b.fd, STATE_DIR, AT_REMOVEDIR);
		made_state = false;
		r = beneath_err(&b, state, STATE_DIR, STATE_DIR, e);
		goto out;
	}
	r = write_at(&b, state, "config.json", STATE_DIR "/config.json", orig, origlen, e);
	if (r >= 0)
		r = write_at(&b, state, "layout.json", STATE_DIR "/layout.json", ltext, llen, e);
	if (r < 0)
		goto out;
	if (res) {
		res->mnt_id = id;
		res->root = strdup(in_bundle(&b, rel));
		res->layout = TAKE_PTR(lshown);
		if (!res->root || strv_of(taken_dst, &res->rootasm_mounts, &res->n_rootasm_mounts) < 0 ||
		    strv_of(left_dst, &res->runtime_mounts, &res->n_runtime_mounts) < 0) {
			r = ra_oom(e, b.op);
			goto out;
		}
	}

	/* attached on the fd of root.path, resolved once */
	if (move_mount(tree_fd, "", root_fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0) {
		r = ra_err(e, errno, -EBADF, "move_mount", in_bundle(&b, rel), NULL);
		goto out;
	}
	attached = true;

	/* the runtime's config: without the mounts rootasm made, marked (for people) as prepared */
	{
		char ids[32];

		snprintf(ids, sizeof(ids), "%llu", (unsigned long long)id);
		if (!json_is_object(ann)) {
			ann = json_object();
			json_object_set_new(cfg, "annotations", ann);
		}
		if (json_object_set(cfg, "mounts", kept) < 0 || !ann ||
		    json_object_set_new(ann, ANN_PREPARED, json_string(ids)) < 0) {
			r = ra_oom(e, b.op);
			goto out;
		}
	}
	r = dump(cfg, &ctext, &clen, e);
	if (r >= 0)
		r = write_at(&b, b.fd, "config.json", "config.json", ctext, clen, e);
	if (r < 0)
		goto out;
	RA_TRACE(ctx, "bundle %s: tree %llu attached at %s, record %s/%s", b.path, (unsigned long long)id,
		 in_bundle(&b, rel), b.records_path, b.record);
	r = 0;
	goto out_done;
out:
	rootasm_bundle_result_free(res);
	if (attached)
		detach_fd(tree_fd);
	if (published)
		unlinkat(b.records, b.record, 0);
	if (state >= 0)
		state_remove(&b, state, made_state);
	if (made_root)
		unlinkat(made_parent, made_name, AT_REMOVEDIR);
out_done:
	bundle_done(&b);
	return r;
}

int rootasm_bundle_cleanup(struct rootasm_ctx *ctx, const char *bundle_dir, const struct rootasm_bundle_opts *opts,
			   struct rootasm_bundle_result *res, struct rootasm_error *e)
{
	struct bundle b = { .op = "bundle cleanup", .fd = -EBADF, .records = -EBADF };
	_cleanup_free_ char *rtext = NULL, *saved = NULL;
	_cleanup_close_ int state = -EBADF, root_fd = -EBADF;
	_cleanup_json_ json_t *rec = NULL;
	json_int_t rid = 0, dev = -1, ino = -1;
	const char *rel = NULL;
	size_t rlen = 0, slen = 0;
	bool detached = false;
	int r;

	ctx = ra_ctx(ctx);
	if (res)
		memset(res, 0, sizeof(*res));
	r = opts_check(opts, b.op, bundle_dir, false, e);
	if (r < 0)
		return r;
	r = bundle_open(&b, bundle_dir, e);
	if (r < 0)
		goto out;
	r = records_open(&b, false, e);
	if (r < 0)
		goto out;
	r = b.records < 0 ? -ENOENT : read_beneath(&b, b.records, b.record, b.record, RECORD_MAX, &rtext, &rlen, NULL);
	if (r == -ENOENT) {
		r = USAGE(e, &b, ENOENT, b.path, "not prepared by rootasm (no record %s/%s)", b.records_path, b.record);
		goto out;
	}
	if (r >= 0)
		r = parse_object(&b, rtext, rlen, b.record, &rec, e);
	else
		r = ra_err(e, r, -EBADF, "read", b.records_path, "the record %s", b.record);
	if (r < 0)
		goto out;
	if (json_unpack(rec, "{s:I, s:s, s:I, s:I}", "mount_id", &rid, "root", &rel, "bundle_dev", &dev, "bundle_ino",
			&ino) < 0 || (dev_t)dev != b.st.st_dev || (ino_t)ino != b.st.st_ino) {
		r = ra_err(e, EINVAL, -EBADF, b.op, b.records_path, "the record %s is not of this bundle", b.record);
		goto out;
	}

	/*
	 * Everything cleanup will touch, checked before anything is done. No
	 * saved config: prepare died before it wrote it, and config.json (its
	 * last write) is still the original.
	 */
	state = beneath(b.fd, STATE_DIR, O_PATH | O_DIRECTORY);
	if (state < 0 && state != -ENOENT) {
		r = beneath_err(&b, state, STATE_DIR, STATE_DIR, e);
		goto out;
	}
	if (state >= 0) {
		struct rootasm_error se;

		r = read_beneath(&b, state, "config.json", STATE_DIR "/config.json", CONFIG_MAX, &saved, &slen, &se);
		if (r < 0 && r != -ENOENT) {
			if (e)
				*e = se;
			goto out;
		}
	}
	root_fd = beneath(b.fd, rel, O_PATH | O_DIRECTORY);
	if (root_fd < 0 && root_fd != -ENOENT) {
		char what[PATH_MAX + 16];

		snprintf(what, sizeof(what), "root.path '%s'", rel);
		r = beneath_err(&b, root_fd, rel, what, e);
		goto out;
	}

	/* only the tree prepare attached: the record's unique mount id, at its root */
	if (root_fd >= 0) {
		bool is_root = false;

		if (mount_of(root_fd, &is_root) == (uint64_t)rid && is_root) {
			r = detach_fd(root_fd);
			if (r < 0) {
				r = ra_err(e, r, -EBADF, "umount2", in_bundle(&b, rel), NULL);
				goto out;
			}
			detached = true;
		}
	}
	if (saved) {
		r = write_at(&b, b.fd, "config.json", "config.json", saved, slen, e);
		if (r < 0)
			goto out;
	}
	if (state >= 0)
		state_remove(&b, state, true);
	if (unlinkat(b.records, b.record, 0) < 0) {
		r = ra_err(e, errno, -EBADF, "remove", b.records_path, "the record %s", b.record);
		goto out;
	}
	RA_TRACE(ctx, "bundle %s: %s, record %s removed", b.path, detached ? "detached" : "was not attached", b.record);
	if (res) {
		res->root = strdup(in_bundle(&b, rel));
		res->mnt_id = detached ? (unsigned long long)rid : 0;
		res->detached = detached;
		if (!res->root) {
			r = ra_oom(e, b.op);
			goto out;
		}
	}
	r = 0;
out:
	bundle_done(&b);
	return r;
}

/* ------------------------------------------------------------------ create */

static json_t *strv_json_of(char **v)
{
	json_t *a = json_array();

	for (char **p = v; a && p && *p; p++)
		if (json_array_append_new(a, json_string(*p)) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/*
 * config.json for @x, as `crun spec` writes it (its mounts, namespaces,
 * masked and read-only paths, capabilities, rlimits) with the process an
 * image's config asks for (as umoci unpack makes it): args, env, cwd, user.
 * The capabilities of a user other than root: the bounding set only (podman's).
 */
static json_t *make_config(const struct ra_exec *x, char **args, char **env, uid_t uid, gid_t gid,
			   const gid_t *groups, size_t ngroups, const char *layout)
{
	static const char *const caps[] = { "CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE" };
	json_t *c, *user, *capset, *gids = json_array(), *bnd = json_array(), *eff = json_array();

	for (size_t i = 0; gids && i < ngroups; i++)
		json_array_append_new(gids, json_integer(groups[i]));
	for (size_t i = 0; bnd && eff && i < ARRAY_SIZE(caps); i++) {
		json_array_append_new(bnd, json_string(caps[i]));
		if (uid == 0)
			json_array_append_new(eff, json_string(caps[i]));
	}
	user = json_pack("{s:I, s:I}", "uid", (json_int_t)uid, "gid", (json_int_t)gid);
	if (user && gids && json_array_size(gids))
		json_object_set(user, "additionalGids", gids);
	json_decref(gids);
	capset = bnd && eff ? json_pack("{s:O, s:O, s:[], s:O, s:O}", "bounding", bnd, "effective", eff, "inheritable",
					"permitted", eff, "ambient", eff) : NULL;
	json_decref(bnd);
	json_decref(eff);
	c = json_pack("{s:s, s:{s:b, s:o, s:o, s:o, s:s, s:o, s:[{s:s, s:i, s:i}], s:b}, s:{s:s, s:b}, s:s,"
		      " s:[{s:s, s:s, s:s},"
		      "    {s:s, s:s, s:s, s:[s,s,s,s]},"
		      "    {s:s, s:s, s:s, s:[s,s,s,s,s,s]},"
		      "    {s:s, s:s, s:s, s:[s,s,s,s,s]},"
		      "    {s:s, s:s, s:s, s:[s,s,s]},"
		      "    {s:s, s:s, s:s, s:[s,s,s,s]},"
		      "    {s:s, s:s, s:s, s:[s,s,s,s,s]}],"
		      " s:{s:{s:[{s:b, s:s}]}, s:[{s:s},{s:s},{s:s},{s:s},{s:s},{s:s}],"
		      "    s:[s,s,s,s,s,s,s,s,s,s], s:[s,s,s,s,s]},"
		      " s:{s:s}}",
		      "ociVersion", "1.0.0",
		      "process", "terminal", false, "user", user, "args", strv_json_of(args), "env", strv_json_of(env),
		      "cwd", x->workdir ? x->workdir : "/", "capabilities", capset,
		      "rlimits", "type", "RLIMIT_NOFILE", "hard", 1024, "soft", 1024, "noNewPrivileges", true,
		      "root", "path", "rootfs", "readonly", false,
		      "hostname", x->hostname ? x->hostname : "rootasm",
		      "mounts",
		      "destination", "/proc", "type", "proc", "source", "proc",
		      "destination", "/dev", "type", "tmpfs", "source", "tmpfs", "options",
		      "nosuid", "strictatime", "mode=755", "size=65536k",
		      "destination", "/dev/pts", "type", "devpts", "source", "devpts", "options",
		      "nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5",
		      "destination", "/dev/shm", "type", "tmpfs", "source", "shm", "options",
		      "nosuid", "noexec", "nodev", "mode=1777", "size=65536k",
		      "destination", "/dev/mqueue", "type", "mqueue", "source", "mqueue", "options",
		      "nosuid", "noexec", "nodev",
		      "destination", "/sys", "type", "sysfs", "source", "sysfs", "options",
		      "nosuid", "noexec", "nodev", "ro",
		      "destination", "/sys/fs/cgroup", "type", "cgroup", "source", "cgroup", "options",
		      "nosuid", "noexec", "nodev", "relatime", "ro",
		      "linux", "resources", "devices", "allow", false, "access", "rwm",
		      "namespaces", "type", "pid", "type", "network", "type", "ipc", "type", "uts", "type", "mount",
		      "type", "cgroup",
		      "maskedPaths", "/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
		      "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware", "/proc/scsi",
		      "readonlyPaths", "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger",
		      "annotations", ANN_LAYOUT, layout);
	return c;
}

int rootasm_bundle_create(struct rootasm_ctx *ctx, const char *image, const char *bundle_dir,
			  const struct rootasm_bundle_opts *opts, struct rootasm_bundle_result *res,
			  struct rootasm_error *e)
{
	struct bundle b = { .op = "bundle create", .fd = -EBADF, .records = -EBADF };
	struct rootasm_load_opts lo = { .size = sizeof(lo) };
	_cleanup_free_ char *layout = NULL, *text = NULL, **args = NULL, **env = NULL;
	_cleanup_json_ json_t *cfg = NULL;
	struct rootasm_layout *l = NULL;
	const struct ra_exec *x;
	const char *path;
	char home[300] = "";
	struct ra_user u = { 0 };
	struct stat st;
	bool made = false, made_root = false;
	size_t len = 0;
	int r;

	ctx = ra_ctx(ctx);
	if (res)
		memset(res, 0, sizeof(*res));
	r = opts_check(opts, b.op, bundle_dir, false, e);
	if (r < 0)
		return r;
	if (!image || !*image || !bundle_dir || !*bundle_dir)
		return USAGE(e, &b, EINVAL, bundle_dir ? bundle_dir : "", "no image or no bundle directory");
	/* a layout file by that name (not a directory), else an image of the store */
	if (stat(image, &st) == 0 && !S_ISDIR(st.st_mode)) {
		layout = realpath(image, NULL);
		if (!layout)
			return ra_err(e, errno, -EBADF, b.op, image, "its absolute path");
	} else {
		r = rootasm_store_lookup(OPT(opts, store, NULL), image, &layout, NULL, e);
		if (r < 0)
			return r;
	}
	/* the user is resolved in the tree: only then is the layout opened and assembled */
	lo.flags = ROOTASM_LOAD_OFFLINE;
	r = rootasm_layout_load(ctx, layout, &lo, &l, e);
	if (r >= 0 && l->exec.user) {
		rootasm_layout_free(l);
		l = NULL;
		lo.flags = 0;
		r = rootasm_layout_load(ctx, layout, &lo, &l, e);
		if (r >= 0) {
			_cleanup_close_ int tree = rootasm_assemble(ctx, l, e);

			r = tree < 0 ? tree : ra_user_resolve(tree, l->exec.user, &u, e);
			if (r >= 0 && u.home[0])
				snprintf(home, sizeof(home), "HOME=%s", u.home);
		}
	}
	if (r < 0)
		goto out;
	x = &l->exec;
	if (!x->user && x->user_set) {
		u.uid = x->uid;
		u.gid = x->gid;
		u.ngroups = x->ngroups < ARRAY_SIZE(u.groups) ? x->ngroups : ARRAY_SIZE(u.groups);
		memcpy(u.groups, x->groups, u.ngroups * sizeof(gid_t));
	}
	args = ra_exec_command(x, NULL);
	env = ra_exec_env(x, NULL, home[0] ? home : NULL, &path);
	if (!args || !env) {
		r = ra_oom(e, b.op);
		goto out;
	}
	if (!args[0]) {
		r = USAGE(e, &b, EINVAL, layout, "the layout's exec: section has no entrypoint or cmd: nothing to run");
		goto out;
	}
	cfg = make_config(x, args, env, u.uid, u.gid, u.groups, u.ngroups, layout);
	r = dump(cfg, &text, &len, e);
	if (r < 0)
		goto out;
	/* the bundle directory: made (root's, 0700 as crun's state) or an existing one without config.json */
	if (mkdir(bundle_dir, 0700) == 0)
		made = true;
	else if (errno != EEXIST) {
		r = ra_err(e, errno, -EBADF, "mkdir", bundle_dir, NULL);
		goto out;
	}
	r = bundle_open(&b, bundle_dir, e);
	if (r < 0)
		goto out;
	if (fstatat(b.fd, "config.json", &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT) {
		r = USAGE(e, &b, EEXIST, in_bundle(&b, "config.json"), "is there already: a bundle is created once");
		goto out;
	}
	if (mkdirat(b.fd, "rootfs", 0755) == 0)
		made_root = true;
	else if (errno != EEXIST) {
		r = ra_err(e, errno, -EBADF, "mkdir", in_bundle(&b, "rootfs"), NULL);
		goto out;
	}
	r = write_at(&b, b.fd, "config.json", "config.json", text, len, e);
	if (r < 0)
		goto out;
	if (res) {
		res->root = strdup(in_bundle(&b, "rootfs"));
		res->layout = TAKE_PTR(layout);
		if (!res->root) {
			r = ra_oom(e, b.op);
			goto out;
		}
	}
	r = 0;
out:
	if (r < 0) {
		if (made_root)
			unlinkat(b.fd, "rootfs", AT_REMOVEDIR);
		if (made)
			rmdir(bundle_dir);
		rootasm_bundle_result_free(res);
	}
	rootasm_layout_free(l);
	bundle_done(&b);
	return r;
}
