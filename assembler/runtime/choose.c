// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What an annotation may choose. An annotation is written by whoever runs the
 * container (a podman user, a pod's author), not by an administrator: it only
 * chooses among what an administrator provided, and never names a host path
 * of its own:
 *
 *   org.rootasm.layout=PATH   a layout file beneath the layout directory
 *                             (layouts=, default /etc/rootasm/layouts): PATH
 *                             relative to it, or absolute inside it; resolved
 *                             with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)
 *                             from the directory's fd, so neither ".." nor a
 *                             symlink leads out of it
 *   org.rootasm.image=REF     an image of the store (store=, $ROOTASM_STORE,
 *                             default /var/lib/rootasm/store): its name
 *                             (NAME[:TAG], rootasm_store_lookup()), manifest
 *                             digest (sha256:HEX or HEX) or the layout path
 *                             `rootasm import` printed (STORE/images/sha256/
 *                             HEX.FS.layout.json), resolved the same way
 *   org.rootasm.via=SOCKET    assembled by rootasmd at SOCKET, which must be
 *                             the one configured (socket=, default
 *                             /run/rootasmd.sock); with a layout or an image
 *                             to assemble (a CRI container's own image:
 *                             cri-image.c); for bundles of root's only (the
 *                             daemon judges the runtime, root, not the bundle's
 *                             owner)
 *
 * The directories, the file chosen and every directory above it must be root's
 * and writable by nobody else (ra_admin_trusted(): sticky ones excepted): their
 * contents are trusted as the administrator's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime.h"
#include "uapi.h"
#include "util.h"

char *rt_fd_path(int fd)
{
	char buf[PATH_MAX];

	if (ra_fd_path(fd, buf, sizeof(buf)) <= 0 || buf[0] != '/')
		return NULL;
	return strdup(buf);
}

/*
 * The regular file @value (relative to @dir, or absolute inside it) beneath
 * the administrator's directory @dir ("the layout directory"), through no
 * symlink; its absolute path in *ret (caller frees). -1: refused (said).
 */
static int beneath_admin_dir(const char *ann, const char *value, const char *dir, const char *what, char **ret)
{
	struct open_how dh = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_NO_MAGICLINKS };
	struct open_how fh = { .flags = O_PATH | O_CLOEXEC,
			       .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	_cleanup_close_ int dfd = -EBADF, fd = -EBADF;
	_cleanup_free_ char *real = NULL;
	const char *rel = value;
	struct stat st;
	char why[512];

	dfd = sys_openat2(AT_FDCWD, dir, &dh);
	if (dfd < 0)
		return rt_error("annotation %s '%s': %s %s: %s", ann, value, what, dir, strerror(errno));
	if (ra_admin_trusted(dfd, -EBADF, why, sizeof(why)) < 0)
		return rt_error("annotation %s '%s': %s %s %s", ann, value, what, dir, why);
	real = rt_fd_path(dfd);
	if (!real)
		return rt_error("annotation %s '%s': %s %s: its absolute path", ann, value, what, dir);
	if (value[0] == '/') {
		rel = ra_path_below(value, dir);
		if (!rel)
			rel = ra_path_below(value, real);
		if (!rel || !*rel)
			return rt_error("annotation %s '%s': outside the %s %s (an annotation only chooses what an "
					"administrator put there)", ann, value, what, dir);
	}
	if (!*rel)
		return rt_error("annotation %s: empty", ann);
	for (int tries = 0; tries < 8; tries++) {
		fd = sys_openat2(dfd, rel, &fh);
		if (fd >= 0 || errno != EAGAIN)
			break;
	}
	if (fd < 0 && errno == EXDEV)
		return rt_error("annotation %s '%s': outside the %s %s (an annotation only chooses what an "
				"administrator put there)", ann, value, what, dir);
	if (fd < 0 && errno == ELOOP)
		return rt_error("annotation %s '%s': a symbolic link in the %s %s (not followed)", ann, value, what,
				dir);
	if (fd < 0)
		return rt_error("annotation %s '%s': in the %s %s: %s", ann, value, what, dir, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return rt_error("annotation %s '%s': not a regular file", ann, value);
	/*
	 * The file and the directories between it and @dir are the administrator's too: a
	 * file another user owns or may write, or one in a subdirectory another user may
	 * write, is that user's layout, assembled with root's rights.
	 */
	if (ra_admin_trusted_path(fd, dfd, rel, fh.resolve, why, sizeof(why)) < 0)
		return rt_error("annotation %s '%s': in the %s %s: %s", ann, value, what, dir, why);
	*ret = rt_fd_path(fd);
	if (!*ret)
		return rt_error("annotation %s '%s': its absolute path", ann, value);
	return 0;
}

static bool is_hex64(const char *s, size_t n)
{
	return n == 64 && strspn(s, "0123456789abcdef") >= 64;
}

/* An image of the store: a manifest digest, or the layout path import printed. */
static int image_layout(const struct rt_conf *c, const char *value, char **ret)
{
	_cleanup_free_ char *dir = NULL;
	const char *hex = value, *base;
	char name[128];

	if (asprintf(&dir, "%s/images/sha256", c->store) < 0) {
		dir = NULL;
		return rt_error("out of memory");
	}
	if (!strncmp(hex, "sha256:", 7))
		hex += 7;
	if (is_hex64(hex, strlen(hex))) {
		struct stat st;

		for (int i = 0; i < 2; i++) {
			_cleanup_free_ char *p = NULL;

			snprintf(name, sizeof(name), "%s.%s.layout.json", hex, i ? "squashfs" : "erofs");
			if (asprintf(&p, "%s/%s", dir, name) < 0)
				return rt_error("out of memory");
			if (lstat(p, &st) == 0 || i == 1)
				return beneath_admin_dir(ANN_IMAGE, name, dir, "store's image directory", ret);
		}
	}
	base = strrchr(value, '/');
	if (value[0] == '/' && base && is_hex64(base + 1, strcspn(base + 1, ".")) &&
	    (!strcmp(base + 65, ".erofs.layout.json") || !strcmp(base + 65, ".squashfs.layout.json")))
		return beneath_admin_dir(ANN_IMAGE, value, dir, "store's image directory", ret);
	if (value[0] != '/') {
		/* a name of the store's (NAME[:TAG], as `rootasm import --tag` or a docker-archive gave it) */
		_cleanup_free_ char *layout = NULL;
		struct rootasm_error e = { 0 };
		char line[1024];

		if (rootasm_store_lookup(c->store, value, &layout, NULL, &e) < 0)
			return rt_error("annotation " ANN_IMAGE " '%s': %s", value,
					rootasm_error_format(&e, line, sizeof(line)));
		return beneath_admin_dir(ANN_IMAGE, layout, dir, "store's image directory", ret);
	}
	return rt_error("annotation " ANN_IMAGE " '%s': not an image of the store %s (give its name, its manifest "
			"digest sha256:HEX, or the layout path rootasm import printed)", value, c->store);
}

int rt_choose(const struct rt_conf *c, const char *layout, const char *image, const char *via, uid_t owner,
	      struct rt_choice *ret)
{
	int r;

	memset(ret, 0, sizeof(*ret));
	if (!layout && !image && !via)
		return 1;
	if (layout && image)
		return rt_error("annotations " ANN_LAYOUT " and " ANN_IMAGE ": give one of them, not both");
	if (!layout && !image)
		return rt_error("annotation " ANN_VIA " '%s': with " ANN_LAYOUT " or " ANN_IMAGE " (what rootasmd "
				"should assemble)", via);
	if (layout)
		r = beneath_admin_dir(ANN_LAYOUT, layout, c->layouts, "layout directory", &ret->layout);
	else
		r = image_layout(c, image, &ret->layout);
	if (r < 0)
		return r;
	if (via) {
		if (strcmp(via, c->socket)) {
			rt_choice_done(ret);
			return rt_error("annotation " ANN_VIA " '%s': not the configured rootasmd socket %s", via,
					c->socket);
		}
		if (owner != 0) {
			rt_choice_done(ret);
			return rt_error("annotation " ANN_VIA " '%s': only for a bundle of root's (this one is uid %u's: "
					"rootasmd would judge the request as rootasm-runtime's, root's)", via,
					(unsigned)owner);
		}
		ret->via = strdup(via);
		if (!ret->via) {
			rt_choice_done(ret);
			return rt_error("out of memory");
		}
	}
	return 0;
}

void rt_choice_done(struct rt_choice *ch)
{
	free(ch->layout);
	free(ch->via);
	memset(ch, 0, sizeof(*ch));
}
