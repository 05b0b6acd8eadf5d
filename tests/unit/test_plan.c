// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The plan from stub feature sets and principals, without a kernel: the
 * layout is parsed only (no host object is opened), the principal is built
 * in memory and the authorize stage's word is set on the model as
 * authorize.c would; every decision must then be a step of the plan.
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

#include "layout.h"
#include "plan.h"
#include "principal.h"
#include "rootasm.h"

#define F(x) (1ULL << ROOTASM_FEAT_##x)

static struct rootasm_layout *parse(const char *text)
{
	struct ra_diag d = { 0 };
	struct rootasm_layout *l = NULL;
	struct rootasm_error e = { 0 };

	assert_int_equal(ra_layout_parse(text, strlen(text), "t.yaml", "/srv", &d, &l, &e), 0);
	return l;
}

static struct ra_plan *plan(const struct rootasm_layout *l, uint64_t have, unsigned int flags)
{
	struct ra_plan *p = NULL;
	struct rootasm_error e = { 0 };

	assert_int_equal(ra_plan_build(l, have, flags, &p, &e), 0);
	return p;
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
	struct ra_plan *p = plan(l, 0, 0);

	(void)state;
	for (size_t i = 0; i < p->n; i++) {
		assert_int_equal(p->ops[i].attr_force, 0);
		assert_false(p->ops[i].to_userns);
		assert_int_not_equal(p->ops[i].kind, RA_OP_TREE_ATTRS);
		assert_int_not_equal(p->ops[i].kind, RA_OP_TREE_LOCK);
	}
	/* without open_tree_attr an idmapped bind is clone + mount_setattr; with it, one call */
	assert_int_equal(find(p, "mounts[4]")->route, RA_ROUTE_BIND_CLONE);
	ra_plan_free(p);
	p = plan(l, F(OPEN_TREE_ATTR), 0);
	assert_int_equal(find(p, "mounts[4]")->route, RA_ROUTE_BIND_ATTR);
	assert_true(find(p, "mounts[4]")->needs & F(OPEN_TREE_ATTR));
	ra_plan_free(p);
	/* the plan asks only for what decides a route */
	assert_int_equal(ra_plan_consults(l, 0), F(OPEN_TREE_ATTR));
	/* an administrator's tree for a receiver who may not be one: nosuid,nodev and locked, nothing else forced */
	p = plan(l, 0, ra_plan_flags(NULL, l, false, true));
	assert_int_equal(p->ops[p->n - 1].kind, RA_OP_TREE_LOCK);
	assert_int_equal(p->ops[p->n - 1].route, RA_ROUTE_LOCK);
	assert_string_equal(p->ops[p->n - 1].why, "the tree goes to a receiver who may not be an administrator");
	assert_int_equal(p->ops[p->n - 2].kind, RA_OP_TREE_ATTRS);
	assert_int_equal(p->ops[p->n - 2].attr_force, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	for (size_t i = 0; i + 2 < p->n; i++)
		assert_int_equal(p->ops[i].attr_force, 0);
	ra_plan_free(p);
	rootasm_layout_free(l);
}

/* A user: the rw bind it cannot write is read-only, and the tree nosuid,nodev, as steps. */
static void test_user(void **state)
{
	struct rootasm_layout *l = parse(layout);
	struct rootasm_principal u = { .uid = 1771, .gid = 1771, .userns_fd = -EBADF };
	const struct ra_op *op;
	struct ra_plan *p;

	(void)state;
	l->principal = &u;
	/* authorize.c's word on mounts[0] */
	l->mounts[0].src.auth_ro = true;
	l->mounts[0].src.auth_why = "read-only: uid 1771 cannot write /srv/data";
	p = plan(l, 0, ra_plan_flags(NULL, l, false, false));
	assert_true(p->flags & RA_PLAN_USER);
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
	l->principal = NULL;
	rootasm_layout_free(l);
}

/* A user namespace: images and tmpfs into it, host directories never; the credential in it where it can be. */
static void test_userns(void **state)
{
	struct rootasm_layout *l = parse(
		"version: 1\nlayers:\n  - image: base.sqfs\n  - dir: tools\nupper: { tmpfs: {} }\n"
		"mounts:\n  - { bind: /srv/data, target: /data }\n  - { tmpfs: /tmp }\n  - { image: vol.sqfs, target: /vol }\n"
		"  - { layout: sub.yaml, target: /sub }\n");
	struct ra_plan *p;
	const struct ra_op *op;

	(void)state;
	assert_int_equal(ra_plan_consults(l, RA_PLAN_USERNS), F(OVL_CREDS_NOADMIN));
	p = plan(l, 0, RA_PLAN_USERNS | RA_PLAN_CACHE);
	assert_true(find(p, "layers[0]")->to_userns);
	assert_false(find(p, "layers[0]")->lend);	/* an idmapped cached image is a clone of its own */
	assert_false(find(p, "layers[1]")->to_userns);
	assert_int_equal(find(p, "layers[1]")->route, RA_ROUTE_LAYER_FD);
	assert_false(find(p, "mounts[0]")->to_userns);
	assert_true(find(p, "mounts[1]")->to_userns);
	assert_true(find(p, "mounts[2]")->to_userns);
	assert_true(find(p, "upper")->to_userns);
	op = find(p, "overlay");
	assert_false(op->creds_in_userns);	/* the kernel cannot record one without CAP_SYS_ADMIN */
	assert_false(op->needs & F(OVL_CREDS_NOADMIN));
	ra_plan_free(p);
	p = plan(l, F(OVL_CREDS_NOADMIN), RA_PLAN_USERNS);
	op = find(p, "overlay");
	assert_true(op->creds_in_userns);
	assert_true(op->needs & F(OVL_CREDS_NOADMIN));
	ra_plan_free(p);
	/* without a user namespace a cached image is lent to overlayfs, not cloned */
	p = plan(l, 0, RA_PLAN_CACHE);
	assert_true(find(p, "layers[0]")->lend);
	assert_int_equal(find(p, "layers[0]")->route, RA_ROUTE_CACHED);
	assert_false(find(p, "layers[0]")->needs & F(OPEN_TREE_DETACHED));
	ra_plan_free(p);
	rootasm_layout_free(l);
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
	struct ra_plan *p;

	(void)state;
	/* an administrator: the mounter's credential */
	p = plan(l, 0, ra_plan_flags(NULL, l, false, false));
	assert_false(find(p, "overlay")->user_view);
	assert_false(find(p, "overlay")->needs & F(OVL_OVERRIDE_CREDS));
	ra_plan_free(p);
	l->principal = &u;
	p = plan(l, 0, ra_plan_flags(NULL, l, false, false));
	op = find(p, "overlay");
	assert_true(op->user_view);
	assert_true(op->needs & F(OVL_OVERRIDE_CREDS));
	assert_non_null(op->why);
	assert_ptr_equal(p->who, &u);
	ra_plan_free(p);
	/* in its user namespace, where the kernel records the namespace's root: that one is its own already */
	p = plan(l, F(OVL_CREDS_NOADMIN), RA_PLAN_USER | RA_PLAN_USERNS);
	assert_true(find(p, "overlay")->creds_in_userns);
	assert_false(find(p, "overlay")->user_view);
	ra_plan_free(p);
	/* where it cannot, the user's view again */
	p = plan(l, 0, RA_PLAN_USER | RA_PLAN_USERNS);
	assert_true(find(p, "overlay")->user_view);
	ra_plan_free(p);
	l->principal = NULL;
	rootasm_layout_free(l);
	/* the directory on top covers nothing the user cannot see */
	l = parse(on_top);
	l->principal = &u;
	p = plan(l, 0, ra_plan_flags(NULL, l, false, false));
	assert_false(find(p, "overlay")->user_view);
	ra_plan_free(p);
	l->principal = NULL;
	rootasm_layout_free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_admin),
		cmocka_unit_test(test_user),
		cmocka_unit_test(test_userns),
		cmocka_unit_test(test_user_view),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
