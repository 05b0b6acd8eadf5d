/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A small kselftest-style harness for privileged tests: each TEST() runs in
 * its own forked process, inside its own mount namespace with private
 * propagation, so nothing a test mounts can reach the machine; any process a
 * test leaves running is killed and fails it. A test skips
 * (exit 77 from the child) only with a reason; skips are reported, never
 * counted as passes.
 */
#ifndef ROOTASM_HARNESS_H
#define ROOTASM_HARNESS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct test {
	const char *name;
	void (*fn)(void);
};

void harness_register(const char *name, void (*fn)(void));
int harness_main(int argc, char **argv);

/*
 * @light when ROOTASM_TEST_LIGHT is set (a slow kernel: lockdep + KASAN under TCG, where
 * the point is to walk every path, not to repeat it), else @n.
 */
int harness_scale(int n, int light);
/* Run a fixture shell command; exits 2 (the fixture, not the test, is broken) when it fails. */
void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Our children (by their ppid in /proc/PID/stat: no CONFIG_PROC_CHILDREN needed), up to @max. */
int harness_children(pid_t *out, int max);
/*
 * /proc/@pid/@file into @buf (@size bytes), NUL-terminated: its length, or -1
 * when @pid is not a process's directory name or the file cannot be read.
 */
ssize_t harness_proc_read(const char *pid, const char *file, char *buf, size_t size);
/* The test binary's fixture directory ($TMPDIR/rootasm-...-XXXXXX), set by its main(). */
extern char fix[4096];
/* @rel under fix, in one of 8 rotating static buffers. */
char *path(const char *rel);
/*
 * Run a shell command (printf-style); its stdout+stderr into *out (a static
 * buffer, when @out is not NULL). Returns its exit status (128 + N for signal
 * N). HARNESS_VERBOSE (or OCI_TEST_VERBOSE) prints each command and its output.
 */
int run_sh(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* How many mounts of /proc/self/mountinfo lie at or below @prefix (a string prefix of the mount point). */
int count_mounts_under(const char *prefix);
/*
 * crun in the test's mount namespace: it refuses a hybrid cgroup setup whose
 * v2 hierarchy has controllers, and a plain cgroup2 mount at /sys/fs/cgroup
 * gives it the unified mode (cgroups themselves are off: the tests run it
 * with --cgroup-manager=disabled). Fails the test when crun is missing.
 */
void crun_env(void);
/* The contents of file @p (up to 256 KiB) in a static buffer, or NULL. */
char *slurp(const char *p);

#define TEST(n)								\
	static void test_##n(void);					\
	__attribute__((constructor)) static void reg_##n(void)		\
	{								\
		harness_register(#n, test_##n);				\
	}								\
	static void test_##n(void)

#define FAILF(...) do {							\
		fprintf(stderr, "  %s:%d: ", __FILE__, __LINE__);	\
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
		exit(1);						\
	} while (0)

#define ASSERT_TRUE(c) do { if (!(c)) FAILF("assertion failed: %s", #c); } while (0)
#define ASSERT_EQ(a, b) do {						\
		long long _a = (long long)(a), _b = (long long)(b);	\
		if (_a != _b)						\
			FAILF("%s == %s: %lld != %lld (errno %d %s)", #a, #b, _a, _b, errno, strerror(errno)); \
	} while (0)
#define ASSERT_STR(a, b) do {						\
		const char *_a = (a), *_b = (b);			\
		if (!_a || strcmp(_a, _b))				\
			FAILF("%s == \"%s\": got \"%s\"", #a, _b, _a ? _a : "(null)"); \
	} while (0)
#define ASSERT_CONTAINS(hay, needle) do {				\
		const char *_h = (hay), *_n = (needle);			\
		if (!_h || !strstr(_h, _n))				\
			FAILF("\"%s\" does not contain \"%s\"", _h ? _h : "(null)", _n); \
	} while (0)
#define ASSERT_ERRNO(call, err) do {					\
		errno = 0;						\
		long _r = (long)(call);					\
		if (_r >= 0 || errno != (err))				\
			FAILF("%s: want errno %d (%s), got r=%ld errno %d (%s)", #call, err, strerror(err), _r, errno, strerror(errno)); \
	} while (0)
#define SKIP(...) do {							\
		fprintf(stderr, "  skip: ");				\
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
		exit(77);						\
	} while (0)

#endif
