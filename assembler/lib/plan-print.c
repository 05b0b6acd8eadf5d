// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A plan printed, losslessly (idmaps, tmpfs options, the credential, routes),
 * as text or as JSON, from one description of it given to the emitter
 * (emit.h): each op a line of the text, an object of the JSON. The exec
 * settings are described by their owner, layout-exec.c (ra_exec_describe()).
 */
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>

#include "context.h"
#include "exec.h"
#include "emit.h"
#include "json.h"
#include "plan.h"
#include "principal.h"
#include "util.h"
#include "volume.h"

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

	em_list(pr, k, t, ",", "-");
	for (size_t i = 0; i < ARRAY_SIZE(attr_names); i++)
		if (a->set & attr_names[i].bit)
			em_put(pr, NULL, "%s", attr_names[i].name);
	if (a->clr & MOUNT_ATTR_RDONLY)
		em_put(pr, NULL, "%s", "rw");
	if ((a->clr & MOUNT_ATTR__ATIME) && !(a->set & MOUNT_ATTR__ATIME))
		em_put(pr, NULL, "%s", "relatime");
	if (prop)
		em_put(pr, NULL, "%s", prop);
	if (a->recursive)
		em_put(pr, NULL, "%s", "recursive");
	em_end(pr);
}

static void ranges(struct pr *pr, const char *k, const char *t, const struct ra_idrange *r, size_t n)
{
	em_list(pr, k, t, ",", NULL);
	for (size_t i = 0; i < n; i++) {
		char s[40];

		snprintf(s, sizeof(s), "%u:%u:%u", r[i].inside, r[i].outside, r[i].count);
		em_put(pr, NULL, "%s", s);
	}
	em_end(pr);
}

static void idmap(struct pr *pr, const struct ra_idmap *m)
{
	if (!m->set)
		return em_put(pr, "idmap", NULL, NULL);
	em_obj(pr, "idmap", " idmap=");
	if (m->userns.path) {
		em_put(pr, "userns", "userns:%s", m->userns.display);
	} else {
		ranges(pr, "uids", "uids:", m->uids, m->nuids);
		ranges(pr, "gids", ";gids:", m->gids, m->ngids);
	}
	em_end(pr);
}

static void tmpfs(struct pr *pr, const struct ra_tmpfs *t)
{
	char mode[8];

	snprintf(mode, sizeof(mode), "%04o", t->mode);
	em_obj(pr, "tmpfs", "");
	em_put(pr, "size", " size=%s", t->size);
	if (!t->size)
		em_txt(pr, " size=default");
	em_put(pr, "nr_inodes", " nr_inodes=%s", t->nr_inodes);
	em_put(pr, "mode", " mode=%s", t->has_mode ? mode : NULL);
	em_end(pr);
}

static void creds(struct pr *pr, const struct ra_creds *c)
{
	if (!c->set)
		return em_put(pr, "override_creds", NULL, NULL);
	em_obj(pr, "override_creds", " override_creds=");
	em_num(pr, "uid", "uid:%s", c->uid);
	em_num(pr, "gid", ",gid:%s", c->gid);
	em_groups(pr, ",groups:", c->groups, c->ngroups);
	em_caps(pr, "capabilities", ",caps:", c->caps);
	em_end(pr);
}

/* The credential the grant gives an overlay (authorize.c, ra_grant_overlay_cred()). */
static void credential(struct pr *pr, enum ra_cred c, bool upper)
{
	static const char *const names[][2] = {
		[RA_CRED_MOUNTER] = { "mounter", NULL },
		[RA_CRED_LAYOUT] = { "layout", NULL },
		[RA_CRED_LAYOUT_USERNS] = { "layout-in-userns", " (a credential in the user namespace)" },
		[RA_CRED_USERNS_ROOT] = { "userns-root", " override_creds=the user namespace's root, every capability there" },
		[RA_CRED_PRINCIPAL] = { "principal", " override_creds=the principal's uid, gid and groups, CAP_SYS_ADMIN only" },
	};

	/* JSON: its name; text: what it is, when it is not the mounter's or the layout's (printed in full) */
	em_put(pr, "credential", names[c][1], names[c][0]);
	if (c == RA_CRED_PRINCIPAL && upper)
		em_txt(pr, " (a read-only overlay of the layers, under one with the upper)");
}

/* A limit on the principal (rootasm_principal_limit()): its directories, or null without one. */
static void dirs(struct pr *pr, const char *k, const char *t, bool set, char *const *v, size_t n)
{
	if (!set)
		return em_put(pr, k, NULL, NULL);
	em_list(pr, k, t, ",", "(none)");
	for (size_t i = 0; i < n; i++)
		em_put(pr, NULL, "%s", v[i]);
	em_end(pr);
}

/* The grant (authorize.c): what the principal is given for the whole tree; per object, on its step. */
static void grant(struct pr *pr, const struct ra_grant *g)
{
	struct ra_attrs force = { .set = g->tree_force };

	em_obj(pr, "grant", "grant:");
	em_yes(pr, "administrator", g->admin, " what the layout says (an administrator's tree)", NULL);
	if (g->tree_force)
		attrs(pr, "tree_forced", " every mount ", &force);
	else
		em_put(pr, "tree_forced", NULL, NULL);
	em_yes(pr, "locked", g->lock, ", locked: its receiver cannot clear an attribute or unmount a volume", NULL);
	em_put(pr, "why", " (%s)", g->why);
	if (g->receiver >= 0)
		em_num(pr, "receiver", " (uid %s)", g->receiver);
	else
		em_put(pr, "receiver", NULL, NULL);
	if (g->userns_fd >= 0) {
		em_obj(pr, "userns", "; into a user namespace");
		em_num(pr, "root_uid", " whose root is uid %s", g->root_uid);
		em_num(pr, "root_gid", " gid %s outside", g->root_gid);
		em_end(pr);
	} else {
		em_put(pr, "userns", NULL, NULL);
	}
	dirs(pr, "layouts", "; layout files only from ", g->who && g->who->limit_layouts, g->who ? g->who->layout_dirs : NULL,
	     g->who ? g->who->nlayout_dirs : 0);
	dirs(pr, "sources", "; host objects only from ", g->who && g->who->limit_sources, g->who ? g->who->source_dirs : NULL,
	     g->who ? g->who->nsource_dirs : 0);
	em_yes(pr, "no_userns", g->who && g->who->limit_userns, "; no user namespace", NULL);
	em_txt(pr, "\n");
	em_end(pr);
}

static void features(struct pr *pr, uint64_t needs)
{
	em_list(pr, "needs", NULL, NULL, NULL);
	for (unsigned int f = 0; f < RA_FEAT_COUNT; f++)
		if (needs & (1ULL << f))
			em_put(pr, NULL, NULL, rootasm_feature_name(f));
	em_end(pr);
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
		[RA_OP_TREE_LOCK] = { "tree-lock", "the %s's attributes locked" },
	};
	const struct rootasm_layout *l = p->l;
	const struct ra_mount *m = op->mount;
	struct ra_attrs force = { .set = op->attr_force };

	em_txt(pr, "%*s%2zu. ", indent, "", i + 1);
	em_put(pr, "op", NULL, kinds[op->kind][0]);
	em_put(pr, "key", kinds[op->kind][1], op->key);
	EM_AT(pr, TAIL);
	em_put(pr, "route", " [%s]", ra_route_name(op->route));
	if (op->loc.line) {
		em_num(pr, "line", " (line %s)", op->loc.line);
		em_num(pr, "column", NULL, op->loc.column);
	}
	em_txt(pr, "\n");
	EM_AT(pr, BODY);
	switch (op->kind) {
	case RA_OP_LAYER:
		em_put(pr, "kind", " %s", op->layer->kind == RA_LAYER_IMAGE ? "image" : "dir");
		em_put(pr, "path", " %s", op->layer->src.display);
		if (op->layer->kind == RA_LAYER_IMAGE)
			em_put(pr, "type", " type=%s", fstype_name[op->layer->fstype]);
		idmap(pr, &op->layer->idmap);
		break;
	case RA_OP_UPPER:
		em_put(pr, "kind", " %s", l->upper.kind == RA_UPPER_TMPFS ? "tmpfs" : l->upper.kind == RA_UPPER_DIRS ? "dirs" : "dir");
		if (l->upper.kind == RA_UPPER_TMPFS)
			tmpfs(pr, &l->upper.tmpfs);
		else
			em_put(pr, "path", " %s", l->upper.src.display);
		if (l->upper.kind == RA_UPPER_DIRS)
			em_put(pr, "workdir", " workdir=%s", l->upper.work.display);
		break;
	case RA_OP_OVERLAY:
		em_num(pr, "layers", " of %s layer(s)", (long long)l->nlayers);
		em_yes(pr, "writable", l->upper.kind != RA_UPPER_NONE, ", writable", ", read-only");
		creds(pr, &l->creds);
		break;
	case RA_OP_ROOT_LAYER:
		em_yes(pr, "readonly", true, ", read-only", NULL);
		break;
	case RA_OP_VOLUME:
		em_put(pr, "kind", " %s", ra_volume_kind(m)->name);
		em_put(pr, "source", " %s", m->src.path ? m->src.display : NULL);
		em_put(pr, "target", " -> %s", m->target);
		attrs(pr, "options", " options=", &m->attrs);
		/* what the kind takes, it shows (volume.h) */
		if (ra_volume_kind(m)->keys & RA_VKEY_TMPFS)
			tmpfs(pr, &m->tmpfs);
		if (ra_volume_kind(m)->keys & RA_VKEY_TYPE)
			em_put(pr, "type", " type=%s", fstype_name[m->fstype]);
		if (ra_volume_kind(m)->keys & RA_VKEY_IDMAP)
			idmap(pr, &m->idmap);
		EM_AT(pr, BELOW);
		if (op->sub) {
			em_obj(pr, "nested", "");
			describe_plan(pr, op->sub, indent + 4);
			em_end(pr);
		} else if (ra_volume_kind(m)->src == RA_SRC_LAYOUT) {
			em_put(pr, "nested", NULL, NULL);
			em_txt(pr, "%*s    (nested layout not loaded: offline)\n", indent, "");
		}
		EM_AT(pr, BODY);
		break;
	case RA_OP_ROOT_ATTRS:
		attrs(pr, "attributes", " ", &l->attributes);
		break;
	case RA_OP_TREE_LOCK:
		em_txt(pr, ": its receiver cannot clear them or unmount a volume");
		break;
	case RA_OP_TREE_ATTRS:
		force.recursive = true;
		attrs(pr, NULL, " ", &force);
		force.recursive = false;
		break;
	}
	EM_AT(pr, LATE);
	if (op->attr_force)
		attrs(pr, "forced", op->kind != RA_OP_TREE_ATTRS ? " forced=" : NULL, &force);
	if (op->why)
		em_put(pr, "why", " (%s)", op->why);
	EM_AT(pr, BODY);
	em_flag(pr, "userns", op->to_userns,
		op->kind == RA_OP_UPPER ? " upper/,work/=owned-by-the-user-namespace's-root" :
	     op->kind == RA_OP_OVERLAY ? NULL : " idmap=principal's-user-namespace");
	em_flag(pr, "lent", op->lend, " lent");
	if (op->kind == RA_OP_OVERLAY)
		credential(pr, op->cred, l->upper.kind != RA_UPPER_NONE);
	features(pr, op->needs);
}

static void describe_plan(struct pr *pr, const struct ra_plan *p, int indent)
{
	const struct rootasm_layout *l = p->l;
	bool top = !(p->flags & RA_PLAN_NESTED);

	em_txt(pr, "%*s", indent, "");
	em_put(pr, "layout", "layout %s\n", l->file);
	if (top) {
		em_put(pr, "principal", "for %s", rootasm_principal_describe(l->principal));
		em_yes(pr, "authorized", l->authorized, "\n",
		       " (rights not checked: the host objects were not opened)\n");
		grant(pr, p->g);
	}
	em_list(pr, "ops", "", NULL, NULL);
	for (size_t i = 0; i < p->n; i++)
		for (em_line(pr, NULL); em_again(pr);)
			op_fields(pr, p, &p->ops[i], i, indent);
	em_end(pr);
	features(pr, p->needs);
	if (top)
		for (em_line(pr, "exec"); em_again(pr);)
			ra_exec_describe(pr, &l->exec);
}

int ra_plan_print(const struct ra_plan *p, FILE *out, unsigned int flags)
{
	struct pr pr = { .json = flags & ROOTASM_PLAN_JSON, .f = out };

	em_obj(&pr, NULL, "");
	describe_plan(&pr, p, 0);
	em_end(&pr);
	return pr.json ? ra_jdump(&pr.b, pr.lv[0].j, out, flags & ROOTASM_PLAN_PRETTY) : 0;
}
