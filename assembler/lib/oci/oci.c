// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Reading an OCI image layout (oci.h):
 *
 *   DIR/oci-layout           {"imageLayoutVersion": "1.0.0"}
 *   DIR/index.json           manifests[]: pick by the tag
 *                            (annotation org.opencontainers.image.ref.name),
 *                            or the one there is
 *   blobs/sha256/HEX         a nested index: pick linux/<this architecture>
 *                            a manifest: config + layers[] (bottom first)
 *                            the config: rootfs.diff_ids[], one per layer
 *
 * Each blob is read through one fd, at most its descriptor's size plus one
 * byte, hashed while read, and parsed only when size and sha256 match.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "oci.h"
#include "registry.h"
#include "open.h"
#include "util.h"

#define MT_INDEX	"application/vnd.oci.image.index.v1+json"
#define MT_MANIFEST	"application/vnd.oci.image.manifest.v1+json"
#define MT_CONFIG	"application/vnd.oci.image.config.v1+json"
/* Docker's image manifest v2 schema 2 (skopeo --format v2s2, crane, ctr export): the same shapes */
#define MT_D_LIST	"application/vnd.docker.distribution.manifest.list.v2+json"
#define MT_D_MANIFEST	"application/vnd.docker.distribution.manifest.v2+json"
#define MT_D_CONFIG	"application/vnd.docker.container.image.v1+json"
#define MT_D_SCHEMA1	"application/vnd.docker.distribution.manifest.v1"
#define REF_NAME	"org.opencontainers.image.ref.name"

/* A problem with the image itself (what the caller gave us): exit status 2. */
#define bad(e, op, path, ...) ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, op, path, __VA_ARGS__)

int ra_oci_parse_ref(const char *ref, char **dir, char **tag, struct rootasm_error *e)
{
	const char *d, *c;

	if (!ref || strncmp(ref, "oci:", 4))
		return bad(e, "import", ref, "not an OCI layout's reference: name it oci:DIR[:TAG]");
	d = ref + 4;
	c = strchr(d, ':');
	if (!*d || c == d)
		return bad(e, "import", ref, "no directory after 'oci:'");
	if (c && !c[1])
		return bad(e, "import", ref, "empty tag after ':'");
	*dir = c ? strndup(d, c - d) : strdup(d);
	*tag = c ? strdup(c + 1) : NULL;
	if (!*dir || (c && !*tag)) {
		free(*dir);
		free(*tag);
		return ra_oom(e, "import");
	}
	return 0;
}

int ra_oci_layer_comp(const char *mt)
{
	static const struct {
		const char *mt;
		enum ra_oci_comp comp;
	} known[] = {
		{ "application/vnd.oci.image.layer.v1.tar", RA_OCI_TAR },
		{ "application/vnd.oci.image.layer.v1.tar+gzip", RA_OCI_GZIP },
		{ "application/vnd.oci.image.layer.v1.tar+zstd", RA_OCI_ZSTD },
		{ "application/vnd.oci.image.layer.nondistributable.v1.tar", RA_OCI_TAR },
		{ "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip", RA_OCI_GZIP },
		{ "application/vnd.oci.image.layer.nondistributable.v1.tar+zstd", RA_OCI_ZSTD },
		{ "application/vnd.docker.image.rootfs.diff.tar", RA_OCI_TAR },
		{ "application/vnd.docker.image.rootfs.diff.tar.gzip", RA_OCI_GZIP },
		{ "application/vnd.docker.image.rootfs.diff.tar.zstd", RA_OCI_ZSTD },
		{ "application/vnd.docker.image.rootfs.foreign.diff.tar", RA_OCI_TAR },
		{ "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip", RA_OCI_GZIP },
		{ "application/vnd.docker.image.rootfs.foreign.diff.tar.zstd", RA_OCI_ZSTD },
	};

	for (size_t i = 0; mt && i < ARRAY_SIZE(known); i++)
		if (!strcmp(mt, known[i].mt))
			return known[i].comp;
	return -EOPNOTSUPP;
}

char *ra_oci_blob_name(const struct ra_oci_image *img, const char *hex)
{
	char *p = NULL;

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	if (asprintf(&p, img->reader->where, img->dir, hex) < 0)
		return NULL;
#pragma GCC diagnostic pop
	return p;
}

int ra_oci_blob_open(const struct ra_oci_image *img, const struct ra_oci_desc *d, struct rootasm_error *e)
{
	return img->reader->open(img, d, e);
}

/* A layout's blob: blobs/sha256/HEX beneath the layout, a regular file of the descriptor's size. */
static int layout_blob_open(const struct ra_oci_image *img, const struct ra_oci_desc *d, struct rootasm_error *e)
{
	struct open_how how = {
		.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	_cleanup_free_ char *p = ra_oci_blob_name(img, d->hex);
	_cleanup_close_ int fd = -EBADF;
	struct stat st;
	int rfd;

	if (!p)
		return ra_oom(e, "open blob");
	fd = sys_openat2(img->blobs, d->hex, &how);
	if (fd < 0)
		return ra_err_kind(e, errno == ENOENT || errno == ELOOP ? ROOTASM_ERROR_USAGE : ROOTASM_ERROR_RUNTIME,
				   errno, "open blob", p, errno == ELOOP ? "is a symbolic link; blobs must be files" :
				   NULL);
	if (fstat(fd, &st) < 0)
		return ra_err(e, errno, -EBADF, "fstat blob", p, NULL);
	if (!S_ISREG(st.st_mode))
		return bad(e, "open blob", p, "is %s, not a regular file", S_ISLNK(st.st_mode) ? "a symbolic link" :
			   "something else");
	if ((uint64_t)st.st_size != d->size)
		return bad(e, "verify blob", p, "is %lld bytes, its descriptor says %llu", (long long)st.st_size,
			   (unsigned long long)d->size);
	rfd = ra_reopen(fd, O_RDONLY);
	if (rfd < 0)
		return ra_err(e, errno, -EBADF, "open blob", p, NULL);
	return rfd;
}

/* A layout's blobs: files beneath it, hashed when read (load_blob(), the layer's reader) */
static const struct ra_oci_reader layout_reader = {
	.where = "%s/blobs/sha256/%s",
	.open = layout_blob_open,
};

static void feed_sha256(void *h, const void *p, size_t n)
{
	ra_sha256_update(h, p, n);
}

/* Parse @buf strictly; an error names @what and jansson's line:column. */
static int parse_json(const char *buf, size_t len, const char *what, json_t **ret, struct rootasm_error *e)
{
	json_error_t je;
	json_t *j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);

	if (!j) {
		if (json_error_code(&je) == json_error_out_of_memory)
			return ra_oom(e, "parse JSON");
		return bad(e, "parse JSON", what, "line %d column %d: %s", je.line, je.column, je.text);
	}
	if (!json_is_object(j)) {
		json_decref(j);
		return bad(e, "parse JSON", what, "is not a JSON object");
	}
	*ret = j;
	return 0;
}

/* A blob named by @d: read (capped), verified, parsed. */
static int load_blob(const struct ra_oci_image *img, const struct ra_oci_desc *d, size_t max, json_t **ret,
		     char **raw, size_t *rawlen, struct rootasm_error *e)
{
	_cleanup_free_ char *p = ra_oci_blob_name(img, d->hex), *buf = NULL;
	_cleanup_close_ int fd = -EBADF;
	char got[RA_DIGEST_MAX];
	struct ra_sha256 h;
	size_t len;
	int r;

	if (!p)
		return ra_oom(e, "read blob");
	if (d->size > max)
		return bad(e, "read blob", p, "is %llu bytes by its descriptor; rootasm reads at most %zu for a %s",
			   (unsigned long long)d->size, max, d->media_type);
	if (img->reader->get) {
		r = img->reader->get(img, d, max, &buf, &len, e);	/* size and sha256 checked */
		if (r == 0)
			r = parse_json(buf, len, p, ret, e);
		if (r == 0 && raw) {
			*raw = TAKE_PTR(buf);
			*rawlen = len;
		}
		return r;
	}
	fd = ra_oci_blob_open(img, d, e);
	if (fd < 0)
		return fd;
	r = ra_sha256_init(&h);
	if (r == -ELIBACC)
		return ra_err(e, ELIBACC, -EBADF, "sha256", "libcrypto.so.3", "import needs the libssl3 package");
	if (r < 0)
		return ra_oom(e, "sha256");
	r = ra_read_all(fd, d->size, feed_sha256, &h, &buf, &len);
	if (r < 0) {
		ra_sha256_free(&h);
		if (r == -ENOMEM)
			return ra_oom(e, "read blob");
		if (r == -EFBIG)
			return bad(e, "verify blob", p, "is longer than its descriptor's %llu bytes",
				   (unsigned long long)d->size);
		return ra_err(e, r, -EBADF, "read blob", p, NULL);
	}
	if (ra_sha256_final(&h, got) < 0)
		return ra_err(e, EIO, -EBADF, "sha256", p, NULL);
	if (len != d->size)
		return bad(e, "verify blob", p, "is %zu bytes, its descriptor says %llu", len,
			   (unsigned long long)d->size);
	if (strcmp(got, d->digest))
		return bad(e, "verify blob", p, "its sha256 is %s, its descriptor says %s", got, d->digest);
	r = parse_json(buf, len, p, ret, e);
	if (r == 0 && raw) {
		*raw = TAKE_PTR(buf);
		*rawlen = len;
	}
	return r;
}

static void desc_free(struct ra_oci_desc *d)
{
	free(d->media_type);
	d->media_type = NULL;
}

/* A descriptor object @j (in @where): mediaType, digest, size. */
static int parse_desc(json_t *j, const char *where, struct ra_oci_desc *d, struct rootasm_error *e)
{
	const char *mt = NULL, *dg = NULL;
	json_int_t size = -1;
	json_error_t je;
	int r;

	if (json_unpack_ex(j, &je, 0, "{s:s, s:s, s:I}", "mediaType", &mt, "digest", &dg, "size", &size) < 0)
		return bad(e, "read descriptor", where, "%s", je.text);
	if (size < 0)
		return bad(e, "read descriptor", where, "negative size %lld", (long long)size);
	r = ra_digest_parse(dg, d->hex);
	if (r == -EOPNOTSUPP)
		return bad(e, "read descriptor", where, "digest %s: rootasm verifies sha256 digests only", dg);
	if (r < 0)
		return bad(e, "read descriptor", where, "malformed digest '%s'", dg);
	snprintf(d->digest, sizeof(d->digest), "%s", dg);
	d->size = size;
	d->media_type = strdup(mt);
	if (!d->media_type)
		return ra_oom(e, "read descriptor");
	return 0;
}

static bool is_index(const char *mt)
{
	return !strcmp(mt, MT_INDEX) || !strcmp(mt, MT_D_LIST);
}

static bool is_manifest(const char *mt)
{
	return !strcmp(mt, MT_MANIFEST) || !strcmp(mt, MT_D_MANIFEST);
}

/*
 * schemaVersion 2, and the document's own mediaType that of the descriptor
 * that named it (@want_mt): optional in OCI's documents, required in Docker's.
 */
static int check_schema(json_t *doc, const char *where, const char *want_mt, struct rootasm_error *e)
{
	json_t *v = json_object_get(doc, "schemaVersion"), *mt = json_object_get(doc, "mediaType");

	if (!json_is_integer(v) || json_integer_value(v) != 2)
		return bad(e, "read image", where, "schemaVersion is not 2");
	if (!mt && (!strcmp(want_mt, MT_D_LIST) || !strcmp(want_mt, MT_D_MANIFEST)))
		return bad(e, "read image", where, "has no mediaType; its descriptor says %s", want_mt);
	if (mt && (!json_is_string(mt) || strcmp(json_string_value(mt), want_mt)))
		return bad(e, "read image", where, "mediaType is %s, expected %s",
			   json_is_string(mt) ? json_string_value(mt) : "not a string", want_mt);
	return 0;
}

/* The tags of an index, comma-separated, for a message. */
static void list_tags(json_t *manifests, char *buf, size_t size)
{
	size_t i, used = 0;
	json_t *m;

	buf[0] = '\0';
	json_array_foreach(manifests, i, m) {
		const char *t = NULL;

		if (json_unpack(m, "{s:{s:s}}", "annotations", REF_NAME, &t) == 0 && used + strlen(t) + 3 < size)
			used += snprintf(buf + used, size - used, "%s%s", used ? ", " : "", t);
	}
	if (!used)
		snprintf(buf, size, "none");
}

/* From the index @idx (at @where), the descriptor to follow: by @tag at the top, by platform below. */
static int pick(struct ra_oci_image *img, json_t *idx, const char *where, const char *mt, int depth,
		struct ra_oci_desc *ret, struct rootasm_error *e)
{
	json_t *manifests = json_object_get(idx, "manifests"), *m, *chosen = NULL;
	char tags[512];
	size_t i, n = 0;
	int r;

	r = check_schema(idx, where, mt, e);
	if (r < 0)
		return r;
	if (!json_is_array(manifests))
		return bad(e, "read image", where, "has no manifests array");
	json_array_foreach(manifests, i, m) {
		const char *t = NULL, *os = NULL, *arch = NULL;

		if (!json_is_object(m))
			return bad(e, "read image", where, "manifests[%zu] is not an object", i);
		if (depth == 0 && img->tag) {
			if (json_unpack(m, "{s:{s:s}}", "annotations", REF_NAME, &t) || strcmp(t, img->tag))
				continue;
		} else if (depth > 0 && json_array_size(manifests) > 1) {
			if (json_unpack(m, "{s:{s:s, s:s}}", "platform", "os", &os, "architecture", &arch) ||
			    strcmp(os, "linux") || strcmp(arch, RA_OCI_HOST_ARCH))
				continue;
		}
		if (n++ == 0)
			chosen = m;
	}
	list_tags(manifests, tags, sizeof(tags));
	if (n == 0 && depth == 0 && img->tag)
		return bad(e, "read image", where, "no manifest is tagged '%s' (tags: %s)", img->tag, tags);
	if (n == 0)
		return bad(e, "read image", where, "lists no manifest%s", depth ? " for linux/" RA_OCI_HOST_ARCH : "");
	if (n > 1 && depth == 0)
		return bad(e, "read image", where, "lists %zu manifests%s; name one: oci:%s:TAG (tags: %s)", n,
			   img->tag ? " with that tag" : "", img->dir, tags);
	if (n > 1)
		return bad(e, "read image", where, "lists %zu manifests for linux/" RA_OCI_HOST_ARCH, n);
	return parse_desc(chosen, where, ret, e);
}

static int read_manifest(struct ra_oci_image *img, json_t *man, const char *where, struct rootasm_error *e)
{
	json_t *layers = json_object_get(man, "layers"), *cfg = json_object_get(man, "config"), *l;
	size_t i;
	int r;

	r = check_schema(man, where, img->manifest.media_type, e);
	if (r < 0)
		return r;
	if (!json_is_object(cfg))
		return bad(e, "read image", where, "has no config descriptor");
	r = parse_desc(cfg, where, &img->config, e);
	if (r < 0)
		return r;
	if (strcmp(img->config.media_type, MT_CONFIG) && strcmp(img->config.media_type, MT_D_CONFIG))
		return bad(e, "read image", where, "config mediaType is %s, expected " MT_CONFIG " (or Docker's "
			   MT_D_CONFIG ")", img->config.media_type);
	if (!json_is_array(layers) || json_array_size(layers) == 0)
		return bad(e, "read image", where, "has no layers");
	if (json_array_size(layers) > RA_OCI_MAX_LAYERS)
		return bad(e, "read image", where, "has %zu layers; an overlay takes at most %d with an upper",
			   json_array_size(layers), RA_OCI_MAX_LAYERS);
	img->layers = calloc(json_array_size(layers), sizeof(*img->layers));
	if (!img->layers)
		return ra_oom(e, "read image");
	json_array_foreach(layers, i, l) {
		struct ra_oci_layer *ly = &img->layers[i];

		img->nlayers = i + 1;
		r = parse_desc(l, where, &ly->d, e);
		if (r < 0)
			return r;
		r = ra_oci_layer_comp(ly->d.media_type);
		if (r < 0)
			return bad(e, "read image", where, "layers[%zu] has media type %s; rootasm takes tar, "
				   "tar+gzip and tar+zstd layers (OCI's and Docker's)", i, ly->d.media_type);
		ly->comp = r;
	}
	return 0;
}

static int read_config(struct ra_oci_image *img, json_t *cfg, const char *where, struct rootasm_error *e)
{
	json_t *ids = NULL, *id;
	const char *type = NULL;
	json_error_t je;
	size_t i;

	if (json_unpack_ex(cfg, &je, 0, "{s:{s:s, s:o}}", "rootfs", "type", &type, "diff_ids", &ids) < 0)
		return bad(e, "read image config", where, "rootfs: %s", je.text);
	if (strcmp(type, "layers"))
		return bad(e, "read image config", where, "rootfs.type is '%s', not 'layers'", type);
	if (!json_is_array(ids) || json_array_size(ids) != img->nlayers)
		return bad(e, "read image config", where, "has %zu diff_ids for %zu layers",
			   json_is_array(ids) ? json_array_size(ids) : 0, img->nlayers);
	json_array_foreach(ids, i, id) {
		struct ra_oci_layer *ly = &img->layers[i];
		int r = ra_digest_parse(json_string_value(id), ly->diff_hex);

		if (r == -EOPNOTSUPP)
			return bad(e, "read image config", where, "diff_ids[%zu] is not a sha256 digest; rootasm "
				   "verifies sha256 digests only", i);
		if (r < 0)
			return bad(e, "read image config", where, "diff_ids[%zu] is malformed", i);
		snprintf(ly->diff_id, sizeof(ly->diff_id), "%s", json_string_value(id));
	}
	/* what a container of the image runs: kept for its layout's exec: section (import.c) */
	json_decref(img->config_doc);
	img->config_doc = json_incref(cfg);
	img->run = json_incref(json_object_get(cfg, "config"));
	if (img->run && !json_is_object(img->run) && !json_is_null(img->run))
		return bad(e, "read image config", where, "config is not an object");
	return 0;
}

/* A descriptor's media type: an index or a manifest (OCI's or Docker's schema 2). */
static int check_mt(const struct ra_oci_desc *d, const char *where, struct rootasm_error *e)
{
	if (!strncmp(d->media_type, MT_D_SCHEMA1, strlen(MT_D_SCHEMA1)))
		return bad(e, "read image", where, "media type %s: Docker's schema 1 is not read (skopeo copy "
			   "--format oci makes an OCI image of it)", d->media_type);
	if (!is_index(d->media_type) && !is_manifest(d->media_type))
		return bad(e, "read image", where, "media type %s is neither an index nor an image manifest "
			   "(OCI's or Docker's schema 2)", d->media_type);
	return 0;
}

/*
 * From @doc (its own JSON, taken; at *@where) down to the manifest, then the
 * manifest and the config. At @depth 0 @doc is index.json (the tag picks);
 * below it is the document @d names (the platform picks, if it is an index).
 */
static int walk(struct ra_oci_image *img, json_t *doc, struct ra_oci_desc *d, int depth, char **where,
		struct rootasm_error *e)
{
	json_t *next = NULL;
	int r;

	for (;; depth++) {
		if (depth > 0 && is_manifest(d->media_type))
			break;
		if (depth > RA_OCI_MAX_NESTING) {
			r = bad(e, "read image", *where, "indexes nested deeper than %d", RA_OCI_MAX_NESTING);
			goto out;
		}
		_cleanup_free_ char *mt = depth ? TAKE_PTR(d->media_type) : NULL;

		desc_free(d);
		r = pick(img, doc, *where, mt ? mt : MT_INDEX, depth, d, e);
		if (r < 0)
			goto out;
		free(*where);
		*where = ra_oci_blob_name(img, d->hex);
		if (!*where) {
			r = ra_oom(e, "read image");
			goto out;
		}
		r = check_mt(d, *where, e);
		if (r < 0)
			goto out;
		free(img->manifest_raw);
		img->manifest_raw = NULL;
		r = load_blob(img, d, is_index(d->media_type) ? RA_OCI_INDEX_MAX : RA_OCI_MANIFEST_MAX, &next,
			      &img->manifest_raw, &img->manifest_raw_len, e);
		if (r < 0)
			goto out;
		json_decref(doc);
		doc = TAKE_PTR(next);
	}
	img->manifest = *d;
	*d = (struct ra_oci_desc){ 0 };
	r = read_manifest(img, doc, *where, e);
	if (r < 0)
		goto out;
	json_decref(doc);
	doc = NULL;
	free(*where);
	*where = ra_oci_blob_name(img, img->config.hex);
	if (!*where) {
		r = ra_oom(e, "read image");
		goto out;
	}
	r = load_blob(img, &img->config, RA_OCI_CONFIG_MAX, &doc, NULL, NULL, e);
	if (r < 0)
		goto out;
	r = read_config(img, doc, *where, e);
out:
	json_decref(doc);
	return r;
}

/* The end of an open with result @r: what is left freed, and the image @img into *@ret or freed. */
static int finish(struct ra_oci_image *img, json_t *doc, struct ra_oci_desc *d, int r, struct ra_oci_image **ret)
{
	json_decref(doc);
	desc_free(d);
	if (r < 0) {
		ra_oci_free(img);
		return r;
	}
	*ret = img;
	return 0;
}

int ra_oci_open(const char *dir, const char *tag, struct ra_oci_image **ret, struct rootasm_error *e)
{
	struct open_how dhow = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_NO_MAGICLINKS };
	struct open_how bhow = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	struct open_how fhow = {
		.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	struct ra_oci_image *img;
	_cleanup_free_ char *where = NULL, *buf = NULL;
	json_t *doc = NULL;
	struct ra_oci_desc d = { 0 };
	const char *ver = NULL;
	size_t len;
	int r;

	img = calloc(1, sizeof(*img));
	if (!img)
		return ra_oom(e, "read image");
	img->reader = &layout_reader;
	img->dirfd = img->blobs = -EBADF;
	img->dir = strdup(dir);
	img->tag = tag ? strdup(tag) : NULL;
	if (!img->dir || (tag && !img->tag)) {
		r = ra_oom(e, "read image");
		goto out;
	}
	img->dirfd = sys_openat2(AT_FDCWD, dir, &dhow);
	if (img->dirfd < 0) {
		r = ra_err_kind(e, ROOTASM_ERROR_USAGE, errno, "open image layout", dir, NULL);
		goto out;
	}
	/* oci-layout, then index.json: small regular files beneath the directory */
	for (int i = 0; i < 2; i++) {
		const char *name = i ? "index.json" : "oci-layout";
		_cleanup_close_ int pfd = -EBADF, fd = -EBADF;
		struct stat st;

		free(where);
		if (asprintf(&where, "%s/%s", dir, name) < 0) {
			where = NULL;
			r = ra_oom(e, "read image");
			goto out;
		}
		pfd = sys_openat2(img->dirfd, name, &fhow);
		if (pfd < 0 || fstat(pfd, &st) < 0) {
			r = ra_err_kind(e, ROOTASM_ERROR_USAGE, errno, "open image layout", where,
					errno == ENOENT ? "not an OCI image layout" : NULL);
			goto out;
		}
		if (!S_ISREG(st.st_mode)) {
			r = bad(e, "open image layout", where, "is not a regular file");
			goto out;
		}
		fd = ra_reopen(pfd, O_RDONLY);
		r = fd < 0 ? -errno : ra_read_all(fd, RA_OCI_INDEX_MAX, NULL, NULL, &buf, &len);
		if (r == -EFBIG)
			r = bad(e, "read image layout", where, "larger than %u bytes", RA_OCI_INDEX_MAX);
		else if (r == -ENOMEM)
			r = ra_oom(e, "read image layout");
		else if (r < 0)
			r = ra_err(e, r, -EBADF, "read image layout", where, NULL);
		if (r < 0)
			goto out;
		json_decref(doc);
		doc = NULL;
		r = parse_json(buf, len, where, &doc, e);
		free(TAKE_PTR(buf));
		if (r < 0)
			goto out;
		if (i == 0 && (json_unpack(doc, "{s:s}", "imageLayoutVersion", &ver) || strcmp(ver, "1.0.0"))) {
			r = bad(e, "read image layout", where, "imageLayoutVersion is not \"1.0.0\"");
			goto out;
		}
	}
	/*
	 * blobs/ and blobs/sha256/ are the layout's own directories: a symbolic
	 * link (to a shared blob store, say) is refused, not followed, so that
	 * every file read is beneath DIR as named.
	 */
	for (int i = 0; i < 2; i++) {
		const char *name = i ? "blobs/sha256" : "blobs";
		int fd = sys_openat2(img->dirfd, name, &bhow);

		if (fd < 0 && errno == ELOOP) {
			r = bad(e, "open image layout", dir, "%s is a symbolic link; rootasm reads blobs beneath the "
				"layout only (copy the layout, or name the directory the link points to)", name);
			goto out;
		}
		if (fd < 0) {
			r = ra_err_kind(e, ROOTASM_ERROR_USAGE, errno, "open image layout", dir, "%s: %s", name,
					strerror(errno));
			goto out;
		}
		close_fdp(&img->blobs);
		img->blobs = fd;
	}
	r = walk(img, TAKE_PTR(doc), &d, 0, &where, e);
out:
	return finish(img, doc, &d, r, ret);
}

int ra_oci_open_remote(struct ra_oci_remote *rem, const char *name, const char *buf, size_t len, const char *mt,
		       const char *digest, struct ra_oci_image **ret, struct rootasm_error *e)
{
	struct ra_oci_image *img = calloc(1, sizeof(*img));
	struct ra_oci_desc d = { .size = len };
	_cleanup_free_ char *where = NULL;
	json_t *doc = NULL, *v;
	int r;

	if (!img) {
		ra_registry_free(rem);
		return ra_oom(e, "read image");
	}
	img->dirfd = img->blobs = -EBADF;
	img->reader = &ra_registry_reader;
	img->remote = rem;
	img->dir = strdup(name);
	snprintf(d.digest, sizeof(d.digest), "%s", digest);
	if (!img->dir || ra_digest_parse(digest, d.hex) < 0 || !(where = ra_oci_blob_name(img, d.hex))) {
		r = ra_oom(e, "read image");
		goto out;
	}
	r = parse_json(buf, len, where, &doc, e);
	if (r < 0)
		goto out;
	/* its bytes, if it is the manifest itself (walk() replaces them with each document it reads) */
	img->manifest_raw = malloc(len + 1);
	if (!img->manifest_raw) {
		r = ra_oom(e, "read image");
		goto out;
	}
	memcpy(img->manifest_raw, buf, len);
	img->manifest_raw[len] = '\0';
	img->manifest_raw_len = len;
	/* the registry's Content-Type, else the document's own mediaType, else its shape */
	v = json_object_get(doc, "mediaType");
	if (!mt || !*mt || !strcmp(mt, "application/json"))
		mt = json_is_string(v) ? json_string_value(v) : json_object_get(doc, "manifests") ? MT_INDEX : MT_MANIFEST;
	d.media_type = strdup(mt);
	if (!d.media_type) {
		r = ra_oom(e, "read image");
		goto out;
	}
	r = check_mt(&d, where, e);
	if (r < 0)
		goto out;
	r = walk(img, TAKE_PTR(doc), &d, 1, &where, e);
out:
	return finish(img, doc, &d, r, ret);
}

void ra_oci_free(struct ra_oci_image *img)
{
	if (!img)
		return;
	for (size_t i = 0; i < img->nlayers; i++)
		desc_free(&img->layers[i].d);
	free(img->layers);
	desc_free(&img->manifest);
	desc_free(&img->config);
	json_decref(img->run);
	json_decref(img->config_doc);
	free(img->manifest_raw);
	close_fdp(&img->dirfd);
	close_fdp(&img->blobs);
	ra_registry_free(img->remote);
	free(img->dir);
	free(img->tag);
	free(img);
}

int ra_oci_open_registry(const char *ref, const struct ra_registry_how *how, struct ra_oci_image **ret,
			 struct rootasm_error *e)
{
	struct ra_registry_manifest m = { 0 };
	struct ra_oci_remote *rem;
	int r = ra_registry_open(ref, how, &rem, &m, e);

	if (r < 0)
		return r;
	/* the image owns rem now, even on failure */
	r = ra_oci_open_remote(rem, m.name, m.buf, m.len, m.mt, m.digest, ret, e);
	ra_registry_manifest_free(&m);
	return r;
}
