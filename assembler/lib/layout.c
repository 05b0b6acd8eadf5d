// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Layout parser: YAML (or JSON, which YAML reads) -> struct rootasm_layout.
 *
 * Three rules hold for every diagnostic: it names file:line:column, it names
 * the key (as a path such as "mounts[2].options[1]"), and it says what was
 * expected. Every user-controlled size has a cap (layout.h).
 */
#include <ctype.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <yaml.h>

#include "layout.h"
#include "util.h"

/* realpaths of the layouts being loaded, outermost first: cycle detection */
static __thread char load_stack[RA_MAX_DEPTH][RA_PATH_MAX];

struct pctx {
	yaml_document_t *doc;
	const char *file;
	const char *dir;
	int depth;
	struct rootasm_error *e;
};

static int perr(struct pctx *p, const yaml_node_t *n, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int perr(struct pctx *p, const yaml_node_t *n, const char *key, const char *fmt, ...)
{
	struct rootasm_error *e = p->e;
	va_list ap;

	if (!e)
		return -EINVAL;
	memset(e, 0, sizeof(*e));
	e->err = EINVAL;
	e->usage = true;
	snprintf(e->file, sizeof(e->file), "%s", p->file);
	if (n) {
		e->line = n->start_mark.line + 1;
		e->column = n->start_mark.column + 1;
	}
	snprintf(e->op, sizeof(e->op), "%s", key ? key : "");
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static struct ra_loc loc_of(const yaml_node_t *n)
{
	return (struct ra_loc){ n->start_mark.line + 1, n->start_mark.column + 1 };
}

static const char *node_type(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_SCALAR_NODE:
		return "a scalar";
	case YAML_SEQUENCE_NODE:
		return "a list";
	case YAML_MAPPING_NODE:
		return "a mapping";
	default:
		return "nothing";
	}
}

static int want(struct pctx *p, const yaml_node_t *n, const char *key, yaml_node_type_t t)
{
	static const char *const names[] = {
		[YAML_SCALAR_NODE] = "a scalar",
		[YAML_SEQUENCE_NODE] = "a list",
		[YAML_MAPPING_NODE] = "a mapping",
	};

	if (n->type == t)
		return 0;
	return perr(p, n, key, "expected %s, got %s", names[t], node_type(n));
}

static const char *scalar(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

/* A plain scalar that YAML would read as null: "~", "null" or nothing. */
static bool is_null(const yaml_node_t *n)
{
	const char *s;

	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	s = scalar(n);
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL");
}

static int get_string(struct pctx *p, const yaml_node_t *n, const char *key, const char **ret)
{
	int r = want(p, n, key, YAML_SCALAR_NODE);

	if (r < 0)
		return r;
	if (is_null(n) || !*scalar(n))
		return perr(p, n, key, "expected a non-empty string");
	if (strlen(scalar(n)) >= RA_PATH_MAX)
		return perr(p, n, key, "value longer than %d bytes", RA_PATH_MAX - 1);
	*ret = scalar(n);
	return 0;
}

static int get_bool(struct pctx *p, const yaml_node_t *n, const char *key, bool *ret)
{
	int r = want(p, n, key, YAML_SCALAR_NODE);

	if (r < 0)
		return r;
	if (!strcmp(scalar(n), "true"))
		*ret = true;
	else if (!strcmp(scalar(n), "false"))
		*ret = false;
	else
		return perr(p, n, key, "expected true or false, got '%s'", scalar(n));
	return 0;
}

/* The one checked number parser: decimal (or octal with @base 8), no sign, no junk. */
static int parse_u64(const char *s, int base, uint64_t max, uint64_t *ret)
{
	unsigned long long v;
	char *end;

	if (!*s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno || *end || v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

static int get_id(struct pctx *p, const yaml_node_t *n, const char *key, uint32_t *ret)
{
	uint64_t v;
	int r = want(p, n, key, YAML_SCALAR_NODE);

	if (r < 0)
		return r;
	/* (uid_t)-1 means "no change" to the kernel: never a valid id */
	if (parse_u64(scalar(n), 10, 4294967294ULL, &v) < 0)
		return perr(p, n, key, "expected an id between 0 and 4294967294, got '%s'", scalar(n));
	*ret = v;
	return 0;
}

/* Sizes for tmpfs: digits with an optional k/m/g/t suffix, or a percentage. */
static int check_size(const char *s)
{
	uint64_t v;
	size_t len = strlen(s);
	char num[32];

	if (!len || len >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, len + 1);
	if (strchr("kKmMgGtT%", num[len - 1]))
		num[--len] = '\0';
	if (parse_u64(num, 10, UINT64_MAX >> 10, &v) < 0)
		return -EINVAL;
	if (s[strlen(s) - 1] == '%' && (v == 0 || v > 100))
		return -ERANGE;
	return 0;
}

static int get_mode(struct pctx *p, const yaml_node_t *n, const char *key, const char *s,
		    unsigned int *ret)
{
	uint64_t v;

	if (parse_u64(s, 8, 07777, &v) < 0)
		return perr(p, n, key, "expected an octal mode up to 7777, got '%s'", s);
	*ret = v;
	return 0;
}

/* Iterate a mapping, rejecting duplicate keys and non-scalar keys. */
#define for_pairs(p, map, pair) \
	for (yaml_node_pair_t *pair = (map)->data.mapping.pairs.start; \
	     pair < (map)->data.mapping.pairs.top; pair++)

static yaml_node_t *node(struct pctx *p, int id)
{
	return yaml_document_get_node(p->doc, id);
}

static int check_keys(struct pctx *p, yaml_node_t *map, const char *where,
		      const char *const *allowed)
{
	for_pairs(p, map, a) {
		yaml_node_t *k = node(p, a->key);
		bool ok = false;
		char buf[256] = "";

		if (k->type != YAML_SCALAR_NODE)
			return perr(p, k, where, "keys must be scalars");
		for (const char *const *s = allowed; *s; s++)
			ok |= !strcmp(*s, scalar(k));
		for (yaml_node_pair_t *b = map->data.mapping.pairs.start; b < a; b++) {
			yaml_node_t *kb = node(p, b->key);

			if (kb->type == YAML_SCALAR_NODE && !strcmp(scalar(kb), scalar(k)))
				return perr(p, k, where, "duplicate key '%s' (first at line %zu)",
					    scalar(k), kb->start_mark.line + 1);
		}
		if (ok)
			continue;
		for (const char *const *s = allowed; *s; s++)
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s",
				 s == allowed ? "" : ", ", *s);
		return perr(p, k, where, "unknown key '%s' (expected one of: %s)", scalar(k), buf);
	}
	return 0;
}

static yaml_node_t *lookup(struct pctx *p, yaml_node_t *map, const char *key)
{
	for_pairs(p, map, a) {
		yaml_node_t *k = node(p, a->key);

		if (k->type == YAML_SCALAR_NODE && !strcmp(scalar(k), key))
			return node(p, a->value);
	}
	return NULL;
}

int ra_normalize_target(const char *in, char *out, size_t size)
{
	size_t o = 0;
	const char *s = in;

	if (in[0] != '/')
		return -EINVAL;
	while (*s) {
		const char *c;
		size_t len;

		while (*s == '/')
			s++;
		if (!*s)
			break;
		c = s;
		while (*s && *s != '/')
			s++;
		len = s - c;
		if (len == 1 && c[0] == '.')
			continue;
		if (len == 2 && c[0] == '.' && c[1] == '.')
			return -EXDEV;
		if (o + 1 + len + 1 > size)
			return -ENAMETOOLONG;
		out[o++] = '/';
		memcpy(out + o, c, len);
		o += len;
	}
	if (!o) {
		if (size < 2)
			return -ENAMETOOLONG;
		out[o++] = '/';
	}
	out[o] = '\0';
	return 0;
}

static int get_target(struct pctx *p, const yaml_node_t *n, const char *key, char **ret)
{
	char buf[RA_PATH_MAX];
	const char *s;
	int r = get_string(p, n, key, &s);

	if (r < 0)
		return r;
	r = ra_normalize_target(s, buf, sizeof(buf));
	if (r == -EINVAL)
		return perr(p, n, key, "target '%s' is not an absolute path", s);
	if (r == -EXDEV)
		return perr(p, n, key, "target '%s' contains '..'", s);
	if (r < 0)
		return perr(p, n, key, "target '%s' is too long", s);
	if (!strcmp(buf, "/"))
		return perr(p, n, key, "target '/' is the rootfs itself; mount volumes below it");
	*ret = strdup(buf);
	return *ret ? 0 : -ENOMEM;
}

/* A host-side path: relative ones are relative to the layout file's directory. */
static int get_source(struct pctx *p, const yaml_node_t *n, const char *key, mode_t type,
		      char **ret)
{
	const char *s;
	char buf[RA_PATH_MAX];
	struct stat st;
	int r = get_string(p, n, key, &s);

	if (r < 0)
		return r;
	if (s[0] == '/')
		r = snprintf(buf, sizeof(buf), "%s", s);
	else
		r = snprintf(buf, sizeof(buf), "%s/%s", p->dir, s);
	if (r < 0 || (size_t)r >= sizeof(buf))
		return perr(p, n, key, "path '%s' is too long", s);
	if (stat(buf, &st) < 0)
		return perr(p, n, key, "%s: %s", buf, strerror(errno));
	if (type == S_IFDIR && !S_ISDIR(st.st_mode))
		return perr(p, n, key, "%s: not a directory", buf);
	if (type == S_IFREG && !S_ISREG(st.st_mode))
		return perr(p, n, key, "%s: not a regular file", buf);
	*ret = realpath(buf, NULL);
	return *ret ? 0 : -ENOMEM;
}

static int get_fstype(struct pctx *p, const yaml_node_t *n, const char *key, enum ra_fstype *ret)
{
	const char *s;
	int r = get_string(p, n, key, &s);

	if (r < 0)
		return r;
	if (!strcmp(s, "squashfs"))
		*ret = RA_FS_SQUASHFS;
	else if (!strcmp(s, "erofs"))
		*ret = RA_FS_EROFS;
	else if (!strcmp(s, "auto"))
		*ret = RA_FS_AUTO;
	else
		return perr(p, n, key, "unknown image type '%s' (expected squashfs, erofs or auto)", s);
	return 0;
}

static const struct {
	const char *name;
	uint64_t set, clr;
} attr_table[] = {
	{ "ro",		MOUNT_ATTR_RDONLY,	0 },
	{ "rw",		0,			MOUNT_ATTR_RDONLY },
	{ "nosuid",	MOUNT_ATTR_NOSUID,	0 },
	{ "nodev",	MOUNT_ATTR_NODEV,	0 },
	{ "noexec",	MOUNT_ATTR_NOEXEC,	0 },
	{ "nosymfollow", MOUNT_ATTR_NOSYMFOLLOW, 0 },
	{ "nodiratime",	MOUNT_ATTR_NODIRATIME,	0 },
	{ "noatime",	MOUNT_ATTR_NOATIME,	MOUNT_ATTR__ATIME },
	{ "relatime",	MOUNT_ATTR_RELATIME,	MOUNT_ATTR__ATIME },
	{ "strictatime", MOUNT_ATTR_STRICTATIME, MOUNT_ATTR__ATIME },
};

static const struct {
	const char *name;
	uint64_t flag;
} prop_table[] = {
	{ "private", MS_PRIVATE },
	{ "shared", MS_SHARED },
	{ "slave", MS_SLAVE },
	{ "unbindable", MS_UNBINDABLE },
};

/* One tmpfs option, from the mapping form or a "name=value" option: size, nr_inodes, mode. */
static int set_tmpfs_opt(struct pctx *p, const yaml_node_t *n, const char *key, const char *name,
			 const char *v, struct ra_tmpfs *t)
{
	if (!strcmp(name, "size")) {
		if (check_size(v) < 0)
			return perr(p, n, key, "bad size '%s' (expected bytes with an optional k/m/g/t suffix, or 1-100%%)", v);
		free(t->size);
		t->size = strdup(v);
		return t->size ? 0 : -ENOMEM;
	}
	if (!strcmp(name, "nr_inodes")) {
		if (check_size(v) < 0 || strchr(v, '%'))
			return perr(p, n, key, "bad nr_inodes '%s'", v);
		free(t->nr_inodes);
		t->nr_inodes = strdup(v);
		return t->nr_inodes ? 0 : -ENOMEM;
	}
	if (!strcmp(name, "mode")) {
		int r = get_mode(p, n, key, v, &t->mode);

		t->has_mode = r == 0;
		return r;
	}
	return 1;	/* not a tmpfs option */
}

enum { OPT_ATTRS = 1, OPT_RECURSIVE = 2, OPT_TMPFS = 4 };

static int parse_options(struct pctx *p, yaml_node_t *seq, const char *where, unsigned int allow,
			 struct ra_attrs *a, struct ra_tmpfs *t)
{
	char key[96];
	size_t i = 0;
	int r = want(p, seq, where, YAML_SEQUENCE_NODE);

	if (r < 0)
		return r;
	for (yaml_node_item_t *it = seq->data.sequence.items.start;
	     it < seq->data.sequence.items.top; it++, i++) {
		yaml_node_t *n = node(p, *it);
		const char *s, *eq;
		bool found = false;

		snprintf(key, sizeof(key), "%s[%zu]", where, i);
		r = get_string(p, n, key, &s);
		if (r < 0)
			return r;
		for (size_t j = 0; j < ARRAY_SIZE(attr_table) && !found; j++) {
			if (strcmp(s, attr_table[j].name))
				continue;
			a->set = (a->set & ~attr_table[j].clr) | attr_table[j].set;
			a->clr |= attr_table[j].clr;
			if (attr_table[j].clr == MOUNT_ATTR_RDONLY)
				a->set &= ~MOUNT_ATTR_RDONLY;
			found = true;
		}
		for (size_t j = 0; j < ARRAY_SIZE(prop_table) && !found; j++) {
			if (strcmp(s, prop_table[j].name))
				continue;
			if (a->propagation)
				return perr(p, n, key, "more than one propagation type");
			a->propagation = prop_table[j].flag;
			found = true;
		}
		if (found)
			continue;
		if (!strcmp(s, "recursive") && (allow & OPT_RECURSIVE)) {
			a->recursive = true;
			continue;
		}
		eq = strchr(s, '=');
		if (eq && (allow & OPT_TMPFS)) {
			char name[16];

			snprintf(name, sizeof(name), "%.*s", (int)(eq - s), s);
			r = set_tmpfs_opt(p, n, key, name, eq + 1, t);
			if (r < 0)
				return r;
			if (r == 0)
				continue;
		}
		return perr(p, n, key, "unknown option '%s' (expected %s)", s,
			    allow & OPT_TMPFS ? "ro, rw, nosuid, nodev, noexec, nosymfollow, noatime, relatime, strictatime, nodiratime, private, shared, slave, unbindable, size=, mode=, nr_inodes=" :
			    allow & OPT_RECURSIVE ? "ro, rw, nosuid, nodev, noexec, nosymfollow, noatime, relatime, strictatime, nodiratime, private, shared, slave, unbindable, recursive" :
			    "ro, rw, nosuid, nodev, noexec, nosymfollow, noatime, relatime, strictatime, nodiratime, private, shared, slave, unbindable");
	}
	return 0;
}

static int parse_tmpfs_map(struct pctx *p, yaml_node_t *map, const char *where, struct ra_tmpfs *t)
{
	static const char *const keys[] = { "size", "mode", "nr_inodes", NULL };
	char key[96];
	yaml_node_t *v;
	const char *s;
	int r;

	if (is_null(map))
		return 0;
	r = want(p, map, where, YAML_MAPPING_NODE);
	if (r < 0)
		return r;
	r = check_keys(p, map, where, keys);
	if (r < 0)
		return r;
	for (const char *const *k = keys; *k; k++) {
		if (!(v = lookup(p, map, *k)))
			continue;
		snprintf(key, sizeof(key), "%s.%s", where, *k);
		r = get_string(p, v, key, &s);
		if (r < 0)
			return r;
		r = set_tmpfs_opt(p, v, key, *k, s, t);
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_ranges(struct pctx *p, yaml_node_t *seq, const char *where, struct ra_idrange **ret,
			size_t *n)
{
	size_t cnt, i = 0;
	int r = want(p, seq, where, YAML_SEQUENCE_NODE);

	if (r < 0)
		return r;
	cnt = seq->data.sequence.items.top - seq->data.sequence.items.start;
	if (cnt == 0 || cnt > RA_MAX_IDRANGES)
		return perr(p, seq, where, "expected 1 to %d ranges, got %zu", RA_MAX_IDRANGES, cnt);
	*ret = calloc(cnt, sizeof(**ret));
	if (!*ret)
		return -ENOMEM;
	for (yaml_node_item_t *it = seq->data.sequence.items.start;
	     it < seq->data.sequence.items.top; it++, i++) {
		yaml_node_t *nd = node(p, *it);
		char key[96], num[3][16];
		uint64_t v[3];
		const char *s;

		snprintf(key, sizeof(key), "%s[%zu]", where, i);
		r = get_string(p, nd, key, &s);
		if (r < 0)
			return r;
		if (sscanf(s, "%15[0-9]:%15[0-9]:%15[0-9]", num[0], num[1], num[2]) != 3 ||
		    strspn(s, "0123456789:") != strlen(s) ||
		    parse_u64(num[0], 10, 4294967294ULL, &v[0]) < 0 ||
		    parse_u64(num[1], 10, 4294967294ULL, &v[1]) < 0 ||
		    parse_u64(num[2], 10, 4294967295ULL, &v[2]) < 0 || v[2] == 0 ||
		    v[0] + v[2] > 4294967295ULL || v[1] + v[2] > 4294967295ULL)
			return perr(p, nd, key, "expected a range 'inside:outside:count', got '%s'", s);
		(*ret)[i] = (struct ra_idrange){ v[0], v[1], v[2] };
		*n = i + 1;
	}
	return 0;
}

static int parse_idmap(struct pctx *p, yaml_node_t *m, const char *where, struct ra_idmap *im)
{
	static const char *const keys[] = { "userns", "uids", "gids", NULL };
	yaml_node_t *ns, *u, *g;
	char key[96];
	int r = want(p, m, where, YAML_MAPPING_NODE);

	if (r < 0)
		return r;
	r = check_keys(p, m, where, keys);
	if (r < 0)
		return r;
	ns = lookup(p, m, "userns");
	u = lookup(p, m, "uids");
	g = lookup(p, m, "gids");
	im->set = true;
	if (ns) {
		if (u || g)
			return perr(p, m, where, "give either 'userns' or 'uids' and 'gids', not both");
		snprintf(key, sizeof(key), "%s.userns", where);
		return get_source(p, ns, key, 0, &im->userns);
	}
	if (!u || !g)
		return perr(p, m, where, "needs 'userns', or both 'uids' and 'gids'");
	snprintf(key, sizeof(key), "%s.uids", where);
	r = parse_ranges(p, u, key, &im->uids, &im->nuids);
	if (r < 0)
		return r;
	snprintf(key, sizeof(key), "%s.gids", where);
	return parse_ranges(p, g, key, &im->gids, &im->ngids);
}

static int parse_layers(struct pctx *p, yaml_node_t *seq, struct rootasm_layout *l)
{
	static const char *const keys[] = { "image", "dir", "type", "idmap", NULL };
	size_t n, i = 0;
	int r = want(p, seq, "layers", YAML_SEQUENCE_NODE);

	if (r < 0)
		return r;
	n = seq->data.sequence.items.top - seq->data.sequence.items.start;
	if (n == 0)
		return perr(p, seq, "layers", "at least one layer is needed");
	if (n > RA_MAX_LAYERS)
		return perr(p, seq, "layers", "%zu layers; overlayfs takes at most %d", n, RA_MAX_LAYERS);
	l->layers = calloc(n, sizeof(*l->layers));
	if (!l->layers)
		return -ENOMEM;
	for (yaml_node_item_t *it = seq->data.sequence.items.start;
	     it < seq->data.sequence.items.top; it++, i++) {
		yaml_node_t *m = node(p, *it), *img, *dir, *ty, *idm;
		struct ra_layer *ly = &l->layers[i];
		char key[64];

		l->nlayers = i + 1;
		snprintf(key, sizeof(key), "layers[%zu]", i);
		r = want(p, m, key, YAML_MAPPING_NODE);
		if (r < 0)
			return r;
		r = check_keys(p, m, key, keys);
		if (r < 0)
			return r;
		img = lookup(p, m, "image");
		dir = lookup(p, m, "dir");
		ty = lookup(p, m, "type");
		ly->loc = loc_of(m);
		if ((idm = lookup(p, m, "idmap"))) {
			snprintf(key, sizeof(key), "layers[%zu].idmap", i);
			r = parse_idmap(p, idm, key, &ly->idmap);
			if (r < 0)
				return r;
			snprintf(key, sizeof(key), "layers[%zu]", i);
		}
		if (!!img == !!dir)
			return perr(p, m, key, "a layer needs exactly one of 'image' or 'dir'");
		if (ty && !img)
			return perr(p, ty, key, "'type' applies to image layers only");
		if (img) {
			snprintf(key, sizeof(key), "layers[%zu].image", i);
			ly->kind = RA_LAYER_IMAGE;
			r = get_source(p, img, key, S_IFREG, &ly->path);
			if (r < 0)
				return r;
			if (ty) {
				snprintf(key, sizeof(key), "layers[%zu].type", i);
				r = get_fstype(p, ty, key, &ly->fstype);
				if (r < 0)
					return r;
			}
		} else {
			snprintf(key, sizeof(key), "layers[%zu].dir", i);
			ly->kind = RA_LAYER_DIR;
			r = get_source(p, dir, key, S_IFDIR, &ly->path);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static int parse_upper(struct pctx *p, yaml_node_t *m, struct rootasm_layout *l)
{
	static const char *const keys[] = { "tmpfs", "dir", NULL };
	yaml_node_t *t, *d;
	int r = want(p, m, "upper", YAML_MAPPING_NODE);

	if (r < 0)
		return r;
	r = check_keys(p, m, "upper", keys);
	if (r < 0)
		return r;
	t = lookup(p, m, "tmpfs");
	d = lookup(p, m, "dir");
	l->upper.loc = loc_of(m);
	if (!!t == !!d)
		return perr(p, m, "upper", "needs exactly one of 'tmpfs' or 'dir'");
	if (t) {
		l->upper.kind = RA_UPPER_TMPFS;
		return parse_tmpfs_map(p, t, "upper.tmpfs", &l->upper.tmpfs);
	}
	l->upper.kind = RA_UPPER_DIR;
	return get_source(p, d, "upper.dir", S_IFDIR, &l->upper.path);
}

static int parse_caps(struct pctx *p, yaml_node_t *seq, uint64_t *ret)
{
	size_t i = 0;
	int r = want(p, seq, "overlay.override_creds.capabilities", YAML_SEQUENCE_NODE);

	if (r < 0)
		return r;
	*ret = 0;
	for (yaml_node_item_t *it = seq->data.sequence.items.start;
	     it < seq->data.sequence.items.top; it++, i++) {
		yaml_node_t *n = node(p, *it);
		char key[96], name[64];
		const char *s;
		cap_value_t cap;
		size_t j;

		snprintf(key, sizeof(key), "overlay.override_creds.capabilities[%zu]", i);
		r = get_string(p, n, key, &s);
		if (r < 0)
			return r;
		if (strlen(s) + 5 > sizeof(name))
			return perr(p, n, key, "unknown capability '%s'", s);
		/* CAP_SYS_ADMIN, cap_sys_admin and sys_admin all name the same one */
		j = snprintf(name, sizeof(name), "%s%s", strncasecmp(s, "cap_", 4) ? "cap_" : "", s);
		for (j = 0; name[j]; j++)
			name[j] = tolower((unsigned char)name[j]);
		if (cap_from_name(name, &cap) < 0 || cap < 0 || cap > 63 || isdigit((unsigned char)s[0]))
			return perr(p, n, key, "unknown capability '%s'", s);
		if (*ret & (1ULL << cap))
			return perr(p, n, key, "capability '%s' listed twice", s);
		*ret |= 1ULL << cap;
	}
	return 0;
}

static int parse_overlay(struct pctx *p, yaml_node_t *m, struct rootasm_layout *l)
{
	static const char *const keys[] = { "override_creds", NULL };
	static const char *const ckeys[] = { "uid", "gid", "groups", "capabilities", NULL };
	struct ra_creds *c = &l->creds;
	yaml_node_t *oc, *v;
	size_t i = 0;
	int r = want(p, m, "overlay", YAML_MAPPING_NODE);

	if (r < 0)
		return r;
	r = check_keys(p, m, "overlay", keys);
	if (r < 0)
		return r;
	oc = lookup(p, m, "override_creds");
	if (!oc)
		return 0;
	r = want(p, oc, "overlay.override_creds", YAML_MAPPING_NODE);
	if (r < 0)
		return r;
	r = check_keys(p, oc, "overlay.override_creds", ckeys);
	if (r < 0)
		return r;
	c->set = true;
	c->loc = loc_of(oc);
	if (!(v = lookup(p, oc, "uid")))
		return perr(p, oc, "overlay.override_creds", "missing key 'uid'");
	r = get_id(p, v, "overlay.override_creds.uid", &c->uid);
	if (r < 0)
		return r;
	if (!(v = lookup(p, oc, "gid")))
		return perr(p, oc, "overlay.override_creds", "missing key 'gid'");
	r = get_id(p, v, "overlay.override_creds.gid", &c->gid);
	if (r < 0)
		return r;
	if ((v = lookup(p, oc, "groups"))) {
		size_t n;

		r = want(p, v, "overlay.override_creds.groups", YAML_SEQUENCE_NODE);
		if (r < 0)
			return r;
		n = v->data.sequence.items.top - v->data.sequence.items.start;
		if (n > RA_MAX_GROUPS)
			return perr(p, v, "overlay.override_creds.groups", "%zu groups; at most %d", n, RA_MAX_GROUPS);
		c->groups = calloc(n ? n : 1, sizeof(gid_t));
		if (!c->groups)
			return -ENOMEM;
		for (yaml_node_item_t *it = v->data.sequence.items.start;
		     it < v->data.sequence.items.top; it++, i++) {
			char key[96];

			snprintf(key, sizeof(key), "overlay.override_creds.groups[%zu]", i);
			r = get_id(p, node(p, *it), key, &c->groups[i]);
			if (r < 0)
				return r;
			c->ngroups = i + 1;
		}
	}
	if ((v = lookup(p, oc, "capabilities"))) {
		r = parse_caps(p, v, &c->caps);
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_mount(struct pctx *p, yaml_node_t *m, size_t i, struct ra_mount *mt)
{
	static const char *const keys[] = { "bind", "tmpfs", "image", "layout", "target", "options", "type",
					    "idmap", NULL };
	static const char *const kinds[] = { "bind", "tmpfs", "image", "layout" };
	yaml_node_t *kind_node = NULL, *v;
	char key[96], where[64];
	unsigned int allow = OPT_ATTRS;
	int nkinds = 0, r;

	snprintf(where, sizeof(where), "mounts[%zu]", i);
	r = want(p, m, where, YAML_MAPPING_NODE);
	if (r < 0)
		return r;
	r = check_keys(p, m, where, keys);
	if (r < 0)
		return r;
	mt->loc = loc_of(m);
	for (size_t k = 0; k < ARRAY_SIZE(kinds); k++) {
		if ((v = lookup(p, m, kinds[k]))) {
			kind_node = v;
			mt->kind = (enum ra_mount_kind)k;
			nkinds++;
		}
	}
	if (nkinds != 1)
		return perr(p, m, where, "a mount needs exactly one of 'bind', 'tmpfs', 'image' or 'layout'");
	snprintf(key, sizeof(key), "%s.%s", where, kinds[mt->kind]);
	v = lookup(p, m, "target");
	switch (mt->kind) {
	case RA_MOUNT_TMPFS:
		/* "tmpfs: /tmp" names the target itself */
		if (v)
			return perr(p, v, where, "a tmpfs mount names its target in 'tmpfs'; drop 'target'");
		r = get_target(p, kind_node, key, &mt->target);
		allow |= OPT_TMPFS;
		break;
	case RA_MOUNT_BIND:
		allow |= OPT_RECURSIVE;
		r = get_source(p, kind_node, key, 0, &mt->source);
		break;
	case RA_MOUNT_IMAGE:
		r = get_source(p, kind_node, key, S_IFREG, &mt->source);
		break;
	case RA_MOUNT_LAYOUT:
		r = get_source(p, kind_node, key, S_IFREG, &mt->source);
		break;
	}
	if (r < 0)
		return r;
	if (mt->kind != RA_MOUNT_TMPFS) {
		if (!v)
			return perr(p, m, where, "missing key 'target'");
		snprintf(key, sizeof(key), "%s.target", where);
		r = get_target(p, v, key, &mt->target);
		if (r < 0)
			return r;
	}
	if ((v = lookup(p, m, "type"))) {
		snprintf(key, sizeof(key), "%s.type", where);
		if (mt->kind != RA_MOUNT_IMAGE)
			return perr(p, v, key, "'type' applies to image mounts only");
		r = get_fstype(p, v, key, &mt->fstype);
		if (r < 0)
			return r;
	}
	if ((v = lookup(p, m, "options"))) {
		snprintf(key, sizeof(key), "%s.options", where);
		if (mt->kind == RA_MOUNT_LAYOUT)
			return perr(p, v, key, "a nested layout sets its own 'attributes'; 'options' does not apply");
		r = parse_options(p, v, key, allow, &mt->attrs, &mt->tmpfs);
		if (r < 0)
			return r;
	}
	if ((v = lookup(p, m, "idmap"))) {
		snprintf(key, sizeof(key), "%s.idmap", where);
		if (mt->kind != RA_MOUNT_BIND && mt->kind != RA_MOUNT_IMAGE)
			return perr(p, v, key, "'idmap' applies to bind and image mounts only");
		r = parse_idmap(p, v, key, &mt->idmap);
		if (r < 0)
			return r;
	}
	if (mt->kind == RA_MOUNT_LAYOUT) {
		_cleanup_free_ char *real = realpath(mt->source, NULL);

		snprintf(key, sizeof(key), "%s.layout", where);
		for (int d = 0; real && d <= p->depth && d < RA_MAX_DEPTH; d++)
			if (!strcmp(load_stack[d], real))
				return perr(p, kind_node, key, "layout %s includes itself (a cycle)", mt->source);
		if (p->depth + 1 >= RA_MAX_DEPTH)
			return perr(p, kind_node, key, "layouts nested deeper than %d", RA_MAX_DEPTH);
		r = rootasm_layout_load_depth(mt->source, p->depth + 1, &mt->nested, p->e);
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_mounts(struct pctx *p, yaml_node_t *seq, struct rootasm_layout *l)
{
	size_t n, i = 0;
	int r = want(p, seq, "mounts", YAML_SEQUENCE_NODE);

	if (r < 0)
		return r;
	n = seq->data.sequence.items.top - seq->data.sequence.items.start;
	if (n > RA_MAX_MOUNTS)
		return perr(p, seq, "mounts", "%zu mounts; at most %d", n, RA_MAX_MOUNTS);
	l->mounts = calloc(n ? n : 1, sizeof(*l->mounts));
	if (!l->mounts)
		return -ENOMEM;
	for (yaml_node_item_t *it = seq->data.sequence.items.start;
	     it < seq->data.sequence.items.top; it++, i++) {
		l->nmounts = i + 1;
		r = parse_mount(p, node(p, *it), i, &l->mounts[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_exec(struct pctx *p, yaml_node_t *m, struct rootasm_layout *l)
{
	static const char *const keys[] = { "deny_mount_api", NULL };
	yaml_node_t *v;
	int r = want(p, m, "exec", YAML_MAPPING_NODE);

	if (r < 0)
		return r;
	r = check_keys(p, m, "exec", keys);
	if (r < 0)
		return r;
	if ((v = lookup(p, m, "deny_mount_api")))
		return get_bool(p, v, "exec.deny_mount_api", &l->deny_mount_api);
	return 0;
}

static int parse_root(struct pctx *p, yaml_node_t *root, struct rootasm_layout *l)
{
	static const char *const keys[] = { "version", "layers", "upper", "overlay", "mounts",
					    "attributes", "exec", NULL };
	yaml_node_t *v;
	int r;

	if (!root)
		return perr(p, NULL, "", "empty layout");
	r = want(p, root, "(top level)", YAML_MAPPING_NODE);
	if (r < 0)
		return r;
	r = check_keys(p, root, "(top level)", keys);
	if (r < 0)
		return r;
	if (!(v = lookup(p, root, "version")))
		return perr(p, root, "version", "missing key 'version' (this tool reads version: 1)");
	if (v->type != YAML_SCALAR_NODE || strcmp(scalar(v), "1"))
		return perr(p, v, "version", "unsupported version '%s' (this tool reads version: 1)",
			    v->type == YAML_SCALAR_NODE ? scalar(v) : node_type(v));
	if (!(v = lookup(p, root, "layers")))
		return perr(p, root, "layers", "missing key 'layers'");
	r = parse_layers(p, v, l);
	if (r < 0)
		return r;
	if ((v = lookup(p, root, "upper")) && !is_null(v)) {
		r = parse_upper(p, v, l);
		if (r < 0)
			return r;
	}
	if ((v = lookup(p, root, "overlay"))) {
		r = parse_overlay(p, v, l);
		if (r < 0)
			return r;
		if (l->creds.set && l->nlayers < 2 && l->upper.kind == RA_UPPER_NONE)
			return perr(p, v, "overlay.override_creds",
				    "a single read-only layer is not an overlay; add a layer or an upper");
	}
	if ((v = lookup(p, root, "mounts"))) {
		r = parse_mounts(p, v, l);
		if (r < 0)
			return r;
	}
	if ((v = lookup(p, root, "attributes"))) {
		r = parse_options(p, v, "attributes", OPT_ATTRS, &l->attributes, NULL);
		if (r < 0)
			return r;
	}
	if ((v = lookup(p, root, "exec"))) {
		r = parse_exec(p, v, l);
		if (r < 0)
			return r;
	}
	return 0;
}

int ra_layout_parse(const char *buf, size_t len, const char *file, const char *dir, int depth,
		    struct rootasm_layout **ret, struct rootasm_error *e)
{
	struct rootasm_layout *l;
	yaml_parser_t parser;
	yaml_document_t doc;
	struct pctx p = { .doc = &doc, .file = file, .dir = dir, .depth = depth, .e = e };
	int r;

	if (len > RA_LAYOUT_MAX_BYTES)
		return perr(&p, NULL, "", "layout is %zu bytes; at most %u", len, RA_LAYOUT_MAX_BYTES);
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->deny_mount_api = true;
	l->file = strdup(file);
	l->dir = strdup(dir);
	if (!yaml_parser_initialize(&parser)) {
		rootasm_layout_free(l);
		return -ENOMEM;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&parser, &doc)) {
		if (e) {
			memset(e, 0, sizeof(*e));
			e->err = EINVAL;
			e->usage = true;
			snprintf(e->file, sizeof(e->file), "%s", file);
			e->line = parser.problem_mark.line + 1;
			e->column = parser.problem_mark.column + 1;
			snprintf(e->op, sizeof(e->op), "syntax");
			snprintf(e->msg, sizeof(e->msg), "%s%s%s", parser.problem ? parser.problem : "malformed YAML",
				 parser.context ? " " : "", parser.context ? parser.context : "");
		}
		yaml_parser_delete(&parser);
		rootasm_layout_free(l);
		return -EINVAL;
	}
	r = parse_root(&p, yaml_document_get_root_node(&doc), l);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	if (r < 0) {
		rootasm_layout_free(l);
		return r;
	}
	*ret = l;
	return 0;
}

int rootasm_layout_load_depth(const char *path, int depth, struct rootasm_layout **ret,
			      struct rootasm_error *e)
{
	_cleanup_close_ int fd = -EBADF;
	_cleanup_free_ char *buf = NULL, *abs = NULL;
	struct stat st;
	size_t len = 0;
	char *dir;
	int r;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 || fstat(fd, &st) < 0) {
		r = ra_err(e, errno, -EBADF, "open layout", path, NULL);
		if (e)
			e->usage = true, snprintf(e->file, sizeof(e->file), "%s", path);
		return r;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > RA_LAYOUT_MAX_BYTES) {
		r = ra_err(e, S_ISREG(st.st_mode) ? EFBIG : EINVAL, -EBADF, "open layout", path,
			   S_ISREG(st.st_mode) ? "larger than %u bytes" : "not a regular file%.0u",
			   RA_LAYOUT_MAX_BYTES);
		if (e)
			e->usage = true;
		return r;
	}
	buf = malloc(st.st_size + 1);
	if (!buf)
		return -ENOMEM;
	while (len < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + len, st.st_size - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return ra_err(e, errno, -EBADF, "read layout", path, NULL);
		if (n == 0)
			break;
		len += n;
	}
	buf[len] = '\0';
	abs = realpath(path, NULL);
	if (!abs)
		return ra_err(e, errno, -EBADF, "resolve layout", path, NULL);
	if (depth < RA_MAX_DEPTH)
		snprintf(load_stack[depth], sizeof(load_stack[depth]), "%s", abs);
	dir = dirname(abs);
	return ra_layout_parse(buf, len, path, dir, depth, ret, e);
}

int rootasm_layout_load(const char *path, struct rootasm_layout **ret, struct rootasm_error *e)
{
	return rootasm_layout_load_depth(path, 0, ret, e);
}

static void idmap_free(struct ra_idmap *m)
{
	free(m->userns);
	free(m->uids);
	free(m->gids);
}

static void tmpfs_free(struct ra_tmpfs *t)
{
	free(t->size);
	free(t->nr_inodes);
}

void rootasm_layout_free(struct rootasm_layout *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->nlayers; i++) {
		free(l->layers[i].path);
		idmap_free(&l->layers[i].idmap);
	}
	free(l->layers);
	for (size_t i = 0; i < l->nmounts; i++) {
		free(l->mounts[i].source);
		free(l->mounts[i].target);
		tmpfs_free(&l->mounts[i].tmpfs);
		idmap_free(&l->mounts[i].idmap);
		rootasm_layout_free(l->mounts[i].nested);
	}
	free(l->mounts);
	free(l->upper.path);
	tmpfs_free(&l->upper.tmpfs);
	free(l->creds.groups);
	free(l->file);
	free(l->dir);
	free(l);
}

const char *ra_cap_name(unsigned int cap)
{
	static char buf[64];
	char *s = cap_to_name(cap);

	snprintf(buf, sizeof(buf), "%s", s ? s : "?");
	cap_free(s);
	return buf;
}

bool rootasm_layout_deny_mount_api(const struct rootasm_layout *l)
{
	return l->deny_mount_api;
}
