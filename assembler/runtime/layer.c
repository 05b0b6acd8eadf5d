// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The engine's writable layer of a container: when rootasm assembles the
 * engine's own image (a CRI container's, cri-image.c), the tree's upper is
 * the upper directory of the engine's overlay at its root.path (containerd's
 * overlayfs snapshot fs/ and work/, podman's overlay diff/ and work/), so the
 * engine's diff, commit, export and snapshot see what the container writes.
 *
 * Only what the kernel says of that mount is believed: root.path must be the
 * root of an overlayfs mount (statx STATX_ATTR_MOUNT_ROOT, fstatfs), and its
 * upperdir= and workdir= are read from statmount(STATMOUNT_MNT_OPTS) by its
 * unique mount id. A relative path there (podman's, with long lower lists)
 * names nothing we can find: then the layer is not used and the engine is
 * told so (rt_warn()).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "mntinfo.h"
#include "runtime.h"
#include "util.h"

#ifndef OVERLAYFS_SUPER_MAGIC
#define OVERLAYFS_SUPER_MAGIC 0x794c7630
#endif

/* One option's value, unescaped: seq_show_option()'s \ooo, then overlayfs' own \ before , : and \. */
static char *unescape(const char *v, size_t n)
{
	char *s = malloc(n + 1), *o = s;

	for (size_t i = 0; s && i < n; i++) {
		if (v[i] == '\\' && i + 3 < n && v[i + 1] >= '0' && v[i + 1] <= '3' && v[i + 2] >= '0' &&
		    v[i + 2] <= '7' && v[i + 3] >= '0' && v[i + 3] <= '7') {
			*o++ = (char)((v[i + 1] - '0') * 64 + (v[i + 2] - '0') * 8 + (v[i + 3] - '0'));
			i += 3;
		} else {
			*o++ = v[i];
		}
	}
	if (!s)
		return NULL;
	*o = 0;
	for (char *r = s, *w = s; ; r++) {
		if (*r == '\\' && r[1])
			r++;
		*w++ = *r;
		if (!*r)
			break;
	}
	return s;
}

/* The engine's rootfs: @cfg's root.path (default "rootfs") beneath @bundle, no symlink last; its path in *ret_path. */
static int open_rootfs(const char *bundle, json_t *cfg, const char **ret_path)
{
	const char *rootpath = json_string_value(json_object_get(json_object_get(cfg, "root"), "path"));
	_cleanup_close_ int bfd = open(bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);

	*ret_path = rootpath ?: "rootfs";
	return bfd < 0 ? -EBADF : openat(bfd, *ret_path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

static char *option(const char *opts, const char *key)
{
	size_t kl = strlen(key);

	for (const char *p = opts; p && *p;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (n > kl && !strncmp(p, key, kl) && p[kl] == '=')
			return unescape(p + kl + 1, n - kl - 1);
		p = end ? end + 1 : NULL;
	}
	return NULL;
}

int rt_engine_layer(const char *bundle, json_t *cfg, char **ret_upper, char **ret_work, char *why, size_t whylen)
{
	const char *rootpath;
	_cleanup_close_ int fd = open_rootfs(bundle, cfg, &rootpath);
	_cleanup_free_ char *upper = NULL, *work = NULL;
	struct ra_statmount *sm = NULL;
	struct statfs sf;
	bool is_root = false;
	uint64_t mid;

	*ret_upper = *ret_work = NULL;
	if (fd < 0) {
		snprintf(why, whylen, "its root.path %s: %s", rootpath, strerror(errno));
		return 0;
	}
	mid = ra_fd_mount_id(fd, &is_root);
	if (fstatfs(fd, &sf) < 0 || sf.f_type != OVERLAYFS_SUPER_MAGIC || !mid || !is_root) {
		snprintf(why, whylen, "its root.path %s is not an overlayfs mount of its own (the engine's "
			 "snapshotter or storage driver keeps no separate writable layer)", rootpath);
		return 0;
	}
	if (ra_statmount(mid, RA_STATMOUNT_MNT_OPTS, 0, &sm) < 0 || !(sm->mask & RA_STATMOUNT_MNT_OPTS)) {
		free(sm);
		snprintf(why, whylen, "statmount() of its root.path %s gave no mount options (Linux 6.11)", rootpath);
		return 0;
	}
	upper = option(sm->str + sm->mnt_opts, "upperdir");
	work = option(sm->str + sm->mnt_opts, "workdir");
	free(sm);
	if (!upper || !work || upper[0] != '/' || work[0] != '/') {
		snprintf(why, whylen, "its overlay at root.path %s names %s upperdir and workdir", rootpath,
			 upper && work ? "relative paths as" : "no");
		return 0;
	}
	*ret_upper = TAKE_PTR(upper);
	*ret_work = TAKE_PTR(work);
	return 1;
}

/*
 * containers/storage's overlay driver (podman, CRI-O): root.path is
 * GRAPHROOT/overlay/ID/merged, and GRAPHROOT/overlay-layers/layers.json (a
 * file of root's nobody else writes) says the container's layer ID and, by
 * its parents, the diff-ids of the layers below it, top first. NULL when it is
 * not such a path or file.
 */
static json_t *storage_lowers(int rootfs)
{
	char path[PATH_MAX], *id, *ov;
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int fd = -EBADF;
	json_t *layers, *by_id, *out, *l;
	struct stat st;
	size_t len, i;

	if (ra_fd_path(rootfs, path, sizeof(path)) <= 0 || strlen(path) < 8 ||
	    strcmp(path + strlen(path) - 7, "/merged"))
		return NULL;
	path[strlen(path) - 7] = 0;
	id = strrchr(path, '/');
	if (!id || strlen(id + 1) != 64 || id[1 + strspn(id + 1, "0123456789abcdef")])
		return NULL;
	*id++ = 0;
	ov = strrchr(path, '/');
	if (!ov || strcmp(ov, "/overlay"))
		return NULL;
	*ov = 0;
	{
		char f[PATH_MAX + 32];

		snprintf(f, sizeof(f), "%s/overlay-layers/layers.json", path);
		fd = open(f, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022) ||
	    ra_read_upto(fd, 64 << 20, &text, &len) < 0)
		return NULL;
	layers = json_loadb(text, len, 0, NULL);
	by_id = json_object();
	out = json_array();
	json_array_foreach(layers, i, l)
		if (json_string_value(json_object_get(l, "id")))
			json_object_set(by_id, json_string_value(json_object_get(l, "id")), l);
	l = json_object_get(by_id, id);
	/* the container's layer, then its parents: each one's diff-id, top first (at most overlayfs' 500) */
	for (size_t n = 0; l && (l = json_object_get(by_id, json_string_value(json_object_get(l, "parent")) ?: "")); n++) {
		const char *d = json_string_value(json_object_get(l, "diff-digest"));

		if (!d || n >= 500) {
			json_decref(out);
			out = NULL;
			break;
		}
		json_array_append_new(out, json_string(d));
	}
	if (out && !json_array_size(out)) {
		json_decref(out);
		out = NULL;
	}
	json_decref(by_id);
	json_decref(layers);
	return out;
}

int rt_engine_has_image(const char *bundle, json_t *cfg, const struct rt_conf *c, const char *ref)
{
	const char *rootpath;
	_cleanup_close_ int fd = open_rootfs(bundle, cfg, &rootpath);
	_cleanup_free_ char *manifest = NULL, *doc = NULL;
	struct rootasm_import_opts o = { .size = sizeof(o), .store = c->store };
	struct rootasm_error e = { 0 };
	json_t *lowers, *ins, *ids;
	bool same;
	size_t n;

	lowers = fd < 0 ? NULL : storage_lowers(fd);
	if (!lowers)
		return 0;
	/* the image's diff-ids, bottom first, as its record in the store keeps them */
	if (rootasm_store_lookup(c->store, ref, NULL, &manifest, &e) < 0 ||
	    rootasm_inspect(NULL, manifest, &o, 0, &doc, &e) < 0) {
		json_decref(lowers);
		return 0;
	}
	ins = json_loads(doc, 0, NULL);
	ids = json_object_get(ins, "DiffIDs");
	n = json_array_size(ids);
	same = n && n == json_array_size(lowers);
	for (size_t i = 0; same && i < n; i++)
		same = json_equal(json_array_get(ids, i), json_array_get(lowers, n - 1 - i));
	json_decref(ins);
	json_decref(lowers);
	return same;
}
