// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rootasm_bundle_create() (rootasm.h; bundle.c says what a bundle is): an
 * image of the store or a layout file -> BUNDLE/config.json as `crun spec`
 * writes it, with the image's process (entrypoint, cmd, env, workdir, user;
 * a user by name resolved in the assembled tree) and the annotation
 * org.rootasm.layout, and BUNDLE/rootfs.
 */
#include <ctype.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>

#include <jansson.h>

#include "bundle.h"
#include "context.h"
#include "exec.h"
#include "layout.h"
#include "open.h"
#include "passwd.h"
#include "uapi.h"
#include "util.h"

/* ------------------------------------------------------------------ create */

static json_t *strv_json_of(char **v)
{
	json_t *a = json_array();

	for (char **p = v; a && p && *p; p++)
		if (json_array_append_new(a, json_string(*p)) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/*
 * config.json for @x, as `crun spec` writes it (its mounts, namespaces,
 * masked and read-only paths, capabilities, rlimits) with the process an
 * image's config asks for (as umoci unpack makes it): args, env, cwd, user.
 * The capabilities of a user other than root: the bounding set only (podman's).
 */
static json_t *make_config(const struct ra_exec *x, char **args, char **env, uid_t uid, gid_t gid,
			   const gid_t *groups, size_t ngroups, const char *layout)
{
	json_t *c, *user, *capset, *gids = json_array(), *bnd = json_array(), *eff = json_array();

	for (size_t i = 0; gids && i < ngroups; i++)
		json_array_append_new(gids, json_integer(groups[i]));
	/* the OCI default set (exec.h), as OCI names capabilities: "CAP_KILL" */
	RA_CAP_FOREACH(v, RA_OCI_DEFAULT_CAPS) {
		char name[64];

		ra_cap_name(v, name, sizeof(name));
		for (char *s = name; *s; s++)
			*s = (char)toupper((unsigned char)*s);
		if (!bnd || !eff)
			break;
		json_array_append_new(bnd, json_string(name));
		if (uid == 0)
			json_array_append_new(eff, json_string(name));
	}
	user = json_pack("{s:I, s:I}", "uid", (json_int_t)uid, "gid", (json_int_t)gid);
	if (user && gids && json_array_size(gids))
		json_object_set(user, "additionalGids", gids);
	json_decref(gids);
	capset = bnd && eff ? json_pack("{s:O, s:O, s:[], s:O, s:O}", "bounding", bnd, "effective", eff, "inheritable",
					"permitted", eff, "ambient", eff) : NULL;
	json_decref(bnd);
	json_decref(eff);
	c = json_pack("{s:s, s:{s:b, s:o, s:o, s:o, s:s, s:o, s:[{s:s, s:i, s:i}], s:b}, s:{s:s, s:b}, s:s,"
		      " s:[{s:s, s:s, s:s},"
		      "    {s:s, s:s, s:s, s:[s,s,s,s]},"
		      "    {s:s, s:s, s:s, s:[s,s,s,s,s,s]},"
		      "    {s:s, s:s, s:s, s:[s,s,s,s,s]},"
		      "    {s:s, s:s, s:s, s:[s,s,s]},"
		      "    {s:s, s:s, s:s, s:[s,s,s,s]},"
		      "    {s:s, s:s, s:s, s:[s,s,s,s,s]}],"
		      " s:{s:{s:[{s:b, s:s}]}, s:[{s:s},{s:s},{s:s},{s:s},{s:s},{s:s}],"
		      "    s:[s,s,s,s,s,s,s,s,s,s], s:[s,s,s,s,s]},"
		      " s:{s:s}}",
		      "ociVersion", "1.0.0",
		      "process", "terminal", false, "user", user, "args", strv_json_of(args), "env", strv_json_of(env),
		      "cwd", x->workdir ? x->workdir : "/", "capabilities", capset,
		      "rlimits", "type", "RLIMIT_NOFILE", "hard", 1024, "soft", 1024, "noNewPrivileges", true,
		      "root", "path", "rootfs", "readonly", false,
		      "hostname", x->hostname ? x->hostname : "rootasm",
		      "mounts",
		      "destination", "/proc", "type", "proc", "source", "proc",
		      "destination", "/dev", "type", "tmpfs", "source", "tmpfs", "options",
		      "nosuid", "strictatime", "mode=755", "size=65536k",
		      "destination", "/dev/pts", "type", "devpts", "source", "devpts", "options",
		      "nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5",
		      "destination", "/dev/shm", "type", "tmpfs", "source", "shm", "options",
		      "nosuid", "noexec", "nodev", "mode=1777", "size=65536k",
		      "destination", "/dev/mqueue", "type", "mqueue", "source", "mqueue", "options",
		      "nosuid", "noexec", "nodev",
		      "destination", "/sys", "type", "sysfs", "source", "sysfs", "options",
		      "nosuid", "noexec", "nodev", "ro",
		      "destination", "/sys/fs/cgroup", "type", "cgroup", "source", "cgroup", "options",
		      "nosuid", "noexec", "nodev", "relatime", "ro",
		      "linux", "resources", "devices", "allow", false, "access", "rwm",
		      "namespaces", "type", "pid", "type", "network", "type", "ipc", "type", "uts", "type", "mount",
		      "type", "cgroup",
		      "maskedPaths", "/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
		      "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware", "/proc/scsi",
		      "readonlyPaths", "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger",
		      "annotations", ANN_LAYOUT, layout);
	return c;
}

int rootasm_bundle_create(struct rootasm_ctx *ctx, const char *image, const char *bundle_dir,
			  const struct rootasm_bundle_opts *opts, struct rootasm_bundle_result *res,
			  struct rootasm_error *e)
{
	struct bundle b = { .op = "bundle create", .fd = -EBADF, .records = -EBADF };
	struct rootasm_load_opts lo = { .size = sizeof(lo) };
	_cleanup_free_ char *layout = NULL, *text = NULL, **args = NULL, **env = NULL;
	_cleanup_json_ json_t *cfg = NULL;
	struct rootasm_layout *l = NULL;
	const struct ra_exec *x;
	const char *path;
	char home[300] = "";
	struct ra_user u = { 0 };
	struct stat st;
	bool made = false, made_root = false;
	size_t len = 0;
	int r;

	r = bd_begin(&ctx, res, opts, b.op, bundle_dir, false, e);
	if (r < 0)
		return r;
	if (!image || !*image || !bundle_dir || !*bundle_dir)
		return USAGE(e, &b, EINVAL, bundle_dir ? bundle_dir : "", "no image or no bundle directory");
	/* a layout file by that name (not a directory), else an image of the store */
	if (stat(image, &st) == 0 && !S_ISDIR(st.st_mode)) {
		layout = realpath(image, NULL);
		if (!layout)
			return ra_err(e, errno, -EBADF, b.op, image, "its absolute path");
	} else {
		r = rootasm_store_lookup(OPT(opts, store, NULL), image, &layout, NULL, e);
		if (r < 0)
			return r;
	}
	/* the user is resolved in the tree: only then is the layout opened and assembled */
	lo.flags = ROOTASM_LOAD_OFFLINE;
	r = rootasm_layout_load(ctx, layout, &lo, &l, e);
	if (r >= 0 && l->exec.user) {
		rootasm_layout_free(l);
		l = NULL;
		lo.flags = 0;
		r = rootasm_layout_load(ctx, layout, &lo, &l, e);
		if (r >= 0) {
			_cleanup_close_ int tree = rootasm_assemble(ctx, l, e);

			r = tree < 0 ? tree : ra_user_resolve(tree, l->exec.user, &u, e);
			if (r >= 0 && u.home[0])
				snprintf(home, sizeof(home), "HOME=%s", u.home);
		}
	}
	if (r < 0)
		goto out;
	x = &l->exec;
	if (!x->user && x->user_set) {
		u.uid = x->uid;
		u.gid = x->gid;
		u.ngroups = x->ngroups < ARRAY_SIZE(u.groups) ? x->ngroups : ARRAY_SIZE(u.groups);
		memcpy(u.groups, x->groups, u.ngroups * sizeof(gid_t));
	}
	args = ra_exec_command(x, NULL);
	env = ra_exec_env(x, NULL, home[0] ? home : NULL, &path);
	if (!args || !env) {
		r = ra_oom(e, b.op);
		goto out;
	}
	if (!args[0]) {
		r = USAGE(e, &b, EINVAL, layout, "the layout's exec: section has no entrypoint or cmd: nothing to run");
		goto out;
	}
	cfg = make_config(x, args, env, u.uid, u.gid, u.groups, u.ngroups, layout);
	r = bd_dump(cfg, &text, &len, e);
	if (r < 0)
		goto out;
	/* the bundle directory: made (root's, 0700 as crun's state) or an existing one without config.json */
	if (mkdir(bundle_dir, 0700) == 0)
		made = true;
	else if (errno != EEXIST) {
		r = ra_err(e, errno, -EBADF, "mkdir", bundle_dir, NULL);
		goto out;
	}
	r = bd_bundle_open(&b, bundle_dir, e);
	if (r < 0)
		goto out;
	if (fstatat(b.fd, "config.json", &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT) {
		r = USAGE(e, &b, EEXIST, bd_in_bundle(&b, "config.json"), "is there already: a bundle is created once");
		goto out;
	}
	if (mkdirat(b.fd, "rootfs", 0755) == 0)
		made_root = true;
	else if (errno != EEXIST) {
		r = ra_err(e, errno, -EBADF, "mkdir", bd_in_bundle(&b, "rootfs"), NULL);
		goto out;
	}
	r = bd_write_at(&b, b.fd, "config.json", "config.json", text, len, true, e);
	if (r < 0)
		goto out;
	if (res) {
		res->root = strdup(bd_in_bundle(&b, "rootfs"));
		res->layout = TAKE_PTR(layout);
		if (!res->root) {
			r = ra_oom(e, b.op);
			goto out;
		}
	}
	r = 0;
out:
	if (r < 0) {
		if (made_root)
			unlinkat(b.fd, "rootfs", AT_REMOVEDIR);
		if (made)
			rmdir(bundle_dir);
		rootasm_bundle_result_free(res);
	}
	rootasm_layout_free(l);
	bd_bundle_done(&b);
	return r;
}
