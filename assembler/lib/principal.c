// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Principals: who a tree is for. An administrator is judged on the process,
 * never on its uid alone: CAP_SYS_ADMIN in the initial user namespace, in our
 * mount namespace, with our root directory, still alive when judged (the pidfd
 * pins it). Anyone else is a user: uid, gid, groups, maybe a user namespace.
 *
 * A user's file-system access is made with its own credentials: a thread that
 * sets its fsuid, fsgid and groups (per thread in the kernel: the raw system
 * calls, not glibc's process-wide wrappers) and drops every effective
 * capability, so each path walk, open and access check below it is the
 * kernel's verdict for that user.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <linux/nsfs.h>

#include "chase.h"
#include "principal.h"
#include "sysmnt.h"
#include "util.h"

#ifndef NS_GET_OWNER_UID
#define NS_GET_OWNER_UID _IO(0xb7, 0x4)
#endif



static void describe(struct rootasm_principal *p)
{
	size_t n;

	if (p->admin) {
		snprintf(p->desc, sizeof(p->desc), "administrator");
		return;
	}
	n = snprintf(p->desc, sizeof(p->desc), "uid %u gid %u", (unsigned int)p->uid, (unsigned int)p->gid);
	for (size_t i = 0; i < p->ngroups && n < sizeof(p->desc) - 16; i++)
		n += snprintf(p->desc + n, sizeof(p->desc) - n, "%s%u", i ? "," : " groups ", (unsigned int)p->groups[i]);
	if (p->userns_fd >= 0 && n < sizeof(p->desc)) {
		struct stat st;

		if (fstat(p->userns_fd, &st) == 0)
			snprintf(p->desc + n, sizeof(p->desc) - n, " in user namespace %llu",
				 (unsigned long long)st.st_ino);
	}
}

int rootasm_principal_admin(struct rootasm_principal **ret, struct rootasm_error *e)
{
	struct rootasm_principal *p = calloc(1, sizeof(*p));

	if (!p)
		return ra_oom(e, "principal");
	p->admin = true;
	p->userns_fd = -EBADF;
	describe(p);
	*ret = p;
	return 0;
}

int rootasm_principal_user(uid_t uid, gid_t gid, const gid_t *groups, size_t ngroups, int userns_fd,
			   struct rootasm_principal **ret, struct rootasm_error *e)
{
	struct rootasm_principal *p;

	if (uid == (uid_t)-1 || gid == (gid_t)-1)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "principal", NULL, "uid and gid must be valid ids");
	if (ngroups > RA_PRINCIPAL_MAX_GROUPS || (ngroups && !groups))
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "principal", NULL, "at most %d groups",
				   RA_PRINCIPAL_MAX_GROUPS);
	if (userns_fd >= 0) {
		uid_t owner, ru;
		gid_t rg;
		int r;

		if (!ra_is_userns(userns_fd))
			return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "principal", NULL, "the fd is not a user namespace");
		if (ioctl(userns_fd, NS_GET_OWNER_UID, &owner) < 0)
			return ra_err(e, errno, -EBADF, "NS_GET_OWNER_UID", NULL, NULL);
		if (uid != 0 && owner != uid)
			return ra_err_kind(e, ROOTASM_ERROR_PERMISSION, EPERM, "principal", NULL,
					   "the user namespace belongs to uid %u, not to uid %u", (unsigned int)owner,
					   (unsigned int)uid);
		r = ra_userns_root(userns_fd, &ru, &rg, e);
		if (r < 0)
			return r;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return ra_oom(e, "principal");
	p->uid = uid;
	p->gid = gid;
	p->userns_fd = -EBADF;
	if (ngroups) {
		p->groups = malloc(ngroups * sizeof(*groups));
		if (!p->groups) {
			free(p);
			return ra_oom(e, "principal");
		}
		memcpy(p->groups, groups, ngroups * sizeof(*groups));
		p->ngroups = ngroups;
	}
	if (userns_fd >= 0) {
		p->userns_fd = fcntl(userns_fd, F_DUPFD_CLOEXEC, 3);
		if (p->userns_fd < 0) {
			int r = ra_err(e, errno, -EBADF, "dup", "user namespace", NULL);

			rootasm_principal_free(p);
			return r;
		}
	}
	describe(p);
	*ret = p;
	return 0;
}

static int dup_dirs(char *const *v, size_t n, char ***ret);

int ra_principal_dup(const struct rootasm_principal *p, struct rootasm_principal **ret)
{
	struct rootasm_principal *c;

	if (!p)
		return rootasm_principal_self(ret, NULL);
	/* a copy of one made (and checked) already: no check again */
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	*c = *p;
	c->groups = NULL;
	c->userns_fd = -EBADF;
	c->layout_dirs = c->source_dirs = NULL;
	if (dup_dirs(p->layout_dirs, p->nlayout_dirs, &c->layout_dirs) < 0 ||
	    dup_dirs(p->source_dirs, p->nsource_dirs, &c->source_dirs) < 0) {
		rootasm_principal_free(c);
		return -ENOMEM;
	}
	if (p->ngroups && !(c->groups = malloc(p->ngroups * sizeof(*p->groups)))) {
		rootasm_principal_free(c);
		return -ENOMEM;
	}
	if (p->ngroups)
		memcpy(c->groups, p->groups, p->ngroups * sizeof(*p->groups));
	if (p->userns_fd >= 0 && (c->userns_fd = fcntl(p->userns_fd, F_DUPFD_CLOEXEC, 3)) < 0) {
		int r = -errno;

		rootasm_principal_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* The first line of @path starting with @key, its rest in @val (read(2) into the stack: no allocation). */
static int proc_field(const char *path, const char *key, char *val, size_t size)
{
	char buf[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	const char *l;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	for (l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, key, strlen(key))) {
			size_t len = strcspn(l + strlen(key), "\n");

			snprintf(val, size, "%.*s", (int)len, l + strlen(key));
			return 0;
		}
	return -ENOENT;
}

struct ra_cap_header {
	uint32_t version;
	int pid;
};

struct ra_cap_data {
	uint32_t effective, permitted, inheritable;
};

/*
 * CAP_SYS_ADMIN in the effective set of @pid (0: this thread; else a pid of
 * /proc's): capget() where /proc's pids are ours, else (and where a security
 * module refuses capget, as SELinux's process:getcap may) CapEff of
 * /proc/PID/status, as a policy that lets us read a client's state allows.
 */
static bool has_sys_admin(int pid)
{
	struct ra_cap_header h = { 0x20080522 /* _LINUX_CAPABILITY_VERSION_3 */, pid };
	struct ra_cap_data d[2];
	unsigned long long caps = 0;
	char p[64], v[64];

	if ((pid == 0 || ra_proc_pids_ours()) && syscall(SYS_capget, &h, d) == 0)
		return d[0].effective & (1U << 21 /* CAP_SYS_ADMIN */);
	if (pid <= 0)
		return false;
	snprintf(p, sizeof(p), "/proc/%d/status", pid);
	return proc_field(p, "CapEff:", v, sizeof(v)) == 0 && sscanf(v, "%llx", &caps) == 1 &&
	       (caps & (1ULL << 21));
}

/*
 * judge_admin() of the calling process: its namespaces and root are its own
 * by definition (the comparisons there are of a file with itself), so what
 * is left is CAP_SYS_ADMIN in its effective set (this thread's) and a user
 * namespace that maps every id.
 */
static int judge_self(void)
{
	return has_sys_admin(0) && ra_host_ids();
}

/*
 * The process behind @pidfd is an administrator (see rootasm.h): 1, or 0.
 * Reads /proc with read(2) into the stack: a failed allocation cannot turn
 * an administrator into a user (nor the reverse).
 */
static int judge_admin(int pidfd)
{
	char p[64], v[64], a[64], b[64];
	int pid = -1;

	snprintf(p, sizeof(p), "/proc/self/fdinfo/%d", pidfd);
	if (proc_field(p, "Pid:", v, sizeof(v)) < 0 || sscanf(v, "%d", &pid) != 1 || pid <= 0)
		return 0;
	/* its effective set (has_sys_admin(): capget, without making /proc/PID/status) */
	if (!has_sys_admin(pid))
		return 0;
	/* the initial user namespace: ours, and ours maps every id */
	snprintf(a, sizeof(a), "/proc/%d/ns/user", pid);
	if (!ra_host_ids() || !same_file(a, "/proc/self/ns/user"))
		return 0;
	snprintf(a, sizeof(a), "/proc/%d/ns/mnt", pid);
	if (!same_file(a, "/proc/self/ns/mnt"))
		return 0;
	snprintf(b, sizeof(b), "/proc/%d/root", pid);
	if (!same_file(b, "/"))
		return 0;
	/* still the process the pidfd names: the pid was not reused while we read */
	return sys_pidfd_send_signal(pidfd, 0) == 0;
}

int rootasm_principal_of_pidfd(int pidfd, uid_t uid, gid_t gid, const gid_t *groups, size_t ngroups,
			       struct rootasm_principal **ret, struct rootasm_error *e)
{
	if (pidfd >= 0 && judge_admin(pidfd))
		return rootasm_principal_admin(ret, e);
	return rootasm_principal_user(uid, gid, groups, ngroups, -EBADF, ret, e);
}

int rootasm_principal_self(struct rootasm_principal **ret, struct rootasm_error *e)
{
	_cleanup_free_ gid_t *groups = NULL;
	int n, r;

	/* the judgment rootasmd makes of a client (judge_admin()): capabilities, user namespace, mounts, root */
	if (judge_self())
		return rootasm_principal_admin(ret, e);
	n = getgroups(0, NULL);
	if (n < 0 || !(groups = calloc((size_t)n + 1, sizeof(*groups))) || (n = getgroups(n, groups)) < 0)
		return n < 0 ? ra_err(e, errno, -EBADF, "getgroups", NULL, NULL) : ra_oom(e, "principal");
	r = rootasm_principal_user(geteuid(), getegid(), groups, (size_t)n, -EBADF, ret, e);
	if (r == 0)
		(*ret)->self = true;
	return r;
}

int rootasm_principal_is_admin(const struct rootasm_principal *p)
{
	return ra_principal_admin(p);
}

const char *rootasm_principal_describe(const struct rootasm_principal *p)
{
	return p ? p->desc : "administrator";
}

static int dup_dirs(char *const *v, size_t n, char ***ret)
{
	char **c;

	*ret = NULL;
	if (!v)
		return 0;
	c = calloc(n + 1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (!(c[i] = strdup(v[i]))) {
			strvn_free(c, i);
			return -ENOMEM;
		}
	*ret = c;
	return 0;
}

int rootasm_principal_limit(struct rootasm_principal *p, unsigned int what, const char *const *dirs, size_t n,
			    struct rootasm_error *e)
{
	char **v = NULL;
	int r;

	if (p && what == ROOTASM_LIMIT_USERNS && !dirs && !n) {
		p->limit_userns = true;
		return 0;
	}
	if (!p || (what != ROOTASM_LIMIT_LAYOUTS && what != ROOTASM_LIMIT_SOURCES) || (n && !dirs))
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "principal limit", NULL,
				   "a principal, ROOTASM_LIMIT_LAYOUTS or ROOTASM_LIMIT_SOURCES and the directories, or "
				   "ROOTASM_LIMIT_USERNS and none");
	for (size_t i = 0; i < n; i++)
		if (!ra_path_clean(dirs[i]))
			return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "principal limit", dirs[i],
					   "not a clean absolute path (no '.', '..', '//', trailing '/')");
	r = dup_dirs((char *const *)dirs ? (char *const *)dirs : (char *const[]){ NULL }, n, &v);
	if (r < 0)
		return ra_oom(e, "principal limit");
	if (what == ROOTASM_LIMIT_LAYOUTS) {
		strvn_free(p->layout_dirs, p->nlayout_dirs);
		p->layout_dirs = v;
		p->nlayout_dirs = n;
		p->limit_layouts = true;
	} else {
		strvn_free(p->source_dirs, p->nsource_dirs);
		p->source_dirs = v;
		p->nsource_dirs = n;
		p->limit_sources = true;
	}
	return 0;
}

void rootasm_principal_free(struct rootasm_principal *p)
{
	if (!p)
		return;
	strvn_free(p->layout_dirs, p->nlayout_dirs);
	strvn_free(p->source_dirs, p->nsource_dirs);
	close_fdp(&p->userns_fd);
	free(p->groups);
	free(p);
}

/* ------------------------------------------------------------ running as one */

struct run {
	const struct rootasm_principal *p;
	int (*fn)(void *);
	void *ud;
	int r;
};


static void *run_thread(void *arg)
{
	struct run *r = arg;
	const struct rootasm_principal *p = r->p;
	struct ra_cap_header h = { 0x20080522 /* _LINUX_CAPABILITY_VERSION_3 */, 0 };
	struct ra_cap_data d[2];

	/*
	 * This thread's credentials only: the raw system calls (glibc's change
	 * every thread). The calling process itself has them already (and, in a
	 * user namespace that denies setgroups, could not set them again).
	 */
	if (!p->self && (syscall(SYS_setgroups, p->ngroups, p->groups) < 0 || syscall(SYS_setfsgid, p->gid) < 0 ||
	    syscall(SYS_setfsuid, p->uid) < 0 || (uid_t)syscall(SYS_setfsuid, -1) != p->uid ||
	    (gid_t)syscall(SYS_setfsgid, -1) != p->gid)) {
		r->r = -EPERM;
		return NULL;
	}
	if (syscall(SYS_capget, &h, d) < 0) {
		r->r = -errno;
		return NULL;
	}
	d[0].effective = d[1].effective = 0;
	if (syscall(SYS_capset, &h, d) < 0) {
		r->r = -errno;
		return NULL;
	}
	r->r = r->fn(r->ud);
	return NULL;
}

int rootasm_principal_run(const struct rootasm_principal *p, int (*fn)(void *userdata), void *userdata)
{
	struct run r = { p, fn, userdata, 0 };
	pthread_t t;
	int err;

	/* no principal: the caller itself, as it is */
	if (!p || ra_principal_admin(p))
		return fn(userdata);
	err = pthread_create(&t, NULL, run_thread, &r);
	if (err)
		return -err;
	pthread_join(t, NULL);
	return r.r;
}
