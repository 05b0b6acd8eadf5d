// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rootasm_bundle_prepare() (rootasm.h; bundle.c says what it does, step by
 * step): config.json and the layout -> the tree assembled detached
 * (bundle_assemble(): the one place) -> the record, .rootasm/, the mount
 * onto root.path -> config.json rewritten without the mounts rootasm made.
 */
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
#include "layout-write.h"
#include "open.h"
#include "passwd.h"
#include "uapi.h"
#include "util.h"

/*
 * Who the bundle's tree is for:
 *
 * The principal: the bundle's owner, as fstat of the bundle's fd says (or,
 * in root's bundle, config.json's owner when that is not root: the one who
 * wrote what it asks for). root's bundle is an administrator's (the calling
 * process, judged: rootasm_principal_self()); anyone else's is that user's
 * (rootasm_principal_of_uid()): the layout file it names is read, and the
 * layout's host objects are opened, with its rights; it gets no more than it
 * could reach itself, and its tree is nosuid,nodev and locked (authorize.c).
 * A front end's layout directories (@opts->layout_dirs) limit either.
 */
static int bundle_principal(struct bundle *b, const struct rootasm_bundle_opts *opts, struct rootasm_principal **ret,
			    struct rootasm_error *e)
{
	size_t n = OPT(opts, n_layout_dirs, 0);
	int r;

	r = b->author != 0 ? rootasm_principal_of_uid(b->author, -EBADF, ret, e) : rootasm_principal_self(ret, e);
	if (r == 0 && n)
		r = rootasm_principal_limit(*ret, ROOTASM_LIMIT_LAYOUTS, OPT(opts, layout_dirs, NULL), n, e);
	return r;
}

struct layout_read {
	struct bundle *b;
	const char *path;
	const struct rootasm_principal *p;
	json_t **base;
	char **shown;
	int *dir;
	struct rootasm_error *e;
};

static int layout_read(void *ud)
{
	struct layout_read *x = ud;

	return bd_read_layout(x->b, x->path, x->p, x->base, x->shown, x->dir, x->e);
}

/*
 * The one place where a bundle's tree is loaded and assembled: @text, the
 * layout prepare made (every host path in it absolute) of the file judged
 * in @dir (bd_read_layout()), named @name in messages, for @p
 * (bundle_principal()). Returns the tree's fd (the caller owns it).
 */
static int bundle_assemble(struct rootasm_ctx *ctx, struct bundle *b, const struct rootasm_principal *p, int dir,
			   const char *text, size_t len, const char *name, struct rootasm_error *e)
{
	struct rootasm_load_opts lo = { .size = sizeof(lo), .flags = ROOTASM_LOAD_DIR_FD, .name = name,
					.principal = p, .dir_fd = dir };
	struct rootasm_layout *l = NULL;
	int r;

	RA_TRACE(ctx, "bundle %s: owned by %u:%u, assembling %s for %s", b->path, (unsigned)b->st.st_uid,
		 (unsigned)b->st.st_gid, name, rootasm_principal_describe(p));
	r = ra_layout_load_judged(ctx, text, len, &lo, &l, e);
	if (r < 0)
		return r;
	r = rootasm_assemble_with(ctx, l, NULL, e);
	rootasm_layout_free(l);
	return r;
}

int rootasm_bundle_prepare(struct rootasm_ctx *ctx, const char *bundle_dir, const struct rootasm_bundle_opts *opts,
			   struct rootasm_bundle_result *res, struct rootasm_error *e)
{
	struct bundle b = { .op = "bundle prepare", .fd = -EBADF, .records = -EBADF };
	_cleanup_json_ json_t *cfg = NULL, *base = NULL, *lay = NULL, *kept = NULL, *taken_dst = NULL,
			      *left_dst = NULL, *rec = NULL;
	_cleanup_free_ char *orig = NULL, *lshown = NULL, *rel = NULL, *ltext = NULL, *ctext = NULL, *rtext = NULL,
			    *made_name = NULL, *lname = NULL;
	_cleanup_close_ int root_fd = -EBADF, made_parent = -EBADF, tree_fd = -EBADF, state = -EBADF,
			    rfd = -EBADF, ldir = -EBADF;
	const char *layout, *upper, *upper_dir, *rootpath = "rootfs";
	size_t origlen = 0, llen = 0, clen = 0, rlen = 0, i;
	json_t *ann, *linux_, *m, *lmounts, *idmap = NULL;
	struct stat rst;
	struct rootasm_principal *who = NULL;
	bool from_annotation = false;
	bool idmapped = false, made_root = false, made_state = false, published = false, attached = false;
	int readonly = 0, r;		/* readonly: read to check its type; the runtime's to act on */
	uint64_t id;

	r = bd_begin(&ctx, res, opts, b.op, bundle_dir, true, e);
	if (r < 0)
		return r;
	layout = OPT(opts, layout, NULL);
	upper = OPT(opts, upper, NULL);
	upper_dir = OPT(opts, upper_dir, NULL);
	if (upper && upper[0] != '/')
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, b.op, upper, "the upper directory must be absolute");
	r = bd_bundle_open(&b, bundle_dir, e);
	if (r < 0)
		goto out;
	/* a directory anyone may write (not sticky): anyone may have written its config.json */
	if ((b.st.st_mode & 022) && !(b.st.st_mode & S_ISVTX)) {
		r = USAGE(e, &b, EPERM, b.path, "the bundle directory is writable by others (mode %04o): anyone could "
			  "have written its config.json", (unsigned)(b.st.st_mode & 07777));
		goto out;
	}
	r = bd_read_beneath(&b, b.fd, "config.json", "config.json", CONFIG_MAX, &orig, &origlen, e);
	if (r >= 0)
		r = bd_parse_object(&b, orig, origlen, bd_in_bundle(&b, "config.json"), &cfg, e);
	if (r < 0)
		goto out;
	/* root's bundle with another user's config.json (a sticky directory): that user wrote what it asks */
	b.author = b.st.st_uid != 0 ? b.st.st_uid : b.read_uid;
	ann = json_object_get(cfg, "annotations");
	if (json_is_object(ann) && json_object_get(ann, ANN_PREPARED)) {
		r = USAGE(e, &b, EBUSY, bd_in_bundle(&b, "config.json"), "already prepared by rootasm (annotation "
			  ANN_PREPARED "); run rootasm bundle cleanup first");
		goto out;
	}
	r = bd_records_open(&b, true, e);
	if (r < 0)
		goto out;
	if (faccessat(b.records, b.record, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
		r = USAGE(e, &b, EBUSY, b.path, "an earlier prepare of this bundle did not finish (%s/%s); run rootasm "
			  "bundle cleanup first", b.records_path, b.record);
		goto out;
	}
	if (!layout && json_is_object(ann)) {
		layout = json_string_value(json_object_get(ann, ANN_LAYOUT));
		from_annotation = true;
	}
	if (!layout) {
		r = USAGE(e, &b, EINVAL, bd_in_bundle(&b, "config.json"), "no layout: give --layout or the annotation "
			  ANN_LAYOUT);
		goto out;
	}
	if (json_unpack(cfg, "{s?{s?s, s?b}}", "root", "path", &rootpath, "readonly", &readonly) < 0) {
		r = USAGE(e, &b, EINVAL, bd_in_bundle(&b, "config.json"), "root: path must be a string, readonly a boolean");
		goto out;
	}
	r = bd_root_rel(&b, rootpath, &rel, e);
	if (r < 0)
		goto out;
	/*
	 * The annotation's layout file is read with the principal's rights (the
	 * bundle's author wrote it): nothing it could not read itself is parsed or
	 * quoted. --layout is the caller's word, read with the caller's.
	 */
	r = bundle_principal(&b, opts, &who, e);
	if (r < 0)
		goto out;
	{
		struct layout_read lr = { &b, layout, who, &base, &lshown, &ldir, e };

		r = rootasm_principal_run(from_annotation ? who : NULL, layout_read, &lr);
		if (r < 0 && e && !e->err)
			r = ra_err(e, -r, -EBADF, "read layout", layout, "as %s", rootasm_principal_describe(who));
	}
	if (r < 0)
		goto out;
	{
		_cleanup_free_ char *lpath = strdup(lshown);

		if (!lpath || bd_absolutize(base, dirname(lpath)) < 0) {
			r = ra_oom(e, b.op);
			goto out;
		}
	}

	/* the id mappings: every layer idmapped (on-disk ids are the container's) */
	linux_ = json_object_get(cfg, "linux");
	if (json_is_object(linux_) && (json_object_get(linux_, "uidMappings") || json_object_get(linux_, "gidMappings"))) {
		bool isbad = false;
		json_t *u = bd_ranges(json_object_get(linux_, "uidMappings"), &isbad);
		json_t *g = bd_ranges(json_object_get(linux_, "gidMappings"), &isbad);

		if (isbad || !json_array_size(u) || !json_array_size(g)) {
			json_decref(u);
			json_decref(g);
			r = USAGE(e, &b, EINVAL, bd_in_bundle(&b, "config.json"), "linux.uidMappings and gidMappings: both "
				  "needed, each entry {containerID, hostID, size > 0}");
			goto out;
		}
		idmap = ra_layout_json_idmap(u, g);
		if (!idmap) {
			r = ra_oom(e, b.op);
			goto out;
		}
		idmapped = true;
		/*
		 * The merged root directory is the upper's: owned by the container's
		 * root, or that root cannot create anything at / (crun's mount points).
		 */
		if (upper) {
			long long hu = bd_host_root(json_object_get(linux_, "uidMappings"));
			long long hg = bd_host_root(json_object_get(linux_, "gidMappings"));
			char up[PATH_MAX];

			snprintf(up, sizeof(up), "%s/upper", upper);
			if ((mkdir(up, 0755) < 0 && errno != EEXIST) ||
			    (hu >= 0 && hg >= 0 && fchownat(AT_FDCWD, up, hu, hg, AT_SYMLINK_NOFOLLOW) < 0)) {
				json_decref(idmap);
				r = ra_err(e, errno, -EBADF, "prepare upper", up, NULL);
				goto out;
			}
		}
	}
	lay = ra_layout_json_doc(NULL);
	if (!lay) {
		json_decref(idmap);
		r = ra_oom(e, b.op);
		goto out;
	}
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
		json_object_set_new(lay, "upper", ra_layout_json_upper_dir(upper));
	else if (upper_dir)
		json_object_set_new(lay, "upper", ra_layout_json_upper_dirs(upper_dir, OPT(opts, work_dir, NULL)));
	else if (json_object_get(base, "upper"))
		json_object_set(lay, "upper", json_object_get(base, "upper"));
	if (json_object_get(base, "overlay"))
		json_object_set(lay, "overlay", json_object_get(base, "overlay"));
	lmounts = json_array();
	json_array_foreach(json_object_get(base, "mounts"), i, m)
		json_array_append(lmounts, m);
	/* the config's mounts: taken by rootasm or left to the runtime, in order */
	kept = json_array();
	taken_dst = json_array();
	left_dst = json_array();
	if (!lmounts || !kept || !taken_dst || !left_dst) {
		json_decref(lmounts);
		r = ra_oom(e, b.op);
		goto out;
	}
	json_array_foreach(json_object_get(cfg, "mounts"), i, m) {
		const char *dst = json_string_value(json_object_get(m, "destination"));
		json_t *t = NULL;

		/*
		 * The runtime spec makes them in their listed order: rootasm takes
		 * the ones before the first it leaves to the runtime, none after it
		 * (they would exist before it is mounted, or lie under it)
		 */
		if (!json_array_size(left_dst))
			t = bd_take_mount(m, b.path, idmapped, !rootasm_principal_is_admin(who));
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
	r = bd_dump(lay, &ltext, &llen, e);
	if (r < 0)
		goto out;

	/* root.path: beneath the bundle, made when missing, not a mount point */
	{
		char what[PATH_MAX + 16];

		snprintf(what, sizeof(what), "root.path '%s'", rootpath);
		root_fd = bd_root_open(&b, rel, what, &made_root, &made_parent, &made_name, e);
		if (root_fd < 0) {
			r = root_fd;
			goto out;
		}
	}
	if (fstat(root_fd, &rst) < 0) {
		r = ra_err(e, errno, -EBADF, b.op, bd_in_bundle(&b, rel), NULL);
		goto out;
	}
	if (asprintf(&lname, "%s/" STATE_DIR "/layout.json", b.path) < 0) {
		lname = NULL;
		r = ra_oom(e, b.op);
		goto out;
	}
	tree_fd = bundle_assemble(ctx, &b, who, ldir, ltext, llen, lname, e);
	if (tree_fd < 0) {
		r = tree_fd;
		goto out;
	}
	id = ra_fd_mount_id(tree_fd, NULL);
	if (!id) {
		r = ra_err(e, EOPNOTSUPP, -EBADF, "statx", lname, "the tree's unique mount id (Linux 6.8)");
		goto out;
	}

	/*
	 * The record first, where only root writes: what cleanup believes, and
	 * the lock (linkat: one prepare of a bundle at a time). Then .rootasm/:
	 * the original config and the layout; then the attach; config.json last.
	 */
	rec = json_pack("{s:i, s:s, s:I, s:I, s:I, s:I, s:s, s:I, s:I, s:I}", "version", 1, "bundle", b.path,
			"bundle_dev", (json_int_t)b.st.st_dev, "bundle_ino", (json_int_t)b.st.st_ino,
			"owner_uid", (json_int_t)b.st.st_uid, "owner_gid", (json_int_t)b.st.st_gid, "root", rel,
			"root_dev", (json_int_t)rst.st_dev, "root_ino", (json_int_t)rst.st_ino,
			"mount_id", (json_int_t)id);
	r = bd_dump(rec, &rtext, &rlen, e);
	if (r < 0)
		goto out;
	rfd = openat(b.records, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	if (rfd < 0) {
		r = ra_err(e, errno, -EBADF, "create", b.records_path, "O_TMPFILE for the record");
		goto out;
	}
	if (write(rfd, rtext, rlen) != (ssize_t)rlen || fsync(rfd) < 0) {
		r = ra_err(e, errno ? errno : EIO, -EBADF, "write", b.records_path, "the record %s", b.record);
		goto out;
	}
	if (linkat(rfd, "", b.records, b.record, AT_EMPTY_PATH) < 0) {
		if (errno == EEXIST)
			r = USAGE(e, &b, EBUSY, b.path, "prepared by another rootasm at the same time (%s/%s)",
				  b.records_path, b.record);
		else
			r = ra_err(e, errno, -EBADF, "publish", b.records_path, "the record %s", b.record);
		goto out;
	}
	published = true;

	if (mkdirat(b.fd, STATE_DIR, 0700) == 0)
		made_state = true;
	else if (errno != EEXIST) {
		r = ra_err(e, errno, -EBADF, "mkdir", bd_in_bundle(&b, STATE_DIR), NULL);
		goto out;
	}
	state = bd_beneath(b.fd, STATE_DIR, O_PATH | O_DIRECTORY);
	if (state < 0) {
		if (made_state)
			unlinkat(b.fd, STATE_DIR, AT_REMOVEDIR);
		made_state = false;
		r = bd_beneath_err(&b, state, STATE_DIR, STATE_DIR, e);
		goto out;
	}
	/* the original config durable before config.json is replaced; the layout is for people (not read back) */
	r = bd_write_at(&b, state, "config.json", STATE_DIR "/config.json", orig, origlen, true, e);
	if (r >= 0)
		r = bd_write_at(&b, state, "layout.json", STATE_DIR "/layout.json", ltext, llen, false, e);
	if (r < 0)
		goto out;
	if (res) {
		res->mnt_id = id;
		res->root = strdup(bd_in_bundle(&b, rel));
		res->layout = TAKE_PTR(lshown);
		if (!res->root || bd_strv_of(taken_dst, &res->rootasm_mounts, &res->n_rootasm_mounts) < 0 ||
		    bd_strv_of(left_dst, &res->runtime_mounts, &res->n_runtime_mounts) < 0) {
			r = ra_oom(e, b.op);
			goto out;
		}
	}

	/* attached on the fd of root.path, resolved once */
	if (move_mount(tree_fd, "", root_fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0) {
		r = ra_err(e, errno, -EBADF, "move_mount", bd_in_bundle(&b, rel), NULL);
		goto out;
	}
	attached = true;

	/* the runtime's config: without the mounts rootasm made, marked (for people) as prepared */
	{
		char ids[32];

		snprintf(ids, sizeof(ids), "%llu", (unsigned long long)id);
		if (!json_is_object(ann)) {
			ann = json_object();
			json_object_set_new(cfg, "annotations", ann);
		}
		if (json_object_set(cfg, "mounts", kept) < 0 || !ann ||
		    json_object_set_new(ann, ANN_PREPARED, json_string(ids)) < 0) {
			r = ra_oom(e, b.op);
			goto out;
		}
	}
	r = bd_dump(cfg, &ctext, &clen, e);
	if (r >= 0)
		r = bd_write_at(&b, b.fd, "config.json", "config.json", ctext, clen, true, e);
	if (r < 0)
		goto out;
	RA_TRACE(ctx, "bundle %s: tree %llu attached at %s, record %s/%s", b.path, (unsigned long long)id,
		 bd_in_bundle(&b, rel), b.records_path, b.record);
	r = 0;
	goto out_done;
out:
	rootasm_bundle_result_free(res);
	if (attached)
		bd_detach_fd(tree_fd);
	if (published)
		unlinkat(b.records, b.record, 0);
	if (state >= 0)
		bd_state_remove(&b, state, made_state);
	if (made_root)
		unlinkat(made_parent, made_name, AT_REMOVEDIR);
out_done:
	rootasm_principal_free(who);
	bd_bundle_done(&b);
	return r;
}
