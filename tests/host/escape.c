// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * escape: attempts to get out of a `rootasm exec` container, run inside it
 * (a static, non-PIE binary copied into a test layer: its strings live below
 * 4 GiB, so they can be passed through the i386 ABI). Each attempt prints one
 * line, "ESCAPED <what>" when it worked and "denied <what>: <errno name>"
 * otherwise; the host tests read these lines.
 *
 *   escape fd N PATH      openat(N, PATH): an fd inherited from the caller
 *   escape handle PATH    name_to_handle_at + open_by_handle_at on PATH's filesystem
 *   escape ptrace         PTRACE_ATTACH to pid 1 (the container's init)
 *   escape sysctl         /proc/sys/kernel/core_pattern and /proc/sys/vm/drop_caches
 *                         opened for writing (a kernel without CONFIG_COREDUMP has
 *                         no core_pattern; every kernel with sysctl has drop_caches)
 *   escape mount          mount and fsopen through the x86_64, i386 (int $0x80) and x32 ABIs
 *   escape userns         unshare, clone and clone3 with CLONE_NEWUSER
 *   escape status         CapEff, CapBnd, NoNewPrivs and Seccomp of this process
 *   escape abi            which ABIs this kernel runs: "i386 yes|no", "x32 yes|no" (getpid through each)
 *   escape tty            TIOCSTI (push "x" into a terminal's input) on fd 0 and on /dev/tty (the
 *                         controlling terminal, if any); then "tty_nr N" (of /proc/self/stat: 0 is
 *                         no controlling terminal)
 *   escape tty-steal      setsid, TIOCSCTTY on fd 0 (a tty that is no session's controlling terminal
 *                         becomes ours), then TIOCSTI on it, also with cmd's upper 32 bits set
 *
 * A kernel without IA32 emulation answers int $0x80 with a fault: that is
 * caught and reported as "denied ...: NOABI".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/sched.h>

#define ENOABI 4096	/* no such errno: "this kernel has no i386 ABI" */

static int report(long r, const char *what)
{
	if (r >= 0)
		printf("ESCAPED %s\n", what);
	else
		printf("denied %s: %s\n", what, errno == ENOABI ? "NOABI" : strerrorname_np(errno) ? strerrorname_np(errno) : "?");
	return 0;
}

static sigjmp_buf noabi;

static void on_fault(int sig)
{
	siglongjmp(noabi, 1);
}


/* An i386 system call from a 64-bit process: the kernel takes it through the ia32 table. */
static long int80(long nr, long a, long b, long c, long d, long e)
{
	long ret;

	signal(SIGSEGV, on_fault);
	if (sigsetjmp(noabi, 1)) {
		errno = ENOABI;
		return -1;
	}
	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr), "b"(a), "c"(b), "d"(c), "S"(d), "D"(e) : "memory");
	signal(SIGSEGV, SIG_DFL);
	if (ret < 0 && ret > -4096) {
		errno = -ret;
		return -1;
	}
	return ret;
}

#define X32_BIT 0x40000000L

int main(int argc, char **argv)
{
	static char src[] = "none", dst[] = "/tmp", fs[] = "tmpfs";

	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "fd") && argc == 4)
		return report(openat(atoi(argv[2]), argv[3], O_RDONLY | O_CLOEXEC), "fd");
	if (!strcmp(argv[1], "handle") && argc == 3) {
		struct {
			struct file_handle h;
			unsigned char buf[128];
		} fh = { .h.handle_bytes = 128 };
		int mnt;

		if (name_to_handle_at(AT_FDCWD, argv[2], &fh.h, &mnt, 0) < 0)
			return report(-1, "name_to_handle_at");
		return report(open_by_handle_at(open(argv[2], O_RDONLY | O_CLOEXEC), &fh.h, O_RDONLY), "open_by_handle_at");
	}
	if (!strcmp(argv[1], "ptrace"))
		return report(ptrace(PTRACE_ATTACH, 1, NULL, NULL), "ptrace pid 1");
	if (!strcmp(argv[1], "sysctl")) {
		report(open("/proc/sys/kernel/core_pattern", O_WRONLY | O_CLOEXEC), "write core_pattern");
		report(open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC), "write drop_caches");
		return 0;
	}
	if (!strcmp(argv[1], "mount")) {
		report(syscall(SYS_mount, src, dst, fs, 0, NULL), "mount x86_64");
		report(syscall(SYS_fsopen, fs, 0), "fsopen x86_64");
		report(int80(21 /* mount */, (long)src, (long)dst, (long)fs, 0, 0), "mount i386");
		report(int80(430 /* fsopen */, (long)fs, 0, 0, 0, 0), "fsopen i386");
		report(syscall(165 /* mount */ | X32_BIT, src, dst, fs, 0, NULL), "mount x32");
		report(syscall(467 /* open_tree_attr */, AT_FDCWD, "/", 1, NULL, 0), "open_tree_attr x86_64");
		report(int80(467, AT_FDCWD, (long)dst, 1, 0, 0), "open_tree_attr i386");
		return 0;
	}
	if (!strcmp(argv[1], "userns")) {
		struct clone_args ca = { .flags = CLONE_NEWUSER, .exit_signal = SIGCHLD };
		long pid;

		report(unshare(CLONE_NEWUSER), "unshare CLONE_NEWUSER");
		pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, 0);
		if (pid == 0)
			_exit(0);
		if (pid > 0)
			waitpid(pid, NULL, 0);
		report(pid, "clone CLONE_NEWUSER");
		pid = syscall(SYS_clone3, &ca, sizeof(ca));
		if (pid == 0)
			_exit(0);
		if (pid > 0)
			waitpid(pid, NULL, 0);
		return report(pid, "clone3 CLONE_NEWUSER");
	}
	if (!strcmp(argv[1], "abi")) {
		printf("i386 %s\n", int80(20 /* getpid */, 0, 0, 0, 0, 0) > 0 ? "yes" : "no");
		printf("x32 %s\n", syscall(39 /* getpid */ | X32_BIT) > 0 ? "yes" : "no");
		return 0;
	}
	if (!strcmp(argv[1], "tty")) {
		char stat[1024] = "", *rp;
		int fd, tty_nr = -1, n;

		report(ioctl(0, TIOCSTI, "x"), "tiocsti fd 0");
		fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
		report(fd, "open /dev/tty");
		if (fd >= 0)
			report(ioctl(fd, TIOCSTI, "x"), "tiocsti /dev/tty");
		fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
		n = fd < 0 ? -1 : read(fd, stat, sizeof(stat) - 1);
		stat[n > 0 ? n : 0] = '\0';
		/* "pid (comm) state ppid pgrp session tty_nr ..." */
		rp = strrchr(stat, ')');
		if (!rp || sscanf(rp + 1, " %*c %*d %*d %*d %d", &tty_nr) != 1)
			return 1;
		printf("tty_nr %d\n", tty_nr);
		return 0;
	}
	if (!strcmp(argv[1], "tty-steal")) {
		/* a tty that is no session's controlling terminal: taken as ours, then input pushed into it */
		report(setsid(), "setsid");
		report(ioctl(0, TIOCSCTTY, 0), "tiocsctty fd 0");
		report(ioctl(0, TIOCSTI, "x"), "tiocsti stolen");
		/* the kernel reads cmd as an unsigned int: the same request with upper bits set */
		report(syscall(SYS_ioctl, 0, (unsigned long)TIOCSTI | (1UL << 32), "x"), "tiocsti stolen, upper bits");
		return 0;
	}
	if (!strcmp(argv[1], "status")) {
		char line[256];
		FILE *f = fopen("/proc/self/status", "r");

		while (f && fgets(line, sizeof(line), f))
			if (!strncmp(line, "CapEff", 6) || !strncmp(line, "CapBnd", 6) || !strncmp(line, "NoNewPrivs", 10) ||
			    !strncmp(line, "Seccomp:", 8) || !strncmp(line, "CapAmb", 6))
				fputs(line, stdout);
		return 0;
	}
	return 2;
}
