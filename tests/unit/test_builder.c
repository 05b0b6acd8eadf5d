// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The layout builder (rootasm_layout_builder_*), through the shared library:
 * a layout built with calls prints the same plan as the same layout written
 * as YAML and loaded, source locations aside (offline, and opened on real directories); strange paths
 * are themselves, not YAML; a layout error names the builder call.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rootasm.h"

static char *plan_text(struct rootasm_ctx *ctx, const struct rootasm_layout *l)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(rootasm_plan_print(ctx, l, f, ROOTASM_PLAN_JSON | ROOTASM_PLAN_PRETTY), 0);
	assert_int_equal(fclose(f), 0);
	/* source locations are of the text each was parsed from: not compared */
	for (char *s = buf, *nl; s && *s; s = nl) {
		nl = strchr(s, '\n');
		nl = nl ? nl + 1 : s + strlen(s);
		if (strstr(s, "\"line\": ") == s + strspn(s, " ") || strstr(s, "\"column\": ") == s + strspn(s, " ")) {
			memmove(s, nl, strlen(nl) + 1);
			nl = s;
		}
	}
	return buf;
}

static void same_plan(const char *yaml, struct rootasm_layout_builder *b, unsigned int flags)
{
	struct rootasm_load_opts o = { .size = sizeof(o), .flags = flags, .name = "t.yaml" };
	struct rootasm_layout *ly = NULL, *lb = NULL;
	struct rootasm_error e = { 0 };
	struct rootasm_ctx *ctx = NULL;
	char *py, *pb, fmt[1024];

	assert_int_equal(rootasm_ctx_new(0, &ctx), 0);
	if (rootasm_layout_load_mem(ctx, yaml, strlen(yaml), &o, &ly, &e) < 0)
		fail_msg("yaml: %s", rootasm_error_format(&e, fmt, sizeof(fmt)));
	if (rootasm_layout_builder_finish(b, ctx, &o, &lb, &e) < 0)
		fail_msg("builder: %s", rootasm_error_format(&e, fmt, sizeof(fmt)));
	py = plan_text(ctx, ly);
	pb = plan_text(ctx, lb);
	assert_string_equal(pb, py);
	free(py);
	free(pb);
	rootasm_layout_free(ly);
	rootasm_layout_free(lb);
	rootasm_ctx_free(ctx);
}

static void test_offline_same_plan(void **state)
{
	static const char yaml[] =
		"version: 1\n"
		"layers:\n"
		"  - image: /srv/base.erofs\n"
		"    type: erofs\n"
		"  - dir: /srv/app\n"
		"upper:\n"
		"  tmpfs: { size: 64M }\n"
		"overlay:\n"
		"  override_creds: { uid: 0, gid: 0, groups: [10, 20] }\n"
		"mounts:\n"
		"  - bind: /srv/data\n"
		"    target: /data/./x//\n"
		"    options: [ro, nosuid, recursive]\n"
		"  - tmpfs: /tmp\n"
		"    options: [nodev, size=16M, mode=1777]\n"
		"  - image: /srv/tools.squashfs\n"
		"    target: /opt/tools\n"
		"    type: squashfs\n"
		"    options: [ro]\n"
		"exec:\n"
		"  hostname: box\n"
		"  env: [A=1, B=two words]\n";
	struct rootasm_layout_builder *b = NULL;
	gid_t groups[] = { 10, 20 };

	(void)state;
	assert_int_equal(rootasm_layout_builder_new(&b), 0);
	assert_int_equal(rootasm_layout_builder_add_image_layer(b, "/srv/base.erofs", "erofs"), 0);
	assert_int_equal(rootasm_layout_builder_add_dir_layer(b, "/srv/app"), 0);
	assert_int_equal(rootasm_layout_builder_set_upper_tmpfs(b, "64M"), 0);
	assert_int_equal(rootasm_layout_builder_set_override_creds(b, 0, 0, groups, 2), 0);
	assert_int_equal(rootasm_layout_builder_add_bind(b, "/srv/data", "/data/./x//",
							 ROOTASM_BUILDER_RO | ROOTASM_BUILDER_NOSUID |
							 ROOTASM_BUILDER_RECURSIVE), 0);
	assert_int_equal(rootasm_layout_builder_add_tmpfs(b, "/tmp", "16M", 01777, ROOTASM_BUILDER_NODEV), 0);
	assert_int_equal(rootasm_layout_builder_add_image_volume(b, "/srv/tools.squashfs", "/opt/tools", "squashfs",
								 ROOTASM_BUILDER_RO), 0);
	assert_int_equal(rootasm_layout_builder_set_exec_hostname(b, "box"), 0);
	assert_int_equal(rootasm_layout_builder_add_exec_env(b, "A=1"), 0);
	assert_int_equal(rootasm_layout_builder_add_exec_env(b, "B=two words"), 0);
	same_plan(yaml, b, ROOTASM_LOAD_OFFLINE);
	/* finish leaves the builder as it was: a second finish gives the same */
	same_plan(yaml, b, ROOTASM_LOAD_OFFLINE);
	rootasm_layout_builder_free(b);
}

/* Opened for real: directories this test makes (no privilege needed to open them). */
static void test_open_same_plan(void **state)
{
	char dir[] = "/tmp/rootasm-builder-XXXXXX", lower[64], data[64], yaml[512];
	struct rootasm_layout_builder *b = NULL;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(lower, sizeof(lower), "%s/lower", dir);
	snprintf(data, sizeof(data), "%s/da\"ta: {x}", dir);
	assert_int_equal(mkdir(lower, 0755), 0);
	assert_int_equal(mkdir(data, 0755), 0);
	snprintf(yaml, sizeof(yaml),
		 "version: 1\nlayers:\n  - dir: '%s'\nupper: { tmpfs: {} }\nmounts:\n"
		 "  - { bind: '%s', target: /data }\n", lower, data);
	assert_int_equal(rootasm_layout_builder_new(&b), 0);
	assert_int_equal(rootasm_layout_builder_add_dir_layer(b, lower), 0);
	assert_int_equal(rootasm_layout_builder_set_upper_tmpfs(b, NULL), 0);
	/* a path with YAML's own characters in it is only a path */
	assert_int_equal(rootasm_layout_builder_add_bind(b, data, "/data", 0), 0);
	same_plan(yaml, b, 0);
	rootasm_layout_builder_free(b);
	rmdir(data);
	rmdir(lower);
	rmdir(dir);
}

static unsigned int ndiag;
static char diag_op[4][64];

static void diag(const struct rootasm_error *e, void *userdata)
{
	(void)userdata;
	if (ndiag < 4)
		snprintf(diag_op[ndiag], sizeof(diag_op[0]), "%s", e->op);
	ndiag++;
}

static void test_errors_name_the_call(void **state)
{
	struct rootasm_load_opts o = { .size = sizeof(o), .flags = ROOTASM_LOAD_OFFLINE, .diag = diag };
	struct rootasm_layout_builder *b = NULL;
	struct rootasm_layout *l = NULL;
	struct rootasm_error e = { 0 };

	(void)state;
	assert_int_equal(rootasm_layout_builder_new(&b), 0);
	/* the calls refuse only what they can see: NULL, unknown flags */
	assert_int_equal(rootasm_layout_builder_add_bind(b, "/a", NULL, 0), -EINVAL);
	assert_int_equal(rootasm_layout_builder_add_bind(b, "/a", "/b", 0x8000), -EINVAL);
	assert_int_equal(rootasm_layout_builder_add_tmpfs(b, "/t", NULL, 0, ROOTASM_BUILDER_RECURSIVE), -EINVAL);
	assert_int_equal(rootasm_layout_builder_add_tmpfs(b, "/t", NULL, 010000, 0), -EINVAL);
	assert_int_equal(rootasm_layout_builder_add_dir_layer(b, "/srv/app"), 0);
	/* the parse stage's checks, each named by the call that made the item */
	assert_int_equal(rootasm_layout_builder_add_bind(b, "/srv/x", "/a/../etc", 0), 0);
	assert_int_equal(rootasm_layout_builder_add_tmpfs(b, "/ok\xe2\x80\xaegpj.exe", "1G", 0, 0), 0);
	assert_int_equal(rootasm_layout_builder_add_exec_env(b, "no equals sign"), 0);
	assert_int_equal(rootasm_layout_builder_add_exec_env(b, "NL=a\nb"), 0);
	assert_int_equal(rootasm_layout_builder_finish(b, NULL, &o, &l, &e), -EINVAL);
	assert_null(l);
	assert_int_equal(e.kind, ROOTASM_ERROR_USAGE);
	assert_string_equal(e.op, "rootasm_layout_builder_add_bind");
	assert_non_null(strstr(e.msg, "mounts[0].target: "));
	assert_non_null(strstr(e.msg, "'..'"));
	assert_string_equal(e.file, "");
	assert_int_equal(e.line, 0);
	assert_int_equal(ndiag, 4);
	assert_string_equal(diag_op[0], "rootasm_layout_builder_add_bind");
	assert_string_equal(diag_op[1], "rootasm_layout_builder_add_tmpfs");
	assert_string_equal(diag_op[2], "rootasm_layout_builder_add_exec_env");
	assert_string_equal(diag_op[3], "rootasm_layout_builder_add_exec_env");
	rootasm_layout_builder_free(b);

	/* the open stage's word on a host path, named by the call too */
	assert_int_equal(rootasm_layout_builder_new(&b), 0);
	assert_int_equal(rootasm_layout_builder_add_dir_layer(b, "/"), 0);
	assert_int_equal(rootasm_layout_builder_add_bind(b, "/nonexistent/rootasm-builder", "/x", 0), 0);
	memset(&e, 0, sizeof(e));
	assert_true(rootasm_layout_builder_finish(b, NULL, NULL, &l, &e) < 0);
	assert_null(l);
	assert_string_equal(e.op, "rootasm_layout_builder_add_bind");
	assert_non_null(strstr(e.msg, "mounts[0].bind"));
	rootasm_layout_builder_free(b);

	/* no layer at all: the finish call */
	assert_int_equal(rootasm_layout_builder_new(&b), 0);
	memset(&e, 0, sizeof(e));
	assert_int_equal(rootasm_layout_builder_finish(b, NULL, NULL, &l, &e), -EINVAL);
	assert_string_equal(e.op, "rootasm_layout_builder_finish");
	/* the options' size rule */
	o.size = 2;
	assert_int_equal(rootasm_layout_builder_finish(b, NULL, &o, &l, &e), -EINVAL);
	rootasm_layout_builder_free(b);
	rootasm_layout_builder_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_offline_same_plan),
		cmocka_unit_test(test_open_same_plan),
		cmocka_unit_test(test_errors_name_the_call),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
