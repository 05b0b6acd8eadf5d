// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A plan printed, losslessly (idmaps, tmpfs options, the credential, routes),
 * as text or as JSON, from one description of it: each field is said once,
 * with its JSON member name (NULL: not in the JSON) and its text (NULL: not
 * in the text, "%s" standing for the value), to a small emitter with two back
 * ends.
 *
 *   JSON  a jansson document (json.h: a NULL from any constructor makes the
 *         whole document fail with ENOMEM), dumped at the end.
 *   text  what the layout and the host name is escaped (escape.c): ESC as
 *         \x1b, U+202E as \u202e. An op (and the exec settings) is a line;
 *         a few of its fields come later in the line than in the JSON: the
 *         description of a line is walked once per part of it (at() says
 *         which part a field is in), each walk writing only that part.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>

#include "context.h"
#include "exec.h"
#include "json.h"
#include "plan.h"
#include "principal.h"
#include "util.h"
#include "volume.h"

/* a text line's parts, in the order they are written */
enum { BODY, LATE, TAIL, BELOW, NPARTS };

struct lvl {
	json_t *j;		/* JSON: the object or array it fills; NULL: not in the JSON */
	bool text;		/* it shows in the text */
	bool list, line;
	const char *sep, *none;	/* text: a list's separator, and what it shows without items */
	size_t n;		/* text: the items it showed */
	int pass, at;		/* text, a line: the part this walk writes, the part the description is in */
};

struct pr {
	bool json;
	struct ra_jb b;		/* JSON: whether an allocation failed */
	FILE *f;
	struct lvl lv[3 * RA_MAX_DEPTH + 8];	/* a plan, its ops, an op, its nested plan, ... an idmap, its uids */
	size_t depth;
};

#define TOP(pr) (&(pr)->lv[(pr)->depth - 1])

/* text: where an item of the current container goes (NULL: it does not show); a list's separator first */
static FILE *tx(struct pr *pr)
{
	struct lvl *v = TOP(pr);

	if (!v->text || (v->line && v->at != v->pass))
		return NULL;
	if (v->list && v->n++ && v->sep)
		fputs(v->sep, pr->f);
	return pr->f;
}

/* JSON: @v (taken) as member @k (NULL: none) of the current object, or an item of the current array: whether it went in */
static bool jadd(struct pr *pr, const char *k, json_t *v)
{
	struct lvl *c = TOP(pr);

	if (!c->j || !(c->list || k)) {
		json_decref(v);
		return false;
	}
	if (c->list)
		ra_japp(&pr->b, c->j, v);
	else
		ra_jset(&pr->b, c->j, k, v);
	return !pr->b.oom;
}

/* JSON: @k is the string @s (NULL: null); text: @t, @s escaped for its "%s" (@s NULL: nothing) */
static void put(struct pr *pr, const char *k, const char *t, const char *s)
{
	const char *v = t ? strstr(t, "%s") : NULL;
	FILE *f;

	if (pr->json)
		return (void)jadd(pr, k, ra_jstr(s));
	if (!t || !s || !(f = tx(pr)))
		return;
	if (!v)
		return (void)fputs(t, f);
	fwrite(t, 1, (size_t)(v - t), f);
	ra_fputs_escaped(s, f);
	fputs(v + 2, f);
}

static void num(struct pr *pr, const char *k, const char *t, long long v)
{
	char s[24];

	if (pr->json)
		return (void)jadd(pr, k, json_integer(v));
	snprintf(s, sizeof(s), "%lld", v);
	put(pr, k, t, s);
}

/* JSON: @k is @v; text: @ty or @tn (NULL: nothing) */
static void yes(struct pr *pr, const char *k, bool v, const char *ty, const char *tn)
{
	if (pr->json)
		return (void)jadd(pr, k, json_boolean(v));
	put(pr, k, v ? ty : tn, "");
}

/* only when @v: JSON @k true, text @t */
static void flag(struct pr *pr, const char *k, bool v, const char *t)
{
	if (v)
		yes(pr, k, true, t, NULL);
}

/* text only */
static void __attribute__((format(printf, 2, 3))) txt(struct pr *pr, const char *fmt, ...)
{
	FILE *f = tx(pr);
	va_list ap;

	if (!f)
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
}

/* the current line's fields from here on are in @part of its text */
#define at(pr, part) (TOP(pr)->at = (part))

/* A container: member @k (or an item), its text @t (NULL: nothing of it shows), a list's separator and empty text. */
static void open_(struct pr *pr, const char *k, const char *t, bool list, const char *sep, const char *none, bool line)
{
	json_t *j = NULL;
	bool text = t && !pr->json;
	FILE *f;

	if (pr->depth == ARRAY_SIZE(pr->lv))
		abort();	/* cannot be: layouts nest at most RA_MAX_DEPTH deep */
	if (pr->depth) {
		if (pr->json) {
			bool in = jadd(pr, k, json_incref(j = list ? json_array() : json_object()));

			json_decref(j);		/* the parent holds it, if it took it */
			if (!in)
				j = NULL;
		}
		text = text && (f = tx(pr));
		if (text)
			fputs(t, f);
	} else if (pr->json) {
		j = json_object();	/* the document (ra_jdump() says ENOMEM without it) */
	}
	pr->lv[pr->depth++] = (struct lvl){ .j = j, .text = text, .list = list, .sep = sep, .none = none,
					    .line = line, .pass = -1 };
}

static void obj(struct pr *pr, const char *k, const char *t)
{
	open_(pr, k, t, false, NULL, NULL, false);
}

static void list(struct pr *pr, const char *k, const char *t, const char *sep, const char *none)
{
	open_(pr, k, t, true, sep, none, false);
}

static void end(struct pr *pr)
{
	struct lvl *v = TOP(pr);

	if (v->text && v->list && !v->n && v->none)
		fputs(v->none, pr->f);
	pr->depth--;
}

/*
 * JSON: an object; text: a line. `for (line(); again();)` walks the
 * description of its fields once per part of the text (once for the JSON),
 * then ends it.
 */
static void line(struct pr *pr, const char *k)
{
	open_(pr, k, "", false, NULL, NULL, true);
}

static bool again(struct pr *pr)
{
	struct lvl *v = TOP(pr);

	v->at = BODY;
	if (++v->pass < (v->text ? NPARTS : 1))
		return true;
	end(pr);
	return false;
}

/* --- the description */

static const char *const fstype_name[] = { "auto", "squashfs", "erofs" };

static const struct {
	uint64_t bit;
	const char *name;
} attr_names[] = {
	{ MOUNT_ATTR_RDONLY, "ro" }, { MOUNT_ATTR_NOSUID, "nosuid" }, { MOUNT_ATTR_NODEV, "nodev" },
	{ MOUNT_ATTR_NOEXEC, "noexec" }, { MOUNT_ATTR_NOSYMFOLLOW, "nosymfollow" },
	{ MOUNT_ATTR_NODIRATIME, "nodiratime" }, { MOUNT_ATTR_NOATIME, "noatime" },
	{ MOUNT_ATTR_STRICTATIME, "strictatime" },
};

/* The attributes as option names: what is set, "rw" for a cleared read-only, the propagation. */
static void attrs(struct pr *pr, const char *k, const char *t, const struct ra_attrs *a)
{
	uint64_t p = a->propagation;
	const char *prop = p == MS_PRIVATE ? "private" : p == MS_SHARED ? "shared" : p == MS_SLAVE ? "slave" :
			   p == MS_UNBINDABLE ? "unbindable" : NULL;

	list(pr, k, t, ",", "-");
	for (size_t i = 0; i < ARRAY_SIZE(attr_names); i++)
		if (a->set & attr_names[i].bit)
			put(pr, NULL, "%s", attr_names[i].name);
	if (a->clr & MOUNT_ATTR_RDONLY)
		put(pr, NULL, "%s", "rw");
	if ((a->clr & MOUNT_ATTR__ATIME) && !(a->set & MOUNT_ATTR__ATIME))
		put(pr, NULL, "%s", "relatime");
	if (prop)
		put(pr, NULL, "%s", prop);
	if (a->recursive)
		put(pr, NULL, "%s", "recursive");
	end(pr);
}

static void ranges(struct pr *pr, const char *k, const char *t, const struct ra_idrange *r, size_t n)
{
	list(pr, k, t, ",", NULL);
	for (size_t i = 0; i < n; i++) {
		char s[40];

		snprintf(s, sizeof(s), "%u:%u:%u", r[i].inside, r[i].outside, r[i].count);
		put(pr, NULL, "%s", s);
	}
	end(pr);
}

static void idmap(struct pr *pr, const struct ra_idmap *m)
{
	if (!m->set)
		return put(pr, "idmap", NULL, NULL);
	obj(pr, "idmap", " idmap=");
	if (m->userns.path) {
		put(pr, "userns", "userns:%s", m->userns.display);
	} else {
		ranges(pr, "uids", "uids:", m->uids, m->nuids);
		ranges(pr, "gids", ";gids:", m->gids, m->ngids);
	}
	end(pr);
}

static void tmpfs(struct pr *pr, const struct ra_tmpfs *t)
{
	char mode[8];

	snprintf(mode, sizeof(mode), "%04o", t->mode);
	obj(pr, "tmpfs", "");
	put(pr, "size", " size=%s", t->size);
	if (!t->size)
		txt(pr, " size=default");
	put(pr, "nr_inodes", " nr_inodes=%s", t->nr_inodes);
	put(pr, "mode", " mode=%s", t->has_mode ? mode : NULL);
	end(pr);
}

static void caps(struct pr *pr, const char *k, const char *t, uint64_t caps)
{
	char name[64];

	list(pr, k, t, "+", "none");
	RA_CAP_FOREACH(v, caps)
		put(pr, NULL, "%s", ra_cap_name(v, name, sizeof(name)));
	end(pr);
}

static void groups(struct pr *pr, const char *t, const gid_t *g, size_t n)
{
	list(pr, "groups", t, "+", "none");
	for (size_t i = 0; i < n; i++)
		num(pr, NULL, "%s", g[i]);
	end(pr);
}

static void creds(struct pr *pr, const struct ra_creds *c)
{
	if (!c->set)
		return put(pr, "override_creds", NULL, NULL);
	obj(pr, "override_creds", " override_creds=");
	num(pr, "uid", "uid:%s", c->uid);
	num(pr, "gid", ",gid:%s", c->gid);
	groups(pr, ",groups:", c->groups, c->ngroups);
	caps(pr, "capabilities", ",caps:", c->caps);
	end(pr);
}

static void features(struct pr *pr, uint64_t needs)
{
	list(pr, "needs", NULL, NULL, NULL);
	for (unsigned int f = 0; f < RA_FEAT_COUNT; f++)
		if (needs & (1ULL << f))
			put(pr, NULL, NULL, rootasm_feature_name(f));
	end(pr);
}

/* What `rootasm exec` gives the command, as exec.c will set it up. */
static void exec_fields(struct pr *pr, const struct ra_exec *x)
{
	yes(pr, "privileged", x->privileged,
	    "exec: PRIVILEGED (no capability drop, no seccomp profile, no /proc masks)", "exec: sandboxed");
	num(pr, "uid", " uid=%s", x->user_set ? x->uid : 0);
	num(pr, "gid", " gid=%s", x->user_set ? x->gid : 0);
	groups(pr, " groups=", x->groups, x->ngroups);
	if (x->caps_set) {
		caps(pr, "capabilities", " caps=", x->caps);
	} else {
		char oci[128];

		put(pr, "capabilities", " caps=%s", x->privileged ? "all" : "oci-default");
		if (!x->privileged)
			txt(pr, "(%s)", ra_caps_text(RA_OCI_DEFAULT_CAPS, "+", oci, sizeof(oci)));
	}
	at(pr, BELOW);
	list(pr, "env", "", NULL, NULL);
	for (size_t i = 0; i < x->nenv; i++)
		put(pr, NULL, " env=%s", x->env[i]);
	end(pr);
	txt(pr, "\n");
	at(pr, TAIL);
	put(pr, "hostname", " hostname=%s", x->hostname ? x->hostname : "rootasm");
	at(pr, LATE);
	put(pr, "network", " network=%s", x->network == RA_NET_NONE ? "none" : "host");
	at(pr, TAIL);
	yes(pr, "deny_mount_api", x->deny_mount_api, " deny_mount_api=true", " deny_mount_api=false");
}

static void describe_plan(struct pr *pr, const struct ra_plan *p, int indent);

static void op_fields(struct pr *pr, const struct ra_plan *p, const struct ra_op *op, size_t i, int indent)
{
	/* the op's name in JSON; its key as the text says it */
	static const char *const kinds[][2] = {
		[RA_OP_LAYER] = { "layer", "%s" }, [RA_OP_UPPER] = { "upper", "%s" },
		[RA_OP_OVERLAY] = { "overlay", "%s" }, [RA_OP_ROOT_LAYER] = { "root-layer", "root is %s itself" },
		[RA_OP_VOLUME] = { "volume", "%s" }, [RA_OP_ROOT_ATTRS] = { "root-attributes", "root %s" },
		[RA_OP_TREE_ATTRS] = { "tree-attributes", "every mount of the %s" },
	};
	const struct rootasm_layout *l = p->l;
	const struct ra_mount *m = op->mount;
	struct ra_attrs force = { .set = op->attr_force };

	txt(pr, "%*s%2zu. ", indent, "", i + 1);
	put(pr, "op", NULL, kinds[op->kind][0]);
	put(pr, "key", kinds[op->kind][1], op->key);
	at(pr, TAIL);
	put(pr, "route", " [%s]", ra_route_name(op->route));
	if (op->loc.line) {
		num(pr, "line", " (line %s)", op->loc.line);
		num(pr, "column", NULL, op->loc.column);
	}
	txt(pr, "\n");
	at(pr, BODY);
	switch (op->kind) {
	case RA_OP_LAYER:
		put(pr, "kind", " %s", op->layer->kind == RA_LAYER_IMAGE ? "image" : "dir");
		put(pr, "path", " %s", op->layer->src.display);
		if (op->layer->kind == RA_LAYER_IMAGE)
			put(pr, "type", " type=%s", fstype_name[op->layer->fstype]);
		idmap(pr, &op->layer->idmap);
		break;
	case RA_OP_UPPER:
		put(pr, "kind", " %s", l->upper.kind == RA_UPPER_TMPFS ? "tmpfs" : "dir");
		if (l->upper.kind == RA_UPPER_TMPFS)
			tmpfs(pr, &l->upper.tmpfs);
		else
			put(pr, "path", " %s", l->upper.src.display);
		break;
	case RA_OP_OVERLAY:
		num(pr, "layers", " of %s layer(s)", (long long)l->nlayers);
		yes(pr, "writable", l->upper.kind != RA_UPPER_NONE, ", writable", ", read-only");
		creds(pr, &l->creds);
		break;
	case RA_OP_ROOT_LAYER:
		yes(pr, "readonly", true, ", read-only", NULL);
		break;
	case RA_OP_VOLUME:
		put(pr, "kind", " %s", ra_volume_kind(m)->name);
		put(pr, "source", " %s", m->src.path ? m->src.display : NULL);
		put(pr, "target", " -> %s", m->target);
		attrs(pr, "options", " options=", &m->attrs);
		/* what the kind takes, it shows (volume.h) */
		if (ra_volume_kind(m)->keys & RA_VKEY_TMPFS)
			tmpfs(pr, &m->tmpfs);
		if (ra_volume_kind(m)->keys & RA_VKEY_TYPE)
			put(pr, "type", " type=%s", fstype_name[m->fstype]);
		if (ra_volume_kind(m)->keys & RA_VKEY_IDMAP)
			idmap(pr, &m->idmap);
		at(pr, BELOW);
		if (op->sub) {
			obj(pr, "nested", "");
			describe_plan(pr, op->sub, indent + 4);
			end(pr);
		} else if (ra_volume_kind(m)->src == RA_SRC_LAYOUT) {
			put(pr, "nested", NULL, NULL);
			txt(pr, "%*s    (nested layout not loaded: offline)\n", indent, "");
		}
		at(pr, BODY);
		break;
	case RA_OP_ROOT_ATTRS:
		attrs(pr, "attributes", " ", &l->attributes);
		break;
	case RA_OP_TREE_ATTRS:
		force.recursive = true;
		attrs(pr, NULL, " ", &force);
		force.recursive = false;
		break;
	}
	at(pr, LATE);
	if (op->attr_force)
		attrs(pr, "forced", op->kind != RA_OP_TREE_ATTRS ? " forced=" : NULL, &force);
	if (op->why)
		put(pr, "why", " (%s)", op->why);
	at(pr, BODY);
	flag(pr, "userns", op->to_userns,
	     op->kind == RA_OP_UPPER ? " upper/,work/=owned-by-the-user-namespace's-root" :
	     op->kind == RA_OP_OVERLAY ? NULL : " idmap=principal's-user-namespace");
	flag(pr, "lent", op->lend, " lent");
	flag(pr, "creds_in_userns", op->creds_in_userns,
	     l->creds.set ? " (a credential in the user namespace)" :
			    " override_creds=the user namespace's root, every capability there");
	flag(pr, "user_view", op->user_view, " override_creds=the principal's uid, gid and groups, CAP_SYS_ADMIN only");
	if (op->user_view && l->upper.kind != RA_UPPER_NONE)
		txt(pr, " (a read-only overlay of the layers, under one with the upper)");
	features(pr, op->needs);
}

static void describe_plan(struct pr *pr, const struct ra_plan *p, int indent)
{
	const struct rootasm_layout *l = p->l;
	bool top = !(p->flags & RA_PLAN_NESTED);

	txt(pr, "%*s", indent, "");
	put(pr, "layout", "layout %s\n", l->file);
	if (top) {
		put(pr, "principal", "for %s", rootasm_principal_describe(l->principal));
		yes(pr, "authorized", l->authorized, "\n",
		    " (rights not checked: the host objects were not opened)\n");
	}
	list(pr, "ops", "", NULL, NULL);
	for (size_t i = 0; i < p->n; i++)
		for (line(pr, NULL); again(pr);)
			op_fields(pr, p, &p->ops[i], i, indent);
	end(pr);
	features(pr, p->needs);
	if (top)
		for (line(pr, "exec"); again(pr);)
			exec_fields(pr, &l->exec);
}

int ra_plan_print(const struct ra_plan *p, FILE *out, unsigned int flags)
{
	struct pr pr = { .json = flags & ROOTASM_PLAN_JSON, .f = out };

	obj(&pr, NULL, "");
	describe_plan(&pr, p, 0);
	end(&pr);
	return pr.json ? ra_jdump(&pr.b, pr.lv[0].j, out, flags & ROOTASM_PLAN_PRETTY) : 0;
}
