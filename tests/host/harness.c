// SPDX-License-Identifier: LGPL-2.1-or-later
#include <fcntl.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
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
	printf("1..%d\n", n);
	n = 0;
	for (int i = 0; i < ntests; i++) {
		int status;
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
