// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rootasm bundle prepare [--layout L] [--upper DIR] BUNDLE | rootasm bundle cleanup BUNDLE
 *
 * An OCI runtime bundle (config.json + root.path) whose root filesystem
 * rootasm assembles, for crun/runc to run:
 *
 *   prepare  config.json (strict JSON) + the layout (--layout, or the
 *            annotation org.rootasm.layout; a JSON layout, as import writes)
 *            -> BUNDLE/.rootasm/layout.json: the layout's layers (idmapped
 *               from linux.uidMappings/gidMappings), its upper (or --upper
 *               DIR), and the config's bind and tmpfs mounts that rootasm
 *               takes; root.readonly stays for the runtime, which remounts
 *               the root read-only once it made its own mount points
 *            -> assemble detached, one move_mount onto root.path
 *            -> config.json rewritten (atomically) without the mounts rootasm
 *               made, the original kept as BUNDLE/.rootasm/config.json, the
 *               tree's mount id recorded in annotation org.rootasm.prepared
 *   cleanup  detach the tree at root.path if it is the one prepare attached
 *            (same unique mount id), restore config.json, remove .rootasm/
 *
 * Which mounts rootasm takes: those of type bind (or with a bind/rbind
 * option) and tmpfs (not with uid/gid mappings: in a user namespace the
 * runtime makes a tmpfs owned by the container's root) whose options it can
 * express, in order, unless the
 * destination lies at or below a mount it leaves to the runtime (proc,
 * devpts, sysfs, cgroup, mqueue, ...): the runtime mounts those after rootasm
 * attached the tree, and would hide what lies below them.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"

static inline void freep_(void *p)
{
	free(*(void **)p);
}

#define _cleanup_free_ __attribute__((cleanup(freep_)))
#define TAKE_BUF(p) ({ char *_p = (p); (p) = NULL; _p; })

#define CONFIG_MAX		(4u << 20)
#define ANN_LAYOUT		"org.rootasm.layout"
#define ANN_PREPARED		"org.rootasm.prepared"
#define STATE_DIR		".rootasm"

#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE	0x00004000U
#endif

static const char help[] =
	"Usage: rootasm bundle prepare [OPTION...] BUNDLE\n"
	"       rootasm bundle cleanup [OPTION...] BUNDLE\n"
	"Make the root filesystem of an OCI runtime bundle (BUNDLE/config.json) with rootasm,\n"
	"for crun or runc to run it:\n"
	"\n"
	"  prepare   assemble the layout (--layout, or the config.json annotation\n"
	"            \"org.rootasm.layout\"; a JSON layout such as `rootasm import` writes),\n"
	"            with the config's bind and tmpfs mounts as volumes and its\n"
	"            linux.uidMappings/gidMappings as idmapped layers, detached; attach it at\n"
	"            root.path with one move_mount; rewrite config.json without the mounts\n"
	"            rootasm made (the original is kept in BUNDLE/.rootasm/config.json)\n"
	"  cleanup   detach the tree prepare attached and restore config.json\n"
	"\n"
	"  --layout L      the layout (relative: to BUNDLE)\n"
	"  --upper DIR     writes go to DIR/upper (work dir DIR/work) instead of the layout's\n"
	"                  upper. root.readonly is left to the runtime (it remounts the root\n"
	"                  read-only once its own mount points are made).\n"
	"                  With uid/gid mappings DIR/upper is made owned by the container's root\n"
	"  --json[=pretty] what was done as JSON\n"
	"  --debug         trace every operation\n"
	"  -h, --help      this text\n"
	"\n"
	"Mounts under one the runtime makes (proc, sysfs, devpts, ...), mounts with options\n"
	"rootasm cannot express and, with uid/gid mappings, tmpfs mounts stay in config.json\n"
	"for the runtime.\n"
	"Exit status: 0, 1 failure, 2 bad usage, a bad config.json or layout.\n";

/* json_decrefp() is jansson's own (2.11+) */
#define _cleanup_json_ __attribute__((cleanup(json_decrefp)))

static int fail_msg(int kind, int err, const char *op, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int fail_msg(int kind, int err, const char *op, const char *path, const char *fmt, ...)
{
	struct rootasm_error e = { .err = err, .kind = kind };
	va_list ap;

	snprintf(e.op, sizeof(e.op), "%s", op);
	snprintf(e.path, sizeof(e.path), "%s", path ? path : "");
	va_start(ap, fmt);
	vsnprintf(e.msg, sizeof(e.msg), fmt, ap);
	va_end(ap);
	return cli_fail(&e);
}

#define bad(op, path, ...) fail_msg(ROOTASM_ERROR_USAGE, EINVAL, op, path, __VA_ARGS__)

/* Read @path strictly as one JSON object (duplicates refused, NUL refused, capped); its bytes in @raw. */
static int read_json_raw(const char *path, json_t **ret, char **raw, size_t *rawlen)
{
	_cleanup_free_ char *buf = NULL;
	json_error_t je;
	struct stat st;
	size_t n = 0;
	json_t *j;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return fail_msg(errno == ENOENT ? ROOTASM_ERROR_USAGE : ROOTASM_ERROR_RUNTIME, errno, "open", path,
				"%s", strerror(errno));
	if (fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > CONFIG_MAX) {
		fclose(f);
		return bad("read", path, "not a regular file of at most %u bytes", CONFIG_MAX);
	}
	buf = malloc(CONFIG_MAX + 1);
	if (buf)
		n = fread(buf, 1, CONFIG_MAX + 1, f);
	fclose(f);
	if (!buf || n > CONFIG_MAX)
		return bad("read", path, "not a regular file of at most %u bytes", CONFIG_MAX);
	j = json_loadb(buf, n, JSON_REJECT_DUPLICATES, &je);
	if (raw) {
		*raw = TAKE_BUF(buf);
		*rawlen = n;
	}
	if (!j)
		return bad("parse JSON", path, "line %d column %d: %s", je.line, je.column, je.text);
	if (!json_is_object(j)) {
		json_decref(j);
		return bad("parse JSON", path, "not a JSON object");
	}
	*ret = j;
	return 0;
}

/* Write @o as @dir/@name atomically (a temporary file, fsync, rename). */
static int read_json(const char *path, json_t **ret)
{
	return read_json_raw(path, ret, NULL, NULL);
}

static int write_json_raw(const char *dir, const char *name, json_t *o, const char *raw, size_t rawlen);

static int write_json(const char *dir, const char *name, json_t *o)
{
	return write_json_raw(dir, name, o, NULL, 0);
}

static int write_json_raw(const char *dir, const char *name, json_t *o, const char *raw, size_t rawlen)
{
	char tmp[PATH_MAX], dst[PATH_MAX];
	int fd, r;

	snprintf(dst, sizeof(dst), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dir, name);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return fail_msg(ROOTASM_ERROR_RUNTIME, errno, "create", tmp, "%s", strerror(errno));
	if (raw)
		r = write(fd, raw, rawlen) == (ssize_t)rawlen ? 0 : -1;
	else
		r = json_dumpfd(o, fd, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (r == 0 && !raw && write(fd, "\n", 1) != 1)
		r = -1;
	if (r == 0 && (fchmod(fd, 0644) < 0 || fsync(fd) < 0))
		r = -1;
	close(fd);
	if (r == 0 && rename(tmp, dst) < 0)
		r = -1;
	if (r < 0) {
		int err = errno ? errno : EIO;

		unlink(tmp);
		return fail_msg(ROOTASM_ERROR_RUNTIME, err, "write", dst, "%s", strerror(err));
	}
	return 0;
}

/* @p made absolute against @base (a directory) when it is relative; caller frees. */
static char *absolute(const char *base, const char *p)
{
	char *r = NULL;

	if (p[0] == '/')
		return strdup(p);
	if (asprintf(&r, "%s/%s", base, p) < 0)
		return NULL;
	return r;
}

/* In the layout @l (from @ldir), every relative host path made absolute. */
static int absolutize(json_t *l, const char *ldir)
{
	static const char *const keys[] = { "image", "dir", "bind", "layout" };
	const char *sect[] = { "layers", "mounts" };
	json_t *up = json_object_get(l, "upper");

	for (size_t s = 0; s < 2; s++) {
		json_t *arr = json_object_get(l, sect[s]), *it;
		size_t i;

		json_array_foreach(arr, i, it) {
			for (size_t k = 0; k < 4; k++) {
				json_t *v = json_object_get(it, keys[k]);
				char *a;

				if (!json_is_string(v))
					continue;
				a = absolute(ldir, json_string_value(v));
				if (!a || json_object_set_new(it, keys[k], json_string(a)) < 0) {
					free(a);
					return -ENOMEM;
				}
				free(a);
			}
		}
	}
	if (json_is_object(up) && json_is_string(json_object_get(up, "dir"))) {
		char *a = absolute(ldir, json_string_value(json_object_get(up, "dir")));

		if (!a || json_object_set_new(up, "dir", json_string(a)) < 0) {
			free(a);
			return -ENOMEM;
		}
		free(a);
	}
	return 0;
}

/* OCI id mappings -> ["inside:outside:count", ...]; NULL (and *bad set) when malformed. */
static json_t *ranges(json_t *maps, bool *isbad)
{
	json_t *a = json_array(), *m;
	size_t i;

	json_array_foreach(maps, i, m) {
		json_int_t c, h, s;
		char buf[96];

		if (json_unpack(m, "{s:I, s:I, s:I}", "containerID", &c, "hostID", &h, "size", &s) < 0 || c < 0 ||
		    h < 0 || s <= 0) {
			*isbad = true;
			json_decref(a);
			return NULL;
		}
		snprintf(buf, sizeof(buf), "%lld:%lld:%lld", (long long)c, (long long)h, (long long)s);
		json_array_append_new(a, json_string(buf));
	}
	return a;
}

/* The host id that container id 0 maps to in @maps, or -1. */
static long long host_root(json_t *maps)
{
	json_t *m;
	size_t i;

	json_array_foreach(maps, i, m) {
		json_int_t c, h, s;

		if (json_unpack(m, "{s:I, s:I, s:I}", "containerID", &c, "hostID", &h, "size", &s) == 0 && c <= 0 &&
		    0 < c + s)
			return h - c;
	}
	return -1;
}

/* Whether @d is @top or below it (both absolute, normalized by the caller's eye: '/'-separated). */
static bool at_or_below(const char *d, const char *top)
{
	size_t n = strlen(top);

	while (n > 1 && top[n - 1] == '/')
		n--;
	if (n == 1 && top[0] == '/')
		return true;
	return !strncmp(d, top, n) && (d[n] == '\0' || d[n] == '/');
}

/*
 * The layout entry for OCI mount @m, or NULL when rootasm leaves it to the runtime
 * (not bind/tmpfs, or an option rootasm cannot express).
 */
static json_t *take_mount(json_t *m, const char *bundle, bool userns)
{
	static const char *const attrs[] = { "ro", "rw", "nosuid", "nodev", "noexec", "nosymfollow", "noatime",
					     "relatime", "strictatime", "nodiratime" };
	static const char *const noops[] = { "suid", "dev", "exec", "atime", "diratime", "bind" };
	static const char *const prop[][2] = { { "private", "private" }, { "rprivate", "private" },
					       { "shared", "shared" }, { "rshared", "shared" },
					       { "slave", "slave" }, { "rslave", "slave" },
					       { "unbindable", "unbindable" }, { "runbindable", "unbindable" } };
	const char *type = json_string_value(json_object_get(m, "type"));
	const char *src = json_string_value(json_object_get(m, "source"));
	const char *dst = json_string_value(json_object_get(m, "destination"));
	json_t *opts = json_object_get(m, "options"), *o, *lopts, *out;
	bool isbind = type && !strcmp(type, "bind"), recursive = false, proped = false;
	size_t i;

	json_array_foreach(opts, i, o) {
		const char *s = json_string_value(o);

		if (s && (!strcmp(s, "bind") || !strcmp(s, "rbind")))
			isbind = true;
	}
	if (!dst || dst[0] != '/' || strstr(dst, "/../") || !strcmp(dst, "/"))
		return NULL;
	if (!isbind && !(type && !strcmp(type, "tmpfs")))
		return NULL;
	/* in a user namespace a tmpfs must belong to the container's root: the runtime makes it there */
	if (!isbind && userns)
		return NULL;
	if (isbind && !src)
		return NULL;
	lopts = json_array();
	json_array_foreach(opts, i, o) {
		const char *s = json_string_value(o);
		bool ok = false;

		if (!s)
			goto leave;
		for (size_t k = 0; k < sizeof(noops) / sizeof(noops[0]); k++)
			ok |= !strcmp(s, noops[k]);
		if (ok)
			continue;
		if (!strcmp(s, "rbind")) {
			recursive = true;
			continue;
		}
		for (size_t k = 0; k < sizeof(attrs) / sizeof(attrs[0]); k++)
			ok |= !strcmp(s, attrs[k]);
		for (size_t k = 0; !ok && k < sizeof(prop) / sizeof(prop[0]); k++) {
			if (!strcmp(s, prop[k][0])) {
				if (proped)
					goto leave;
				proped = ok = true;
				s = prop[k][1];
			}
		}
		if (!ok && !isbind && (!strncmp(s, "size=", 5) || !strncmp(s, "mode=", 5) || !strncmp(s, "nr_inodes=", 10)))
			ok = true;
		if (!ok)
			goto leave;
		json_array_append_new(lopts, json_string(s));
	}
	if (recursive)
		json_array_append_new(lopts, json_string("recursive"));
	if (isbind) {
		char *a = absolute(bundle, src);

		out = json_pack("{s:s?, s:s, s:o}", "bind", a, "target", dst, "options", lopts);
		free(a);
	} else {
		out = json_pack("{s:s, s:o}", "tmpfs", dst, "options", lopts);
	}
	return out;
leave:
	json_decref(lopts);
	return NULL;
}

static unsigned long long mount_id(const char *path)
{
	struct statx sx;

	if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_MNT_ID_UNIQUE, &sx) < 0 ||
	    !(sx.stx_mask & STATX_MNT_ID_UNIQUE))
		return 0;
	return sx.stx_mnt_id;
}

/* Whether @path is a mount point (its mount differs from its parent's). */
static bool is_mountpoint(const char *path)
{
	char parent[PATH_MAX];

	snprintf(parent, sizeof(parent), "%s/..", path);
	return mount_id(path) && mount_id(path) != mount_id(parent);
}

static int prepare(const char *bundle, const char *layout_opt, const char *upper)
{
	_cleanup_json_ json_t *cfg = NULL, *base = NULL;
	_cleanup_free_ char *orig = NULL;
	size_t origlen = 0;
	char cfgpath[PATH_MAX], state[PATH_MAX], root[PATH_MAX], lpath[PATH_MAX], lbuf[PATH_MAX];
	const char *rootrel = "rootfs", *layout = layout_opt;
	json_t *ann, *mounts, *kept, *taken_dst, *left_dst, *lay, *lmounts, *linux_, *m, *idmap = NULL;
	struct rootasm_error e = { 0 };
	struct rootasm_layout *l = NULL;
	int readonly = 0, fd, r;	/* readonly: read to check its type; the runtime's to act on */
	bool idmapped = false;
	unsigned long long id;
	size_t i;

	snprintf(cfgpath, sizeof(cfgpath), "%s/config.json", bundle);
	r = read_json_raw(cfgpath, &cfg, &orig, &origlen);
	if (r)
		return r;
	ann = json_object_get(cfg, "annotations");
	if (json_is_object(ann) && json_object_get(ann, ANN_PREPARED))
		return bad("bundle prepare", cfgpath, "already prepared by rootasm (annotation " ANN_PREPARED
			   "); run rootasm bundle cleanup first");
	snprintf(state, sizeof(state), "%s/" STATE_DIR "/state.json", bundle);
	if (access(state, F_OK) == 0)
		return bad("bundle prepare", state, "an earlier prepare of this bundle did not finish; run rootasm "
			   "bundle cleanup first");
	if (!layout && json_is_object(ann))
		layout = json_string_value(json_object_get(ann, ANN_LAYOUT));
	if (!layout)
		return bad("bundle prepare", cfgpath, "no layout: give --layout or the annotation " ANN_LAYOUT);
	if (json_unpack(cfg, "{s?{s?s, s?b}}", "root", "path", &rootrel, "readonly", &readonly) < 0)
		return bad("bundle prepare", cfgpath, "root: path must be a string, readonly a boolean");
	if (rootrel[0] == '/')
		snprintf(root, sizeof(root), "%s", rootrel);
	else
		snprintf(root, sizeof(root), "%s/%s", bundle, rootrel);
	if (layout[0] == '/')
		snprintf(lpath, sizeof(lpath), "%s", layout);
	else
		snprintf(lpath, sizeof(lpath), "%s/%s", bundle, layout);
	r = read_json(lpath, &base);
	if (r)
		return r;
	snprintf(lbuf, sizeof(lbuf), "%s", lpath);
	if (absolutize(base, dirname(lbuf)) < 0)
		return cli_errno(ENOMEM, "make the layout's host paths absolute");

	/* the id mappings: every layer idmapped (on-disk ids are the container's) */
	linux_ = json_object_get(cfg, "linux");
	if (json_is_object(linux_) && (json_object_get(linux_, "uidMappings") || json_object_get(linux_, "gidMappings"))) {
		bool isbad = false;
		json_t *u = ranges(json_object_get(linux_, "uidMappings"), &isbad);
		json_t *g = ranges(json_object_get(linux_, "gidMappings"), &isbad);

		if (isbad || !json_array_size(u) || !json_array_size(g)) {
			json_decref(u);
			json_decref(g);
			return bad("bundle prepare", cfgpath, "linux.uidMappings and gidMappings: both needed, each "
				   "entry {containerID, hostID, size > 0}");
		}
		idmap = json_pack("{s:o, s:o}", "uids", u, "gids", g);
		idmapped = true;
		/*
		 * The merged root directory is the upper's: owned by the container's
		 * root, or that root cannot create anything at / (crun's mount points).
		 */
		if (upper) {
			long long hu = host_root(json_object_get(linux_, "uidMappings"));
			long long hg = host_root(json_object_get(linux_, "gidMappings"));
			char up[PATH_MAX];

			snprintf(up, sizeof(up), "%s/upper", upper);
			if ((mkdir(up, 0755) < 0 && errno != EEXIST) ||
			    (hu >= 0 && hg >= 0 && fchownat(AT_FDCWD, up, hu, hg, AT_SYMLINK_NOFOLLOW) < 0)) {
				json_decref(idmap);
				return fail_msg(ROOTASM_ERROR_RUNTIME, errno, "prepare upper", up, "%s", strerror(errno));
			}
		}
	}
	lay = json_object();
	json_object_set_new(lay, "version", json_integer(1));
	json_object_set(lay, "layers", json_object_get(base, "layers"));
	json_array_foreach(json_object_get(lay, "layers"), i, m)
		if (idmap && !json_object_get(m, "idmap"))
			json_object_set(m, "idmap", idmap);
	json_decref(idmap);
	/*
	 * root.readonly stays the runtime's: it remounts the root read-only after
	 * it made its own mount points, which needs the upper until then.
	 */
	if (upper)
		json_object_set_new(lay, "upper", json_pack("{s:s}", "dir", upper));
	else if (json_object_get(base, "upper"))
		json_object_set(lay, "upper", json_object_get(base, "upper"));
	if (json_object_get(base, "overlay"))
		json_object_set(lay, "overlay", json_object_get(base, "overlay"));
	lmounts = json_array();
	json_array_foreach(json_object_get(base, "mounts"), i, m)
		json_array_append(lmounts, m);
	/* the config's mounts: taken by rootasm or left to the runtime, in order */
	mounts = json_object_get(cfg, "mounts");
	kept = json_array();
	taken_dst = json_array();
	left_dst = json_array();
	json_array_foreach(mounts, i, m) {
		const char *dst = json_string_value(json_object_get(m, "destination"));
		bool under = false;
		json_t *t = NULL, *ld;
		size_t k;

		json_array_foreach(left_dst, k, ld)
			under |= dst && at_or_below(dst, json_string_value(ld));
		if (!under)
			t = take_mount(m, bundle, idmapped);
		if (t) {
			json_array_append_new(lmounts, t);
			json_array_append_new(taken_dst, json_string(dst));
		} else {
			json_array_append(kept, m);
			json_array_append_new(left_dst, json_string(dst ? dst : "?"));
		}
	}
	json_object_set_new(lay, "mounts", lmounts);
	if (json_object_get(base, "attributes"))
		json_object_set(lay, "attributes", json_object_get(base, "attributes"));

	/* state first: the original config and the layout, then the tree, then the new config */
	snprintf(state, sizeof(state), "%s/" STATE_DIR, bundle);
	if (mkdir(state, 0700) < 0 && errno != EEXIST) {
		json_decref(lay);
		json_decref(kept);
		json_decref(taken_dst);
		json_decref(left_dst);
		return fail_msg(ROOTASM_ERROR_RUNTIME, errno, "mkdir", state, "%s", strerror(errno));
	}
	r = write_json_raw(state, "config.json", NULL, orig, origlen);
	if (!r)
		r = write_json(state, "layout.json", lay);
	json_decref(lay);
	if (r)
		goto out_lists;
	snprintf(lbuf, sizeof(lbuf), "%s/layout.json", state);
	r = cli_load(lbuf, 0, &l);
	if (r)
		goto out_lists;
	if (mkdir(root, 0755) < 0 && errno != EEXIST) {
		r = fail_msg(ROOTASM_ERROR_RUNTIME, errno, "mkdir", root, "%s", strerror(errno));
		goto out_lists;
	}
	if (is_mountpoint(root)) {
		r = bad("bundle prepare", root, "is a mount point already");
		goto out_lists;
	}
	fd = rootasm_assemble(cli_context(), l, &e);
	rootasm_layout_free(l);
	if (fd < 0 || rootasm_attach(fd, root, &e) < 0) {
		if (fd >= 0)
			close(fd);
		r = cli_fail(&e);
		goto out_lists;
	}
	close(fd);
	id = mount_id(root);
	/* what cleanup needs even if we die before config.json is rewritten */
	{
		json_t *stj = json_pack("{s:I, s:s}", "mount_id", (json_int_t)id, "root", root);

		r = stj ? write_json(state, "state.json", stj) : EXIT_RUNTIME;
		json_decref(stj);
		if (r) {
			umount2(root, MNT_DETACH);
			goto out_lists;
		}
	}
	/* the runtime's config: without the mounts rootasm made, marked as prepared */
	json_object_set(cfg, "mounts", kept);
	if (!json_is_object(ann)) {
		ann = json_object();
		json_object_set_new(cfg, "annotations", ann);
	}
	{
		char ids[32];

		snprintf(ids, sizeof(ids), "%llu", id);
		json_object_set_new(ann, ANN_PREPARED, json_string(ids));
	}
	r = write_json(bundle, "config.json", cfg);
	if (r) {
		umount2(root, MNT_DETACH);
		goto out_lists;
	}
	if (cli.json) {
		r = cli_json_out(json_pack("{s:s, s:s, s:I, s:O, s:O}", "root", root, "layout", lpath, "mount_id",
					   (json_int_t)id, "rootasm_mounts", taken_dst, "runtime_mounts", left_dst)) < 0 ?
		    EXIT_RUNTIME : 0;
	} else {
		printf("%s: attached (mount id %llu); %zu mounts made by rootasm, %zu left to the runtime\n", root, id,
		       json_array_size(taken_dst), json_array_size(kept));
	}
out_lists:
	json_decref(kept);
	json_decref(taken_dst);
	json_decref(left_dst);
	return r;
}

static int cleanup(const char *bundle)
{
	_cleanup_json_ json_t *cfg = NULL;
	char cfgpath[PATH_MAX], state[PATH_MAX], saved[PATH_MAX], root[PATH_MAX], p[PATH_MAX];
	_cleanup_json_ json_t *stj = NULL;
	const char *rootrel = "rootfs", *ids = NULL;
	unsigned long long id = 0;
	bool detached = false;
	json_int_t sid = 0;
	int r;

	snprintf(cfgpath, sizeof(cfgpath), "%s/config.json", bundle);
	r = read_json(cfgpath, &cfg);
	if (r)
		return r;
	snprintf(p, sizeof(p), "%s/" STATE_DIR "/state.json", bundle);
	if (json_unpack(cfg, "{s:{s:s}}", "annotations", ANN_PREPARED, &ids) == 0) {
		id = strtoull(ids, NULL, 10);
	} else if (access(p, F_OK) == 0) {
		/* a prepare that died between the attach and the new config.json */
		r = read_json(p, &stj);
		if (r)
			return r;
		json_unpack(stj, "{s:I}", "mount_id", &sid);
		id = sid;
	} else {
		return bad("bundle cleanup", cfgpath, "not prepared by rootasm (no annotation " ANN_PREPARED ")");
	}
	json_unpack(cfg, "{s?{s?s}}", "root", "path", &rootrel);
	if (rootrel[0] == '/')
		snprintf(root, sizeof(root), "%s", rootrel);
	else
		snprintf(root, sizeof(root), "%s/%s", bundle, rootrel);
	/* only the tree prepare attached: the same unique mount id */
	if (id && mount_id(root) == id) {
		if (umount2(root, MNT_DETACH) < 0)
			return fail_msg(ROOTASM_ERROR_RUNTIME, errno, "umount2", root, "%s", strerror(errno));
		detached = true;
	}
	snprintf(state, sizeof(state), "%s/" STATE_DIR, bundle);
	snprintf(saved, sizeof(saved), "%s/config.json", state);
	if (rename(saved, cfgpath) < 0)
		return fail_msg(ROOTASM_ERROR_RUNTIME, errno, "restore config.json", saved, "%s", strerror(errno));
	snprintf(p, sizeof(p), "%s/layout.json", state);
	unlink(p);
	snprintf(p, sizeof(p), "%s/state.json", state);
	unlink(p);
	rmdir(state);
	if (cli.json)
		return cli_json_out(json_pack("{s:s, s:b}", "root", root, "detached", detached)) < 0 ? EXIT_RUNTIME : 0;
	printf("%s: %s; config.json restored\n", root, detached ? "detached" : "was not attached (left alone)");
	return 0;
}

int cmd_bundle(int argc, char **argv)
{
	static const struct option opts[] = {
		CLI_COMMON_LONGOPTS,
		{ "layout", required_argument, NULL, 'l' },
		{ "upper", required_argument, NULL, 'u' },
		{ 0 },
	};
	const char *layout = NULL, *upper = NULL, *sub, *bundle;
	char abs[PATH_MAX];
	int c, r;

	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) >= 0) {
		switch (c) {
		case 'l':
			layout = optarg;
			break;
		case 'u':
			upper = optarg;
			break;
		default:
			if ((r = cli_common(c, argc, argv, help)) != CLI_GO_ON)
				return r;
		}
	}
	if (optind >= argc)
		return cli_usage("missing prepare or cleanup");
	sub = argv[optind++];
	if (strcmp(sub, "prepare") && strcmp(sub, "cleanup"))
		return cli_usage("unknown bundle command '%s' (prepare, cleanup)", sub);
	if (optind >= argc)
		return cli_usage("missing BUNDLE");
	bundle = argv[optind++];
	if (optind < argc)
		return cli_usage("more than one BUNDLE ('%s')", argv[optind]);
	if (!strcmp(sub, "cleanup") && (layout || upper))
		return cli_usage("--layout and --upper go with prepare");
	if (!realpath(bundle, abs))
		return fail_msg(ROOTASM_ERROR_USAGE, errno, "bundle", bundle, "%s", strerror(errno));
	if (upper && upper[0] != '/') {
		static char up[PATH_MAX];

		if (!realpath(upper, up))
			return fail_msg(ROOTASM_ERROR_USAGE, errno, "bundle", upper, "%s", strerror(errno));
		upper = up;
	}
	return !strcmp(sub, "prepare") ? prepare(abs, layout, upper) : cleanup(abs);
}
