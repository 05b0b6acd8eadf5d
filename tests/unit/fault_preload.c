// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * LD_PRELOAD=fault_preload.so: the Nth allocation of the process fails
 * (ROOTASM_FAULT_AT=N, N >= 1; malloc, calloc and realloc count, glibc's own
 * calls included: glibc lets its allocator be replaced). With
 * ROOTASM_FAULT_COUNT_FD=FD the number of allocations made is written to FD at
 * exit, to learn the range of N. cli_oom.py drives it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

static long fail_at = -1, calls;

__attribute__((constructor)) static void init(void)
{
	const char *s = getenv("ROOTASM_FAULT_AT");

	calls = 0;
	fail_at = s ? strtol(s, NULL, 10) : -1;
}

__attribute__((destructor)) static void report(void)
{
	const char *s = getenv("ROOTASM_FAULT_COUNT_FD");

	if (s)
		dprintf(atoi(s), "%ld\n", calls);
}

static int fail_now(void)
{
	if (++calls == fail_at) {
		errno = ENOMEM;
		return 1;
	}
	return 0;
}

void *malloc(size_t n)
{
	return fail_now() ? NULL : __libc_malloc(n);
}

void *calloc(size_t a, size_t b)
{
	return fail_now() ? NULL : __libc_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
	return fail_now() ? NULL : __libc_realloc(p, n);
}
