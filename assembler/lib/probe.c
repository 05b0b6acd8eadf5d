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
#include <sys/capability.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <linux/loop.h>

#include "mntinfo.h"
#include "probe.h"
#include "sysmnt.h"
#include "util.h"

static const struct {
	const char *name, *desc;
} feats[_ROOTASM_FEAT_MAX] = {
	[ROOTASM_FEAT_MOUNT_API] = { "mount-api", "fsopen/fsconfig/fsmount/move_mount/open_tree (Linux 5.2)" },
	[ROOTASM_FEAT_MOUNT_SETATTR] = { "mount-setattr", "mount_setattr() (Linux 5.12)" },
	[ROOTASM_FEAT_OPENAT2] = { "openat2-in-root", "openat2() with RESOLVE_IN_ROOT (Linux 5.6)" },
	[ROOTASM_FEAT_LOOP_CONFIGURE] = { "loop-configure", "LOOP_CONFIGURE (Linux 5.8)" },
	[ROOTASM_FEAT_OVL_FD_LAYERS] = { "overlay-fd-layers", "overlayfs layers passed by fd with FSCONFIG_SET_FD (Linux 6.13)" },
	[ROOTASM_FEAT_FSCONFIG_OPATH] = { "fsconfig-opath-fd", "FSCONFIG_SET_FD taking O_PATH fds (Linux 6.15)" },
	[ROOTASM_FEAT_OPEN_TREE_DETACHED] = { "open-tree-detached", "open_tree(OPEN_TREE_CLONE) of a detached mount (Linux 6.15)" },
	[ROOTASM_FEAT_MOVE_DETACHED] = { "move-detached-onto-detached", "move_mount of a detached tree onto a detached tree (Linux 6.15)" },
	[ROOTASM_FEAT_OVL_DETACHED_LAYERS] = { "overlay-detached-layers", "overlayfs layers that are detached mounts (Linux 6.15)" },
	[ROOTASM_FEAT_OVL_OVERRIDE_CREDS] = { "overlay-override-creds", "overlayfs override_creds option (Linux 6.15)" },
	[ROOTASM_FEAT_OVL_CREDS_NOADMIN] = { "overlay-override-creds-unprivileged", "override_creds recorded without CAP_SYS_ADMIN over detached layers (Linux 6.15-6.16; refused since 6.17)" },
	[ROOTASM_FEAT_PIDFD_INFO_EXIT] = { "pidfd-info-exit", "PIDFD_GET_INFO with PIDFD_INFO_EXIT (Linux 6.15)" },
	[ROOTASM_FEAT_FANOTIFY_MNT] = { "fanotify-mount-events", "fanotify FAN_MNT_ATTACH/FAN_MNT_DETACH with FAN_MARK_MNTNS (Linux 6.15)" },
	[ROOTASM_FEAT_STATMOUNT_IDMAP] = { "statmount-idmap", "statmount() STATMOUNT_MNT_UIDMAP/GIDMAP (Linux 6.15)" },
	[ROOTASM_FEAT_OPEN_TREE_ATTR] = { "open-tree-attr", "open_tree_attr() (Linux 6.15)" },
	[ROOTASM_FEAT_IDMAP_IDMAPPED] = { "idmap-of-idmapped", "an idmapped mount created from an idmapped mount (Linux 6.15)" },
};

const char *rootasm_feature_name(enum rootasm_feature f)
{
	return f < _ROOTASM_FEAT_MAX ? feats[f].name : "?";
}

const char *rootasm_feature_desc(enum rootasm_feature f)
{
	return f < _ROOTASM_FEAT_MAX ? feats[f].desc : "?";
}

#define DETAIL(buf, ...) snprintf(buf, 160, __VA_ARGS__)

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
 * One throwaway detached tmpfs serves all probes of a session (ra_require()
 * or rootasm_probe()); it is closed, and so dissolved, when the session ends.
 * Each probe that needs directories of its own makes them with a fresh name.
 */
static signed char cache[_ROOTASM_FEAT_MAX];	/* 0 unknown, 1 present, -1 absent */
static char cache_detail[_ROOTASM_FEAT_MAX][160];
static int scratch_fd = -EBADF;
static unsigned int scratch_seq;
static int session;	/* > 0 while ra_require()/rootasm_probe() run several probes */

static int scratch(char *detail)
{
	if (scratch_fd >= 0)
		return scratch_fd;
	scratch_fd = ra_tmpfs_mount(NULL, 0, NULL);
	if (scratch_fd < 0) {
		int r = scratch_fd;

		DETAIL(detail, "fsopen/fsmount tmpfs: %s", strerror(-r));
		scratch_fd = -EBADF;
		return r;
	}
	return scratch_fd;
}

static void scratch_end(void)
{
	close_fdp(&scratch_fd);
	scratch_fd = -EBADF;
}

/* A new directory in the scratch tmpfs; its name is written to @name. */
static int scratch_dir(char *detail, char *name, size_t size)
{
	int mfd = scratch(detail);

	if (mfd < 0)
		return mfd;
	snprintf(name, size, "d%u", scratch_seq++);
	if (mkdirat(mfd, name, 0755) < 0) {
		DETAIL(detail, "mkdir in tmpfs: %s", strerror(errno));
		return -errno;
	}
	return mfd;
}

static int p_mount_api(char *d)
{
	_cleanup_close_ int cfd = -EBADF;
	int mfd = scratch(d);

	if (mfd < 0)
		return mfd;
	cfd = open_tree(mfd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	/* EINVAL here only means "detached source": open_tree itself exists */
	if (cfd < 0 && errno == ENOSYS)
		return DETAIL(d, "open_tree: %s", strerror(errno)), -errno;
	return 0;
}

static int p_setattr(char *d)
{
	int mfd = scratch(d);
	struct mount_attr a = { .attr_set = MOUNT_ATTR_NOSUID };

	if (mfd < 0)
		return mfd;
	if (mount_setattr(mfd, "", AT_EMPTY_PATH, &a, sizeof(a)) < 0)
		return DETAIL(d, "mount_setattr: %s", strerror(errno)), -errno;
	return 0;
}

static int p_openat2(char *d)
{
	_cleanup_close_ int fd = -EBADF;
	struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT };
	char name[16];
	int mfd = scratch_dir(d, name, sizeof(name));

	if (mfd < 0)
		return mfd;
	/* no "..": a lookup with ".." in it may say EAGAIN when any mount changes */
	fd = sys_openat2(mfd, name, &how);
	if (fd < 0)
		return DETAIL(d, "openat2: %s", strerror(errno)), -errno;
	return 0;
}

static int p_loop(char *d)
{
	_cleanup_close_ int ctl = -EBADF, lfd = -EBADF;
	struct loop_config cfg = { .fd = (unsigned int)-1 };
	char dev[32];
	int nr;

	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		return DETAIL(d, "/dev/loop-control: %s", strerror(errno)), -errno;
	nr = ioctl(ctl, LOOP_CTL_GET_FREE);
	if (nr < 0)
		return DETAIL(d, "LOOP_CTL_GET_FREE: %s", strerror(errno)), -errno;
	snprintf(dev, sizeof(dev), "/dev/loop%d", nr);
	lfd = open(dev, O_RDONLY | O_CLOEXEC);
	if (lfd < 0)
		return DETAIL(d, "%s: %s", dev, strerror(errno)), -errno;
	/* With an invalid backing fd a kernel that knows the ioctl says EBADF. */
	if (ioctl(lfd, LOOP_CONFIGURE, &cfg) == 0 || errno == EBADF || errno == EBUSY)
		return 0;
	return DETAIL(d, "LOOP_CONFIGURE: %s", strerror(errno)), -errno;
}

/* lowerdir+ by fd: parsing happens at fsconfig time, so no create is needed. */
static int p_fd_layer(char *d, int oflags)
{
	_cleanup_close_ int fsfd = -EBADF, lfd = -EBADF;
	char name[16];
	int mfd = scratch_dir(d, name, sizeof(name));

	if (mfd < 0)
		return mfd;
	lfd = openat(mfd, name, oflags | O_DIRECTORY | O_CLOEXEC);
	fsfd = fsopen("overlay", FSOPEN_CLOEXEC);
	if (lfd < 0 || fsfd < 0)
		return DETAIL(d, "fsopen overlay: %s", strerror(errno)), -errno;
	if (fsconfig(fsfd, FSCONFIG_SET_FD, "lowerdir+", NULL, lfd) < 0)
		return fs_fail(d, fsfd, "fsconfig lowerdir+ fd");
	return 0;
}

static int p_ovl_fd(char *d)
{
	return p_fd_layer(d, O_RDONLY);
}

static int p_opath(char *d)
{
	return p_fd_layer(d, O_PATH);
}

static int p_open_tree_detached(char *d)
{
	_cleanup_close_ int cfd = -EBADF;
	int mfd = scratch(d);

	if (mfd < 0)
		return mfd;
	cfd = open_tree(mfd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (cfd < 0)
		return DETAIL(d, "open_tree(detached): %s", strerror(errno)), -errno;
	return 0;
}

static int p_move_detached(char *d)
{
	_cleanup_close_ int b = -EBADF;
	char name[16];
	int a = scratch_dir(d, name, sizeof(name));

	if (a < 0)
		return a;
	b = ra_tmpfs_mount(NULL, 0, NULL);
	if (b < 0)
		return DETAIL(d, "tmpfs: %s", strerror(-b)), b;
	if (move_mount(b, "", a, name, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return DETAIL(d, "move_mount(detached, detached): %s", strerror(errno)), -errno;
	return 0;
}

/* An overlay whose two lowers and upper live on a detached tmpfs; @creds optional. */
static int overlay_on_detached(char *d, const struct ra_cred_spec *creds)
{
	_cleanup_close_ int fsfd = -EBADF, root = -EBADF;
	static const char *const keys[] = { "lowerdir+", "lowerdir+", "upperdir", "workdir" };
	char dirs[4][16];
	struct rootasm_error e;
	int mfd = -EBADF;

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		mfd = scratch_dir(d, dirs[i], sizeof(dirs[i]));
		if (mfd < 0)
			return mfd;
	}
	fsfd = fsopen("overlay", FSOPEN_CLOEXEC);
	if (fsfd < 0)
		return DETAIL(d, "fsopen overlay: %s", strerror(errno)), -errno;
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		_cleanup_close_ int fd = openat(mfd, dirs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (fsconfig(fsfd, FSCONFIG_SET_FD, keys[i], NULL, fd) < 0)
			return DETAIL(d, "fsconfig %s: %s", keys[i], strerror(errno)), -errno;
	}
	if (creds && ra_set_override_creds(fsfd, creds, &e) < 0)
		return DETAIL(d, "%s: %s%s%s", e.op, strerror(e.err), *e.msg ? ": " : "", e.msg), -e.err;
	if (fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return fs_fail(d, fsfd, "create");
	root = fsmount(fsfd, FSMOUNT_CLOEXEC, 0);
	if (root < 0)
		return DETAIL(d, "fsmount overlay: %s", strerror(errno)), -errno;
	return 0;
}

static int p_ovl_detached(char *d)
{
	return overlay_on_detached(d, NULL);
}

static int p_override_creds(char *d)
{
	_cleanup_close_ int fsfd = fsopen("overlay", FSOPEN_CLOEXEC);

	if (fsfd < 0)
		return DETAIL(d, "fsopen overlay: %s", strerror(errno)), -errno;
	if (fsconfig(fsfd, FSCONFIG_SET_FLAG, "override_creds", NULL, 0) < 0)
		return fs_fail(d, fsfd, "fsconfig override_creds");
	return 0;
}

static int p_creds_noadmin(char *d)
{
	struct ra_cred_spec c = { .uid = 0, .gid = 0 };

	cap_t cur = cap_get_proc();

	/* What we hold, less CAP_SYS_ADMIN (and CAP_MKNOD, as rootasm's tests use) */
	for (cap_value_t v = 0; cur && v < 64 && cap_valid(v); v++) {
		cap_flag_value_t on = CAP_CLEAR;

		if (cap_get_flag(cur, v, CAP_PERMITTED, &on) == 0 && on == CAP_SET)
			c.caps |= 1ULL << v;
	}
	cap_free(cur);
	c.caps &= ~((1ULL << CAP_SYS_ADMIN) | (1ULL << CAP_MKNOD));
	/* the cached answers: these two have usually been probed already */
	if (!ra_feature(ROOTASM_FEAT_OVL_OVERRIDE_CREDS))
		return DETAIL(d, "%s", cache_detail[ROOTASM_FEAT_OVL_OVERRIDE_CREDS]), -EOPNOTSUPP;
	if (!ra_feature(ROOTASM_FEAT_OVL_DETACHED_LAYERS))
		return DETAIL(d, "%s", cache_detail[ROOTASM_FEAT_OVL_DETACHED_LAYERS]), -EOPNOTSUPP;
	return overlay_on_detached(d, &c);
}

static int p_pidfd_exit(char *d)
{
	_cleanup_close_ int pidfd = -EBADF;
	struct ra_pidfd_info info = { .mask = PIDFD_INFO_EXIT };
	siginfo_t si;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return DETAIL(d, "fork: %s", strerror(errno)), -errno;
	if (pid == 0)
		_exit(42);
	pidfd = sys_pidfd_open(pid, 0);
	while (waitid(P_PID, pid, &si, WEXITED) < 0 && errno == EINTR)
		;
	if (pidfd < 0)
		return DETAIL(d, "pidfd_open: %s", strerror(errno)), -errno;
	if (ioctl(pidfd, PIDFD_GET_INFO, &info) < 0)
		return DETAIL(d, "PIDFD_GET_INFO: %s", strerror(errno)), -errno;
	if (!(info.mask & PIDFD_INFO_EXIT))
		return DETAIL(d, "PIDFD_GET_INFO: no PIDFD_INFO_EXIT after reaping"), -EOPNOTSUPP;
	if (!WIFEXITED(info.exit_code) || WEXITSTATUS(info.exit_code) != 42)
		return DETAIL(d, "PIDFD_INFO_EXIT: exit_code %#x, expected 42", info.exit_code), -EIO;
	return 0;
}

static int p_fanotify_mnt(char *d)
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

static int p_statmount_idmap(char *d)
{
	struct ra_statmount *sm = NULL;
	uint64_t id;
	int r = ra_mount_id(AT_FDCWD, "/", &id);
	bool ok;

	if (r < 0)
		return DETAIL(d, "statx STATX_MNT_ID_UNIQUE: %s", strerror(-r)), r;
	r = ra_statmount(id, RA_STATMOUNT_SUPPORTED_MASK, 0, &sm);
	if (r < 0)
		return DETAIL(d, "statmount: %s", strerror(-r)), r;
	ok = (sm->mask & RA_STATMOUNT_SUPPORTED_MASK) &&
	     (sm->supported_mask & (RA_STATMOUNT_MNT_UIDMAP | RA_STATMOUNT_MNT_GIDMAP)) ==
		     (RA_STATMOUNT_MNT_UIDMAP | RA_STATMOUNT_MNT_GIDMAP);
	free(sm);
	if (!ok)
		return DETAIL(d, "statmount does not report STATMOUNT_MNT_UIDMAP/GIDMAP as supported"), -EOPNOTSUPP;
	return 0;
}

static const struct ra_idrange probe_range = { 0, 100000, 65536 }, probe_range2 = { 0, 200000, 65536 };

static int p_open_tree_attr(char *d)
{
	_cleanup_close_ int cfd = -EBADF;
	struct mount_attr a = { .attr_set = MOUNT_ATTR_NOSUID };
	int mfd = scratch(d);

	if (mfd < 0)
		return mfd;
	cfd = syscall(__NR_open_tree_attr, mfd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH, &a, sizeof(a));
	if (cfd < 0)
		return DETAIL(d, "open_tree_attr: %s", strerror(errno)), -errno;
	return 0;
}

static int p_idmap_idmapped(char *d)
{
	struct ra_idmap m1 = { .set = true, .uids = (struct ra_idrange *)&probe_range, .nuids = 1,
			       .gids = (struct ra_idrange *)&probe_range, .ngids = 1 };
	struct ra_idmap m2 = { .set = true, .uids = (struct ra_idrange *)&probe_range2, .nuids = 1,
			       .gids = (struct ra_idrange *)&probe_range2, .ngids = 1 };
	_cleanup_close_ int mfd = ra_tmpfs_mount(NULL, 0, NULL), ns = -EBADF, cfd = -EBADF;
	struct rootasm_error e;
	struct mount_attr a = { .attr_set = MOUNT_ATTR_IDMAP };

	if (mfd < 0)
		return DETAIL(d, "tmpfs: %s", strerror(-mfd)), mfd;
	if (ra_idmap_apply(mfd, &m1, false, "tmpfs", &e) < 0)
		return DETAIL(d, "first idmap: %s", strerror(e.err)), -e.err;
	ns = ra_userns_open(&m2, &e);
	if (ns < 0)
		return DETAIL(d, "user namespace: %s", strerror(e.err)), ns;
	a.userns_fd = ns;
	cfd = syscall(__NR_open_tree_attr, mfd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH, &a, sizeof(a));
	if (cfd < 0)
		return DETAIL(d, "open_tree_attr(idmapped, MOUNT_ATTR_IDMAP): %s", strerror(errno)), -errno;
	return 0;
}

static int (*const probes[_ROOTASM_FEAT_MAX])(char *) = {
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


bool ra_feature(enum rootasm_feature f)
{
	if (!cache[f]) {
		int r;

		/* a transient answer (a lookup racing a mount elsewhere) is asked again */
		for (int tries = 0; tries < 8; tries++) {
			cache_detail[f][0] = '\0';
			r = probes[f](cache_detail[f]);
			if (r != -EAGAIN && r != -EINTR)
				break;
		}
		if (r < 0 && !cache_detail[f][0])
			DETAIL(cache_detail[f], "%s", strerror(-r));
		if (r == -EAGAIN || r == -EINTR) {
			/* no definite answer: say absent now, ask again next time */
			if (!session)
				scratch_end();
			return false;
		}
		cache[f] = r < 0 ? -1 : 1;
		if (!session)
			scratch_end();
	}
	return cache[f] > 0;
}

const char *ra_feature_detail(enum rootasm_feature f)
{
	return cache_detail[f];
}

int rootasm_probe(struct rootasm_probe *ret)
{
	session++;
	for (int f = 0; f < _ROOTASM_FEAT_MAX; f++) {
		ret->present[f] = ra_feature(f);
		snprintf(ret->detail[f], sizeof(ret->detail[f]), "%s", cache_detail[f]);
	}
	if (!--session)
		scratch_end();
	return 0;
}

int ra_require(unsigned int needs, struct rootasm_error *e)
{
	int r = 0;

	session++;
	for (int f = 0; f < _ROOTASM_FEAT_MAX && !r; f++) {
		if (!(needs & (1u << f)) || ra_feature(f))
			continue;
		if (f == ROOTASM_FEAT_OVL_CREDS_NOADMIN && ra_feature(ROOTASM_FEAT_OVL_OVERRIDE_CREDS))
			r = ra_err(e, EPERM, -EBADF, "kernel refuses override_creds without CAP_SYS_ADMIN", NULL,
				   "Linux 6.17+ checks CAP_SYS_ADMIN under the recorded credential; add CAP_SYS_ADMIN to "
				   "overlay.override_creds.capabilities, or use Linux 6.15/6.16 or the kernel/ series");
		else
			r = ra_err(e, EOPNOTSUPP, -EBADF, "kernel lacks", feats[f].name,
				   "%s; needs Linux 6.15 or the kernel/ series [%s]", feats[f].desc, cache_detail[f]);
	}
	if (!--session)
		scratch_end();
	return r;
}
