// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The plan stage: a layout -> an ordered list of operations, each with its
 * layout location, the model element (and so the fds) it works on, the
 * syscall route it takes and the kernel features it needs. No system calls
 * here, and no question to the kernel: what it has is given (needs.c asks).
 * The engine (engine.c) executes exactly this list; `rootasm check` prints
 * exactly this list (plan-print.c).
 *
 *   overlay root:  LAYER (top first, one per layer) ... [UPPER] OVERLAY
 *   single layer:  LAYER ROOT_LAYER
 *   then:          VOLUME ... (in layout order; a nested layout carries its own plan)
 *                  [ROOT_ATTRS]
 *                  [TREE_ATTRS TREE_LOCK] (the grant's: authorize.c, ra_grant())
 *
 * What a principal is given comes from the authorize stage: per host object
 * in the model (ra_src.auth_*), for the tree in the grant (struct ra_grant):
 * its forced attributes and lock, its user namespace, each overlay's
 * credential. This file turns them into steps and decides none of them.
 */
#include <stdio.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/mount.h>

#include "plan.h"
#include "principal.h"
#include "util.h"
#include "volume.h"

const char *ra_route_name(enum ra_route r)
{
	/* in the order of enum ra_route */
	static const char *const names[] = {
		"-", "o_path-fd", "open_tree-clone", "image+fsmount", "tmpfs+mkdirat", "mkdirat", "o_path-fds",
		"fsconfig-set-fd+fsmount", "open_tree+mount_setattr", "open_tree_attr", "fsmount", "nested-plan",
		"mount_setattr", "cached-mount", "userns-copy+open_tree",
	};
	_Static_assert(ARRAY_SIZE(names) == RA_ROUTE_LOCK + 1, "a name for each route");

	return r < ARRAY_SIZE(names) ? names[r] : "?";
}

void ra_plan_free(struct ra_plan *p)
{
	for (size_t i = 0; p && i < p->n; i++)
		ra_plan_free(p->ops[i].sub);
	if (p)
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

uint64_t ra_plan_consults(const struct rootasm_layout *l, const struct ra_grant *g)
{
	uint64_t m = 0;

	/* in a user namespace, an overlay without a credential of the layout's records one there if it can */
	if (g->userns_fd >= 0 && ra_is_overlay(l) && !l->creds.set)
		m |= RA_F(OVL_CREDS_NOADMIN);
	for (size_t i = 0; i < l->nmounts; i++) {
		const struct ra_volume_kind *k = ra_volume_kind(&l->mounts[i]);

		if (k->consults)
			m |= k->consults(&l->mounts[i]);
		if (l->mounts[i].nested)
			m |= ra_plan_consults(l->mounts[i].nested, g);
	}
	return m;
}

int ra_plan_build(const struct rootasm_layout *l, const struct ra_grant *g, uint64_t have, unsigned int flags,
		  struct ra_plan **ret, struct rootasm_error *e)
{
	struct ra_plan *p = calloc(1, sizeof(*p));
	bool overlay = ra_is_overlay(l), userns = g->userns_fd >= 0;
	int r;

	if (!p)
		return ra_oom(e, "plan");
	flags = (flags & ~RA_PLAN_USERNS) | (userns ? RA_PLAN_USERNS : 0);
	p->l = l;
	p->flags = flags;
	p->g = g;
	/* at most: every layer, upper, overlay or root layer, every mount, root and tree attributes, lock */
	p->ops = calloc(l->nlayers + l->nmounts + 5, sizeof(*p->ops));
	if (!p->ops) {
		free(p);
		return ra_oom(e, "plan");
	}
	p->needs = RA_F(MOUNT_API);
	/* lowerdir+ appends below what is there: the layout's top layer goes first */
	for (size_t i = l->nlayers; i-- > 0;) {
		const struct ra_layer *ly = &l->layers[i];
		/* in a user namespace an image is idmapped into it; a host directory never is (authorize.c) */
		bool to_userns = userns && ly->kind == RA_LAYER_IMAGE;
		bool own = !overlay || ly->idmap.set || to_userns;	/* a mount of its own */
		enum ra_route route = ly->kind == RA_LAYER_IMAGE ?
				      (flags & RA_PLAN_CACHE ? RA_ROUTE_CACHED : RA_ROUTE_IMAGE) :
				      own ? RA_ROUTE_LAYER_CLONE : RA_ROUTE_LAYER_FD;
		uint64_t needs = (ly->kind == RA_LAYER_IMAGE ? RA_F(LOOP_CONFIGURE) : 0) |
				 (ly->idmap.set || to_userns ? RA_F(MOUNT_SETATTR) : 0) |
				 (route == RA_ROUTE_CACHED && own ? RA_F(OPEN_TREE_DETACHED) : 0);
		struct ra_op *op = add(p, RA_OP_LAYER, route, ly->loc, needs, "layers", (long)i);

		op->layer = ly;
		op->slot = p->nslots++;
		op->to_userns = to_userns;
		/* a cached image that needs no mount of its own: overlayfs clones it privately at create */
		op->lend = route == RA_ROUTE_CACHED && !own;
	}
	if (overlay) {
		uint64_t needs = RA_F(OVL_FD_LAYERS) | RA_F(FSCONFIG_OPATH) | RA_F(OVL_DETACHED_LAYERS);
		/* the credential is the grant's; what it needs of the kernel, the plan's */
		enum ra_cred cred = ra_grant_overlay_cred(g, l, have & RA_F(OVL_CREDS_NOADMIN));
		struct ra_op *op;

		if (l->upper.kind != RA_UPPER_NONE)
			add(p, RA_OP_UPPER, l->upper.kind == RA_UPPER_TMPFS ? RA_ROUTE_UPPER_TMPFS : l->upper.kind == RA_UPPER_DIRS ? RA_ROUTE_UPPER_DIRS : RA_ROUTE_UPPER_DIR,
			    l->upper.loc, 0, "upper", -1)->to_userns = userns;
		if (l->creds.set) {
			needs |= RA_F(OVL_OVERRIDE_CREDS);
			/* in a user namespace no capability is CAP_SYS_ADMIN over the layers */
			if (!(l->creds.caps & (1ULL << CAP_SYS_ADMIN)) || userns)
				needs |= RA_F(OVL_CREDS_NOADMIN);
		}
		if (cred == RA_CRED_USERNS_ROOT)
			needs |= RA_F(OVL_CREDS_NOADMIN);
		if (cred == RA_CRED_PRINCIPAL)
			needs |= RA_F(OVL_OVERRIDE_CREDS);
		op = add(p, RA_OP_OVERLAY, RA_ROUTE_OVERLAY, l->creds.set ? l->creds.loc : l->layers[0].loc, needs,
			 "overlay", -1);
		op->to_userns = userns;
		op->cred = cred;
		if (cred == RA_CRED_PRINCIPAL)
			op->why = "a directory layer lies under another layer: overlayfs looks the layers up with "
				  "the principal's own rights";
	} else {
		add(p, RA_OP_ROOT_LAYER, l->layers[0].kind == RA_LAYER_DIR ? RA_ROUTE_SETATTR : RA_ROUTE_NONE,
		    l->layers[0].loc, l->layers[0].kind == RA_LAYER_DIR ? RA_F(MOUNT_SETATTR) : 0, "layers", 0);
	}
	for (size_t i = 0; i < l->nmounts; i++) {
		const struct ra_mount *m = &l->mounts[i];
		uint64_t needs = RA_F(OPENAT2) | RA_F(MOVE_DETACHED) | RA_F(MOUNT_SETATTR);
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
			r = ra_plan_build(m->nested, g, have, flags | RA_PLAN_NESTED, &op->sub, e);
			if (r < 0) {
				ra_plan_free(p);
				return r;
			}
			op->needs |= op->sub->needs;
			p->needs |= op->sub->needs;
		}
	}
	if (attrs_set(&l->attributes))
		add(p, RA_OP_ROOT_ATTRS, RA_ROUTE_SETATTR, (struct ra_loc){ 0, 0 }, RA_F(MOUNT_SETATTR), "attributes", -1);
	/* the grant's tree-wide attributes, then its lock: the top plan's last steps */
	if (!(flags & RA_PLAN_NESTED) && g->tree_force) {
		struct ra_op *op = add(p, RA_OP_TREE_ATTRS, RA_ROUTE_SETATTR, (struct ra_loc){ 0, 0 }, RA_F(MOUNT_SETATTR),
				       "tree", -1);

		op->attr_force = g->tree_force;
		op->why = g->why;
	}
	if (!(flags & RA_PLAN_NESTED) && g->lock)
		add(p, RA_OP_TREE_LOCK, RA_ROUTE_LOCK, (struct ra_loc){ 0, 0 }, RA_F(MOUNT_API), "tree", -1)->why = g->why;
	*ret = p;
	return 0;
}
