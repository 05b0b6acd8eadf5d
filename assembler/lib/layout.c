// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The parse stage: YAML (or JSON, which YAML reads) -> struct rootasm_layout.
 *
 * It owns the text and nothing else: no stat(), realpath() or open(); a host
 * path is kept as written (struct ra_src), and the open stage (open.c) turns
 * it into an fd. The fuzz target runs this stage with no filesystem at all.
 *
 * Every diagnostic names file:line:column, the key (as a path such as
 * "mounts[2].options[1]"), and what was expected. Every problem is reported
 * (through struct ra_diag), not only the first: after an error the parser
 * goes on with the next list item or top-level key. Every user-controlled
 * size has a cap (layout.h), checked before it costs anything: the YAML
 * nesting depth, the number of documents and aliases are counted in an event
 * pass before libyaml builds the document.
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/mount.h>
#include <yaml.h>

#include "layout.h"
#include "passwd.h"
#include "util.h"

/*
 * The document, built from libyaml's events by build_doc() (not by
 * yaml_parser_load(), which leaks on some allocation failures and counts
 * nothing): scalars, lists and mappings as nodes in one table, aliases as
 * references to the anchored node.
 */
struct ypair {
	int key, value;
};

struct ynode {
	int type;				/* YAML_SCALAR_NODE, YAML_SEQUENCE_NODE, YAML_MAPPING_NODE */
	struct ra_loc loc;
	char *value;				/* scalar (NUL-terminated; length may tell of NULs inside) */
	size_t length;
	int style;
	int *items;				/* sequence: node indices */
	struct ypair *pairs;			/* mapping */
	size_t n, cap;
	bool open;				/* a collection not ended yet */
	bool want_value;			/* a mapping whose last key has no value yet */
};

struct yanchor {
	char *name;
	int id;
};

struct ydoc {
	struct ynode *nodes;
	size_t n, cap;
	int root;				/* -1: empty */
	struct yanchor *anchors;
	size_t nanchors, acap;
};

struct pctx {
	struct ydoc *doc;
	const char *file;
	const char *dir;
	struct ra_diag *d;
	struct rootasm_error *e;
	int oom;				/* -ENOMEM once an allocation failed */
};

int ra_layout_err(struct ra_diag *d, struct rootasm_error *e, const char *file, struct ra_loc loc,
		  const char *key, const char *fmt, ...)
{
	struct rootasm_error one, *t = e && (!d || !d->count) ? e : &one;
	va_list ap;

	memset(t, 0, sizeof(*t));
	t->err = EINVAL;
	t->kind = ROOTASM_ERROR_USAGE;
	snprintf(t->file, sizeof(t->file), "%s", file);
	if (t == e)
		ra_err_long(e, NULL, file);
	t->line = loc.line;
	t->column = loc.column;
	snprintf(t->op, sizeof(t->op), "%s", key ? key : "");
	va_start(ap, fmt);
	vsnprintf(t->msg, sizeof(t->msg), fmt, ap);
	va_end(ap);
	if (d) {
		d->count++;
		if (d->fn)
			d->fn(t, d->userdata);
	}
	return -EINVAL;
}

static struct ra_loc loc_of(const struct ynode *n)
{
	return n ? n->loc : (struct ra_loc){ 0, 0 };
}

#define perr(p, n, key, ...) ra_layout_err((p)->d, (p)->e, (p)->file, loc_of(n), key, __VA_ARGS__)

/* Out of memory: remembered, so that the whole parse ends with ENOMEM. */
static int poom(struct pctx *p, const char *what)
{
	p->oom = -ENOMEM;
	return ra_oom(p->e, what);
}

/* An error in one item of a list: go on with the next one; anything else ends the parse. */
static bool go_on(int r)
{
	return r == -EINVAL;
}

static const char *node_type(const struct ynode *n)
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

static int want(struct pctx *p, const struct ynode *n, const char *key, int t)
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

static const char *scalar(const struct ynode *n)
{
	return n->value;
}

/* A plain scalar that YAML would read as null: "~", "null" or nothing. */
static bool is_null(const struct ynode *n)
{
	const char *s;

	if (n->type != YAML_SCALAR_NODE || n->style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	s = scalar(n);
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL");
}

/* A scalar holds no NUL (it would cut a path short) and no control character. */
static int clean_scalar(struct pctx *p, const struct ynode *n, const char *key)
{
	const unsigned char *s = (const unsigned char *)n->value;

	for (size_t i = 0; i < n->length; i++) {
		if (!s[i])
			return perr(p, n, key, "value contains a NUL character (at byte %zu)", i);
		if (s[i] < 0x20 || s[i] == 0x7f)
			return perr(p, n, key, "value contains the control character 0x%02x (at byte %zu)", s[i], i);
	}
	return 0;
}

static int get_string(struct pctx *p, const struct ynode *n, const char *key, const char **ret)
{
	int r = want(p, n, key, YAML_SCALAR_NODE);

	if (r < 0)
		return r;
	if (is_null(n) || !n->length)
		return perr(p, n, key, "expected a non-empty string");
	r = clean_scalar(p, n, key);
	if (r < 0)
		return r;
	if (n->length >= RA_PATH_MAX)
		return perr(p, n, key, "value longer than %d bytes", RA_PATH_MAX - 1);
	*ret = scalar(n);
	return 0;
}

static int get_bool(struct pctx *p, const struct ynode *n, const char *key, bool *ret)
{
	int r = want(p, n, key, YAML_SCALAR_NODE);

	if (r < 0)
		return r;
	if (!strcmp(scalar(n), "true") && n->length == 4)
		*ret = true;
	else if (!strcmp(scalar(n), "false") && n->length == 5)
		*ret = false;
	else
		return perr(p, n, key, "expected true or false");
	return 0;
}

/* The one checked number parser: digits only (decimal, or octal with @base 8), no sign, no junk. */
static int parse_u64(const char *s, int base, uint64_t max, uint64_t *ret)
{
	unsigned long long v;
	char *end;

	if (!*s || strspn(s, base == 8 ? "01234567" : "0123456789") != strlen(s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno || *end || v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

static int get_id(struct pctx *p, const struct ynode *n, const char *key, uint32_t *ret)
{
	uint64_t v;
	int r = want(p, n, key, YAML_SCALAR_NODE);

	if (r == 0)
		r = clean_scalar(p, n, key);
	if (r < 0)
		return r;
	/* (uid_t)-1 means "no change" to the kernel: never a valid id */
	if (parse_u64(scalar(n), 10, 4294967294ULL, &v) < 0)
		return perr(p, n, key, "expected an id between 0 and 4294967294, got '%s'", scalar(n));
	*ret = v;
	return 0;
}

#define RA_SIZE_MAX	(1ULL << 62)	/* 4 EiB: far beyond any tmpfs, far from wrapping */

/*
 * A tmpfs size or inode count: digits with an optional k/m/g/t/p/e suffix
 * (powers of 1024, as the kernel's memparse() reads them), or for a size a
 * percentage of RAM. 0 means "unlimited" to tmpfs: refused, say so instead.
 */
static int check_size(const char *s, bool percent_ok, const char **why)
{
	static const char suffixes[] = "kmgtpe";
	uint64_t v;
	size_t len = strlen(s);
	char num[24];
	unsigned int shift = 0;
	const char *sf;

	*why = "expected bytes with an optional k/m/g/t suffix, or 1-100%";
	if (!len || len >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, len + 1);
	if (num[len - 1] == '%') {
		if (!percent_ok)
			return -EINVAL;
		num[--len] = '\0';
		if (parse_u64(num, 10, 100, &v) < 0 || v == 0)
			return (*why = "a percentage is 1-100%"), -ERANGE;
		return 0;
	}
	if ((sf = strchr(suffixes, tolower((unsigned char)num[len - 1]))) && num[len - 1]) {
		shift = 10 * (unsigned int)(sf - suffixes + 1);
		num[--len] = '\0';
	}
	if (parse_u64(num, 10, UINT64_MAX, &v) < 0)
		return -EINVAL;
	if (v > (RA_SIZE_MAX >> shift))
		return (*why = "larger than 4 EiB: the kernel would wrap it around"), -ERANGE;
	if (v == 0)
		return (*why = "0 means unlimited to tmpfs; give a limit"), -ERANGE;
	return 0;
}

static int get_mode(struct pctx *p, const struct ynode *n, const char *key, const char *s,
		    unsigned int *ret)
{
	uint64_t v;

	if (parse_u64(s, 8, 07777, &v) < 0)
		return perr(p, n, key, "expected an octal mode up to 7777, got '%s'", s);
	*ret = v;
	return 0;
}

/* Iterate a mapping's pairs. */
#define for_pairs(map, pair) \
	for (struct ypair *pair = (map)->pairs; pair < (map)->pairs + (map)->n; pair++)

#define for_items(seq, it) \
	for (int *it = (seq)->items; it < (seq)->items + (seq)->n; it++)

static size_t nitems(const struct ynode *seq)
{
	return seq->n;
}

static struct ynode *node(struct pctx *p, int id)
{
	return &p->doc->nodes[id];
}

/* Keys of @map: scalars, known, each once. */
static int check_keys(struct pctx *p, struct ynode *map, const char *where,
		      const char *const *allowed)
{
	for_pairs(map, a) {
		struct ynode *k = node(p, a->key);
		bool ok = false;
		char buf[256] = "";
		int r;

		if (k->type != YAML_SCALAR_NODE)
			return perr(p, k, where, "keys must be scalars");
		r = clean_scalar(p, k, where);
		if (r < 0)
			return r;
		for (const char *const *s = allowed; *s; s++)
			ok |= !strcmp(*s, scalar(k));
		for (struct ypair *b = map->pairs; b < a; b++) {
			struct ynode *kb = node(p, b->key);

			if (kb->type == YAML_SCALAR_NODE && !strcmp(scalar(kb), scalar(k)))
				return perr(p, k, where, "duplicate key '%s' (first at line %u)",
					    scalar(k), kb->loc.line);
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

static struct ynode *lookup(struct pctx *p, struct ynode *map, const char *key)
{
	for_pairs(map, a) {
		struct ynode *k = node(p, a->key);

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

static int get_target(struct pctx *p, const struct ynode *n, const char *key, char **ret)
{
	char buf[RA_PATH_MAX];
	const char *s;
	int r = get_string(p, n, key, &s);

	if (r < 0)
		return r;
	/*
	 * A target is a name inside the tree, printed in plans and errors: no C1
	 * control (U+0080-U+009F; C0 and DEL are no scalar's) and no bidirectional
	 * formatting character that would show it as another name.
	 */
	for (size_t i = 0, l, len = strlen(s); i < len; i += l) {
		unsigned int cp = 0;

		l = ra_utf8_next(s + i, len - i, &cp);
		if (!l)
			return perr(p, n, key, "target is not UTF-8 (at byte %zu)", i);
		if (ra_char_unsafe(cp))
			return perr(p, n, key, "target contains the %s character U+%04X (at byte %zu)",
				    cp < 0xa0 ? "control" : cp == 0x2028 || cp == 0x2029 ? "line separator" :
				    "bidirectional formatting", cp, i);
	}
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
	return *ret ? 0 : poom(p, "parse target");
}

/*
 * A host-side path, kept as written: the open stage opens it (relative paths
 * from the layout file's directory) and checks what it is.
 */
static int get_source(struct pctx *p, const struct ynode *n, const char *key, enum ra_src_kind kind,
		      struct ra_src *src)
{
	const char *s;
	int r = get_string(p, n, key, &s);

	if (r < 0)
		return r;
	src->kind = kind;
	src->loc = loc_of(n);
	src->fd = -EBADF;
	src->path = strdup(s);
	src->key = strdup(key);
	if (s[0] == '/' || !p->dir)
		src->display = strdup(s);
	else if (asprintf(&src->display, "%s/%s", p->dir, s) < 0)
		src->display = NULL;
	if (!src->path || !src->key || !src->display)
		return poom(p, "parse path");
	if (strlen(src->display) >= RA_PATH_MAX)
		return perr(p, n, key, "path '%s' is too long", src->display);
	return 0;
}

static int get_fstype(struct pctx *p, const struct ynode *n, const char *key, enum ra_fstype *ret)
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

static int set_str(struct pctx *p, char **dst, const char *v)
{
	free(*dst);
	*dst = strdup(v);
	return *dst ? 0 : poom(p, "parse tmpfs option");
}

/* One tmpfs option, from the mapping form or a "name=value" option: size, nr_inodes, mode. */
static int set_tmpfs_opt(struct pctx *p, const struct ynode *n, const char *key, const char *name,
			 const char *v, struct ra_tmpfs *t)
{
	const char *why;

	if (!strcmp(name, "size")) {
		if (check_size(v, true, &why) < 0)
			return perr(p, n, key, "bad size '%s' (%s)", v, why);
		return set_str(p, &t->size, v);
	}
	if (!strcmp(name, "nr_inodes")) {
		if (check_size(v, false, &why) < 0)
			return perr(p, n, key, "bad nr_inodes '%s' (%s)", v,
				    strchr(v, '%') ? "a count, not a percentage" : why);
		return set_str(p, &t->nr_inodes, v);
	}
	if (!strcmp(name, "mode")) {
		int r = get_mode(p, n, key, v, &t->mode);

		t->has_mode = r == 0;
		return r;
	}
	return 1;	/* not a tmpfs option */
}

enum { OPT_ATTRS = 1, OPT_RECURSIVE = 2, OPT_TMPFS = 4 };

static int parse_option(struct pctx *p, struct ynode *n, const char *key, unsigned int allow,
			struct ra_attrs *a, struct ra_tmpfs *t)
{
	const char *s, *eq;
	int r = get_string(p, n, key, &s);

	if (r < 0)
		return r;
	for (size_t j = 0; j < ARRAY_SIZE(attr_table); j++) {
		if (strcmp(s, attr_table[j].name))
			continue;
		a->set = (a->set & ~attr_table[j].clr) | attr_table[j].set;
		a->clr |= attr_table[j].clr;
		if (attr_table[j].clr == MOUNT_ATTR_RDONLY)
			a->set &= ~MOUNT_ATTR_RDONLY;
		return 0;
	}
	for (size_t j = 0; j < ARRAY_SIZE(prop_table); j++) {
		if (strcmp(s, prop_table[j].name))
			continue;
		if (a->propagation)
			return perr(p, n, key, "more than one propagation type");
		a->propagation = prop_table[j].flag;
		return 0;
	}
	if (!strcmp(s, "recursive") && (allow & OPT_RECURSIVE)) {
		a->recursive = true;
		return 0;
	}
	eq = strchr(s, '=');
	if (eq && (allow & OPT_TMPFS) && eq - s < 16) {
		char name[16];

		snprintf(name, sizeof(name), "%.*s", (int)(eq - s), s);
		r = set_tmpfs_opt(p, n, key, name, eq + 1, t);
		if (r <= 0)
			return r;
	}
	return perr(p, n, key, "unknown option '%s' (expected %s)", s,
		    allow & OPT_TMPFS ? "ro, rw, nosuid, nodev, noexec, nosymfollow, noatime, relatime, strictatime, nodiratime, private, shared, slave, unbindable, size=, mode=, nr_inodes=" :
		    allow & OPT_RECURSIVE ? "ro, rw, nosuid, nodev, noexec, nosymfollow, noatime, relatime, strictatime, nodiratime, private, shared, slave, unbindable, recursive" :
		    "ro, rw, nosuid, nodev, noexec, nosymfollow, noatime, relatime, strictatime, nodiratime, private, shared, slave, unbindable");
}

static int parse_options(struct pctx *p, struct ynode *seq, const char *where, unsigned int allow,
			 struct ra_attrs *a, struct ra_tmpfs *t)
{
	size_t i = 0;
	int r = want(p, seq, where, YAML_SEQUENCE_NODE), bad = 0;

	if (r < 0)
		return r;
	if (nitems(seq) > 64)
		return perr(p, seq, where, "%zu options; at most 64", nitems(seq));
	for_items(seq, it) {
		char key[96];

		snprintf(key, sizeof(key), "%s[%zu]", where, i++);
		r = parse_option(p, node(p, *it), key, allow, a, t);
		if (go_on(r))
			bad = r;
		else if (r < 0)
			return r;
	}
	return bad;
}

static int parse_tmpfs_map(struct pctx *p, struct ynode *map, const char *where, struct ra_tmpfs *t)
{
	static const char *const keys[] = { "size", "mode", "nr_inodes", NULL };
	char key[96];
	struct ynode *v;
	const char *s;
	int r;

	if (is_null(map))
		return 0;
	r = want(p, map, where, YAML_MAPPING_NODE);
	if (r == 0)
		r = check_keys(p, map, where, keys);
	if (r < 0)
		return r;
	for (const char *const *k = keys; *k; k++) {
		if (!(v = lookup(p, map, *k)))
			continue;
		snprintf(key, sizeof(key), "%s.%s", where, *k);
		r = get_string(p, v, key, &s);
		if (r == 0)
			r = set_tmpfs_opt(p, v, key, *k, s, t);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * The kernel's capability names, as libcap writes them (cap_to_name()), without
 * its allocation: printing a plan cannot fail, nor print "?" when memory is
 * short. A capability newer than this table is its number, as libcap writes one
 * it does not know.
 */
static const char *const cap_names[] = {
	"cap_chown", "cap_dac_override", "cap_dac_read_search", "cap_fowner", "cap_fsetid",
	"cap_kill", "cap_setgid", "cap_setuid", "cap_setpcap", "cap_linux_immutable",
	"cap_net_bind_service", "cap_net_broadcast", "cap_net_admin", "cap_net_raw",
	"cap_ipc_lock", "cap_ipc_owner", "cap_sys_module", "cap_sys_rawio", "cap_sys_chroot",
	"cap_sys_ptrace", "cap_sys_pacct", "cap_sys_admin", "cap_sys_boot", "cap_sys_nice",
	"cap_sys_resource", "cap_sys_time", "cap_sys_tty_config", "cap_mknod", "cap_lease",
	"cap_audit_write", "cap_audit_control", "cap_setfcap", "cap_mac_override", "cap_mac_admin",
	"cap_syslog", "cap_wake_alarm", "cap_block_suspend", "cap_audit_read", "cap_perfmon",
	"cap_bpf", "cap_checkpoint_restore",
};

const char *ra_cap_name(unsigned int cap, char *buf, size_t size)
{
	if (cap < ARRAY_SIZE(cap_names))
		snprintf(buf, size, "%s", cap_names[cap]);
	else
		snprintf(buf, size, "%u", cap);
	return buf;
}

/* The number of a lower-case "cap_..." name, or -1. */
static int cap_number(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(cap_names); i++)
		if (!strcmp(name, cap_names[i]))
			return (int)i;
	return -1;
}

/* "inside:outside:count": three decimal numbers, nothing else. */
static int parse_range(const char *s, struct ra_idrange *ret)
{
	uint64_t v[3];
	const char *c = s;

	for (int i = 0; i < 3; i++) {
		size_t n = strspn(c, "0123456789");
		char num[16];

		if (!n || n > 10 || c[n] != (i < 2 ? ':' : '\0'))
			return -EINVAL;
		memcpy(num, c, n);
		num[n] = '\0';
		if (parse_u64(num, 10, 4294967295ULL, &v[i]) < 0)
			return -EINVAL;
		c += n + 1;
	}
	/* 4294967295 is no id; a range may end at it, but not start there or wrap */
	if (v[2] == 0 || v[0] + v[2] > 4294967295ULL || v[1] + v[2] > 4294967295ULL)
		return -ERANGE;
	*ret = (struct ra_idrange){ v[0], v[1], v[2] };
	return 0;
}

static bool overlaps(uint32_t a, uint32_t an, uint32_t b, uint32_t bn)
{
	return (uint64_t)a < (uint64_t)b + bn && (uint64_t)b < (uint64_t)a + an;
}

static int parse_ranges(struct pctx *p, struct ynode *seq, const char *where, struct ra_idrange **ret,
			size_t *n)
{
	size_t cnt, i = 0, text = 0;
	int r = want(p, seq, where, YAML_SEQUENCE_NODE);

	if (r < 0)
		return r;
	cnt = nitems(seq);
	if (cnt == 0 || cnt > RA_MAX_IDRANGES)
		return perr(p, seq, where, "expected 1 to %d ranges, got %zu", RA_MAX_IDRANGES, cnt);
	*ret = calloc(cnt, sizeof(**ret));
	if (!*ret)
		return poom(p, "parse id ranges");
	for_items(seq, it) {
		struct ynode *nd = node(p, *it);
		struct ra_idrange *rg = &(*ret)[i];
		char key[96];
		const char *s;

		snprintf(key, sizeof(key), "%s[%zu]", where, i);
		r = get_string(p, nd, key, &s);
		if (r < 0)
			return r;
		r = parse_range(s, rg);
		if (r == -ERANGE)
			return perr(p, nd, key, "range '%s' is empty or runs past 4294967294", s);
		if (r < 0)
			return perr(p, nd, key, "expected a range 'inside:outside:count' of three decimal numbers, got '%s'", s);
		for (size_t j = 0; j < i; j++) {
			const struct ra_idrange *o = &(*ret)[j];

			/* the kernel refuses overlapping ranges on either side */
			if (overlaps(rg->inside, rg->count, o->inside, o->count) ||
			    overlaps(rg->outside, rg->count, o->outside, o->count))
				return perr(p, nd, key, "range '%s' overlaps %s[%zu]", s, where, j);
		}
		text += snprintf(NULL, 0, "%u %u %u\n", rg->inside, rg->outside, rg->count);
		*n = ++i;
	}
	/* what the kernel takes in one write of /proc/PID/uid_map: less than a page */
	if (text > RA_IDMAP_TEXT_MAX)
		return perr(p, seq, where, "the map is %zu bytes as /proc/PID/%s text; the kernel takes at most %d",
			    text, strstr(where, "gids") ? "gid_map" : "uid_map", RA_IDMAP_TEXT_MAX);
	return 0;
}

static int parse_idmap(struct pctx *p, struct ynode *m, const char *where, struct ra_idmap *im)
{
	static const char *const keys[] = { "userns", "uids", "gids", NULL };
	struct ynode *ns, *u, *g;
	char key[96];
	int r = want(p, m, where, YAML_MAPPING_NODE);

	if (r == 0)
		r = check_keys(p, m, where, keys);
	if (r < 0)
		return r;
	ns = lookup(p, m, "userns");
	u = lookup(p, m, "uids");
	g = lookup(p, m, "gids");
	im->set = true;
	im->userns.fd = -EBADF;
	if (ns) {
		if (u || g)
			return perr(p, m, where, "give either 'userns' or 'uids' and 'gids', not both");
		snprintf(key, sizeof(key), "%s.userns", where);
		return get_source(p, ns, key, RA_SRC_USERNS, &im->userns);
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

static int parse_layer(struct pctx *p, struct ynode *m, size_t i, struct ra_layer *ly)
{
	static const char *const keys[] = { "image", "dir", "type", "idmap", "trusted", NULL };
	struct ynode *img, *dir, *ty, *idm, *tr;
	char key[64];
	int r;

	snprintf(key, sizeof(key), "layers[%zu]", i);
	ly->src.fd = -EBADF;
	ly->idmap.userns.fd = -EBADF;
	r = want(p, m, key, YAML_MAPPING_NODE);
	if (r == 0)
		r = check_keys(p, m, key, keys);
	if (r < 0)
		return r;
	img = lookup(p, m, "image");
	dir = lookup(p, m, "dir");
	ty = lookup(p, m, "type");
	ly->loc = loc_of(m);
	if (!!img == !!dir)
		return perr(p, m, key, "a layer needs exactly one of 'image' or 'dir'");
	if (ty && !img)
		return perr(p, ty, key, "'type' applies to image layers only");
	tr = lookup(p, m, "trusted");
	if (tr && !img)
		return perr(p, tr, key, "'trusted' applies to image layers only");
	if ((idm = lookup(p, m, "idmap"))) {
		snprintf(key, sizeof(key), "layers[%zu].idmap", i);
		r = parse_idmap(p, idm, key, &ly->idmap);
		if (r < 0)
			return r;
	}
	if (img) {
		snprintf(key, sizeof(key), "layers[%zu].image", i);
		ly->kind = RA_LAYER_IMAGE;
		r = get_source(p, img, key, RA_SRC_IMAGE, &ly->src);
		if (r == 0 && tr) {
			snprintf(key, sizeof(key), "layers[%zu].trusted", i);
			r = get_bool(p, tr, key, &ly->src.trusted);
		}
		if (r == 0 && ty) {
			snprintf(key, sizeof(key), "layers[%zu].type", i);
			r = get_fstype(p, ty, key, &ly->fstype);
		}
		return r;
	}
	snprintf(key, sizeof(key), "layers[%zu].dir", i);
	ly->kind = RA_LAYER_DIR;
	return get_source(p, dir, key, RA_SRC_DIR, &ly->src);
}

static int parse_layers(struct pctx *p, struct ynode *seq, struct rootasm_layout *l)
{
	size_t n, i = 0;
	int r = want(p, seq, "layers", YAML_SEQUENCE_NODE), bad = 0;

	if (r < 0)
		return r;
	n = nitems(seq);
	if (n == 0)
		return perr(p, seq, "layers", "at least one layer is needed");
	if (n > RA_MAX_LAYERS)
		return perr(p, seq, "layers", "%zu layers; overlayfs takes at most %d", n, RA_MAX_LAYERS);
	l->layers = calloc(n, sizeof(*l->layers));
	if (!l->layers)
		return poom(p, "parse layers");
	for_items(seq, it) {
		l->nlayers = i + 1;
		r = parse_layer(p, node(p, *it), i, &l->layers[i]);
		i++;
		if (go_on(r))
			bad = r;
		else if (r < 0)
			return r;
	}
	return bad;
}

static int parse_upper(struct pctx *p, struct ynode *m, struct rootasm_layout *l)
{
	static const char *const keys[] = { "tmpfs", "dir", NULL };
	struct ynode *t, *d;
	int r = want(p, m, "upper", YAML_MAPPING_NODE);

	if (r == 0)
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
	return get_source(p, d, "upper.dir", RA_SRC_DIR, &l->upper.src);
}

static int parse_caps(struct pctx *p, struct ynode *seq, const char *where, uint64_t *ret)
{
	size_t i = 0;
	int r = want(p, seq, where, YAML_SEQUENCE_NODE), bad = 0;

	if (r < 0)
		return r;
	*ret = 0;
	for_items(seq, it) {
		struct ynode *n = node(p, *it);
		char key[96], name[64];
		const char *s;
		int cap;
		size_t j;

		snprintf(key, sizeof(key), "%s[%zu]", where, i++);
		r = get_string(p, n, key, &s);
		if (r < 0) {
			bad = r;
			continue;
		}
		/* CAP_SYS_ADMIN, cap_sys_admin and sys_admin all name the same one; nothing else does */
		if (strlen(s) + 5 > sizeof(name) || strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_") != strlen(s)) {
			bad = perr(p, n, key, "unknown capability '%s'", s);
			continue;
		}
		snprintf(name, sizeof(name), "%s%s", strncasecmp(s, "cap_", 4) ? "cap_" : "", s);
		for (j = 0; name[j]; j++)
			name[j] = tolower((unsigned char)name[j]);
		if ((cap = cap_number(name)) < 0) {
			bad = perr(p, n, key, "unknown capability '%s'", s);
			continue;
		}
		if (*ret & (1ULL << cap)) {
			bad = perr(p, n, key, "capability '%s' listed twice", s);
			continue;
		}
		*ret |= 1ULL << cap;
	}
	return bad;
}

/* A list of supplementary group ids, at most RA_MAX_GROUPS; every bad item is reported. */
static int parse_groups(struct pctx *p, struct ynode *seq, const char *where, gid_t **ret, size_t *n)
{
	size_t i = 0;
	int r = want(p, seq, where, YAML_SEQUENCE_NODE), bad = 0;

	if (r < 0)
		return r;
	if (nitems(seq) > RA_MAX_GROUPS)
		return perr(p, seq, where, "%zu groups; at most %d", nitems(seq), RA_MAX_GROUPS);
	*ret = calloc(nitems(seq) ? nitems(seq) : 1, sizeof(gid_t));
	if (!*ret)
		return poom(p, "parse groups");
	for_items(seq, it) {
		char key[96];

		snprintf(key, sizeof(key), "%s[%zu]", where, i);
		if ((r = get_id(p, node(p, *it), key, &(*ret)[i])) < 0)
			bad = r;
		*n = ++i;
	}
	return bad;
}

static int parse_overlay(struct pctx *p, struct ynode *m, struct rootasm_layout *l)
{
	static const char *const keys[] = { "override_creds", NULL };
	static const char *const ckeys[] = { "uid", "gid", "groups", "capabilities", NULL };
	struct ra_creds *c = &l->creds;
	struct ynode *oc, *v;
	int r = want(p, m, "overlay", YAML_MAPPING_NODE), bad = 0;

	if (r == 0)
		r = check_keys(p, m, "overlay", keys);
	if (r < 0)
		return r;
	oc = lookup(p, m, "override_creds");
	if (!oc)
		return 0;
	r = want(p, oc, "overlay.override_creds", YAML_MAPPING_NODE);
	if (r == 0)
		r = check_keys(p, oc, "overlay.override_creds", ckeys);
	if (r < 0)
		return r;
	c->set = true;
	c->loc = loc_of(oc);
	if (!(v = lookup(p, oc, "uid")))
		bad = perr(p, oc, "overlay.override_creds", "missing key 'uid'");
	else if ((r = get_id(p, v, "overlay.override_creds.uid", &c->uid)) < 0)
		bad = r;
	if (!(v = lookup(p, oc, "gid")))
		bad = perr(p, oc, "overlay.override_creds", "missing key 'gid'");
	else if ((r = get_id(p, v, "overlay.override_creds.gid", &c->gid)) < 0)
		bad = r;
	if ((v = lookup(p, oc, "groups")) && (r = parse_groups(p, v, "overlay.override_creds.groups", &c->groups,
							       &c->ngroups)) < 0) {
		if (!go_on(r))
			return r;
		bad = r;
	}
	if ((v = lookup(p, oc, "capabilities"))) {
		r = parse_caps(p, v, "overlay.override_creds.capabilities", &c->caps);
		if (r < 0)
			bad = r;
	}
	return bad;
}

static int parse_mount(struct pctx *p, struct ynode *m, size_t i, struct ra_mount *mt)
{
	static const char *const keys[] = { "bind", "tmpfs", "image", "layout", "target", "options", "type",
					    "idmap", "trusted", NULL };
	static const char *const kinds[] = { "bind", "tmpfs", "image", "layout" };
	static const enum ra_src_kind src_kinds[] = { RA_SRC_BIND, 0, RA_SRC_IMAGE, RA_SRC_LAYOUT };
	struct ynode *kind_node = NULL, *v;
	char key[96], where[64];
	unsigned int allow = OPT_ATTRS;
	int nkinds = 0, r;

	snprintf(where, sizeof(where), "mounts[%zu]", i);
	mt->src.fd = -EBADF;
	mt->idmap.userns.fd = -EBADF;
	r = want(p, m, where, YAML_MAPPING_NODE);
	if (r == 0)
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
	if (mt->kind == RA_MOUNT_TMPFS) {
		/* "tmpfs: /tmp" names the target itself */
		if (v)
			return perr(p, v, where, "a tmpfs mount names its target in 'tmpfs'; drop 'target'");
		r = get_target(p, kind_node, key, &mt->target);
		allow |= OPT_TMPFS;
	} else {
		if (mt->kind == RA_MOUNT_BIND)
			allow |= OPT_RECURSIVE;
		r = get_source(p, kind_node, key, src_kinds[mt->kind], &mt->src);
		if (r == 0 && !v)
			return perr(p, m, where, "missing key 'target'");
		if (r == 0) {
			snprintf(key, sizeof(key), "%s.target", where);
			r = get_target(p, v, key, &mt->target);
		}
	}
	if (r < 0)
		return r;
	if ((v = lookup(p, m, "type"))) {
		snprintf(key, sizeof(key), "%s.type", where);
		if (mt->kind != RA_MOUNT_IMAGE)
			return perr(p, v, key, "'type' applies to image mounts only");
		r = get_fstype(p, v, key, &mt->fstype);
		if (r < 0)
			return r;
	}
	if ((v = lookup(p, m, "trusted"))) {
		snprintf(key, sizeof(key), "%s.trusted", where);
		if (mt->kind != RA_MOUNT_IMAGE)
			return perr(p, v, key, "'trusted' applies to image mounts only");
		r = get_bool(p, v, key, &mt->src.trusted);
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
	return 0;
}

static int parse_mounts(struct pctx *p, struct ynode *seq, struct rootasm_layout *l)
{
	size_t n, i = 0;
	int r = want(p, seq, "mounts", YAML_SEQUENCE_NODE), bad = 0;

	if (r < 0)
		return r;
	n = nitems(seq);
	if (n > RA_MAX_MOUNTS)
		return perr(p, seq, "mounts", "%zu mounts; at most %d", n, RA_MAX_MOUNTS);
	l->mounts = calloc(n ? n : 1, sizeof(*l->mounts));
	if (!l->mounts)
		return poom(p, "parse mounts");
	for_items(seq, it) {
		l->nmounts = i + 1;
		r = parse_mount(p, node(p, *it), i, &l->mounts[i]);
		i++;
		if (go_on(r))
			bad = r;
		else if (r < 0)
			return r;
	}
	return bad;
}

/* "KEY=VALUE": a name of letters, digits and '_', not starting with a digit. */
bool ra_env_ok(const char *s)
{
	const char *eq = strchr(s, '=');

	if (!eq || eq == s || isdigit((unsigned char)s[0]))
		return false;
	for (const char *c = s; c < eq; c++)
		if (!isalnum((unsigned char)*c) && *c != '_')
			return false;
	return true;
}

/*
 * exec.entrypoint, exec.cmd: a list of arguments. An argument of an image's
 * command may be empty or hold newlines and tabs (a `sh -c` script): only NUL
 * is refused (it would cut the argument short), and sizes are capped as the
 * kernel caps them.
 */
static int parse_args(struct pctx *p, struct ynode *seq, const char *where, char ***ret, size_t *ret_n)
{
	char **v;
	size_t n = 0;
	int r = want(p, seq, where, YAML_SEQUENCE_NODE);

	if (r < 0)
		return r;
	if (nitems(seq) > RA_MAX_ARGS)
		return perr(p, seq, where, "%zu arguments; at most %d", nitems(seq), RA_MAX_ARGS);
	v = calloc(nitems(seq) + 1, sizeof(char *));
	if (!v)
		return poom(p, "parse arguments");
	*ret = v;
	for_items(seq, it) {
		struct ynode *a = node(p, *it);
		char key[64];

		snprintf(key, sizeof(key), "%s[%zu]", where, n);
		r = want(p, a, key, YAML_SCALAR_NODE);
		if (r < 0)
			return r;
		if (memchr(a->value, '\0', a->length))
			return perr(p, a, key, "value contains a NUL character");
		if (a->length >= RA_MAX_ARG)
			return perr(p, a, key, "argument longer than %u bytes", RA_MAX_ARG - 1);
		/* a plain empty scalar is YAML's null: an empty argument is written "" */
		if (is_null(a))
			return perr(p, a, key, "expected a string, got null (an empty argument is written \"\")");
		v[n] = strdup(a->value);
		if (!v[n])
			return poom(p, "parse arguments");
		*ret_n = ++n;
	}
	return 0;
}

static int parse_exec(struct pctx *p, struct ynode *m, struct rootasm_layout *l)
{
	static const char *const keys[] = { "deny_mount_api", "privileged", "uid", "gid", "groups", "capabilities",
					    "env", "hostname", "network", "entrypoint", "cmd", "workdir", "user",
					    NULL };
	struct ra_exec *x = &l->exec;
	struct ynode *v, *u, *g;
	const char *s;
	int r = want(p, m, "exec", YAML_MAPPING_NODE), bad = 0;

	if (r == 0)
		r = check_keys(p, m, "exec", keys);
	if (r < 0)
		return r;
	x->loc = loc_of(m);
	if ((v = lookup(p, m, "deny_mount_api")) && (r = get_bool(p, v, "exec.deny_mount_api", &x->deny_mount_api)) < 0)
		bad = r;
	if ((v = lookup(p, m, "privileged")) && (r = get_bool(p, v, "exec.privileged", &x->privileged)) < 0)
		bad = r;
	u = lookup(p, m, "uid");
	g = lookup(p, m, "gid");
	if (!!u != !!g) {
		bad = perr(p, m, "exec", "give both 'uid' and 'gid', or neither");
	} else if (u) {
		x->user_set = true;
		if ((r = get_id(p, u, "exec.uid", &x->uid)) < 0)
			bad = r;
		if ((r = get_id(p, g, "exec.gid", &x->gid)) < 0)
			bad = r;
	}
	if ((v = lookup(p, m, "groups")) && (r = parse_groups(p, v, "exec.groups", &x->groups, &x->ngroups)) < 0) {
		if (!go_on(r))
			return r;
		bad = r;
	}
	if ((v = lookup(p, m, "capabilities"))) {
		x->caps_set = true;
		if ((r = parse_caps(p, v, "exec.capabilities", &x->caps)) < 0)
			bad = r;
	}
	if ((v = lookup(p, m, "env"))) {
		size_t i = 0;

		r = want(p, v, "exec.env", YAML_SEQUENCE_NODE);
		if (r < 0)
			return r;
		if (nitems(v) > RA_MAX_ENV)
			return perr(p, v, "exec.env", "%zu variables; at most %d", nitems(v), RA_MAX_ENV);
		x->env = calloc(nitems(v) + 1, sizeof(char *));
		if (!x->env)
			return poom(p, "parse env");
		for_items(v, it) {
			char key[64];

			snprintf(key, sizeof(key), "exec.env[%zu]", i++);
			if ((r = get_string(p, node(p, *it), key, &s)) < 0) {
				bad = r;
				continue;
			}
			if (!ra_env_ok(s)) {
				bad = perr(p, node(p, *it), key, "expected KEY=VALUE (KEY: letters, digits, '_'), got '%s'", s);
				continue;
			}
			if (!(x->env[x->nenv++] = strdup(s)))
				return poom(p, "parse env");
		}
	}
	if ((v = lookup(p, m, "hostname"))) {
		if ((r = get_string(p, v, "exec.hostname", &s)) < 0)
			bad = r;
		else if (!rootasm_hostname_ok(s))
			bad = perr(p, v, "exec.hostname", "expected a hostname (1-64 of letters, digits, '.', '-'), got '%s'", s);
		else if (!(x->hostname = strdup(s)))
			return poom(p, "parse hostname");
	}
	if ((v = lookup(p, m, "network"))) {
		if ((r = get_string(p, v, "exec.network", &s)) < 0)
			bad = r;
		else if (!strcmp(s, "host"))
			x->network = RA_NET_HOST;
		else if (!strcmp(s, "none"))
			x->network = RA_NET_NONE;
		else
			bad = perr(p, v, "exec.network", "expected 'host' or 'none', got '%s'", s);
	}
	if ((v = lookup(p, m, "entrypoint")) && (r = parse_args(p, v, "exec.entrypoint", &x->entrypoint,
								 &x->nentrypoint)) < 0) {
		if (!go_on(r))
			return r;
		bad = r;
	}
	if ((v = lookup(p, m, "cmd")) && (r = parse_args(p, v, "exec.cmd", &x->cmd, &x->ncmd)) < 0) {
		if (!go_on(r))
			return r;
		bad = r;
	}
	if ((v = lookup(p, m, "workdir"))) {
		char buf[RA_PATH_MAX];

		if ((r = get_string(p, v, "exec.workdir", &s)) < 0)
			bad = r;
		else if ((r = ra_normalize_target(s, buf, sizeof(buf))) == -EINVAL)
			bad = perr(p, v, "exec.workdir", "expected an absolute path, got '%s'", s);
		else if (r == -EXDEV)
			bad = perr(p, v, "exec.workdir", "'%s' contains '..'", s);
		else if (r < 0)
			bad = perr(p, v, "exec.workdir", "'%s' is too long", s);
		else if (!(x->workdir = strdup(buf)))
			return poom(p, "parse workdir");
	}
	if ((v = lookup(p, m, "user"))) {
		if (u)
			bad = perr(p, v, "exec.user", "give 'user' or 'uid' and 'gid', not both");
		else if ((r = get_string(p, v, "exec.user", &s)) < 0)
			bad = r;
		else if (!ra_user_spec_ok(s))
			bad = perr(p, v, "exec.user", "expected USER[:GROUP] (names or numbers), got '%s'", s);
		else if (!(x->user = strdup(s)))
			return poom(p, "parse user");
	}
	return bad;
}

static int parse_root(struct pctx *p, struct ynode *root, struct rootasm_layout *l)
{
	static const char *const keys[] = { "version", "layers", "upper", "overlay", "mounts",
					    "attributes", "exec", NULL };
	struct ynode *v;
	int r, bad = 0;

	if (!root)
		return perr(p, NULL, "", "empty layout");
	r = want(p, root, "(top level)", YAML_MAPPING_NODE);
	if (r == 0)
		r = check_keys(p, root, "(top level)", keys);
	if (r < 0)
		return r;
	if (!(v = lookup(p, root, "version")))
		bad = perr(p, root, "version", "missing key 'version' (this tool reads version: 1)");
	else if (v->type != YAML_SCALAR_NODE || strcmp(scalar(v), "1") || v->length != 1)
		bad = perr(p, v, "version", "unsupported version '%s' (this tool reads version: 1)",
			   v->type == YAML_SCALAR_NODE && !clean_scalar(p, v, "version") ? scalar(v) : node_type(v));
	if (!(v = lookup(p, root, "layers")))
		bad = perr(p, root, "layers", "missing key 'layers'");
	else if ((r = parse_layers(p, v, l)) < 0 && !go_on(r))
		return r;
	else if (r < 0)
		bad = r;
	/* each section on its own: an error in one does not hide those in the next */
	static const struct {
		const char *key;
		int (*fn)(struct pctx *, struct ynode *, struct rootasm_layout *);
	} sections[] = {
		{ "upper", parse_upper }, { "overlay", parse_overlay }, { "mounts", parse_mounts },
		{ "exec", parse_exec },
	};
	for (size_t i = 0; i < ARRAY_SIZE(sections); i++) {
		if (!(v = lookup(p, root, sections[i].key)) || (i == 0 && is_null(v)))
			continue;
		r = sections[i].fn(p, v, l);
		if (r < 0 && !go_on(r))
			return r;
		if (r < 0)
			bad = r;
	}
	if ((v = lookup(p, root, "attributes"))) {
		r = parse_options(p, v, "attributes", OPT_ATTRS, &l->attributes, NULL);
		if (r < 0 && !go_on(r))
			return r;
		if (r < 0)
			bad = r;
	}
	if (!bad && l->creds.set && l->nlayers < 2 && l->upper.kind == RA_UPPER_NONE)
		return perr(p, lookup(p, root, "overlay"), "overlay.override_creds",
			    "a single read-only layer is not an overlay; add a layer or an upper");
	return bad;
}

/* libyaml's own failure: a syntax error at its mark, or out of memory. */
static int yaml_fail(struct pctx *p, yaml_parser_t *parser)
{
	struct ra_loc at = { parser->problem_mark.line + 1, parser->problem_mark.column + 1 };

	if (parser->error == YAML_MEMORY_ERROR)
		return poom(p, "parse YAML (libyaml)");
	return ra_layout_err(p->d, p->e, p->file, at, "syntax", "%s%s%s",
			     parser->problem ? parser->problem : "malformed YAML",
			     parser->context ? " " : "", parser->context ? parser->context : "");
}

static void doc_free(struct ydoc *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->nodes[i].value);
		free(d->nodes[i].items);
		free(d->nodes[i].pairs);
	}
	free(d->nodes);
	for (size_t i = 0; i < d->nanchors; i++)
		free(d->anchors[i].name);
	free(d->anchors);
}

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	void *a;
	size_t c = *cap ? *cap : 8;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	a = realloc(*arr, c * elem);
	if (!a)
		return -ENOMEM;
	*arr = a;
	*cap = c;
	return 0;
}

/* Add node @id to the open collection on top of @stack (or make it the root). */
static int attach(struct ydoc *d, const int *stack, int depth, int id)
{
	struct ynode *parent;

	if (!depth) {
		d->root = id;
		return 0;
	}
	parent = &d->nodes[stack[depth - 1]];
	if (parent->type == YAML_SEQUENCE_NODE) {
		if (grow((void **)&parent->items, &parent->cap, parent->n + 1, sizeof(int)) < 0)
			return -ENOMEM;
		parent->items[parent->n++] = id;
		return 0;
	}
	/* a mapping: keys and values alternate; a pair counts once its value came */
	if (!parent->want_value) {
		if (grow((void **)&parent->pairs, &parent->cap, parent->n + 1, sizeof(struct ypair)) < 0)
			return -ENOMEM;
		parent->pairs[parent->n] = (struct ypair){ id, -1 };
		parent->want_value = true;
	} else {
		parent->pairs[parent->n++].value = id;
		parent->want_value = false;
	}
	return 0;
}

/*
 * The document, from libyaml's events, with the limits checked as it grows:
 * exactly one document, collections nested at most RA_MAX_YAML_DEPTH deep
 * (libyaml's scanner is quadratic in the nesting of flow collections, so the
 * depth is checked before it gets there), at most RA_MAX_YAML_ALIASES aliases
 * and RA_MAX_YAML_NODES nodes, no alias to a collection that is still open.
 */
static int build_doc(struct pctx *p, const char *buf, size_t len, struct ydoc *d)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	int stack[RA_MAX_YAML_DEPTH], depth = 0, docs = 0, aliases = 0, r = 0;
	bool done = false;

	if (!yaml_parser_initialize(&parser))
		return poom(p, "parse YAML (libyaml)");
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	while (!done && r == 0) {
		struct ra_loc at;
		char *anchor = NULL;
		int id = -1;

		if (!yaml_parser_parse(&parser, &ev)) {
			r = yaml_fail(p, &parser);
			break;
		}
		at = (struct ra_loc){ ev.start_mark.line + 1, ev.start_mark.column + 1 };
		switch (ev.type) {
		case YAML_DOCUMENT_START_EVENT:
			if (++docs > 1)
				r = ra_layout_err(p->d, p->e, p->file, at, "syntax",
						  "a second YAML document; a layout is exactly one document");
			break;
		case YAML_SCALAR_EVENT:
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (ev.type != YAML_SCALAR_EVENT && depth >= RA_MAX_YAML_DEPTH) {
				r = ra_layout_err(p->d, p->e, p->file, at, "syntax",
						  "collections nested deeper than %d levels", RA_MAX_YAML_DEPTH);
				break;
			}
			if (d->n >= RA_MAX_YAML_NODES) {
				r = ra_layout_err(p->d, p->e, p->file, at, "syntax", "more than %d YAML nodes",
						  RA_MAX_YAML_NODES);
				break;
			}
			if (grow((void **)&d->nodes, &d->cap, d->n + 1, sizeof(*d->nodes)) < 0) {
				r = poom(p, "parse YAML");
				break;
			}
			id = d->n++;
			d->nodes[id] = (struct ynode){ .loc = at };
			if (ev.type == YAML_SCALAR_EVENT) {
				struct ynode *n = &d->nodes[id];

				n->type = YAML_SCALAR_NODE;
				/* taken from the event: libyaml allocated it, we free it */
				n->value = (char *)ev.data.scalar.value;
				n->length = ev.data.scalar.length;
				n->style = ev.data.scalar.style;
				ev.data.scalar.value = NULL;
				anchor = (char *)ev.data.scalar.anchor;
				ev.data.scalar.anchor = NULL;
			} else if (ev.type == YAML_SEQUENCE_START_EVENT) {
				d->nodes[id].type = YAML_SEQUENCE_NODE;
				anchor = (char *)ev.data.sequence_start.anchor;
				ev.data.sequence_start.anchor = NULL;
			} else {
				d->nodes[id].type = YAML_MAPPING_NODE;
				anchor = (char *)ev.data.mapping_start.anchor;
				ev.data.mapping_start.anchor = NULL;
			}
			if (attach(d, stack, depth, id) < 0) {
				r = poom(p, "parse YAML");
				break;
			}
			if (ev.type != YAML_SCALAR_EVENT) {
				d->nodes[id].open = true;
				stack[depth++] = id;
			}
			if (anchor) {
				if (grow((void **)&d->anchors, &d->acap, d->nanchors + 1, sizeof(*d->anchors)) < 0) {
					r = poom(p, "parse YAML");
					break;
				}
				d->anchors[d->nanchors++] = (struct yanchor){ TAKE_PTR(anchor), id };
			}
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			d->nodes[stack[--depth]].open = false;
			break;
		case YAML_ALIAS_EVENT: {
			const char *name = (const char *)ev.data.alias.anchor;

			if (++aliases > RA_MAX_YAML_ALIASES) {
				r = ra_layout_err(p->d, p->e, p->file, at, "syntax", "more than %d aliases",
						  RA_MAX_YAML_ALIASES);
				break;
			}
			/* the latest anchor of that name (YAML lets a name be anchored again) */
			for (size_t i = d->nanchors; i-- > 0 && id < 0;)
				if (!strcmp(d->anchors[i].name, name))
					id = d->anchors[i].id;
			if (id < 0)
				r = ra_layout_err(p->d, p->e, p->file, at, "syntax", "alias *%s names no anchor", name);
			else if (d->nodes[id].open)
				r = ra_layout_err(p->d, p->e, p->file, at, "syntax",
						  "alias *%s refers to a collection that contains it", name);
			else if (attach(d, stack, depth, id) < 0)
				r = poom(p, "parse YAML");
			break;
		}
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		default:
			break;
		}
		free(anchor);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	return r;
}

int ra_layout_parse(const char *buf, size_t len, const char *file, const char *dir, struct ra_diag *d,
		    struct rootasm_layout **ret, struct rootasm_error *e)
{
	struct rootasm_layout *l;
	struct ydoc doc = { .root = -1 };
	struct ra_diag none = { 0 };
	struct pctx p = { .doc = &doc, .file = file, .dir = dir, .d = d ? d : &none, .e = e };
	int r;

	if (len > RA_LAYOUT_MAX_BYTES)
		return ra_layout_err(p.d, e, file, (struct ra_loc){ 0, 0 }, "", "layout is %zu bytes; at most %u",
				     len, RA_LAYOUT_MAX_BYTES);
	if (memchr(buf, '\0', len))
		return ra_layout_err(p.d, e, file, (struct ra_loc){ 0, 0 }, "syntax",
				     "a NUL byte at offset %zu; a layout is text", (size_t)((const char *)memchr(buf, '\0', len) - buf));
	r = build_doc(&p, buf, len, &doc);
	if (r < 0) {
		doc_free(&doc);
		return r;
	}
	l = calloc(1, sizeof(*l));
	if (!l) {
		doc_free(&doc);
		return ra_oom(e, "parse layout");
	}
	l->exec.deny_mount_api = true;
	l->upper.src.fd = -EBADF;
	l->file = strdup(file);
	l->dir = dir ? strdup(dir) : NULL;
	if (!l->file || (dir && !l->dir))
		r = ra_oom(e, "parse layout");
	else
		r = parse_root(&p, doc.root >= 0 ? &doc.nodes[doc.root] : NULL, l);
	doc_free(&doc);
	if (p.oom)
		r = p.oom;
	if (r == -EINVAL && d && d->keep_partial) {
		*ret = l;
		return r;
	}
	if (r < 0) {
		rootasm_layout_free(l);
		return r;
	}
	*ret = l;
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
}

static void idmap_free(struct ra_idmap *m)
{
	src_free(&m->userns);
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
		src_free(&l->layers[i].src);
		idmap_free(&l->layers[i].idmap);
	}
	free(l->layers);
	for (size_t i = 0; i < l->nmounts; i++) {
		src_free(&l->mounts[i].src);
		free(l->mounts[i].target);
		tmpfs_free(&l->mounts[i].tmpfs);
		idmap_free(&l->mounts[i].idmap);
		rootasm_layout_free(l->mounts[i].nested);
	}
	free(l->mounts);
	src_free(&l->upper.src);
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
	rootasm_principal_free(l->principal);
	free(l);
}

