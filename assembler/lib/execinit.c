// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * exec: the container's init, pid 1 of its pid namespace (sandbox.h), started
 * by the parent (exec.c) through child.c. System calls only: nothing
 * allocates after the clone. In order:
 *
 *   every fd closed but the command's (0-2, the preserved ones) and its own
 *   sockets and report pipe (close_the_rest()); setsid: a session of its
 *   own, without a controlling terminal (the caller's terminal takes no
 *   TIOCSTI from it: bubblewrap's CVE-2017-5226);
 *   "/" private; hostname; loopback up in a new network namespace; /proc and
 *   /dev made, detached (execmnt.c); the bounding set reduced (it limits what
 *   an execve() grants, not what the init holds); the tree received; move_mount(tree) over
 *   "/"; fchdir; pivot_root(".", "."); umount2(".", MNT_DETACH) (chroot where
 *   "/" has no parent: an initramfs); every mount of the tree nodev (a device
 *   node of a layer opens nothing); /proc with its masks, /dev (execmnt.c);
 *   the working directory, resolved in the tree through no magic link;
 *   the credentials: groups, gid, uid; with a tty: a pty of
 *   /dev/ptmx (the container's devpts), its size the caller's, its master sent
 *   back, its slave the init's fds 0-2; capabilities (and ambient ones),
 *   no_new_privs, not dumpable, the seccomp program (made at build time by
 *   tools/seccomp-gen.c): for the init too; the report "ready"; every fd >= 3
 *   closed but the preserved ones; fork CMD; pass signals on; reap; exit with
 *   CMD's status.
 *
 * Each step is named in ra_exec_steps[] for the report of one that failed.
 */
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <linux/seccomp.h>

#include "child.h"
#include "exec.h"
#include "proto.h"
#include "sandbox.h"
#include "util.h"

const char *const ra_exec_steps[] = {
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
static void __attribute__((noreturn)) run_cmd(struct ra_exec_spec *s)
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
static void __attribute__((noreturn)) init_loop(struct ra_exec_spec *s, pid_t cmd)
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
static int recv_tree(struct ra_exec_spec *s, struct ra_exec_tree_msg *m)
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

/*
 * Every fd but what the command gets (0-2, the preserved ones) and what the
 * init needs (its sockets, its report pipe): closed before anything else, so
 * that no path the init resolves with its rights (a symlink of the tree's to
 * /proc/self/fd/N: /dev, /dev/ptmx) reaches a file of the caller's or of the
 * layout's.
 */
static int close_the_rest(const struct ra_exec_spec *s)
{
	int keep[3] = { s->tree_sock, s->tty ? s->tty_sock : -1, ra_child_report_fd() };
	unsigned int from = 3 + s->preserve_fds;

	/* (three: sorted in place) */
	for (int i = 0; i < 3; i++)
		for (int j = i + 1; j < 3; j++)
			if (keep[j] < keep[i]) {
				int t = keep[i];

				keep[i] = keep[j];
				keep[j] = t;
			}
	for (int i = 0; i < 3; i++) {
		if (keep[i] < 0 || (unsigned int)keep[i] < from)
			continue;
		if ((unsigned int)keep[i] > from && syscall(SYS_close_range, from, keep[i] - 1, 0) < 0)
			return errno_r();
		from = keep[i] + 1;
	}
	return syscall(SYS_close_range, from, ~0U, 0) < 0 ? errno_r() : 0;
}

int ra_exec_init(void *arg, int *step)
{
	struct ra_exec_spec *s = arg;
	struct ra_exec_tree_msg m;	/* lives as long as the init: s->groups and envp may point into it */
	struct ra_premade pm;
	pid_t cmd;
	int r;

	/*
	 * Its namespaces but the pid and mount ones (made by clone3, so that it
	 * is pid 1 and its mount table is ours from before the assembly), made
	 * here while the parent assembles: a network namespace costs ~0.5 ms.
	 * mqueue and /proc below are the new ones'.
	 */
	*step = S_FDS;
	if ((r = close_the_rest(s)) < 0)
		return r;
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
	ra_premade_init(&pm);
	ra_premake(&pm, s->privileged);
	if (!s->privileged) {
		/*
		 * The bounding set limits what an execve() may grant, not what the
		 * init holds now (its mounts below keep CAP_SYS_ADMIN): dropped
		 * here, before the tree. Up to the kernel's last capability: the
		 * first it does not know (EINVAL) ends the list.
		 */
		*step = S_BOUNDING;
		for (unsigned int c = 0; c < 64; c++) {
			if (s->caps & (1ULL << c))
				continue;
			if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0) {
				if (errno == EINVAL)
					break;
				return errno_r();
			}
		}
	}
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
	/* a /proc as crun makes it: its mount point too, where the image has none (an image FROM scratch) */
	*step = S_PROC;
	if (mkdir("/proc", 0555) < 0 && errno != EEXIST)
		return errno_r();
	{
		struct stat st;

		/* (a file, a FIFO or a symlink of the image's there: "Not a directory", not mount's EINVAL) */
		if (lstat("/proc", &st) < 0 || !S_ISDIR(st.st_mode))
			return -ENOTDIR;
	}
	r = ra_mount_premade(&pm.proc, "/proc");
	if (r < 0)
		return r;
	if (!s->privileged) {
		*step = S_MASK;
		if ((r = ra_mask_proc(&pm)) < 0)
			return r;
		*step = S_RO;
		if ((r = ra_readonly_proc()) < 0)
			return r;
	}
	*step = S_DEV;
	if (!ra_dev_usable()) {
		r = ra_make_dev(&pm);
		if (r < 0)
			return r;
	}
	ra_premade_close(&pm);	/* what the tree did not need */
	/*
	 * As root still: the image's WorkingDir, whoever may enter it (as runc,
	 * which tries before and after). Resolved in the tree, through no magic
	 * link: /proc/self/fd/N (or a symlink of the image to it) is none of the
	 * tree's (with a caller's fd there, a directory of the host: runc's
	 * CVE-2024-21626; close_the_rest() closed those too).
	 */
	*step = S_WORKDIR;
	if (s->workdir) {
		struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
					.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
		int wd = ra_openat2_retry(AT_FDCWD, s->workdir, &how);

		if (wd < 0)
			return wd;
		r = fchdir(wd) < 0 ? errno_r() : 0;
		close(wd);
		if (r < 0)
			return r;
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
