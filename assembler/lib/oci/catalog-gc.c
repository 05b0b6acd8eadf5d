// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rootasm_store_gc() and rootasm_store_verify() (rootasm.h, "The store"):
 * over the catalog of catalog.c. gc removes the layer images no image
 * record names (never one that is open: on a loop device, or mounted as an
 * erofs on its file) and what a killed
 * import left in STORE/tmp; verify checks owners, modes and the sha256 of
 * every record and layer image against what its import wrote.
 */
#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <jansson.h>

#include "catalog.h"
#include "digest.h"
#include "oci.h"
#include "open.h"
#include "source.h"
#include "store.h"
#include "util.h"

/* --------------------------------------------------------------------- gc */

/* The backing files of every loop device (/sys/block/loopN/loop/backing_file), as a JSON array. */
static json_t *loop_backing_files(void)
{
	json_t *a = json_array();
	glob_t g;

	if (!a || glob("/sys/block/loop*/loop/backing_file", GLOB_NOSORT, NULL, &g) != 0)
		return a;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		char buf[PATH_MAX + 16] = "";
		FILE *f = fopen(g.gl_pathv[i], "re");

		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f)) {
			buf[strcspn(buf, "\n")] = '\0';
			json_array_append_new(a, json_string(buf));
		}
		fclose(f);
	}
	globfree(&g);
	return a;
}

static bool in(json_t *a, const char *s)
{
	json_t *v;
	size_t i;

	json_array_foreach(a, i, v)
		if (json_is_string(v) && !strcmp(json_string_value(v), s))
			return true;
	return false;
}

/*
 * What a killed command left in the store directory: what a source
 * unpacked there (a docker-archive's .archive-*), a names.json not yet renamed
 * (.names.json.*). Under the exclusive lock: nothing is using them.
 */
static void remove_leftovers(struct cat *c, bool dry)
{
	_cleanup_close_ int d = openat(c->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir = d >= 0 ? fdopendir(d) : NULL;
	struct dirent *de;

	if (!dir || dry) {
		if (dir)
			closedir(dir);
		return;
	}
	d = -EBADF;	/* the DIR's */
	while ((de = readdir(dir))) {
		if (de->d_type == DT_DIR)
			ra_source_sweep(dirfd(dir), de->d_name);	/* what a source unpacked there */
		else if (!strncmp(de->d_name, ".names.json.", 12) && de->d_type == DT_REG)
			unlinkat(dirfd(dir), de->d_name, 0);
	}
	closedir(dir);
}

static int collect(struct cat *c, const char *hex, void *ud)
{
	cat_layers_of(c, hex, ud);
	return 0;
}

struct layer_walk {
	int (*fn)(struct cat *c, const char *name, const char *path, void *ud);
	void *ud;
};

static int layer_entry(struct cat *c, const char *name, void *ud)
{
	struct layer_walk *w = ud;
	const char *dot = strrchr(name, '.');
	char path[PATH_MAX];

	if (name[0] == '.' || !dot || (strcmp(dot, ".erofs") && strcmp(dot, ".squashfs")))
		return 0;
	snprintf(path, sizeof(path), "%s/layers/sha256/%s", c->path, name);
	return w->fn(c, name, path, w->ud);
}

/* Call @fn for each layer image (NAME.erofs, NAME.squashfs) of layers/sha256 with its name and absolute path. */
static int each_layer_image(struct cat *c, int (*fn)(struct cat *c, const char *name, const char *path, void *ud),
			    void *ud, struct rootasm_error *e)
{
	struct layer_walk w = { .fn = fn, .ud = ud };

	return cat_each_entry(c, c->layers, "layers/sha256", layer_entry, &w, e);
}

/*
 * Whether anything has the layer image open: an erofs mounted on its file
 * holds it open in the kernel (its superblock's file), and shows it nowhere
 * (not in /sys/block, its mount's source is a /proc fd link), so ask the
 * inode: the kernel grants a write lease only to the file's one opener
 * (fs/locks.c check_conflicting_open(): EAGAIN while any other open file has
 * it, a loop device's backing file and a process's fd too). Granted, it is
 * given back at once; an opener meanwhile waits for that. A file system
 * without leases says nothing (false: the loop devices' list still counts).
 */
static bool open_elsewhere(int dir, const char *name)
{
	_cleanup_close_ int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return false;
	if (fcntl(fd, F_SETLEASE, F_WRLCK) == 0) {
		(void)fcntl(fd, F_SETLEASE, F_UNLCK);
		return false;
	}
	return errno == EAGAIN;
}

struct gc {
	json_t *used, *loops;
	bool dry;
	struct rootasm_store_gc_result *res;
	struct rootasm_error *e;
};

static int gc_one(struct cat *c, const char *name, const char *path, void *ud)
{
	struct gc *g = ud;
	char rec[NAME_MAX + 8];
	struct stat st;

	if (in(g->used, path))
		return 0;
	/* a tree or rootasmd's cache has it on a loop device or mounted on it: it stays until they let go */
	if (in(g->loops, path) || open_elsewhere(c->layers, name)) {
		if (g->res)
			g->res->in_use++;
		return 0;
	}
	if (fstatat(c->layers, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
		return 0;
	if (!g->dry) {
		if (unlinkat(c->layers, name, 0) < 0)
			return ra_err(g->e, errno, -EBADF, "store gc", path, "unlink");
		snprintf(rec, sizeof(rec), "%s.json", name);
		(void)unlinkat(c->layers, rec, 0);
	}
	if (g->res) {
		g->res->removed++;
		g->res->bytes += st.st_size;
	}
	return 0;
}

int rootasm_store_gc(const char *store, unsigned int flags, struct rootasm_store_gc_result *res,
		     struct rootasm_error *e)
{
	struct gc g = { .dry = flags & ROOTASM_STORE_GC_DRY_RUN, .res = res, .e = e };
	struct cat c;
	int r;

	if (res) {
		if (res->size < offsetof(struct rootasm_store_gc_result, reserved))
			return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "store gc", NULL,
					   "struct rootasm_store_gc_result.size is %zu", res->size);
		memset((char *)res + sizeof(res->size), 0, sizeof(*res) - sizeof(res->size));
	}
	if (flags & ~ROOTASM_STORE_GC_DRY_RUN)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "store gc", NULL, "unknown flags 0x%x", flags);
	r = cat_open(store, LOCK_EX, &c, e);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		goto out;
	remove_leftovers(&c, g.dry);
	g.used = json_array();
	g.loops = loop_backing_files();
	if (!g.used || !g.loops) {
		r = ra_oom(e, "store gc");
		goto out;
	}
	/* referenced: named by an image's layout */
	r = cat_each_image(&c, collect, g.used, e);
	if (r >= 0)
		r = each_layer_image(&c, gc_one, &g, e);
out:
	json_decref(g.used);
	json_decref(g.loops);
	cat_close(&c);
	return r < 0 ? r : 0;
}

/* ----------------------------------------------------------------- verify */

struct verify {
	rootasm_store_verify_fn fn;
	void *ud;
	int problems;
};

static void problem(struct verify *V, const char *path, const char *what)
{
	V->problems++;
	if (V->fn)
		V->fn(V->ud, path, what);
}

/*
 * What root mounts must be root's alone (assembly refuses an administrator's
 * image that is not): the store's directories and each layer image owned by
 * root, writable by nobody else.
 */
static void check_owner(struct verify *V, const struct stat *st, const char *path)
{
	char why[160];

	if (ra_roots_alone(st))
		return;
	snprintf(why, sizeof(why), "%s (mode %04o, owner uid %u): another user could change what root mounts",
		 st->st_uid != 0 ? "not owned by root" : "writable by group or others",
		 (unsigned int)(st->st_mode & 07777), (unsigned int)st->st_uid);
	problem(V, path, why);
}

static void check_dirs(struct cat *c, struct verify *V)
{
	static const char *const dirs[] = { ".", "layers", "layers/sha256", "images", "images/sha256" };
	char path[PATH_MAX + 32];
	struct stat st;

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		if (fstatat(c->fd, dirs[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;	/* not made yet (an empty store) */
		snprintf(path, sizeof(path), "%s%s%s", c->path, i ? "/" : "", i ? dirs[i] : "");
		check_owner(V, &st, path);
	}
}

/* Every layer image an image's layout names is there. */
static int verify_image(struct cat *c, const char *hex, void *ud)
{
	struct verify *V = ud;
	json_t *paths = json_array(), *p;
	char name[RA_DIGEST_HEX + 64], path[PATH_MAX];
	struct stat st;
	size_t i;

	if (!paths)
		return -ENOMEM;
	if (cat_layout_of(c, hex, name, sizeof(name)) < 0) {
		snprintf(path, sizeof(path), "%s/images/sha256/%s.json", c->path, hex);
		problem(V, path, "the image has no layout");
	}
	cat_layers_of(c, hex, paths);
	json_array_foreach(paths, i, p)
		if (stat(json_string_value(p), &st) < 0 || !S_ISREG(st.st_mode))
			problem(V, json_string_value(p), "a layer image the image's layout names is missing");
	json_decref(paths);
	return 0;
}

/* A layer image: root's alone, and its sha256 the one its record took when it was made. */
static int verify_layer(struct cat *c, const char *name, const char *path, void *ud)
{
	struct verify *V = ud;
	char rec[NAME_MAX + 8], digest[RA_DIGEST_MAX], why[256];
	_cleanup_close_ int fd = -EBADF;
	const char *want;
	struct stat st;
	json_t *o = NULL;

	fd = sys_openat2(c->layers, name, (struct open_how *)&beneath_how);
	if (fd < 0 || fstat(fd, &st) < 0) {
		problem(V, path, "cannot be read");
		return 0;
	}
	check_owner(V, &st, path);
	snprintf(rec, sizeof(rec), "%s.json", name);
	if (cat_load_json_at(c->layers, rec, RECORD_MAX, &o) < 0) {
		problem(V, path, "its record is missing or unreadable");
		return 0;
	}
	want = json_string_value(json_object_get(json_object_get(o, "image"), "digest"));
	if (!want) {
		if (V->fn)
			V->fn(V->ud, path, "not checked: its record has no digest (made by an older rootasm)");
	} else if (ra_sha256_fd(fd, digest, NULL) < 0) {
		problem(V, path, "cannot be read");
	} else if (strcmp(digest, want)) {
		snprintf(why, sizeof(why), "its sha256 is %s, its record says %s", digest, want);
		problem(V, path, why);
	}
	json_decref(o);
	return 0;
}

int rootasm_store_verify(const char *store, rootasm_store_verify_fn fn, void *userdata, struct rootasm_error *e)
{
	struct verify V = { .fn = fn, .ud = userdata };
	struct cat c;
	int r;

	r = cat_open(store, LOCK_SH, &c, e);
	if (r == -ENOENT)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, ENOENT, "store verify", ra_store_path(store), "no store");
	if (r == 0) {
		check_dirs(&c, &V);
		r = cat_each_image(&c, verify_image, &V, e);
	}
	if (r >= 0)
		r = each_layer_image(&c, verify_layer, &V, e);
	cat_close(&c);
	return r < 0 ? r : V.problems;
}
