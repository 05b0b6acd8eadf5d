// SPDX-License-Identifier: LGPL-2.1-or-later
/* Helper processes: clone3 + pidfd + death signal + a report pipe (child.h). */
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/sched.h>

#include "child.h"
#include "util.h"

#ifndef CLONE_CLEAR_SIGHAND
#define CLONE_CLEAR_SIGHAND 0x100000000ULL
#endif

/* In a child: the write end of its report pipe (each child has its own copy of this variable). */
static int child_report_fd = -1;

int ra_child_report_fd(void)
{
	return child_report_fd;
}

void ra_child_report_ready(int step)
{
	struct ra_child_report rep = { step, 0 };

	(void)!write(child_report_fd, &rep, sizeof(rep));
}

static void __attribute__((noreturn)) child_main(struct ra_child *c, uint64_t clone_flags, pid_t ppid,
						 int report_wr, int hold_rd, ra_child_fn fn, void *arg)
{
	struct ra_child_report rep = { 0, 0 };
	int step = 0, r;

	/* die with the thread that made us; if it is gone already, go too */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		_exit(126);
	if (!(clone_flags & CLONE_NEWPID) && syscall(SYS_getppid) != ppid)
		_exit(126);
	/* (in a new pid namespace getppid() says 0: the death signal alone covers that case) */
	child_report_fd = report_wr;
	r = fn(arg, &step);
	rep.step = step;
	rep.err = r < 0 ? -r : 0;
	(void)!write(report_wr, &rep, sizeof(rep));
	if (r < 0)
		_exit(1);
	if (c->flags & RA_CHILD_HOLD) {
		char b;

		while (read(hold_rd, &b, 1) < 0 && errno == EINTR)
			;
	}
	_exit(0);
}

int ra_child_start(struct ra_child *c, uint64_t clone_flags, unsigned int flags, ra_child_fn fn, void *arg,
		   const char *what, struct rootasm_error *e)
{
	_cleanup_close_ int rep_rd = -EBADF, rep_wr = -EBADF, hold_rd = -EBADF, hold_wr = -EBADF;
	int p[2], pidfd = -1;
	struct clone_args ca = {
		.flags = CLONE_PIDFD | CLONE_CLEAR_SIGHAND | clone_flags | (flags & RA_CHILD_FILES ? CLONE_FILES : 0),
		.exit_signal = 0,
	};
	pid_t ppid = getpid();
	long pid;

	*c = (struct ra_child){ .pidfd = -EBADF, .report = -EBADF, .hold = -EBADF, .child_ends = { -EBADF, -EBADF }, .flags = flags };
	if (pipe2(p, O_CLOEXEC) < 0)
		return ra_err(e, errno, -EBADF, "pipe", what, NULL);
	rep_rd = p[0];
	rep_wr = p[1];
	if (fcntl(rep_rd, F_SETFL, O_NONBLOCK) < 0)
		return ra_err(e, errno, -EBADF, "fcntl", what, NULL);
	if (flags & RA_CHILD_HOLD) {
		if (pipe2(p, O_CLOEXEC) < 0)
			return ra_err(e, errno, -EBADF, "pipe", what, NULL);
		hold_rd = p[0];
		hold_wr = p[1];
	}
	ca.pidfd = (uint64_t)(uintptr_t)&pidfd;
	pid = syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid == 0)
		child_main(c, clone_flags, ppid, rep_wr, hold_rd, fn, arg);
	if (pid < 0)
		return ra_err(e, errno, -EBADF, "clone3", what, NULL);
	c->pid = pid;
	c->pidfd = pidfd;
	c->report = take_fd(rep_rd);
	c->hold = take_fd(hold_wr);
	/* the child's ends: with a shared fd table they stay open until the child is reaped */
	if (flags & RA_CHILD_FILES) {
		c->child_ends[0] = take_fd(rep_wr);
		c->child_ends[1] = take_fd(hold_rd);
	}
	return 0;
}

static int got_report(struct ra_child *c, const struct ra_child_report *r)
{
	c->reported = true;
	c->last_step = r->step;
	c->last_err = r->err;
	return 1;
}

int ra_child_read_report(struct ra_child *c, struct ra_child_report *r)
{
	if (c->reported) {
		*r = (struct ra_child_report){ c->last_step, c->last_err };
		return 1;
	}
	for (;;) {
		struct pollfd p[2] = { { c->report, POLLIN, 0 }, { c->pidfd, POLLIN, 0 } };
		ssize_t n = read(c->report, r, sizeof(*r));

		if (n == sizeof(*r))
			return got_report(c, r);
		if (n >= 0 && n != 0)
			return -EIO;
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		/* nothing yet: the child exited (without a report), or wait for either */
		if (p[1].fd < 0 || (poll(&p[1], 1, 0) > 0 && (p[1].revents & POLLIN))) {
			n = read(c->report, r, sizeof(*r));
			return n == sizeof(*r) ? got_report(c, r) : 0;
		}
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return -errno;
	}
}
int ra_child_wait(struct ra_child *c, siginfo_t *si)
{
	int r = 0;

	memset(si, 0, sizeof(*si));
	if (c->pidfd < 0)
		return -ECHILD;
	while (waitid(P_PIDFD, c->pidfd, si, WEXITED | __WALL) < 0) {
		if (errno != EINTR) {
			r = -errno;
			break;
		}
	}
	close_fdp(&c->pidfd);
	c->pidfd = -EBADF;
	return r;
}

static void close_pipes(struct ra_child *c)
{
	close_fdp(&c->report);
	close_fdp(&c->hold);
	close_fdp(&c->child_ends[0]);
	close_fdp(&c->child_ends[1]);
	c->report = c->hold = c->child_ends[0] = c->child_ends[1] = -EBADF;
}

/*
 * Why a step failed, when the cause is where we run, not what we do: "/" that
 * is not a mount (a plain chroot) cannot be made private, and nothing can be
 * mounted in a namespace of its own; no /proc, and nothing is known of fds.
 */
static const char *step_hint(const char *step, int err)
{
	if (!step || err != EINVAL || !strstr(step, "make / private"))
		return NULL;
	if (ra_chrooted())
		return "/ is not a mount point here (a plain chroot): rootasm mounts in a private mount namespace, which "
		       "needs / to be a mount; run it in a container, or bind-mount the chroot's directory onto itself "
		       "before chroot";
	return NULL;
}

int ra_child_finish(struct ra_child *c, const char *what, const char *const *steps, struct rootasm_error *e)
{
	struct ra_child_report rep = { 0, 0 };
	siginfo_t si;
	int got, r;

	/* a held child reports when fn is done, then waits for a byte from us */
	got = ra_child_read_report(c, &rep);
	if (c->hold >= 0)
		(void)!write(c->hold, "", 1);
	r = ra_child_wait(c, &si);
	close_pipes(c);
	if (r < 0)
		return ra_err(e, r, -EBADF, "waitid", what, NULL);
	if (got > 0 && rep.err) {
		const char *step = NULL;
		char op[ROOTASM_ERR_OP_MAX];

		for (int i = 0; steps && steps[i]; i++)
			if (i == rep.step)
				step = steps[i];
		snprintf(op, sizeof(op), "%s%s%s", what, step ? " " : "", step ? step : "");
		return ra_err(e, rep.err, -EBADF, op, NULL, step_hint(step, rep.err) ? "%s" : NULL,
			      step_hint(step, rep.err));
	}
	if (si.si_code == CLD_EXITED && si.si_status == 0)
		return 0;
	if (si.si_code == CLD_EXITED)
		return ra_err(e, EIO, -EBADF, what, NULL, "helper process exited with status %d without a report",
			      si.si_status);
	return ra_err(e, EINTR, -EBADF, what, NULL, "helper process killed by signal %d (%s)", si.si_status,
		      sigdescr_np(si.si_status) ? sigdescr_np(si.si_status) : "?");
}

void ra_child_kill(struct ra_child *c)
{
	siginfo_t si;

	if (c->pidfd >= 0) {
		sys_pidfd_send_signal(c->pidfd, SIGKILL);
		ra_child_wait(c, &si);
	}
	close_pipes(c);
}

enum { EXEC_DEATHSIG, EXEC_PRIVATE, EXEC_ATTACH, EXEC_DUP, EXEC_EXEC };
static const char *const spawn_steps[] = { "prctl", "make / private", "attach", "dup", "execve", NULL };

static void __attribute__((noreturn)) spawn_child(const struct ra_spawn *x, pid_t ppid, int rep, const int *hi)
{
	static char *const envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL };
	struct ra_child_report r = { EXEC_DEATHSIG, 0 };

	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		goto fail;
	if (syscall(SYS_getppid) != ppid)
		_exit(126);
	if (x->attach_fd >= 0) {
		r.step = EXEC_PRIVATE;
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
			goto fail;
		r.step = EXEC_ATTACH;
		if (move_mount(x->attach_fd, "", AT_FDCWD, x->attach_at, MOVE_MOUNT_F_EMPTY_PATH) < 0)
			goto fail;
		if (x->tmp_fd >= 0 && move_mount(x->tmp_fd, "", AT_FDCWD, "/tmp", MOVE_MOUNT_F_EMPTY_PATH) < 0)
			goto fail;
	}
	/* hi[] are copies above every target: dup2 cannot clobber a source */
	r.step = EXEC_DUP;
	for (int i = 0; i < 4; i++) {
		if (hi[i] < 0) {
			if (i == 3)
				close(3);
			continue;
		}
		if (dup2(hi[i], i) < 0)
			goto fail;
	}
	r.step = EXEC_EXEC;
	execve(x->path, x->argv, envp);
fail:
	r.err = errno;
	(void)!write(rep, &r, sizeof(r));
	_exit(127);
}

int ra_child_spawn(const struct ra_spawn *x, const char *what, struct rootasm_error *e)
{
	_cleanup_close_ int rep_rd = -EBADF, rep_wr = -EBADF, null = -EBADF, pidfd = -EBADF;
	int hi[4] = { -1, -1, -1, -1 }, p[2], pfd = -1, r = 0;
	struct clone_args ca = {
		.flags = CLONE_PIDFD | CLONE_CLEAR_SIGHAND | (x->attach_fd >= 0 ? CLONE_NEWNS : 0),
		.exit_signal = 0,
	};
	struct ra_child_report rep;
	pid_t ppid = getpid();
	siginfo_t si;
	long pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return ra_err(e, errno, -EBADF, "pipe", what, NULL);
	rep_rd = p[0];
	rep_wr = p[1];
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0)
		return ra_err(e, errno, -EBADF, "open", "/dev/null", NULL);
	for (int i = 0; i < 4; i++) {
		int src = x->fds[i] >= 0 ? x->fds[i] : i < 3 ? null : -1;

		if (src >= 0 && (hi[i] = fcntl(src, F_DUPFD_CLOEXEC, 10)) < 0) {
			r = ra_err(e, errno, -EBADF, "dup", what, NULL);
			goto out;
		}
	}
	ca.pidfd = (uint64_t)(uintptr_t)&pfd;
	pid = syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid == 0)
		spawn_child(x, ppid, rep_wr, hi);
	if (pid < 0) {
		r = ra_err(e, errno, -EBADF, "clone3", what, NULL);
		goto out;
	}
	pidfd = pfd;
	close_fdp(&rep_wr);
	rep_wr = -EBADF;
	/* the program's exit, then (never blocking) whether it reported a failure before its exec */
	while (waitid(P_PIDFD, pidfd, &si, WEXITED | __WALL) < 0) {
		if (errno != EINTR) {
			r = ra_err(e, errno, -EBADF, "waitid", what, NULL);
			goto out;
		}
	}
	if (fcntl(rep_rd, F_SETFL, O_NONBLOCK) == 0 && read(rep_rd, &rep, sizeof(rep)) == sizeof(rep)) {
		char op[ROOTASM_ERR_OP_MAX];

		snprintf(op, sizeof(op), "%s %s", what, spawn_steps[rep.step]);
		r = ra_err(e, rep.err, -EBADF, op, x->path, step_hint(op, rep.err) ? "%s" : NULL,
			   step_hint(op, rep.err));
	} else if (si.si_code == CLD_EXITED && si.si_status != 0) {
		r = ra_err(e, EIO, -EBADF, what, x->path, "exited with status %d", si.si_status);
	} else if (si.si_code != CLD_EXITED) {
		r = ra_err(e, EINTR, -EBADF, what, x->path, "killed by signal %d (%s)", si.si_status,
			   sigdescr_np(si.si_status) ? sigdescr_np(si.si_status) : "?");
	}
out:
	for (int i = 0; i < 4; i++)
		if (hi[i] >= 0)
			close(hi[i]);
	return r;
}
