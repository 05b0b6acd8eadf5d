// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Parser, plan and path checks; no privileges needed. Every bad-input case
 * asserts that the one-line error names the right line and key.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <sched.h>
#include <sys/mount.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "layout.h"
#include "rootasm.h"
#include "util.h"

static char tmpdir[] = "/tmp/rootasm-unit-XXXXXX";

static void put(const char *name, const char *text)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", tmpdir, name);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	char p[512];

	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(p, sizeof(p), "%s/l1", tmpdir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/data", tmpdir);
	mkdir(p, 0755);
	put("base.sqfs", "hsqs");
	put("sub.yaml", "version: 1\nlayers:\n  - dir: l1\n");
	put("loop-a.yaml", "version: 1\nlayers: [{dir: l1}]\nmounts: [{layout: loop-b.yaml, target: /b}]\n");
	put("loop-b.yaml", "version: 1\nlayers: [{dir: l1}]\nmounts: [{layout: loop-a.yaml, target: /a}]\n");
	snprintf(p, sizeof(p), "%s/link-to-l1", tmpdir);
	if (symlink("l1", p) < 0)
		return -1;
	snprintf(p, sizeof(p), "%s/fifo", tmpdir);
	if (mkfifo(p, 0644) < 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static int parse(const char *text, struct rootasm_layout **l, struct rootasm_error *e)
{
	memset(e, 0, sizeof(*e));
	return ra_layout_parse(text, strlen(text), "test.yaml", tmpdir, NULL, l, e);
}

/* The whole load (parse + open stage) of @text written to tmpdir/test.yaml. */
static int load(const char *text, struct rootasm_layout **l, struct rootasm_error *e)
{
	char p[512];

	put("test.yaml", text);
	snprintf(p, sizeof(p), "%s/test.yaml", tmpdir);
	memset(e, 0, sizeof(*e));
	return rootasm_layout_load(NULL, p, NULL, l, e);
}

struct bad {
	const char *name;
	const char *yaml;
	unsigned int line;		/* expected 1-based line */
	const char *key;		/* expected in the key part of the error */
	const char *msg;		/* expected in the message */
	const char *file;		/* file named by the error; NULL = test.yaml */
};

#define HDR "version: 1\nlayers:\n  - dir: l1\n"

static const struct bad bad_cases[] = {
	{ "empty document", "", 0, "", "empty layout" },
	{ "syntax error", "version: 1\nlayers: [\n", 3, "syntax", "" },
	{ "tab indentation", "version: 1\nlayers:\n\t- dir: l1\n", 3, "syntax", "" },
	{ "top level is a list", "- a\n- b\n", 1, "(top level)", "expected a mapping" },
	{ "unknown top-level key", HDR "layres: []\n", 4, "(top level)", "unknown key 'layres'" },
	{ "duplicate top-level key", HDR "version: 1\n", 4, "(top level)", "duplicate key 'version' (first at line 1)" },
	{ "missing version", "layers:\n  - dir: l1\n", 1, "version", "missing key 'version'" },
	{ "wrong version", "version: 2\nlayers:\n  - dir: l1\n", 1, "version", "unsupported version '2'" },
	{ "missing layers", "version: 1\n", 1, "layers", "missing key 'layers'" },
	{ "layers not a list", "version: 1\nlayers: l1\n", 2, "layers", "expected a list, got a scalar" },
	{ "no layers", "version: 1\nlayers: []\n", 2, "layers", "at least one layer" },
	{ "layer not a mapping", "version: 1\nlayers:\n  - l1\n", 3, "layers[0]", "expected a mapping" },
	{ "layer with both kinds", "version: 1\nlayers:\n  - {dir: l1, image: base.sqfs}\n", 3, "layers[0]", "exactly one of 'image' or 'dir'" },
	{ "layer unknown key", "version: 1\nlayers:\n  - dir: l1\n  - imag: base.sqfs\n", 4, "layers[1]", "unknown key 'imag'" },
	{ "layer bad type", "version: 1\nlayers:\n  - {image: base.sqfs, type: ext4}\n", 3, "layers[0].type", "unknown image type 'ext4'" },
	{ "type on dir layer", "version: 1\nlayers:\n  - {dir: l1, type: erofs}\n", 3, "layers[0]", "'type' applies to image layers only" },
	{ "layer empty path", "version: 1\nlayers:\n  - dir: ''\n", 3, "layers[0].dir", "non-empty string" },
	{ "upper with both", HDR "upper: {tmpfs: {}, dir: data}\n", 4, "upper", "exactly one of 'tmpfs', 'dir' or 'upperdir'" },
	{ "upper dir and upperdir", HDR "upper: {dir: data, upperdir: /u, workdir: /w}\n", 4, "upper", "exactly one of 'tmpfs', 'dir' or 'upperdir'" },
	{ "upperdir without workdir", HDR "upper:\n  upperdir: /u\n", 5, "upper", "'upperdir' and 'workdir' go together" },
	{ "workdir alone", HDR "upper:\n  workdir: /w\n", 5, "upper", "exactly one of 'tmpfs', 'dir' or 'upperdir'" },
	{ "upper unknown key", HDR "upper:\n  ramfs: {}\n", 5, "upper", "unknown key 'ramfs'" },
	{ "upper negative size", HDR "upper:\n  tmpfs: { size: -1M }\n", 5, "upper.tmpfs.size", "bad size '-1M'" },
	{ "upper bad size suffix", HDR "upper:\n  tmpfs: { size: 12Q }\n", 5, "upper.tmpfs.size", "bad size '12Q'" },
	{ "upper size percent over 100", HDR "upper:\n  tmpfs: { size: 150% }\n", 5, "upper.tmpfs.size", "bad size" },
	{ "upper bad mode", HDR "upper:\n  tmpfs: { mode: 0999 }\n", 5, "upper.tmpfs.mode", "octal mode" },
	{ "creds missing uid", HDR "upper: {tmpfs: {}}\noverlay:\n  override_creds: { gid: 1 }\n", 6, "overlay.override_creds", "missing key 'uid'" },
	{ "creds negative uid", HDR "upper: {tmpfs: {}}\noverlay:\n  override_creds: { uid: -5, gid: 1 }\n", 6, "overlay.override_creds.uid", "expected an id" },
	{ "creds uid too large", HDR "upper: {tmpfs: {}}\noverlay:\n  override_creds: { uid: 4294967295, gid: 1 }\n", 6, "overlay.override_creds.uid", "expected an id" },
	{ "creds bad group", HDR "upper: {tmpfs: {}}\noverlay:\n  override_creds:\n    uid: 1\n    gid: 1\n    groups: [1, x]\n", 9, "overlay.override_creds.groups[1]", "expected an id" },
	{ "creds unknown capability", HDR "upper: {tmpfs: {}}\noverlay:\n  override_creds:\n    uid: 1\n    gid: 1\n    capabilities: [CAP_SYS_ADMIN, CAP_FLY]\n", 9, "overlay.override_creds.capabilities[1]", "unknown capability 'CAP_FLY'" },
	{ "creds duplicate capability", HDR "upper: {tmpfs: {}}\noverlay:\n  override_creds:\n    uid: 1\n    gid: 1\n    capabilities: [chown, CAP_CHOWN]\n", 9, "overlay.override_creds.capabilities[1]", "listed twice" },
	{ "creds unknown key", HDR "upper: {tmpfs: {}}\noverlay:\n  override_creds: { uid: 1, gid: 1, user: x }\n", 6, "overlay.override_creds", "unknown key 'user'" },
	{ "creds on a single layer", HDR "overlay:\n  override_creds: { uid: 1, gid: 1 }\n", 5, "overlay.override_creds", "single read-only layer" },
	{ "overlay unknown key", HDR "overlay:\n  redirect_dir: true\n", 5, "overlay", "unknown key 'redirect_dir'" },
	{ "mounts not a list", HDR "mounts: {bind: data}\n", 4, "mounts", "expected a list" },
	{ "mount without kind", HDR "mounts:\n  - { target: /x }\n", 5, "mounts[0]", "exactly one of 'bind', 'tmpfs', 'image', 'layout' or 'overlay'" },
	{ "mount with two kinds", HDR "mounts:\n  - { bind: data, image: base.sqfs, target: /x }\n", 5, "mounts[0]", "exactly one of" },
	{ "mount relative target", HDR "mounts:\n  - { bind: data, target: srv/data }\n", 5, "mounts[0].target", "not an absolute path" },
	{ "mount target with dotdot", HDR "mounts:\n  - { bind: data, target: /srv/../../etc }\n", 5, "mounts[0].target", "contains '..'" },
	{ "mount target is root", HDR "mounts:\n  - { bind: data, target: /./ }\n", 5, "mounts[0].target", "rootfs itself" },
	{ "mount missing target", HDR "mounts:\n  - { bind: data }\n", 5, "mounts[0]", "missing key 'target'" },
	{ "mount bad option", HDR "mounts:\n  - { bind: data, target: /x, options: [ro, nosiud] }\n", 5, "mounts[0].options[1]", "unknown option 'nosiud'" },
	{ "mount options not a list", HDR "mounts:\n  - { bind: data, target: /x, options: ro }\n", 5, "mounts[0].options", "expected a list" },
	{ "tmpfs size on bind", HDR "mounts:\n  - { bind: data, target: /x, options: [size=1M] }\n", 5, "mounts[0].options[0]", "unknown option 'size=1M'" },
	{ "tmpfs with target key", HDR "mounts:\n  - { tmpfs: /tmp, target: /tmp }\n", 5, "mounts[0]", "drop 'target'" },
	{ "tmpfs negative size", HDR "mounts:\n  - { tmpfs: /tmp, options: [size=-64M] }\n", 5, "mounts[0].options[0]", "bad size '-64M'" },
	{ "tmpfs bad mode", HDR "mounts:\n  - { tmpfs: /tmp, options: [mode=abc] }\n", 5, "mounts[0].options[0]", "octal mode" },
	{ "recursive on tmpfs", HDR "mounts:\n  - { tmpfs: /tmp, options: [recursive] }\n", 5, "mounts[0].options[0]", "unknown option 'recursive'" },
	{ "two propagations", HDR "mounts:\n  - { bind: data, target: /x, options: [private, shared] }\n", 5, "mounts[0].options[1]", "more than one propagation" },
	{ "options on nested layout", HDR "mounts:\n  - { layout: sub.yaml, target: /x, options: [ro] }\n", 5, "mounts[0].options", "'options' does not apply" },
	{ "type on bind", HDR "mounts:\n  - { bind: data, target: /x, type: erofs }\n", 5, "mounts[0].type", "image and overlay mounts only" },
	{ "duplicate mount key", HDR "mounts:\n  - bind: data\n    target: /x\n    target: /y\n", 7, "mounts[0]", "duplicate key 'target' (first at line 6)" },
	{ "bad attribute", HDR "attributes: [nosuid, readonly]\n", 4, "attributes[1]", "unknown option 'readonly'" },
	{ "exec bad bool", HDR "exec:\n  deny_mount_api: maybe\n", 5, "exec.deny_mount_api", "expected true or false" },
	{ "exec unknown key", HDR "exec:\n  seccomp: false\n", 5, "exec", "unknown key 'seccomp'" },
	{ "exec cmd not a list", HDR "exec:\n  cmd: /bin/sh\n", 5, "exec.cmd", "expected a list" },
	{ "exec entrypoint null arg", HDR "exec:\n  entrypoint: [sh, ~]\n", 5, "exec.entrypoint[1]", "got null" },
	{ "exec cmd with NUL", "{\"version\": 1, \"layers\": [{\"dir\": \"l1\"}], \"exec\": {\"cmd\": [\"a\\u0000b\"]}}\n", 1, "exec.cmd[0]", "NUL" },
	{ "exec relative workdir", HDR "exec:\n  workdir: srv\n", 5, "exec.workdir", "expected an absolute path" },
	{ "exec workdir dotdot", HDR "exec:\n  workdir: /srv/../..\n", 5, "exec.workdir", "contains '..'" },
	{ "exec user and uid", HDR "exec:\n  uid: 1\n  gid: 1\n  user: app\n", 7, "exec.user", "not both" },
	{ "exec user with slash", HDR "exec:\n  user: ../app\n", 5, "exec.user", "expected USER[:GROUP]" },
	{ "exec user empty group", HDR "exec:\n  user: 'app:'\n", 5, "exec.user", "expected USER[:GROUP]" },
	{ "idmap bad range", "version: 1\nlayers:\n  - dir: l1\n    idmap: { uids: [\"0:100000\"], gids: [\"0:1:1\"] }\n", 4, "layers[0].idmap.uids[0]", "expected a range 'inside:outside:count'" },
	{ "idmap zero count", "version: 1\nlayers:\n  - dir: l1\n    idmap: { uids: [\"0:1:1\"], gids: [\"0:1:0\"] }\n", 4, "layers[0].idmap.gids[0]", "range '0:1:0' is empty" },
	{ "idmap range overflows", "version: 1\nlayers:\n  - dir: l1\n    idmap: { uids: [\"4294967000:0:1000\"], gids: [\"0:1:1\"] }\n", 4, "layers[0].idmap.uids[0]", "runs past 4294967294" },
	{ "idmap userns and ranges", "version: 1\nlayers:\n  - dir: l1\n    idmap: { userns: l1, uids: [\"0:1:1\"] }\n", 4, "layers[0].idmap", "not both" },
	{ "idmap without gids", "version: 1\nlayers:\n  - dir: l1\n    idmap: { uids: [\"0:1:1\"] }\n", 4, "layers[0].idmap", "both 'uids' and 'gids'" },
	{ "idmap on tmpfs", HDR "mounts:\n  - { tmpfs: /t, idmap: { userns: l1 } }\n", 5, "mounts[0].idmap", "bind and image mounts only" },
	{ "scalar key is a list", HDR "? [a, b]\n: 1\n", 4, "(top level)", "keys must be scalars" },
};

/* Errors the open stage finds: what a host path names. */
static const struct bad open_cases[] = {
	{ "layer missing dir", "version: 1\nlayers:\n  - dir: nonexistent\n", 3, "layers[0].dir", "No such file or directory" },
	{ "layer dir is a file", "version: 1\nlayers:\n  - dir: base.sqfs\n", 3, "layers[0].dir", "is a regular file, expected a directory" },
	{ "layer image is a dir", "version: 1\nlayers:\n  - image: l1\n", 3, "layers[0].image", "is a directory, expected a regular file" },
	{ "mount missing source", HDR "mounts:\n  - { bind: nope, target: /x }\n", 5, "mounts[0].bind", "No such file or directory" },
	{ "nested layout cycle", HDR "mounts:\n  - { layout: loop-a.yaml, target: /x }\n", 3, "mounts[0].layout", "loop-a.yaml: includes itself", "loop-b.yaml" },
	{ "layer dir is a symlink", "version: 1\nlayers:\n  - dir: link-to-l1\n", 3, "layers[0].dir", "is a symbolic link" },
	{ "image is a FIFO", "version: 1\nlayers:\n  - image: fifo\n", 3, "layers[0].image", "is a FIFO" },
	{ "userns is not a namespace", "version: 1\nlayers:\n  - dir: l1\n    idmap: { userns: base.sqfs }\n", 4, "layers[0].idmap.userns", "expected a user namespace" },
	{ "userns is another namespace", "version: 1\nlayers:\n  - dir: l1\n    idmap: { userns: /proc/self/ns/mnt }\n", 4, "layers[0].idmap.userns", "not a user namespace" },
	{ "bind through a magic link", "version: 1\nlayers:\n  - dir: l1\nmounts:\n  - { bind: /proc/self/root/etc, target: /x }\n", 5, "mounts[0].bind", "" },
};

/* The line starts with the file ("FILE:LINE:COL: " or "FILE: "), ending in @name. */
static bool names_file(const char *line, const char *name)
{
	const char *colon = strchr(line, ':');
	size_t n = strlen(name);

	return colon && (size_t)(colon - line) >= n && !strncmp(colon - n, name, n);
}

static void test_bad_cases(void **state)
{
	char buf[8192];

	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad *b = &bad_cases[i];
		struct rootasm_layout *l = NULL;
		struct rootasm_error e;
		int r = parse(b->yaml, &l, &e);

		rootasm_error_format(&e, buf, sizeof(buf));
		if (r != -EINVAL || e.kind != ROOTASM_ERROR_USAGE || (b->line && e.line != b->line) ||
		    !strstr(e.op, b->key) || !strstr(e.msg, b->msg) || strchr(buf, '\n') ||
		    !names_file(buf, b->file ? b->file : "test.yaml"))
			fail_msg("case '%s': r=%d line=%u (want %u) key='%s' (want '%s') msg='%s' (want '%s') line='%s'",
				 b->name, r, e.line, b->line, e.op, b->key, e.msg, b->msg, buf);
		assert_null(l);
	}
	print_message("%zu bad-input cases checked\n", sizeof(bad_cases) / sizeof(bad_cases[0]));
}

static void test_open_cases(void **state)
{
	char buf[8192];

	for (size_t i = 0; i < sizeof(open_cases) / sizeof(open_cases[0]); i++) {
		const struct bad *b = &open_cases[i];
		struct rootasm_layout *l = NULL;
		struct rootasm_error e;
		int r = load(b->yaml, &l, &e);

		rootasm_error_format(&e, buf, sizeof(buf));
		if (r >= 0 || (b->line && e.line != b->line) || !strstr(e.op, b->key) || !strstr(e.msg, b->msg) ||
		    strchr(buf, '\n') || !names_file(buf, b->file ? b->file : "test.yaml"))
			fail_msg("case '%s': r=%d line=%u (want %u) key='%s' (want '%s') msg='%s' (want '%s') line='%s'",
				 b->name, r, e.line, b->line, e.op, b->key, e.msg, b->msg, buf);
		assert_null(l);
	}
	print_message("%zu open-stage cases checked\n", sizeof(open_cases) / sizeof(open_cases[0]));
}

static void test_good_full(void **state)
{
	struct rootasm_layout *l = NULL;
	struct rootasm_error e;
	const char *y =
		"version: 1\n"
		"layers:\n"
		"  - image: base.sqfs\n"
		"  - dir: l1\n"
		"upper:\n"
		"  tmpfs: { size: 256M, mode: 0755 }\n"
		"overlay:\n"
		"  override_creds: { uid: 1000, gid: 1000, groups: [5, 6], capabilities: [sys_admin, CAP_CHOWN] }\n"
		"mounts:\n"
		"  - { bind: data, target: //srv/./data/, options: [ro, nosuid, nodev, recursive, private] }\n"
		"  - { tmpfs: /tmp, options: [nosuid, nodev, size=64M, mode=1777] }\n"
		"  - { image: base.sqfs, target: /opt/data, options: [ro] }\n"
		"  - { layout: sub.yaml, target: /srv/sub }\n"
		"attributes: [nosuid, nodev]\n"
		"exec: { deny_mount_api: false }\n";

	assert_int_equal(load(y, &l, &e), 0);
	assert_true(l->opened);
	assert_int_equal(l->nlayers, 2);
	assert_int_equal(l->layers[0].kind, RA_LAYER_IMAGE);
	assert_true(l->layers[0].src.display[0] == '/');
	assert_true(l->layers[0].src.fd >= 0);
	assert_true(l->layers[1].src.fd >= 0);
	assert_non_null(strstr(l->layers[1].src.display, "/l1"));
	assert_int_equal(l->upper.kind, RA_UPPER_TMPFS);
	assert_string_equal(l->upper.tmpfs.size, "256M");
	assert_int_equal(l->upper.tmpfs.mode, 0755);
	assert_true(l->creds.set);
	assert_int_equal(l->creds.uid, 1000);
	assert_int_equal(l->creds.ngroups, 2);
	assert_int_equal(l->creds.groups[1], 6);
	assert_int_equal(l->creds.caps, (1ULL << 21) | (1ULL << 0));
	assert_int_equal(l->nmounts, 4);
	assert_string_equal(l->mounts[0].target, "/srv/data");
	assert_true(l->mounts[0].attrs.recursive);
	assert_int_equal(l->mounts[0].loc.line, 10);
	assert_string_equal(l->mounts[1].target, "/tmp");
	assert_string_equal(l->mounts[1].tmpfs.size, "64M");
	assert_int_equal(l->mounts[1].tmpfs.mode, 01777);
	assert_non_null(l->mounts[3].nested);
	assert_false(l->exec.deny_mount_api);
	assert_int_equal(rootasm_layout_needs(NULL, l) & (1u << ROOTASM_FEAT_MOVE_DETACHED), 1u << ROOTASM_FEAT_MOVE_DETACHED);
	/* creds keep CAP_SYS_ADMIN: the 6.17+ refusal does not apply */
	assert_int_equal(rootasm_layout_needs(NULL, l) & (1u << ROOTASM_FEAT_OVL_CREDS_NOADMIN), 0);
	rootasm_layout_free(l);
}

/* An image's command: empty arguments and newlines kept; workdir normalized. */
static void test_exec_image_command(void **state)
{
	struct rootasm_layout *l = NULL;
	struct rootasm_error e;
	const char *j = "{\"version\": 1, \"layers\": [{\"dir\": \"l1\"}], \"exec\": {"
			"\"entrypoint\": [\"/bin/sh\", \"-c\", \"echo a\\n\\techo b\", \"\"], \"cmd\": [\"x\"], "
			"\"workdir\": \"//srv/./app/\", \"user\": \"app:1000\", \"env\": [\"A=1\"]}}\n";

	(void)state;
	assert_int_equal(parse(j, &l, &e), 0);
	assert_int_equal(l->exec.nentrypoint, 4);
	assert_string_equal(l->exec.entrypoint[2], "echo a\n\techo b");
	assert_string_equal(l->exec.entrypoint[3], "");
	assert_null(l->exec.entrypoint[4]);
	assert_int_equal(l->exec.ncmd, 1);
	assert_string_equal(l->exec.workdir, "/srv/app");
	assert_string_equal(l->exec.user, "app:1000");
	assert_false(l->exec.user_set);
	rootasm_layout_free(l);
}

static void test_json_layout(void **state)
{
	struct rootasm_layout *l = NULL;
	struct rootasm_error e;
	const char *j = "{\"version\": 1, \"layers\": [{\"dir\": \"l1\"}, {\"dir\": \"data\"}],\n"
			" \"upper\": {\"tmpfs\": {}},\n"
			" \"mounts\": [{\"tmpfs\": \"/run\", \"options\": [\"nosuid\"]}]}\n";
	const char *bad = "{\"version\": 1, \"layers\": [{\"dir\": \"l1\"}],\n \"mounts\": [{\"tmpfs\": \"run\"}]}\n";

	assert_int_equal(parse(j, &l, &e), 0);
	assert_int_equal(l->nlayers, 2);
	assert_int_equal(l->nmounts, 1);
	rootasm_layout_free(l);
	l = NULL;
	assert_int_equal(parse(bad, &l, &e), -EINVAL);
	assert_int_equal(e.line, 2);
	assert_string_equal(e.op, "mounts[0].tmpfs");
}

static void test_limits(void **state)
{
	struct rootasm_layout *l = NULL;
	struct rootasm_error e;
	size_t cap = 64 + 501 * 16;
	char *y = malloc(cap);
	size_t n = 0;

	n += snprintf(y + n, cap - n, "version: 1\nlayers:\n");
	for (int i = 0; i < 501; i++)
		n += snprintf(y + n, cap - n, "  - dir: l1\n");
	assert_int_equal(parse(y, &l, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "at most 500"));
	assert_int_equal(e.line, 3);
	/* exactly 500 is fine */
	n = snprintf(y, cap, "version: 1\nlayers:\n");
	for (int i = 0; i < 500; i++)
		n += snprintf(y + n, cap - n, "  - dir: l1\n");
	assert_int_equal(parse(y, &l, &e), 0);
	assert_int_equal(l->nlayers, 500);
	rootasm_layout_free(l);
	free(y);

	/* a path longer than PATH_MAX */
	y = malloc(RA_PATH_MAX + 128);
	n = snprintf(y, RA_PATH_MAX + 128, "version: 1\nlayers:\n  - dir: l1\nmounts:\n  - {tmpfs: /");
	memset(y + n, 'a', RA_PATH_MAX);
	strcpy(y + n + RA_PATH_MAX, "}\n");
	l = NULL;
	assert_int_equal(parse(y, &l, &e), -EINVAL);
	assert_string_equal(e.op, "mounts[0].tmpfs");
	assert_non_null(strstr(e.msg, "longer than"));
	free(y);

	/* the whole-file cap */
	y = calloc(1, RA_LAYOUT_MAX_BYTES + 2);
	memset(y, ' ', RA_LAYOUT_MAX_BYTES + 1);
	assert_int_equal(ra_layout_parse(y, RA_LAYOUT_MAX_BYTES + 1, "big.yaml", tmpdir, NULL, &l, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "at most"));
	free(y);
}

static void test_normalize(void **state)
{
	char out[64];

	assert_int_equal(ra_normalize_target("/a//b/./c/", out, sizeof(out)), 0);
	assert_string_equal(out, "/a/b/c");
	assert_int_equal(ra_normalize_target("/", out, sizeof(out)), 0);
	assert_string_equal(out, "/");
	assert_int_equal(ra_normalize_target("a/b", out, sizeof(out)), -EINVAL);
	assert_int_equal(ra_normalize_target("/a/../b", out, sizeof(out)), -EXDEV);
	assert_int_equal(ra_normalize_target("/..", out, sizeof(out)), -EXDEV);
	assert_int_equal(ra_normalize_target("/a/..b/c..", out, sizeof(out)), 0);
	assert_string_equal(out, "/a/..b/c..");
	assert_int_equal(ra_normalize_target("/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", out, sizeof(out)),
			 -ENAMETOOLONG);
}

static void test_load_file(void **state)
{
	struct rootasm_layout *l = NULL;
	struct rootasm_error e = { 0 };
	char p[512], buf[8192];

	/* relative paths are relative to the layout file, not the cwd */
	snprintf(p, sizeof(p), "%s/sub.yaml", tmpdir);
	assert_int_equal(chdir("/"), 0);
	assert_int_equal(rootasm_layout_load(NULL, p, NULL, &l, &e), 0);
	snprintf(buf, sizeof(buf), "%s/l1", tmpdir);
	assert_string_equal(l->layers[0].src.display, buf);
	assert_true(l->layers[0].src.fd >= 0);
	rootasm_layout_free(l);

	snprintf(p, sizeof(p), "%s/missing.yaml", tmpdir);
	assert_int_equal(rootasm_layout_load(NULL, p, NULL, &l, &e), -ENOENT);
	rootasm_error_format(&e, buf, sizeof(buf));
	assert_non_null(strstr(buf, "missing.yaml"));
	assert_non_null(strstr(buf, "No such file"));
}

static void test_plan_json(void **state)
{
	struct rootasm_layout *l = NULL;
	struct rootasm_error e;
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	assert_int_equal(parse(HDR "upper: {tmpfs: {size: 1M}}\nmounts:\n  - {tmpfs: /tmp, options: [nosuid]}\n", &l, &e), 0);
	f = open_memstream(&out, &len);
	assert_int_equal(rootasm_plan_print(NULL, l, f, ROOTASM_PLAN_JSON), 0);
	fclose(f);
	assert_non_null(strstr(out, "\"op\":\"upper\",\"key\":\"upper\",\"route\":\"tmpfs+mkdirat\",\"line\":4,\"column\":8,\"kind\":\"tmpfs\",\"tmpfs\":{\"size\":\"1M\",\"nr_inodes\":null,\"mode\":null}"));
	assert_non_null(strstr(out, "\"target\":\"/tmp\",\"options\":[\"nosuid\"]"));
	free(out);
	rootasm_layout_free(l);
}

/* The trust rule with a memo (one request's image files): every file is still judged, and every directory not in it. */
static void test_trust_memo(void **state)
{
	struct ra_trust_memo m = { 0 }, fresh = { 0 };
	char p[512], why[512];
	int dir, sub, a, b, c;

	if (geteuid() != 0)
		skip();	/* the rule wants root's files */
	snprintf(p, sizeof(p), "%s/trust", tmpdir);
	assert_int_equal(mkdir(p, 0755), 0);
	assert_true((dir = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC)) >= 0);
	assert_int_equal(mkdirat(dir, "w", 0755), 0);
	assert_int_equal(fchmodat(dir, "w", 0777, 0), 0);	/* writable by others, not sticky */
	assert_true((sub = openat(dir, "w", O_PATH | O_DIRECTORY | O_CLOEXEC)) >= 0);
	assert_true((a = openat(dir, "a", O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) >= 0);
	assert_true((b = openat(dir, "b", O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) >= 0);
	assert_true((c = openat(sub, "c", O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) >= 0);
	assert_int_equal(fchmod(b, 0664), 0);

	/* the first walk fills the memo: the directory and all above it */
	assert_int_equal(ra_admin_trusted_memo(a, dir, &m, why, sizeof(why)), 0);
	assert_true(m.n >= 3);
	/* a file in a remembered directory is still judged itself */
	assert_int_equal(ra_admin_trusted_memo(b, dir, &m, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "writable by group or others"));
	/* a directory below a remembered one is judged before the memo is asked */
	assert_int_equal(ra_admin_trusted_memo(c, sub, &m, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "/trust/w above it"));
	/*
	 * The memo serves one request: what changes above a remembered directory
	 * meanwhile (only root can) is not walked again; a new request sees it.
	 */
	assert_int_equal(chmod(tmpdir, 0777), 0);
	assert_int_equal(ra_admin_trusted_memo(a, dir, &m, why, sizeof(why)), 0);
	assert_int_equal(ra_admin_trusted_memo(a, dir, &fresh, why, sizeof(why)), -EPERM);
	assert_int_equal(ra_admin_trusted(a, dir, why, sizeof(why)), -EPERM);
	assert_int_equal(chmod(tmpdir, 0700), 0);
	/*
	 * The same directory through another mount is another directory to the
	 * memo: bound below a user's directory, what is above it is that user's
	 * (in a mount namespace of this process's own)
	 */
	assert_int_equal(unshare(CLONE_NEWNS), 0);
	assert_int_equal(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	snprintf(p, sizeof(p), "%s/user", tmpdir);
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(chown(p, 1000, 1000), 0);
	assert_int_equal(chmod(tmpdir, 0755), 0);
	snprintf(p, sizeof(p), "%s/user/b", tmpdir);
	assert_int_equal(mkdir(p, 0755), 0);
	{
		char src[512];
		int bdir, ba;

		snprintf(src, sizeof(src), "%s/trust", tmpdir);
		assert_int_equal(mount(src, p, NULL, MS_BIND, NULL), 0);
		assert_true((bdir = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC)) >= 0);
		assert_true((ba = openat(bdir, "a", O_RDONLY | O_CLOEXEC)) >= 0);
		memset(&m, 0, sizeof(m));
		assert_int_equal(ra_admin_trusted_memo(a, dir, &m, why, sizeof(why)), 0);
		assert_int_equal(ra_admin_trusted_memo(ba, bdir, &m, why, sizeof(why)), -EPERM);
		assert_non_null(strstr(why, "/user above it is not root's"));
		close(ba);
		close(bdir);
		assert_int_equal(umount2(p, MNT_DETACH), 0);
	}
	/*
	 * A root's directory in that user's, bound onto a directory below itself:
	 * ".." of the bind mount's root is the same directory through the mount
	 * underneath, not the root of the tree; the way up goes on to the user's
	 */
	{
		char d[512], s[512];
		struct ra_trust_memo none = { 0 };
		int sdir, f;

		snprintf(d, sizeof(d), "%s/user/D", tmpdir);
		snprintf(s, sizeof(s), "%s/user/D/sub", tmpdir);
		assert_int_equal(mkdir(d, 0755), 0);
		assert_int_equal(mkdir(s, 0755), 0);
		snprintf(p, sizeof(p), "%s/user/D/f", tmpdir);
		assert_true((f = open(p, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) >= 0);
		close(f);
		assert_int_equal(mount(d, s, NULL, MS_BIND, NULL), 0);
		assert_true((sdir = open(s, O_PATH | O_DIRECTORY | O_CLOEXEC)) >= 0);
		assert_true((f = openat(sdir, "f", O_RDONLY | O_CLOEXEC)) >= 0);
		assert_int_equal(ra_admin_trusted_memo(f, sdir, &none, why, sizeof(why)), -EPERM);
		assert_non_null(strstr(why, "/user above it is not root's"));
		assert_int_equal(ra_admin_trusted(f, sdir, why, sizeof(why)), -EPERM);
		close(f);
		close(sdir);
		assert_int_equal(umount2(s, MNT_DETACH), 0);
	}
	assert_int_equal(chmod(tmpdir, 0700), 0);
	close(a);
	close(b);
	close(c);
	close(sub);
	close(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_cases),
		cmocka_unit_test(test_open_cases),
		cmocka_unit_test(test_good_full),
		cmocka_unit_test(test_json_layout),
		cmocka_unit_test(test_exec_image_command),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_normalize),
		cmocka_unit_test(test_plan_json),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_trust_memo),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
