// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The ABI rules of rootasm.h, through the shared library as a program links
 * it: the version macros agree with the library, the public structs keep
 * their layout (a field moved or resized breaks every program built before;
 * new fields go at the end of an option struct or into reserved space), and
 * the option structs' size and flag rules are enforced (load, exec, send-fd,
 * bundle):
 * a size too small is EINVAL, bytes this library does not know are E2BIG,
 * unknown flags EINVAL.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rootasm.h"

static const char small[] = "version: 1\nlayers:\n  - dir: /nonexistent-is-fine-offline\n";

static void test_version(void **state)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%d.%d.%d", ROOTASM_VERSION_MAJOR, ROOTASM_VERSION_MINOR, ROOTASM_VERSION_PATCH);
	assert_string_equal(buf, ROOTASM_VERSION_STRING);
	assert_string_equal(rootasm_version(), ROOTASM_VERSION_STRING);
	assert_int_equal(ROOTASM_VERSION_NUMBER,
			 ROOTASM_VERSION_MAJOR * 10000 + ROOTASM_VERSION_MINOR * 100 + ROOTASM_VERSION_PATCH);
}

#define OFF(type, field, want) assert_int_equal(offsetof(struct type, field), want)

/* The layout on LP64 (x86_64, aarch64, ...), frozen: append, never move. */
static void test_struct_layout(void **state)
{
	if (sizeof(long) != 8)
		skip();
	OFF(rootasm_error, err, 0);
	OFF(rootasm_error, kind, 4);
	OFF(rootasm_error, op, 8);
	OFF(rootasm_error, path, 72);
	OFF(rootasm_error, msg, 4168);
	OFF(rootasm_error, file, 4680);
	OFF(rootasm_error, line, 8776);
	OFF(rootasm_error, column, 8780);
	OFF(rootasm_error, feature, 8784);
	OFF(rootasm_error, reserved, 8848);
	assert_int_equal(sizeof(struct rootasm_error), 8912);

	OFF(rootasm_load_opts, size, 0);
	OFF(rootasm_load_opts, flags, 8);
	OFF(rootasm_load_opts, diag, 16);
	OFF(rootasm_load_opts, userdata, 24);
	OFF(rootasm_load_opts, name, 32);
	OFF(rootasm_load_opts, dir_fd, 40);

	OFF(rootasm_exec_opts, size, 0);
	OFF(rootasm_exec_opts, flags, 8);
	OFF(rootasm_exec_opts, preserve_fds, 12);
	OFF(rootasm_exec_opts, env, 16);
	OFF(rootasm_exec_opts, hostname, 24);
	OFF(rootasm_exec_opts, tty_master, 32);

	OFF(rootasm_send_opts, size, 0);
	OFF(rootasm_send_opts, flags, 8);
	OFF(rootasm_send_opts, timeout_ms, 12);
	OFF(rootasm_send_opts, peer_uids, 16);
	OFF(rootasm_send_opts, n_peer_uids, 24);
	OFF(rootasm_send_opts, layout, 32);

	OFF(rootasm_exec_result, status, 0);
	OFF(rootasm_exec_result, from_pidfd_info, 4);
	OFF(rootasm_exec_result, cgroupid, 8);
	OFF(rootasm_exec_result, reserved, 16);
	assert_int_equal(sizeof(struct rootasm_exec_result), 48);

	OFF(rootasm_mount_event, attach, 0);
	OFF(rootasm_mount_event, detach, 1);
	OFF(rootasm_mount_event, mnt_id, 8);
	OFF(rootasm_mount_event, reserved, 16);
	assert_int_equal(sizeof(struct rootasm_mount_event), 32);

	OFF(rootasm_bundle_opts, size, 0);
	OFF(rootasm_bundle_opts, flags, 8);
	OFF(rootasm_bundle_opts, layout, 16);
	OFF(rootasm_bundle_opts, upper, 24);

	OFF(rootasm_bundle_result, root, 0);
	OFF(rootasm_bundle_result, layout, 8);
	OFF(rootasm_bundle_result, mnt_id, 16);
	OFF(rootasm_bundle_result, rootasm_mounts, 24);
	OFF(rootasm_bundle_result, n_rootasm_mounts, 32);
	OFF(rootasm_bundle_result, runtime_mounts, 40);
	OFF(rootasm_bundle_result, n_runtime_mounts, 48);
	OFF(rootasm_bundle_result, detached, 56);
	OFF(rootasm_bundle_result, reserved, 64);
	assert_int_equal(sizeof(struct rootasm_bundle_result), 96);

	OFF(rootasm_import_opts, size, 0);
	OFF(rootasm_import_opts, store, 8);
	OFF(rootasm_import_opts, fs, 16);
	OFF(rootasm_import_opts, progress, 24);
	OFF(rootasm_import_opts, userdata, 32);
	OFF(rootasm_import_opts, flags, 40);
	OFF(rootasm_import_opts, download, 48);
	OFF(rootasm_import_opts, tag, 56);
	/* 0.2's fields where they were (rootasm_import@LIBROOTASM_0.2 fills those), reserved space since 0.4 */
	OFF(rootasm_import_layer, image, 304);
	OFF(rootasm_import_layer, seconds, 320);
	OFF(rootasm_import_layer, reserved, 328);
	assert_int_equal(sizeof(struct rootasm_import_layer), 392);
	OFF(rootasm_import_result, layers, 176);
	OFF(rootasm_import_result, wrote, 192);
	OFF(rootasm_import_result, name, 200);
	OFF(rootasm_import_result, source, 208);
	OFF(rootasm_import_result, source_why, 216);
	OFF(rootasm_import_result, stored_as, 224);
	OFF(rootasm_import_result, reserved, 232);
	assert_int_equal(sizeof(struct rootasm_import_result), 272);
}

static int load_mem(const void *opts, struct rootasm_error *e)
{
	struct rootasm_layout *l = NULL;
	int r;

	memset(e, 0, sizeof(*e));
	r = rootasm_layout_load_mem(NULL, small, strlen(small), opts, &l, e);
	rootasm_layout_free(l);
	return r;
}

/* A caller's struct with room for fields this library does not know. */
struct newer_load_opts {
	struct rootasm_load_opts o;
	unsigned long long future[4];
};

static void test_load_opts_size(void **state)
{
	struct newer_load_opts n = { .o = { .size = sizeof(n), .flags = ROOTASM_LOAD_OFFLINE } };
	struct rootasm_load_opts o = { .size = sizeof(o), .flags = ROOTASM_LOAD_OFFLINE };
	struct rootasm_error e;

	/* NULL options and the current size: fine */
	assert_int_equal(load_mem(NULL, &e), -ENOENT);	/* not offline: the dir is opened */
	assert_int_equal(load_mem(&o, &e), 0);
	/* an older caller's struct that ends after flags: the rest takes defaults */
	o.size = offsetof(struct rootasm_load_opts, diag);
	assert_int_equal(load_mem(&o, &e), 0);
	/* too small to hold the flags */
	o.size = offsetof(struct rootasm_load_opts, flags);
	assert_int_equal(load_mem(&o, &e), -EINVAL);
	assert_int_equal(e.kind, ROOTASM_ERROR_USAGE);
	assert_non_null(strstr(e.msg, "sizeof(struct rootasm_load_opts)"));
	o.size = 0;
	assert_int_equal(load_mem(&o, &e), -EINVAL);
	/* a newer caller: unknown bytes all zero are fine, any set one is E2BIG */
	assert_int_equal(load_mem(&n, &e), 0);
	n.future[3] = 1;
	assert_int_equal(load_mem(&n, &e), -E2BIG);
	assert_int_equal(e.err, E2BIG);
	assert_int_equal(e.kind, ROOTASM_ERROR_USAGE);
	assert_non_null(strstr(e.msg, "does not know"));
	/* an absurd size is refused before anything is read past the struct */
	o.size = 1 << 20;
	assert_int_equal(load_mem(&o, &e), -E2BIG);
}

static void test_load_opts_flags(void **state)
{
	struct rootasm_load_opts o = { .size = sizeof(o), .flags = ROOTASM_LOAD_OFFLINE | 0x80 };
	struct rootasm_layout *l = NULL;
	struct rootasm_error e = { 0 };

	assert_int_equal(load_mem(&o, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "unknown flags 0x80"));
	o.flags = 0x80000000u;
	assert_int_equal(load_mem(&o, &e), -EINVAL);
	/* ROOTASM_LOAD_DIR_FD: from memory only, and only with the dir_fd field */
	o.flags = ROOTASM_LOAD_DIR_FD | ROOTASM_LOAD_OFFLINE;
	o.dir_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(o.dir_fd >= 0);
	assert_int_equal(load_mem(&o, &e), 0);
	assert_int_equal(rootasm_layout_load(NULL, "/dev/null", &o, &l, &e), -EINVAL);
	assert_null(l);
	assert_non_null(strstr(e.msg, "rootasm_layout_load_mem"));
	o.size = offsetof(struct rootasm_load_opts, dir_fd);
	assert_int_equal(load_mem(&o, &e), -EINVAL);
	close(o.dir_fd);
}

/* exec and send-fd options: refused before anything is started or connected */
struct newer_exec_opts {
	struct rootasm_exec_opts o;
	unsigned long long future[2];
};

struct newer_send_opts {
	struct rootasm_send_opts o;
	unsigned long long future[2];
};

static void test_exec_send_opts(void **state)
{
	char *argv[] = { "/bin/true", NULL };
	struct rootasm_exec_opts x = { .size = sizeof(x), .flags = 0x100 };
	struct newer_exec_opts nx = { .o = { .size = sizeof(nx) } };
	struct rootasm_send_opts so = { .size = sizeof(so), .flags = 0x100 };
	struct newer_send_opts ns = { .o = { .size = sizeof(ns) } };
	struct rootasm_error e = { 0 };

	assert_int_equal(rootasm_exec_start(NULL, NULL, -1, argv, &x, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "unknown flags 0x100"));
	x.flags = ROOTASM_EXEC_NETWORK_NONE | ROOTASM_EXEC_NETWORK_HOST;
	assert_int_equal(rootasm_exec_start(NULL, NULL, -1, argv, &x, &e), -EINVAL);
	x.flags = 0;
	x.size = offsetof(struct rootasm_exec_opts, flags);
	assert_int_equal(rootasm_exec_start(NULL, NULL, -1, argv, &x, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "sizeof(struct rootasm_exec_opts)"));
	nx.future[1] = 1;
	assert_int_equal(rootasm_exec_start(NULL, NULL, -1, argv, &nx.o, &e), -E2BIG);
	assert_int_equal(e.kind, ROOTASM_ERROR_USAGE);
	/* a terminal needs somewhere to put its master: a caller of the smaller struct has none */
	x.size = offsetof(struct rootasm_exec_opts, tty_master);
	x.flags = ROOTASM_EXEC_TTY;
	assert_int_equal(rootasm_exec_start(NULL, NULL, -1, argv, &x, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "tty_master"));
	/* the hostname: the rule of the layout's exec.hostname */
	x.size = sizeof(x);
	x.flags = 0;
	x.hostname = "a/b";
	assert_int_equal(rootasm_exec_start(NULL, NULL, -1, argv, &x, &e), -EINVAL);
	assert_int_equal(e.kind, ROOTASM_ERROR_USAGE);
	assert_non_null(strstr(e.msg, "hostname 'a/b'"));
	x.hostname = NULL;
	assert_true(rootasm_hostname_ok("web-1.example") && rootasm_hostname_ok("a"));
	assert_false(rootasm_hostname_ok("") || rootasm_hostname_ok("a\nb") || rootasm_hostname_ok("-a") ||
		     rootasm_hostname_ok(".a") || rootasm_hostname_ok("a_b") ||
		     rootasm_hostname_ok("x2345678901234567890123456789012345678901234567890123456789012345"));

	assert_int_equal(rootasm_send_fd(-1, "/nonexistent/socket", &so, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "unknown flags 0x100"));
	assert_int_equal(rootasm_send_fd_to(-1, -1, &so, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "unknown flags 0x100"));
	so.flags = 0;
	so.size = 4;
	assert_int_equal(rootasm_send_fd(-1, "/nonexistent/socket", &so, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "sizeof(struct rootasm_send_opts)"));
	ns.future[0] = 1;
	assert_int_equal(rootasm_send_fd_to(-1, -1, &ns.o, &e), -E2BIG);
	/* all zero past what this library knows: on to the next check (not a socket) */
	ns.future[0] = 0;
	assert_int_equal(rootasm_send_fd_to(-1, -1, &ns.o, &e), -ENOTSOCK);
}

struct newer_bundle_opts {
	struct rootasm_bundle_opts o;
	unsigned long long future[2];
};

/* bundle options: refused before the bundle directory is even opened (it does not exist) */
static void test_bundle_opts(void **state)
{
	struct rootasm_bundle_opts o = { .size = sizeof(o), .flags = 0x1 };
	struct newer_bundle_opts no = { .o = { .size = sizeof(no) } };
	struct rootasm_bundle_result res = { .detached = true };
	struct rootasm_error e = { 0 };

	assert_int_equal(rootasm_bundle_prepare(NULL, "/nonexistent", &o, &res, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "unknown flags 0x1"));
	assert_false(res.detached);
	assert_int_equal(rootasm_bundle_cleanup(NULL, "/nonexistent", &o, NULL, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "unknown flags 0x1"));
	o.flags = 0;
	o.size = offsetof(struct rootasm_bundle_opts, flags);
	assert_int_equal(rootasm_bundle_prepare(NULL, "/nonexistent", &o, NULL, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "sizeof(struct rootasm_bundle_opts)"));
	no.future[1] = 1;
	assert_int_equal(rootasm_bundle_prepare(NULL, "/nonexistent", &no.o, NULL, &e), -E2BIG);
	assert_int_equal(e.kind, ROOTASM_ERROR_USAGE);
	/* all zero past what this library knows: on to the bundle, which is not there */
	no.future[1] = 0;
	assert_int_equal(rootasm_bundle_cleanup(NULL, "/nonexistent", &no.o, NULL, &e), -ENOENT);
	assert_int_equal(e.kind, ROOTASM_ERROR_USAGE);
	/* a layout or an upper goes with prepare only */
	o.size = sizeof(o);
	o.layout = "l.json";
	assert_int_equal(rootasm_bundle_cleanup(NULL, "/nonexistent", &o, NULL, &e), -EINVAL);
	rootasm_bundle_result_free(&res);
	rootasm_bundle_result_free(NULL);
}

static void test_other_flags(void **state)
{
	struct rootasm_load_opts o = { .size = sizeof(o), .flags = ROOTASM_LOAD_OFFLINE };
	struct rootasm_layout *l = NULL;
	struct rootasm_ctx *ctx = NULL;
	struct rootasm_error e = { 0 };
	FILE *devnull = fopen("/dev/null", "w");

	assert_non_null(devnull);
	assert_int_equal(rootasm_ctx_new(0x2, &ctx), -EINVAL);
	assert_null(ctx);
	assert_int_equal(rootasm_ctx_new(ROOTASM_CTX_DEBUG, &ctx), 0);
	rootasm_ctx_free(ctx);
	assert_int_equal(rootasm_layout_load_mem(NULL, small, strlen(small), &o, &l, &e), 0);
	assert_int_equal(rootasm_plan_print(NULL, l, devnull, 0x4), -EINVAL);
	assert_int_equal(rootasm_plan_print(NULL, l, devnull, ROOTASM_PLAN_JSON | ROOTASM_PLAN_PRETTY), 0);
	rootasm_layout_free(l);
	fclose(devnull);
}

/* rootasm_import_opts: the size rule and flags, refused before anything else (no root needed). */
struct newer_import_opts {
	struct rootasm_import_opts o;
	unsigned long long future[2];
};

static void test_import_opts(void **state)
{
	struct newer_import_opts n = { .o = { .size = sizeof(n) } };
	/* 0x1 is ROOTASM_IMPORT_TLS_NO_VERIFY */
	struct rootasm_import_opts o = { .size = sizeof(o), .flags = 0x2 };
	struct rootasm_import_result res;
	struct rootasm_error e = { 0 };

	(void)state;
	assert_int_equal(rootasm_import(NULL, "oci:/nonexistent", &o, &res, &e), -EINVAL);
	assert_int_equal(e.kind, ROOTASM_ERROR_USAGE);
	assert_non_null(strstr(e.msg, "unknown flags 0x2"));
	/* an older caller's struct without flags: the flags it has not are 0 */
	o.size = offsetof(struct rootasm_import_opts, flags);
	memset(&e, 0, sizeof(e));
	assert_int_not_equal(rootasm_import(NULL, "oci:/nonexistent", &o, &res, &e), -EINVAL);
	/* too small */
	o.size = offsetof(struct rootasm_import_opts, fs);
	assert_int_equal(rootasm_import(NULL, "oci:/nonexistent", &o, &res, &e), -EINVAL);
	/* a newer caller: zeros past what we know are fine, anything else E2BIG */
	memset(&e, 0, sizeof(e));
	assert_int_not_equal(rootasm_import(NULL, "oci:/nonexistent", &n.o, &res, &e), -E2BIG);
	n.future[1] = 1;
	assert_int_equal(rootasm_import(NULL, "oci:/nonexistent", &n.o, &res, &e), -E2BIG);
	assert_int_equal(e.kind, ROOTASM_ERROR_USAGE);
}

static void test_features(void **state)
{
	unsigned int n = rootasm_feature_count();

	/* rootasm_layout_needs() is a 64-bit mask */
	assert_true(n > 0 && n <= 64);
	for (unsigned int f = 0; f < n; f++) {
		assert_non_null(rootasm_feature_name(f));
		assert_non_null(rootasm_feature_desc(f));
	}
	assert_null(rootasm_feature_name(n));
	assert_int_equal(rootasm_probe_feature(NULL, n, NULL, 0), -EINVAL);
	assert_int_equal(rootasm_probe_feature(NULL, (enum rootasm_feature)-1, NULL, 0), -EINVAL);
}

/* An error kind this program does not know prints as "runtime". */
static void test_error_kinds(void **state)
{
	struct rootasm_error e = { .err = EIO, .kind = (enum rootasm_error_kind)77 };
	char buf[256];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	assert_non_null(f);
	snprintf(e.op, sizeof(e.op), "frobnicate");
	assert_int_equal(rootasm_error_print_json(&e, f, false), 0);
	fclose(f);
	assert_non_null(strstr(buf, "\"kind\":\"runtime\""));
	assert_false(rootasm_error_is_usage(&e));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_struct_layout),
		cmocka_unit_test(test_load_opts_size),
		cmocka_unit_test(test_load_opts_flags),
		cmocka_unit_test(test_exec_send_opts),
		cmocka_unit_test(test_bundle_opts),
		cmocka_unit_test(test_other_flags),
		cmocka_unit_test(test_import_opts),
		cmocka_unit_test(test_features),
		cmocka_unit_test(test_error_kinds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
