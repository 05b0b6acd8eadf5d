/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helper processes, one way for all of them:
 *
 *   clone3(CLONE_PIDFD | CLONE_CLEAR_SIGHAND [| CLONE_FILES] | extra, exit_signal 0)
 *     child:  PR_SET_PDEATHSIG(SIGKILL) (and gone at once if the parent already is),
 *             fn(arg, &step), one report {step, errno} on a pipe, _exit
 *     parent: waits in poll() for the report or the child's exit (its pidfd),
 *             then waitid(P_PIDFD, WEXITED | __WALL) and checks the status
 *
 * No exit signal: a SIGCHLD handler of the caller never sees the child, and
 * waitpid(-1) without __WALL cannot reap it. No sleeps: the parent blocks on
 * the pipe and the pidfd, a held child (RA_CHILD_HOLD) on a byte from the
 * parent. Nothing waits for an EOF: in a multi-threaded caller, children of
 * other threads hold copies of our pipes. Helpers share our fd table
 * (RA_CHILD_FILES) and so hold no copies of anyone's fds themselves.
 *
 * fn runs right after clone3 in what may be a multi-threaded process: it may
 * only make system calls (raw ones for set*id/setgroups/capset: glibc's
 * wrappers signal the parent's threads) and must not allocate.
 */
#ifndef ROOTASM_CHILD_H
#define ROOTASM_CHILD_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "rootasm.h"

#define RA_CHILD_HOLD		0x1u	/* after fn, wait until the parent lets go (ra_child_finish) */
#define RA_CHILD_FILES		0x2u	/* share the fd table (CLONE_FILES): a short helper */

struct ra_child {
	int pidfd;
	pid_t pid;
	int report;			/* read end of the report pipe */
	int hold;			/* write end of the hold pipe (RA_CHILD_HOLD) */
	int child_ends[2];		/* RA_CHILD_FILES: the child's pipe ends, closed once it is reaped */
	unsigned int flags;
	bool reported;			/* ra_child_read_report() got the report: it is in last */
	int32_t last_step, last_err;
};

struct ra_child_report {
	int32_t step;			/* index into the caller's step names */
	int32_t err;			/* positive errno, 0 = fn succeeded */
};

/* fn returns 0 or -errno and sets *step to what it was doing. */
typedef int (*ra_child_fn)(void *arg, int *step);

/*
 * Start a child running @fn(@arg). @what names the helper in errors.
 * On success @c owns a pidfd and pipes: end with ra_child_finish() or ra_child_kill().
 */
int ra_child_start(struct ra_child *c, uint64_t clone_flags, unsigned int flags, ra_child_fn fn, void *arg,
		   const char *what, struct rootasm_error *e);

/*
 * Let a held child go, read its report and reap it. Returns 0 when fn
 * succeeded and the child exited 0; otherwise fills @e: the step (from
 * @steps, NULL-terminated or NULL) and errno from the report, or how the child
 * died (a signal, an exit status) when it sent none.
 */
int ra_child_finish(struct ra_child *c, const char *what, const char *const *steps, struct rootasm_error *e);

/*
 * In the child: report success now, from a fn that goes on running (the
 * parent's ra_child_read_report() returns with err 0); fn must not return 0 after it.
 */
void ra_child_report_ready(int step);

/* In the child: the fd its report goes to (what it keeps when it closes the rest). */
int ra_child_report_fd(void);

/* Kill and reap the child (error paths); closes everything. */
void ra_child_kill(struct ra_child *c);

/* Reap the child: waitid(P_PIDFD) into @si; closes the pidfd. */
int ra_child_wait(struct ra_child *c, siginfo_t *si);

/*
 * Wait for the report: 1 when it came, 0 when the child ended without one, -errno.
 * The pipe holds one report: once read, later calls (ra_child_finish() too) get it again.
 */
int ra_child_read_report(struct ra_child *c, struct ra_child_report *r);

#endif

/*
 * Run a program: clone3 (no exit signal, PR_SET_PDEATHSIG) and execve(),
 * then wait for it through its pidfd. The child gets @fds[0..3] as its fds
 * 0-3 (a negative one: /dev/null for 0-2, closed for 3) and nothing else,
 * and a fixed environment (PATH=/usr/sbin:/usr/bin:/sbin:/bin, LC_ALL=C).
 * With @attach_fd >= 0 it runs in a mount namespace of its own (private
 * propagation) where the detached mount @attach_fd is attached at
 * @attach_at first: for tools that resolve their paths by name; then
 * @tmp_fd (-1: none), a detached mount, is attached at /tmp.
 * Returns 0 when it exited 0; otherwise fills @e (exec failure, status or signal).
 */
struct ra_spawn {
	const char *path;		/* absolute path of the program */
	char *const *argv;
	int fds[4];
	int attach_fd;
	const char *attach_at;
	int tmp_fd;			/* a mount moved onto /tmp (programs that use tmpfile()); -1: none */
};

int ra_child_spawn(const struct ra_spawn *x, const char *what, struct rootasm_error *e);
