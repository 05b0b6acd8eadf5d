// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The one reader of a layout file, for every front end: the CLI's argument
 * (open.c), a rootasmd client's path (the daemon calls rootasm_layout_load()
 * with the client's principal), a bundle's --layout or annotation (bundle.c).
 *
 *   - Where it may be: a principal limited to layout directories
 *     (rootasm_principal_limit()) names an absolute path lexically beneath
 *     one of them, or is refused before anything is looked up (no answer
 *     tells of a file elsewhere); the rest of the path is resolved beneath
 *     that directory, through no symbolic link. A caller's own anchor (@at: a
 *     bundle) is resolved beneath the same way. Otherwise the path is the
 *     caller's own argument: its symlinks are followed, magic links never.
 *   - Its directory first, then the file in it, both O_PATH: the directory is
 *     what the principal's limit is judged on (ra_authorize_layout_file()),
 *     by its fd, before a byte is read; it is also the anchor of the layout's
 *     relative paths, returned to the caller.
 *   - Only a regular file of a real filesystem (ra_check_readable_file()), read
 *     with O_NONBLOCK, at most RA_LAYOUT_MAX_BYTES.
 *
 * It runs with the caller's credentials: a front end that reads on a user's
 * behalf runs it under rootasm_principal_run() (load_as() in open.c does).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "open.h"
#include "principal.h"
#include "util.h"

void ra_layout_file_done(struct ra_layout_file *f)
{
	free(f->buf);
	f->buf = NULL;
	close_fdp(&f->dir_fd);
}

/* The layout directory of @p that @path lies lexically beneath, and the rest of @path in *rel. */
static int limit_dir(const struct rootasm_principal *p, const char *path, const char *shown, const char **dir,
		     const char **rel, struct rootasm_error *e)
{
	_cleanup_free_ char *copy = strdup(path);

	for (size_t i = 0; path[0] == '/' && i < p->nlayout_dirs; i++) {
		*rel = ra_path_below(path, p->layout_dirs[i]);
		if (*rel && **rel) {
			*dir = p->layout_dirs[i];
			return 0;
		}
	}
	if (!copy)
		return ra_oom(e, "open layout");
	return ra_err_kind(e, ROOTASM_ERROR_PERMISSION, EPERM, "open layout", shown, "the layout file lies in %s, in "
			   "none of the layout directories allowed to %s (%s%s)", dirname(copy),
			   rootasm_principal_describe(p), p->nlayout_dirs ? p->layout_dirs[0] : "none",
			   p->nlayout_dirs > 1 ? ", ..." : "");
}

static int open_failed(int err, const char *shown, const char *at_name, struct rootasm_error *e)
{
	if (at_name && err == ELOOP)
		return ra_err_kind(e, ROOTASM_ERROR_PERMISSION, ELOOP, "open layout", shown, "a symbolic link on the way "
				   "beneath %s, where none is followed", at_name);
	if (at_name && err == EXDEV)
		return ra_err_kind(e, ROOTASM_ERROR_PERMISSION, EXDEV, "open layout", shown, "outside %s", at_name);
	return ra_err_kind(e, err == ENOENT || err == ENOTDIR || err == EACCES || err == ELOOP ? ROOTASM_ERROR_USAGE :
			   ROOTASM_ERROR_RUNTIME, err, "open layout", shown, NULL);
}

int ra_layout_file_read(const struct rootasm_principal *p, int at, const char *at_name, const char *path,
			const char *shown, struct ra_layout_file *f, struct rootasm_error *e)
{
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_NO_MAGICLINKS };
	_cleanup_free_ char *dcopy = NULL, *bcopy = NULL, *lname = NULL, *abs = NULL;
	_cleanup_close_ int start = -EBADF, dfd = -EBADF, pfd = -EBADF, fd = -EBADF;
	const char *rel = path, *limit = NULL;
	char why[256];
	int r;

	*f = (struct ra_layout_file){ .dir_fd = -EBADF };
	if (!path || !*path)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "open layout", shown, "no layout path");
	if (p && p->limit_layouts && !(at >= 0 && path[0] != '/')) {
		/* relative to the working directory: judged as the absolute path it is */
		if (path[0] != '/') {
			_cleanup_free_ char *cwd = getcwd(NULL, 0);

			if (!cwd)
				return ra_err(e, errno, -EBADF, "open layout", shown, "the working directory");
			if (asprintf(&abs, "%s/%s", strcmp(cwd, "/") ? cwd : "", path) < 0)
				return ra_oom(e, "open layout");
			path = abs;
		}
		r = limit_dir(p, path, shown, &limit, &rel, e);
		if (r < 0)
			return r;
		/* the administrator's directory, as configured */
		start = sys_openat2(AT_FDCWD, limit, &how);
		if (start < 0)
			return ra_err_kind(e, errno == ENOENT ? ROOTASM_ERROR_USAGE : ROOTASM_ERROR_RUNTIME, errno,
					   "open layout", limit, "the layout directory");
		if (asprintf(&lname, "the layout directory %s", limit) < 0)
			return ra_oom(e, "open layout");
		at = start;
		at_name = lname;
	} else if (path[0] == '/') {
		at = AT_FDCWD;
		at_name = NULL;
	}
	if (at >= 0)
		how.resolve |= RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS;
	dcopy = strdup(rel);
	bcopy = strdup(rel);
	if (!dcopy || !bcopy)
		return ra_oom(e, "open layout");
	dfd = ra_openat2_retry(at < 0 ? AT_FDCWD : at, dirname(dcopy), &how);
	if (dfd < 0)
		return open_failed(-dfd, shown, at >= 0 ? at_name : NULL, e);
	/* the file itself may be a symlink only where symlinks are followed (the caller's argument) */
	how.flags = O_PATH | O_CLOEXEC;
	pfd = ra_openat2_retry(dfd, basename(bcopy), &how);
	if (pfd < 0)
		return open_failed(-pfd, shown, at >= 0 ? at_name : NULL, e);
	/* a regular file of a real filesystem: /proc/kmsg would block, and drain the kernel log */
	r = ra_check_readable_file(pfd, why, sizeof(why));
	if (r < 0)
		return ra_err_kind(e, r == -EINVAL ? ROOTASM_ERROR_USAGE : ROOTASM_ERROR_RUNTIME, -r, "open layout", shown,
				   "%s", why);
	/* a principal's layout limit, on the directory's fd, before a byte is read (what is parsed can be quoted) */
	r = ra_authorize_layout_file(p, dfd, pfd, shown, e);
	if (r < 0)
		return r;
	if (fstat(pfd, &f->st) < 0)
		return ra_err(e, errno, -EBADF, "open layout", shown, NULL);
	fd = ra_reopen(pfd, O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		return open_failed(errno, shown, NULL, e);
	r = ra_read_all(fd, RA_LAYOUT_MAX_BYTES, NULL, NULL, &f->buf, &f->len);
	if (r == -ENOMEM)
		return ra_oom(e, "read layout");
	if (r == -EFBIG)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EFBIG, "open layout", shown, "larger than %u bytes",
				   RA_LAYOUT_MAX_BYTES);
	if (r < 0)
		return ra_err(e, -r, -EBADF, "read layout", shown, NULL);
	f->dir_fd = take_fd(dfd);
	return 0;
}
