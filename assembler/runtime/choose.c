// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What an annotation may choose. An annotation is written by whoever runs the
 * container (a podman user, a pod's author), not by an administrator: it only
 * chooses among what an administrator provided, and never names a host path
 * of its own:
 *
 *   org.rootasm.layout=PATH   a layout file beneath the layout directory
 *                             (layouts=, default /etc/rootasm/layouts): PATH
 *                             relative to it, or absolute inside it
 *   org.rootasm.image=REF     an image of the store (store=, $ROOTASM_STORE,
 *                             default /var/lib/rootasm/store): its name
 *                             (NAME[:TAG]), manifest digest (sha256:HEX, HEX
 *                             or 12+ of its hex: rootasm_store_lookup(), as
 *                             exec and bundle create take it) or the layout path
 *                             `rootasm import` printed (STORE/images/sha256/
 *                             HEX.FS.layout.json)
 *   org.rootasm.via=SOCKET    assembled by rootasmd at SOCKET, which must be
 *                             the one configured (socket=, default
 *                             /run/rootasmd.sock); with a layout or an image
 *                             to assemble (a CRI container's own image:
 *                             cri-image.c)
 *
 * This file only names: the path, and the directory it must lie in. Whether
 * it may is the library's authorize stage's word, as for every front end: the
 * directory is a limit of the bundle's principal (rootasm_bundle_opts.
 * layout_dirs; through rootasmd the request's "as", state.c), judged on the
 * fds the open holds: a path outside it is not looked up, none of the way
 * followed through a symlink, and for root's bundle the file and every
 * directory above it must be root's and writable by nobody else (the one
 * trust rule), since an administrator assembles it on someone else's word.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
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

/* @value (relative to @dir, or absolute) as the path asked for, to lie in @dir: named, not judged here. */
static int named(struct rt_choice *ch, const char *ann, const char *value, const char *dir)
{
	if (!*value)
		return rt_error("annotation %s: empty", ann);
	ch->ann = ann;
	if (value[0] == '/' ? !(ch->layout = strdup(value)) : asprintf(&ch->layout, "%s/%s", dir, value) < 0) {
		ch->layout = NULL;
		return rt_error("out of memory");
	}
	ch->value = strdup(value);
	ch->dir = strdup(dir);
	return ch->value && ch->dir ? 0 : rt_error("out of memory");
}

/*
 * An image of the store, as rootasm_store_lookup() takes it, the one grammar
 * of a stored image's reference (exec, bundle create, inspect): a name
 * NAME[:TAG], its manifest digest sha256:HEX, 12 or more of its hex, or the
 * layout path import printed. The directory of the layout it gives is the
 * limit: the store's file names are the library's.
 */
static int image_layout(const char *store, const char *value, struct rt_choice *ch)
{
	_cleanup_free_ char *found = NULL, *dir = NULL;
	struct rootasm_error e = { 0 };
	char line[1024];
	int r;

	if (rootasm_store_lookup(store, value, &found, NULL, &e) < 0)
		return rt_error("annotation " ANN_IMAGE " '%s': %s", value, rootasm_error_format(&e, line, sizeof(line)));
	dir = strdup(found);
	if (!dir)
		return rt_error("out of memory");
	r = named(ch, ANN_IMAGE, found, dirname(dir));
	if (r == 0) {
		free(ch->value);
		ch->value = strdup(value);
		if (!ch->value)
			r = rt_error("out of memory");
	}
	return r;
}

int rt_choose(const struct rt_conf *c, const char *layout, const char *image, bool own, const char *via,
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
	r = layout ? named(ret, ANN_LAYOUT, layout, c->layouts) :
		     image_layout(own ? c->engine_store : c->store, image, ret);
	if (r == 0 && via && strcmp(via, c->socket))
		r = rt_error("annotation " ANN_VIA " '%s': not the configured rootasmd socket %s", via, c->socket);
	if (r == 0 && via && !(ret->via = strdup(via)))
		r = rt_error("out of memory");
	if (r < 0)
		rt_choice_done(ret);
	return r;
}

void rt_choice_done(struct rt_choice *ch)
{
	free(ch->layout);
	free(ch->dir);
	free(ch->value);
	free(ch->via);
	memset(ch, 0, sizeof(*ch));
}
