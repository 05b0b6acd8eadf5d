// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rootasmd under the sandbox of rootasmd.service, without systemd: reads the
 * unit's [Service] section and applies each setting as systemd does (or
 * stricter), then runs the daemon. daemon_test runs its whole suite through
 * it (host-daemon-sandboxed), so a setting the daemon cannot work with fails
 * there. A setting this does not know stops it (exit 126, naming it): a new
 * one in the unit must be taught here first, and so be tested.
 *
 * Environment: ROOTASMD_UNIT (rootasmd.service.in), ROOTASMD_BIN (rootasmd).
 * Usage (as daemon_test calls its daemon): unit_sandbox [ROOTASMD-OPTION...]
 */
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/keyctl.h>

#ifndef PR_SET_MDWE
#define PR_SET_MDWE			65
#define PR_MDWE_REFUSE_EXEC_GAIN	1
#endif

static int die(const char *what, const char *detail)
{
	fprintf(stderr, "unit_sandbox: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	return 126;
}

int main(int argc, char **argv)
{
	/* what the unit says about running the daemon, not about its sandbox */
	static const char *const not_sandbox[] = { "Type", "NotifyAccess", "ExecStart", "ExecReload", "KillMode", NULL };
	const char *unit = getenv("ROOTASMD_UNIT"), *bin = getenv("ROOTASMD_BIN");
	scmp_filter_ctx f = seccomp_init(SCMP_ACT_ALLOW);
	bool nnp = false, mdwe = false, in_service = false;
	char line[4096];
	FILE *u;

	(void)argc;
	if (!unit || !bin || !f)
		return die("set ROOTASMD_UNIT and ROOTASMD_BIN", NULL);
	u = fopen(unit, "re");
	if (!u)
		return die(unit, strerror(errno));
	while (fgets(line, sizeof(line), u)) {
		char *v, *nl = strchr(line, '\n');
		bool known = false;

		if (nl)
			*nl = '\0';
		if (line[0] == '[') {
			in_service = !strcmp(line, "[Service]");
			continue;
		}
		if (!in_service || line[0] == '#' || !line[0])
			continue;
		v = strchr(line, '=');
		if (!v)
			return die("not a setting", line);
		*v++ = '\0';
		for (const char *const *k = not_sandbox; *k; k++)
			known |= !strcmp(line, *k);
		if (known)
			continue;
		if (!strcmp(line, "NoNewPrivileges") && !strcmp(v, "yes")) {
			nnp = true;
		} else if (!strcmp(line, "RestrictAddressFamilies") && !strcmp(v, "AF_UNIX")) {
			if (seccomp_rule_add(f, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
					     SCMP_A0(SCMP_CMP_NE, AF_UNIX)) < 0 ||
			    seccomp_rule_add(f, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socketpair), 1,
					     SCMP_A0(SCMP_CMP_NE, AF_UNIX)) < 0)
				return die("seccomp", line);
		} else if (!strcmp(line, "LockPersonality") && !strcmp(v, "yes")) {
			if (seccomp_rule_add(f, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(personality), 1,
					     SCMP_A0(SCMP_CMP_NE, PER_LINUX)) < 0)
				return die("seccomp", line);
		} else if (!strcmp(line, "RestrictRealtime") && !strcmp(v, "yes")) {
			/* stricter than systemd's: no scheduling policy may be set at all */
			if (seccomp_rule_add(f, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(sched_setscheduler), 0) < 0 ||
			    seccomp_rule_add(f, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(sched_setattr), 0) < 0)
				return die("seccomp", line);
		} else if (!strcmp(line, "SystemCallArchitectures") && !strcmp(v, "native")) {
			if (seccomp_attr_set(f, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) < 0)
				return die("seccomp", line);
		} else if (!strcmp(line, "MemoryDenyWriteExecute") && !strcmp(v, "yes")) {
			mdwe = true;	/* the kernel's own (Linux 6.3), after the exec below: see there */
		} else if (!strcmp(line, "ProtectHostname") && !strcmp(v, "yes")) {
			if (unshare(CLONE_NEWUTS) < 0)
				return die("unshare(CLONE_NEWUTS)", strerror(errno));
		} else if (!strcmp(line, "KeyringMode") && !strcmp(v, "private")) {
			if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0)
				return die("keyctl(KEYCTL_JOIN_SESSION_KEYRING)", strerror(errno));
		} else if (!strcmp(line, "UMask")) {
			umask((mode_t)strtoul(v, NULL, 8));
		} else if (!strcmp(line, "LimitNOFILE")) {
			struct rlimit rl = { .rlim_cur = strtoul(v, NULL, 10), .rlim_max = strtoul(v, NULL, 10) }, hard;

			/* as far as this machine lets even root go (a container's limit, fs.nr_open) */
			if (setrlimit(RLIMIT_NOFILE, &rl) < 0 && getrlimit(RLIMIT_NOFILE, &hard) == 0 &&
			    hard.rlim_max < rl.rlim_max) {
				rl.rlim_cur = rl.rlim_max = hard.rlim_max;
				if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
					return die("setrlimit(RLIMIT_NOFILE)", strerror(errno));
			}
		} else {
			return die("rootasmd.service has a setting this test does not emulate (teach unit_sandbox.c)",
				   line);
		}
	}
	fclose(u);
	if (nnp && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return die("PR_SET_NO_NEW_PRIVS", strerror(errno));
	if (seccomp_load(f) < 0)
		return die("seccomp_load", NULL);
	/*
	 * MemoryDenyWriteExecute: systemd's seccomp filter refuses mappings both
	 * writable and executable; PR_SET_MDWE refuses the same (and making a
	 * mapping executable later). It is inherited across execve, and the
	 * daemon's own loading (ld.so) maps nothing writable and executable.
	 */
	if (mdwe && prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN, 0, 0, 0) < 0)
		return die("PR_SET_MDWE", strerror(errno));
	argv[0] = (char *)bin;
	execv(bin, argv);
	return die(bin, strerror(errno));
}
