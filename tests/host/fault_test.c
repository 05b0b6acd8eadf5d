// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Fault injection: the Nth allocation fails, for every N, over the whole
 * load + assembly of a layout that has image and directory layers, an
 * idmapped layer, a tmpfs upper, override_creds, an idmapped bind, tmpfs and
 * image volumes and a nested layout. Each N runs in a forked child (so a
 * crash is counted, not fatal) in a private mount namespace. Every run must
 * either succeed or fail with an error that names an operation and a cause,
 * and leave nothing behind: the child's fds and its heap (glibc's own count
 * of bytes in use) are as before the run, the parent's mountinfo and the
 * loop devices backed by the fixture are as before.
 *
 * malloc/calloc/realloc are interposed here (the executable's definitions win
 * over glibc's for every library in the process, glibc included) and call
 * glibc's own allocator underneath.
 *
 * With ROOTASM_FAULT_CACHE=1 the context has an image cache and assembles
 * twice (the images mounted into the cache, then lent from it).
 *
 * Usage: fault_test  (root). Prints a summary; exits 1 on any failure.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <malloc.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rootasm.h"

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

static long fail_at = -1;	/* armed when > 0 */
static long calls;

/* Where an injected failure happens: a place for a debugger's breakpoint. */
__attribute__((noinline)) static void injected(void)
{
	__asm__ volatile("");
}

static bool fail_now(void)
{
	if (fail_at > 0 && ++calls == fail_at) {
		injected();
		return true;
	}
	return false;
}

void *malloc(size_t n)
{
	if (fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_malloc(n);
}

void *calloc(size_t a, size_t b)
{
	if (fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
	if (fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_realloc(p, n);
}

static char fix[256];

static void sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (system(cmd) != 0) {
		fprintf(stderr, "fixture command failed: %s\n", cmd);
		exit(2);
	}
}

/* The names of our open fds, one string (no allocation: a static buffer). */
static void fds(char *buf, size_t size)
{
	char p[64], l[512];
	size_t used = 0;

	buf[0] = '\0';
	for (int fd = 0; fd < 4096; fd++) {
		ssize_t n;

		if (fcntl(fd, F_GETFD) < 0)
			continue;
		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		n = readlink(p, l, sizeof(l) - 1);
		l[n > 0 ? n : 0] = '\0';
		used += snprintf(buf + used, size - used, "%d->%s\n", fd, l);
		if (used >= size)
			break;
	}
}

static char *slurp(const char *p)
{
	static char buf[1 << 17];
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	ssize_t n, len = 0;

	if (fd < 0)
		return "";
	while ((n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	close(fd);
	buf[len] = '\0';
	return buf;
}

static void loops(char *buf, size_t size)
{
	glob_t g;
	size_t used = 0;

	buf[0] = '\0';
	if (glob("/sys/block/loop*/loop/backing_file", 0, NULL, &g) != 0)
		return;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		const char *s = slurp(g.gl_pathv[i]);

		if (!strncmp(s, fix, strlen(fix)))
			used += snprintf(buf + used, size - used, "%s=%s", g.gl_pathv[i], s);
		if (used >= size)
			break;
	}
	globfree(&g);
}

struct result {
	int status;		/* 0 ok, 1 failed cleanly, 2 failed with a bad message, 3 leaked */
	long calls;		/* allocations the run made while armed */
	char msg[1024];
};

/* One run: armed at @n (0 = not armed). Returns what happened. */
static void one_run(long n, struct result *res)
{
	static char fd_before[16384], fd_after[16384];
	struct rootasm_ctx *ctx = NULL;
	struct rootasm_layout *l = NULL;
	struct rootasm_error e = { 0 };
	char path[512];
	size_t heap;
	int r, fd = -1;
	bool cache = getenv("ROOTASM_FAULT_CACHE") != NULL;

	snprintf(path, sizeof(path), "%s/f.yaml", fix);
	fds(fd_before, sizeof(fd_before));
	heap = mallinfo2().uordblks;
	calls = 0;
	fail_at = n;
	r = rootasm_ctx_new(0, &ctx);
	if (r < 0) {
		e.err = -r;
		snprintf(e.op, sizeof(e.op), "rootasm_ctx_new");
	}
	if (r == 0 && cache && (r = rootasm_ctx_set_cache(ctx, NULL)) < 0) {
		e.err = -r;
		snprintf(e.op, sizeof(e.op), "rootasm_ctx_set_cache");
	}
	if (r == 0)
		r = rootasm_layout_load(ctx, path, NULL, &l, &e);
	if (r == 0 && cache) {
		/* the first assembly fills the cache, the second borrows from it */
		r = fd = rootasm_assemble(ctx, l, &e);
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	if (r >= 0)
		r = fd = rootasm_assemble(ctx, l, &e);
	if (fd >= 0)
		close(fd);
	rootasm_layout_free(l);
	rootasm_ctx_free(ctx);
	fail_at = -1;
	res->calls = calls;
	res->status = 0;
	res->msg[0] = '\0';
	if (r < 0) {
		rootasm_error_format(&e, res->msg, sizeof(res->msg));
		res->status = 1;
		/* an operation and a cause: "op[ path]: cause" with a real errno */
		if (!e.err || !e.op[0] || !strchr(res->msg, ':') || strchr(res->msg, '\n'))
			res->status = 2;
	}
	fds(fd_after, sizeof(fd_after));
	if (strcmp(fd_before, fd_after)) {
		res->status = 3;
		snprintf(res->msg + strlen(res->msg), sizeof(res->msg) - strlen(res->msg), " [fds leaked]");
	}
	if (mallinfo2().uordblks != heap) {
		res->status = 3;
		snprintf(res->msg + strlen(res->msg), sizeof(res->msg) - strlen(res->msg), " [heap %zu -> %zu bytes]",
			 heap, mallinfo2().uordblks);
	}
}

int main(int argc, char **argv)
{
	static char mi0[1 << 17], lo0[8192], lo[8192];
	long n, total = -1, ok = 0, clean = 0, badmsg = 0, leaked = 0, crashed = 0, kernel_leaks = 0;
	char last[1024] = "";

	if (geteuid() != 0) {
		printf("not ok - fault injection needs root\n");
		return 1;
	}
	/* without per-thread caches and fastbins glibc's count of bytes in use is exact */
	if (!getenv("ROOTASM_FAULT_TUNED")) {
		setenv("ROOTASM_FAULT_TUNED", "1", 1);
		setenv("GLIBC_TUNABLES", "glibc.malloc.tcache_count=0:glibc.malloc.mxfast=0", 1);
		execv("/proc/self/exe", argv);
		perror("re-exec");
		return 1;
	}
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		perror("unshare");
		return 1;
	}
	snprintf(fix, sizeof(fix), "%s/rootasm-fault-XXXXXX", getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(fix))
		return 1;
	sh("cd %s && mkdir -p l1/etc l2/etc l2/t data vol && echo base > l1/etc/motd && echo l2 > l2/etc/motd && "
	   "echo hello > data/file && echo vol > vol/volfile && "
	   "mksquashfs l2 l2.sqfs -quiet -no-progress >/dev/null && mksquashfs vol vol.sqfs -quiet -no-progress >/dev/null && "
	   "printf 'version: 1\\nlayers:\\n  - dir: l2\\nmounts:\\n  - { tmpfs: /t }\\n' > sub.yaml", fix);
	sh("cd %s && cat > f.yaml <<'EOF'\n"
	   "version: 1\n"
	   "layers:\n"
	   "  - dir: l1\n"
	   "    idmap: { uids: [\"0:100000:65536\"], gids: [\"0:100000:65536\"] }\n"
	   "  - image: l2.sqfs\n"
	   "upper: { tmpfs: { size: 16M } }\n"
	   "overlay:\n"
	   "  override_creds: { uid: 0, gid: 0, capabilities: [CAP_SYS_ADMIN, CAP_DAC_OVERRIDE, CAP_CHOWN, CAP_FOWNER] }\n"
	   "mounts:\n"
	   "  - { bind: data, target: /data, options: [ro], idmap: { uids: [\"0:200000:1000\"], gids: [\"0:200000:1000\"] } }\n"
	   "  - { tmpfs: /tmp, options: [size=4M, mode=1777] }\n"
	   "  - { image: vol.sqfs, target: /vol }\n"
	   "  - { layout: sub.yaml, target: /sub }\n"
	   "attributes: [nosuid, nodev]\n"
	   "EOF", fix);
	if (getenv("ROOTASM_FAULT_ONLY")) {
		/* one N, in this process: for a debugger */
		struct result res;

		one_run(0, &res);
		one_run(0, &res);
		one_run(atol(getenv("ROOTASM_FAULT_ONLY")), &res);
		printf("status %d calls %ld: %s\n", res.status, res.calls, res.msg);
		sh("rm -rf %s", fix);
		return 0;
	}
	snprintf(mi0, sizeof(mi0), "%s", slurp("/proc/self/mountinfo"));
	loops(lo0, sizeof(lo0));
	for (n = 0;; n++) {
		struct result res;
		int p[2], status;
		pid_t pid;

		if (pipe(p) < 0)
			return 1;
		pid = fork();
		if (pid == 0) {
			/* a warm-up run fills what glibc and the libraries keep for the process */
			one_run(0, &res);
			one_run(0, &res);
			if (res.status == 0 && n)
				one_run(n, &res);
			(void)!write(p[1], &res, sizeof(res));
			_exit(0);
		}
		close(p[1]);
		if (read(p[0], &res, sizeof(res)) != sizeof(res)) {
			waitpid(pid, &status, 0);
			crashed++;
			printf("not ok - allocation %ld: the run crashed (%s)\n", n,
			       WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "no result");
			close(p[0]);
			if (n > 5000)
				break;
			continue;
		}
		close(p[0]);
		waitpid(pid, &status, 0);
		loops(lo, sizeof(lo));
		if (strcmp(slurp("/proc/self/mountinfo"), mi0) || strcmp(lo, lo0)) {
			kernel_leaks++;
			printf("not ok - allocation %ld: a mount or loop device stayed behind\n", n);
		}
		if (n == 0) {
			if (res.status != 0) {
				printf("not ok - the run without injected failures failed: %s\n", res.msg);
				return 1;
			}
			continue;
		}
		if (res.calls < n) {
			/* the run made fewer than n allocations: every point has been failed once */
			total = n - 1;
			break;
		}
		switch (res.status) {
		case 0:
			ok++;
			if (getenv("ROOTASM_FAULT_VERBOSE"))
				printf("ok - allocation %ld: the run succeeded anyway\n", n);
			break;
		case 1:
			clean++;
			snprintf(last, sizeof(last), "%s", res.msg);
			if (getenv("ROOTASM_FAULT_VERBOSE"))
				printf("ok - allocation %ld: %s\n", n, res.msg);
			break;
		case 2:
			badmsg++;
			printf("not ok - allocation %ld: error without an operation and a cause: '%s'\n", n, res.msg);
			break;
		default:
			leaked++;
			printf("not ok - allocation %ld: %s\n", n, res.msg);
		}
	}
	sh("rm -rf %s", fix);
	printf("fault injection: %ld allocations in a run; failing each: %ld failed cleanly, %ld still succeeded, "
	       "%ld bad messages, %ld leaks, %ld kernel-side leaks, %ld crashes\n",
	       total, clean, ok, badmsg, leaked, kernel_leaks, crashed);
	printf("  e.g. %s\n", last);
	return badmsg || leaked || crashed || kernel_leaks || clean == 0 ? 1 : 0;
}
