/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* exec.c and seccomp.c: the sandbox of `rootasm exec`. */
#ifndef ROOTASM_EXEC_H
#define ROOTASM_EXEC_H

#include <stdbool.h>
#include <linux/filter.h>

#include "rootasm.h"

struct ra_bpf {
	struct sock_filter *insns;
	unsigned short len;
};

/* The profile as BPF programs (seccomp.c); free with ra_seccomp_free(). */
int ra_seccomp_build(bool deny_mount_api, struct ra_bpf progs[2], struct rootasm_error *e);
void ra_seccomp_free(struct ra_bpf progs[2]);

/* The OCI default capability set (crun spec, runc spec). */
#define RA_OCI_DEFAULT_CAPS	((1ULL << 29) | (1ULL << 5) | (1ULL << 10))	/* AUDIT_WRITE, KILL, NET_BIND_SERVICE */

#endif
