// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Delivery of an assembled tree:
 *
 *   attach   move_mount(tree, "", AT_FDCWD, dir, F_EMPTY_PATH)   - the one call that
 *            touches the caller's mount namespace
 *   send-fd  connect(AF_UNIX) + sendmsg(SCM_RIGHTS)
 *   exec     clone3(CLONE_NEWNS|CLONE_NEWPID|CLONE_PIDFD) -> child (pid 1):
 *              make / private, move_mount(tree) over "/", fchdir(tree),
 *              pivot_root(".", "."), umount2(".", MNT_DETACH), mount proc,
 *              fork CMD (seccomp filter denying the mount API), forward
 *              signals to it, reap, exit with its status;
 *            parent: forward signals through the pidfd, reap with
 *              waitid(P_PIDFD) and read PIDFD_INFO_EXIT where the kernel has it.
 */
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <linux/sched.h>
#include <seccomp.h>

#include "probe.h"
#include "util.h"

int rootasm_attach(int tree_fd, const char *dir, struct rootasm_error *e)
{
	if (move_mount(tree_fd, "", AT_FDCWD, dir, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return ra_err(e, errno, -EBADF, "move_mount", dir, NULL);
	return 0;
}

int rootasm_send_fd(int tree_fd, const char *socket_path, const char *layout_path,
		    struct rootasm_error *e)
{
	_cleanup_close_ int sock = -EBADF;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char payload[4200];
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov;
	struct msghdr msg = { 0 };
	struct cmsghdr *c;
	int n;

	if (strlen(socket_path) >= sizeof(sa.sun_path))
		return ra_err(e, ENAMETOOLONG, -EBADF, "connect", socket_path, NULL);
	strcpy(sa.sun_path, socket_path);
	sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sock < 0)
		return ra_err(e, errno, -EBADF, "socket", socket_path, NULL);
	if (connect(sock, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return ra_err(e, errno, -EBADF, "connect", socket_path, NULL);
	n = snprintf(payload, sizeof(payload), "rootasm-tree 1 %s\n", layout_path ? layout_path : "-");
	if (n < 0 || (size_t)n >= sizeof(payload))
		return ra_err(e, ENAMETOOLONG, -EBADF, "send", socket_path, NULL);
	iov = (struct iovec){ payload, n };
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = u.buf;
	msg.msg_controllen = sizeof(u.buf);
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &tree_fd, sizeof(int));
	while ((n = sendmsg(sock, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	if (n < 0)
		return ra_err(e, errno, -EBADF, "sendmsg", socket_path, NULL);
	return 0;
}

static const char *const mount_api[] = {
	"mount", "umount2", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount",
	"fspick", "mount_setattr", "pivot_root",
};

#ifndef __NR_open_tree_attr
#define __NR_open_tree_attr 467	/* Linux 6.15; unknown to this libseccomp */
#endif

static int deny_mount_api(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int r = 0;

	if (!ctx)
		return -ENOMEM;
	/* We are root with CAP_SYS_ADMIN: no need to set no_new_privs for CMD. */
	seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	for (size_t i = 0; i < ARRAY_SIZE(mount_api) && !r; i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), seccomp_syscall_resolve_name(mount_api[i]), 0);
#if defined(__x86_64__)
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), __NR_open_tree_attr, 0);
#endif
	if (!r)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	return r;
}

static const int fwd_signals[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT };

static void die(const char *what, const char *path)
{
	fprintf(stderr, "rootasm: exec: %s%s%s: %s\n", what, path ? " " : "", path ? path : "", strerror(errno));
	_exit(127);
}

/* pid 1 of the new pid namespace: enter the tree, run CMD, pass its status on. */
static void __attribute__((noreturn)) child_init(int tree_fd, char *const argv[], const struct rootasm_exec_opts *o,
						sigset_t *fwd)
{
	struct stat st;
	pid_t cmd;
	int status = 0;

	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		die("make / private", NULL);
	if (move_mount(tree_fd, "", AT_FDCWD, "/", MOVE_MOUNT_F_EMPTY_PATH) < 0)
		die("move_mount", "/");
	if (fchdir(tree_fd) < 0)
		die("fchdir", "tree");
	close(tree_fd);
	if (syscall(SYS_pivot_root, ".", ".") == 0) {
		if (umount2(".", MNT_DETACH) < 0)
			die("umount2", "old root");
	} else if (errno != EINVAL || chroot(".") < 0) {
		/* pivot_root refuses a root without a parent (an initramfs): chroot there */
		die("pivot_root", ".");
	}
	if (chdir("/") < 0)
		die("chdir", "/");
	if (stat("/proc", &st) == 0 && S_ISDIR(st.st_mode) &&
	    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		die("mount proc", "/proc");
	cmd = fork();
	if (cmd < 0)
		die("fork", NULL);
	if (cmd == 0) {
		sigprocmask(SIG_UNBLOCK, fwd, NULL);
		if (o && o->deny_mount_api && deny_mount_api() < 0) {
			errno = EPERM;
			die("seccomp", NULL);
		}
		execvp(argv[0], argv);
		fprintf(stderr, "rootasm: exec: %s: %s\n", argv[0], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(fwd, &si);

		if (sig < 0)
			continue;
		if (sig != SIGCHLD) {
			/*
			 * A signal from the terminal (SI_KERNEL) went to the whole
			 * foreground process group, CMD included: pass on only what
			 * a process sent, so CMD sees each signal once.
			 */
			if (si.si_code != SI_KERNEL)
				kill(cmd, sig);
			continue;
		}
		/* Reap everything; the namespace ends when CMD does. */
		for (;;) {
			int st2;
			pid_t p = waitpid(-1, &st2, WNOHANG);

			if (p <= 0)
				break;
			if (p == cmd) {
				status = WIFEXITED(st2) ? WEXITSTATUS(st2) : 128 + WTERMSIG(st2);
				_exit(status);
			}
		}
	}
}

int rootasm_exec(struct rootasm_ctx *ctx, int tree_fd, char *const argv[], const struct rootasm_exec_opts *opts,
		 struct rootasm_exec_result *res, struct rootasm_error *e)
{
	_cleanup_close_ int pidfd = -EBADF, sfd = -EBADF;
	struct clone_args ca = {
		.flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_PIDFD,
		.exit_signal = SIGCHLD,
	};
	struct ra_pidfd_info info = { .mask = PIDFD_INFO_EXIT | PIDFD_INFO_CGROUPID };
	sigset_t fwd, old;
	siginfo_t si = { 0 };
	long pid;
	int pfd = -1;

	sigemptyset(&fwd);
	for (size_t i = 0; i < ARRAY_SIZE(fwd_signals); i++)
		sigaddset(&fwd, fwd_signals[i]);
	sigaddset(&fwd, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &fwd, &old) < 0)
		return ra_err(e, errno, -EBADF, "sigprocmask", NULL, NULL);
	ca.pidfd = (uint64_t)(uintptr_t)&pfd;
	pid = syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid == 0)
		child_init(tree_fd, argv, opts, &fwd);
	if (pid < 0) {
		int r = ra_err(e, errno, -EBADF, "clone3", NULL, "new mount and pid namespace");

		sigprocmask(SIG_SETMASK, &old, NULL);
		return r;
	}
	pidfd = pfd;
	sigdelset(&fwd, SIGCHLD);
	sfd = signalfd(-1, &fwd, SFD_CLOEXEC | SFD_NONBLOCK);
	for (;;) {
		struct pollfd p[2] = { { pidfd, POLLIN, 0 }, { sfd, POLLIN, 0 } };
		struct signalfd_siginfo ssi;

		if (poll(p, sfd >= 0 ? 2 : 1, -1) < 0 && errno != EINTR)
			break;
		/* terminal signals reached the child's process group already */
		if (sfd >= 0 && (p[1].revents & POLLIN) && read(sfd, &ssi, sizeof(ssi)) == sizeof(ssi) &&
		    ssi.ssi_code != SI_KERNEL)
			sys_pidfd_send_signal(pidfd, ssi.ssi_signo);
		if (p[0].revents & (POLLIN | POLLHUP))
			break;
	}
	while (waitid(P_PIDFD, pidfd, &si, WEXITED) < 0) {
		if (errno != EINTR) {
			int r = ra_err(e, errno, -EBADF, "waitid", NULL, NULL);

			sigprocmask(SIG_SETMASK, &old, NULL);
			return r;
		}
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	res->from_pidfd_info = false;
	res->cgroupid = 0;
	if (si.si_code == CLD_EXITED)
		res->status = si.si_status;
	else
		res->status = 128 + si.si_status;
	/* Reaped: a kernel with PIDFD_INFO_EXIT still has the exit code and cgroup id. */
	if (ioctl(pidfd, PIDFD_GET_INFO, &info) == 0 && (info.mask & PIDFD_INFO_EXIT)) {
		res->from_pidfd_info = true;
		res->status = WIFEXITED(info.exit_code) ? WEXITSTATUS(info.exit_code) : 128 + WTERMSIG(info.exit_code);
		res->cgroupid = info.mask & PIDFD_INFO_CGROUPID ? info.cgroupid : 0;
	}
	return 0;
}
