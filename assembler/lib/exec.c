// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * exec: the tree as the root of a sandboxed command.
 *
 *   parent  everything that allocates, before the clone: the environment, the
 *           detached clones of the host's /dev/null
 *           for the /proc masks, the socketpair that brings a pty's master back;
 *           then clone3(CLONE_NEWNS | NEWPID | NEWIPC | NEWUTS | NEWCGROUP [| NEWNET])
 *           through child.c (pidfd, death signal, report pipe)
 *   init    pid 1 of the new pid namespace; system calls only:
 *             setsid: a session of its own, without a controlling terminal (the
 *             caller's terminal takes no TIOCSTI from it: bubblewrap's CVE-2017-5226)
 *             "/" private; move_mount(tree) over "/"; fchdir; pivot_root(".", ".");
 *             umount2(".", MNT_DETACH) (chroot where "/" has no parent: an initramfs)
 *             every mount of the tree nodev (a device node of a layer opens nothing)
 *             /proc (nosuid, nodev, noexec) with the OCI masked paths (a clone of the
 *             host's /dev/null on files, an empty read-only tmpfs on directories) and
 *             read-only paths (read-only binds of themselves)
 *             /dev: a tmpfs with null zero full random urandom tty, devpts, shm,
 *             mqueue, when the tree has no usable /dev/null (always, but privileged:
 *             the tree is nodev)
 *             hostname; loopback up in a new network namespace
 *             the bounding set, groups, gid, uid; with a tty: a pty of /dev/ptmx (the
 *             container's devpts), its size the caller's, its master sent back, its
 *             slave the init's fds 0-2; capabilities (and ambient ones),
 *             no_new_privs, not dumpable, the seccomp program (made at build time by
 *             tools/seccomp-gen.c): for the init too
 *             the report "ready"; every fd >= 3 closed but the preserved ones;
 *             fork CMD; pass signals on; reap; exit with CMD's status
 *   CMD     signals unblocked, the preserved fds inherited; with a tty: setsid and
 *           the pty as its controlling terminal; execve (PATH searched
 *           by hand into a stack buffer: nothing allocates after the clone)
 *
 * The container dies with the thread that started it (PR_SET_PDEATHSIG on the
 * init; killing pid 1 of a pid namespace kills all of it).
 */
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/uio.h>
#include <termios.h>
#include <linux/capability.h>
#include <linux/seccomp.h>

#include "child.h"
#include "context.h"
#include "exec.h"
#include "layout.h"
#include "passwd.h"
#include "proto.h"
#include "util.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

static const int fwd_signals[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT };

/* OCI's maskedPaths and readonlyPaths (crun spec), the /proc part: rootasm mounts no /sys. */
static const char *const masked_files[] = {
	"/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats",
	"/proc/sched_debug",
};
static const char *const masked_dirs[] = { "/proc/acpi", "/proc/asound", "/proc/scsi" };
static const char *const readonly_paths[] = { "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger" };

#define NMASK (sizeof(masked_files) / sizeof(masked_files[0]))

static const char *const steps[] = {
	"create its namespaces", "start a session", "make / private", "attach the tree over /", "pivot_root", "make the tree nodev",
	"mount /proc", "mask /proc paths", "make /proc paths read-only", "mount /dev", "set the hostname",
	"bring up loopback", "receive the tree", "change to the working directory", "drop the bounding set", "set groups", "set gid", "set uid", "open /dev/ptmx",
	"set capabilities", "set ambient capabilities", "set no_new_privs", "make the init not dumpable",
	"load the seccomp profile", "close fds", "fork the command", NULL,
};

enum {
	S_UNSHARE, S_SESSION, S_PRIVATE, S_ATTACH, S_PIVOT, S_NODEV, S_PROC, S_MASK, S_RO, S_DEV, S_HOSTNAME, S_LO, S_TREE, S_WORKDIR, S_BOUNDING,
	S_GROUPS, S_GID, S_UID, S_TTY, S_CAPS, S_AMBIENT, S_NNP, S_DUMPABLE, S_SECCOMP, S_FDS, S_FORK,
};

/* What the init needs, made by the parent: the init reads it from its copy of our memory. */
struct spec {
	int tree_fd;			/* received on tree_sock */
	int tree_sock;			/* the init's end: the tree and the user come on it */
	int home_slot;			/* envp's HOME from the tree's /etc/passwd, or -1 */
	char *const *argv;
	char **envp;
	const char *path;		/* PATH for the search, from envp */
	const char *hostname;
	const char *workdir;		/* NULL: "/" */
	bool privileged, netns, user_set, tty;
	uid_t uid;
	gid_t gid;
	const gid_t *groups;
	size_t ngroups;
	uint64_t caps;
	unsigned int preserve_fds;
	bool deny_mount_api;
	int null_clones[NMASK];		/* detached clones of the host's /dev/null */
	int tty_sock;			/* tty: the init's end of the socketpair for the master */
	sigset_t fwd;			/* the signals the init passes on, and SIGCHLD */
};

/*
 * What the parent sends the init with the tree (SCM_RIGHTS): the layout's
 * exec.user as the tree's /etc/passwd and /etc/group resolve it, which only
 * the tree can say.
 */
struct tree_msg {
	bool resolved;
	uid_t uid;
	gid_t gid;
	uint32_t ngroups;
	gid_t groups[RA_USER_MAX_GROUPS];
	char home[sizeof(((struct ra_user *)0)->home) + 8];	/* "HOME=...", "" when passwd has none */
};

/* ------------------------------------------------------------------- init */

static int errno_r(void)
{
	return -errno;
}

/* Write @parts to stderr in one write(): the init cannot use stdio. */
static void say(const char *a, const char *b, const char *c)
{
	char buf[512];
	size_t n = 0;

	for (const char *const *p = (const char *const[]){ "rootasm: exec: ", a, b, c, "\n", NULL }; *p; p++)
		for (const char *s = *p; *s && n < sizeof(buf) - 1; s++)
			buf[n++] = *s;
	(void)!write(2, buf, n);
}

static int mount_at(int mfd, const char *where)
{
	int r = move_mount(mfd, "", AT_FDCWD, where, MOVE_MOUNT_F_EMPTY_PATH);

	return r < 0 ? -errno : 0;
}

/* A fresh detached mount of @fs with @opts ("key=value" pairs or flags, NULL-terminated). */
static int fresh(const char *fs, const char *const *opts, unsigned int attrs)
{
	int fsfd = fsopen(fs, FSOPEN_CLOEXEC), mfd;

	if (fsfd < 0)
		return -errno;
	for (; opts && *opts; opts++) {
		char key[32];
		const char *eq = strchr(*opts, '=');
		size_t kl = eq ? (size_t)(eq - *opts) : strlen(*opts);
		int r;

		if (kl >= sizeof(key)) {
			close(fsfd);
			return -EINVAL;
		}
		memcpy(key, *opts, kl);
		key[kl] = '\0';
		r = eq ? fsconfig(fsfd, FSCONFIG_SET_STRING, key, eq + 1, 0) : fsconfig(fsfd, FSCONFIG_SET_FLAG, key, NULL, 0);
		if (r < 0) {
			r = -errno;
			close(fsfd);
			return r;
		}
	}
	if (fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		int r = -errno;

		close(fsfd);
		return r;
	}
	mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, attrs);
	mfd = mfd < 0 ? -errno : mfd;
	close(fsfd);
	return mfd;
}

/*
 * The mounts the sandbox adds to the tree, made before the tree arrives
 * (detached; -errno when one could not be made, reported where it is used):
 * /proc, the /proc mask directories, and a minimal /dev as crun's default
 * config has it (its tmpfs already filled), with its pts, shm and mqueue.
 */
struct premade {
	int proc;
	int dir_masks[ARRAY_SIZE(masked_dirs)];	/* a tmpfs over each of masked_dirs[] */
	int dev, pts, shm, mqueue;
};

static void premade_init(struct premade *m)
{
	m->proc = m->dev = m->pts = m->shm = m->mqueue = -EBADF;
	for (size_t i = 0; i < ARRAY_SIZE(m->dir_masks); i++)
		m->dir_masks[i] = -EBADF;
}

static void premade_close(struct premade *m)
{
	close_fdp(&m->proc);
	for (size_t i = 0; i < ARRAY_SIZE(m->dir_masks); i++)
		close_fdp(&m->dir_masks[i]);
	close_fdp(&m->dev);
	close_fdp(&m->pts);
	close_fdp(&m->shm);
	close_fdp(&m->mqueue);
	premade_init(m);
}

/* The tmpfs of /dev, filled: its nodes, links and mount points. */
static int fresh_dev(void)
{
	static const struct {
		const char *name;
		unsigned int maj, min;
	} nodes[] = {
		{ "null", 1, 3 }, { "zero", 1, 5 }, { "full", 1, 7 }, { "random", 1, 8 }, { "urandom", 1, 9 },
		{ "tty", 5, 0 },
	};
	static const char *const links[][2] = {
		{ "/proc/self/fd", "fd" }, { "/proc/self/fd/0", "stdin" }, { "/proc/self/fd/1", "stdout" },
		{ "/proc/self/fd/2", "stderr" }, { "pts/ptmx", "ptmx" },
	};
	int dfd = fresh("tmpfs", (const char *const[]){ "mode=755", "size=65536k", NULL },
			MOUNT_ATTR_NOSUID | MOUNT_ATTR_STRICTATIME), r = 0;

	if (dfd < 0)
		return dfd;
	for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]) && r == 0; i++)
		if (mknodat(dfd, nodes[i].name, S_IFCHR | 0666, makedev(nodes[i].maj, nodes[i].min)) < 0 ||
		    fchmodat(dfd, nodes[i].name, 0666, 0) < 0)
			r = -errno;
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]) && r == 0; i++)
		if (symlinkat(links[i][0], dfd, links[i][1]) < 0)
			r = -errno;
	if (r == 0 && (mkdirat(dfd, "pts", 0755) < 0 || mkdirat(dfd, "shm", 01777) < 0 ||
		       mkdirat(dfd, "mqueue", 0755) < 0))
		r = -errno;
	if (r < 0) {
		close(dfd);
		return r;
	}
	return dfd;
}

static void premake(struct premade *m, bool privileged)
{
	m->proc = fresh("proc", NULL, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	for (size_t i = 0; !privileged && i < ARRAY_SIZE(m->dir_masks); i++)
		m->dir_masks[i] = fresh("tmpfs", (const char *const[]){ "size=0", "mode=555", NULL },
					  MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	m->dev = fresh_dev();
	m->pts = fresh("devpts", (const char *const[]){ "newinstance", "ptmxmode=0666", "mode=0620", NULL },
		       MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
	m->shm = fresh("tmpfs", (const char *const[]){ "mode=1777", "size=65536k", NULL },
		       MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	/* POSIX message queues: where the kernel has them (CONFIG_POSIX_MQUEUE) */
	m->mqueue = fresh("mqueue", NULL, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
}

/* A premade mount moved to @where (an error it had is returned now). */
static int mount_premade(int *mfd, const char *where)
{
	int r = *mfd < 0 ? *mfd : mount_at(*mfd, where);

	close_fdp(mfd);
	*mfd = -EBADF;
	return r;
}

static int mask_proc(struct spec *s, struct premade *m)
{
	struct stat st;
	int r;

	for (size_t i = 0; i < NMASK; i++) {
		if (stat(masked_files[i], &st) < 0)
			continue;
		r = mount_at(s->null_clones[i], masked_files[i]);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < sizeof(masked_dirs) / sizeof(masked_dirs[0]); i++) {
		if (stat(masked_dirs[i], &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		r = mount_premade(&m->dir_masks[i], masked_dirs[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

static int readonly_proc(void)
{
	struct mount_attr ro = {
		.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
	};

	for (size_t i = 0; i < sizeof(readonly_paths) / sizeof(readonly_paths[0]); i++) {
		int fd = open_tree(AT_FDCWD, readonly_paths[i], OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE), r;

		if (fd < 0 && errno == ENOENT)
			continue;
		if (fd < 0)
			return -errno;
		r = mount_setattr(fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &ro, sizeof(ro)) < 0 ? -errno : 0;
		if (r == 0)
			r = mount_at(fd, readonly_paths[i]);
		close(fd);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The tree's /dev/null works: a character device 1:3 that opens (a nodev mount refuses). */
static bool dev_usable(void)
{
	struct stat st;
	int fd;

	if (stat("/dev/null", &st) < 0 || !S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3))
		return false;
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* The minimal /dev, attached. */
static int make_dev(struct premade *m)
{
	int r;

	if (mkdir("/dev", 0755) < 0 && errno != EEXIST)
		return -errno;
	r = mount_premade(&m->dev, "/dev");
	if (r == 0)
		r = mount_premade(&m->pts, "/dev/pts");
	if (r == 0)
		r = mount_premade(&m->shm, "/dev/shm");
	if (r == 0)
		r = m->mqueue == -ENODEV ? 0 : mount_premade(&m->mqueue, "/dev/mqueue");
	return r;
}

/*
 * A pty of the container's /dev/ptmx, its window size that of our fd 0 (the
 * caller's) when that is a terminal: the master goes to the parent over @sock,
 * the slave becomes fds 0-2 (the command's, and the init's own).
 */
static int open_tty(int sock)
{
	struct winsize ws;
	int master, slave, unlock = 0, r = 0;

	master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (master < 0)
		return -errno;
	if (ioctl(master, TIOCSPTLCK, &unlock) < 0 ||
	    (slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) {
		r = -errno;
		close(master);
		return r;
	}
	if (ioctl(0, TIOCGWINSZ, &ws) == 0)
		ioctl(master, TIOCSWINSZ, &ws);
	r = ra_send_with_fd(sock, "t", 1, master, 0);
	close(master);
	for (int fd = 0; r == 0 && fd < 3; fd++)
		if (dup2(slave, fd) < 0)
			r = -errno;
	close(slave);
	return r;
}

static int loopback_up(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r = 0;

	if (fd < 0)
		return -errno;
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		r = -errno;
	ifr.ifr_flags |= IFF_UP;
	if (r == 0 && ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		r = -errno;
	close(fd);
	return r;
}

static int set_caps(uint64_t caps)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {
		{ .effective = (uint32_t)caps, .permitted = (uint32_t)caps, .inheritable = (uint32_t)caps },
		{ .effective = (uint32_t)(caps >> 32), .permitted = (uint32_t)(caps >> 32),
		  .inheritable = (uint32_t)(caps >> 32) },
	};

	return syscall(SYS_capset, &h, d) < 0 ? -errno : 0;
}

/* execve() @argv[0], searched in @s->path when it has no '/': 126 cannot run, 127 not found. */
static void __attribute__((noreturn)) run_cmd(struct spec *s)
{
	const char *name = s->argv[0], *p = s->path;
	char buf[4096];
	int err = ENOENT;

	if (strchr(name, '/')) {
		execve(name, s->argv, s->envp);
		err = errno;
	} else {
		while (p && *p) {
			const char *end = strchr(p, ':');
			size_t dl = end ? (size_t)(end - p) : strlen(p), nl = strlen(name);

			if (dl + 1 + nl < sizeof(buf)) {
				memcpy(buf, dl ? p : ".", dl ? dl : 1);
				dl = dl ? dl : 1;
				buf[dl] = '/';
				memcpy(buf + dl + 1, name, nl + 1);
				execve(buf, s->argv, s->envp);
				if (errno != ENOENT && errno != ENOTDIR)
					err = errno;
			}
			p = end ? end + 1 : NULL;
		}
	}
	say(name, ": ", strerrordesc_np(err) ? strerrordesc_np(err) : "cannot run");
	_exit(err == ENOENT ? 127 : 126);
}

/* pid 1: pass signals on to @cmd, reap everything, end with @cmd's status. */
static void __attribute__((noreturn)) init_loop(struct spec *s, pid_t cmd)
{
	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(&s->fwd, &si);

		if (sig < 0)
			continue;
		if (sig != SIGCHLD) {
			/*
			 * No terminal sends the init anything (its session has
			 * none; a --tty's is CMD's session): every signal here was
			 * sent by a process, rootasm's forwarding included.
			 */
			kill(cmd, sig);
			continue;
		}
		for (;;) {
			int st;
			pid_t p = waitpid(-1, &st, WNOHANG);

			if (p <= 0)
				break;
			if (p == cmd)
				_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		}
	}
}

/* Wait for the tree: the fd and what it says of the user; -ECANCELED when the parent gave up (closed its end). */
static int recv_tree(struct spec *s, struct tree_msg *m)
{
	int r = ra_recv_with_fd(s->tree_sock, m, sizeof(*m), &s->tree_fd, 0);

	if (r < 0)
		return r;
	if (m->ngroups > RA_USER_MAX_GROUPS)
		return -EBADMSG;
	close(s->tree_sock);
	if (m->resolved) {
		s->user_set = true;
		s->uid = m->uid;
		s->gid = m->gid;
		s->groups = m->groups;
		s->ngroups = m->ngroups;
		m->home[sizeof(m->home) - 1] = '\0';
		if (s->home_slot >= 0 && m->home[0])
			s->envp[s->home_slot] = m->home;
	}
	return 0;
}

static int init_main(void *arg, int *step)
{
	struct spec *s = arg;
	struct tree_msg m;	/* lives as long as the init: s->groups and envp may point into it */
	struct premade pm;
	struct stat st;
	pid_t cmd;
	int r;

	/*
	 * Its namespaces but the pid and mount ones (made by clone3, so that it
	 * is pid 1 and its mount table is ours from before the assembly), made
	 * here while the parent assembles: a network namespace costs ~0.5 ms.
	 * mqueue and /proc below are the new ones'.
	 */
	*step = S_UNSHARE;
	if (unshare(CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP | (s->netns ? CLONE_NEWNET : 0)) < 0)
		return errno_r();
	*step = S_SESSION;
	if (setsid() < 0)
		return errno_r();
	*step = S_PRIVATE;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return errno_r();
	/* what needs no tree, while the parent assembles it */
	*step = S_HOSTNAME;
	if (sethostname(s->hostname, strlen(s->hostname)) < 0)
		return errno_r();
	*step = S_LO;
	if (s->netns && (r = loopback_up()) < 0)
		return r;
	/* /proc and /dev, detached; a failure is reported at the step that attaches it */
	premade_init(&pm);
	premake(&pm, s->privileged);
	*step = S_TREE;
	if ((r = recv_tree(s, &m)) < 0)
		return r;
	*step = S_ATTACH;
	if (move_mount(s->tree_fd, "", AT_FDCWD, "/", MOVE_MOUNT_F_EMPTY_PATH) < 0 || fchdir(s->tree_fd) < 0)
		return errno_r();
	close(s->tree_fd);
	*step = S_PIVOT;
	if (syscall(SYS_pivot_root, ".", ".") == 0) {
		if (umount2(".", MNT_DETACH) < 0)
			return errno_r();
	} else if (errno != EINVAL || chroot(".") < 0) {
		/* pivot_root refuses a root without a parent (an initramfs): chroot there */
		return errno_r();
	}
	if (chdir("/") < 0)
		return errno_r();
	if (!s->privileged) {
		/* the tree's device nodes (an image keeps them) open nothing; /dev below is ours */
		struct mount_attr nodev = { .attr_set = MOUNT_ATTR_NODEV };

		*step = S_NODEV;
		if (mount_setattr(AT_FDCWD, "/", AT_RECURSIVE, &nodev, sizeof(nodev)) < 0)
			return errno_r();
	}
	*step = S_PROC;
	if (stat("/proc", &st) == 0 && S_ISDIR(st.st_mode)) {
		r = mount_premade(&pm.proc, "/proc");
		if (r < 0)
			return r;
		if (!s->privileged) {
			*step = S_MASK;
			if ((r = mask_proc(s, &pm)) < 0)
				return r;
			*step = S_RO;
			if ((r = readonly_proc()) < 0)
				return r;
		}
	}
	for (size_t i = 0; i < NMASK; i++)
		close(s->null_clones[i]);
	*step = S_DEV;
	if (!dev_usable()) {
		r = make_dev(&pm);
		if (r < 0)
			return r;
	}
	premade_close(&pm);	/* what the tree did not need */
	/* as root still: the image's WorkingDir, whoever may enter it (as runc, which tries before and after) */
	*step = S_WORKDIR;
	if (s->workdir && chdir(s->workdir) < 0)
		return errno_r();
	if (!s->privileged) {
		*step = S_BOUNDING;
		for (unsigned int c = 0; c < 64; c++)
			if (!(s->caps & (1ULL << c)) && prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
				return errno_r();
	}
	*step = S_GROUPS;
	if (syscall(SYS_setgroups, s->ngroups, s->groups) < 0)
		return errno_r();
	if (s->user_set) {
		if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
			return errno_r();
		*step = S_GID;
		if (syscall(SYS_setresgid, s->gid, s->gid, s->gid) < 0)
			return errno_r();
		*step = S_UID;
		if (syscall(SYS_setresuid, s->uid, s->uid, s->uid) < 0)
			return errno_r();
	}
	if (s->tty) {
		/* as the command's uid: the pty is its own */
		*step = S_TTY;
		if ((r = open_tty(s->tty_sock)) < 0)
			return r;
		close(s->tty_sock);
	}
	if (!s->privileged) {
		*step = S_CAPS;
		if (set_caps(s->caps) < 0)
			return errno_r();
		*step = S_AMBIENT;
		/* a command that is not root keeps its capabilities across execve only as ambient ones */
		for (unsigned int c = 0; c < 64; c++)
			if ((s->caps & (1ULL << c)) && prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, c, 0, 0) < 0)
				return errno_r();
		*step = S_NNP;
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			return errno_r();
	}
	*step = S_DUMPABLE;
	/* nobody in the container attaches to pid 1 (ptrace is also in the profile) */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return errno_r();
	if (!s->privileged) {
		struct sock_fprog fp = {
			.len = s->deny_mount_api ? ra_profile_deny_mount_len : ra_profile_allow_mount_len,
			.filter = (struct sock_filter *)(s->deny_mount_api ? ra_profile_deny_mount : ra_profile_allow_mount),
		};

		*step = S_SECCOMP;
		if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp, 0, 0) < 0)
			return errno_r();
	}
	/* set up: tell the parent; from here on a failure is the command's exit status */
	ra_child_report_ready(S_FDS);
	*step = S_FDS;
	if (syscall(SYS_close_range, 3 + s->preserve_fds, ~0U, 0) < 0) {
		say("close fds: ", strerrordesc_np(errno), "");
		_exit(125);
	}
	cmd = syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, 0);
	if (cmd < 0) {
		say("fork: ", strerrordesc_np(errno), "");
		_exit(125);
	}
	if (cmd == 0) {
		sigset_t none;

		for (unsigned int fd = 3; fd < 3 + s->preserve_fds; fd++)
			fcntl(fd, F_SETFD, 0);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* its pty: a session of its own, the pty its controlling terminal */
		if (s->tty && (setsid() < 0 || ioctl(0, TIOCSCTTY, 0) < 0)) {
			say("controlling terminal: ", strerrordesc_np(errno), "");
			_exit(125);
		}
		run_cmd(s);
	}
	/* the init keeps nothing of the caller's */
	syscall(SYS_close_range, 3, ~0U, 0);
	init_loop(s, cmd);
}

/* ----------------------------------------------------------------- parent */

/* The pty master the init sent on @sock (it did before it reported "ready"); caller owns it. */
static int recv_master(int sock)
{
	char b;
	int fd, r = ra_recv_with_fd(sock, &b, 1, &fd, MSG_DONTWAIT);

	return r < 0 ? r : fd;
}

#define EOPT(o, field, def) \
	((o) && (o)->size >= offsetof(struct rootasm_exec_opts, field) + sizeof((o)->field) ? (o)->field : (def))

/*
 * The environment: the layout's, the caller's extra entries, then PATH, TERM
 * and HOME (@home: the user's in the tree, else /root) if not given.
 */
char **ra_exec_env(const struct ra_exec *x, const char *const *extra, const char *home, const char **ret_path)
{
	const char *const defaults[] = {
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm", home ? home : "HOME=/root",
	};
	size_t n = 0, cap = (x ? x->nenv : 0) + ARRAY_SIZE(defaults) + 1;
	char **env;

	for (const char *const *p = extra; p && *p; p++)
		cap++;
	env = calloc(cap, sizeof(char *));
	if (!env)
		return NULL;
	/* a later entry for the same name replaces an earlier one */
#define PUT(s) do {								\
		const char *_s = (s);						\
		size_t _k = strcspn(_s, "=") + 1, _i;				\
		for (_i = 0; _i < n && strncmp(env[_i], _s, _k); _i++)		\
			;							\
		env[_i] = (char *)_s;						\
		if (_i == n)							\
			n++;							\
	} while (0)
	for (size_t i = 0; x && i < x->nenv; i++)
		PUT(x->env[i]);
	for (const char *const *p = extra; p && *p; p++)
		PUT(*p);
	for (size_t i = 0; i < ARRAY_SIZE(defaults); i++) {
		size_t k = strcspn(defaults[i], "=") + 1, j;

		for (j = 0; j < n && strncmp(env[j], defaults[i], k); j++)
			;
		if (j == n)
			env[n++] = (char *)defaults[i];
	}
#undef PUT
	*ret_path = NULL;
	for (size_t i = 0; i < n; i++)
		if (!strncmp(env[i], "PATH=", 5))
			*ret_path = env[i] + 5;
	return env;
}

/*
 * The command, as `podman run IMAGE [CMD]` makes it from the image's
 * Entrypoint and Cmd: the entrypoint, then @argv if it has any, else the
 * layout's cmd. An array of borrowed pointers (caller frees the array only);
 * NULL when out of memory.
 */
char **ra_exec_command(const struct ra_exec *x, char *const argv[])
{
	bool own = argv && argv[0];
	size_t n = x->nentrypoint, k = 0;
	char **v;

	if (own)
		while (argv[k])
			k++;
	else
		k = x->ncmd;
	v = calloc(n + k + 1, sizeof(char *));
	if (!v)
		return NULL;
	for (size_t i = 0; i < n; i++)
		v[i] = x->entrypoint[i];
	for (size_t i = 0; i < k; i++)
		v[n + i] = own ? argv[i] : x->cmd[i];
	return v;
}

struct rootasm_exec_pending {
	struct rootasm_ctx *ctx;
	struct ra_child ch;
	int tree_sock;			/* our end: the tree goes to the init on it */
	int tty_sock;			/* tty: our end, the pty's master comes back on it */
	int *tty_master;		/* ROOTASM_EXEC_TTY: where the master goes; else NULL */
	char *user;			/* the layout's exec.user, resolved in the tree at the join */
};

/* the HOME a user's /etc/passwd entry replaces in the init (ra_exec_env's default, by address) */
static const char home_pending[] = "HOME=/root";

void rootasm_exec_pending_free(struct rootasm_exec_pending *p)
{
	if (!p)
		return;
	close_fdp(&p->tree_sock);	/* an init still waiting for its tree gives up... */
	ra_child_kill(&p->ch);		/* ...and is killed and reaped in any case */
	close_fdp(&p->tty_sock);
	free(p->user);
	free(p);
}

int rootasm_exec_prepare(struct rootasm_ctx *ctx, const struct rootasm_layout *l, char *const argv[],
			 const struct rootasm_exec_opts *o, struct rootasm_exec_pending **ret, struct rootasm_error *e)
{
	static const struct ra_exec defaults = { .deny_mount_api = true };
	const struct ra_exec *x = l ? &l->exec : &defaults;
	unsigned int flags = EOPT(o, flags, 0u);
	const char *const *extra = EOPT(o, env, NULL);
	int *tty_master = EOPT(o, tty_master, NULL);
	struct spec s = {
		.tree_fd = -EBADF,
		.tree_sock = -EBADF,
		.home_slot = -1,
		.workdir = x->workdir,
		.hostname = EOPT(o, hostname, NULL) ? EOPT(o, hostname, NULL) : x->hostname ? x->hostname : "rootasm",
		.privileged = x->privileged || (flags & ROOTASM_EXEC_PRIVILEGED),
		.netns = (x->network == RA_NET_NONE && !(flags & ROOTASM_EXEC_NETWORK_HOST)) ||
			 (flags & ROOTASM_EXEC_NETWORK_NONE),
		.user_set = x->user_set,
		.uid = x->uid,
		.gid = x->gid,
		.groups = x->groups,
		.ngroups = x->ngroups,
		.caps = x->caps_set ? x->caps : RA_OCI_DEFAULT_CAPS,
		.preserve_fds = EOPT(o, preserve_fds, 0u),
		.deny_mount_api = x->deny_mount_api,
		.tty = flags & ROOTASM_EXEC_TTY,
		.tty_sock = -EBADF,
	};
	struct rootasm_exec_pending *p;
	char **full;
	int r, sp[2];

	if (!ret)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "exec", NULL, "no place for the pending container");
	*ret = NULL;
	/* the size and flag rules of rootasm.h */
	r = o ? ra_opts_size(o, o->size, offsetof(struct rootasm_exec_opts, flags) + sizeof(o->flags), sizeof(*o)) : 0;
	if (r == -E2BIG)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, E2BIG, "exec", NULL,
				   "struct rootasm_exec_opts of %zu bytes sets fields this library (%s) does not know",
				   o->size, ROOTASM_VERSION_STRING);
	if (r < 0)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "exec", NULL,
				   "struct rootasm_exec_opts.size is %zu: set it to sizeof(struct rootasm_exec_opts)",
				   o->size);
	if (flags & ~(ROOTASM_EXEC_PRIVILEGED | ROOTASM_EXEC_NETWORK_NONE | ROOTASM_EXEC_NETWORK_HOST | ROOTASM_EXEC_TTY))
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "exec", NULL, "unknown flags 0x%x",
				   flags & ~(ROOTASM_EXEC_PRIVILEGED | ROOTASM_EXEC_NETWORK_NONE | ROOTASM_EXEC_NETWORK_HOST |
					     ROOTASM_EXEC_TTY));
	if ((flags & ROOTASM_EXEC_NETWORK_NONE) && (flags & ROOTASM_EXEC_NETWORK_HOST))
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "exec", NULL,
				   "ROOTASM_EXEC_NETWORK_NONE and ROOTASM_EXEC_NETWORK_HOST do not go together");
	/* as the layout's exec.hostname: sethostname() would take '/' and newlines too */
	if (!rootasm_hostname_ok(s.hostname))
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "exec", NULL,
				   "hostname '%s' (--hostname): expected 1-64 of letters, digits, '.', '-', "
				   "not first '-' or '.'", s.hostname);
	if ((flags & ROOTASM_EXEC_TTY) && !tty_master)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "exec", NULL,
				   "ROOTASM_EXEC_TTY needs struct rootasm_exec_opts.tty_master");
	if (argv && argv[0] && !argv[0][0])
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "exec", NULL, "an empty command");
	if (s.preserve_fds > 65536)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "exec", NULL, "--preserve-fds %u: too many",
				   s.preserve_fds);
	p = calloc(1, sizeof(*p));
	if (!p || (x->user && !(p->user = strdup(x->user)))) {
		free(p);
		return ra_oom(e, "exec");
	}
	p->ctx = ctx;
	p->ch = (struct ra_child){ .pidfd = -EBADF, .report = -EBADF, .hold = -EBADF, .child_ends = { -EBADF, -EBADF } };
	p->tree_sock = p->tty_sock = -EBADF;
	p->tty_master = s.tty ? tty_master : NULL;	/* (a caller may set it without the flag) */
	for (size_t i = 0; i < NMASK; i++)
		s.null_clones[i] = -EBADF;
	s.argv = full = ra_exec_command(x, argv);
	if (!full) {
		rootasm_exec_pending_free(p);
		return ra_oom(e, "exec command");
	}
	if (!full[0] || !full[0][0]) {
		free(full);
		rootasm_exec_pending_free(p);
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "exec", NULL,
				   "no command (and the layout's exec: section has no entrypoint or cmd)");
	}
	/* the image's user, by name or number, is looked up in the tree at the join: its HOME then */
	s.envp = ra_exec_env(x, extra, x->user ? home_pending : NULL, &s.path);
	if (!s.envp) {
		free(full);
		rootasm_exec_pending_free(p);
		return ra_oom(e, "exec environment");
	}
	for (size_t i = 0; x->user && s.envp[i]; i++)
		if (s.envp[i] == home_pending)
			s.home_slot = (int)i;
	r = 0;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
		r = ra_err(e, errno, -EBADF, "socketpair", NULL, "for the tree");
	} else {
		p->tree_sock = sp[0];
		s.tree_sock = sp[1];
	}
	if (r == 0 && s.tty) {
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
			r = ra_err(e, errno, -EBADF, "socketpair", NULL, "for the pty");
		} else {
			p->tty_sock = sp[0];
			s.tty_sock = sp[1];
		}
	}
	if (r == 0 && !s.privileged) {
		/* the masks: detached clones of our /dev/null, moved onto /proc files in the container */
		for (size_t i = 0; r == 0 && i < NMASK; i++) {
			s.null_clones[i] = open_tree(AT_FDCWD, "/dev/null", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
			if (s.null_clones[i] < 0)
				r = ra_err(e, errno, -EBADF, "open_tree", "/dev/null", "for the /proc masks");
		}
	}
	sigemptyset(&s.fwd);
	for (size_t i = 0; i < ARRAY_SIZE(fwd_signals); i++)
		sigaddset(&s.fwd, fwd_signals[i]);
	sigaddset(&s.fwd, SIGCHLD);
	if (r == 0) {
		sigset_t old;

		/* the init starts with these blocked (it waits for them); our own mask is restored at once */
		pthread_sigmask(SIG_BLOCK, &s.fwd, &old);
		/* the other namespaces the init makes itself (S_UNSHARE), while we assemble */
		r = ra_child_start(&p->ch, CLONE_NEWNS | CLONE_NEWPID, 0, init_main, &s, "exec", e);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	for (size_t i = 0; i < NMASK; i++)
		close_fdp(&s.null_clones[i]);
	close_fdp(&s.tty_sock);
	close_fdp(&s.tree_sock);
	free(s.envp);
	free(full);
	if (r < 0) {
		rootasm_exec_pending_free(p);
		return r;
	}
	RA_TRACE(ra_ctx(ctx), "exec: init pid %d started (%s%s), waiting for the tree", p->ch.pid,
		 s.privileged ? "privileged" : "sandboxed", s.netns ? ", network none" : "");
	*ret = p;
	return 0;
}

int rootasm_exec_join(struct rootasm_exec_pending *p, int tree_fd, struct rootasm_error *e)
{
	struct tree_msg m = { 0 };
	struct ra_child_report rep;
	struct ra_user user;
	int r, pidfd;

	if (!p)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "exec", NULL, "no pending container");
	if (tree_fd < 0) {
		rootasm_exec_pending_free(p);
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EBADF, "exec", NULL, "no tree");
	}
	if (p->user) {
		/* the image's user, by name or number, in the tree's own /etc/passwd and /etc/group */
		r = ra_user_resolve(tree_fd, p->user, &user, e);
		if (r < 0) {
			rootasm_exec_pending_free(p);
			return r;
		}
		m.resolved = true;
		m.uid = user.uid;
		m.gid = user.gid;
		m.ngroups = (uint32_t)user.ngroups;
		memcpy(m.groups, user.groups, user.ngroups * sizeof(gid_t));
		if (user.home[0])
			snprintf(m.home, sizeof(m.home), "HOME=%s", user.home);
	}
	/* a failure means the init is gone: its report says why */
	(void)ra_send_with_fd(p->tree_sock, &m, sizeof(m), tree_fd, 0);
	close_fdp(&p->tree_sock);
	p->tree_sock = -EBADF;
	RA_TRACE(ra_ctx(p->ctx), "exec: the tree went to the init");
	/* the init reports "ready" once the sandbox is up, or why it is not */
	r = ra_child_read_report(&p->ch, &rep);
	if (r > 0 && rep.err == 0 && p->tty_master) {
		int master = recv_master(p->tty_sock);

		if (master < 0) {
			rootasm_exec_pending_free(p);
			return ra_err(e, master, -EBADF, "exec", NULL, "the pty's master did not come back from the init");
		}
		*p->tty_master = master;
	}
	if (r > 0 && rep.err == 0) {
		RA_TRACE(ra_ctx(p->ctx), "exec: the sandbox is up (init pid %d)", p->ch.pid);
		pidfd = take_fd(p->ch.pidfd);
		rootasm_exec_pending_free(p);	/* closes the pipes only: the pidfd is taken */
		return pidfd;
	}
	r = ra_child_finish(&p->ch, "exec", steps, e);
	rootasm_exec_pending_free(p);
	return r < 0 ? r : ra_err(e, EIO, -EBADF, "exec", NULL, "the container's init ended before it was set up");
}

int rootasm_exec_start(struct rootasm_ctx *ctx, const struct rootasm_layout *l, int tree_fd, char *const argv[],
		       const struct rootasm_exec_opts *o, struct rootasm_error *e)
{
	struct rootasm_exec_pending *p;
	int r;

	r = rootasm_exec_prepare(ctx, l, argv, o, &p, e);
	return r < 0 ? r : rootasm_exec_join(p, tree_fd, e);
}

int rootasm_exec_wait(int pidfd, struct rootasm_exec_result *res, struct rootasm_error *e)
{
	struct ra_pidfd_info info = { .mask = PIDFD_INFO_EXIT | PIDFD_INFO_CGROUPID };
	siginfo_t si = { 0 };

	while (waitid(P_PIDFD, pidfd, &si, WEXITED | __WALL) < 0)
		if (errno != EINTR)
			return ra_err(e, errno, -EBADF, "waitid", NULL, "the container's init");
	*res = (struct rootasm_exec_result){ 0 };	/* the reserved space too */
	res->status = si.si_code == CLD_EXITED ? si.si_status : 128 + si.si_status;
	/* reaped: a kernel with PIDFD_INFO_EXIT still has the exit code and cgroup id */
	if (ioctl(pidfd, PIDFD_GET_INFO, &info) == 0 && (info.mask & PIDFD_INFO_EXIT)) {
		res->from_pidfd_info = true;
		res->status = WIFEXITED(info.exit_code) ? WEXITSTATUS(info.exit_code) : 128 + WTERMSIG(info.exit_code);
		res->cgroupid = info.mask & PIDFD_INFO_CGROUPID ? info.cgroupid : 0;
	}
	return 0;
}

int rootasm_exec(struct rootasm_ctx *ctx, const struct rootasm_layout *l, int tree_fd, char *const argv[],
		 const struct rootasm_exec_opts *o, struct rootasm_exec_result *res, struct rootasm_error *e)
{
	_cleanup_close_ int pidfd = rootasm_exec_start(ctx, l, tree_fd, argv, o, e);

	if (pidfd < 0)
		return pidfd;
	return rootasm_exec_wait(pidfd, res, e);
}
