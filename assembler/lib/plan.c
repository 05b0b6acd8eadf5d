// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The plan stage: a layout -> an ordered list of operations, each with its
 * layout location, the model element (and so the fds) it works on, the
 * syscall route it takes and the kernel features it needs. No system calls
 * here. The engine (engine.c) executes exactly this list; `rootasm check`
 * prints exactly this list, losslessly (idmaps, tmpfs options, the
 * credential, routes), as text or JSON.
 *
 *   overlay root:  LAYER (top first, one per layer) ... [UPPER] OVERLAY
 *   single layer:  LAYER ROOT_LAYER
 *   then:          VOLUME ... (in layout order; a nested layout carries its own plan)
 *                  [ROOT_ATTRS]
 */
#include <stdio.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/mount.h>

#include "context.h"
#include "json.h"
#include "plan.h"
#include "principal.h"
#include "probe.h"
#include "util.h"
#include "volume.h"

#define F(x) (1ULL << ROOTASM_FEAT_##x)

const char *ra_route_name(enum ra_route r)
{
	static const char *const names[] = {
		[RA_ROUTE_NONE] = "-",
		[RA_ROUTE_LAYER_FD] = "o_path-fd",
		[RA_ROUTE_LAYER_CLONE] = "open_tree-clone",
		[RA_ROUTE_IMAGE] = "loop+fsmount",
		[RA_ROUTE_UPPER_TMPFS] = "tmpfs+mkdirat",
		[RA_ROUTE_UPPER_DIR] = "mkdirat",
		[RA_ROUTE_OVERLAY] = "fsconfig-set-fd+fsmount",
		[RA_ROUTE_BIND_CLONE] = "open_tree+mount_setattr",
		[RA_ROUTE_BIND_ATTR] = "open_tree_attr",
		[RA_ROUTE_TMPFS] = "fsmount",
		[RA_ROUTE_NESTED] = "nested-plan",
		[RA_ROUTE_SETATTR] = "mount_setattr",
		[RA_ROUTE_CACHED] = "cached-mount",
	};

	return r < ARRAY_SIZE(names) ? names[r] : "?";
}

void ra_plan_free(struct ra_plan *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		ra_plan_free(p->ops[i].sub);
	free(p->ops);
	free(p);
}

/* @key and @idx name the op: "layers" 2 -> "layers[2]"; @idx < 0: the key alone. */
static struct ra_op *add(struct ra_plan *p, enum ra_op_kind kind, enum ra_route route, struct ra_loc loc,
			 uint64_t needs, const char *key, long idx)
{
	struct ra_op *op = &p->ops[p->n++];

	*op = (struct ra_op){ .kind = kind, .route = route, .l = p->l, .loc = loc, .needs = needs };
	if (idx < 0)
		snprintf(op->key, sizeof(op->key), "%s", key);
	else
		snprintf(op->key, sizeof(op->key), "%s[%ld]", key, idx);
	p->needs |= needs;
	return op;
}

static bool attrs_set(const struct ra_attrs *a)
{
	return a->set || a->clr || a->propagation;
}

/* A directory layer with another layer above it. */
static bool dir_covered(const struct rootasm_layout *l)
{
	for (size_t i = 0; i + 1 < l->nlayers; i++)
		if (l->layers[i].kind == RA_LAYER_DIR)
			return true;
	return false;
}

uint64_t ra_plan_consults(const struct rootasm_layout *l, unsigned int flags)
{
	uint64_t m = 0;

	/* in a user namespace, an overlay without a credential of the layout's records one there if it can */
	if ((flags & RA_PLAN_USERNS) && ra_is_overlay(l) && !l->creds.set)
		m |= F(OVL_CREDS_NOADMIN);
	for (size_t i = 0; i < l->nmounts; i++) {
		const struct ra_volume_kind *k = ra_volume_kind(&l->mounts[i]);

		if (k->consults)
			m |= k->consults(&l->mounts[i]);
		if (l->mounts[i].nested)
			m |= ra_plan_consults(l->mounts[i].nested, flags);
	}
	return m;
}

uint64_t ra_plan_have(struct rootasm_ctx *ctx, const struct rootasm_layout *l, unsigned int flags)
{
	uint64_t want = ra_plan_consults(l, flags), have = 0;

	for (unsigned int f = 0; f < RA_FEAT_COUNT; f++)
		if ((want & (1ULL << f)) && ra_feature(ctx, f) > 0)
			have |= 1ULL << f;
	return have;
}

unsigned int ra_plan_flags(struct rootasm_ctx *ctx, const struct rootasm_layout *l, bool userns)
{
	unsigned int flags = ra_ctx(ctx)->images ? RA_PLAN_CACHE : 0;

	if (!ra_principal_admin(l->principal))
		flags |= RA_PLAN_USER;
	if (userns || (l->principal && l->principal->userns_fd >= 0))
		flags |= RA_PLAN_USERNS;
	return flags;
}

int ra_plan_build(const struct rootasm_layout *l, uint64_t have, unsigned int flags, struct ra_plan **ret,
		  struct rootasm_error *e)
{
	struct ra_plan *p = calloc(1, sizeof(*p));
	bool overlay = ra_is_overlay(l), userns = flags & RA_PLAN_USERNS;
	int r;

	if (!p)
		return ra_oom(e, "plan");
	p->l = l;
	p->flags = flags;
	p->who = l->principal;
	/* at most: every layer, upper, overlay or root layer, every mount, root and tree attributes */
	p->ops = calloc(l->nlayers + l->nmounts + 4, sizeof(*p->ops));
	if (!p->ops) {
		free(p);
		return ra_oom(e, "plan");
	}
	p->needs = F(MOUNT_API);
	/* lowerdir+ appends below what is there: the layout's top layer goes first */
	for (size_t i = l->nlayers; i-- > 0;) {
		const struct ra_layer *ly = &l->layers[i];
		/* in a user namespace an image is idmapped into it; a host directory never is (authorize.c) */
		bool to_userns = userns && ly->kind == RA_LAYER_IMAGE;
		bool own = !overlay || ly->idmap.set || to_userns;	/* a mount of its own */
		enum ra_route route = ly->kind == RA_LAYER_IMAGE ?
				      (flags & RA_PLAN_CACHE ? RA_ROUTE_CACHED : RA_ROUTE_IMAGE) :
				      own ? RA_ROUTE_LAYER_CLONE : RA_ROUTE_LAYER_FD;
		uint64_t needs = (ly->kind == RA_LAYER_IMAGE ? F(LOOP_CONFIGURE) : 0) |
				 (ly->idmap.set || to_userns ? F(MOUNT_SETATTR) : 0) |
				 (route == RA_ROUTE_CACHED && own ? F(OPEN_TREE_DETACHED) : 0);
		struct ra_op *op = add(p, RA_OP_LAYER, route, ly->loc, needs, "layers", (long)i);

		op->layer = ly;
		op->slot = p->nslots++;
		op->to_userns = to_userns;
		/* a cached image that needs no mount of its own: overlayfs clones it privately at create */
		op->lend = route == RA_ROUTE_CACHED && !own;
	}
	if (overlay) {
		uint64_t needs = F(OVL_FD_LAYERS) | F(FSCONFIG_OPATH) | F(OVL_DETACHED_LAYERS);

		if (l->upper.kind != RA_UPPER_NONE)
			add(p, RA_OP_UPPER, l->upper.kind == RA_UPPER_TMPFS ? RA_ROUTE_UPPER_TMPFS : RA_ROUTE_UPPER_DIR,
			    l->upper.loc, 0, "upper", -1)->to_userns = userns;
		if (l->creds.set) {
			needs |= F(OVL_OVERRIDE_CREDS);
			/* in a caller's user namespace no capability is CAP_SYS_ADMIN over the layers */
			if (!(l->creds.caps & (1ULL << CAP_SYS_ADMIN)) || userns)
				needs |= F(OVL_CREDS_NOADMIN);
		}
		/*
		 * For a caller in a user namespace the credential is one inside it: the
		 * layout's, or its root with every capability there where the kernel
		 * records a credential without CAP_SYS_ADMIN; else the assembler's own.
		 */
		bool in_userns = userns && (l->creds.set || (have & F(OVL_CREDS_NOADMIN)));
		/*
		 * A directory layer under another layer, looked up with the
		 * assembler's rights: a layer above could cover one of its
		 * directories the principal may not search with one it may, and
		 * show what is inside. Not when the credential is the principal's
		 * own already (in its user namespace).
		 */
		bool user_view = (flags & RA_PLAN_USER) && !in_userns && dir_covered(l);
		struct ra_op *op;

		if (in_userns)
			needs |= F(OVL_CREDS_NOADMIN);
		if (user_view)
			needs |= F(OVL_OVERRIDE_CREDS);
		op = add(p, RA_OP_OVERLAY, RA_ROUTE_OVERLAY, l->creds.set ? l->creds.loc : l->layers[0].loc, needs,
			 "overlay", -1);
		op->to_userns = userns;
		op->creds_in_userns = in_userns;
		op->user_view = user_view;
		if (user_view)
			op->why = "a directory layer lies under another layer: overlayfs looks the layers up with "
				  "the principal's own rights";
	} else {
		add(p, RA_OP_ROOT_LAYER, l->layers[0].kind == RA_LAYER_DIR ? RA_ROUTE_SETATTR : RA_ROUTE_NONE,
		    l->layers[0].loc, l->layers[0].kind == RA_LAYER_DIR ? F(MOUNT_SETATTR) : 0, "layers", 0);
	}
	for (size_t i = 0; i < l->nmounts; i++) {
		const struct ra_mount *m = &l->mounts[i];
		uint64_t needs = F(OPENAT2) | F(MOVE_DETACHED) | F(MOUNT_SETATTR);
		enum ra_route route;
		struct ra_op *op;
		bool to_userns = false;

		route = ra_volume_kind(m)->route(m, have, flags, &needs, &to_userns);
		op = add(p, RA_OP_VOLUME, route, m->loc, needs, "mounts", (long)i);
		op->mount = m;
		op->to_userns = to_userns;
		if (m->src.auth_ro) {
			op->attr_force = MOUNT_ATTR_RDONLY;
			op->why = m->src.auth_why;
		}
		if (m->nested) {
			r = ra_plan_build(m->nested, have, flags | RA_PLAN_NESTED, &op->sub, e);
			if (r < 0) {
				ra_plan_free(p);
				return r;
			}
			op->sub->who = p->who;
			op->needs |= op->sub->needs;
			p->needs |= op->sub->needs;
		}
	}
	if (attrs_set(&l->attributes))
		add(p, RA_OP_ROOT_ATTRS, RA_ROUTE_SETATTR, (struct ra_loc){ 0, 0 }, F(MOUNT_SETATTR), "attributes", -1);
	if ((flags & RA_PLAN_USER) && !(flags & RA_PLAN_NESTED)) {
		struct ra_op *op = add(p, RA_OP_TREE_ATTRS, RA_ROUTE_SETATTR, (struct ra_loc){ 0, 0 }, F(MOUNT_SETATTR),
				       "tree", -1);

		/* whoever attaches it, nothing in it runs set-uid or opens a device node */
		op->attr_force = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
		op->why = "the tree is not for an administrator";
	}
	*ret = p;
	return 0;
}

/* ------------------------------------------------------------------ printing */

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

static const char *prop_name(uint64_t p)
{
	return p == MS_PRIVATE ? "private" : p == MS_SHARED ? "shared" : p == MS_SLAVE ? "slave" :
	       p == MS_UNBINDABLE ? "unbindable" : NULL;
}

/* The attributes as option names: what is set, "rw" for a cleared read-only, the propagation. */
static size_t attr_words(const struct ra_attrs *a, const char **w, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(attr_names) && n < max; i++)
		if (a->set & attr_names[i].bit)
			w[n++] = attr_names[i].name;
	if ((a->clr & MOUNT_ATTR_RDONLY) && n < max)
		w[n++] = "rw";
	if ((a->clr & MOUNT_ATTR__ATIME) && !(a->set & MOUNT_ATTR__ATIME) && n < max)
		w[n++] = "relatime";
	if (prop_name(a->propagation) && n < max)
		w[n++] = prop_name(a->propagation);
	if (a->recursive && n < max)
		w[n++] = "recursive";
	return n;
}

/* --- text: what the layout and the host name is escaped (escape.c): ESC as \x1b, U+202E as \u202e */

/* @pre, then @s escaped */
static void text_esc(FILE *f, const char *pre, const char *s)
{
	fputs(pre, f);
	ra_fputs_escaped(s, f);
}

static void text_attrs(FILE *f, const struct ra_attrs *a)
{
	const char *w[16];
	size_t n = attr_words(a, w, ARRAY_SIZE(w));

	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%s", i ? "," : "", w[i]);
	if (!n)
		fputc('-', f);
}

static void text_ranges(FILE *f, const struct ra_idrange *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%u:%u:%u", i ? "," : "", r[i].inside, r[i].outside, r[i].count);
}

static void text_idmap(FILE *f, const struct ra_idmap *m)
{
	if (!m->set)
		return;
	if (m->userns.path) {
		text_esc(f, " idmap=userns:", m->userns.display);
		return;
	}
	fputs(" idmap=uids:", f);
	text_ranges(f, m->uids, m->nuids);
	fputs(";gids:", f);
	text_ranges(f, m->gids, m->ngids);
}

static void text_tmpfs(FILE *f, const struct ra_tmpfs *t)
{
	fprintf(f, " size=%s", t->size ? t->size : "default");
	if (t->nr_inodes)
		fprintf(f, " nr_inodes=%s", t->nr_inodes);
	if (t->has_mode)
		fprintf(f, " mode=%04o", t->mode);
}

static void text_creds(FILE *f, const struct ra_creds *c)
{
	char name[64];
	bool any = false;

	fprintf(f, " override_creds=uid:%u,gid:%u,groups:", c->uid, c->gid);
	for (size_t i = 0; i < c->ngroups; i++)
		fprintf(f, "%s%u", i ? "+" : "", c->groups[i]);
	if (!c->ngroups)
		fputs("none", f);
	fputs(",caps:", f);
	for (unsigned int v = 0; v < 64; v++) {
		if (!(c->caps & (1ULL << v)))
			continue;
		fprintf(f, "%s%s", any ? "+" : "", ra_cap_name(v, name, sizeof(name)));
		any = true;
	}
	if (!any)
		fputs("none", f);
}

/* What `rootasm exec` gives the command, as exec.c will set it up. */
static void text_exec(FILE *f, const struct ra_exec *x)
{
	char name[64];
	bool any = false;

	fprintf(f, "exec: %s", x->privileged ? "PRIVILEGED (no capability drop, no seccomp profile, no /proc masks)" :
						"sandboxed");
	if (x->user_set)
		fprintf(f, " uid=%u gid=%u", x->uid, x->gid);
	else
		fputs(" uid=0 gid=0", f);
	fputs(" groups=", f);
	for (size_t i = 0; i < x->ngroups; i++)
		fprintf(f, "%s%u", i ? "+" : "", x->groups[i]);
	if (!x->ngroups)
		fputs("none", f);
	fputs(" caps=", f);
	if (!x->caps_set && !x->privileged)
		fputs("oci-default(cap_audit_write+cap_kill+cap_net_bind_service)", f);
	else if (x->privileged && !x->caps_set)
		fputs("all", f);
	else
		for (unsigned int v = 0; v < 64; v++)
			if (x->caps & (1ULL << v)) {
				fprintf(f, "%s%s", any ? "+" : "", ra_cap_name(v, name, sizeof(name)));
				any = true;
			}
	if (x->caps_set && !any)
		fputs("none", f);
	fprintf(f, " network=%s", x->network == RA_NET_NONE ? "none" : "host");
	text_esc(f, " hostname=", x->hostname ? x->hostname : "rootasm");
	fprintf(f, " deny_mount_api=%s", x->deny_mount_api ? "true" : "false");
	for (size_t i = 0; i < x->nenv; i++)
		text_esc(f, " env=", x->env[i]);
	fputc('\n', f);
}

static void text_plan(FILE *f, const struct ra_plan *p, int indent)
{
	const struct rootasm_layout *l = p->l;

	fprintf(f, "%*s", indent, "");
	text_esc(f, "layout ", l->file);
	fputc('\n', f);
	if (indent == 0)
		fprintf(f, "for %s%s\n", rootasm_principal_describe(l->principal),
			l->authorized ? "" : " (rights not checked: the host objects were not opened)");
	for (size_t i = 0; i < p->n; i++) {
		const struct ra_op *op = &p->ops[i];

		fprintf(f, "%*s%2zu. ", indent, "", i + 1);
		switch (op->kind) {
		case RA_OP_LAYER:
			fprintf(f, "%s %s", op->key, op->layer->kind == RA_LAYER_IMAGE ? "image" : "dir");
			text_esc(f, " ", op->layer->src.display);
			if (op->layer->kind == RA_LAYER_IMAGE)
				fprintf(f, " type=%s", fstype_name[op->layer->fstype]);
			text_idmap(f, &op->layer->idmap);
			break;
		case RA_OP_UPPER:
			if (l->upper.kind == RA_UPPER_TMPFS) {
				fputs("upper tmpfs", f);
				text_tmpfs(f, &l->upper.tmpfs);
			} else {
				text_esc(f, "upper dir ", l->upper.src.display);
			}
			break;
		case RA_OP_OVERLAY:
			fprintf(f, "overlay of %zu layer(s), %s", l->nlayers,
				l->upper.kind == RA_UPPER_NONE ? "read-only" : "writable");
			if (l->creds.set)
				text_creds(f, &l->creds);
			if (op->creds_in_userns)
				fputs(l->creds.set ? " (a credential in the user namespace)" :
				      " override_creds=the user namespace's root, every capability there", f);
			if (op->user_view)
				fprintf(f, " override_creds=the principal's uid, gid and groups, CAP_SYS_ADMIN only%s",
					l->upper.kind == RA_UPPER_NONE ? "" :
					" (a read-only overlay of the layers, under one with the upper)");
			break;
		case RA_OP_ROOT_LAYER:
			fputs("root is layers[0] itself, read-only", f);
			break;
		case RA_OP_VOLUME: {
			const struct ra_mount *m = op->mount;

			fprintf(f, "%s %s", op->key, ra_volume_kind(m)->name);
			if (m->src.path)
				text_esc(f, " ", m->src.display);
			text_esc(f, " -> ", m->target);
			fputs(" options=", f);
			text_attrs(f, &m->attrs);
			if (ra_volume_kind(m)->keys & RA_VKEY_TMPFS)
				text_tmpfs(f, &m->tmpfs);
			if (ra_volume_kind(m)->keys & RA_VKEY_TYPE)
				fprintf(f, " type=%s", fstype_name[m->fstype]);
			text_idmap(f, &m->idmap);
			break;
		}
		case RA_OP_ROOT_ATTRS:
			fputs("root attributes ", f);
			text_attrs(f, &l->attributes);
			break;
		case RA_OP_TREE_ATTRS: {
			struct ra_attrs a = { .set = op->attr_force, .recursive = true };

			fputs("every mount of the tree ", f);
			text_attrs(f, &a);
			break;
		}
		}
		if (op->to_userns && op->kind == RA_OP_UPPER)
			fputs(" upper/,work/=owned-by-the-user-namespace's-root", f);
		else if (op->to_userns && op->kind != RA_OP_OVERLAY)
			fputs(" idmap=principal's-user-namespace", f);
		if (op->lend)
			fputs(" lent", f);
		if (op->attr_force && op->kind != RA_OP_TREE_ATTRS) {
			struct ra_attrs a = { .set = op->attr_force };

			fputs(" forced=", f);
			text_attrs(f, &a);
		}
		if (op->why) {
			text_esc(f, " (", op->why);
			fputc(')', f);
		}
		fprintf(f, " [%s]", ra_route_name(op->route));
		if (op->loc.line)
			fprintf(f, " (line %u)", op->loc.line);
		fputc('\n', f);
		if (op->sub)
			text_plan(f, op->sub, indent + 4);
		else if (op->kind == RA_OP_VOLUME && ra_volume_kind(op->mount)->src == RA_SRC_LAYOUT)
			fprintf(f, "%*s    (nested layout not loaded: offline)\n", indent, "");
	}
	if (indent == 0)
		text_exec(f, &l->exec);
}

/* --- JSON (json.h: a NULL from any constructor makes the whole document fail with ENOMEM) */

#define jset ra_jset
#define japp ra_japp

static json_t *jattrs(struct ra_jb *b, const struct ra_attrs *a)
{
	const char *w[16];
	size_t n = attr_words(a, w, ARRAY_SIZE(w));
	json_t *arr = json_array();

	for (size_t i = 0; i < n; i++)
		japp(b, arr, ra_jstr(w[i]));
	return arr;
}

static json_t *jranges(struct ra_jb *b, const struct ra_idrange *r, size_t n)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < n; i++) {
		char s[40];

		snprintf(s, sizeof(s), "%u:%u:%u", r[i].inside, r[i].outside, r[i].count);
		japp(b, arr, ra_jstr(s));
	}
	return arr;
}

static json_t *jidmap(struct ra_jb *b, const struct ra_idmap *m)
{
	json_t *o;

	if (!m->set)
		return json_null();
	o = json_object();
	if (m->userns.path)
		return jset(b, o, "userns", ra_jstr(m->userns.display));
	jset(b, o, "uids", jranges(b, m->uids, m->nuids));
	return jset(b, o, "gids", jranges(b, m->gids, m->ngids));
}

static json_t *jtmpfs(struct ra_jb *b, const struct ra_tmpfs *t)
{
	json_t *o = json_object();
	char mode[8];

	snprintf(mode, sizeof(mode), "%04o", t->mode);
	jset(b, o, "size", t->size ? ra_jstr(t->size) : json_null());
	jset(b, o, "nr_inodes", t->nr_inodes ? ra_jstr(t->nr_inodes) : json_null());
	return jset(b, o, "mode", t->has_mode ? ra_jstr(mode) : json_null());
}

static json_t *jcreds(struct ra_jb *b, const struct ra_creds *c)
{
	json_t *o = json_object(), *g = json_array(), *caps = json_array();
	char name[64];

	for (size_t i = 0; i < c->ngroups; i++)
		japp(b, g, json_integer(c->groups[i]));
	for (unsigned int v = 0; v < 64; v++)
		if (c->caps & (1ULL << v))
			japp(b, caps, ra_jstr(ra_cap_name(v, name, sizeof(name))));
	jset(b, o, "uid", json_integer(c->uid));
	jset(b, o, "gid", json_integer(c->gid));
	jset(b, o, "groups", g);
	return jset(b, o, "capabilities", caps);
}

static json_t *jfeatures(struct ra_jb *b, uint64_t needs)
{
	json_t *arr = json_array();

	for (unsigned int f = 0; f < RA_FEAT_COUNT; f++)
		if (needs & (1ULL << f))
			japp(b, arr, ra_jstr(rootasm_feature_name(f)));
	return arr;
}

static json_t *jplan(struct ra_jb *b, const struct ra_plan *p)
{
	const struct rootasm_layout *l = p->l;
	json_t *o = json_object(), *ops = json_array();

	jset(b, o, "layout", ra_jstr(l->file));
	if (!(p->flags & RA_PLAN_NESTED)) {
		jset(b, o, "principal", ra_jstr(rootasm_principal_describe(l->principal)));
		jset(b, o, "authorized", json_boolean(l->authorized));
	}
	for (size_t i = 0; i < p->n; i++) {
		const struct ra_op *op = &p->ops[i];
		json_t *j = json_object();
		static const char *const kinds[] = { "layer", "upper", "overlay", "root-layer", "volume", "root-attributes",
						     "tree-attributes" };

		jset(b, j, "op", ra_jstr(kinds[op->kind]));
		jset(b, j, "key", ra_jstr(op->key));
		jset(b, j, "route", ra_jstr(ra_route_name(op->route)));
		if (op->loc.line) {
			jset(b, j, "line", json_integer(op->loc.line));
			jset(b, j, "column", json_integer(op->loc.column));
		}
		switch (op->kind) {
		case RA_OP_LAYER:
			jset(b, j, "kind", ra_jstr(op->layer->kind == RA_LAYER_IMAGE ? "image" : "dir"));
			jset(b, j, "path", ra_jstr(op->layer->src.display));
			if (op->layer->kind == RA_LAYER_IMAGE)
				jset(b, j, "type", ra_jstr(fstype_name[op->layer->fstype]));
			jset(b, j, "idmap", jidmap(b, &op->layer->idmap));
			break;
		case RA_OP_UPPER:
			jset(b, j, "kind", ra_jstr(l->upper.kind == RA_UPPER_TMPFS ? "tmpfs" : "dir"));
			if (l->upper.kind == RA_UPPER_TMPFS)
				jset(b, j, "tmpfs", jtmpfs(b, &l->upper.tmpfs));
			else
				jset(b, j, "path", ra_jstr(l->upper.src.display));
			break;
		case RA_OP_OVERLAY:
			jset(b, j, "layers", json_integer(l->nlayers));
			jset(b, j, "writable", json_boolean(l->upper.kind != RA_UPPER_NONE));
			jset(b, j, "override_creds", l->creds.set ? jcreds(b, &l->creds) : json_null());
			break;
		case RA_OP_ROOT_LAYER:
			jset(b, j, "readonly", json_true());
			break;
		case RA_OP_VOLUME: {
			const struct ra_mount *m = op->mount;
			const struct ra_volume_kind *k = ra_volume_kind(m);

			jset(b, j, "kind", ra_jstr(k->name));
			jset(b, j, "source", m->src.path ? ra_jstr(m->src.display) : json_null());
			jset(b, j, "target", ra_jstr(m->target));
			jset(b, j, "options", jattrs(b, &m->attrs));
			if (k->keys & RA_VKEY_TMPFS)
				jset(b, j, "tmpfs", jtmpfs(b, &m->tmpfs));
			if (k->keys & RA_VKEY_TYPE)
				jset(b, j, "type", ra_jstr(fstype_name[m->fstype]));
			if (k->keys & RA_VKEY_IDMAP)
				jset(b, j, "idmap", jidmap(b, &m->idmap));
			if (op->sub)
				jset(b, j, "nested", jplan(b, op->sub));
			else if (k->src == RA_SRC_LAYOUT)
				jset(b, j, "nested", json_null());
			break;
		}
		case RA_OP_ROOT_ATTRS:
			jset(b, j, "attributes", jattrs(b, &l->attributes));
			break;
		case RA_OP_TREE_ATTRS:
			break;
		}
		if (op->attr_force) {
			struct ra_attrs a = { .set = op->attr_force };

			jset(b, j, "forced", jattrs(b, &a));
		}
		if (op->why)
			jset(b, j, "why", ra_jstr(op->why));
		if (op->to_userns)
			jset(b, j, "userns", json_true());
		if (op->lend)
			jset(b, j, "lent", json_true());
		if (op->creds_in_userns)
			jset(b, j, "creds_in_userns", json_true());
		if (op->user_view)
			jset(b, j, "user_view", json_true());
		jset(b, j, "needs", jfeatures(b, op->needs));
		japp(b, ops, j);
	}
	jset(b, o, "ops", ops);
	jset(b, o, "needs", jfeatures(b, p->needs));
	return o;
}

int rootasm_plan_print(struct rootasm_ctx *ctx, const struct rootasm_layout *l, FILE *out, unsigned int flags)
{
	struct ra_plan *p = NULL;
	int r;

	if (flags & ~(ROOTASM_PLAN_JSON | ROOTASM_PLAN_PRETTY))
		return -EINVAL;
	r = ra_plan_build(l, ra_plan_have(ctx, l, ra_plan_flags(ctx, l, false)), ra_plan_flags(ctx, l, false), &p, NULL);
	if (r < 0)
		return r;
	if (flags & ROOTASM_PLAN_JSON) {
		struct ra_jb b = { false };
		json_t *o = jplan(&b, p), *ex = json_object(), *env = json_array(), *g = json_array(), *caps = json_array();
		const struct ra_exec *x = &l->exec;
		char name[64];

		jset(&b, ex, "privileged", json_boolean(x->privileged));
		jset(&b, ex, "uid", json_integer(x->user_set ? x->uid : 0));
		jset(&b, ex, "gid", json_integer(x->user_set ? x->gid : 0));
		for (size_t i = 0; i < x->ngroups; i++)
			japp(&b, g, json_integer(x->groups[i]));
		jset(&b, ex, "groups", g);
		if (x->caps_set) {
			for (unsigned int v = 0; v < 64; v++)
				if (x->caps & (1ULL << v))
					japp(&b, caps, ra_jstr(ra_cap_name(v, name, sizeof(name))));
			jset(&b, ex, "capabilities", caps);
		} else {
			json_decref(caps);
			jset(&b, ex, "capabilities", ra_jstr(x->privileged ? "all" : "oci-default"));
		}
		for (size_t i = 0; i < x->nenv; i++)
			japp(&b, env, ra_jstr(x->env[i]));
		jset(&b, ex, "env", env);
		jset(&b, ex, "hostname", ra_jstr(x->hostname ? x->hostname : "rootasm"));
		jset(&b, ex, "network", ra_jstr(x->network == RA_NET_NONE ? "none" : "host"));
		jset(&b, ex, "deny_mount_api", json_boolean(x->deny_mount_api));
		jset(&b, o, "exec", ex);
		r = ra_jdump(&b, o, out, flags & ROOTASM_PLAN_PRETTY);
	} else {
		text_plan(out, p, 0);
	}
	ra_plan_free(p);
	if (r == 0 && ferror(out))
		r = -EIO;
	return r;
}

uint64_t rootasm_layout_needs(struct rootasm_ctx *ctx, const struct rootasm_layout *l)
{
	struct ra_plan *p = NULL;
	uint64_t n;

	if (ra_plan_build(l, ra_plan_have(ctx, l, ra_plan_flags(ctx, l, false)), ra_plan_flags(ctx, l, false), &p, NULL) < 0)
		return 0;
	n = p->needs;
	ra_plan_free(p);
	return n;
}
