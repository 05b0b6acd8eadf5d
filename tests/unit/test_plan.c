// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The grant and the plan from stub feature sets and principals, without a
 * kernel: the layout is parsed only (no host object is opened), the
 * principal is built in memory, the authorize stage's word on each object is
 * set on the model as authorize.c would, the grant is ra_grant()'s (or, for
 * a user namespace, set as it would be); every decision must then be a step
 * of the plan, and the plan must decide nothing the grant does not say.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "layout.h"
#include "plan.h"
#include "principal.h"
#include "rootasm.h"

#define F(x) (1ULL << ROOTASM_FEAT_##x)

static struct rootasm_principal admin = { .admin = true, .userns_fd = -EBADF };

/* A layout parsed only, for an administrator (a test may name another principal; lfree() forgets it). */
static struct rootasm_layout *parse(const char *text)
{
	struct ra_diag d = { 0 };
	struct rootasm_layout *l = NULL;
	struct rootasm_error e = { 0 };

	assert_int_equal(ra_layout_parse(text, strlen(text), "t.yaml", "/srv", &d, &l, &e), 0);
	l->principal = &admin;
	return l;
}

static void lfree(struct rootasm_layout *l)
{
	l->principal = NULL;
	rootasm_layout_free(l);
}

static struct ra_plan *plan_g(const struct rootasm_layout *l, const struct ra_grant *g, uint64_t have,
			      unsigned int flags)
{
	struct ra_plan *p = NULL;
	struct rootasm_error e = { 0 };

	assert_int_equal(ra_plan_build(l, g, have, flags, &p, &e), 0);
	assert_ptr_equal(p->g, g);
	return p;
}

/* The plan with ra_grant()'s grant for @l (handed to its principal, or locked for a receiver with @lock). */
static struct ra_grant grant_of(const struct rootasm_layout *l, bool lock)
{
	struct ra_delivery dl = { .userns_fd = -EBADF, .lock = lock };
	struct rootasm_error e = { 0 };
	struct ra_grant g;

	assert_int_equal(ra_grant(l, &dl, &g, &e), 0);
	return g;
}

/* A grant for a user namespace, as ra_grant() makes it (without a namespace to ask who its root is). */
static struct ra_grant userns_grant(const struct rootasm_principal *who)
{
	struct ra_grant g = { .who = who, .admin = ra_principal_admin(who), .userns_fd = 1000, .receiver = -1,
			      .root_uid = 100000,
			      .root_gid = 100000 };

	if (!g.admin) {
		g.tree_force = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
		g.lock = true;
		g.why = "the tree is not for an administrator";
	}
	return g;
}

static const struct ra_op *find(const struct ra_plan *p, const char *key)
{
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->ops[i].key, key))
			return &p->ops[i];
	return NULL;
}

static const char *const layout =
	"version: 1\n"
	"layers:\n  - image: base.sqfs\n  - dir: tools\n"
	"upper: { tmpfs: {} }\n"
	"mounts:\n"
	"  - { bind: /srv/data, target: /data }\n"
	"  - { bind: /etc/resolv.conf, target: /etc/resolv.conf, options: [ro] }\n"
	"  - { tmpfs: /tmp }\n"
	"  - { image: vol.sqfs, target: /vol }\n"
	"  - { bind: /srv/x, target: /x, idmap: { uids: [\"0:1000:1\"], gids: [\"0:1000:1\"] } }\n";

/* An administrator's plan: what the layout says, nothing forced, no tree-wide step. */
static void test_admin(void **state)
{
	struct rootasm_layout *l = parse(layout);
	struct ra_grant g = grant_of(l, false), gl;
	struct ra_plan *p = plan_g(l, &g, 0, 0);

	(void)state;
	assert_true(g.admin);
	assert_false(g.lock);
	assert_int_equal(g.tree_force, 0);
	for (size_t i = 0; i < p->n; i++) {
		assert_int_equal(p->ops[i].attr_force, 0);
		assert_false(p->ops[i].to_userns);
		assert_int_not_equal(p->ops[i].kind, RA_OP_TREE_ATTRS);
		assert_int_not_equal(p->ops[i].kind, RA_OP_TREE_LOCK);
	}
	/* without open_tree_attr an idmapped bind is clone + mount_setattr; with it, one call */
	assert_int_equal(find(p, "mounts[4]")->route, RA_ROUTE_BIND_CLONE);
	ra_plan_free(p);
	p = plan_g(l, &g, F(OPEN_TREE_ATTR), 0);
	assert_int_equal(find(p, "mounts[4]")->route, RA_ROUTE_BIND_ATTR);
	assert_true(find(p, "mounts[4]")->needs & F(OPEN_TREE_ATTR));
	ra_plan_free(p);
	/* the plan asks only for what decides a route */
	assert_int_equal(ra_plan_consults(l, &g), F(OPEN_TREE_ATTR));
	/* an administrator's tree for a receiver who may not be one: nosuid,nodev and locked, nothing else forced */
	gl = grant_of(l, true);
	assert_true(gl.admin);
	assert_true(gl.lock);
	assert_int_equal(gl.tree_force, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	p = plan_g(l, &gl, 0, 0);
	assert_int_equal(p->ops[p->n - 1].kind, RA_OP_TREE_LOCK);
	assert_int_equal(p->ops[p->n - 1].route, RA_ROUTE_LOCK);
	assert_string_equal(p->ops[p->n - 1].why, "the tree goes to a receiver who may not be an administrator");
	assert_int_equal(p->ops[p->n - 2].kind, RA_OP_TREE_ATTRS);
	assert_int_equal(p->ops[p->n - 2].attr_force, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	for (size_t i = 0; i + 2 < p->n; i++)
		assert_int_equal(p->ops[i].attr_force, 0);
	ra_plan_free(p);
	lfree(l);
}

/* A user: the rw bind it cannot write is read-only, and the tree nosuid,nodev, as steps. */
static void test_user(void **state)
{
	struct rootasm_layout *l = parse(layout);
	struct rootasm_principal u = { .uid = 1771, .gid = 1771, .userns_fd = -EBADF };
	const struct ra_op *op;
	struct ra_grant g;
	struct ra_plan *p;

	(void)state;
	l->principal = &u;
	/* authorize.c's word on mounts[0] */
	l->mounts[0].src.auth_ro = true;
	l->mounts[0].src.auth_why = "read-only: uid 1771 cannot write /srv/data";
	g = grant_of(l, false);
	assert_false(g.admin);
	assert_ptr_equal(g.who, &u);
	assert_true(g.lock);
	assert_int_equal(g.tree_force, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	p = plan_g(l, &g, 0, 0);
	op = find(p, "mounts[0]");
	assert_int_equal(op->attr_force, MOUNT_ATTR_RDONLY);
	assert_string_equal(op->why, "read-only: uid 1771 cannot write /srv/data");
	assert_int_equal(find(p, "mounts[1]")->attr_force, 0);
	op = &p->ops[p->n - 2];
	assert_int_equal(op->kind, RA_OP_TREE_ATTRS);
	assert_int_equal(op->attr_force, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	assert_true(op->needs & F(MOUNT_SETATTR));
	/* then locked: the user cannot clear what was forced (its last step) */
	op = &p->ops[p->n - 1];
	assert_int_equal(op->kind, RA_OP_TREE_LOCK);
	assert_string_equal(op->why, "the tree is not for an administrator");
	ra_plan_free(p);
	l->mounts[0].src.auth_why = NULL;
	lfree(l);
}

/* A user namespace: images and tmpfs into it, host directories never; the credential in it where it can be. */
static void test_userns(void **state)
{
	struct rootasm_layout *l = parse(
		"version: 1\nlayers:\n  - image: base.sqfs\n  - dir: tools\nupper: { tmpfs: {} }\n"
		"mounts:\n  - { bind: /srv/data, target: /data }\n  - { tmpfs: /tmp }\n  - { image: vol.sqfs, target: /vol }\n"
		"  - { layout: sub.yaml, target: /sub }\n");
	struct ra_grant g = userns_grant(&admin), none = grant_of(l, false);
	struct ra_plan *p;
	const struct ra_op *op;

	(void)state;
	assert_int_equal(ra_plan_consults(l, &g), F(OVL_CREDS_NOADMIN));
	assert_int_equal(ra_plan_consults(l, &none), 0);
	p = plan_g(l, &g, 0, RA_PLAN_CACHE);
	assert_true(find(p, "layers[0]")->to_userns);
	assert_false(find(p, "layers[0]")->lend);	/* an idmapped cached image is a clone of its own */
	assert_false(find(p, "layers[1]")->to_userns);
	assert_int_equal(find(p, "layers[1]")->route, RA_ROUTE_LAYER_FD);
	assert_false(find(p, "mounts[0]")->to_userns);
	assert_true(find(p, "mounts[1]")->to_userns);
	assert_true(find(p, "mounts[2]")->to_userns);
	assert_true(find(p, "upper")->to_userns);
	op = find(p, "overlay");
	assert_int_equal(op->cred, RA_CRED_MOUNTER);	/* the kernel cannot record one without CAP_SYS_ADMIN */
	assert_false(op->needs & F(OVL_CREDS_NOADMIN));
	ra_plan_free(p);
	p = plan_g(l, &g, F(OVL_CREDS_NOADMIN), 0);
	op = find(p, "overlay");
	assert_int_equal(op->cred, RA_CRED_USERNS_ROOT);
	assert_true(op->needs & F(OVL_CREDS_NOADMIN));
	ra_plan_free(p);
	/* without a user namespace a cached image is lent to overlayfs, not cloned */
	p = plan_g(l, &none, 0, RA_PLAN_CACHE);
	assert_true(find(p, "layers[0]")->lend);
	assert_int_equal(find(p, "layers[0]")->route, RA_ROUTE_CACHED);
	assert_false(find(p, "layers[0]")->needs & F(OPEN_TREE_DETACHED));
	ra_plan_free(p);
	lfree(l);
}

/* A directory layer under another layer: the user's overlay looks the layers up with the user's rights. */
static void test_user_view(void **state)
{
	static const char *const covered = "version: 1\nlayers:\n  - dir: tools\n  - image: base.sqfs\n"
					   "upper: { tmpfs: {} }\n";
	static const char *const on_top = "version: 1\nlayers:\n  - image: base.sqfs\n  - dir: tools\n";
	struct rootasm_principal u = { .uid = 1771, .gid = 1771, .userns_fd = -EBADF };
	struct rootasm_layout *l = parse(covered);
	const struct ra_op *op;
	struct ra_grant g = grant_of(l, false), gu;
	struct ra_plan *p;

	(void)state;
	/* an administrator: the mounter's credential */
	p = plan_g(l, &g, 0, 0);
	assert_int_equal(find(p, "overlay")->cred, RA_CRED_MOUNTER);
	assert_false(find(p, "overlay")->needs & F(OVL_OVERRIDE_CREDS));
	ra_plan_free(p);
	l->principal = &u;
	g = grant_of(l, false);
	p = plan_g(l, &g, 0, 0);
	op = find(p, "overlay");
	assert_int_equal(op->cred, RA_CRED_PRINCIPAL);
	assert_true(op->needs & F(OVL_OVERRIDE_CREDS));
	assert_non_null(op->why);
	assert_ptr_equal(p->g->who, &u);
	ra_plan_free(p);
	/* in its user namespace, where the kernel records the namespace's root: that one is its own already */
	gu = userns_grant(&u);
	p = plan_g(l, &gu, F(OVL_CREDS_NOADMIN), 0);
	assert_int_equal(find(p, "overlay")->cred, RA_CRED_USERNS_ROOT);
	ra_plan_free(p);
	/* where it cannot, the user's view again */
	p = plan_g(l, &gu, 0, 0);
	assert_int_equal(find(p, "overlay")->cred, RA_CRED_PRINCIPAL);
	ra_plan_free(p);
	lfree(l);
	/* the directory on top covers nothing the user cannot see */
	l = parse(on_top);
	l->principal = &u;
	g = grant_of(l, false);
	p = plan_g(l, &g, 0, 0);
	assert_int_equal(find(p, "overlay")->cred, RA_CRED_MOUNTER);
	ra_plan_free(p);
	lfree(l);
}

/*
 * The grant decides what the plan carries out: a layout's own credential
 * (an administrator's, in or out of a user namespace), and its own idmaps
 * refused for a user namespace before anything is asked of the kernel.
 */
static void test_grant(void **state)
{
	struct rootasm_layout *l = parse("version: 1\nlayers:\n  - image: base.sqfs\n  - dir: tools\n"
					 "upper: { tmpfs: {} }\n"
					 "overlay: { override_creds: { uid: 0, gid: 0, capabilities: [CAP_SYS_ADMIN] } }\n"
					 "mounts:\n  - { bind: /srv/x, target: /x, idmap: { uids: [\"0:1000:1\"], "
					 "gids: [\"0:1000:1\"] } }\n");
	struct ra_delivery dl = { .userns_fd = 1000 };
	struct rootasm_error e = { 0 };
	struct ra_grant g = grant_of(l, false), gu = userns_grant(&admin);
	struct ra_plan *p;

	(void)state;
	assert_int_equal(ra_grant_overlay_cred(&g, l, false), RA_CRED_LAYOUT);
	assert_int_equal(ra_grant_overlay_cred(&g, l, true), RA_CRED_LAYOUT);
	assert_int_equal(ra_grant_overlay_cred(&gu, l, false), RA_CRED_LAYOUT_USERNS);
	p = plan_g(l, &gu, 0, 0);
	assert_int_equal(find(p, "overlay")->cred, RA_CRED_LAYOUT_USERNS);
	assert_true(find(p, "overlay")->needs & F(OVL_CREDS_NOADMIN));
	ra_plan_free(p);
	/* the receivers are the delivery's word; whether that locks the tree, the grant's */
	{
		uid_t mine[] = { 0, geteuid() }, other[] = { 0, 4242 };
		struct ra_delivery d1 = { .userns_fd = -EBADF, .receivers = mine, .n_receivers = 2 };
		struct ra_delivery d2 = { .userns_fd = -EBADF, .receivers = other, .n_receivers = 2 };

		assert_int_equal(ra_grant(l, &d1, &g, &e), 0);
		assert_false(g.lock);
		assert_int_equal(g.receiver, -1);
		assert_int_equal(ra_grant(l, &d2, &g, &e), 0);
		assert_true(g.lock);
		assert_int_equal(g.tree_force, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
		assert_int_equal(g.receiver, 4242);
	}
	/* no principal is no administrator (a load always names one: the caller, judged) */
	l->principal = NULL;
	g = grant_of(l, false);
	assert_false(g.admin);
	assert_true(g.lock);
	l->principal = &admin;
	/* mounts[0]'s idmap cannot also go into a user namespace: refused by the grant, not at execution */
	assert_int_equal(ra_grant(l, &dl, &g, &e), -EINVAL);
	assert_int_equal(e.kind, ROOTASM_ERROR_USAGE);
	assert_non_null(strstr(e.msg, "mounts[0] has an idmap of its own"));
	lfree(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_admin),
		cmocka_unit_test(test_user),
		cmocka_unit_test(test_userns),
		cmocka_unit_test(test_user_view),
		cmocka_unit_test(test_grant),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
