// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The managed store (rootasm.h, "The store"): names, the list of images,
 * rmi, gc and verify (catalog-gc.c), over what import.c writes:
 *
 *   STORE/names.json                 {"version": 1, "names": {"NAME:TAG": "sha256:MANIFEST", ...},
 *                                     "aliases": {"sha256:OTHER": "sha256:MANIFEST", ...}}
 *   STORE/lock                       flock: shared by imports, exclusive for a change (store.h)
 *   STORE/images/sha256/HEX.json     an image's record; HEX.FS.layout.json its layouts
 *   STORE/layers/sha256/NAME.FS      a layer image; NAME.FS.json its record (with the image's sha256)
 *
 * names.json is replaced whole (a temporary name, fsync, renameat, fsync of
 * the directory): a reader without the lock sees the old or the new one.
 * rmi renames names.json first, then unlinks the image's files: a crash in
 * between leaves an image without a name, which rmi by digest removes.
 *
 * One image, one record: an image is its config (podman's image id), and the
 * same config reached through another manifest (the registry's manifest and
 * the one a docker-archive's import makes; a manifest list's entry and its
 * OCI copy) is the image already stored. Its manifest digest becomes an alias
 * of the record ("aliases"), which names it as the record's own digest does,
 * and its names name the record: `images` lists it once, with every name.
 *
 * Names: NAME[:TAG] in the grammar of the distribution spec's references
 * (docker/distribution reference.go): path components of lowercase letters
 * and digits joined by one '.', one or two '_' or any number of '-',
 * separated by '/', the first of them may be a host (letters, digits, '.',
 * '-', a ':PORT'); a TAG of [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}, "latest" when
 * none. Nothing else: no "..", no empty component, no leading '/', no
 * control character, at most 255 bytes before the tag.
 */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>

#include <jansson.h>

#include "digest.h"
#include "oci.h"
#include "open.h"
#include "catalog.h"
#include "store.h"
#include "util.h"

#define NAMES_MAX	(16u << 20)

void cat_close(struct cat *c)
{
	close_fdp(&c->fd);
	close_fdp(&c->images);
	close_fdp(&c->layers);
	close_fdp(&c->lock);	/* releases the flock */
}

const char *ra_store_path(const char *opt)
{
	const char *p = opt;

	if (!p || !*p)
		p = getenv("ROOTASM_STORE");
	return p && *p ? p : RA_STORE_DEFAULT;
}

int ra_store_trusted(int fd, const char *path, bool root_ok, char *abs, size_t size, struct rootasm_error *e)
{
	struct stat st;
	ssize_t n;

	if (fstat(fd, &st) < 0)
		return ra_err(e, errno, -EBADF, "open store", path, NULL);
	if ((st.st_uid != geteuid() && !(root_ok && st.st_uid == 0)) || (st.st_mode & 022))
		return ra_err_kind(e, ROOTASM_ERROR_PERMISSION, EPERM, "open store", path,
				   "owned by uid %u with mode %04o: a store must belong to its user%s and be writable by "
				   "nobody else", (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), root_ok ? " (or root)" : "");
	if (st.st_uid == 0) {
		char why[512];

		if (ra_admin_trusted(fd, -EBADF, why, sizeof(why)) < 0)
			return ra_err_kind(e, ROOTASM_ERROR_PERMISSION, EPERM, "open store", path, "%s", why);
	}
	n = ra_fd_path(fd, abs, size);
	if (n <= 0 || abs[0] != '/')
		return ra_err(e, n < 0 ? (int)-n : EINVAL, -EBADF, "open store", path, "its absolute path");
	return 0;
}

int ra_store_lock(int store_fd, int how, const char *store, struct rootasm_error *e)
{
	_cleanup_close_ int fd = openat(store_fd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0)
		return ra_err(e, errno, -EBADF, "open", store, "its lock file");
	while (flock(fd, how) < 0)
		if (errno != EINTR)
			return ra_err(e, errno, -EBADF, "flock", store, "its lock file");
	return take_fd(fd);
}

/*
 * Open an existing store (none: -ENOENT, @e untouched). Trusted as root
 * trusts it: the store directory belongs to us or to root, and nobody else
 * may write it (the layouts it gives name layer images to mount).
 */
int cat_open(const char *opt, int lock, struct cat *c, struct rootasm_error *e)
{
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, .resolve = RESOLVE_NO_MAGICLINKS };
	struct open_how sub = { .flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	const char *path = ra_store_path(opt);
	int r;

	*c = (struct cat){ .fd = -EBADF, .images = -EBADF, .layers = -EBADF, .lock = -EBADF };
	c->fd = sys_openat2(AT_FDCWD, path, &how);
	if (c->fd < 0 && errno == ENOENT)
		return -ENOENT;
	if (c->fd < 0)
		return ra_err_kind(e, errno == ENOTDIR || errno == ELOOP ? ROOTASM_ERROR_USAGE : ROOTASM_ERROR_RUNTIME,
				   errno, "open store", path, errno == ENOTDIR ?
				   "is not a directory (or is a symbolic link: name its target)" : NULL);
	/* a store we only read may be root's */
	r = ra_store_trusted(c->fd, path, true, c->path, sizeof(c->path), e);
	if (r < 0)
		return r;
	c->images = sys_openat2(c->fd, "images/sha256", &sub);
	if (c->images < 0 && errno != ENOENT)
		return ra_err(e, errno, -EBADF, "open", c->path, "images/sha256");
	c->layers = sys_openat2(c->fd, "layers/sha256", &sub);
	if (c->layers < 0 && errno != ENOENT)
		return ra_err(e, errno, -EBADF, "open", c->path, "layers/sha256");
	if (lock) {
		c->lock = ra_store_lock(c->fd, lock, c->path, e);
		if (c->lock < 0)
			return c->lock;
	}
	return 0;
}

/* ------------------------------------------------------------------ names */

/* One path component: [a-z0-9]+ joined by '.', '_', '__' or '-'+. */
static bool component_ok(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t run = 0;

		while (i < n && (islower((unsigned char)s[i]) || isdigit((unsigned char)s[i])))
			i++, run++;
		if (!run)
			return false;
		if (i == n)
			return true;
		if (s[i] == '.' || (s[i] == '_' && (i + 1 >= n || s[i + 1] != '_')))
			i++;
		else if (s[i] == '_')
			i += 2;
		else if (s[i] == '-')
			while (i < n && s[i] == '-')
				i++;
		else
			return false;
		if (i == n)
			return false;	/* a separator last */
	}
	return false;
}

/* A host: [A-Za-z0-9] runs joined by '.' or '-', then an optional :PORT (1-65535). */
static bool host_ok(const char *s, size_t n)
{
	const char *colon = memchr(s, ':', n);
	size_t h = colon ? (size_t)(colon - s) : n;

	if (!h || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[h - 1]))
		return false;
	for (size_t i = 0; i < h; i++) {
		if (isalnum((unsigned char)s[i]))
			continue;
		if ((s[i] != '.' && s[i] != '-') || (s[i] == '.' && s[i + 1] == '.'))
			return false;
	}
	if (colon) {
		unsigned long port = 0;

		if (colon + 1 == s + n || n - h - 1 > 5)
			return false;
		for (const char *p = colon + 1; p < s + n; p++) {
			if (!isdigit((unsigned char)*p))
				return false;
			port = port * 10 + (unsigned long)(*p - '0');
		}
		if (port < 1 || port > 65535)	/* a TCP port: localhost:99999 names no registry */
			return false;
	}
	return true;
}

static bool tag_ok(const char *t)
{
	size_t n = strlen(t);

	if (!n || n > 128 || !(isalnum((unsigned char)t[0]) || t[0] == '_'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)t[i]) && !strchr("_.-", t[i]))
			return false;
	return true;
}

bool ra_ref_has_host(const char *ref)
{
	const char *slash = strchr(ref, '/');
	size_t first = slash ? (size_t)(slash - ref) : 0;

	return slash && (memchr(ref, '.', first) || memchr(ref, ':', first) || (first == 9 && !strncmp(ref, "localhost", 9)));
}

int ra_name_qualified(const char *name, char *out, size_t size)
{
	char n[512];
	const char *p = n;

	if (rootasm_store_name_normalize(name, n, sizeof(n)) < 0)
		return -1;
	if (!strncmp(p, "index.docker.io/", 16))
		p += strlen("index.");
	if (!ra_ref_has_host(p))
		return snprintf(out, size, "docker.io/%s%s", strchr(p, '/') ? "" : "library/", p) < (int)size ? 0 : -1;
	if (!strncmp(p, "docker.io/", 10) && !strchr(p + 10, '/'))
		return snprintf(out, size, "docker.io/library/%s", p + 10) < (int)size ? 0 : -1;
	return snprintf(out, size, "%s", p) < (int)size ? 0 : -1;
}


int rootasm_store_name_normalize(const char *ref, char *out, size_t size)
{
	const char *slash, *colon, *s = ref;
	size_t name_n;

	if (!ref || !out)
		return -EINVAL;
	slash = strrchr(ref, '/');
	colon = strrchr(slash ? slash : ref, ':');
	name_n = colon ? (size_t)(colon - ref) : strlen(ref);
	if (!name_n || name_n > 255 || (colon && !tag_ok(colon + 1)))
		return -EINVAL;
	/* components; the first may be a host when more follow */
	for (bool first = true; s < ref + name_n; first = false) {
		const char *end = memchr(s, '/', ref + name_n - s);
		size_t n = (end ? end : ref + name_n) - s;

		if (!(component_ok(s, n) || (first && end && host_ok(s, n))))
			return -EINVAL;
		s += n + (end ? 1 : 0);
		if (end && s == ref + name_n)
			return -EINVAL;	/* a '/' last */
	}
	if (snprintf(out, size, "%.*s:%s", (int)name_n, ref, colon ? colon + 1 : "latest") >= (int)size)
		return -ENAMETOOLONG;
	return 0;
}

/* STORE/names.json's "names" and "aliases" objects (empty when there is none); caller owns them. */
struct names {
	json_t *names, *aliases;
};

static void names_free(struct names *n)
{
	json_decref(n->names);
	json_decref(n->aliases);
	n->names = n->aliases = NULL;
}

static int names_load(struct cat *c, struct names *n, struct rootasm_error *e)
{
	_cleanup_close_ int fd = -EBADF;
	_cleanup_free_ char *buf = NULL;
	json_t *doc, *names, *aliases;
	json_error_t je;
	size_t len;
	int r;

	n->names = n->aliases = NULL;
	fd = sys_openat2(c->fd, "names.json", (struct open_how *)&beneath_how);
	if (fd < 0 && errno == ENOENT) {
		n->names = json_object();
		n->aliases = json_object();
		return n->names && n->aliases ? 0 : (names_free(n), ra_oom(e, "store names"));
	}
	if (fd < 0)
		return ra_err(e, errno, -EBADF, "open", c->path, "names.json");
	r = ra_read_all(fd, NAMES_MAX, NULL, NULL, &buf, &len);
	if (r < 0)
		return ra_err(e, -r, -EBADF, "read", c->path, "names.json");
	doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	names = doc ? json_object_get(doc, "names") : NULL;
	aliases = doc ? json_object_get(doc, "aliases") : NULL;
	if (!json_is_object(names) || (aliases && !json_is_object(aliases))) {
		json_decref(doc);
		return ra_err_kind(e, ROOTASM_ERROR_RUNTIME, EINVAL, "read", c->path, "names.json: %s",
				   !doc ? je.text : !json_is_object(names) ? "no \"names\" object" :
				   "\"aliases\" is not an object");
	}
	n->names = json_incref(names);
	n->aliases = aliases ? json_incref(aliases) : json_object();
	json_decref(doc);
	if (!n->aliases) {
		names_free(n);
		return ra_oom(e, "store names");
	}
	return 0;
}

/* Replace STORE/names.json with @n, complete or not at all. Under the exclusive lock. */
static int names_save(struct cat *c, const struct names *n, struct rootasm_error *e)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int fd = -EBADF;
	char tmp[64];
	uint64_t rnd = 0;
	json_t *doc;
	size_t len;

	doc = json_object_size(n->aliases) ?
		json_pack("{s:i, s:O, s:O}", "version", 1, "names", n->names, "aliases", n->aliases) :
		json_pack("{s:i, s:O}", "version", 1, "names", n->names);
	buf = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
	json_decref(doc);
	if (!buf)
		return ra_oom(e, "store names");
	len = strlen(buf);
	(void)!getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK);
	snprintf(tmp, sizeof(tmp), ".names.json.%016llx", (unsigned long long)rnd);
	fd = openat(c->fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return ra_err(e, errno, -EBADF, "create", c->path, "%s", tmp);
	if (write(fd, buf, len) != (ssize_t)len || write(fd, "\n", 1) != 1 || fsync(fd) < 0) {
		int err = errno ? errno : EIO;

		unlinkat(c->fd, tmp, 0);
		return ra_err(e, err, -EBADF, "write", c->path, "%s", tmp);
	}
	if (renameat(c->fd, tmp, c->fd, "names.json") < 0) {
		int err = errno;

		unlinkat(c->fd, tmp, 0);
		return ra_err(e, err, -EBADF, "rename", c->path, "%s to names.json", tmp);
	}
	/* the rename itself durable: fsync the directory (an O_PATH fd cannot be fsync'd) */
	{
		_cleanup_close_ int d = openat(c->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (d < 0 || fsync(d) < 0)
			return ra_err(e, errno, -EBADF, "fsync", c->path, NULL);
	}
	return 0;
}

int ra_store_name(int store_fd, const char *store, const char *ref, const char *alias, const char *manifest,
		  struct rootasm_error *e)
{
	struct cat c = { .fd = store_fd, .images = -EBADF, .layers = -EBADF, .lock = -EBADF };
	char name[512];
	struct names n = { 0 };
	bool change = false;
	int r;

	if (ref && rootasm_store_name_normalize(ref, name, sizeof(name)) < 0)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "name", ref,
				   "expected NAME[:TAG] (lowercase path components, a TAG of letters, digits, '_', '.', '-')");
	snprintf(c.path, sizeof(c.path), "%s", store);
	r = names_load(&c, &n, e);
	for (int i = 0; r == 0 && i < 2; i++) {
		json_t *o = i ? n.aliases : n.names;
		const char *k = i ? alias : ref ? name : NULL, *was;

		if (!k)
			continue;
		/* the same name for the same image again: nothing to write */
		was = json_string_value(json_object_get(o, k));
		if (was && !strcmp(was, manifest))
			continue;
		if (json_object_set_new(o, k, json_string(manifest)) < 0)
			r = ra_oom(e, "store names");
		change = true;
	}
	if (r == 0 && change)
		r = names_save(&c, &n, e);
	names_free(&n);
	return r;
}

int ra_store_image_of_config(int images, const char *config, char hex[RA_DIGEST_HEX + 1])
{
	_cleanup_close_ int d = images >= 0 ? openat(images, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -EBADF;
	DIR *dir = d >= 0 ? fdopendir(d) : NULL;
	struct dirent *de;
	int found = 0;

	if (!dir)
		return images < 0 ? 0 : -errno;
	d = -EBADF;	/* the DIR's now */
	while (!found && (de = readdir(dir))) {
		json_t *rec = NULL;

		if (strlen(de->d_name) != RA_DIGEST_HEX + 5 || strcmp(de->d_name + RA_DIGEST_HEX, ".json") ||
		    cat_load_json_at(images, de->d_name, RECORD_MAX, &rec) < 0)
			continue;
		if (!strcmp(json_string_value(json_object_get(rec, "config")) ?: "", config)) {
			snprintf(hex, RA_DIGEST_HEX + 1, "%.*s", RA_DIGEST_HEX, de->d_name);
			found = 1;
		}
		json_decref(rec);
	}
	closedir(dir);
	return found;
}

/* ----------------------------------------------------------------- lookup */

static bool hex_only(const char *s, size_t min)
{
	size_t n = strlen(s);

	if (n < min || n > RA_DIGEST_HEX)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s) && !(*s >= 'a' && *s <= 'f'))
			return false;
	return true;
}

bool ra_store_has_image(int images, const char *hex)
{
	char n[RA_DIGEST_HEX + 8];
	struct stat st;

	snprintf(n, sizeof(n), "%s.json", hex);
	return images >= 0 && fstatat(images, n, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

static bool have_image(struct cat *c, const char *hex)
{
	return ra_store_has_image(c->images, hex);
}

/*
 * @ref as the hex of a manifest digest in @hex: "sha256:HEX", a name of
 * names.json, a unique prefix of 12 or more hex digits, or the absolute path
 * of a layout of the store's (by the store's path as given, @given, or as
 * resolved: that layout's name in @layout, else "" there). 0, or a usage
 * error (no such image, ambiguous); @n (borrowed): names.json's names and
 * aliases.
 */
/*
 * A short name's image, as podman finds one of its own storage: @name
 * (normalized) without a registry is also localhost/NAME, docker.io's
 * (docker.io/library/NAME for one component), and the one stored name
 * REGISTRY/NAME (a host, as an import of docker://NAME through
 * registries.conf's search registries named it). Its manifest digest; NULL:
 * none; (const char *)-1: more than one stored name ends so (said in @e).
 */
static const char *short_name(const struct names *n, const char *name, const char *ref, struct cat *c,
			      char *named, struct rootasm_error *e)
{
	const char *m = NULL, *key, *found = NULL, *other = NULL;
	size_t len = strlen(name);
	char cand[600];
	json_t *v;

	/* a registry named: that name alone */
	if (ra_ref_has_host(name))
		return NULL;
	/* localhost's, then docker.io's (the name qualified) */
	snprintf(cand, sizeof(cand), "localhost/%s", name);
	if (!(m = json_string_value(json_object_get(n->names, cand))) && ra_name_qualified(name, cand, sizeof(cand)) == 0)
		m = json_string_value(json_object_get(n->names, cand));
	if (m) {
		if (named)
			snprintf(named, 512, "%s", cand);
		return m;
	}
	json_object_foreach(n->names, key, v) {
		size_t k = strlen(key), h = k > len ? k - len - 1 : 0;	/* REGISTRY's length: one component, a host */

		if (k > len && key[h] == '/' && !strcmp(key + h + 1, name) && json_is_string(v) &&
		    !memchr(key, '/', h) && ra_ref_has_host(key)) {
			/* (one image by two such names is one image) */
			if (found && strcmp(json_string_value(v), m))
				other = key;
			else if (!found) {
				found = key;
				m = json_string_value(v);
			}
		}
	}
	if (other) {
		ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "image", ref, "a short name of more than one image of the "
			    "store %s (%s, %s): give the whole name", c->path, found, other);
		return (const char *)-1;
	}
	if (found && named)
		snprintf(named, 512, "%s", found);
	return found ? m : NULL;
}

/* The image a name of the store gives (short_name()'s -1: ambiguous, said) into @hex: 0, or the error. */
static int named_image(struct cat *c, const char *ref, const char *m, char hex[RA_DIGEST_HEX + 1],
		       struct rootasm_error *e)
{
	if (m == (const char *)-1)
		return -EINVAL;
	if (ra_digest_parse(m, hex) < 0 || !have_image(c, hex))
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, ENOENT, "image", ref, "names %s, which is not in the store %s",
				   m, c->path);
	return 0;
}

/*
 * @ref's image in @hex (and in @layout the layout a path named, else "");
 * in @named (512 bytes, may be NULL) the name of the store's it was found
 * by (a short name's whole one), else "".
 */
static int resolve(struct cat *c, const char *given, const char *ref, const struct names *n,
		   char hex[RA_DIGEST_HEX + 1], char layout[RA_DIGEST_HEX + 64], char *named, struct rootasm_error *e)
{
	static const char *const fs[] = { "erofs", "squashfs" };
	char name[512];
	const char *m;

	layout[0] = '\0';
	if (named)
		named[0] = '\0';
	if (ref[0] == '/') {
		struct stat st;

		const char *rel = NULL;

		for (int i = 0; i < 2 && !rel; i++) {
			snprintf(name, sizeof(name), "%s/images/sha256", i ? c->path : given);
			rel = ra_path_below(ref, name);
		}
		snprintf(hex, RA_DIGEST_HEX + 1, "%.*s", RA_DIGEST_HEX, rel ? rel : "");
		if (!rel || strlen(hex) != RA_DIGEST_HEX || !hex_only(hex, RA_DIGEST_HEX) || rel[RA_DIGEST_HEX] != '.')
			return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "image", ref, "not a layout of the store %s "
					   "(%s/images/sha256/HEX.FS.layout.json)", c->path, c->path);
		for (size_t i = 0; i < ARRAY_SIZE(fs) && !layout[0]; i++) {
			snprintf(name, sizeof(name), "%s.%s.layout.json", hex, fs[i]);
			if (!strcmp(name, rel))
				snprintf(layout, RA_DIGEST_HEX + 64, "%s", name);
		}
		if (!layout[0] || !have_image(c, hex) || c->images < 0 ||
		    fstatat(c->images, layout, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			return ra_err_kind(e, ROOTASM_ERROR_USAGE, ENOENT, "image", ref, "not a layout of an image of the "
					   "store %s", c->path);
		return 0;
	}

	if (!strncmp(ref, "sha256:", 7)) {
		if (ra_digest_parse(ref, hex) < 0)
			return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "image", ref, "not a sha256 digest");
		if (have_image(c, hex))
			return 0;
		/* the manifest of an image stored under another one (its alias) */
		m = json_string_value(json_object_get(n->aliases, ref));
		if (m && ra_digest_parse(m, hex) == 0 && have_image(c, hex))
			return 0;
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, ENOENT, "image", ref, "not in the store %s", c->path);
	}
	/*
	 * The name as given, then a digest's first hex digits, then a short
	 * name's (as podman: an ID's prefix before the search registries; a
	 * REGISTRY/HEX name does not hide the image HEX begins)
	 */
	if (rootasm_store_name_normalize(ref, name, sizeof(name)) == 0 &&
	    ((m = json_string_value(json_object_get(n->names, name))) ||
	     (!hex_only(ref, 12) && (m = short_name(n, name, ref, c, named, e))))) {
		if (named && !named[0] && m != (const char *)-1)
			snprintf(named, 512, "%s", name);
		return named_image(c, ref, m, hex, e);
	}
	if (hex_only(ref, 12) && c->images >= 0) {
		_cleanup_close_ int d = openat(c->images, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		DIR *dir = d >= 0 ? fdopendir(d) : NULL;
		struct dirent *de;
		int found = 0;

		if (!dir)
			return ra_err(e, errno, -EBADF, "read", c->path, "images/sha256");
		d = -EBADF;	/* the DIR's now */
		while ((de = readdir(dir))) {
			size_t len = strlen(de->d_name);

			if (len == RA_DIGEST_HEX + 5 && !strcmp(de->d_name + RA_DIGEST_HEX, ".json") &&
			    !strncmp(de->d_name, ref, strlen(ref)) && found++ == 0)
				snprintf(hex, RA_DIGEST_HEX + 1, "%.*s", RA_DIGEST_HEX, de->d_name);
		}
		closedir(dir);
		if (found > 1)
			return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "image", ref,
					   "is the beginning of %d images' digests: give more of it", found);
		if (found)
			return 0;
		/* no digest begins so: a short name after all */
		if (rootasm_store_name_normalize(ref, name, sizeof(name)) == 0 &&
		    (m = short_name(n, name, ref, c, named, e)))
			return named_image(c, ref, m, hex, e);
	}
	return ra_err_kind(e, ROOTASM_ERROR_USAGE, ENOENT, "image", ref, "no image of that name or digest in the store %s",
			   c->path);
}

/* The layout of image @hex: erofs first, then squashfs; its name in @out. */
int cat_layout_of(struct cat *c, const char *hex, char *out, size_t size)
{
	static const char *const fs[] = { "erofs", "squashfs" };
	struct stat st;

	for (size_t i = 0; i < ARRAY_SIZE(fs); i++) {
		snprintf(out, size, "%s.%s.layout.json", hex, fs[i]);
		if (fstatat(c->images, out, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
			return 0;
	}
	return -ENOENT;
}

int rootasm_store_lookup(const char *store, const char *ref, char **ret_layout, char **ret_manifest,
			 struct rootasm_error *e)
{
	return ra_store_lookup(store, ref, true, ret_layout, ret_manifest, e);
}

int ra_store_lookup(const char *store, const char *ref, bool use, char **ret_layout, char **ret_manifest,
		    struct rootasm_error *e)
{
	struct cat c;
	char hex[RA_DIGEST_HEX + 1], name[RA_DIGEST_HEX + 64];
	struct names n = { 0 };
	int r;

	if (ret_layout)
		*ret_layout = NULL;
	if (ret_manifest)
		*ret_manifest = NULL;
	if (!ref || !*ref)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "image", "", "no image named");
	r = cat_open(store, 0, &c, e);
	if (r == -ENOENT)
		r = ra_err_kind(e, ROOTASM_ERROR_USAGE, ENOENT, "image", ref, "no store at %s", ra_store_path(store));
	if (r == 0)
		r = names_load(&c, &n, e);
	if (r == 0)
		r = resolve(&c, ra_store_path(store), ref, &n, hex, name, NULL, e);
	if (r == 0 && !name[0] && cat_layout_of(&c, hex, name, sizeof(name)) < 0)
		r = ra_err_kind(e, ROOTASM_ERROR_USAGE, ENOENT, "image", ref, "sha256:%s has no layout in %s", hex,
				c.path);
	/*
	 * A lookup is a use: the layout's atime says when (images' LAST USE),
	 * set here, as a relatime mount would not on a read. Best effort: a
	 * store the caller may not write keeps what it had.
	 */
	if (r == 0 && use) {
		const struct timespec t[2] = { { .tv_nsec = UTIME_NOW }, { .tv_nsec = UTIME_OMIT } };

		(void)utimensat(c.images, name, t, AT_SYMLINK_NOFOLLOW);
	}
	if (r == 0 && ret_layout && asprintf(ret_layout, "%s/images/sha256/%s", c.path, name) < 0) {
		*ret_layout = NULL;
		r = ra_oom(e, "image");
	}
	if (r == 0 && ret_manifest && asprintf(ret_manifest, "sha256:%s", hex) < 0) {
		*ret_manifest = NULL;
		free(ret_layout ? *ret_layout : NULL);
		if (ret_layout)
			*ret_layout = NULL;
		r = ra_oom(e, "image");
	}
	names_free(&n);
	cat_close(&c);
	return r;
}

/* ------------------------------------------------------------------- list */

int cat_load_json_at(int dir, const char *name, size_t max, json_t **ret)
{
	/* reading a record or a layout is no use of the image: its atime (LAST USE) stays, where we may */
	struct open_how how = beneath_how;
	_cleanup_close_ int fd = -EBADF;

	how.flags |= O_NOATIME;
	fd = sys_openat2(dir, name, &how);
	if (fd < 0 && errno == EPERM)
		fd = sys_openat2(dir, name, (struct open_how *)&beneath_how);
	_cleanup_free_ char *buf = NULL;
	size_t len;
	int r;

	*ret = NULL;
	if (fd < 0)
		return -errno;
	r = ra_read_all(fd, max, NULL, NULL, &buf, &len);
	if (r < 0)
		return r;
	*ret = json_loadb(buf, len, JSON_REJECT_DUPLICATES, NULL);
	return *ret ? 0 : -EBADMSG;
}

/*
 * @fn for each entry of @fd (c->images or c->layers, @what in messages;
 * nothing when it is missing), in directory order, until one fails.
 */
int cat_each_entry(struct cat *c, int fd, const char *what, int (*fn)(struct cat *c, const char *name, void *ud),
		   void *ud, struct rootasm_error *e)
{
	_cleanup_close_ int d = -EBADF;
	struct dirent *de;
	DIR *dir;
	int r = 0;

	if (fd < 0)
		return 0;
	d = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	dir = d >= 0 ? fdopendir(d) : NULL;
	if (!dir)
		return ra_err(e, errno, -EBADF, "read", c->path, "%s", what);
	d = -EBADF;	/* the DIR's */
	while (r >= 0 && (de = readdir(dir)))
		r = fn(c, de->d_name, ud);
	closedir(dir);
	return r;
}

struct image_walk {
	int (*fn)(struct cat *c, const char *hex, void *ud);
	void *ud;
};

static int image_entry(struct cat *c, const char *name, void *ud)
{
	struct image_walk *w = ud;
	char hex[RA_DIGEST_HEX + 1];

	if (strlen(name) != RA_DIGEST_HEX + 5 || strcmp(name + RA_DIGEST_HEX, ".json"))
		return 0;
	snprintf(hex, sizeof(hex), "%.*s", RA_DIGEST_HEX, name);
	return hex_only(hex, RA_DIGEST_HEX) ? w->fn(c, hex, w->ud) : 0;
}

/* Call @fn for each image record's hex, in directory order. */
int cat_each_image(struct cat *c, int (*fn)(struct cat *c, const char *hex, void *ud), void *ud,
		   struct rootasm_error *e)
{
	struct image_walk w = { .fn = fn, .ud = ud };

	return cat_each_entry(c, c->images, "images/sha256", image_entry, &w, e);
}

/* The layer images (absolute paths) image @hex's layouts name, appended to @paths (a JSON array). */
void cat_layers_of(struct cat *c, const char *hex, json_t *paths)
{
	static const char *const fs[] = { "erofs", "squashfs" };

	for (size_t i = 0; i < ARRAY_SIZE(fs); i++) {
		char name[RA_DIGEST_HEX + 64];
		json_t *lay = NULL, *l;
		size_t k;

		snprintf(name, sizeof(name), "%s.%s.layout.json", hex, fs[i]);
		if (cat_load_json_at(c->images, name, RECORD_MAX, &lay) < 0)
			continue;
		json_array_foreach(json_object_get(lay, "layers"), k, l)
			if (json_is_string(json_object_get(l, "image")))
				json_array_append(paths, json_object_get(l, "image"));
		json_decref(lay);
	}
}

struct list {
	json_t *names;
	struct rootasm_store_image *v;
	size_t n;
	int err;
};

static int list_one(struct cat *c, const char *hex, void *ud)
{
	struct list *L = ud;
	struct rootasm_store_image *grown, *im;
	char name[RA_DIGEST_HEX + 64], digest[RA_DIGEST_MAX];
	json_t *rec = NULL, *paths = json_array(), *p;
	const char *k;
	json_t *v;
	struct stat st;
	size_t i, nn = 0;

	grown = realloc(L->v, (L->n + 1) * sizeof(*L->v));
	if (!grown || !paths) {
		json_decref(paths);
		return L->err = -ENOMEM;
	}
	L->v = grown;
	im = &L->v[L->n++];
	memset(im, 0, sizeof(*im));
	im->size = sizeof(*im);
	snprintf(im->manifest, sizeof(im->manifest), "sha256:%s", hex);
	snprintf(name, sizeof(name), "%s.json", hex);
	if (cat_load_json_at(c->images, name, RECORD_MAX, &rec) == 0) {
		snprintf(im->config, sizeof(im->config), "%s",
			 json_string_value(json_object_get(rec, "config")) ?: "");
		im->nlayers = json_array_size(json_object_get(rec, "layers"));
	}
	if (fstatat(c->images, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		im->last_used = st.st_mtime;
	json_decref(rec);
	if (cat_layout_of(c, hex, name, sizeof(name)) == 0) {
		if (asprintf(&im->layout, "%s/images/sha256/%s", c->path, name) < 0) {
			im->layout = NULL;
			json_decref(paths);
			return L->err = -ENOMEM;
		}
		/* last use: the layout's last read (atime: relatime's granularity) */
		if (fstatat(c->images, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_atime > im->last_used)
			im->last_used = st.st_atime;
	}
	cat_layers_of(c, hex, paths);
	json_array_foreach(paths, i, p)
		if (stat(json_string_value(p), &st) == 0)
			im->bytes += st.st_size;
	json_decref(paths);
	snprintf(digest, sizeof(digest), "sha256:%s", hex);
	json_object_foreach(L->names, k, v)
		nn += json_is_string(v) && !strcmp(json_string_value(v), digest);
	im->names = calloc(nn + 1, sizeof(char *));
	if (!im->names)
		return L->err = -ENOMEM;
	json_object_foreach(L->names, k, v) {
		if (!json_is_string(v) || strcmp(json_string_value(v), digest))
			continue;
		if (!(im->names[im->nnames] = strdup(k)))
			return L->err = -ENOMEM;
		im->nnames++;
	}
	return 0;
}

void rootasm_store_images_free(struct rootasm_store_image *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		for (size_t k = 0; k < v[i].nnames; k++)
			free(v[i].names[k]);
		free(v[i].names);
		free(v[i].layout);
	}
	free(v);
}

int rootasm_store_images(const char *store, struct rootasm_store_image **ret, size_t *ret_n, struct rootasm_error *e)
{
	struct list L = { 0 };
	struct names n = { 0 };
	struct cat c;
	int r;

	if (!ret || !ret_n)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "images", NULL, "no result pointers");
	*ret = NULL;
	*ret_n = 0;
	r = cat_open(store, 0, &c, e);
	if (r == -ENOENT)
		return 0;	/* no store: no image */
	if (r == 0)
		r = names_load(&c, &n, e);
	L.names = n.names;
	if (r == 0)
		r = cat_each_image(&c, list_one, &L, e);
	if (r == -ENOMEM || L.err)
		r = ra_oom(e, "images");
	names_free(&n);
	cat_close(&c);
	if (r < 0) {
		rootasm_store_images_free(L.v, L.n);
		return r;
	}
	*ret = L.v;
	*ret_n = L.n;
	return 0;
}

/* -------------------------------------------------------------------- rmi */

int rootasm_store_remove(const char *store, const char *ref, struct rootasm_error *e)
{
	return rootasm_store_remove_flags(store, ref, ROOTASM_STORE_REMOVE_FORCE, e);
}

int rootasm_store_remove_flags(const char *store, const char *ref, unsigned int flags, struct rootasm_error *e)
{
	char hex[RA_DIGEST_HEX + 1], name[512], digest[RA_DIGEST_MAX], f[RA_DIGEST_HEX + 64], lname[RA_DIGEST_HEX + 64];
	struct names n = { 0 };
	json_t *v;
	const char *k;
	void *tmp;
	bool by_name, others = false;
	struct cat c;
	int r;

	if (!ref || !*ref)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "rmi", "", "no image named");
	if (flags & ~ROOTASM_STORE_REMOVE_FORCE)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "rmi", ref, "unknown flags 0x%x",
				   flags & ~ROOTASM_STORE_REMOVE_FORCE);
	r = cat_open(store, LOCK_EX, &c, e);
	if (r == -ENOENT)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, ENOENT, "rmi", ref, "no store at %s", ra_store_path(store));
	if (r == 0)
		r = names_load(&c, &n, e);
	if (r == 0)
		r = resolve(&c, ra_store_path(store), ref, &n, hex, lname, name, e);
	if (r < 0)
		goto out;
	snprintf(digest, sizeof(digest), "sha256:%s", hex);
	/* (the name it was found by: a short name's whole one, never the image's other names) */
	by_name = name[0] != '\0';
	/* by digest, an image of several names: only when forced (podman's rmi -f) */
	if (!by_name && !(flags & ROOTASM_STORE_REMOVE_FORCE)) {
		char list[1024] = "";
		size_t len = 0, count = 0;

		json_object_foreach(n.names, k, v)
			if (json_is_string(v) && !strcmp(json_string_value(v), digest)) {
				count++;
				if (len < sizeof(list))
					len += snprintf(list + len, sizeof(list) - len, "%s%s", len ? ", " : "", k);
			}
		if (count > 1) {
			r = ra_err_kind(e, ROOTASM_ERROR_USAGE, EBUSY, "rmi", ref, "the image has %zu names (%s): remove "
					"each name, or all of them and the image with force (rmi --force)", count, list);
			goto out;
		}
	}
	/* by name: that name; the image goes with its last name. By digest (its own or an alias): every name and the image */
	json_object_foreach_safe(n.names, tmp, k, v) {
		if (!json_is_string(v) || strcmp(json_string_value(v), digest))
			continue;
		if (!by_name || !strcmp(k, name))
			json_object_del(n.names, k);
		else
			others = true;
	}
	/* its aliases go with the image */
	if (!others)
		json_object_foreach_safe(n.aliases, tmp, k, v)
			if (json_is_string(v) && !strcmp(json_string_value(v), digest))
				json_object_del(n.aliases, k);
	r = names_save(&c, &n, e);
	if (r < 0 || others)
		goto out;
	/* the layouts, then the record: a layout is never left without its record */
	for (int i = 0; i < 2; i++) {
		snprintf(f, sizeof(f), "%s.%s.layout.json", hex, i ? "squashfs" : "erofs");
		if (unlinkat(c.images, f, 0) < 0 && errno != ENOENT) {
			r = ra_err(e, errno, -EBADF, "rmi", c.path, "images/sha256/%s", f);
			goto out;
		}
	}
	snprintf(f, sizeof(f), "%s.json", hex);
	if (unlinkat(c.images, f, 0) < 0 && errno != ENOENT) {
		r = ra_err(e, errno, -EBADF, "rmi", c.path, "images/sha256/%s", f);
		goto out;
	}
	r = 1;
out:
	names_free(&n);
	cat_close(&c);
	return r;
}
