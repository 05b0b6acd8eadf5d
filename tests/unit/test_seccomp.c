// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The exec profile (tools/seccomp-gen.c's BPF, compiled in), run by a small
 * classic-BPF interpreter on seccomp_data the kernel could give it: what a
 * running kernel cannot be made to show (an architecture this machine does not
 * have, each ABI's numbers, an ioctl's upper bits) is judged here.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <cmocka.h>

#include "exec.h"

#define X32_BIT 0x40000000u
#define AUDIT_ARCH_AARCH64_ 0xC00000B7u

/* The program's verdict for @d: the kernel's classic BPF, as much of it as a seccomp filter may use. */
static uint32_t run(const struct sock_filter *f, unsigned short len, const struct seccomp_data *d)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 };

	for (unsigned short pc = 0; pc < len; pc++) {
		const struct sock_filter *i = &f[pc];

		switch (i->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			assert_true(i->k % 4 == 0 && i->k + 4 <= sizeof(*d));
			memcpy(&a, (const char *)d + i->k, 4);
			break;
		case BPF_LD | BPF_MEM:
			a = mem[i->k];
			break;
		case BPF_LDX | BPF_MEM:
			x = mem[i->k];
			break;
		case BPF_ST:
			mem[i->k] = a;
			break;
		case BPF_STX:
			mem[i->k] = x;
			break;
		case BPF_ALU | BPF_AND | BPF_K:
			a &= i->k;
			break;
		case BPF_ALU | BPF_OR | BPF_K:
			a |= i->k;
			break;
		case BPF_MISC | BPF_TAX:
			x = a;
			break;
		case BPF_MISC | BPF_TXA:
			a = x;
			break;
		case BPF_JMP | BPF_JA:
			pc += i->k;
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
			pc += a == i->k ? i->jt : i->jf;
			break;
		case BPF_JMP | BPF_JGT | BPF_K:
			pc += a > i->k ? i->jt : i->jf;
			break;
		case BPF_JMP | BPF_JGE | BPF_K:
			pc += a >= i->k ? i->jt : i->jf;
			break;
		case BPF_JMP | BPF_JSET | BPF_K:
			pc += a & i->k ? i->jt : i->jf;
			break;
		case BPF_RET | BPF_K:
			return i->k;
		default:
			fail_msg("instruction %u: opcode 0x%04x the interpreter does not know", pc, i->code);
		}
	}
	fail_msg("the program ran off its end");
	return 0;
}

static struct seccomp_data call(uint32_t arch, int nr, uint64_t a0, uint64_t a1)
{
	return (struct seccomp_data){ .nr = nr, .arch = arch, .args = { a0, a1 } };
}

#define DENY	(SECCOMP_RET_ERRNO | EPERM)
#define NOSYS	(SECCOMP_RET_ERRNO | ENOSYS)

static uint32_t both(int which, struct seccomp_data d)
{
	return which ? run(ra_profile_deny_mount, ra_profile_deny_mount_len, &d) :
		       run(ra_profile_allow_mount, ra_profile_allow_mount_len, &d);
}

/* An ABI this kernel does not run: the process is killed (no syscall number of it means anything here). */
static void test_unknown_arch_is_killed(void **state)
{
	(void)state;
	for (int p = 0; p < 2; p++) {
		assert_int_equal(both(p, call(AUDIT_ARCH_AARCH64_, 0, 0, 0)), SECCOMP_RET_KILL_PROCESS);
		assert_int_equal(both(p, call(AUDIT_ARCH_AARCH64_, 467, 0, 0)), SECCOMP_RET_KILL_PROCESS);
	}
}

/* What is denied, on x86_64, i386 and x32 alike; what is not, allowed. */
static void test_abis(void **state)
{
	(void)state;
	for (int p = 0; p < 2; p++) {
		assert_int_equal(both(p, call(AUDIT_ARCH_X86_64, 39 /* getpid */, 0, 0)), SECCOMP_RET_ALLOW);
		assert_int_equal(both(p, call(AUDIT_ARCH_I386, 20 /* getpid */, 0, 0)), SECCOMP_RET_ALLOW);
		assert_int_equal(both(p, call(AUDIT_ARCH_X86_64, 250 /* keyctl */, 0, 0)), DENY);
		assert_int_equal(both(p, call(AUDIT_ARCH_I386, 288 /* keyctl */, 0, 0)), DENY);
		assert_int_equal(both(p, call(AUDIT_ARCH_X86_64, 250 | X32_BIT, 0, 0)), DENY);
		assert_int_equal(both(p, call(AUDIT_ARCH_X86_64, 435 /* clone3 */, 0, 0)), NOSYS);
	}
	/* the mount API, by libseccomp's numbers and by the prefix's (open_tree_attr: newer than libseccomp 2.5) */
	assert_int_equal(both(1, call(AUDIT_ARCH_X86_64, 165 /* mount */, 0, 0)), DENY);
	assert_int_equal(both(1, call(AUDIT_ARCH_X86_64, 467, 0, 0)), DENY);
	assert_int_equal(both(1, call(AUDIT_ARCH_I386, 467, 0, 0)), DENY);
	assert_int_equal(both(1, call(AUDIT_ARCH_X86_64, 467 | X32_BIT, 0, 0)), DENY);
	assert_int_equal(both(0, call(AUDIT_ARCH_X86_64, 165, 0, 0)), SECCOMP_RET_ALLOW);
	assert_int_equal(both(0, call(AUDIT_ARCH_X86_64, 467, 0, 0)), SECCOMP_RET_ALLOW);
}

/* ioctl TIOCSTI and TIOCLINUX: denied whatever the upper 32 bits (the kernel's cmd is an unsigned int). */
static void test_terminal_input(void **state)
{
	(void)state;
	for (int p = 0; p < 2; p++) {
		assert_int_equal(both(p, call(AUDIT_ARCH_X86_64, 16, 0, TIOCSTI)), DENY);
		assert_int_equal(both(p, call(AUDIT_ARCH_X86_64, 16, 0, TIOCSTI | (1ULL << 32))), DENY);
		assert_int_equal(both(p, call(AUDIT_ARCH_X86_64, 16, 0, TIOCLINUX)), DENY);
		assert_int_equal(both(p, call(AUDIT_ARCH_I386, 54, 0, TIOCSTI)), DENY);
		assert_int_equal(both(p, call(AUDIT_ARCH_X86_64, 514 /* x32 ioctl */ | X32_BIT, 0, TIOCSTI)), DENY);
		/* other ioctls of a terminal: allowed (TIOCSCTTY is how --tty's command takes its pty) */
		assert_int_equal(both(p, call(AUDIT_ARCH_X86_64, 16, 0, TCGETS)), SECCOMP_RET_ALLOW);
		assert_int_equal(both(p, call(AUDIT_ARCH_X86_64, 16, 0, TIOCSCTTY)), SECCOMP_RET_ALLOW);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unknown_arch_is_killed),
		cmocka_unit_test(test_abis),
		cmocka_unit_test(test_terminal_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
