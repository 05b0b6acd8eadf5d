// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The parse stage's typed accessors: a node of the YAML document (yaml.c) read
 * as a string, a boolean, an id, a mode, a size, a target, a host path, mount
 * options, id ranges, capabilities or groups, each checked and each failure a
 * diagnostic at the node's file:line:column under its key (layout-parse.h).
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/mount.h>
#include <yaml.h>

#include "layout-parse.h"
#include "passwd.h"
#include "util.h"

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

struct ra_loc ly_loc_of(const struct ynode *n)
{
	return n ? n->loc : (struct ra_loc){ 0, 0 };
}


/* Out of memory: remembered, so that the whole parse ends with ENOMEM. */
int ly_poom(struct pctx *p, const char *what)
{
	p->oom = -ENOMEM;
	return ra_oom(p->e, what);
}

/* An error in one item of a list: go on with the next one; anything else ends the parse. */
bool ly_go_on(int r)
{
	return r == -EINVAL;
}

const char *ly_node_type(const struct ynode *n)
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

int ly_want(struct pctx *p, const struct ynode *n, const char *key, int t)
{
	static const char *const names[] = {
		[YAML_SCALAR_NODE] = "a scalar",
		[YAML_SEQUENCE_NODE] = "a list",
		[YAML_MAPPING_NODE] = "a mapping",
	};

	if (n->type == t)
		return 0;
	return perr(p, n, key, "expected %s, got %s", names[t], ly_node_type(n));
}

const char *ly_scalar(const struct ynode *n)
{
	return n->value;
}

/* A plain scalar that YAML would read as null: "~", "null" or nothing. */
bool ly_is_null(const struct ynode *n)
{
	const char *s;

	if (n->type != YAML_SCALAR_NODE || n->style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	s = ly_scalar(n);
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL");
}

/* A scalar holds no NUL (it would cut a path short) and no control character. */
int ly_clean_scalar(struct pctx *p, const struct ynode *n, const char *key)
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

int ly_get_string(struct pctx *p, const struct ynode *n, const char *key, const char **ret)
{
	int r = ly_want(p, n, key, YAML_SCALAR_NODE);

	if (r < 0)
		return r;
	if (ly_is_null(n) || !n->length)
		return perr(p, n, key, "expected a non-empty string");
	r = ly_clean_scalar(p, n, key);
	if (r < 0)
		return r;
	if (n->length >= RA_PATH_MAX)
		return perr(p, n, key, "value longer than %d bytes", RA_PATH_MAX - 1);
	*ret = ly_scalar(n);
	return 0;
}

int ly_get_bool(struct pctx *p, const struct ynode *n, const char *key, bool *ret)
{
	int r = ly_want(p, n, key, YAML_SCALAR_NODE);

	if (r < 0)
		return r;
	if (!strcmp(ly_scalar(n), "true") && n->length == 4)
		*ret = true;
	else if (!strcmp(ly_scalar(n), "false") && n->length == 5)
		*ret = false;
	else
		return perr(p, n, key, "expected true or false");
	return 0;
}

/* The one checked number parser: digits only (decimal, or octal with @base 8), no sign, no junk. */
int ly_parse_u64(const char *s, int base, uint64_t max, uint64_t *ret)
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

int ly_get_id(struct pctx *p, const struct ynode *n, const char *key, uint32_t *ret)
{
	uint64_t v;
	int r = ly_want(p, n, key, YAML_SCALAR_NODE);

	if (r == 0)
		r = ly_clean_scalar(p, n, key);
	if (r < 0)
		return r;
	/* (uid_t)-1 means "no change" to the kernel: never a valid id */
	if (ly_parse_u64(ly_scalar(n), 10, 4294967294ULL, &v) < 0)
		return perr(p, n, key, "expected an id between 0 and 4294967294, got '%s'", ly_scalar(n));
	*ret = v;
	return 0;
}

#define RA_SIZE_MAX	(1ULL << 62)	/* 4 EiB: far beyond any tmpfs, far from wrapping */

/*
 * A tmpfs size or inode count: digits with an optional k/m/g/t/p/e suffix
 * (powers of 1024, as the kernel's memparse() reads them), or for a size a
 * percentage of RAM. 0 means "unlimited" to tmpfs: refused, say so instead.
 */
int ly_check_size(const char *s, bool percent_ok, const char **why)
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
		if (ly_parse_u64(num, 10, 100, &v) < 0 || v == 0)
			return (*why = "a percentage is 1-100%"), -ERANGE;
		return 0;
	}
	if ((sf = strchr(suffixes, tolower((unsigned char)num[len - 1]))) && num[len - 1]) {
		shift = 10 * (unsigned int)(sf - suffixes + 1);
		num[--len] = '\0';
	}
	if (ly_parse_u64(num, 10, UINT64_MAX, &v) < 0)
		return -EINVAL;
	if (v > (RA_SIZE_MAX >> shift))
		return (*why = "larger than 4 EiB: the kernel would wrap it around"), -ERANGE;
	if (v == 0)
		return (*why = "0 means unlimited to tmpfs; give a limit"), -ERANGE;
	return 0;
}

int ly_get_mode(struct pctx *p, const struct ynode *n, const char *key, const char *s,
		unsigned int *ret)
{
	uint64_t v;

	if (ly_parse_u64(s, 8, 07777, &v) < 0)
		return perr(p, n, key, "expected an octal mode up to 7777, got '%s'", s);
	*ret = v;
	return 0;
}

size_t ly_nitems(const struct ynode *seq)
{
	return seq->n;
}

struct ynode *ly_node(struct pctx *p, int id)
{
	return &p->doc->nodes[id];
}

/* Keys of @map: scalars, known, each once. */
int ly_check_keys(struct pctx *p, struct ynode *map, const char *where,
		  const char *const *allowed)
{
	for_pairs(map, a) {
		struct ynode *k = ly_node(p, a->key);
		bool ok = false;
		char buf[256] = "";
		int r;

		if (k->type != YAML_SCALAR_NODE)
			return perr(p, k, where, "keys must be scalars");
		r = ly_clean_scalar(p, k, where);
		if (r < 0)
			return r;
		for (const char *const *s = allowed; *s; s++)
			ok |= !strcmp(*s, ly_scalar(k));
		for (struct ypair *b = map->pairs; b < a; b++) {
			struct ynode *kb = ly_node(p, b->key);

			if (kb->type == YAML_SCALAR_NODE && !strcmp(ly_scalar(kb), ly_scalar(k)))
				return perr(p, k, where, "duplicate key '%s' (first at line %u)",
					    ly_scalar(k), kb->loc.line);
		}
		if (ok)
			continue;
		for (const char *const *s = allowed; *s; s++)
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s",
				 s == allowed ? "" : ", ", *s);
		return perr(p, k, where, "unknown key '%s' (expected one of: %s)", ly_scalar(k), buf);
	}
	return 0;
}

/* @n is a mapping whose keys are among @allowed, each once. */
int ly_map(struct pctx *p, struct ynode *n, const char *where, const char *const *allowed)
{
	int r = ly_want(p, n, where, YAML_MAPPING_NODE);

	return r < 0 ? r : ly_check_keys(p, n, where, allowed);
}

struct ynode *ly_lookup(struct pctx *p, struct ynode *map, const char *key)
{
	for_pairs(map, a) {
		struct ynode *k = ly_node(p, a->key);

		if (k->type == YAML_SCALAR_NODE && !strcmp(ly_scalar(k), key))
			return ly_node(p, a->value);
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

int ly_get_target(struct pctx *p, const struct ynode *n, const char *key, char **ret)
{
	char buf[RA_PATH_MAX];
	const char *s;
	int r = ly_get_string(p, n, key, &s);

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
	return *ret ? 0 : ly_poom(p, "parse target");
}

/*
 * A host-side path, kept as written: the open stage opens it (relative paths
 * from the layout file's directory) and checks what it is.
 */
int ly_get_source(struct pctx *p, const struct ynode *n, const char *key, enum ra_src_kind kind,
		  struct ra_src *src)
{
	const char *s;
	int r = ly_get_string(p, n, key, &s);

	if (r < 0)
		return r;
	src->kind = kind;
	src->loc = ly_loc_of(n);
	src->fd = -EBADF;
	src->path = strdup(s);
	src->key = strdup(key);
	if (s[0] == '/' || !p->dir)
		src->display = strdup(s);
	else if (asprintf(&src->display, "%s/%s", p->dir, s) < 0)
		src->display = NULL;
	if (!src->path || !src->key || !src->display)
		return ly_poom(p, "parse path");
	if (strlen(src->display) >= RA_PATH_MAX)
		return perr(p, n, key, "path '%s' is too long", src->display);
	return 0;
}

int ly_get_fstype(struct pctx *p, const struct ynode *n, const char *key, enum ra_fstype *ret)
{
	const char *s;
	int r = ly_get_string(p, n, key, &s);

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
	return *dst ? 0 : ly_poom(p, "parse tmpfs option");
}

/* One tmpfs option, from the mapping form or a "name=value" option: size, nr_inodes, mode. */
static int set_tmpfs_opt(struct pctx *p, const struct ynode *n, const char *key, const char *name,
			 const char *v, struct ra_tmpfs *t)
{
	const char *why;

	if (!strcmp(name, "size")) {
		if (ly_check_size(v, true, &why) < 0)
			return perr(p, n, key, "bad size '%s' (%s)", v, why);
		return set_str(p, &t->size, v);
	}
	if (!strcmp(name, "nr_inodes")) {
		if (ly_check_size(v, false, &why) < 0)
			return perr(p, n, key, "bad nr_inodes '%s' (%s)", v,
				    strchr(v, '%') ? "a count, not a percentage" : why);
		return set_str(p, &t->nr_inodes, v);
	}
	if (!strcmp(name, "mode")) {
		int r = ly_get_mode(p, n, key, v, &t->mode);

		t->has_mode = r == 0;
		return r;
	}
	return 1;	/* not a tmpfs option */
}

int ly_parse_option(struct pctx *p, struct ynode *n, const char *key, unsigned int allow,
		    struct ra_attrs *a, struct ra_tmpfs *t)
{
	const char *s, *eq;
	int r = ly_get_string(p, n, key, &s);

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

int ly_parse_options(struct pctx *p, struct ynode *seq, const char *where, unsigned int allow,
		     struct ra_attrs *a, struct ra_tmpfs *t)
{
	size_t i = 0;
	int r = ly_want(p, seq, where, YAML_SEQUENCE_NODE), bad = 0;

	if (r < 0)
		return r;
	if (ly_nitems(seq) > 64)
		return perr(p, seq, where, "%zu options; at most 64", ly_nitems(seq));
	for_items(seq, it) {
		char key[96];

		snprintf(key, sizeof(key), "%s[%zu]", where, i++);
		r = ly_parse_option(p, ly_node(p, *it), key, allow, a, t);
		if (ly_go_on(r))
			bad = r;
		else if (r < 0)
			return r;
	}
	return bad;
}

int ly_parse_tmpfs_map(struct pctx *p, struct ynode *map, const char *where, struct ra_tmpfs *t)
{
	static const char *const keys[] = { "size", "mode", "nr_inodes", NULL };
	char key[96];
	struct ynode *v;
	const char *s;
	int r;

	if (ly_is_null(map))
		return 0;
	r = ly_map(p, map, where, keys);
	if (r < 0)
		return r;
	for (const char *const *k = keys; *k; k++) {
		if (!(v = ly_lookup(p, map, *k)))
			continue;
		snprintf(key, sizeof(key), "%s.%s", where, *k);
		r = ly_get_string(p, v, key, &s);
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
		if (ly_parse_u64(num, 10, 4294967295ULL, &v[i]) < 0)
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

int ly_parse_ranges(struct pctx *p, struct ynode *seq, const char *where, struct ra_idrange **ret,
		    size_t *n)
{
	size_t cnt, i = 0, text = 0;
	int r = ly_want(p, seq, where, YAML_SEQUENCE_NODE);

	if (r < 0)
		return r;
	cnt = ly_nitems(seq);
	if (cnt == 0 || cnt > RA_MAX_IDRANGES)
		return perr(p, seq, where, "expected 1 to %d ranges, got %zu", RA_MAX_IDRANGES, cnt);
	*ret = calloc(cnt, sizeof(**ret));
	if (!*ret)
		return ly_poom(p, "parse id ranges");
	for_items(seq, it) {
		struct ynode *nd = ly_node(p, *it);
		struct ra_idrange *rg = &(*ret)[i];
		char key[96];
		const char *s;

		snprintf(key, sizeof(key), "%s[%zu]", where, i);
		r = ly_get_string(p, nd, key, &s);
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

int ly_parse_idmap(struct pctx *p, struct ynode *m, const char *where, struct ra_idmap *im)
{
	static const char *const keys[] = { "userns", "uids", "gids", NULL };
	struct ynode *ns, *u, *g;
	char key[96];
	int r = ly_map(p, m, where, keys);

	if (r < 0)
		return r;
	ns = ly_lookup(p, m, "userns");
	u = ly_lookup(p, m, "uids");
	g = ly_lookup(p, m, "gids");
	im->set = true;
	im->userns.fd = -EBADF;
	if (ns) {
		if (u || g)
			return perr(p, m, where, "give either 'userns' or 'uids' and 'gids', not both");
		snprintf(key, sizeof(key), "%s.userns", where);
		return ly_get_source(p, ns, key, RA_SRC_USERNS, &im->userns);
	}
	if (!u || !g)
		return perr(p, m, where, "needs 'userns', or both 'uids' and 'gids'");
	snprintf(key, sizeof(key), "%s.uids", where);
	r = ly_parse_ranges(p, u, key, &im->uids, &im->nuids);
	if (r < 0)
		return r;
	snprintf(key, sizeof(key), "%s.gids", where);
	return ly_parse_ranges(p, g, key, &im->gids, &im->ngids);
}

int ly_parse_caps(struct pctx *p, struct ynode *seq, const char *where, uint64_t *ret)
{
	size_t i = 0;
	int r = ly_want(p, seq, where, YAML_SEQUENCE_NODE), bad = 0;

	if (r < 0)
		return r;
	*ret = 0;
	for_items(seq, it) {
		struct ynode *n = ly_node(p, *it);
		char key[96], name[64];
		const char *s;
		int cap;
		size_t j;

		snprintf(key, sizeof(key), "%s[%zu]", where, i++);
		r = ly_get_string(p, n, key, &s);
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
int ly_parse_groups(struct pctx *p, struct ynode *seq, const char *where, gid_t **ret, size_t *n)
{
	size_t i = 0;
	int r = ly_want(p, seq, where, YAML_SEQUENCE_NODE), bad = 0;

	if (r < 0)
		return r;
	if (ly_nitems(seq) > RA_MAX_GROUPS)
		return perr(p, seq, where, "%zu groups; at most %d", ly_nitems(seq), RA_MAX_GROUPS);
	*ret = calloc(ly_nitems(seq) ? ly_nitems(seq) : 1, sizeof(gid_t));
	if (!*ret)
		return ly_poom(p, "parse groups");
	for_items(seq, it) {
		char key[96];

		snprintf(key, sizeof(key), "%s[%zu]", where, i);
		if ((r = ly_get_id(p, ly_node(p, *it), key, &(*ret)[i])) < 0)
			bad = r;
		*n = ++i;
	}
	return bad;
}

