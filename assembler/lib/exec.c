// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * exec: the tree as the root of a sandboxed command (the parent's side; the
 * init in execinit.c, its mounts of /proc and /dev in execmnt.c: sandbox.h).
 *
 *   parent  everything that allocates, before the clone: the environment, the
 *           socketpairs that take the tree there and bring a pty's master back;
 *           then clone3(CLONE_NEWNS | CLONE_NEWPID) through child.c (pidfd, death
 *           signal, report pipe); the init makes the other namespaces itself
 *   init    pid 1 of the new pid namespace; system calls only:
 *             setsid: a session of its own, without a controlling terminal (the
 *             caller's terminal takes no TIOCSTI from it: bubblewrap's CVE-2017-5226)
 *             "/" private; move_mount(tree) over "/"; fchdir; pivot_root(".", ".");
 *             umount2(".", MNT_DETACH) (chroot where "/" has no parent: an initramfs)
 *             every mount of the tree nodev (a device node of a layer opens nothing)
 *             /proc (nosuid, nodev, noexec) with the OCI masked paths it has (a clone
 *             of the host's /dev/null on files, an empty read-only tmpfs on
 *             directories) and read-only paths (read-only binds of themselves)
 *             /dev: a tmpfs with null zero full random urandom tty, devpts, shm,
 *             mqueue, when the tree has no usable /dev/null (always, but privileged:
 *             the tree is nodev)
 *             hostname; loopback up in a new network namespace
 *             the bounding set (before the tree: it limits execve(), not the init);
 *             groups, gid, uid; with a tty: a pty of /dev/ptmx (the container's
 *             devpts), its size the caller's, its master sent back, its slave the
 *             init's fds 0-2; capabilities (and ambient ones),
 *             no_new_privs, not dumpable, the seccomp program (made at build time by
 *             tools/seccomp-gen.c): for the init too
 *             the report "ready"; every fd >= 3 closed but the preserved ones;
 *             fork CMD; pass signals on; reap; exit with CMD's status
 *   CMD     signals unblocked, the preserved fds inherited; with a tty: setsid and
 *           the pty as its controlling terminal; execve (PATH searched
 *           by hand into a stack buffer: nothing allocates after the clone)
 *
 * The container dies with the thread that started it (PR_SET_PDEATHSIG on the
 * init; killing pid 1 of a pid namespace kills all of it).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "child.h"
#include "context.h"
#include "exec.h"
#include "layout.h"
#include "passwd.h"
#include "proto.h"
#include "sandbox.h"
#include "util.h"

/* ----------------------------------------------------------------- parent */

/* The pty master the init sent on @sock (it did before it reported "ready"); caller owns it. */
static int recv_master(int sock)
{
	char b;
	int fd, r = ra_recv_with_fd(sock, &b, 1, &fd, MSG_DONTWAIT);

	return r < 0 ? r : fd;
}

#define EOPT(o, field, def)	RA_OPT(o, struct rootasm_exec_opts, field, def)

/*
 * The environment: the layout's, the caller's extra entries, then PATH, TERM
 * and HOME (@home: the user's in the tree, else /root) if not given.
 */
char **ra_exec_env(const struct ra_exec *x, const char *const *extra, const char *home, const char **ret_path)
{
	const char *const defaults[] = {
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm", home ? home : "HOME=/root",
	};
	size_t n = 0, cap = (x ? x->nenv : 0) + ARRAY_SIZE(defaults) + 1;
	char **env;

	for (const char *const *p = extra; p && *p; p++)
		cap++;
	env = calloc(cap, sizeof(char *));
	if (!env)
		return NULL;
	/* a later entry for the same name replaces an earlier one */
#define PUT(s) do {								\
		const char *_s = (s);						\
		size_t _k = strcspn(_s, "=") + 1, _i;				\
		for (_i = 0; _i < n && strncmp(env[_i], _s, _k); _i++)		\
			;							\
		env[_i] = (char *)_s;						\
		if (_i == n)							\
			n++;							\
	} while (0)
	for (size_t i = 0; x && i < x->nenv; i++)
		PUT(x->env[i]);
	for (const char *const *p = extra; p && *p; p++)
		PUT(*p);
	for (size_t i = 0; i < ARRAY_SIZE(defaults); i++) {
		size_t k = strcspn(defaults[i], "=") + 1, j;

		for (j = 0; j < n && strncmp(env[j], defaults[i], k); j++)
			;
		if (j == n)
			env[n++] = (char *)defaults[i];
	}
#undef PUT
	*ret_path = NULL;
	for (size_t i = 0; i < n; i++)
		if (!strncmp(env[i], "PATH=", 5))
			*ret_path = env[i] + 5;
	return env;
}

/*
 * The command, as `podman run IMAGE [CMD]` makes it from the image's
 * Entrypoint and Cmd: the entrypoint, then @argv if it has any, else the
 * layout's cmd. An array of borrowed pointers (caller frees the array only);
 * NULL when out of memory.
 */
char **ra_exec_command(const struct ra_exec *x, char *const argv[])
{
	bool own = argv && argv[0];
	size_t n = x->nentrypoint, k = 0;
	char **v;

	if (own)
		while (argv[k])
			k++;
	else
		k = x->ncmd;
	v = calloc(n + k + 1, sizeof(char *));
	if (!v)
		return NULL;
	for (size_t i = 0; i < n; i++)
		v[i] = x->entrypoint[i];
	for (size_t i = 0; i < k; i++)
		v[n + i] = own ? argv[i] : x->cmd[i];
	return v;
}

const char *ra_caps_text(uint64_t caps, const char *sep, char *buf, size_t size)
{
	size_t n = 0;

	if (size)
		buf[0] = '\0';
	RA_CAP_FOREACH(v, caps) {
		char name[64];
		int w = snprintf(buf + n, size - n, "%s%s", n ? sep : "", ra_cap_name(v, name, sizeof(name)));

		if (w < 0 || (size_t)w >= size - n)
			break;
		n += w;
	}
	return buf;
}

struct rootasm_exec_pending {
	struct rootasm_ctx *ctx;
	struct ra_child ch;
	int tree_sock;			/* our end: the tree goes to the init on it */
	int tty_sock;			/* tty: our end, the pty's master comes back on it */
	int *tty_master;		/* ROOTASM_EXEC_TTY: where the master goes; else NULL */
	char *user;			/* the layout's exec.user, resolved in the tree at the join */
};

/* the HOME a user's /etc/passwd entry replaces in the init (ra_exec_env's default, by address) */
static const char home_pending[] = "HOME=/root";

void rootasm_exec_pending_free(struct rootasm_exec_pending *p)
{
	if (!p)
		return;
	close_fdp(&p->tree_sock);	/* an init still waiting for its tree gives up... */
	ra_child_kill(&p->ch);		/* ...and is killed and reaped in any case */
	close_fdp(&p->tty_sock);
	free(p->user);
	free(p);
}

int rootasm_exec_prepare(struct rootasm_ctx *ctx, const struct rootasm_layout *l, char *const argv[],
			 const struct rootasm_exec_opts *o, struct rootasm_exec_pending **ret, struct rootasm_error *e)
{
	static const struct ra_exec defaults = { .deny_mount_api = true };
	const struct ra_exec *x = l ? &l->exec : &defaults;
	unsigned int flags = EOPT(o, flags, 0u);
	const char *const *extra = EOPT(o, env, NULL);
	int *tty_master = EOPT(o, tty_master, NULL);
	struct ra_exec_spec s = {
		.tree_fd = -EBADF,
		.tree_sock = -EBADF,
		.home_slot = -1,
		.workdir = x->workdir,
		.hostname = EOPT(o, hostname, NULL) ? EOPT(o, hostname, NULL) : x->hostname ? x->hostname : "rootasm",
		.privileged = x->privileged || (flags & ROOTASM_EXEC_PRIVILEGED),
		/*
		 * A network namespace of its own unless the host's is asked for: in
		 * the host's, the command (uid 0 of the host, no user namespace) is
		 * root to every abstract unix socket of the host's services and may
		 * join a root service's SO_REUSEPORT group.
		 */
		.netns = (flags & ROOTASM_EXEC_NETWORK_NONE) ||
			 (!(flags & ROOTASM_EXEC_NETWORK_HOST) && x->network != RA_NET_HOST),
		.user_set = x->user_set,
		.uid = x->uid,
		.gid = x->gid,
		.groups = x->groups,
		.ngroups = x->ngroups,
		.caps = x->caps_set ? x->caps : RA_OCI_DEFAULT_CAPS,
		.preserve_fds = EOPT(o, preserve_fds, 0u),
		.deny_mount_api = x->deny_mount_api,
		.tty = flags & ROOTASM_EXEC_TTY,
		.tty_sock = -EBADF,
	};
	struct rootasm_exec_pending *p;
	char **full;
	int r, sp[2];

	if (!ret)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "exec", NULL, "no place for the pending container");
	*ret = NULL;
	/* the size and flag rules of rootasm.h */
	r = RA_OPTS_CHECK(o, struct rootasm_exec_opts, RA_OPT_END(struct rootasm_exec_opts, flags), "exec", NULL, e);
	if (r < 0)
		return r;
	if (flags & ~(ROOTASM_EXEC_PRIVILEGED | ROOTASM_EXEC_NETWORK_NONE | ROOTASM_EXEC_NETWORK_HOST | ROOTASM_EXEC_TTY))
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "exec", NULL, "unknown flags 0x%x",
				   flags & ~(ROOTASM_EXEC_PRIVILEGED | ROOTASM_EXEC_NETWORK_NONE | ROOTASM_EXEC_NETWORK_HOST |
					     ROOTASM_EXEC_TTY));
	if ((flags & ROOTASM_EXEC_NETWORK_NONE) && (flags & ROOTASM_EXEC_NETWORK_HOST))
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "exec", NULL,
				   "ROOTASM_EXEC_NETWORK_NONE and ROOTASM_EXEC_NETWORK_HOST do not go together");
	/* as the layout's exec.hostname: sethostname() would take '/' and newlines too */
	if (!rootasm_hostname_ok(s.hostname))
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "exec", NULL,
				   "hostname '%s' (--hostname): expected 1-64 of letters, digits, '.', '-', "
				   "not first '-' or '.'", s.hostname);
	if ((flags & ROOTASM_EXEC_TTY) && !tty_master)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "exec", NULL,
				   "ROOTASM_EXEC_TTY needs struct rootasm_exec_opts.tty_master");
	if (argv && argv[0] && !argv[0][0])
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "exec", NULL, "an empty command");
	if (s.preserve_fds > 65536)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "exec", NULL, "--preserve-fds %u: too many",
				   s.preserve_fds);
	p = calloc(1, sizeof(*p));
	if (!p || (x->user && !(p->user = strdup(x->user)))) {
		free(p);
		return ra_oom(e, "exec");
	}
	p->ctx = ctx;
	p->ch = (struct ra_child){ .pidfd = -EBADF, .report = -EBADF, .hold = -EBADF, .child_ends = { -EBADF, -EBADF } };
	p->tree_sock = p->tty_sock = -EBADF;
	p->tty_master = s.tty ? tty_master : NULL;	/* (a caller may set it without the flag) */
	s.argv = full = ra_exec_command(x, argv);
	if (!full) {
		rootasm_exec_pending_free(p);
		return ra_oom(e, "exec command");
	}
	if (!full[0] || !full[0][0]) {
		free(full);
		rootasm_exec_pending_free(p);
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "exec", NULL,
				   "no command (and the layout's exec: section has no entrypoint or cmd)");
	}
	/* the image's user, by name or number, is looked up in the tree at the join: its HOME then */
	s.envp = ra_exec_env(x, extra, x->user ? home_pending : NULL, &s.path);
	if (!s.envp) {
		free(full);
		rootasm_exec_pending_free(p);
		return ra_oom(e, "exec environment");
	}
	for (size_t i = 0; x->user && s.envp[i]; i++)
		if (s.envp[i] == home_pending)
			s.home_slot = (int)i;
	r = 0;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
		r = ra_err(e, errno, -EBADF, "socketpair", NULL, "for the tree");
	} else {
		p->tree_sock = sp[0];
		s.tree_sock = sp[1];
	}
	if (r == 0 && s.tty) {
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
			r = ra_err(e, errno, -EBADF, "socketpair", NULL, "for the pty");
		} else {
			p->tty_sock = sp[0];
			s.tty_sock = sp[1];
		}
	}
	ra_exec_fwd_sigset(&s.fwd);
	sigaddset(&s.fwd, SIGCHLD);
	if (r == 0) {
		sigset_t old;

		/* the init starts with these blocked (it waits for them); our own mask is restored at once */
		pthread_sigmask(SIG_BLOCK, &s.fwd, &old);
		/* the other namespaces the init makes itself (S_UNSHARE), while we assemble */
		r = ra_child_start(&p->ch, CLONE_NEWNS | CLONE_NEWPID, 0, ra_exec_init, &s, "exec", e);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	close_fdp(&s.tty_sock);
	close_fdp(&s.tree_sock);
	free(s.envp);
	free(full);
	if (r < 0) {
		rootasm_exec_pending_free(p);
		return r;
	}
	RA_TRACE(ra_ctx(ctx), "exec: init pid %d started (%s%s), waiting for the tree", p->ch.pid,
		 s.privileged ? "privileged" : "sandboxed", s.netns ? ", network none" : "");
	*ret = p;
	return 0;
}

int rootasm_exec_join(struct rootasm_exec_pending *p, int tree_fd, struct rootasm_error *e)
{
	struct ra_exec_tree_msg m = { 0 };
	struct ra_child_report rep;
	struct ra_user user;
	int r, pidfd;

	if (!p)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "exec", NULL, "no pending container");
	if (tree_fd < 0) {
		rootasm_exec_pending_free(p);
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EBADF, "exec", NULL, "no tree");
	}
	if (p->user) {
		/* the image's user, by name or number, in the tree's own /etc/passwd and /etc/group */
		r = ra_user_resolve(tree_fd, p->user, &user, e);
		if (r < 0) {
			rootasm_exec_pending_free(p);
			return r;
		}
		m.resolved = true;
		m.uid = user.uid;
		m.gid = user.gid;
		m.ngroups = (uint32_t)user.ngroups;
		memcpy(m.groups, user.groups, user.ngroups * sizeof(gid_t));
		if (user.home[0])
			snprintf(m.home, sizeof(m.home), "HOME=%s", user.home);
	}
	/* a failure means the init is gone: its report says why */
	(void)ra_send_with_fd(p->tree_sock, &m, sizeof(m), tree_fd, 0);
	close_fdp(&p->tree_sock);
	p->tree_sock = -EBADF;
	RA_TRACE(ra_ctx(p->ctx), "exec: the tree went to the init");
	/* the init reports "ready" once the sandbox is up, or why it is not */
	r = ra_child_read_report(&p->ch, &rep);
	if (r > 0 && rep.err == 0 && p->tty_master) {
		int master = recv_master(p->tty_sock);

		if (master < 0) {
			rootasm_exec_pending_free(p);
			return ra_err(e, master, -EBADF, "exec", NULL, "the pty's master did not come back from the init");
		}
		*p->tty_master = master;
	}
	if (r > 0 && rep.err == 0) {
		RA_TRACE(ra_ctx(p->ctx), "exec: the sandbox is up (init pid %d)", p->ch.pid);
		pidfd = take_fd(p->ch.pidfd);
		rootasm_exec_pending_free(p);	/* closes the pipes only: the pidfd is taken */
		return pidfd;
	}
	r = ra_child_finish(&p->ch, "exec", ra_exec_steps, e);
	rootasm_exec_pending_free(p);
	return r < 0 ? r : ra_err(e, EIO, -EBADF, "exec", NULL, "the container's init ended before it was set up");
}

int rootasm_exec_start(struct rootasm_ctx *ctx, const struct rootasm_layout *l, int tree_fd, char *const argv[],
		       const struct rootasm_exec_opts *o, struct rootasm_error *e)
{
	struct rootasm_exec_pending *p;
	int r;

	r = rootasm_exec_prepare(ctx, l, argv, o, &p, e);
	return r < 0 ? r : rootasm_exec_join(p, tree_fd, e);
}

int rootasm_exec_wait(int pidfd, struct rootasm_exec_result *res, struct rootasm_error *e)
{
	struct ra_pidfd_info info = { .mask = PIDFD_INFO_EXIT | PIDFD_INFO_CGROUPID };
	siginfo_t si = { 0 };

	while (waitid(P_PIDFD, pidfd, &si, WEXITED | __WALL) < 0)
		if (errno != EINTR)
			return ra_err(e, errno, -EBADF, "waitid", NULL, "the container's init");
	*res = (struct rootasm_exec_result){ 0 };	/* the reserved space too */
	res->status = si.si_code == CLD_EXITED ? si.si_status : 128 + si.si_status;
	/* reaped: a kernel with PIDFD_INFO_EXIT still has the exit code and cgroup id */
	if (ioctl(pidfd, PIDFD_GET_INFO, &info) == 0 && (info.mask & PIDFD_INFO_EXIT)) {
		res->from_pidfd_info = true;
		res->status = WIFEXITED(info.exit_code) ? WEXITSTATUS(info.exit_code) : 128 + WTERMSIG(info.exit_code);
		res->cgroupid = info.mask & PIDFD_INFO_CGROUPID ? info.cgroupid : 0;
	}
	return 0;
}

int rootasm_exec(struct rootasm_ctx *ctx, const struct rootasm_layout *l, int tree_fd, char *const argv[],
		 const struct rootasm_exec_opts *o, struct rootasm_exec_result *res, struct rootasm_error *e)
{
	_cleanup_close_ int pidfd = rootasm_exec_start(ctx, l, tree_fd, argv, o, e);

	if (pidfd < 0)
		return pidfd;
	return rootasm_exec_wait(pidfd, res, e);
}
