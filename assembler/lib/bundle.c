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
 * are written in their directory's fd (a temporary name, fsync, renameat;
 * .rootasm/layout.json, for people only, without the fsync). The
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
 * express (not /dev of a user's tree, which is nodev everywhere: the device
 * nodes the runtime makes there would not open), in the config's order, up
 * to the first one it leaves to the runtime (proc, devpts, sysfs, cgroup,
 * mqueue, ...): that one and every one after it are the runtime's, which
 * makes them in their listed order after rootasm attached the tree, as the
 * runtime spec says.
 *
 * Here: the bundle directory and its files, the records, cleanup; prepare
 * in bundle-prepare.c, config.json's mounts in bundle-mounts.c, create in
 * bundle-create.c (bundle.h between them).
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

#include "bundle.h"
#include "mntinfo.h"
#include "layout-json.h"
#include "context.h"
#include "exec.h"
#include "layout.h"
#include "open.h"
#include "passwd.h"
#include "principal.h"
#include "uapi.h"
#include "util.h"



void bd_bundle_done(struct bundle *b)
{
	close_fdp(&b->fd);
	close_fdp(&b->records);
	free(b->path);
	free(b->records_path);
}


/* @rel (a path inside the bundle) as the caller sees it, in one of b->shown's rotating buffers. */
const char *bd_in_bundle(struct bundle *b, const char *rel)
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
int bd_beneath(int dirfd, const char *rel, int flags)
{
	struct open_how how = {
		.flags = flags | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};

	return ra_openat2_retry(dirfd, rel, &how);
}

/* The error for @rel (@what: how the bundle names it) that beneath() refused with @err. */
int bd_beneath_err(struct bundle *b, int err, const char *rel, const char *what, struct rootasm_error *e)
{
	const char *p = bd_in_bundle(b, rel);

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

int bd_bundle_open(struct bundle *b, const char *dir, struct rootasm_error *e)
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
	char why[512];

	if (fstat(fd, &st) < 0)
		return ra_err(e, errno, -EBADF, b->op, path, NULL);
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022))
		return ra_err_kind(e, ROOTASM_ERROR_PERMISSION, EPERM, b->op, path,
				   "owned by uid %u with mode %04o: the bundle records must be in a directory of root's "
				   "that nobody else can write", (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
	/* and so is every directory above it (the one trust rule) */
	if (ra_admin_trusted(fd, -EBADF, why, sizeof(why)) < 0)
		return ra_err_kind(e, ROOTASM_ERROR_PERMISSION, EPERM, b->op, path, "the bundle records: %s", why);
	return 0;
}

/*
 * Open RUN_DIR/bundles into b->records; with @create make both (0755, 0700)
 * when missing. Without @create a missing one leaves b->records -EBADF.
 */
int bd_records_open(struct bundle *b, bool create, struct rootasm_error *e)
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
	fd = bd_beneath(rfd, RECORDS_DIR, O_PATH | O_DIRECTORY);
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
int bd_read_beneath(struct bundle *b, int dirfd, const char *rel, const char *shown, size_t max, char **ret,
		    size_t *ret_len, struct rootasm_error *e)
{
	_cleanup_close_ int pfd = -EBADF, fd = -EBADF;
	struct stat st;
	int r;

	pfd = bd_beneath(dirfd, rel, O_PATH);
	if (pfd < 0)
		return bd_beneath_err(b, pfd, shown, shown, e);
	if (fstat(pfd, &st) < 0)
		return ra_err(e, errno, -EBADF, b->op, bd_in_bundle(b, shown), NULL);
	if (!S_ISREG(st.st_mode) || (size_t)st.st_size > max)
		return USAGE(e, b, EINVAL, bd_in_bundle(b, shown), "not a regular file of at most %zu bytes", max);
	b->read_uid = st.st_uid;
	fd = ra_reopen(pfd, O_RDONLY);
	if (fd < 0)
		return ra_err(e, errno, -EBADF, b->op, bd_in_bundle(b, shown), NULL);
	r = ra_read_all(fd, max, NULL, NULL, ret, ret_len);
	if (r == -EFBIG)
		return USAGE(e, b, EFBIG, bd_in_bundle(b, shown), "larger than %zu bytes", max);
	if (r == -ENOMEM)
		return ra_oom(e, b->op);
	if (r < 0)
		return ra_err(e, r, -EBADF, "read", bd_in_bundle(b, shown), NULL);
	return 0;
}

/* @buf as one JSON object, strictly (duplicate keys and NUL refused). */
int bd_parse_object(struct bundle *b, const char *buf, size_t len, const char *shown, json_t **ret,
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
 * name in the same directory (O_EXCL: nothing followed), fsync when @durable
 * (a file only people read may come back empty after a power loss, not torn),
 * renameat (which replaces @name itself, symlink or not).
 */
int bd_write_at(struct bundle *b, int dirfd, const char *name, const char *shown, const char *buf,
		size_t len, bool durable, struct rootasm_error *e)
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
			return ra_err(e, errno, -EBADF, "create", bd_in_bundle(b, shown), "a temporary file beside it");
	}
	if (fd < 0)
		return ra_err(e, EEXIST, -EBADF, "create", bd_in_bundle(b, shown), "a temporary file beside it");
	while (done < len) {
		ssize_t n = write(fd, buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = ra_err(e, errno, -EBADF, "write", bd_in_bundle(b, shown), NULL);
			goto fail;
		}
		done += n;
	}
	/* what it replaces keeps its owner (a user's config.json stays the user's, after cleanup too) */
	{
		struct stat old;

		if (fstatat(dirfd, name, &old, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(old.st_mode) &&
		    (old.st_uid != geteuid() || old.st_gid != getegid()) && fchown(fd, old.st_uid, old.st_gid) < 0) {
			r = ra_err(e, errno, -EBADF, "write", bd_in_bundle(b, shown), "keep its owner");
			goto fail;
		}
	}
	if (fchmod(fd, 0644) < 0 || (durable && fsync(fd) < 0)) {
		r = ra_err(e, errno, -EBADF, "write", bd_in_bundle(b, shown), NULL);
		goto fail;
	}
	if (renameat(dirfd, tmp, dirfd, name) < 0) {
		r = ra_err(e, errno, -EBADF, "write", bd_in_bundle(b, shown), "rename into place");
		goto fail;
	}
	return 0;
fail:
	unlinkat(dirfd, tmp, 0);
	return r;
}

/* @o as indented JSON and a newline; caller frees *ret. */
int bd_dump(json_t *o, char **ret, size_t *ret_len, struct rootasm_error *e)
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

/* Detach the mount whose root @fd is (and everything below it), through the fd: no path is resolved again. */
int bd_detach_fd(int fd)
{
	char p[64];

	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	return umount2(p, MNT_DETACH) < 0 ? -errno : 0;
}

/*
 * root.path as a path beneath the bundle: relative as it is, absolute when
 * it names a place inside the bundle's absolute path. Caller frees *ret.
 */
int bd_root_rel(struct bundle *b, const char *root, char **ret, struct rootasm_error *e)
{
	size_t n = strlen(b->path);
	const char *rel = root;

	if (root[0] == '/') {
		if (strncmp(root, b->path, n) || (root[n] != '/' && root[n] != '\0'))
			return USAGE(e, b, EXDEV, bd_in_bundle(b, "config.json"),
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
int bd_root_open(struct bundle *b, const char *rel, const char *shown, bool *made, int *ret_parent,
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
	fd = bd_beneath(b->fd, rel, O_PATH | O_DIRECTORY);
	if (fd == -ENOENT) {
		slash = strrchr(dir, '/');
		if (slash) {
			*slash = '\0';
			name = slash + 1;
			parent = bd_beneath(b->fd, *dir ? dir : ".", O_PATH | O_DIRECTORY);
		} else {
			name = rel;
			parent = bd_beneath(b->fd, ".", O_PATH | O_DIRECTORY);
		}
		if (parent < 0)
			return bd_beneath_err(b, parent, rel, shown, e);
		if (!*name || !strcmp(name, ".") || !strcmp(name, ".."))
			return USAGE(e, b, EINVAL, bd_in_bundle(b, rel), "%s: not a directory's name", shown);
		if (mkdirat(parent, name, 0755) < 0)
			return ra_err(e, errno, -EBADF, "mkdir", bd_in_bundle(b, rel), "%s", shown);
		*made = true;
		fd = bd_beneath(parent, name, O_PATH | O_DIRECTORY);
		if (fd < 0) {
			unlinkat(parent, name, AT_REMOVEDIR);
			*made = false;
		}
	}
	if (fd < 0)
		return bd_beneath_err(b, fd, rel, shown, e);
	if (fstat(fd, &st) < 0)
		return ra_err(e, errno, -EBADF, b->op, bd_in_bundle(b, rel), NULL);
	if (st.st_dev == b->st.st_dev && st.st_ino == b->st.st_ino)
		return USAGE(e, b, EINVAL, bd_in_bundle(b, rel), "%s is the bundle directory itself", shown);
	if (!ra_fd_mount_id(fd, &is_root))
		return ra_err(e, EOPNOTSUPP, -EBADF, "statx", bd_in_bundle(b, rel), "no unique mount id (Linux 6.8)");
	if (is_root)
		return USAGE(e, b, EBUSY, bd_in_bundle(b, rel), "is a mount point already");
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


/* The size and flag rules of rootasm.h; a layout and an upper are prepare's (@prepare). */
static int opts_check(const struct rootasm_bundle_opts *o, const char *op, const char *what, bool prepare,
		      struct rootasm_error *e)
{
	int r = RA_OPTS_CHECK(o, struct rootasm_bundle_opts, RA_OPT_END(struct rootasm_bundle_opts, flags), op, what, e);
	const char *upper_dir, *work_dir;

	if (r < 0)
		return r;
	if (o && o->flags)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, op, what, "unknown flags 0x%x", o->flags);
	upper_dir = OPT(o, upper_dir, NULL);
	work_dir = OPT(o, work_dir, NULL);
	if (!prepare && (OPT(o, layout, NULL) || OPT(o, upper, NULL) || upper_dir || work_dir))
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, op, what, "a layout and an upper go with prepare");
	if (!upper_dir != !work_dir || (upper_dir && OPT(o, upper, NULL)))
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, op, what, "upper_dir and work_dir go together, "
				   "without upper");
	if ((upper_dir && upper_dir[0] != '/') || (work_dir && work_dir[0] != '/'))
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, op, what, "upper_dir and work_dir must be absolute");
	return 0;
}

int bd_begin(struct rootasm_ctx **ctx, struct rootasm_bundle_result *res, const struct rootasm_bundle_opts *opts,
	     const char *op, const char *dir, bool prepare, struct rootasm_error *e)
{
	*ctx = ra_ctx(*ctx);
	if (res)
		memset(res, 0, sizeof(*res));
	return opts_check(opts, op, dir, prepare, e);
}

/* A JSON array of strings as a NULL-terminated array; caller frees. */
int bd_strv_of(json_t *a, char ***ret, size_t *n)
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

int bd_read_layout(struct bundle *b, const char *path, const struct rootasm_principal *p, json_t **ret, char **shown,
		   int *ret_dir, struct rootasm_error *e)
{
	_cleanup_free_ char *where = NULL;
	struct ra_layout_file f;
	int r;

	*shown = path[0] == '/' ? strdup(path) : bd_absolute(b->path, path);
	if (!*shown || asprintf(&where, "the bundle %s", b->path) < 0)
		return ra_oom(e, b->op);
	/* the one reader of a layout file (open-file.c): a relative path beneath the bundle, as every path in it */
	r = ra_layout_file_read(p, b->fd, where, path, *shown, &f, e);
	if (r < 0)
		return r;
	/* JSON as it is; YAML (what `rootasm check` takes) checked as check checks it, then as JSON */
	if (f.buf[strspn(f.buf, " \t\r\n")] == '{')
		r = bd_parse_object(b, f.buf, f.len, *shown, ret, e);
	else
		r = ra_layout_to_json(f.buf, f.len, *shown, ret, e);
	if (r == 0)
		*ret_dir = take_fd(f.dir_fd);
	ra_layout_file_done(&f);
	return r;
}

/* Remove what prepare wrote in .rootasm/ (and .rootasm/ itself when it made it). */
void bd_state_remove(struct bundle *b, int state, bool made)
{
	unlinkat(state, "layout.json", 0);
	unlinkat(state, "config.json", 0);
	unlinkat(state, "state.json", 0);	/* an older rootasm's */
	if (made)
		unlinkat(b->fd, STATE_DIR, AT_REMOVEDIR);
}

struct reopen {
	int dirfd;
	const char *rel;
};

static int reopen_beneath(void *ud)
{
	const struct reopen *ro = ud;

	return bd_beneath(ro->dirfd, ro->rel, O_PATH | O_DIRECTORY);
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

	r = bd_begin(&ctx, res, opts, b.op, bundle_dir, false, e);
	if (r < 0)
		return r;
	r = bd_bundle_open(&b, bundle_dir, e);
	if (r < 0)
		goto out;
	r = bd_records_open(&b, false, e);
	if (r < 0)
		goto out;
	r = b.records < 0 ? -ENOENT : bd_read_beneath(&b, b.records, b.record, b.record, RECORD_MAX, &rtext, &rlen, NULL);
	if (r == -ENOENT) {
		r = USAGE(e, &b, ENOENT, b.path, "not prepared by rootasm (no record %s/%s)", b.records_path, b.record);
		goto out;
	}
	if (r >= 0)
		r = bd_parse_object(&b, rtext, rlen, b.record, &rec, e);
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
	state = bd_beneath(b.fd, STATE_DIR, O_PATH | O_DIRECTORY);
	if (state < 0 && state != -ENOENT) {
		r = bd_beneath_err(&b, state, STATE_DIR, STATE_DIR, e);
		goto out;
	}
	if (state >= 0) {
		struct rootasm_error se;

		r = bd_read_beneath(&b, state, "config.json", STATE_DIR "/config.json", CONFIG_MAX, &saved, &slen, &se);
		if (r < 0 && r != -ENOENT) {
			if (e)
				*e = se;
			goto out;
		}
	}
	root_fd = bd_beneath(b.fd, rel, O_PATH | O_DIRECTORY);
	if (root_fd < 0 && root_fd != -ENOENT) {
		char what[PATH_MAX + 16];

		snprintf(what, sizeof(what), "root.path '%s'", rel);
		r = bd_beneath_err(&b, root_fd, rel, what, e);
		goto out;
	}

	/*
	 * only the tree prepare attached: the record's unique mount id, at its
	 * root, once what the runtime stacked on it there is detached (runc binds
	 * the rootfs onto itself in our namespace for a container without a mount
	 * namespace of its own: ra_mount_uncover())
	 */
	if (root_fd >= 0 || root_fd == -ENOENT) {
		struct reopen ro = { b.fd, rel };
		/* (or wherever it is now: renamed by the bundle's owner; -ENOENT: detached already) */
		int top = ra_mount_uncover(reopen_beneath, &ro, (uint64_t)rid);

		if (top < 0 && top != -ENOENT) {
			r = ra_err(e, -top, -EBADF, "umount2", bd_in_bundle(&b, rel), "the tree (mount %lld)",
				   (long long)rid);
			goto out;
		}
		if (top >= 0) {
			if (root_fd >= 0)
				close(root_fd);
			root_fd = top;
			r = bd_detach_fd(root_fd);
			if (r < 0) {
				r = ra_err(e, r, -EBADF, "umount2", bd_in_bundle(&b, rel), NULL);
				goto out;
			}
			detached = true;
		}
	}
	if (saved) {
		r = bd_write_at(&b, b.fd, "config.json", "config.json", saved, slen, true, e);
		if (r < 0)
			goto out;
	}
	if (state >= 0)
		bd_state_remove(&b, state, true);
	if (unlinkat(b.records, b.record, 0) < 0) {
		r = ra_err(e, errno, -EBADF, "remove", b.records_path, "the record %s", b.record);
		goto out;
	}
	RA_TRACE(ctx, "bundle %s: %s, record %s removed", b.path, detached ? "detached" : "was not attached", b.record);
	if (res) {
		res->root = strdup(bd_in_bundle(&b, rel));
		res->mnt_id = detached ? (unsigned long long)rid : 0;
		res->detached = detached;
		if (!res->root) {
			r = ra_oom(e, b.op);
			goto out;
		}
	}
	r = 0;
out:
	bd_bundle_done(&b);
	return r;
}
