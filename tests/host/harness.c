// SPDX-License-Identifier: LGPL-2.1-or-later
#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

static struct test *tests;
static int ntests;

/* Runs from constructors: no test may be dropped, so running out of memory here is fatal. */
void harness_register(const char *name, void (*fn)(void))
{
	struct test *t = realloc(tests, (ntests + 1) * sizeof(*tests));

	if (!t) {
		fprintf(stderr, "harness: out of memory registering %s\n", name);
		abort();
	}
	tests = t;
	tests[ntests++] = (struct test){ name, fn };
}

ssize_t harness_proc_read(const char *pid, const char *file, char *buf, size_t size)
{
	char p[300];
	ssize_t len;
	int fd;

	if (pid[0] < '1' || pid[0] > '9' || size < 1)
		return -1;
	snprintf(p, sizeof(p), "/proc/%s/%s", pid, file);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = read(fd, buf, size - 1);
	close(fd);
	if (len < 0)
		return -1;
	buf[len] = '\0';
	return len;
}

/*
 * Our children, found by their ppid in /proc/PID/stat (the guest kernel has no
 * CONFIG_PROC_CHILDREN); up to @max of them.
 */
int harness_children(pid_t *out, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t me = getpid();
	int n = 0;

	while (d && n < max && (de = readdir(d))) {
		char buf[1024], *rp;
		int ppid;
		char state;

		if (harness_proc_read(de->d_name, "stat", buf, sizeof(buf)) <= 0)
			continue;
		/* "pid (comm) state ppid ...": comm may hold spaces and parentheses */
		rp = strrchr(buf, ')');
		if (rp && sscanf(rp + 1, " %c %d", &state, &ppid) == 2 && ppid == me)
			out[n++] = atoi(de->d_name);
	}
	if (d)
		closedir(d);
	return n;
}

/*
 * The harness is a child subreaper: whatever a test leaves running (a helper it forked
 * and never reaped, a process orphaned when the test was killed by its alarm) is
 * reparented here, where it would otherwise hold the suite's stdout open forever.
 * Orphans that have exited, or exit within a second (dying of their parent death
 * signal), are reaped quietly; the rest are named, killed and counted, descendants
 * included (they are reparented here in turn). A child stays ours, and its pid
 * unused, until we reap it: kill() cannot reach another process.
 */
static int reap_strays(void)
{
	struct timespec t0, t;
	pid_t kids[256];
	int n = 0, nk;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((nk = harness_children(kids, 256)) > 0) {
		for (int i = 0; i < nk; i++) {
			pid_t c = kids[i];
			char cp[64], cmd[256] = "";
			ssize_t cl;
			int cfd;

			for (;;) {
				if (waitpid(c, NULL, WNOHANG) != 0)
					goto next;	/* it was on its way out */
				clock_gettime(CLOCK_MONOTONIC, &t);
				if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > 1000)
					break;
				usleep(10000);
			}
			snprintf(cp, sizeof(cp), "/proc/%d/cmdline", (int)c);
			cfd = open(cp, O_RDONLY | O_CLOEXEC);
			cl = cfd < 0 ? -1 : read(cfd, cmd, sizeof(cmd) - 1);
			if (cfd >= 0)
				close(cfd);
			for (ssize_t k = 0; k < cl; k++)
				if (!cmd[k])
					cmd[k] = ' ';
			fprintf(stderr, "  stray process %d: %s\n", (int)c, cl > 0 ? cmd : "?");
			kill(c, SIGKILL);
			waitpid(c, NULL, 0);
			n++;
next:;
		}
	}
	return n;
}

int harness_scale(int n, int light)
{
	const char *s = getenv("ROOTASM_TEST_LIGHT");

	return s && *s && strcmp(s, "0") ? light : n;
}

int harness_main(int argc, char **argv)
{
	int pass = 0, fail = 0, skip = 0, n = 0;
	const char *filter = getenv("TEST_FILTER");

	if (geteuid() != 0) {
		/* CI runs these as root: without root they fail, they do not pass by skipping */
		printf("1..0 # host tests need root\nnot ok 1 not running as root\n");
		return 1;
	}
	for (int i = 0; i < ntests; i++) {
		if (filter && fnmatch(filter, tests[i].name, 0))
			continue;
		n++;
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
		perror("harness: PR_SET_CHILD_SUBREAPER");
		return 1;
	}
	printf("1..%d\n", n);
	n = 0;
	for (int i = 0; i < ntests; i++) {
		int status, strays;
		pid_t pid;

		if (filter && fnmatch(filter, tests[i].name, 0))
			continue;
		n++;
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			alarm(120);
			if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
				perror("unshare/private");
				_exit(1);
			}
			tests[i].fn();
			_exit(0);
		}
		waitpid(pid, &status, 0);
		strays = reap_strays();
		if (strays) {
			fprintf(stderr, "  %s left %d process%s running (killed)\n", tests[i].name, strays,
				strays == 1 ? "" : "es");
			if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
				status = 1 << 8;	/* a passing test cleans up after itself */
		}
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			printf("ok %d %s\n", n, tests[i].name);
			pass++;
		} else if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
			printf("ok %d %s # SKIP\n", n, tests[i].name);
			skip++;
		} else {
			printf("not ok %d %s%s%s\n", n, tests[i].name,
			       WIFSIGNALED(status) ? " # killed by " : "",
			       WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "");
			fail++;
		}
	}
	printf("%d passed, %d failed, %d skipped\n", pass, fail, skip);
	return fail ? 1 : 0;
}

char fix[4096];

char *path(const char *rel)
{
	static char buf[8][4096];
	static int i;

	i = (i + 1) % 8;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", fix, rel);
	return buf[i];
}

void sh(const char *fmt, ...)
{
	char cmd[16384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (system(cmd) != 0) {
		fprintf(stderr, "fixture command failed: %s\n", cmd);
		exit(2);
	}
}

char *slurp(const char *p)
{
	static char buf[1 << 18];
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	ssize_t n, len = 0;

	if (fd < 0)
		return NULL;
	while ((n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	close(fd);
	if (n < 0)
		return NULL;
	buf[len] = '\0';
	return buf;
}

/* Run a shell command; its stdout+stderr into *out (static). Returns its exit status. */
int run_sh(char **out, const char *fmt, ...)
{
	static char buf[1 << 16];
	char cmd[16384];
	size_t n = 0;
	va_list ap;
	FILE *f;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd) - 8, fmt, ap);
	va_end(ap);
	strcat(cmd, " 2>&1");
	f = popen(cmd, "r");
	if (!f)
		FAILF("popen %s", cmd);
	while (n < sizeof(buf) - 1 && fgets(buf + n, sizeof(buf) - n, f))
		n += strlen(buf + n);
	buf[n] = '\0';
	st = pclose(f);
	if (out)
		*out = buf;
	if (getenv("OCI_TEST_VERBOSE") || getenv("HARNESS_VERBOSE"))
		fprintf(stderr, "$ %s\n%s[exit %d]\n", cmd, buf, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int count_mounts_under(const char *prefix)
{
	char line[8192];
	int n = 0;
	FILE *f = fopen("/proc/self/mountinfo", "r");

	while (f && fgets(line, sizeof(line), f)) {
		char mp[4096];

		if (sscanf(line, "%*s %*s %*s %*s %4095s", mp) == 1 && !strncmp(mp, prefix, strlen(prefix)))
			n++;
	}
	if (f)
		fclose(f);
	return n;
}

void crun_env(void)
{
	struct statfs sf;

	if (system("command -v crun >/dev/null") != 0)
		FAILF("crun is not installed (ci/deps installs it)");
	/*
	 * crun (runc's cloned_binary.c) makes a scratch file in this directory, else in
	 * /tmp, and removes it before it goes on: a crun these tests kill midway (they do,
	 * on purpose) would leave it in the host's /tmp
	 */
	sh("mkdir -p %s/crun-scratch", fix);
	setenv("_LIBCONTAINER_STATEDIR", path("crun-scratch"), 1);
	if (statfs("/sys/fs/cgroup", &sf) == 0 && sf.f_type == 0x63677270)
		return;
	sh("umount -R /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup");
}
