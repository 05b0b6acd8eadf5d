// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The layout model's life: the walk over every host object a layout names
 * (struct ra_src), and the free, which closes the fds the open stage made.
 */
#include <stdlib.h>

#include "layout.h"
#include "principal.h"
#include "util.h"

int ra_layout_walk(struct rootasm_layout *l, unsigned int flags, ra_walk_fn fn, void *userdata)
{
	int r;

	for (size_t i = 0; i < l->nlayers; i++) {
		if ((r = fn(l, &l->layers[i].src, NULL, userdata)) ||
		    (r = fn(l, &l->layers[i].idmap.userns, NULL, userdata)))
			return r;
	}
	if ((r = fn(l, &l->upper.src, NULL, userdata)) || (r = fn(l, &l->upper.work, NULL, userdata)))
		return r;
	for (size_t i = 0; i < l->nmounts; i++) {
		struct ra_mount *m = &l->mounts[i];

		if ((r = fn(l, &m->src, m, userdata)) || (r = fn(l, &m->idmap.userns, m, userdata)))
			return r;
		if ((flags & RA_WALK_NESTED) && m->nested && (r = ra_layout_walk(m->nested, flags, fn, userdata)))
			return r;
	}
	return 0;
}

static void src_free(struct ra_src *s)
{
	close_fdp(&s->fd);
	s->fd = -EBADF;
	free(s->path);
	free(s->display);
	free(s->key);
	free(s->auth_why);
	free(s->admin_why);
}

static int src_set(struct ra_src *s, const char *path, const char *key)
{
	*s = (struct ra_src){ .kind = RA_SRC_DIR, .fd = -EBADF, .path = strdup(path), .display = strdup(path),
			      .key = strdup(key) };
	return s->path && s->display && s->key ? 0 : -ENOMEM;
}

static void tmpfs_free(struct ra_tmpfs *t);

int ra_layout_set_upper_dirs(struct rootasm_layout *l, const char *upperdir, const char *workdir)
{
	src_free(&l->upper.src);
	src_free(&l->upper.work);
	tmpfs_free(&l->upper.tmpfs);
	l->upper = (struct ra_upper){ .kind = RA_UPPER_DIRS };
	return src_set(&l->upper.src, upperdir, "upper.upperdir") < 0 ||
	       src_set(&l->upper.work, workdir, "upper.workdir") < 0 ? -ENOMEM : 0;
}

static void idmap_free(struct ra_idmap *m)
{
	free(m->uids);
	free(m->gids);
}

static void tmpfs_free(struct ra_tmpfs *t)
{
	free(t->size);
	free(t->nr_inodes);
}

static int free_src(struct rootasm_layout *l, struct ra_src *s, struct ra_mount *m, void *userdata)
{
	src_free(s);
	return 0;
}

void rootasm_layout_free(struct rootasm_layout *l)
{
	if (!l)
		return;
	ra_layout_walk(l, 0, free_src, NULL);
	for (size_t i = 0; i < l->nlayers; i++)
		idmap_free(&l->layers[i].idmap);
	free(l->layers);
	for (size_t i = 0; i < l->nmounts; i++) {
		free(l->mounts[i].target);
		tmpfs_free(&l->mounts[i].tmpfs);
		idmap_free(&l->mounts[i].idmap);
		rootasm_layout_free(l->mounts[i].nested);
	}
	free(l->mounts);
	tmpfs_free(&l->upper.tmpfs);
	free(l->creds.groups);
	free(l->exec.groups);
	for (size_t i = 0; i < l->exec.nenv; i++)
		free(l->exec.env[i]);
	free(l->exec.env);
	free(l->exec.hostname);
	strv_free(l->exec.entrypoint);
	strv_free(l->exec.cmd);
	free(l->exec.workdir);
	free(l->exec.user);
	free(l->file);
	free(l->dir);
	free(l->anchor);
	rootasm_principal_free(l->principal);
	free(l);
}
