// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The seccomp profile of `rootasm exec`: allow by default, deny what lets a
 * container reach past its tree or widen the kernel's attack surface.
 *
 * This file is a build-time tool (rootasm-seccomp-gen): it makes the profile
 * with libseccomp and writes it out as C arrays of BPF instructions
 * (seccomp_profile.c in the build tree), which the library compiles in. At
 * run time nothing builds anything: the container's init loads the ready
 * program with one prctl(), for itself and so for the command it forks
 * (building it with libseccomp took ~0.4 ms per exec, and libseccomp is then
 * no run-time dependency).
 *
 * Every ABI the kernel runs is covered: the program checks x86_64, i386
 * (int $0x80 from a 64-bit process is i386) and x32 (the 0x40000000 bit)
 * numbers alike. libseccomp 2.5 does not know syscalls newer than itself: a
 * hand-written block in front of its program denies those by number on all
 * three ABIs and falls through to it otherwise (one filter, not two: each
 * filter costs the kernel a BPF compile when it is loaded).
 *
 * Denied with EPERM (clone3 with ENOSYS, so that libc falls back to clone(),
 * whose flags a filter can read):
 *   mount API        mount umount2 umount open_tree open_tree_attr move_mount fsopen
 *                    fsconfig fsmount fspick mount_setattr pivot_root
 *                    (unless the layout's exec.deny_mount_api is false): no reshaping the root
 *   file handles     open_by_handle_at: opens any file of a filesystem, past the tree's root
 *   kernel code      init_module finit_module delete_module kexec_load kexec_file_load
 *   tracing, bpf     bpf perf_event_open ptrace process_vm_readv process_vm_writev kcmp:
 *                    nothing inspects or injects into another process, pid 1 included
 *   keyrings         add_key request_key keyctl: the keyring is not namespaced
 *   userfaultfd      widens kernel race windows for exploits
 *   io_uring         io_uring_setup io_uring_enter io_uring_register: operations past seccomp
 *   new namespaces   unshare and clone with CLONE_NEWUSER; clone3 (ENOSYS); setns
 *   host state       acct swapon swapoff reboot settimeofday clock_settime clock_adjtime
 *                    adjtimex syslog iopl ioperm quotactl lookup_dcookie uselib nfsservctl
 *                    personality (changes to the execution domain), vhangup
 *   terminal input   ioctl TIOCSTI and TIOCLINUX (compared on the low 32 bits, all the
 *                    kernel reads of the command): a tty the caller handed over that is
 *                    no session's controlling terminal, the command could take as its own
 *                    (setsid, TIOCSCTTY) and push input into; the caller's shell reads it
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct ra_bpf {
	struct sock_filter *insns;
	unsigned short len;
};

static const char *const mount_api[] = {
	"mount", "umount2", "umount", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick",
	"mount_setattr", "pivot_root",
};

static const char *const denied[] = {
	"open_by_handle_at",
	"init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
	"bpf", "perf_event_open", "ptrace", "process_vm_readv", "process_vm_writev", "kcmp",
	"add_key", "request_key", "keyctl",
	"userfaultfd",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"setns",
	"acct", "swapon", "swapoff", "reboot", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
	"syslog", "iopl", "ioperm", "quotactl", "lookup_dcookie", "uselib", "nfsservctl", "personality",
	"vhangup",
};

/* Syscalls libseccomp 2.5 does not know, by number (the same on x86_64 and i386; x32 adds the bit). */
static const unsigned int denied_new[] = {
	467,	/* open_tree_attr (6.15) */
};
#define X32_BIT 0x40000000u

/* Add @name (if this libseccomp and ABI know it) to @ctx with @action. */
static int deny(scmp_filter_ctx ctx, uint32_t action, const char *name, unsigned int nargs, struct scmp_arg_cmp *cmp)
{
	int nr = seccomp_syscall_resolve_name(name), r;

	if (nr == __NR_SCMP_ERROR)
		return 0;	/* unknown to this libseccomp: not on any ABI it knows */
	r = seccomp_rule_add_array(ctx, action, nr, nargs, cmp);
	/* -EDOM/-EFAULT: the syscall does not exist on one of the ABIs */
	return r == -EDOM || r == -EFAULT ? 0 : r;
}

static int export_bpf(scmp_filter_ctx ctx, struct ra_bpf *out)
{
	int fd = memfd_create("rootasm-seccomp", MFD_CLOEXEC), r;
	struct stat st;

	if (fd < 0)
		return -errno;
	r = seccomp_export_bpf(ctx, fd);
	if (r == 0 && fstat(fd, &st) < 0)
		r = -errno;
	if (r == 0 && (st.st_size <= 0 || st.st_size % sizeof(struct sock_filter) ||
		       st.st_size / sizeof(struct sock_filter) > BPF_MAXINSNS))
		r = -E2BIG;
	if (r == 0 && !(out->insns = malloc(st.st_size)))
		r = -ENOMEM;
	if (r == 0 && pread(fd, out->insns, st.st_size, 0) != st.st_size)
		r = -EIO;
	if (r == 0)
		out->len = st.st_size / sizeof(struct sock_filter);
	close(fd);
	return r;
}

/*
 * The prefix: syscalls too new for libseccomp, by number, on every ABI; what
 * it does not deny falls through to libseccomp's program after it.
 *
 *   0      A = arch
 *   1      x86_64?  yes: 3
 *   2      i386?    no: libseccomp's program (another ABI: it rules on it)
 *   3      A = nr
 *   4+2i   nr == denied_new[i]?              yes: DENY
 *   5+2i   nr == denied_new[i] | x32 bit?    yes: DENY
 *   4+2N   jump over DENY: libseccomp's program
 *   5+2N   DENY (EPERM)
 */
static int build_prefix(struct ra_bpf *out)
{
	enum { N = sizeof(denied_new) / sizeof(denied_new[0]) };
	struct sock_filter *f = calloc(6 + 2 * N, sizeof(*f));
	unsigned short n = 0;

	if (!f)
		return -ENOMEM;
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_I386, 0, 2 * N + 3);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	for (unsigned int j = 0; j < 2 * N; j++)
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						      denied_new[j / 2] | (j % 2 ? X32_BIT : 0), 2 * N - j, 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA | BPF_K, 1);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
	out->insns = f;
	out->len = n;
	return 0;
}

/* The profile as one BPF program: the prefix (with the mount API) and libseccomp's program. */
static int build(bool deny_mount_api, struct ra_bpf *out)
{
	struct scmp_arg_cmp newuser = SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER);
	struct scmp_arg_cmp sti = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xFFFFFFFFu, TIOCSTI);
	struct scmp_arg_cmp tlinux = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xFFFFFFFFu, TIOCLINUX);
	struct ra_bpf main_prog = { 0 }, prefix = { 0 };
	scmp_filter_ctx ctx;
	int r = 0;

	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return -ENOMEM;
	/* the same rules on every ABI of this kernel; an unknown ABI is refused outright */
	if (seccomp_arch_add(ctx, SCMP_ARCH_X86) < 0 || seccomp_arch_add(ctx, SCMP_ARCH_X32) < 0)
		r = -EINVAL;
	if (r == 0)
		r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	/* the init sets no_new_privs itself, before loading the program */
	if (r == 0)
		r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	for (size_t i = 0; deny_mount_api && r == 0 && i < ARRAY_SIZE(mount_api); i++)
		r = deny(ctx, SCMP_ACT_ERRNO(EPERM), mount_api[i], 0, NULL);
	for (size_t i = 0; r == 0 && i < ARRAY_SIZE(denied); i++)
		r = deny(ctx, SCMP_ACT_ERRNO(EPERM), denied[i], 0, NULL);
	if (r == 0)
		r = deny(ctx, SCMP_ACT_ERRNO(EPERM), "unshare", 1, &newuser);
	if (r == 0)
		r = deny(ctx, SCMP_ACT_ERRNO(EPERM), "clone", 1, &newuser);
	if (r == 0)
		r = deny(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL);
	if (r == 0)
		r = deny(ctx, SCMP_ACT_ERRNO(EPERM), "ioctl", 1, &sti);
	if (r == 0)
		r = deny(ctx, SCMP_ACT_ERRNO(EPERM), "ioctl", 1, &tlinux);
	if (r == 0)
		r = export_bpf(ctx, &main_prog);
	seccomp_release(ctx);
	if (r == 0 && deny_mount_api)
		r = build_prefix(&prefix);
	if (r == 0) {
		out->len = prefix.len + main_prog.len;
		out->insns = out->len <= BPF_MAXINSNS ? malloc(out->len * sizeof(*out->insns)) : NULL;
		if (!out->insns)
			r = out->len > BPF_MAXINSNS ? -E2BIG : -ENOMEM;
		else {
			memcpy(out->insns, prefix.insns, prefix.len * sizeof(*out->insns));
			memcpy(out->insns + prefix.len, main_prog.insns, main_prog.len * sizeof(*out->insns));
		}
	}
	free(main_prog.insns);
	free(prefix.insns);
	return r;
}

/* Write @p as a C array named @name. */
static void emit(const char *name, const struct ra_bpf *p)
{
	printf("const struct sock_filter %s[] = {\n", name);
	for (unsigned short i = 0; i < p->len; i++)
		printf("\t{ 0x%04x, %u, %u, 0x%08x },\n", p->insns[i].code, p->insns[i].jt, p->insns[i].jf, p->insns[i].k);
	printf("};\nconst unsigned short %s_len = %u;\n\n", name, p->len);
}

int main(int argc, char **argv)
{
	struct ra_bpf with = { 0 }, without = { 0 };
	int r;

	if (argc != 2 || !freopen(argv[1], "w", stdout)) {
		fprintf(stderr, "usage: rootasm-seccomp-gen OUTPUT.c\n");
		return 2;
	}
	r = build(true, &with);
	if (r == 0)
		r = build(false, &without);
	if (r < 0) {
		fprintf(stderr, "rootasm-seccomp-gen: %s\n", strerror(-r));
		return 1;
	}
	printf("/* Generated by rootasm-seccomp-gen (assembler/tools/seccomp-gen.c): the exec profile as BPF. */\n"
	       "#include \"exec.h\"\n\n");
	emit("ra_profile_deny_mount", &with);
	emit("ra_profile_allow_mount", &without);
	free(with.insns);
	free(without.insns);
	return ferror(stdout) ? 1 : 0;
}
