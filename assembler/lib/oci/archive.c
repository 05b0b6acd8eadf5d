// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * docker-archive:FILE[:TAG]: what `docker save` and `podman save` write
 * (manifest.json: [{"Config": NAME, "RepoTags": [...], "Layers": [NAME...]}],
 * the config and each layer a file of the tar; older Docker links a repeated
 * layer to its first copy with a symlink; Docker 25 and later put the files
 * under blobs/sha256/ with an OCI index beside them) made into an OCI image
 * layout, which the OCI import path then reads and verifies as any other:
 *
 *   the tar (plain, gzip, zstd; libarchive, ra_tar_walk())
 *     -> each file streamed into an O_TMPFILE of STORE/.archive-XXXXXX/blobs/sha256,
 *        its sha256 taken as it is written, linked by its digest
 *     -> manifest.json's entry (TAG among its RepoTags, or the only one)
 *     -> an OCI manifest naming the config and the layers by digest (a layer's
 *        compression from its first bytes), index.json, oci-layout
 *
 * The directory is the import's own (mkdtemp under the store, so it is on the
 * same file system and its owner's), removed when the import ends; a killed
 * import leaves it for `rootasm store gc` (ra_docker_archive_remove()). The
 * synthesized manifest is the same for the same archive: a second import of it
 * writes nothing.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>

#include <jansson.h>

#include "digest.h"
#include "oci.h"
#include "unpack.h"
#include "util.h"

#define ARCHIVE_MANIFEST_MAX	(4u << 20)
#define ARCHIVE_MAX_ENTRIES	16384
#define CHUNK			(1u << 20)
/*
 * What an archive may write into the store: 64 times its own size, at least
 * 64 MiB. A compressed archive of zeros (a few hundred KiB for GiBs) must not
 * fill the store's file system before anything is checked; docker save's
 * layers are tars, which no real archive compresses 64 times (an archive
 * small enough for tar padding to dominate gets the floor).
 */
#define ARCHIVE_EXPANSION	64
#define ARCHIVE_WRITE_FLOOR	(64ull << 20)

struct walk {
	int blobs;			/* blobs/sha256 */
	const char *what;		/* the archive, for messages */
	json_t *files;			/* name -> {"hex", "size"} */
	json_t *links;			/* name -> target name */
	char *manifest;			/* manifest.json */
	size_t manifest_len;
	char *buf;
	uint64_t written, cap;		/* bytes written into blobs/, and the most it may */
	struct rootasm_error *e;
};

/* "./a/b" -> "a/b" */
static const char *clean_name(const char *n)
{
	while (n[0] == '.' && n[1] == '/')
		n += 2;
	while (*n == '/')
		n++;
	return n;
}

static int entry(struct ra_tar *t, const char *name, char type, const char *target, uint64_t size, void *ud)
{
	struct walk *w = ud;
	_cleanup_close_ int fd = -EBADF;
	char digest[RA_DIGEST_MAX];
	struct ra_sha256 h;
	uint64_t done = 0;
	bool keep;
	int r;

	name = clean_name(name);
	if (type == 'l' && target) {
		char resolved[PATH_MAX];
		const char *slash = strrchr(name, '/');

		/* relative to the link's directory; at most one level of "../" as Docker writes it */
		if (target[0] == '/')
			snprintf(resolved, sizeof(resolved), "%s", clean_name(target));
		else if (!strncmp(target, "../", 3) && slash)
			snprintf(resolved, sizeof(resolved), "%s", clean_name(target + 3));
		else if (slash)
			snprintf(resolved, sizeof(resolved), "%.*s/%s", (int)(slash - name), name, target);
		else
			snprintf(resolved, sizeof(resolved), "%s", target);
		return json_object_set_new(w->links, name, json_string(resolved)) < 0 ? ra_oom(w->e, "read archive") : 0;
	}
	if (type != 'f')
		return 0;
	keep = !strcmp(name, "manifest.json");
	if (keep && size > ARCHIVE_MANIFEST_MAX)
		return ra_err_kind(w->e, ROOTASM_ERROR_USAGE, EFBIG, "read archive", w->what,
				   "manifest.json is larger than %u bytes", ARCHIVE_MANIFEST_MAX);
	if (keep && w->manifest)
		return ra_err_kind(w->e, ROOTASM_ERROR_USAGE, EINVAL, "read archive", w->what,
				   "manifest.json twice: not what docker save or podman save write");
	if (keep) {
		w->manifest = malloc(size + 1);
		if (!w->manifest)
			return ra_oom(w->e, "read archive");
	}
	fd = openat(w->blobs, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
	if (fd < 0)
		return ra_err(w->e, errno, -EBADF, "create", w->what, "O_TMPFILE for %s", name);
	r = ra_sha256_init(&h);
	if (r < 0)
		return ra_err(w->e, -r, -EBADF, "sha256", name, NULL);
	for (;;) {
		ssize_t n = ra_tar_read(t, w->buf, CHUNK);

		if (n < 0) {
			ra_sha256_free(&h);
			return ra_err_kind(w->e, ROOTASM_ERROR_USAGE, (int)-n, "read archive", w->what, "%s: %s", name,
					   strerror((int)-n));
		}
		if (n == 0)
			break;
		w->written += n;
		if (w->written > w->cap) {
			ra_sha256_free(&h);
			return ra_err_kind(w->e, ROOTASM_ERROR_USAGE, EFBIG, "read archive", w->what,
					   "%s: the archive unpacks to more than %llu bytes (%d times its size, at least "
					   "%llu MiB): not what docker save or podman save write",
					   name, (unsigned long long)w->cap, ARCHIVE_EXPANSION, ARCHIVE_WRITE_FLOOR >> 20);
		}
		ra_sha256_update(&h, w->buf, n);
		if (keep && done + n <= size)
			memcpy(w->manifest + done, w->buf, n);
		for (ssize_t off = 0; off < n;) {
			ssize_t m = write(fd, w->buf + off, n - off);

			if (m < 0 && errno == EINTR)
				continue;
			if (m < 0) {
				ra_sha256_free(&h);
				return ra_err(w->e, errno, -EBADF, "write", w->what, "%s", name);
			}
			off += m;
		}
		done += n;
	}
	r = ra_sha256_final(&h, digest);
	if (r < 0)
		return ra_err(w->e, -r, -EBADF, "sha256", name, NULL);
	if (keep)
		w->manifest_len = done;
	if (linkat(fd, "", w->blobs, digest + 7, AT_EMPTY_PATH) < 0 && errno != EEXIST)
		return ra_err(w->e, errno, -EBADF, "link", w->what, "%s", name);
	if (json_object_set_new(w->files, name, json_pack("{s:s, s:I}", "hex", digest + 7, "size", (json_int_t)done)) < 0)
		return ra_oom(w->e, "read archive");
	return 0;
}

/* The file @name of the archive (through its symlinks), or NULL. */
static json_t *file_of(struct walk *w, const char *name)
{
	name = clean_name(name);
	for (int hops = 0; hops < 8; hops++) {
		json_t *f = json_object_get(w->files, name), *l;

		if (f)
			return f;
		l = json_object_get(w->links, name);
		if (!l)
			return NULL;
		name = json_string_value(l);
	}
	return NULL;
}

/*
 * Whether the NAME @tag a user gave picks the RepoTag @rt: the same name
 * qualified, or (a name without a registry) localhost's of that name, as
 * podman finds a short name in its storage.
 */
static bool same_name(const char *tag, const char *rt)
{
	char qa[600], qb[600], n[512];

	if (!strcmp(tag, rt))
		return true;
	if (ra_name_qualified(tag, qa, sizeof(qa)) < 0 || ra_name_qualified(rt, qb, sizeof(qb)) < 0)
		return false;
	if (!strcmp(qa, qb))
		return true;
	return rootasm_store_name_normalize(tag, n, sizeof(n)) == 0 && !ra_ref_has_host(n) && !strncmp(qb, "localhost/", 10) &&
	       !strcmp(qb + 10, n);
}

/* The media type of the layer blob @hex: its compression read from its first bytes. */
static const char *layer_type(struct walk *w, const char *hex)
{
	_cleanup_close_ int fd = openat(w->blobs, hex, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	unsigned char m[4] = { 0 };

	if (fd >= 0 && read(fd, m, 4) == 4) {
		if (m[0] == 0x1f && m[1] == 0x8b)
			return "application/vnd.oci.image.layer.v1.tar+gzip";
		if (m[0] == 0x28 && m[1] == 0xb5 && m[2] == 0x2f && m[3] == 0xfd)
			return "application/vnd.oci.image.layer.v1.tar+zstd";
	}
	return "application/vnd.oci.image.layer.v1.tar";
}

/* Write @o as the blob of its sha256 (a descriptor of @mt in *ret); for index.json: as @name. */
static int put_json(struct walk *w, int dir, json_t *o, const char *name, const char *mt, json_t **ret)
{
	_cleanup_free_ char *s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	_cleanup_close_ int fd = -EBADF;
	char digest[RA_DIGEST_MAX];
	size_t n;
	int r;

	if (!s)
		return ra_oom(w->e, "read archive");
	n = strlen(s);
	if (name)
		fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	else
		fd = openat(w->blobs, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, s, n) != (ssize_t)n)
		return ra_err(w->e, errno ? errno : EIO, -EBADF, "write", w->what, "%s", name ? name : "its manifest");
	if (name)
		return 0;
	r = ra_sha256_buf(s, n, digest);
	if (r < 0)
		return ra_err(w->e, -r, -EBADF, "sha256", w->what, NULL);
	if (linkat(fd, "", w->blobs, digest + 7, AT_EMPTY_PATH) < 0 && errno != EEXIST)
		return ra_err(w->e, errno, -EBADF, "link", w->what, "its manifest");
	*ret = json_pack("{s:s, s:s, s:I}", "mediaType", mt, "digest", digest, "size", (json_int_t)n);
	return *ret ? 0 : ra_oom(w->e, "read archive");
}

void ra_docker_archive_remove(int parent_fd, const char *name)
{
	_cleanup_close_ int d = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_close_ int b = d >= 0 ? openat(d, "blobs/sha256", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -EBADF;
	struct dirent *de;
	DIR *dir;

	if (b >= 0 && (dir = fdopendir(b))) {
		b = -EBADF;	/* the DIR's */
		while ((de = readdir(dir)))
			if (de->d_name[0] != '.')
				unlinkat(dirfd(dir), de->d_name, 0);
		closedir(dir);
	}
	if (d >= 0) {
		unlinkat(d, "blobs/sha256", AT_REMOVEDIR);
		unlinkat(d, "blobs", AT_REMOVEDIR);
		unlinkat(d, "index.json", 0);
		unlinkat(d, "oci-layout", 0);
	}
	unlinkat(parent_fd, name, AT_REMOVEDIR);
}

int ra_docker_archive_unpack(const char *ref, int parent_fd, const char *parent, char **ret_dir, char **ret_name,
			     struct rootasm_error *e)
{
	_cleanup_free_ char *file = NULL, *tag = NULL, *dir = NULL;
	_cleanup_close_ int fd = -EBADF, dfd = -EBADF;
	struct walk w = { .blobs = -EBADF, .e = e };
	struct stat st;
	json_t *doc = NULL, *pick = NULL, *v, *layers = NULL, *man = NULL, *mdesc = NULL, *idx = NULL, *cfg;
	const char *matched = NULL;	/* the RepoTag TAG matched */
	const char *p = ref + strlen("docker-archive:"), *c = strchr(p, ':'), *cname;
	json_error_t je;
	size_t i;
	int r;

	*ret_dir = *ret_name = NULL;
	if (!*p || c == p)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "import", ref, "no file after 'docker-archive:'");
	if (c && !c[1])
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "import", ref, "empty tag after ':'");
	file = c ? strndup(p, c - p) : strdup(p);
	tag = c ? strdup(c + 1) : NULL;
	if (!file || (c && !tag))
		return ra_oom(e, "import");
	w.what = file;
	fd = open(file, O_RDONLY | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return ra_err_kind(e, errno == ENOENT || errno == EISDIR ? ROOTASM_ERROR_USAGE : ROOTASM_ERROR_RUNTIME,
				   errno, "import", file, "%s", strerror(errno));
	if (fstat(fd, &st) < 0)
		return ra_err(e, errno, -EBADF, "stat", file, NULL);
	/* a pipe's size is unknown: docker save | rootasm import docker-archive:/dev/stdin is not capped */
	w.cap = !S_ISREG(st.st_mode) || (uint64_t)st.st_size > UINT64_MAX / ARCHIVE_EXPANSION ? UINT64_MAX :
		(uint64_t)st.st_size * ARCHIVE_EXPANSION;
	if (w.cap < ARCHIVE_WRITE_FLOOR)
		w.cap = ARCHIVE_WRITE_FLOOR;
	if (asprintf(&dir, "%s/" RA_ARCHIVE_PREFIX "XXXXXX", parent) < 0 || !mkdtemp(dir)) {
		r = dir ? ra_err(e, errno, -EBADF, "mkdtemp", dir, NULL) : ra_oom(e, "import");
		free(TAKE_PTR(dir));
		return r;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0 || mkdirat(dfd, "blobs", 0755) < 0 || mkdirat(dfd, "blobs/sha256", 0755) < 0 ||
	    (w.blobs = openat(dfd, "blobs/sha256", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		r = ra_err(e, errno, -EBADF, "mkdir", dir, "blobs/sha256");
		goto out;
	}
	w.files = json_object();
	w.links = json_object();
	w.buf = malloc(CHUNK);
	if (!w.files || !w.links || !w.buf) {
		r = ra_oom(e, "import");
		goto out;
	}
	r = ra_tar_walk(fd, file, ARCHIVE_MAX_ENTRIES, entry, &w, e);
	if (r < 0)
		goto out;
	if (!w.manifest) {
		r = ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "import", file,
				"has no manifest.json: not what docker save or podman save write");
		goto out;
	}
	doc = json_loadb(w.manifest, w.manifest_len, JSON_REJECT_DUPLICATES, &je);
	if (!json_is_array(doc) || !json_array_size(doc)) {
		r = ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "import", file, "manifest.json: %s",
				doc ? "not a list of images" : je.text);
		goto out;
	}
	/* the image tagged TAG, or the only one */
	json_array_foreach(doc, i, v) {
		json_t *t;
		size_t k;

		if (!tag) {
			if (json_array_size(doc) > 1) {
				r = ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "import", file,
						"holds %zu images: name one (docker-archive:FILE:NAME[:TAG])",
						json_array_size(doc));
				goto out;
			}
			pick = v;
			break;
		}
		json_array_foreach(json_object_get(v, "RepoTags"), k, t)
			if (!pick && json_is_string(t) && same_name(tag, json_string_value(t))) {
				pick = v;
				matched = json_string_value(t);
			}
		if (pick)
			break;
	}
	if (!pick) {
		r = ra_err_kind(e, ROOTASM_ERROR_USAGE, ENOENT, "import", file, "no image tagged '%s' in manifest.json",
				tag);
		goto out;
	}
	cname = json_string_value(json_object_get(pick, "Config"));
	cfg = cname ? file_of(&w, cname) : NULL;
	if (!cfg || !json_is_array(json_object_get(pick, "Layers"))) {
		r = ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "import", file,
				"manifest.json: the image's Config or Layers %s", cname ? "is not in the archive" : "is missing");
		goto out;
	}
	layers = json_array();
	json_array_foreach(json_object_get(pick, "Layers"), i, v) {
		json_t *f = json_is_string(v) ? file_of(&w, json_string_value(v)) : NULL;
		char digest[RA_DIGEST_MAX];

		if (!f) {
			r = ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "import", file,
					"manifest.json: layer %zu (%s) is not in the archive", i,
					json_is_string(v) ? json_string_value(v) : "not a name");
			goto out;
		}
		snprintf(digest, sizeof(digest), "sha256:%s", json_string_value(json_object_get(f, "hex")));
		json_array_append_new(layers, json_pack("{s:s, s:s, s:O}", "mediaType",
							layer_type(&w, json_string_value(json_object_get(f, "hex"))),
							"digest", digest, "size", json_object_get(f, "size")));
	}
	{
		char digest[RA_DIGEST_MAX];

		snprintf(digest, sizeof(digest), "sha256:%s", json_string_value(json_object_get(cfg, "hex")));
		man = json_pack("{s:i, s:s, s:{s:s, s:s, s:O}, s:O}", "schemaVersion", 2, "mediaType",
				"application/vnd.oci.image.manifest.v1+json", "config", "mediaType",
				"application/vnd.oci.image.config.v1+json", "digest", digest, "size",
				json_object_get(cfg, "size"), "layers", layers);
	}
	if (!man) {
		r = ra_oom(e, "import");
		goto out;
	}
	r = put_json(&w, dfd, man, NULL, "application/vnd.oci.image.manifest.v1+json", &mdesc);
	if (r < 0)
		goto out;
	idx = json_pack("{s:i, s:[O]}", "schemaVersion", 2, "manifests", mdesc);
	r = idx ? put_json(&w, dfd, idx, "index.json", NULL, NULL) : ra_oom(e, "import");
	if (r < 0)
		goto out;
	json_decref(idx);
	idx = json_pack("{s:s}", "imageLayoutVersion", "1.0.0");
	r = idx ? put_json(&w, dfd, idx, "oci-layout", NULL, NULL) : ra_oom(e, "import");
	if (r < 0)
		goto out;
	/*
	 * The archive's own name for the image, however TAG spelled it
	 * (docker.io/library/ and localhost/ aside): the RepoTag TAG matched,
	 * else its first RepoTag, qualified
	 */
	v = json_array_get(json_object_get(pick, "RepoTags"), 0);
	if (matched || json_is_string(v)) {
		char q[600];

		/* qualified as podman load does: docker save's "two:latest" is docker.io/library/two:latest */
		*ret_name = strdup(ra_name_qualified(matched ? matched : json_string_value(v), q, sizeof(q)) == 0 ? q :
				   matched ? matched : json_string_value(v));
		if (!*ret_name) {
			r = ra_oom(e, "import");
			goto out;
		}
	}
	*ret_dir = TAKE_PTR(dir);
	r = 0;
out:
	if (r < 0 && dir) {
		const char *base = strrchr(dir, '/') + 1;

		ra_docker_archive_remove(parent_fd, base);
	}
	close_fdp(&w.blobs);
	json_decref(w.files);
	json_decref(w.links);
	free(w.manifest);
	free(w.buf);
	json_decref(doc);
	json_decref(layers);
	json_decref(man);
	json_decref(mdesc);
	json_decref(idx);
	return r;
}
