// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Feature probe: each feature is tried on throwaway detached tmpfs mounts,
 * never read off the version number. Nothing here touches an attached mount;
 * every fd is closed before a probe returns, which dissolves what it built.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <linux/loop.h>

#include "context.h"
#include "mntinfo.h"
#include "child.h"
#include "probe.h"
#include "sysmnt.h"
#include "util.h"

static int child_exit42(void *arg, int *step)
{
	_exit(42);
}

#define DETAIL(buf, ...) snprintf(buf, RA_DETAIL_MAX, __VA_ARGS__)

/* A failed fsconfig(): the detail names @what, the error and the kernel's message. */
static int fs_fail(char *d, int fsfd, const char *what)
{
	int r = -errno;
	char msg[128];

	ra_fs_messages(fsfd, msg, sizeof(msg));
	DETAIL(d, "%s: %s%s%s%s", what, strerror(-r), *msg ? " (" : "", msg, *msg ? ")" : "");
	return r;
}

/*
 * The probes. Each returns 0 (present), -EPERM when the caller may not try
 * (the privilege gate itself said no: no CAP_SYS_ADMIN for fsopen, no access
 * to /dev/loop-control), or another -errno: the kernel lacks it.
 *
 * One throwaway detached tmpfs serves all probes of a session (ra_require()
 * or rootasm_probe_feature()); it is closed, and so dissolved, when the
 * session ends. Each probe that needs directories of its own makes them with
 * a fresh name. The context's lock is held throughout.
 */
static int scratch(struct rootasm_ctx *c, char *detail)
{
	if (c->scratch_fd >= 0)
		return c->scratch_fd;
	c->scratch_fd = ra_tmpfs_mount(NULL, 0, NULL);
	if (c->scratch_fd < 0) {
		int r = c->scratch_fd;

		DETAIL(detail, "fsopen/fsmount tmpfs: %s", strerror(-r));
		c->scratch_fd = -EBADF;
		return r == -EACCES ? -EPERM : r;
	}
	return c->scratch_fd;
}

static void scratch_end(struct rootasm_ctx *c)
{
	ra_defer_close(c, take_fd(c->scratch_fd));
}

/* A series of probes is over: its scratch mount goes, its answers are kept (probecache.c). */
static void session_end(struct rootasm_ctx *c)
{
	scratch_end(c);
	ra_probe_cache_save(c);
}

/* A new directory in the scratch tmpfs; its name is written to @name. */
static int scratch_dir(struct rootasm_ctx *c, char *detail, char *name, size_t size)
{
	int mfd = scratch(c, detail);

	if (mfd < 0)
		return mfd;
	snprintf(name, size, "d%u", c->scratch_seq++);
	if (mkdirat(mfd, name, 0755) < 0) {
		DETAIL(detail, "mkdir in tmpfs: %s", strerror(errno));
		return -errno;
	}
	return mfd;
}

/* A failure of the feature itself: never "not permitted", whatever errno the kernel chose. */
static int absent(int r)
{
	return r == -EPERM || r == -EACCES ? -EOPNOTSUPP : r;
}

/* A clone of the scratch mount (open_tree() of a detached mount) in *ret (-1 and errno when it failed): 0, or the scratch's failure. */
static int scratch_clone(struct rootasm_ctx *c, char *d, int *ret)
{
	int mfd = scratch(c, d);

	if (mfd < 0)
		return mfd;
	*ret = open_tree(mfd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	return 0;
}

static int p_mount_api(struct rootasm_ctx *c, char *d)
{
	_cleanup_close_ int cfd = -EBADF;
	int r = scratch_clone(c, d, &cfd);

	if (r < 0)
		return r;
	/* EINVAL here only means "detached source": open_tree itself exists */
	if (cfd < 0 && errno == ENOSYS)
		return DETAIL(d, "open_tree: %s", strerror(errno)), -errno;
	return 0;
}

static int p_setattr(struct rootasm_ctx *c, char *d)
{
	int mfd = scratch(c, d);
	struct mount_attr a = { .attr_set = MOUNT_ATTR_NOSUID };

	if (mfd < 0)
		return mfd;
	if (mount_setattr(mfd, "", AT_EMPTY_PATH, &a, sizeof(a)) < 0)
		return DETAIL(d, "mount_setattr: %s", strerror(errno)), absent(-errno);
	return 0;
}

static int p_openat2(struct rootasm_ctx *c, char *d)
{
	_cleanup_close_ int fd = -EBADF;
	struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT };
	char name[16];
	int mfd = scratch_dir(c, d, name, sizeof(name));

	if (mfd < 0)
		return mfd;
	/* no "..": a lookup with ".." in it may say EAGAIN when any mount changes */
	fd = sys_openat2(mfd, name, &how);
	if (fd < 0)
		return DETAIL(d, "openat2: %s", strerror(errno)), absent(-errno);
	return 0;
}

static int p_loop(struct rootasm_ctx *c, char *d)
{
	_cleanup_close_ int ctl = -EBADF, lfd = -EBADF;
	struct loop_config cfg = { .fd = (unsigned int)-1 };
	char dev[32];
	int nr;

	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0 && (errno == EACCES || errno == EPERM))
		return DETAIL(d, "/dev/loop-control: %s (loop devices need root in the initial user namespace)",
			      strerror(errno)), -EPERM;
	if (ctl < 0)
		return DETAIL(d, "/dev/loop-control: %s", strerror(errno)), -errno;
	nr = ioctl(ctl, LOOP_CTL_GET_FREE);
	if (nr < 0)
		return DETAIL(d, "LOOP_CTL_GET_FREE: %s", strerror(errno)), errno == EPERM ? -EPERM : -errno;
	snprintf(dev, sizeof(dev), "/dev/loop%d", nr);
	lfd = open(dev, O_RDONLY | O_CLOEXEC);
	if (lfd < 0)
		return DETAIL(d, "%s: %s", dev, strerror(errno)), errno == EACCES ? -EPERM : -errno;
	/* With an invalid backing fd a kernel that knows the ioctl says EBADF. */
	if (ioctl(lfd, LOOP_CONFIGURE, &cfg) == 0 || errno == EBADF || errno == EBUSY)
		return 0;
	if (errno == EPERM)
		return DETAIL(d, "LOOP_CONFIGURE: %s (needs CAP_SYS_ADMIN in the initial user namespace)",
			      strerror(errno)), -EPERM;
	return DETAIL(d, "LOOP_CONFIGURE: %s", strerror(errno)), -errno;
}

/* lowerdir+ by fd: parsing happens at fsconfig time, so no create is needed. */
static int p_fd_layer(struct rootasm_ctx *c, char *d, int oflags)
{
	_cleanup_close_ int fsfd = -EBADF, lfd = -EBADF;
	char name[16];
	int mfd = scratch_dir(c, d, name, sizeof(name));

	if (mfd < 0)
		return mfd;
	lfd = openat(mfd, name, oflags | O_DIRECTORY | O_CLOEXEC);
	fsfd = fsopen("overlay", FSOPEN_CLOEXEC);
	if (lfd < 0 || fsfd < 0)
		return DETAIL(d, "fsopen overlay: %s", strerror(errno)), -errno;
	if (fsconfig(fsfd, FSCONFIG_SET_FD, "lowerdir+", NULL, lfd) < 0)
		return absent(fs_fail(d, fsfd, "fsconfig lowerdir+ fd"));
	return 0;
}

static int p_ovl_fd(struct rootasm_ctx *c, char *d)
{
	return p_fd_layer(c, d, O_RDONLY);
}

static int p_opath(struct rootasm_ctx *c, char *d)
{
	return p_fd_layer(c, d, O_PATH);
}

static int p_open_tree_detached(struct rootasm_ctx *c, char *d)
{
	_cleanup_close_ int cfd = -EBADF;
	int r = scratch_clone(c, d, &cfd);

	if (r < 0)
		return r;
	if (cfd < 0)
		return DETAIL(d, "open_tree(detached): %s", strerror(errno)), absent(-errno);
	return 0;
}

static int p_move_detached(struct rootasm_ctx *c, char *d)
{
	_cleanup_close_ int b = -EBADF;
	char name[16];
	int a = scratch_dir(c, d, name, sizeof(name));

	if (a < 0)
		return a;
	b = ra_tmpfs_mount(NULL, 0, NULL);
	if (b < 0)
		return DETAIL(d, "tmpfs: %s", strerror(-b)), b;
	if (move_mount(b, "", a, name, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return DETAIL(d, "move_mount(detached, detached): %s", strerror(errno)), absent(-errno);
	return 0;
}

/* An overlay whose two lowers and upper live on a detached tmpfs; @creds optional. */
static int overlay_on_detached(struct rootasm_ctx *c, char *d, const struct ra_cred_spec *creds)
{
	_cleanup_close_ int fsfd = -EBADF, root = -EBADF;
	static const char *const keys[] = { "lowerdir+", "lowerdir+", "upperdir", "workdir" };
	char dirs[4][16];
	struct rootasm_error e;
	int mfd = -EBADF;

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		mfd = scratch_dir(c, d, dirs[i], sizeof(dirs[i]));
		if (mfd < 0)
			return mfd;
	}
	fsfd = fsopen("overlay", FSOPEN_CLOEXEC);
	if (fsfd < 0)
		return DETAIL(d, "fsopen overlay: %s", strerror(errno)), -errno;
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		_cleanup_close_ int fd = openat(mfd, dirs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (fsconfig(fsfd, FSCONFIG_SET_FD, keys[i], NULL, fd) < 0)
			return DETAIL(d, "fsconfig %s: %s", keys[i], strerror(errno)), absent(-errno);
	}
	if (creds && ra_set_override_creds(fsfd, creds, &e) < 0)
		return DETAIL(d, "%s: %s%s%s", e.op, strerror(e.err), *e.msg ? ": " : "", e.msg), absent(-e.err);
	if (fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return absent(fs_fail(d, fsfd, "create"));
	root = fsmount(fsfd, FSMOUNT_CLOEXEC, 0);
	if (root < 0)
		return DETAIL(d, "fsmount overlay: %s", strerror(errno)), absent(-errno);
	/* the overlay's teardown (its private layer clones) waits for RCU: later */
	ra_defer_close(c, take_fd(root));
	ra_defer_close(c, take_fd(fsfd));
	return 0;
}

static int p_ovl_detached(struct rootasm_ctx *c, char *d)
{
	return overlay_on_detached(c, d, NULL);
}

static int p_override_creds(struct rootasm_ctx *c, char *d)
{
	_cleanup_close_ int fsfd = fsopen("overlay", FSOPEN_CLOEXEC);

	if (fsfd < 0 && errno == EPERM)
		return DETAIL(d, "fsopen overlay: %s", strerror(errno)), -EPERM;
	if (fsfd < 0)
		return DETAIL(d, "fsopen overlay: %s", strerror(errno)), -errno;
	if (fsconfig(fsfd, FSCONFIG_SET_FLAG, "override_creds", NULL, 0) < 0)
		return absent(fs_fail(d, fsfd, "fsconfig override_creds"));
	return 0;
}

static int feature_locked(struct rootasm_ctx *c, enum rootasm_feature f);

static int p_creds_noadmin(struct rootasm_ctx *c, char *d)
{
	struct ra_cred_spec cs = { .uid = 0, .gid = 0, .userns_fd = -EBADF };
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct cd[2] = { { 0 } };
	int r;

	/* What we hold, less CAP_SYS_ADMIN (and CAP_MKNOD, as rootasm's tests use) */
	if (syscall(SYS_capget, &h, cd) == 0)
		cs.caps = ((uint64_t)cd[1].permitted << 32 | cd[0].permitted) & ((1ULL << (CAP_LAST_CAP + 1)) - 1);
	cs.caps &= ~((1ULL << CAP_SYS_ADMIN) | (1ULL << CAP_MKNOD));
	/* the cached answers: these two have usually been probed already */
	r = feature_locked(c, ROOTASM_FEAT_OVL_OVERRIDE_CREDS);
	if (r <= 0)
		return DETAIL(d, "%s", c->detail[ROOTASM_FEAT_OVL_OVERRIDE_CREDS]), r < 0 ? r : -EOPNOTSUPP;
	r = feature_locked(c, ROOTASM_FEAT_OVL_DETACHED_LAYERS);
	if (r <= 0)
		return DETAIL(d, "%s", c->detail[ROOTASM_FEAT_OVL_DETACHED_LAYERS]), r < 0 ? r : -EOPNOTSUPP;
	return overlay_on_detached(c, d, &cs);
}

static int p_pidfd_exit(struct rootasm_ctx *c, char *d)
{
	struct ra_child ch;
	struct ra_pidfd_info info = { .mask = PIDFD_INFO_EXIT };
	_cleanup_close_ int pidfd = -EBADF;
	siginfo_t si;
	int r;

	r = ra_child_start(&ch, 0, RA_CHILD_FILES, child_exit42, NULL, "probe pidfd", NULL);
	if (r < 0)
		return DETAIL(d, "clone3: %s", strerror(-r)), r;
	pidfd = fcntl(ch.pidfd, F_DUPFD_CLOEXEC, 3);
	ra_child_wait(&ch, &si);
	ra_child_kill(&ch);
	if (pidfd < 0)
		return DETAIL(d, "dup pidfd: %s", strerror(errno)), -errno;
	if (ioctl(pidfd, PIDFD_GET_INFO, &info) < 0)
		return DETAIL(d, "PIDFD_GET_INFO: %s", strerror(errno)), absent(-errno);
	if (!(info.mask & PIDFD_INFO_EXIT))
		return DETAIL(d, "PIDFD_GET_INFO: no PIDFD_INFO_EXIT after reaping"), -EOPNOTSUPP;
	if (!WIFEXITED(info.exit_code) || WEXITSTATUS(info.exit_code) != 42)
		return DETAIL(d, "PIDFD_INFO_EXIT: exit_code %#x, expected 42", info.exit_code), -EIO;
	return 0;
}

static int p_fanotify_mnt(struct rootasm_ctx *c, char *d)
{
	_cleanup_close_ int ns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC), fd = -EBADF;
	struct rootasm_error e;

	if (ns < 0)
		return DETAIL(d, "/proc/self/ns/mnt: %s", strerror(errno)), -errno;
	fd = rootasm_watch_open(ns, &e);
	if (fd < 0)
		return DETAIL(d, "%s: %s", e.op, strerror(e.err)), fd;
	return 0;
}

static int p_statmount_idmap(struct rootasm_ctx *c, char *d)
{
	struct ra_statmount *sm = NULL;
	struct statx sx;
	uint64_t id;
	int r;
	bool ok;

	/* the mount / is in (in a chroot, no mount's root: any mount of ours will do) */
	if (statx(AT_FDCWD, "/", AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, RA_STATX_MNT_ID_UNIQUE, &sx) < 0)
		r = -errno;
	else
		r = sx.stx_mask & RA_STATX_MNT_ID_UNIQUE ? 0 : -EOPNOTSUPP;
	id = sx.stx_mnt_id;
	if (r < 0)
		return DETAIL(d, "statx STATX_MNT_ID_UNIQUE: %s", strerror(-r)), absent(r);
	r = ra_statmount(id, RA_STATMOUNT_SUPPORTED_MASK, 0, &sm);
	if (r < 0)
		return DETAIL(d, "statmount: %s", strerror(-r)), absent(r);
	ok = (sm->mask & RA_STATMOUNT_SUPPORTED_MASK) &&
	     (sm->supported_mask & (RA_STATMOUNT_MNT_UIDMAP | RA_STATMOUNT_MNT_GIDMAP)) ==
		     (RA_STATMOUNT_MNT_UIDMAP | RA_STATMOUNT_MNT_GIDMAP);
	free(sm);
	if (!ok)
		return DETAIL(d, "statmount does not report STATMOUNT_MNT_UIDMAP/GIDMAP as supported"), -EOPNOTSUPP;
	return 0;
}

static const struct ra_idrange probe_range = { 0, 100000, 65536 }, probe_range2 = { 0, 200000, 65536 };

static int p_open_tree_attr(struct rootasm_ctx *c, char *d)
{
	_cleanup_close_ int cfd = -EBADF;
	struct mount_attr a = { .attr_set = MOUNT_ATTR_NOSUID };
	int mfd = scratch(c, d);

	if (mfd < 0)
		return mfd;
	cfd = syscall(__NR_open_tree_attr, mfd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH, &a, sizeof(a));
	if (cfd < 0)
		return DETAIL(d, "open_tree_attr: %s", strerror(errno)), absent(-errno);
	return 0;
}

static int p_idmap_idmapped(struct rootasm_ctx *c, char *d)
{
	struct ra_idmap m1 = { .set = true, .userns.fd = -EBADF, .uids = (struct ra_idrange *)&probe_range,
			       .nuids = 1, .gids = (struct ra_idrange *)&probe_range, .ngids = 1 };
	struct ra_idmap m2 = { .set = true, .userns.fd = -EBADF, .uids = (struct ra_idrange *)&probe_range2,
			       .nuids = 1, .gids = (struct ra_idrange *)&probe_range2, .ngids = 1 };
	_cleanup_close_ int mfd = ra_tmpfs_mount(NULL, 0, NULL), ns = -EBADF, cfd = -EBADF;
	struct rootasm_error e;
	struct mount_attr a = { .attr_set = MOUNT_ATTR_IDMAP };

	if (mfd < 0)
		return DETAIL(d, "tmpfs: %s", strerror(-mfd)), mfd == -EACCES ? -EPERM : mfd;
	if (ra_idmap_apply(mfd, &m1, false, "tmpfs", &e) < 0) {
		/* a chrooted process gets no user namespace (EPERM): not the kernel's lack, this process's */
		if (e.err == EPERM && ra_chrooted())
			return DETAIL(d, "first idmap: %s (a chroot: the kernel makes no user namespace for it)",
				      strerror(e.err)), -EPERM;
		return DETAIL(d, "first idmap: %s", strerror(e.err)), absent(-e.err);
	}
	ns = ra_userns_open(&m2, &e);
	if (ns < 0)
		return DETAIL(d, "user namespace: %s", strerror(e.err)), absent(ns);
	a.userns_fd = ns;
	cfd = syscall(__NR_open_tree_attr, mfd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH, &a, sizeof(a));
	if (cfd < 0)
		return DETAIL(d, "open_tree_attr(idmapped, MOUNT_ATTR_IDMAP): %s", strerror(errno)), absent(-errno);
	return 0;
}

static int (*const probes[RA_FEAT_COUNT])(struct rootasm_ctx *, char *) = {
	[ROOTASM_FEAT_MOUNT_API] = p_mount_api,
	[ROOTASM_FEAT_MOUNT_SETATTR] = p_setattr,
	[ROOTASM_FEAT_OPENAT2] = p_openat2,
	[ROOTASM_FEAT_LOOP_CONFIGURE] = p_loop,
	[ROOTASM_FEAT_OVL_FD_LAYERS] = p_ovl_fd,
	[ROOTASM_FEAT_FSCONFIG_OPATH] = p_opath,
	[ROOTASM_FEAT_OPEN_TREE_DETACHED] = p_open_tree_detached,
	[ROOTASM_FEAT_MOVE_DETACHED] = p_move_detached,
	[ROOTASM_FEAT_OVL_DETACHED_LAYERS] = p_ovl_detached,
	[ROOTASM_FEAT_OVL_OVERRIDE_CREDS] = p_override_creds,
	[ROOTASM_FEAT_OVL_CREDS_NOADMIN] = p_creds_noadmin,
	[ROOTASM_FEAT_PIDFD_INFO_EXIT] = p_pidfd_exit,
	[ROOTASM_FEAT_FANOTIFY_MNT] = p_fanotify_mnt,
	[ROOTASM_FEAT_STATMOUNT_IDMAP] = p_statmount_idmap,
	[ROOTASM_FEAT_OPEN_TREE_ATTR] = p_open_tree_attr,
	[ROOTASM_FEAT_IDMAP_IDMAPPED] = p_idmap_idmapped,
};

/* With the context locked: 1 present, 0 absent, -EPERM not permitted to probe. */
static int feature_locked(struct rootasm_ctx *c, enum rootasm_feature f)
{
	if (!c->cache[f])
		ra_probe_cache_load(c);
	if (!c->cache[f]) {
		char *detail = c->detail[f];
		int r;

		c->session++;
		/* a transient answer (a lookup racing a mount elsewhere) is asked again */
		for (int tries = 0; tries < 8; tries++) {
			detail[0] = '\0';
			r = probes[f](c, detail);
			if (r != -EAGAIN && r != -EINTR)
				break;
		}
		c->session--;
		if (r < 0 && !detail[0])
			DETAIL(detail, "%s", strerror(-r));
		RA_TRACE(c, "probe %s: %s%s%s", rootasm_feature_name(f),
			 r == 0 ? "present" : r == -EPERM ? "not permitted" : "absent", detail[0] ? ": " : "", detail);
		/* no definite answer: say absent now, ask again next time */
		if (r != -EAGAIN && r != -EINTR) {
			c->cache[f] = r == 0 ? 1 : r == -EPERM ? -2 : -1;
			c->pdirty = true;
		}
		if (!c->session)
			session_end(c);
		if (r == -EAGAIN || r == -EINTR)
			return 0;
	}
	return c->cache[f] == 1 ? 1 : c->cache[f] == -2 ? -EPERM : 0;
}

int ra_feature(struct rootasm_ctx *ctx, enum rootasm_feature f)
{
	return rootasm_probe_feature(ctx, f, NULL, 0);
}

int rootasm_probe_feature(struct rootasm_ctx *ctx, enum rootasm_feature f, char *detail, size_t size)
{
	struct rootasm_ctx *c = ra_ctx(ctx);
	int r;

	if ((unsigned int)f >= RA_FEAT_COUNT)
		return -EINVAL;
	pthread_mutex_lock(&c->lock);
	r = feature_locked(c, f);
	if (detail && size)
		snprintf(detail, size, "%s", c->detail[f]);
	pthread_mutex_unlock(&c->lock);
	return r;
}

int ra_require(struct rootasm_ctx *ctx, uint64_t needs, struct rootasm_error *e)
{
	struct rootasm_ctx *c = ra_ctx(ctx);
	int r = 0;

	pthread_mutex_lock(&c->lock);
	c->session++;
	for (unsigned int f = 0; f < RA_FEAT_COUNT && !r; f++) {
		int have;

		if (!(needs & (1ULL << f)))
			continue;
		have = feature_locked(c, f);
		if (have > 0)
			continue;
		if (have == -EPERM)
			r = ra_err_kind(e, ROOTASM_ERROR_PERMISSION, EPERM, "not permitted", rootasm_feature_name(f),
					"%s; rootasm could not try it [%s]", rootasm_feature_desc(f), c->detail[f]);
		else if (f == ROOTASM_FEAT_OVL_CREDS_NOADMIN && feature_locked(c, ROOTASM_FEAT_OVL_OVERRIDE_CREDS) > 0)
			r = ra_err_kind(e, ROOTASM_ERROR_UNSUPPORTED, EPERM,
					"kernel refuses override_creds without CAP_SYS_ADMIN", NULL,
					"Linux 6.17+ checks CAP_SYS_ADMIN under the recorded credential; add CAP_SYS_ADMIN to "
					"overlay.override_creds.capabilities, or use Linux 6.15/6.16 or the kernel/ series");
		else
			r = ra_err_kind(e, ROOTASM_ERROR_UNSUPPORTED, EOPNOTSUPP, "kernel lacks", rootasm_feature_name(f),
					"%s; needs Linux 6.15 or the kernel/ series [%s]", rootasm_feature_desc(f), c->detail[f]);
		if (r < 0 && e)
			snprintf(e->feature, sizeof(e->feature), "%s", rootasm_feature_name(f));
	}
	if (!--c->session)
		session_end(c);
	pthread_mutex_unlock(&c->lock);
	return r;
}

int rootasm_probe_refresh(struct rootasm_ctx *ctx)
{
	struct rootasm_ctx *c = ra_ctx(ctx);

	pthread_mutex_lock(&c->lock);
	memset(c->cache, 0, sizeof(c->cache));
	memset(c->detail, 0, sizeof(c->detail));
	/* what is asked from now on comes from the kernel, and is written back */
	c->pcache = RA_PCACHE_IGNORE;
	pthread_mutex_unlock(&c->lock);
	return 0;
}
