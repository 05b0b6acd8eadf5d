// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rootasm-bench: times rootasm and its baselines on the running kernel, in a
 * private mount namespace of its own, and prints one JSON object of raw
 * samples (µs) on stdout. ci/bench/run drives it and does the statistics.
 *
 *   rootasm-bench [-n RUNS] [-w WARMUP] MODE ...
 *
 * The shared cores of a build machine make single numbers noisy, so the modes
 * that compare methods interleave them run by run, in a shuffled order.
 *
 *   compare LAYOUT SPEC TARGET
 *                         per run, in shuffled order:
 *                         A: rootasm_layout_load | rootasm_assemble | close (tree dissolves)
 *                         B: rootasm_assemble | rootasm_attach(TARGET) | close + umount2(DETACH)
 *                         legacy: legacy_build (ends attached at the spec's target) | umount2(DETACH)
 *                         floor: floor_build | move_mount to the target | close + umount2(DETACH)
 *                         fstr: the same with directory layers as "lowerdir+" strings
 *                         A legacy failure (a lowerdir= string over a page) is recorded with the
 *                         kernel's error and log line, and the other methods go on.
 *   legacy SPEC           the legacy method alone
 *   first LAYOUT          one fresh process per run: load, the first assemble (with the
 *                         feature probe), close, then a second assemble in the same process
 *   cli [--umount DIR]... [--cgroup2] -- CMD... [::: CMD...]...
 *                         per run, each CMD in shuffled order: fork+exec (an argument "@N@"
 *                         becomes the run number; a CMD that begins with "@HOSTNS@" runs in
 *                         the mount namespace the harness started in, as a client of a
 *                         daemon there must), wait4 (ru_maxrss, ru_utime, ru_stime),
 *                         then umount2(DIR, MNT_DETACH) for each --umount; series c0_*, c1_*...
 *   conc WORKERS TOTAL LAYOUT SPEC
 *                         TOTAL assemblies (assemble, attach, teardown) spread over WORKERS
 *                         processes that start together, rootasm (B) and legacy in turn;
 *                         wall time per run and latency of each assembly; a method that
 *                         fails is reported ("rootasm_error"/"legacy_error") and dropped
 *   micro DIR IMAGE       the primitives: a detached tmpfs made and dissolved, the loop probe,
 *                         an image layer mounted and dissolved, O_PATH open, open_tree clone,
 *                         stat, realpath, fork+wait
 *   legacy-once SPEC      one legacy_build, left attached (for `cli`: the process-level baseline)
 *   daemon SOCKET LAYOUT  per run, in shuffled order, each assembly then close (the tree dissolves):
 *                         inproc: rootasm_assemble() in this process, no image cache (every image
 *                         layer a new loop device + fsmount);
 *                         cached: the same with a context that has an image cache (in-process);
 *                         via: rootasmd at SOCKET (its cache): connect + request + the fd + close;
 *                         via_conn: the same over one connection kept open
 *
 * Timings are never assertions: a failing workload prints {"error": ...} and exits 3.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <linux/loop.h>
#include <linux/magic.h>

#include "bench.h"
#include "rootasm.h"

#define MAX_SERIES 64

struct series {
	const char *name;
	double *v;
	size_t n;
};

static struct series S[MAX_SERIES];
static size_t nseries;
static const char *mode = "?";

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static double tv_us(const struct timeval *tv)
{
	return tv->tv_sec * 1e6 + tv->tv_usec;
}

static struct series *series(const char *name)
{
	for (size_t i = 0; i < nseries; i++)
		if (!strcmp(S[i].name, name))
			return &S[i];
	if (nseries == MAX_SERIES)
		abort();
	S[nseries].name = strdup(name);
	return &S[nseries++];
}

static void add(const char *name, double v)
{
	struct series *s = series(name);

	s->v = b_grow(s->v, s->n, sizeof(double));
	s->v[s->n++] = v;
}

/* @s as a JSON string into @out (truncated to fit). */
static char *json_esc(const char *s, char *out, size_t size)
{
	size_t n = 0;

	out[n++] = '"';
	for (; *s && n + 8 < size; s++) {
		if (*s == '"' || *s == '\\')
			n += (size_t)snprintf(out + n, size - n, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			n += (size_t)snprintf(out + n, size - n, "\\u%04x", *s);
		else
			out[n++] = *s;
	}
	out[n++] = '"';
	out[n] = '\0';
	return out;
}

static void json_str(const char *s)
{
	char buf[16384];

	fputs(json_esc(s, buf, sizeof(buf)), stdout);
}

static int emit(const char *error, const char *extra_fmt, ...) __attribute__((format(printf, 2, 3)));

/* Print the JSON result; @extra_fmt adds raw members ("k": v, ...). Returns the exit code. */
static int emit(const char *error, const char *extra_fmt, ...)
{
	printf("{\"mode\": ");
	json_str(mode);
	printf(", \"series\": {");
	for (size_t i = 0; i < nseries; i++) {
		printf("%s\"%s\": [", i ? ", " : "", S[i].name);
		for (size_t j = 0; j < S[i].n; j++)
			printf("%s%.2f", j ? ", " : "", S[i].v[j]);
		printf("]");
	}
	printf("}, \"error\": ");
	if (error)
		json_str(error);
	else
		printf("null");
	if (extra_fmt) {
		va_list ap;

		printf(", ");
		va_start(ap, extra_fmt);
		vprintf(extra_fmt, ap);
		va_end(ap);
	}
	printf("}\n");
	fflush(stdout);
	return error ? 3 : 0;
}

static int emit_rootasm(const struct rootasm_error *e)
{
	char buf[8192];

	return emit(rootasm_error_format(e, buf, sizeof(buf)), NULL);
}

static void die(const char *what)
{
	fprintf(stderr, "rootasm-bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The mount namespace the harness started in (private_ns() leaves it), for "@HOSTNS@" commands. */
static int host_ns = -1;

/* A private mount namespace: nothing we mount is seen outside, and all of it goes with us. */
static void private_ns(void)
{
	host_ns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	if (host_ns < 0)
		die("open /proc/self/ns/mnt");
	if (unshare(CLONE_NEWNS) < 0)
		die("unshare(CLONE_NEWNS)");
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		die("make / private");
}

/*
 * A random order of 0..n-1 (fixed seed: runs are repeatable). Each method
 * follows each other one equally often, so what a teardown leaves for later
 * (RCU callbacks, the loop device's release) does not always land on the same
 * method.
 */
static void shuffle(int *order, int n)
{
	static unsigned int seed = 1;

	for (int i = 0; i < n; i++)
		order[i] = i;
	for (int i = n - 1; i > 0; i--) {
		int j = rand_r(&seed) % (i + 1), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
}

static int load(const char *path, struct rootasm_layout **l, struct rootasm_error *e)
{
	memset(e, 0, sizeof(*e));
	return rootasm_layout_load(NULL, path, NULL, l, e);
}

/* ---- the four methods, one run each ------------------------------------------ */

struct cmp {
	const char *layout, *target;
	struct rootasm_layout *l;	/* for B, loaded once */
	struct b_spec s;
	int kfd;			/* /dev/kmsg, at its end */
	bool legacy_failed, floor_failed;
	char legacy_extra[12288];	/* JSON members describing the legacy failure */
	char floor_error[1024];
};

static int spec_or_emit(const char *path, struct b_spec *s)
{
	struct b_err e = { 0 };

	if (spec_load(path, s, &e) < 0) {
		emit(e.what, NULL);
		return -1;
	}
	if (!s->stage || !s->target) {
		emit("spec: needs stage and target", NULL);
		return -1;
	}
	if (s->reldir && chdir(s->reldir) < 0)
		die("chdir relative");
	return 0;
}

/* The kernel log records about overlayfs since @kfd was opened (positioned at the end). */
static void kernel_log(int kfd, char *buf, size_t size)
{
	char rec[1024];
	ssize_t n;

	*buf = '\0';
	while (kfd >= 0 && (n = read(kfd, rec, sizeof(rec) - 1)) > 0) {
		char *text = memchr(rec, ';', (size_t)n);

		rec[n] = '\0';
		if (text && strstr(text, "overlay") && strlen(buf) + (size_t)n < size)
			strcat(buf, strtok(text + 1, "\n"));
	}
}

static int open_kmsg(void)
{
	int kfd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (kfd >= 0)
		lseek(kfd, 0, SEEK_END);	/* to read what the kernel says about a failure */
	return kfd;
}

/* "error": ..., "errno": ..., what the kernel saw of the lowerdir= string and logged. */
static void legacy_error(struct cmp *c, const struct b_err *e)
{
	char klog[1024], k[2100], w[2100], t[4200], *tail = legacy_data_page_tail(&c->s, c->s.stage);

	kernel_log(c->kfd, klog, sizeof(klog));
	snprintf(c->legacy_extra, sizeof(c->legacy_extra),
		 "\"legacy_error\": %s, \"errno\": %d, \"lowerdir_bytes\": %zu, \"page\": %ld, "
		 "\"kernel_log\": %s, \"page_ends_in\": %s", json_esc(e->what, w, sizeof(w)), e->err,
		 legacy_data_len(&c->s, c->s.stage), sysconf(_SC_PAGESIZE), json_esc(klog, k, sizeof(k)),
		 json_esc(tail ? tail : "", t, sizeof(t)));
	free(tail);
	c->legacy_failed = true;
}

static int run_a(struct cmp *c, bool rec)
{
	struct rootasm_error e;
	struct rootasm_layout *l;
	struct rusage r0, r1;
	double t0, t1, t2, t3;
	int fd;

	getrusage(RUSAGE_SELF, &r0);
	t0 = now_us();
	if (load(c->layout, &l, &e) < 0)
		return emit_rootasm(&e);
	t1 = now_us();
	fd = rootasm_assemble(NULL, l, &e);
	t2 = now_us();
	if (fd < 0)
		return emit_rootasm(&e);
	close(fd);
	/* the temporary mounts the context deferred are teardown too: timed with it */
	rootasm_ctx_flush(NULL);
	t3 = now_us();
	getrusage(RUSAGE_SELF, &r1);
	rootasm_layout_free(l);
	if (rec) {
		add("load", t1 - t0);
		add("assemble", t2 - t1);
		add("close", t3 - t2);
		add("cpu_user", tv_us(&r1.ru_utime) - tv_us(&r0.ru_utime));
		add("cpu_sys", tv_us(&r1.ru_stime) - tv_us(&r0.ru_stime));
	}
	return 0;
}

static int run_b(struct cmp *c, bool rec)
{
	struct rootasm_error e = { 0 };
	double t0, t1, t2, t3;
	int fd;

	t0 = now_us();
	fd = rootasm_assemble(NULL, c->l, &e);
	t1 = now_us();
	if (fd < 0 || rootasm_attach(fd, c->target, &e) < 0)
		return emit_rootasm(&e);
	t2 = now_us();
	close(fd);
	if (umount2(c->target, MNT_DETACH) < 0)
		die("umount2 target");
	rootasm_ctx_flush(NULL);
	t3 = now_us();
	if (rec) {
		add("b_assemble", t1 - t0);
		add("b_attach", t2 - t1);
		add("b_teardown", t3 - t2);
	}
	return 0;
}

static int run_legacy(struct cmp *c, bool rec)
{
	struct b_err e = { 0 };
	double t0, t1, t2;

	if (c->legacy_failed)
		return 0;
	t0 = now_us();
	if (legacy_build(&c->s, c->s.stage, c->s.target, &e) < 0) {
		legacy_error(c, &e);
		return 0;
	}
	t1 = now_us();
	if (umount2(c->s.target, MNT_DETACH) < 0)
		die("umount2 target");
	t2 = now_us();
	if (rec) {
		add("legacy_build", t1 - t0);
		add("legacy_teardown", t2 - t1);
	}
	return 0;
}

static int floor_variant(struct cmp *c, bool rec, bool strings, const char *prefix)
{
	struct b_err e = { 0 };
	double t0, t1, t2, t3;
	int fd;

	if (c->floor_failed)
		return 0;
	t0 = now_us();
	fd = floor_build(&c->s, strings, &e);
	if (fd < 0) {
		snprintf(c->floor_error, sizeof(c->floor_error), "%s", e.what);
		c->floor_failed = true;
		return 0;
	}
	t1 = now_us();
	if (move_mount(fd, "", AT_FDCWD, c->s.target, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		die("move_mount target");
	t2 = now_us();
	close(fd);
	if (umount2(c->s.target, MNT_DETACH) < 0)
		die("umount2 target");
	t3 = now_us();
	if (rec) {
		char name[32];

		snprintf(name, sizeof(name), "%s_build", prefix);
		add(name, t1 - t0);
		snprintf(name, sizeof(name), "%s_attach", prefix);
		add(name, t2 - t1);
		snprintf(name, sizeof(name), "%s_teardown", prefix);
		add(name, t3 - t2);
	}
	return 0;
}

static int run_floor(struct cmp *c, bool rec)
{
	return floor_variant(c, rec, false, "floor");
}

static int run_floor_str(struct cmp *c, bool rec)
{
	return floor_variant(c, rec, true, "fstr");
}

static int emit_cmp(struct cmp *c)
{
	char f[2100];

	return emit(NULL, "%s%s\"floor_error\": %s", c->legacy_extra, *c->legacy_extra ? ", " : "",
		    c->floor_failed ? json_esc(c->floor_error, f, sizeof(f)) : "null");
}

static int mode_compare(int runs, int warm, const char *layout, const char *spec, const char *target)
{
	static int (*const methods[])(struct cmp *, bool) = { run_a, run_b, run_legacy, run_floor, run_floor_str };
	const int nm = sizeof(methods) / sizeof(methods[0]);
	static struct cmp c;
	struct rootasm_error e;

	c.layout = layout;
	c.target = target;
	c.kfd = open_kmsg();
	if (spec_or_emit(spec, &c.s) < 0)
		return 3;
	if (load(layout, &c.l, &e) < 0)
		return emit_rootasm(&e);
	for (int i = -warm; i < runs; i++) {
		int order[8];

		shuffle(order, nm);
		for (int k = 0; k < nm; k++) {
			int r = methods[order[k]](&c, i >= 0);

			if (r)
				return r;
		}
	}
	return emit_cmp(&c);
}

static int mode_legacy(int runs, int warm, const char *spec)
{
	static struct cmp c;

	c.kfd = open_kmsg();
	if (spec_or_emit(spec, &c.s) < 0)
		return 3;
	for (int i = -warm; i < runs && !c.legacy_failed; i++)
		run_legacy(&c, i >= 0);
	if (!c.legacy_failed)
		return emit(NULL, NULL);
	return emit("legacy failed", "%s", c.legacy_extra);
}

static int mode_legacy_once(const char *path)
{
	struct b_spec s;
	struct b_err e = { 0 };

	if (spec_or_emit(path, &s) < 0)
		return 3;
	if (legacy_build(&s, s.stage, s.target, &e) < 0) {
		fprintf(stderr, "rootasm-bench: legacy: %s\n", e.what);
		return 1;
	}
	return 0;
}

/* ---- first -------------------------------------------------------------------- */

static int mode_first(int runs, const char *path)
{
	double *shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (shm == MAP_FAILED)
		die("mmap");
	for (int i = 0; i < runs; i++) {
		int status;
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (pid == 0) {
			struct rootasm_error e;
			struct rootasm_layout *l;
			double t[6];
			int fd;

			t[0] = now_us();
			if (load(path, &l, &e) < 0)
				_exit(emit_rootasm(&e));
			t[1] = now_us();
			if ((fd = rootasm_assemble(NULL, l, &e)) < 0)
				_exit(emit_rootasm(&e));
			t[2] = now_us();
			close(fd);
			t[3] = now_us();
			if ((fd = rootasm_assemble(NULL, l, &e)) < 0)
				_exit(emit_rootasm(&e));
			t[4] = now_us();
			close(fd);
			t[5] = now_us();
			for (int k = 0; k < 5; k++)
				shm[k] = t[k + 1] - t[k];
			_exit(0);
		}
		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
			die("waitpid");
		if (WEXITSTATUS(status))
			return WEXITSTATUS(status);	/* the child printed the error */
		add("load", shm[0]);
		add("first_assemble", shm[1]);
		add("first_close", shm[2]);
		add("second_assemble", shm[3]);
		add("second_close", shm[4]);
	}
	return emit(NULL, NULL);
}

/* ---- cli ----------------------------------------------------------------------- */

static int mode_cli(int runs, int warm, int argc, char **argv)
{
	const char *umounts[16];
	char **cmds[16];
	int nu = 0, nc = 0, i;
	struct statfs sf;

	for (i = 0; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--umount") && i + 1 < argc && nu < 16) {
			umounts[nu++] = argv[++i];
		} else if (!strcmp(argv[i], "--cgroup2")) {
			/* crun refuses a hybrid v1/v2 hierarchy; in our namespace, show it cgroup2 */
			if (statfs("/sys/fs/cgroup", &sf) == 0 && sf.f_type != CGROUP2_SUPER_MAGIC &&
			    mount("none", "/sys/fs/cgroup", "cgroup2", 0, NULL) < 0)
				die("mount cgroup2");
		} else {
			fprintf(stderr, "rootasm-bench: cli: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	/* -- CMD ... ::: CMD ... : split in place */
	for (i++; i < argc && nc < 16; i++) {
		cmds[nc++] = &argv[i];
		while (i < argc && strcmp(argv[i], ":::"))
			i++;
		if (i < argc)
			argv[i] = NULL;
	}
	if (!nc || !cmds[0][0]) {
		fprintf(stderr, "rootasm-bench: cli: missing -- CMD\n");
		return 2;
	}
	for (int run = -warm; run < runs; run++) {
		int order[16];

		shuffle(order, nc);
		for (int k = 0; k < nc; k++) {
			int c = order[k], argn = 0, status;
			char *args[256], num[16], name[32];
			struct rusage ru;
			double t0, t1, t2;
			pid_t pid;

			bool hostns = !strcmp(cmds[c][0], "@HOSTNS@");

			snprintf(num, sizeof(num), "%d", run + warm);
			for (char **a = cmds[c] + hostns; *a && argn < 255; a++)
				args[argn++] = strcmp(*a, "@N@") ? *a : num;
			args[argn] = NULL;
			t0 = now_us();
			pid = fork();
			if (pid < 0)
				die("fork");
			if (pid == 0) {
				if (hostns && setns(host_ns, CLONE_NEWNS) < 0)
					_exit(126);
				execvp(args[0], args);
				_exit(127);
			}
			if (wait4(pid, &status, 0, &ru) < 0)
				die("wait4");
			t1 = now_us();
			for (int u = 0; u < nu; u++)
				umount2(umounts[u], MNT_DETACH);
			t2 = now_us();
			if (!WIFEXITED(status) || WEXITSTATUS(status)) {
				char msg[512];

				snprintf(msg, sizeof(msg), "%s %s exited with status %d", args[0], args[1] ? args[1] : "",
					 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
				return emit(msg, "\"failed_cmd\": %d", c);
			}
			if (run < 0)
				continue;
#define ADD(what, v) (snprintf(name, sizeof(name), "c%d_%s", c, what), add(name, v))
			ADD("run", t1 - t0);
			ADD("total", t2 - t0);
			ADD("maxrss_kb", (double)ru.ru_maxrss);
			ADD("cpu_user", tv_us(&ru.ru_utime));
			ADD("cpu_sys", tv_us(&ru.ru_stime));
#undef ADD
		}
	}
	return emit(NULL, NULL);
}

/* ---- conc ---------------------------------------------------------------------- */

/* One assembly, attached at @target and torn down again; 0 or -errno with @msg filled. */
static int one(struct cmp *c, bool legacy, const char *stage, const char *target, char *msg, size_t size)
{
	struct rootasm_error re = { 0 };
	struct b_err e = { 0 };
	int fd;

	if (legacy) {
		if (legacy_build(&c->s, stage, target, &e) < 0) {
			snprintf(msg, size, "%s", e.what);
			return -e.err;
		}
	} else {
		fd = rootasm_assemble(NULL, c->l, &re);
		if (fd < 0 || rootasm_attach(fd, target, &re) < 0) {
			rootasm_error_format(&re, msg, size);
			if (fd >= 0)
				close(fd);
			return -re.err;
		}
		close(fd);
	}
	return umount2(target, MNT_DETACH) < 0 ? -errno : 0;
}

struct conc_shm {
	int next;		/* the next assembly to take */
	int failed;
	char msg[512];
	double lat[];		/* µs per assembly */
};

static void conc_fail(struct conc_shm *shm, const char *msg)
{
	if (!__atomic_exchange_n(&shm->failed, 1, __ATOMIC_SEQ_CST))
		snprintf(shm->msg, sizeof(shm->msg), "%s", msg);
}

/* @total assemblies over @workers processes started together; returns the wall time (µs) or -1. */
static double conc_once(struct cmp *c, bool legacy, int workers, int total, struct conc_shm *shm)
{
	int ready[2], go[2];
	double t0, t1;
	char ch;

	memset(shm, 0, sizeof(*shm) + total * sizeof(double));
	if (pipe(ready) < 0 || pipe(go) < 0)
		die("pipe");
	for (int w = 0; w < workers; w++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (pid == 0) {
			char stage[4096], target[4096], msg[512];

			close(ready[0]);
			close(go[1]);
			snprintf(target, sizeof(target), "%s/w%d", c->s.target, w);
			snprintf(stage, sizeof(stage), "%s/w%d", c->s.stage, w);
			/* Warm up outside the clock: rootasm's feature probe is per process. */
			if (one(c, legacy, stage, target, msg, sizeof(msg)) < 0)
				conc_fail(shm, msg);
			(void)!write(ready[1], "r", 1);
			(void)!read(go[0], &ch, 1);	/* returns 0 when the parent closes go[1] */
			for (;;) {
				int k = __atomic_fetch_add(&shm->next, 1, __ATOMIC_SEQ_CST);
				double a;

				if (k >= total || shm->failed)
					break;
				a = now_us();
				if (one(c, legacy, stage, target, msg, sizeof(msg)) < 0) {
					conc_fail(shm, msg);
					break;
				}
				shm->lat[k] = now_us() - a;
			}
			_exit(0);
		}
	}
	close(ready[1]);
	close(go[0]);
	for (int w = 0; w < workers; w++)
		if (read(ready[0], &ch, 1) != 1)
			die("worker start");
	t0 = now_us();
	close(go[1]);
	while (wait(NULL) > 0)
		;
	t1 = now_us();
	close(ready[0]);
	return shm->failed ? -1 : t1 - t0;
}

static int mode_conc(int runs, int workers, int total, const char *layout, const char *spec)
{
	static struct cmp c;
	struct rootasm_error e;
	struct conc_shm *shm;
	size_t shm_size = sizeof(*shm) + total * sizeof(double);
	char failed[2][600] = { "", "" };	/* rootasm, legacy */

	if (workers < 1 || total < 1)
		return 2;
	if (spec_or_emit(spec, &c.s) < 0)
		return 3;
	if (load(layout, &c.l, &e) < 0)
		return emit_rootasm(&e);
	shm = mmap(NULL, shm_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED)
		die("mmap");
	for (int w = 0; w < workers; w++) {
		char p[4096];

		snprintf(p, sizeof(p), "%s/w%d", c.s.target, w);
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			die("mkdir worker target");
		snprintf(p, sizeof(p), "%s/w%d", c.s.stage, w);
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			die("mkdir worker stage");
	}
	for (int run = 0; run < runs; run++)
		for (int k = 0; k < 2; k++) {
			bool legacy = (k + run) % 2;
			const char *m = legacy ? "legacy" : "rootasm";
			char name[32];
			double wall;

			if (*failed[legacy])
				continue;	/* one method failing does not stop the other */
			wall = conc_once(&c, legacy, workers, total, shm);
			if (wall < 0) {
				snprintf(failed[legacy], sizeof(failed[legacy]), "%s", shm->msg);
				continue;
			}
			snprintf(name, sizeof(name), "%s_wall", m);
			add(name, wall);
			snprintf(name, sizeof(name), "%s_latency", m);
			for (int a = 0; a < total; a++)
				add(name, shm->lat[a]);
		}
	if (*failed[0] || *failed[1]) {
		char r[1300], l[1300];

		return emit(NULL, "\"workers\": %d, \"total\": %d, \"rootasm_error\": %s, \"legacy_error\": %s",
			    workers, total, *failed[0] ? json_esc(failed[0], r, sizeof(r)) : "null",
			    *failed[1] ? json_esc(failed[1], l, sizeof(l)) : "null");
	}
	return emit(NULL, "\"workers\": %d, \"total\": %d", workers, total);
}

/* ---- daemon: rootasmd and the image cache ------------------------------------- */

static int mode_daemon(int runs, int warm, const char *sock, const char *layout)
{
	struct rootasm_cache_opts co = { .size = sizeof(co) };
	struct rootasm_client_assemble_opts o = { .size = sizeof(o), .layout = layout };
	struct rootasm_ctx *cctx = NULL;
	struct rootasm_layout *l = NULL, *lc = NULL;
	struct rootasm_client *keep = NULL;
	struct rootasm_error e = { 0 };
	static const char *const names[] = { "inproc", "cached", "via", "via_conn" };

	if (rootasm_ctx_new(0, &cctx) < 0 || rootasm_ctx_set_cache(cctx, &co) < 0)
		return emit("cannot make a context with a cache", NULL);
	if (load(layout, &l, &e) < 0 || rootasm_layout_load(cctx, layout, NULL, &lc, &e) < 0)
		return emit_rootasm(&e);
	if (rootasm_client_connect(sock, &keep, &e) < 0)
		return emit_rootasm(&e);
	for (int i = -warm; i < runs; i++) {
		int order[4];

		shuffle(order, 4);
		for (int k = 0; k < 4; k++) {
			struct rootasm_client *c = NULL;
			double t0, t1;
			int fd = -1;

			t0 = now_us();
			switch (order[k]) {
			case 0:
				fd = rootasm_assemble(NULL, l, &e);
				break;
			case 1:
				fd = rootasm_assemble(cctx, lc, &e);
				break;
			case 2:
				if (rootasm_client_connect(sock, &c, &e) == 0)
					fd = rootasm_client_assemble(c, &o, &e);
				break;
			default:
				fd = rootasm_client_assemble(keep, &o, &e);
			}
			if (fd < 0)
				return emit_rootasm(&e);
			close(fd);
			rootasm_client_close(c);
			t1 = now_us();
			if (i >= 0)
				add(names[order[k]], t1 - t0);
		}
	}
	rootasm_client_close(keep);
	rootasm_layout_free(l);
	rootasm_layout_free(lc);
	rootasm_ctx_free(cctx);	/* dissolves the in-process cache */
	return emit(NULL, NULL);
}

/* ---- micro: the primitives the numbers above are made of -------------------- */

static int mode_micro(int runs, int warm, const char *dir, const char *image)
{
	struct b_layer img = { .image = true, .path = (char *)image, .fstype = (char *)"squashfs" };
	char dev[64];

	for (int i = -warm; i < runs; i++) {
		struct b_err e = { 0 };
		struct stat st;
		double t[12];
		int fs, fd, ctl, nr;
		char *rp;
		pid_t pid;

		t[0] = now_us();
		/* a detached tmpfs made and dissolved: what each probe step does */
		fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
		if (fs < 0 || fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0 ||
		    (fd = fsmount(fs, FSMOUNT_CLOEXEC, 0)) < 0)
			die("tmpfs");
		close(fs);
		close(fd);
		t[1] = now_us();
		/* the loop probe: LOOP_CTL_GET_FREE + open + close of the free device */
		ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
		nr = ioctl(ctl, LOOP_CTL_GET_FREE);
		snprintf(dev, sizeof(dev), "/dev/loop%d", nr);
		fd = open(dev, O_RDONLY | O_CLOEXEC);
		if (ctl < 0 || nr < 0 || fd < 0)
			die("loop probe");
		close(fd);
		close(ctl);
		t[2] = now_us();
		/* one image layer: loop + fsmount, then dissolved (autoclear frees the device) */
		fd = floor_image(&img, &e);
		if (fd < 0)
			return emit(e.what, NULL);
		close(fd);
		t[3] = now_us();
		fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		close(fd);
		t[4] = now_us();
		fd = open_tree(AT_FDCWD, dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
		close(fd);
		t[5] = now_us();
		if (stat(dir, &st) < 0)
			die("stat");
		t[6] = now_us();
		rp = realpath(dir, NULL);
		free(rp);
		t[7] = now_us();
		pid = fork();
		if (pid == 0)
			_exit(0);
		waitpid(pid, NULL, 0);
		t[8] = now_us();
		if (i < 0)
			continue;
		add("tmpfs_make_dissolve", t[1] - t[0]);
		add("loop_probe", t[2] - t[1]);
		add("image_layer_mount_dissolve", t[3] - t[2]);
		add("opath_open_close", t[4] - t[3]);
		add("open_tree_clone_close", t[5] - t[4]);
		add("stat", t[6] - t[5]);
		add("realpath", t[7] - t[6]);
		add("fork_wait", t[8] - t[7]);
	}
	return emit(NULL, NULL);
}

/* ---- main ---------------------------------------------------------------------- */

static int usage(void)
{
	fprintf(stderr, "usage: rootasm-bench [-n RUNS] [-w WARMUP] compare LAYOUT SPEC TARGET | legacy SPEC | "
			"first LAYOUT | cli [--umount DIR]... [--cgroup2] -- CMD... [::: CMD...]... | "
			"conc WORKERS TOTAL LAYOUT SPEC | micro DIR IMAGE | legacy-once SPEC | daemon SOCKET LAYOUT\n");
	return 2;
}

int main(int argc, char **argv)
{
	int runs = 20, warm = 2, opt;

	while ((opt = getopt(argc, argv, "+n:w:")) != -1) {
		if (opt == 'n')
			runs = atoi(optarg);
		else if (opt == 'w')
			warm = atoi(optarg);
		else
			return usage();
	}
	argc -= optind;
	argv += optind;
	if (argc < 1 || runs < 1 || warm < 0)
		return usage();
	mode = argv[0];
	if (!strcmp(mode, "legacy-once") && argc == 2)
		return mode_legacy_once(argv[1]);	/* runs in its parent's namespace, as the CLI does */
	/*
	 * daemon: in the caller's namespace, where rootasmd runs: a client in
	 * another mount namespace is not an administrator to it. It attaches
	 * nothing (every tree is closed detached), so it needs no namespace of
	 * its own.
	 */
	if (strcmp(mode, "daemon"))
		private_ns();
	signal(SIGPIPE, SIG_IGN);
	if (!strcmp(mode, "compare") && argc == 4)
		return mode_compare(runs, warm, argv[1], argv[2], argv[3]);
	if (!strcmp(mode, "legacy") && argc == 2)
		return mode_legacy(runs, warm, argv[1]);
	if (!strcmp(mode, "first") && argc == 2)
		return mode_first(runs, argv[1]);
	if (!strcmp(mode, "cli"))
		return mode_cli(runs, warm, argc - 1, argv + 1);
	if (!strcmp(mode, "conc") && argc == 5)
		return mode_conc(runs, atoi(argv[1]), atoi(argv[2]), argv[3], argv[4]);
	if (!strcmp(mode, "daemon") && argc == 3)
		return mode_daemon(runs, warm, argv[1], argv[2]);
	if (!strcmp(mode, "micro") && argc == 3)
		return mode_micro(runs, warm, argv[1], argv[2]);
	return usage();
}
