// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rootasm_import() (rootasm.h): an image into the store (store.c), one layer
 * at a time, then its image record and its layout:
 *
 *   blob fd (oci.c) ─▶ ra_unpack_layer() ─▶ a detached tmpfs (the staging tree: no path reaches it,
 *        │                                   and it dissolves with its fd, SIGKILL included)
 *        └ both digests compared ─▶ mkfs.erofs|mksquashfs in a child (child.c ra_child_spawn) that
 *          attaches the staging tmpfs at STORE/tmp in a mount namespace of its own (the tools
 *          resolve their source by name; a detached mount has none) and writes to an O_TMPFILE
 *          of STORE/layers/sha256 ─▶ fsync ─▶ linkat() to its name: it appears complete or
 *          not at all. EEXIST means a concurrent import published the same layer first: ours is
 *          dropped (same diff-id, same tree). No lock is needed.
 *
 * A layer already in the store is not read again (its diff-id is trusted
 * through the verified config); a second import of an image writes nothing.
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

#include <jansson.h>

#include "child.h"
#include "context.h"
#include "json.h"
#include "layout.h"
#include "layout-write.h"
#include "oci.h"
#include "source.h"
#include "store.h"
#include "sysmnt.h"
#include "unpack.h"
#include "util.h"

static const char *fs_ext(enum rootasm_layer_fs fs)
{
	return fs == ROOTASM_LAYER_SQUASHFS ? "squashfs" : "erofs";
}

/* The tool's absolute path in the usual directories, or NULL. */
static const char *find_tool(const char *name, char *buf, size_t size)
{
	static const char *const dirs[] = { "/usr/sbin", "/usr/bin", "/sbin", "/bin" };

	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		snprintf(buf, size, "%s/%s", dirs[i], name);
		if (access(buf, X_OK) == 0)
			return buf;
	}
	return NULL;
}

/* The last line a tool wrote on @log (a memfd), appended to @e's message. */
static void add_log(int log, struct rootasm_error *e)
{
	char buf[4096], *l;
	ssize_t n = pread(log, buf, sizeof(buf) - 1, 0);
	size_t used;

	if (n <= 0 || !e)
		return;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	l = strrchr(buf, '\n');
	l = l ? l + 1 : buf;
	used = strlen(e->msg);
	snprintf(e->msg + used, sizeof(e->msg) - used, "%s%s", used ? ": " : "", l);
	for (char *c = e->msg; *c; c++)
		if ((unsigned char)*c < 0x20)
			*c = ' ';
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A layout of the first @n layers of @res (version and layers, the rest to be set): the image's, or those below a layer. */
static json_t *layers_doc(struct ra_jb *jb, const struct rootasm_import_result *res, size_t n, enum rootasm_layer_fs fs)
{
	json_t *lo = ra_layout_json_doc(jb), *ll = json_array();

	for (size_t i = 0; i < n; i++)
		ra_japp(jb, ll, ra_layout_json_image(res->layers[i].image, fs_ext(fs)));
	ra_jset(jb, lo, "layers", ll);
	return lo;
}

/* One layer: blob -> verified staging tree -> image file -> published under its diff-id. */
/*
 * The layers below layer @i of this import, merged: the read-only tree of
 * their layer images (rootasm's own assembly of a layout of them), made the
 * first time ra_unpack_layer() asks (unpack.h, struct ra_unpack_lower).
 */
struct below {
	struct rootasm_ctx *ctx;
	const struct rootasm_import_result *res;
	size_t i;
	enum rootasm_layer_fs fs;
	int fd;
};

static int below_open(void *userdata, struct rootasm_error *e)
{
	struct below *b = userdata;
	struct rootasm_layout *l = NULL;
	struct ra_jb jb = { 0 };
	_cleanup_free_ char *buf = NULL;
	json_t *lo;
	int r;

	if (b->i == 0)
		return -ENOENT;
	if (b->fd >= 0)
		return b->fd;
	lo = layers_doc(&jb, b->res, b->i, b->fs);
	buf = jb.oom || !lo ? NULL : json_dumps(lo, JSON_COMPACT);
	json_decref(lo);
	if (!buf)
		return ra_oom(e, "import: the layers below");
	r = rootasm_layout_load_mem(b->ctx, buf, strlen(buf), NULL, &l, e);
	if (r < 0)
		return r;
	r = rootasm_assemble(b->ctx, l, e);
	rootasm_layout_free(l);
	if (r < 0)
		return r;
	b->fd = r;
	return r;
}

/*
 * One layer: blob -> verified staging tree -> image file -> published as
 * @diff_name, or as @chain_name when the tree depends on the layers below
 * (@lower): implied directories, hard links to a file below. *@chained
 * says which.
 */
static int convert(struct ra_oci_image *img, struct ra_oci_layer *ly, struct ra_store *s, enum rootasm_layer_fs fs,
		   const char *diff_name, const char *chain_name, const char *chain_id,
		   const struct ra_unpack_lower *lower, bool *chained, struct rootasm_import_layer *out,
		   struct rootasm_error *e)
{
	const char *name;
	struct ra_tmpfs stage_opts = { .mode = 0755, .has_mode = true };
	char stage_size[24], stage_inodes[24];
	struct ra_unpack_limits lim = ra_unpack_limits_of(ly->d.size, img->max_expansion, img->max_layer_bytes);
	_cleanup_close_ int blob = -EBADF, stage = -EBADF, img_fd = -EBADF, log = -EBADF, tmp = -EBADF;
	_cleanup_free_ char *what = NULL, *at = NULL;
	char tool[64], src[PATH_MAX + 8], rec[RA_DIGEST_HEX + 64], img_digest[RA_DIGEST_MAX];
	uint64_t img_bytes = 0;
	struct ra_unpack_stats st;
	struct ra_jb jb = { 0 };
	json_t *o;
	int r, with;

	what = ra_oci_blob_name(img, ly->d.hex);
	if (!what || asprintf(&at, "%s/tmp", s->path) < 0) {
		what = at = NULL;
		return ra_oom(e, "import layer");
	}
	if (!find_tool(fs == ROOTASM_LAYER_SQUASHFS ? "mksquashfs" : "mkfs.erofs", tool, sizeof(tool)))
		return ra_err_kind(e, ROOTASM_ERROR_UNSUPPORTED, ENOENT, "import layer",
				   fs == ROOTASM_LAYER_SQUASHFS ? "mksquashfs" : "mkfs.erofs",
				   "not found (apt-get install %s)",
				   fs == ROOTASM_LAYER_SQUASHFS ? "squashfs-tools" : "erofs-utils");
	blob = ra_oci_blob_open(img, &ly->d, e);
	if (blob < 0)
		return blob;
	/*
	 * With max_layer_bytes, the kernel holds the stage to it too: what the
	 * unpack counts (a file's data, 1 KiB an entry) is not what a tmpfs
	 * takes (a page for each small file, an inode each): size= bounds the
	 * pages, nr_inodes= the inodes (one per 2 KiB of it).
	 */
	if (img->max_layer_bytes) {
		snprintf(stage_size, sizeof(stage_size), "%llu", (unsigned long long)img->max_layer_bytes);
		snprintf(stage_inodes, sizeof(stage_inodes), "%llu",
			 (unsigned long long)(img->max_layer_bytes / 2048 ? img->max_layer_bytes / 2048 : 1));
		stage_opts.size = stage_size;
		stage_opts.nr_inodes = stage_inodes;
	}
	stage = ra_tmpfs_mount(&stage_opts, 0, e);
	if (stage < 0)
		return stage;
	/* a registry's blob: its size is its descriptor's word until the end of the stream */
	lim.by_read = img->reader->checked_as_read;
	r = ra_unpack_layer(blob, ly->comp, stage, &lim, lower, &st, what, e);
	if (r == -ENOSPC && img->max_layer_bytes)
		r = ra_err_kind(e, ROOTASM_ERROR_USAGE, EFBIG, "unpack layer", what, "its tree takes more than the %s "
				"bytes or %s inodes a layer may stage in memory (the import's max_layer_bytes: "
				"rootasm-runtime's import_layer_max)", stage_size, stage_inodes);
	if (img->reader->done)	/* what the source knows (a lying registry's download error) says more */
		r = img->reader->done(img, blob, r, e);
	/*
	 * A blob that is not what its descriptor says is that, whatever its tar looks
	 * like: a local blob is hashed to its end before a bad entry is reported (a
	 * registry's is hashed as it arrives, and its mismatch reported by the stream).
	 */
	if (r < 0 && !img->reader->checked_as_read && e && rootasm_error_is_usage(e)) {
		char got[RA_DIGEST_MAX];
		uint64_t bytes = 0;

		if (ra_sha256_fd(blob, got, &bytes) == 0 && (bytes != ly->d.size || strcmp(got, ly->d.digest)))
			return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "verify blob", what,
					   "its sha256 is %s (%llu bytes), its descriptor says %s (%llu bytes)", got,
					   (unsigned long long)bytes, ly->d.digest, (unsigned long long)ly->d.size);
	}
	if (r < 0)
		return r;
	*chained = st.implied || st.lower_links;
	name = *chained ? chain_name : diff_name;
	/* nothing of the tree is used before both digests matched */
	if (st.blob_bytes != ly->d.size || strcmp(st.blob_digest, ly->d.digest))
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "verify blob", what,
				   "its sha256 is %s (%llu bytes), its descriptor says %s (%llu bytes)",
				   st.blob_digest, (unsigned long long)st.blob_bytes, ly->d.digest,
				   (unsigned long long)ly->d.size);
	if (strcmp(st.diff_id, ly->diff_id))
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "verify blob", what,
				   "its uncompressed sha256 is %s, the config's diff_id says %s", st.diff_id,
				   ly->diff_id);
	out->tar_bytes = st.tar_bytes;
	img_fd = openat(s->layers, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
	if (img_fd < 0)
		return ra_err(e, errno, -EBADF, "create layer image", s->path, "O_TMPFILE in layers/sha256");
	log = memfd_create("rootasm-mkfs-log", MFD_CLOEXEC);
	if (log < 0)
		return ra_err(e, errno, -EBADF, "memfd_create", NULL, NULL);
	snprintf(src, sizeof(src), "%s/", at);
	/*
	 * Holes stay holes only in 4 KiB chunks; those cost mkfs.erofs (1.5) a
	 * second copy of the data through a tmpfile() in /tmp (1.3 s and 2x the
	 * disk for a 120 MB layer) and a copy_file_range() that fails across file
	 * systems: used only for a layer with sparse files, with the store's
	 * layers directory over /tmp for mkfs when /tmp is another file system
	 * (O_TMPFILE: nothing stays there).
	 */
	if (fs == ROOTASM_LAYER_EROFS && st.sparse_files) {
		struct stat tst, lst;

		if (stat("/tmp", &tst) < 0 || fstat(s->layers, &lst) < 0)
			return ra_err(e, errno, -EBADF, "stat", "/tmp", "for mkfs.erofs's temporary file");
		if (tst.st_dev != lst.st_dev) {
			if (!strncmp(s->path, "/tmp/", 5))
				return ra_err_kind(e, ROOTASM_ERROR_UNSUPPORTED, EXDEV, "import layer", what,
						   "it has sparse files, which mkfs.erofs copies through /tmp, and the "
						   "store is under /tmp but on another file system");
			tmp = open_tree(s->layers, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
			if (tmp < 0)
				return ra_err(e, errno, -EBADF, "open_tree", s->path, "layers/sha256, for mkfs.erofs's /tmp");
		}
	}
	{
		char *const erofs_chunks[] = { "mkfs.erofs", "--quiet", "--chunksize=4096", "--preserve-mtime",
					       "/proc/self/fd/3", src, NULL };
		char *const erofs_plain[] = { "mkfs.erofs", "--quiet", "--preserve-mtime", "/proc/self/fd/3", src, NULL };
		char *const *erofs = st.sparse_files ? erofs_chunks : erofs_plain;
		char *const sqfs[] = { "mksquashfs", src, "/proc/self/fd/3", "-noappend", "-quiet", "-no-progress",
				       "-comp", "zstd", "-Xcompression-level", "3", "-xattrs", "-exit-on-error", NULL };
		struct ra_spawn x = {
			.path = tool,
			.argv = fs == ROOTASM_LAYER_SQUASHFS ? sqfs : erofs,
			.fds = { -1, log, log, img_fd },
			.attach_fd = stage,
			.attach_at = at,
			.tmp_fd = tmp,
		};

		r = ra_child_spawn(&x, fs == ROOTASM_LAYER_SQUASHFS ? "mksquashfs" : "mkfs.erofs", e);
	}
	if (r < 0) {
		add_log(log, e);
		return r;
	}
	close_fdp(&stage);
	stage = -EBADF;
	/* what `store verify` checks the layer image against */
	r = ra_sha256_fd(img_fd, img_digest, &img_bytes);
	if (r < 0)
		return ra_err(e, -r, -EBADF, "sha256", name, "of the layer image");
	r = ra_store_publish_fd(s, img_fd, s->layers, name, -1, name, e);
	if (r < 0)
		return r;
	/* the record goes with the image: taken back with it, kept when it is another import's */
	with = r ? (int)s->npubs - 1 : -2;
	/* the record of what it was made from */
	o = json_object();
	ra_jset(&jb, o, "diff_id", ra_jstr(ly->diff_id));
	ra_jset(&jb, o, "fs", ra_jstr(fs_ext(fs)));
	ra_jset(&jb, o, "tar_bytes", json_integer(st.tar_bytes));
	ra_jset(&jb, o, "entries", json_integer(st.entries));
	ra_jset(&jb, o, "whiteouts", json_integer(st.whiteouts));
	ra_jset(&jb, o, "opaque_dirs", json_integer(st.opaques));
	ra_jset(&jb, o, "implied_dirs", json_integer(st.implied));
	ra_jset(&jb, o, "lower_links", json_integer(st.lower_links));
	if (*chained)
		ra_jset(&jb, o, "chain_id", ra_jstr(chain_id));
	ra_jset(&jb, o, "from", json_pack("{s:s, s:s, s:I}", "digest", ly->d.digest, "mediaType", ly->d.media_type,
					  "size", (json_int_t)ly->d.size));
	ra_jset(&jb, o, "image", json_pack("{s:s, s:I}", "digest", img_digest, "size", (json_int_t)img_bytes));
	snprintf(rec, sizeof(rec), "%s.json", name);
	r = ra_store_publish_json(s, o, jb.oom, s->layers, rec, with, rec, e);
	return r < 0 ? r : 0;
}

#define OPT(o, field, def) RA_OPT(o, struct rootasm_import_opts, field, def)

/* The size and flag rules of rootasm.h; 0 or a usage error in @e. */
static int opts_check(const struct rootasm_import_opts *o, const char *ref, struct rootasm_error *e)
{
	int r = RA_OPTS_CHECK(o, struct rootasm_import_opts, offsetof(struct rootasm_import_opts, progress), "import",
			      ref, e);

	if (r < 0 || !o)
		return r;
	if (o->fs != ROOTASM_LAYER_EROFS && o->fs != ROOTASM_LAYER_SQUASHFS)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "import", ref, "unknown layer file system %d",
				   (int)o->fs);
	if (OPT(o, flags, 0u) & ~ROOTASM_IMPORT_FLAGS)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "import", ref, "unknown flags 0x%x",
				   OPT(o, flags, 0u) & ~ROOTASM_IMPORT_FLAGS);
	return 0;
}

/*
 * The image's record and its layout, under @hex: the image's own manifest, or
 * the record of the image stored with the same config under another manifest
 * (which keeps its record; the layout of @fs is added when it has none).
 */
static int write_image(struct ra_oci_image *img, const char *hex, struct ra_store *s, enum rootasm_layer_fs fs,
		       json_t *exec, json_t *env_dropped, struct rootasm_import_result *res, struct rootasm_error *e)
{
	char name[RA_DIGEST_HEX + 32];
	struct ra_jb jb = { 0 };
	json_t *o, *a, *lo;
	int r, wrote = 0;

	if (strcmp(hex, img->manifest.hex))
		goto layout;
	/* the image record */
	o = json_object();
	ra_jset(&jb, o, "manifest", ra_jstr(img->manifest.digest));
	ra_jset(&jb, o, "config", ra_jstr(img->config.digest));
	a = json_array();
	for (size_t i = 0; i < img->nlayers; i++)
		ra_japp(&jb, a, json_pack("{s:s, s:s, s:s, s:I}", "digest", img->layers[i].d.digest, "diff_id",
					  img->layers[i].diff_id, "mediaType", img->layers[i].d.media_type, "size",
					  (json_int_t)img->layers[i].d.size));
	ra_jset(&jb, o, "layers", a);
	if (env_dropped)
		ra_jset(&jb, o, "env_dropped", json_incref(env_dropped));
	snprintf(name, sizeof(name), "%s.json", img->manifest.hex);
	r = ra_store_publish_json(s, o, jb.oom, s->images, name, -1, name, e);
	if (r < 0)
		return r;
	wrote += r;
layout:
	/* the layout: a document of layout format version 1 (layouts/FORMAT.md) */
	lo = layers_doc(&jb, res, res->nlayers, fs);
	ra_jset(&jb, lo, "upper", ra_layout_json_upper_tmpfs());
	if (exec)
		ra_jset(&jb, lo, "exec", json_incref(exec));
	snprintf(name, sizeof(name), "%s.%s.layout.json", hex, fs_ext(fs));
	r = ra_store_publish_json(s, lo, jb.oom, s->images, name, -1, name, e);
	if (r < 0)
		return r;
	wrote += r;
	if (asprintf(&res->layout, "%s/images/sha256/%s", s->path, name) < 0) {
		res->layout = NULL;
		return ra_oom(e, "import");
	}
	return wrote;
}

/* Layer @name is in the store (another import's, claimed): 1; not there: 0. */
static int cached(struct ra_store *s, const char *name, struct rootasm_error *e)
{
	struct stat st;
	int r;

	if (fstatat(s->layers, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : ra_err(e, errno, -EBADF, "import layer", name, "in %s/layers/sha256",
						    s->path);
	if (!S_ISREG(st.st_mode))
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "import layer", name,
				   "is in the store (%s/layers/sha256) but not a regular file", s->path);
	/* claimed, unless the import that published it took it back meanwhile */
	r = ra_store_claim(s->layers, name);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return ra_err(e, -r, -EBADF, "import layer", name, "claim it in %s/layers/sha256", s->path);
	close(r);
	return 1;
}

/*
 * A source that reads ahead (docker://): start reading the layers after @i
 * that are not in the store by their diff-id (one in it by its chain id only
 * is fetched for nothing, and stopped at the end). Best effort: a failure
 * here shows when the layer is read.
 */
static void prefetch(struct ra_oci_image *img, struct ra_store *s, enum rootasm_layer_fs fs, size_t i)
{
	for (size_t j = i + 1; j < img->nlayers && j <= i + img->reader->ahead; j++) {
		char name[RA_DIGEST_HEX + 32];
		struct stat st;

		snprintf(name, sizeof(name), "%s.%s", img->layers[j].diff_hex, fs_ext(fs));
		if (fstatat(s->layers, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			img->reader->prefetch(img, &img->layers[j].d);
	}
}

/*
 * rootasm_import() and rootasm_import_result_free() of LIBROOTASM_0.4 (the
 * import structs with reserved space), bound by .symver: compat.c has
 * their LIBROOTASM_0.2 versions, and a name cannot be defined twice.
 */
RA_SYMVER("rootasm_import@@LIBROOTASM_0.4")
int ra_import(struct rootasm_ctx *ctx, const char *ref, const struct rootasm_import_opts *o,
	      struct rootasm_import_result *res, struct rootasm_error *e);
RA_SYMVER("rootasm_import_result_free@@LIBROOTASM_0.4")
void ra_import_result_free(struct rootasm_import_result *res);

int ra_import(struct rootasm_ctx *ctx, const char *ref, const struct rootasm_import_opts *o,
	      struct rootasm_import_result *res, struct rootasm_error *e)
{
	char chain[RA_DIGEST_MAX] = "";
	const struct ra_source *kind = ra_source_of(ref);
	struct ra_registry_how how = ra_source_how(o);
	struct ra_source_open so = { .how = &how, .scratch_fd = -EBADF };
	struct ra_oci_image *img = NULL;
	json_t *exec = NULL, *env_dropped = NULL;
	const char *name = OPT(o, tag, NULL);
	char norm[512];
	_cleanup_close_ int lock = -EBADF;
	struct ra_store s = { .fd = -EBADF, .layers = -EBADF, .images = -EBADF };
	enum rootasm_layer_fs fs = OPT(o, fs, ROOTASM_LAYER_EROFS);
	const char *spath = OPT(o, store, NULL);
	rootasm_import_progress_fn progress = OPT(o, progress, NULL);
	void *ud = OPT(o, userdata, NULL);
	bool wrote = false, aliased;
	char hex[RA_DIGEST_HEX + 1], record[RA_DIGEST_MAX];
	int r;

	ctx = ra_ctx(ctx);
	r = opts_check(o, ref, e);
	if (r < 0)
		return r;
	if (!res)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "import", ref, "no result struct");
	memset(res, 0, sizeof(*res));
	spath = ra_store_path(spath);
	if (name && rootasm_store_name_normalize(name, norm, sizeof(norm)) < 0)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "import", name,
				   "--tag: expected NAME[:TAG] (lowercase path components, a TAG of letters, digits, "
				   "'_', '.', '-')");
	/* the source's kind (source.h), its reference checked before anything is made */
	if (!kind && (r = ra_source_foreign(ref, "import", e)) < 0)
		return r;
	if (!kind)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "import", ref, "not an image reference rootasm reads: "
				   "name it %s", ra_source_syntaxes());
	r = kind->check ? kind->check(ref, e) : 0;
	if (r < 0)
		return r;
	/* before anything is created: the staging tmpfs, owners, device nodes and trusted.* xattrs need it */
	if (geteuid() != 0)
		return ra_err_kind(e, ROOTASM_ERROR_PERMISSION, EPERM, "import", ref,
				   "needs root (a private tmpfs, file owners, device nodes, trusted.* xattrs)");
	if (kind->needs_scratch) {
		/* a source that unpacks (docker save's tar into an OCI layout) does it in the store's directory */
		r = ra_store_open_shared(spath, &s, &lock, e);
		if (r < 0)
			goto out;
		so.scratch_fd = s.fd;
		so.scratch = s.path;
	}
	r = kind->open(ref, &so, e);
	if (r < 0)
		goto out;
	img = so.img;
	img->max_expansion = OPT(o, max_expansion, 0u);
	img->max_layer_bytes = OPT(o, max_layer_bytes, (uint64_t)0);
	RA_TRACE(ctx, "import %s: manifest %s, %zu layers", ref, img->manifest.digest, img->nlayers);
	/* what was pulled: a short name resolved (registries.conf(5)) is said */
	if (so.source && (!(res->source = strdup(so.source)) || !(res->source_why = strdup(so.source_why)))) {
		r = ra_oom(e, "import");
		goto out;
	}
	/*
	 * the source's own name for the image unless --tag gives one (or it is
	 * none rootasm takes): an archive's RepoTag; a pull by tag HOST/REPO:TAG
	 * as podman names it (by digest: none)
	 */
	if (!name && so.name && rootasm_store_name_normalize(so.name, norm, sizeof(norm)) == 0)
		name = so.name;
	if (img->reader->progress)
		img->reader->progress(img, OPT(o, download, NULL), ud);
	/* the image config used (its layout's exec:), or the image refused before any layer is read */
	r = ra_oci_exec_section(img, &exec, &env_dropped, e);
	if (r < 0)
		goto out;
	if (s.fd < 0) {
		r = ra_store_open_shared(spath, &s, &lock, e);
		if (r < 0)
			goto out;
	}
	res->layers = calloc(img->nlayers, sizeof(*res->layers));
	if (!res->layers) {
		r = ra_oom(e, "import");
		goto out;
	}
	res->nlayers = img->nlayers;
	for (size_t i = 0; i < img->nlayers; i++) {
		struct ra_oci_layer *ly = &img->layers[i];
		struct rootasm_import_layer *rl = &res->layers[i];
		char names[2][RA_DIGEST_HEX + 32];
		struct below b = { .ctx = ctx, .res = res, .i = i, .fs = fs, .fd = -EBADF };
		struct ra_unpack_lower lower = { .open = below_open, .userdata = &b };
		bool chained = false;
		double t0 = now();

		snprintf(rl->digest, sizeof(rl->digest), "%s", ly->d.digest);
		snprintf(rl->diff_id, sizeof(rl->diff_id), "%s", ly->diff_id);
		snprintf(rl->media_type, sizeof(rl->media_type), "%s", ly->d.media_type);
		rl->size = ly->d.size;
		r = ra_chain_id_next(chain, ly->diff_id, i);
		if (r < 0) {
			r = ra_err(e, -r, -EBADF, "sha256", "the chain id", NULL);
			goto out;
		}
		snprintf(names[0], sizeof(names[0]), "%s.%s", ly->diff_hex, fs_ext(fs));
		snprintf(names[1], sizeof(names[1]), "%s.chain.%s", chain + 7, fs_ext(fs));
		/* by its diff-id (it needs nothing below), else by its chain id (it is made with what is below) */
		for (int k = 0; k < 2 && !rl->cached; k++) {
			r = cached(&s, names[k], e);
			if (r < 0)
				goto out;
			rl->cached = r > 0;
			chained = k == 1;
		}
		if (asprintf(&rl->image, "%s/layers/sha256/%s", s.path, names[rl->cached && chained]) < 0) {
			rl->image = NULL;
			r = ra_oom(e, "import");
			goto out;
		}
		if (progress)
			progress(ud, i, img->nlayers, rl, false);
		if (img->reader->prefetch && !rl->cached)	/* the next layers download while this one is converted */
			prefetch(img, &s, fs, i);
		if (!rl->cached) {
			r = convert(img, ly, &s, fs, names[0], names[1], chain, &lower, &chained, rl, e);
			close_fdp(&b.fd);
			if (r < 0)
				goto out;
			wrote = true;
			free(rl->image);
			if (asprintf(&rl->image, "%s/layers/sha256/%s", s.path, names[chained]) < 0) {
				rl->image = NULL;
				r = ra_oom(e, "import");
				goto out;
			}
		}
		rl->seconds = now() - t0;
		RA_TRACE(ctx, "layer %zu %s: %s (%.3f s)", i, ly->diff_id, rl->cached ? "cached" : "converted",
			 rl->seconds);
		if (progress)
			progress(ud, i, img->nlayers, rl, true);
	}
	/* one image, one record: the same config stored under another manifest is this image */
	snprintf(hex, sizeof(hex), "%s", img->manifest.hex);
	if (!ra_store_has_image(s.images, hex) && (r = ra_store_image_of_config(s.images, img->config.digest, hex)) < 0) {
		r = ra_err(e, -r, -EBADF, "read", s.path, "images/sha256");
		goto out;
	}
	r = write_image(img, hex, &s, fs, exec, env_dropped, res, e);
	if (r < 0)
		goto out;
	wrote = wrote || r > 0;
	if (wrote && (fsync(s.layers) < 0 || fsync(s.images) < 0)) {
		r = ra_err(e, errno, -EBADF, "fsync", s.path, NULL);
		goto out;
	}
	aliased = strcmp(hex, img->manifest.hex) != 0;
	snprintf(record, sizeof(record), "sha256:%s", hex);
	if (name || aliased) {
		/* the name, alone: no rmi or gc between (flock converts: others may go first, none is undone) */
		while (flock(lock, LOCK_EX) < 0)
			if (errno != EINTR) {
				r = ra_err(e, errno, -EBADF, "flock", s.path, "its lock file");
				goto out;
			}
		/* the record is still there (an rmi between would have taken it) */
		if (aliased && !ra_store_has_image(s.images, hex)) {
			r = ra_err_kind(e, ROOTASM_ERROR_RUNTIME, ENOENT, "import", ref,
					"%s, stored as %s, was removed while it was imported: import it again",
					img->manifest.digest, record);
			goto out;
		}
		r = ra_store_name(s.fd, s.path, name ? norm : NULL, aliased ? img->manifest.digest : NULL, record, e);
		if (r < 0)
			goto out;
	}
	if (aliased && !(res->stored_as = strdup(record))) {
		r = ra_oom(e, "import");
		goto out;
	}
	if (name) {
		res->name = strdup(norm);
		if (!res->name) {
			r = ra_oom(e, "import");
			goto out;
		}
	}
	snprintf(res->manifest, sizeof(res->manifest), "%s", img->manifest.digest);
	snprintf(res->config, sizeof(res->config), "%s", img->config.digest);
	res->store = TAKE_PTR(s.path);
	res->wrote = wrote;
	ra_store_settle(&s);
	r = 0;
out:
	if (r < 0) {
		ra_store_take_back(&s);
		rootasm_import_result_free(res);
	}
	ra_source_close(kind, &so);	/* the image, and what the source unpacked */
	ra_store_close(&s);
	json_decref(exec);
	json_decref(env_dropped);
	return r;
}

void ra_import_result_release(void *layers, size_t n, size_t stride, size_t image_off, char *layout, char *store)
{
	for (size_t i = 0; i < n; i++)
		free(*(char **)((char *)layers + i * stride + image_off));
	free(layers);
	free(layout);
	free(store);
}

void ra_import_result_free(struct rootasm_import_result *res)
{
	if (!res)
		return;
	ra_import_result_release(res->layers, res->nlayers, sizeof(*res->layers),
				 offsetof(struct rootasm_import_layer, image), res->layout, res->store);
	free(res->name);
	free(res->source);
	free(res->source_why);
	free(res->stored_as);
	memset(res, 0, sizeof(*res));
}
