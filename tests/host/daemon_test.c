// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rootasmd and the image cache, on the running kernel (root; each TEST() in a
 * private mount namespace of its own, harness.c). Every test starts its own
 * daemon (build/rootasmd) on a socket in the fixture and stops it, and reads
 * what is left from the kernel: loop devices backed by the fixture's files
 * (/sys/block/loop*), the daemon's fds (/proc/PID/fd), mountinfo.
 *
 * Leak rule: while the daemon runs, loop devices of the fixture == its cache
 * entries, and its fds == its fds after start + one per cache entry; after it
 * stops, nothing of the fixture is attached to a loop device.
 *
 * Usage: daemon_test ROOTASMD ROOTASM  (root)
 */
#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "harness.h"
#include "rootasm.h"

static const char *daemon_bin, *cli_bin;
static pid_t main_pid;

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define UNPRIV 4242		/* a uid the policy names */
#define STRANGER 4343		/* one it does not */

static void put(const char *rel, const char *fmt, ...)
{
	va_list ap;
	FILE *f = fopen(path(rel), "w");

	if (!f)
		FAILF("fopen %s: %s", rel, strerror(errno));
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

static char *slurp_at(int dfd, const char *p)
{
	static __thread char buf[4096];	/* the concurrency test reads from many threads */
	int fd = openat(dfd, p, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* Loop devices backed by the fixture's files. */
static int loops(void)
{
	glob_t g;
	int n = 0;

	if (glob("/sys/block/loop*/loop/backing_file", 0, NULL, &g) != 0)
		return 0;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		char *s = slurp_at(AT_FDCWD, g.gl_pathv[i]);

		n += s && !strncmp(s, fix, strlen(fix));
	}
	globfree(&g);
	return n;
}

/* How many of @pid's fds link to something starting with @what. */
static int fds_of(pid_t pid, const char *what)
{
	char p[64];
	glob_t g;
	int n = 0;

	snprintf(p, sizeof(p), "/proc/%d/fd/*", pid);
	if (glob(p, 0, NULL, &g) != 0)
		return 0;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		char t[64];
		ssize_t l = readlink(g.gl_pathv[i], t, sizeof(t) - 1);

		n += l >= (ssize_t)strlen(what) && !strncmp(t, what, strlen(what));
	}
	globfree(&g);
	return n;
}

/* How many of @pid's fds are mount namespaces (the tree lock's, lock.c). */
static int mnt_ns_fds(pid_t pid)
{
	return fds_of(pid, "mnt:[");
}

/* How many of @pid's fds are user namespaces (the tree lock's, lock.c: one for all its copies). */
static int user_ns_fds(pid_t pid)
{
	return fds_of(pid, "user:[");
}

/*
 * How many entries /proc/@pid/@what has (but . and ..); in fd/, but those
 * linking to @skip (each looked at as it is listed: a thread that starts or
 * ends meanwhile is counted with its fd or without it, never half).
 */
static int proc_entries(pid_t pid, const char *what, const char *skip)
{
	char p[64];
	DIR *d;
	struct dirent *de;
	int n = 0;

	snprintf(p, sizeof(p), "/proc/%d/%s", pid, what);
	d = opendir(p);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char t[64] = "";

		if (de->d_name[0] == '.')
			continue;
		if (skip && readlinkat(dirfd(d), de->d_name, t, sizeof(t) - 1) < 0)
			continue;	/* closed since it was listed */
		n += !skip || strncmp(t, skip, strlen(skip));
	}
	closedir(d);
	return n;
}

/* How many threads @pid has. */
static int threads_of(pid_t pid)
{
	return proc_entries(pid, "task", NULL);
}

/* @pid's fds but its acceptor threads' epoll fds (one each, as many as the pool has threads now). */
static int count_fds(pid_t pid)
{
	return proc_entries(pid, "fd", "anon_inode:[eventpoll]");
}

/* ---------------------------------------------------------------- the daemon */

struct daemon {
	pid_t pid;
	int err;		/* its stderr */
	char sock[256];
	int base_fds;		/* fds once it serves, before any image is cached */
};

/* Start rootasmd with @extra options; returns once it says it serves (no sleeps: its stderr). */
static struct daemon start(const char *name, const char *const *extra)
{
	struct daemon d = { 0 };
	char buf[4096] = "";
	size_t len = 0;
	int p[2];

	snprintf(d.sock, sizeof(d.sock), "%s/%s", fix, name);
	if (pipe2(p, O_CLOEXEC) < 0)
		FAILF("pipe");
	d.pid = fork();
	if (d.pid == 0) {
		const char *argv[32] = { daemon_bin, "--socket", d.sock, "--policy", path("policy.json") };
		int n = 5;

		for (; extra && *extra && n < 30; extra++)
			argv[n++] = *extra;
		dup2(p[1], 2);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execv(daemon_bin, (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	d.err = p[0];
	while (!strstr(buf, "serving on")) {
		ssize_t r = read(d.err, buf + len, sizeof(buf) - 1 - len);

		if (r <= 0)
			FAILF("rootasmd did not start: %s", buf);
		buf[len += r] = '\0';
	}
	fcntl(d.err, F_SETFL, O_NONBLOCK);
	d.base_fds = count_fds(d.pid);
	return d;
}

/* What the daemon wrote to stderr since (non-blocking). */
static char *daemon_log(struct daemon *d)
{
	static char buf[1 << 16];
	static size_t len;
	ssize_t r;

	while (len < sizeof(buf) - 1 && (r = read(d->err, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += r;
	buf[len] = '\0';
	return buf;
}

/* SIGTERM, and it must exit 0 having let go of everything. */
static void stop(struct daemon *d)
{
	int st;

	ASSERT_EQ(kill(d->pid, SIGTERM), 0);
	ASSERT_EQ(waitpid(d->pid, &st, 0), d->pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		FAILF("rootasmd exited with %d: %s", st, daemon_log(d));
	close(d->err);
	ASSERT_EQ(loops(), 0);
}

static json_t *status(struct daemon *d)
{
	struct rootasm_client *c;
	struct rootasm_error e = { 0 };
	char *text = NULL, line[4096];
	json_t *j;

	if (rootasm_client_connect(d->sock, &c, &e) < 0 || rootasm_client_status(c, &text, &e) < 0)
		FAILF("status: %s", rootasm_error_format(&e, line, sizeof(line)));
	rootasm_client_close(c);
	j = json_loads(text, 0, NULL);
	free(text);
	ASSERT_TRUE(j != NULL);
	return j;
}

static long long cache_n(json_t *st, const char *k)
{
	return json_integer_value(json_object_get(json_object_get(st, "cache"), k));
}

static long long counter(json_t *st, const char *k)
{
	return json_integer_value(json_object_get(json_object_get(st, "counters"), k));
}

/* The leak rule (top of the file) while the daemon runs. */
static void no_leaks(struct daemon *d)
{
	json_t *st = status(d);
	long long entries;

	/* a client that has just closed may still have its thread: ask until it has ended */
	for (int i = 0; i < 5000 && counter(st, "clients_now") != 1; i++) {
		json_decref(st);
		usleep(1000);	/* at most 5 s: a loaded machine runs the thread late */
		st = status(d);
	}
	entries = cache_n(st, "entries");
	ASSERT_EQ(loops(), entries);
	ASSERT_EQ(cache_n(st, "lent"), 0);
	/* the status request's own connection is the only one */
	ASSERT_EQ(counter(st, "clients_now"), 1);
	json_decref(st);
	/*
	 * our status connection is gone once its thread ended: wait for the count to say so
	 * (and the context's lock namespaces, made at its first tree for a user, are the daemon's: a
	 * mount namespace and a user namespace, one fd each)
	 */
	for (int i = 0; i < 5000 && count_fds(d->pid) != d->base_fds + entries + mnt_ns_fds(d->pid) +
							   user_ns_fds(d->pid); i++)
		usleep(1000);
	ASSERT_TRUE(mnt_ns_fds(d->pid) <= 1 && user_ns_fds(d->pid) == mnt_ns_fds(d->pid));
	ASSERT_EQ(count_fds(d->pid), d->base_fds + entries + mnt_ns_fds(d->pid) + user_ns_fds(d->pid));
	/* an acceptor's epoll fd is its own: no more of them than threads beside the main one (once none ends) */
	for (int i = 0; i < 5000 && fds_of(d->pid, "anon_inode:[eventpoll]") > threads_of(d->pid) - 1; i++)
		usleep(1000);
	ASSERT_TRUE(fds_of(d->pid, "anon_inode:[eventpoll]") <= threads_of(d->pid) - 1);
}

/* Assemble @layout (absolute path) through the daemon; returns the tree fd or -errno with @e. */
static int via_opts(struct daemon *d, struct rootasm_client_assemble_opts *o, struct rootasm_error *e)
{
	struct rootasm_client *c;
	int r = rootasm_client_connect(d->sock, &c, e);

	if (r < 0)
		return r;
	r = rootasm_client_assemble(c, o, e);
	rootasm_client_close(c);
	return r;
}

static int via(struct daemon *d, const char *layout, struct rootasm_error *e)
{
	struct rootasm_client_assemble_opts o = { .size = sizeof(o), .layout = layout };

	return via_opts(d, &o, e);
}

static int via_text(struct daemon *d, const char *text, struct rootasm_error *e)
{
	struct rootasm_client_assemble_opts o = { .size = sizeof(o), .layout_text = text, .name = "inline" };

	return via_opts(d, &o, e);
}

static void become(uid_t uid)
{
	if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
		FAILF("become %u: %s", uid, strerror(errno));
	/* as a login would be: our /proc/self files are ours (a uid change made them root's) */
	prctl(PR_SET_DUMPABLE, 1);
}

/* Run @fn in a child as @uid; its exit status (a FAILF there is 1). */
static int as_user(uid_t uid, void (*fn)(void *), void *arg)
{
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		become(uid);
		fn(arg);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

#define TREE_OK(fd) do {							\
		ASSERT_TRUE((fd) >= 0);						\
		ASSERT_STR(slurp_at((fd), "etc/motd"), "l2\n");			\
		ASSERT_STR(slurp_at((fd), "etc/keep"), "keep\n");		\
		ASSERT_STR(slurp_at((fd), "vol/volfile"), "vol\n");		\
	} while (0)

static const char *err_line(const struct rootasm_error *e)
{
	static char buf[8192];

	return rootasm_error_format(e, buf, sizeof(buf));
}

/* ---------------------------------------------------------------- the library's cache */

TEST(library_cache_mounts_each_image_once)
{
	struct rootasm_ctx *ctx;
	struct rootasm_layout *l;
	struct rootasm_error e = { 0 };
	struct rootasm_cache_opts co = { .size = sizeof(co) };
	struct rootasm_cache_stats st = { .size = sizeof(st) };
	char plan[8192] = "";
	FILE *f;
	int fd;

	ASSERT_EQ(rootasm_ctx_new(0, &ctx), 0);
	ASSERT_EQ(rootasm_ctx_set_cache(ctx, &co), 0);
	ASSERT_EQ(rootasm_ctx_set_cache(ctx, &co), -EBUSY);
	if (rootasm_layout_load(ctx, path("layouts/t.yaml"), NULL, &l, &e) < 0)
		FAILF("load: %s", err_line(&e));
	/* the plan says how: the image layer and the image volume take the cache */
	f = fmemopen(plan, sizeof(plan) - 1, "w");
	ASSERT_EQ(rootasm_plan_print(ctx, l, f, 0), 0);
	fclose(f);
	ASSERT_CONTAINS(plan, "layers[1] image");
	ASSERT_CONTAINS(plan, "[cached-mount]");
	ASSERT_TRUE(strstr(plan, "[image+fsmount]") == NULL);
	for (int i = 0; i < 20; i++) {
		fd = rootasm_assemble(ctx, l, &e);
		if (fd < 0)
			FAILF("assemble %d: %s", i, err_line(&e));
		TREE_OK(fd);
		close(fd);
		/* two images (l2.sqfs layer, vol.sqfs volume): two loop devices, however many trees */
		ASSERT_EQ(loops(), 2);
	}
	ASSERT_EQ(rootasm_cache_stats(ctx, &st), 0);
	ASSERT_EQ(st.entries, 2);
	ASSERT_EQ(st.misses, 2);
	ASSERT_EQ(st.hits, 38);
	ASSERT_EQ(st.lent, 0);
	/* a tree outlives the cache entries it was built from */
	fd = rootasm_assemble(ctx, l, &e);
	ASSERT_EQ(rootasm_cache_trim(ctx), 2);
	TREE_OK(fd);
	close(fd);
	ASSERT_EQ(loops(), 0);
	rootasm_layout_free(l);
	rootasm_ctx_free(ctx);
	ASSERT_EQ(loops(), 0);
}

TEST(library_cache_limits_evict_least_recently_used)
{
	struct rootasm_ctx *ctx;
	struct rootasm_layout *l;
	struct rootasm_error e = { 0 };
	struct rootasm_cache_opts co = { .size = sizeof(co), .max_entries = 1 };
	struct rootasm_cache_stats st = { .size = sizeof(st) };
	int fd;

	ASSERT_EQ(rootasm_ctx_new(0, &ctx), 0);
	ASSERT_EQ(rootasm_ctx_set_cache(ctx, &co), 0);
	if (rootasm_layout_load(ctx, path("layouts/t.yaml"), NULL, &l, &e) < 0)
		FAILF("load: %s", err_line(&e));
	for (int i = 0; i < 5; i++) {
		fd = rootasm_assemble(ctx, l, &e);
		TREE_OK(fd);
		close(fd);
		ASSERT_TRUE(loops() <= 1);
	}
	ASSERT_EQ(rootasm_cache_stats(ctx, &st), 0);
	ASSERT_EQ(st.entries, 1);
	/* the volume's image evicts the layer's (lent until the overlay exists, not longer) */
	ASSERT_EQ(st.evictions, 9);
	ASSERT_EQ(st.bypass, 0);
	rootasm_layout_free(l);
	rootasm_ctx_free(ctx);
	ASSERT_EQ(loops(), 0);
}

/* ---------------------------------------------------------------- the daemon */

TEST(daemon_serves_trees_from_one_mount_per_image)
{
	struct daemon d = start("s1", NULL);
	struct rootasm_error e = { 0 };
	json_t *st;
	char *mi = strdup(slurp_at(AT_FDCWD, "/proc/self/mountinfo"));

	for (int i = 0; i < 10; i++) {
		int fd = via(&d, path("layouts/t.yaml"), &e);

		if (fd < 0)
			FAILF("via: %s", err_line(&e));
		TREE_OK(fd);
		close(fd);
	}
	st = status(&d);
	ASSERT_EQ(cache_n(st, "entries"), 2);
	ASSERT_EQ(cache_n(st, "misses"), 2);
	ASSERT_EQ(cache_n(st, "hits"), 18);
	ASSERT_EQ(counter(st, "assembled"), 10);
	ASSERT_EQ(json_array_size(json_object_get(json_object_get(st, "cache"), "images")), 2);
	json_decref(st);
	/* the daemon attached nothing anywhere: our namespace is as it was */
	ASSERT_STR(slurp_at(AT_FDCWD, "/proc/self/mountinfo"), mi);
	no_leaks(&d);
	stop(&d);
}

struct refusal {
	struct daemon *d;
	const char *layout, *text;
	int want_err;
	const char *want;
};

static void refused(void *arg)
{
	struct refusal *r = arg;
	struct rootasm_error e = { 0 };
	int fd = r->layout ? via(r->d, r->layout, &e) : via_text(r->d, r->text, &e);

	if (fd >= 0)
		FAILF("%s was served", r->layout ? r->layout : r->text);
	if (e.err != r->want_err || !strstr(err_line(&e), r->want))
		FAILF("got: %s (errno %d), want errno %d and \"%s\"", err_line(&e), e.err, r->want_err, r->want);
}

static void served(void *arg)
{
	struct refusal *r = arg;
	struct rootasm_error e = { 0 };
	int fd = r->layout ? via(r->d, r->layout, &e) : via_text(r->d, r->text, &e);

	if (fd < 0)
		FAILF("refused: %s", err_line(&e));
	ASSERT_STR(slurp_at(fd, "etc/motd"), "l2\n");
	close(fd);
}

TEST(daemon_policy_refuses_what_it_does_not_allow)
{
	struct daemon d = start("s2", NULL);
	char text[4096];
	struct refusal r = { .d = &d };
	int rc;

#define REFUSED(uid, L, T, ERR, WANT) do {					\
		r.layout = (L); r.text = (T); r.want_err = (ERR); r.want = (WANT);	\
		if (as_user((uid), refused, &r))				\
			FAILF("refusal for uid %d: %s", uid, #WANT);		\
	} while (0)
#define SERVED(uid, L, T) do {							\
		r.layout = (L); r.text = (T);					\
		if (as_user((uid), served, &r))					\
			FAILF("uid %d should be served", uid);			\
	} while (0)

	/* the allowed cases, so that each refusal below is the policy's and nothing else's */
	SERVED(UNPRIV, path("layouts/t.yaml"), NULL);
	snprintf(text, sizeof(text), "version: 1\nlayers:\n  - dir: %s\n  - image: %s\n", path("src/l1"), path("src/l2.sqfs"));
	SERVED(UNPRIV, NULL, text);
	/* no rule names the uid */
	REFUSED(STRANGER, path("layouts/t.yaml"), NULL, EPERM, "no rule of the policy names uid 4343");
	/* a layout outside the rule's directories (it exists, root could assemble it) */
	REFUSED(UNPRIV, path("other/t.yaml"), NULL, EPERM, "in none of the layout directories allowed to uid");
	/* a symlink inside the allowed directory that leads out of it */
	REFUSED(UNPRIV, path("layouts/link.yaml"), NULL, ELOOP, "a symbolic link on the way beneath the layout directory");
	/* a path that is not clean */
	REFUSED(UNPRIV, path("layouts/../other/t.yaml"), NULL, EINVAL, "clean absolute path");
	/* inline, with a host object outside the sources */
	snprintf(text, sizeof(text), "version: 1\nlayers:\n  - dir: %s\n  - image: %s\n", path("other/l1"),
		 path("src/l2.sqfs"));
	REFUSED(UNPRIV, NULL, text, EPERM, "in none of the source directories allowed to uid");
	/* inline, through a symlink in the sources that leads out of them: the fd is checked, not the name */
	snprintf(text, sizeof(text), "version: 1\nlayers:\n  - dir: %s/etc\n  - image: %s\n", path("src/out"),
		 path("src/l2.sqfs"));
	REFUSED(UNPRIV, NULL, text, EPERM, "in none of the source directories allowed to uid");
	/* inline, a relative path: it would resolve against the daemon's working directory */
	REFUSED(UNPRIV, NULL, "version: 1\nlayers:\n  - dir: src/l1\n", EINVAL, "relative path in a layout sent inline");
	/*
	 * inline, an image file the user made (or could change) in its sources:
	 * root would mount a filesystem the user wrote, which it cannot on the
	 * host; the layout's `trusted: true` is not the user's to give
	 */
	sh("mkdir -p %s/src/mine %s/src/grp && cp %s/src/l2.sqfs %s/src/mine/own.sqfs && cp %s/src/l2.sqfs %s/src/grp/roots.sqfs && "
	   "chown %d %s/src/mine %s/src/mine/own.sqfs && chgrp %d %s/src/grp && chmod 0775 %s/src/grp",
	   fix, fix, fix, fix, fix, fix, UNPRIV, fix, fix, UNPRIV, fix, fix);
	snprintf(text, sizeof(text), "version: 1\nlayers:\n  - image: %s\n", path("src/mine/own.sqfs"));
	REFUSED(UNPRIV, NULL, text, EPERM, "a tree for uid 4242 gid 4242 mounts only an administrator's image files");
	snprintf(text, sizeof(text), "version: 1\nlayers:\n  - image: %s\n    trusted: true\n", path("src/mine/own.sqfs"));
	REFUSED(UNPRIV, NULL, text, EPERM, "mounts only an administrator's image files");
	/* root's file in a directory the user's group may write: the user could put another in its place */
	snprintf(text, sizeof(text), "version: 1\nlayers:\n  - image: %s\n", path("src/grp/roots.sqfs"));
	REFUSED(UNPRIV, NULL, text, EPERM, "mounts only an administrator's image files");
	/* an image volume, the same */
	snprintf(text, sizeof(text), "version: 1\nlayers:\n  - image: %s\nmounts:\n  - { image: %s, target: /vol }\n",
		 path("src/l2.sqfs"), path("src/mine/own.sqfs"));
	REFUSED(UNPRIV, NULL, text, EPERM, "mounts only an administrator's image files");
	/*
	 * root's image on a FUSE filesystem (squashfuse, allow_other) in the
	 * sources: its owners are what its server says, and a user may run one
	 */
	if (access("/dev/fuse", R_OK | W_OK) == 0) {
		sh("rm -rf %s/fz %s/fz.sqfs && mkdir -p %s/fz/d %s/src/fuse && cp %s/src/l2.sqfs %s/fz/d/img.sqfs && "
		   "mksquashfs %s/fz %s/fz.sqfs -quiet -no-progress >/dev/null && squashfuse -o allow_other %s/fz.sqfs "
		   "%s/src/fuse", fix, fix, fix, fix, fix, fix, fix, fix, fix, fix);
		snprintf(text, sizeof(text), "version: 1\nlayers:\n  - image: %s\n", path("src/fuse/d/img.sqfs"));
		r.layout = NULL;
		r.text = text;
		r.want_err = EPERM;
		r.want = "mounts no image file of a FUSE filesystem";
		rc = as_user(UNPRIV, refused, &r);
		/*
		 * (its server goes when it is unmounted: waited for, a process of
		 * ours; "[s]" so that the pattern does not match this very shell,
		 * whose command line holds it: the wait ran its 500 rounds, 20 s)
		 */
		sh("umount %s/src/fuse; for i in $(seq 500); do pgrep -f '[s]quashfuse .*%s/fz.sqfs' >/dev/null || break; "
		   "sleep 0.01; done", fix, fix);
		if (rc)
			FAILF("refusal for uid %d: an image of FUSE", UNPRIV);
	} else {
		fprintf(stderr, "  (no /dev/fuse on this kernel: the FUSE case is not run)\n");
	}
	/* the same image, root's in root's directory: served */
	snprintf(text, sizeof(text), "version: 1\nlayers:\n  - image: %s\nupper: { tmpfs: {} }\n"
		 "mounts:\n  - { image: %s, target: /vol }\n", path("src/l2.sqfs"), path("src/vol.sqfs"));
	SERVED(UNPRIV, NULL, text);
	snprintf(text, sizeof(text), "version: 1\nlayers:\n  - dir: %s\n  - image: %s\n", path("other/l1"),
		 path("src/l2.sqfs"));
	/* a uid whose rule has no inline */
	REFUSED(UNPRIV + 1, NULL, text, EPERM, "may load only layout files in the layout directories allowed to it, not "
		"a layout from memory");
	/* root is served whatever the policy says */
	r.layout = path("other/t.yaml");
	r.text = NULL;
	served(&r);
	/* the trees non-root peers get are nosuid,nodev throughout */
	no_leaks(&d);
	stop(&d);
}

/* A raw protocol peer: one message out, one reply in. */
static int raw_connect(const char *sock, int type)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int r = -errno;

		close(s);
		return r;
	}
	return s;
}

static void raw_send(int s, const void *buf, size_t len, const int *fds, int nfds)
{
	union {
		char buf[CMSG_SPACE(8 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { (void *)buf, len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (nfds) {
		struct cmsghdr *c;

		m.msg_control = u.buf;
		m.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	}
	if (sendmsg(s, &m, MSG_NOSIGNAL) != (ssize_t)len)
		FAILF("sendmsg: %s", strerror(errno));
}

static char last_error_keys[512];	/* the keys of the last error reply, in order */

/* The reply's error "errname", or "ok", or "EOF"; any fd it carries is closed. */
static const char *raw_reply(int s)
{
	static char buf[70000];
	char ctl[CMSG_SPACE(4 * sizeof(int))];
	struct iovec iov = { buf, sizeof(buf) - 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	ssize_t n = recvmsg(s, &m, MSG_CMSG_CLOEXEC);
	json_t *j;
	static char out[256];

	if (n <= 0)
		return "EOF";
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_type == SCM_RIGHTS)
			close(*(int *)CMSG_DATA(c));
	buf[n] = '\0';
	j = json_loads(buf, 0, NULL);
	if (!j)
		return "not JSON";
	if (json_is_true(json_object_get(j, "ok"))) {
		snprintf(out, sizeof(out), "ok");
	} else {
		const char *k;
		json_t *v;

		snprintf(out, sizeof(out), "%s", json_string_value(json_object_get(json_object_get(j, "error"), "errname")) ?: "?");
		last_error_keys[0] = '\0';
		json_object_foreach(json_object_get(j, "error"), k, v)
			snprintf(last_error_keys + strlen(last_error_keys), sizeof(last_error_keys) - strlen(last_error_keys),
				 "%s,", k);
	}
	json_decref(j);
	return out;
}

/*
 * A connection whose probe is served. One refused while a connection that has
 * just gone still counts (its thread ends late on a loaded machine; the send
 * may then meet a closed socket) is tried again, @tries times at most, after
 * @pause_us (0: a sched_yield()). Its fd, or -1 when none was served.
 */
static int served_connection(const char *sock, int tries, useconds_t pause_us)
{
	for (int i = 0; i < tries; i++) {
		int s = raw_connect(sock, SOCK_SEQPACKET);

		(void)!send(s, "{\"rootasm\":1,\"op\":\"probe\"}", 26, MSG_NOSIGNAL);
		if (!strcmp(raw_reply(s), "ok"))
			return s;
		close(s);
		if (pause_us)
			usleep(pause_us);
		else
			sched_yield();
	}
	return -1;
}

static int init_userns = -1, stranger_userns = -1;

/* Whether an unprivileged uid may make a user namespace here (a sysctl may forbid it). */
static bool userns_allowed(uid_t uid)
{
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		become(uid);
		_exit(unshare(CLONE_NEWUSER) == 0 ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* A fresh user namespace owned by @uid (made by a child as @uid, its fd sent back to us). */
static int userns_of(uid_t uid)
{
	int sv[2], fd = -1, st;
	char ctl[CMSG_SPACE(sizeof(int))], b;
	struct iovec iov = { &b, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	pid_t pid;

	ASSERT_EQ(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv), 0);
	pid = fork();
	if (pid == 0) {
		struct cmsghdr *c;
		int ns;

		become(uid);
		if (unshare(CLONE_NEWUSER) < 0)
			_exit(1);
		ns = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
		m.msg_controllen = CMSG_SPACE(sizeof(int));
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &ns, sizeof(int));
		_exit(sendmsg(sv[1], &m, 0) == 1 ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	ASSERT_EQ(recvmsg(sv[0], &m, MSG_CMSG_CLOEXEC), 1);
	memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof(int));
	close(sv[0]);
	close(sv[1]);
	return fd;
}
static char cli_error_keys[512];	/* the keys of `rootasm --json` errors, in order (from the CLI itself) */	/* root's user namespace, opened before dropping to UNPRIV */

/* An assemble request with each of @vals as its @key: each refused EINVAL, the connection serving on. */
static void each_refused(int s, const char *key, const char *const *vals, size_t n)
{
	char req[4200];

	for (size_t i = 0; i < n; i++) {
		const char *got;

		snprintf(req, sizeof(req), "{\"rootasm\":1,\"op\":\"assemble\",\"layout\":\"%s\",\"%s\":%s}",
			 path("layouts/t.yaml"), key, vals[i]);
		raw_send(s, req, strlen(req), NULL, 0);
		got = raw_reply(s);
		if (strcmp(got, "EINVAL"))
			FAILF("\"%s\": %s: %s, not EINVAL", key, vals[i], got);
	}
}

static void hostile(void *arg)
{
	struct daemon *d = arg;
	char *big = malloc(70 * 1024);
	char req[8192];
	int s = raw_connect(d->sock, SOCK_SEQPACKET), fds[2], mntfd;

	ASSERT_TRUE(s >= 0);
	memset(big, ' ', 70 * 1024);
	memcpy(big, "{\"rootasm\":1,\"op\":\"probe\"", 25);
	big[70 * 1024 - 1] = '}';
	/* oversized: refused whole, and the connection goes on */
	raw_send(s, big, 70 * 1024, NULL, 0);
	ASSERT_STR(raw_reply(s), "EMSGSIZE");
	raw_send(s, "not json", 8, NULL, 0);
	ASSERT_STR(raw_reply(s), "EBADMSG");
	raw_send(s, "[1,2]", 5, NULL, 0);
	ASSERT_STR(raw_reply(s), "EBADMSG");
	raw_send(s, "{\"rootasm\":2,\"op\":\"probe\"}", 26, NULL, 0);
	ASSERT_STR(raw_reply(s), "EPROTO");
	/* an error reply has exactly the fields of the CLI's JSON errors, in their order */
	ASSERT_STR(last_error_keys, cli_error_keys);
	raw_send(s, "{\"rootasm\":1,\"op\":\"format-disk\"}", 32, NULL, 0);
	ASSERT_STR(raw_reply(s), "EOPNOTSUPP");
	raw_send(s, "{\"rootasm\":1,\"op\":\"probe\",\"evil\":1}", 35, NULL, 0);
	ASSERT_STR(raw_reply(s), "EINVAL");
	raw_send(s, "{\"rootasm\":1,\"op\":\"probe\",\"op\":\"status\"}", 40, NULL, 0);
	ASSERT_STR(raw_reply(s), "EBADMSG");	/* duplicate keys */
	raw_send(s, "{\"rootasm\":1,\"op\":\"assemble\",\"layout\":7}", 40, NULL, 0);
	ASSERT_STR(raw_reply(s), "EINVAL");
	/* receivers: uids, at most 64 of them */
	static const char *const bad_receivers[] = { "5", "[-1]", "[4294967295]", "[\"root\"]", "[1.5]", "[[0]]" };
	each_refused(s, "receivers", bad_receivers, sizeof(bad_receivers) / sizeof(bad_receivers[0]));
	snprintf(req, sizeof(req), "{\"rootasm\":1,\"op\":\"assemble\",\"layout\":\"%s\",\"receivers\":[0", path("layouts/t.yaml"));
	for (int i = 0; i < 64; i++)
		strcat(req, ",0");
	strcat(req, "]}");
	raw_send(s, req, strlen(req), NULL, 0);
	ASSERT_STR(raw_reply(s), "EINVAL");
	/* "as" is an administrator's word: a user may not say whom a tree is for, an administrator least of all */
	snprintf(req, sizeof(req), "{\"rootasm\":1,\"op\":\"assemble\",\"layout\":\"%s\",\"as\":{\"admin\":true}}",
		 path("layouts/t.yaml"));
	raw_send(s, req, strlen(req), NULL, 0);
	ASSERT_STR(raw_reply(s), "EPERM");
	snprintf(req, sizeof(req), "{\"rootasm\":1,\"op\":\"assemble\",\"layout\":\"%s\",\"as\":{\"uid\":%u,"
		 "\"gid\":%u}}", path("layouts/t.yaml"), (unsigned)UNPRIV, (unsigned)UNPRIV);
	raw_send(s, req, strlen(req), NULL, 0);
	ASSERT_STR(raw_reply(s), "EPERM");
	/* so is "upper": a host directory as the tree's upper, written through the user's tree */
	snprintf(req, sizeof(req), "{\"rootasm\":1,\"op\":\"assemble\",\"layout\":\"%s\",\"upper\":{\"upperdir\":\"%s\","
		 "\"workdir\":\"%s\"}}", path("layouts/t.yaml"), path("src"), path("other"));
	raw_send(s, req, strlen(req), NULL, 0);
	ASSERT_STR(raw_reply(s), "EPERM");
	/* fds: two with one message; one with a request that takes none; wrong types for userns */
	ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
	snprintf(req, sizeof(req), "{\"rootasm\":1,\"op\":\"assemble\",\"layout\":\"%s\"}", path("layouts/t.yaml"));
	raw_send(s, req, strlen(req), fds, 2);
	ASSERT_STR(raw_reply(s), "EMSGSIZE");
	raw_send(s, req, strlen(req), fds, 1);
	ASSERT_STR(raw_reply(s), "EINVAL");
	snprintf(req, sizeof(req), "{\"rootasm\":1,\"op\":\"assemble\",\"layout\":\"%s\",\"userns\":true}", path("layouts/t.yaml"));
	raw_send(s, req, strlen(req), NULL, 0);
	ASSERT_STR(raw_reply(s), "EINVAL");	/* no fd */
	raw_send(s, req, strlen(req), fds, 1);
	ASSERT_STR(raw_reply(s), "EINVAL");	/* a pipe */
	mntfd = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	raw_send(s, req, strlen(req), &mntfd, 1);
	ASSERT_STR(raw_reply(s), "EINVAL");	/* nsfs, but a mount namespace */
	/* a user namespace, but not ours: the initial one, owned by root; one another user made */
	raw_send(s, req, strlen(req), &init_userns, 1);
	ASSERT_STR(raw_reply(s), "EPERM");
	raw_send(s, req, strlen(req), &stranger_userns, 1);
	ASSERT_STR(raw_reply(s), "EPERM");
	/* and after all of it, the connection still serves */
	raw_send(s, "{\"rootasm\":1,\"op\":\"probe\"}", 26, NULL, 0);
	ASSERT_STR(raw_reply(s), "ok");
	close(s);
	/* a stream socket cannot even connect */
	ASSERT_TRUE(raw_connect(d->sock, SOCK_STREAM) < 0);
	free(big);
}

TEST(daemon_survives_hostile_messages)
{
	struct daemon d = start("s3", NULL);

	init_userns = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
	/* where unprivileged users may not make one, root makes it and hands it over: owner root */
	stranger_userns = userns_allowed(STRANGER) ? userns_of(STRANGER) : dup(init_userns);
	{
		/* what rootasm_error_print_json() writes, as the CLI prints it */
		char cmd[4200], buf[8192] = "";
		FILE *f;
		json_t *j;
		const char *k;
		json_t *v;

		snprintf(cmd, sizeof(cmd), "%s --json check /nonexistent.yaml 2>&1 >/dev/null", cli_bin);
		f = popen(cmd, "r");
		ASSERT_TRUE(f && fgets(buf, sizeof(buf), f));
		pclose(f);
		j = json_loads(buf, 0, NULL);
		ASSERT_TRUE(j != NULL);
		json_object_foreach(json_object_get(j, "error"), k, v)
			snprintf(cli_error_keys + strlen(cli_error_keys), sizeof(cli_error_keys) - strlen(cli_error_keys),
				 "%s,", k);
		json_decref(j);
		ASSERT_CONTAINS(cli_error_keys, "errname,");
	}
	if (as_user(UNPRIV, hostile, &d))
		FAILF("hostile peer");
	{
		/* an administrator's "as": every key and value checked, nothing ignored */
		static const char *const bad_as[] = {
			"5", "{}", "{\"admin\":false}", "{\"admin\":true,\"uid\":0}", "{\"uid\":1000}",
			"{\"uid\":-1,\"gid\":0}", "{\"uid\":1,\"gid\":1,\"groups\":[-1]}",
			"{\"uid\":1,\"gid\":1,\"groups\":5}", "{\"uid\":1,\"gid\":1,\"evil\":1}",
			"{\"admin\":true,\"layouts\":[\"rel\"]}", "{\"admin\":true,\"layouts\":\"/x\"}",
			"{\"admin\":true,\"sources\":[\"/a/../b\"]}",
		};
		int s = raw_connect(d.sock, SOCK_SEQPACKET);

		ASSERT_TRUE(s >= 0);
		each_refused(s, "as", bad_as, sizeof(bad_as) / sizeof(bad_as[0]));
		close(s);
	}
	no_leaks(&d);
	stop(&d);
}

/*
 * The protocol as the daemon describes it (rootasmd --protocol, serve.c's
 * table): every request it names is served (not EOPNOTSUPP); each of its
 * keys, and each common one, of another type is refused naming the type;
 * a key it does not name is refused; an fd with a request that takes none
 * is refused. So the description is the daemon's, not a copy of it.
 */
TEST(daemon_takes_exactly_what_its_protocol_describes)
{
	struct daemon d = start("s3p", NULL);
	char cmd[4200], *text = NULL, req[2048];
	size_t cap = 0, i, j;
	json_t *desc, *r, *k, *keys;
	FILE *f;
	int s, fds[2];

	snprintf(cmd, sizeof(cmd), "%s --protocol", daemon_bin);
	f = popen(cmd, "r");
	ASSERT_TRUE(f != NULL);
	ASSERT_TRUE(getdelim(&text, &cap, '\0', f) > 0);
	ASSERT_EQ(pclose(f), 0);
	desc = json_loads(text, 0, NULL);
	ASSERT_TRUE(desc != NULL);
	ASSERT_EQ(json_integer_value(json_object_get(desc, "rootasm")), 1);
	ASSERT_EQ(json_array_size(json_object_get(desc, "requests")), 3);
	s = raw_connect(d.sock, SOCK_SEQPACKET);
	ASSERT_TRUE(s >= 0);
	ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
	json_array_foreach(json_object_get(desc, "requests"), i, r) {
		const char *op = json_string_value(json_object_get(r, "op"));

		snprintf(req, sizeof(req), "{\"rootasm\":1,\"op\":\"%s\"}", op);
		raw_send(s, req, strlen(req), NULL, 0);
		ASSERT_TRUE(strcmp(raw_reply(s), "EOPNOTSUPP") != 0);
		snprintf(req, sizeof(req), "{\"rootasm\":1,\"op\":\"%s\",\"zzz\":1}", op);
		raw_send(s, req, strlen(req), NULL, 0);
		ASSERT_STR(raw_reply(s), "EINVAL");
		if (!json_object_get(r, "fd")) {
			snprintf(req, sizeof(req), "{\"rootasm\":1,\"op\":\"%s\"}", op);
			raw_send(s, req, strlen(req), fds, 1);
			ASSERT_STR(raw_reply(s), "EINVAL");
		}
		keys = json_object_get(r, "keys");
		json_array_foreach(keys, j, k) {
			const char *name = json_string_value(json_object_get(k, "name"));
			const char *type = json_string_value(json_object_get(k, "type"));

			snprintf(req, sizeof(req), "{\"rootasm\":1,\"op\":\"%s\",\"%s\":%s}", op, name,
				 !strcmp(type, "string") ? "7" : "\"x\"");
			raw_send(s, req, strlen(req), NULL, 0);
			ASSERT_STR(raw_reply(s), "EINVAL");
		}
	}
	/* the common keys: the version first (EPROTO), then the op (EINVAL) */
	snprintf(req, sizeof(req), "{\"rootasm\":\"1\",\"op\":\"probe\"}");
	raw_send(s, req, strlen(req), NULL, 0);
	ASSERT_STR(raw_reply(s), "EPROTO");
	snprintf(req, sizeof(req), "{\"rootasm\":1,\"op\":7}");
	raw_send(s, req, strlen(req), NULL, 0);
	ASSERT_STR(raw_reply(s), "EINVAL");
	/* "upper" (root's word): its shape, then for a user's tree the authorize stage's refusal */
	snprintf(req, sizeof(req), "{\"rootasm\":1,\"op\":\"assemble\",\"layout\":\"%s\",\"upper\":{\"upperdir\":\"%s\"}}",
		 path("layouts/t.yaml"), path("src"));
	raw_send(s, req, strlen(req), NULL, 0);
	ASSERT_STR(raw_reply(s), "EINVAL");
	snprintf(req, sizeof(req), "{\"rootasm\":1,\"op\":\"assemble\",\"layout\":\"%s\",\"as\":{\"uid\":%u,\"gid\":%u},"
		 "\"upper\":{\"upperdir\":\"%s\",\"workdir\":\"%s\"}}", path("layouts/t.yaml"), (unsigned)UNPRIV,
		 (unsigned)UNPRIV, path("src"), path("other"));
	raw_send(s, req, strlen(req), NULL, 0);
	ASSERT_STR(raw_reply(s), "EPERM");
	/* (the same request without it is served: the refusal is the upper's) */
	snprintf(req, sizeof(req), "{\"rootasm\":1,\"op\":\"assemble\",\"layout\":\"%s\",\"as\":{\"uid\":%u,\"gid\":%u}}",
		 path("layouts/t.yaml"), (unsigned)UNPRIV, (unsigned)UNPRIV);
	raw_send(s, req, strlen(req), NULL, 0);
	ASSERT_STR(raw_reply(s), "ok");
	close(fds[0]);
	close(fds[1]);
	close(s);
	json_decref(desc);
	free(text);
	no_leaks(&d);
	stop(&d);
}

static void hold_connections(void *arg)
{
	struct daemon *d = arg;
	int s[17];

	/* the rule's max_connections is 3 for this uid: the 4th is refused with why, the others serve */
	for (int i = 0; i < 3; i++) {
		s[i] = raw_connect(d->sock, SOCK_SEQPACKET);
		ASSERT_TRUE(s[i] >= 0);
		raw_send(s[i], "{\"rootasm\":1,\"op\":\"probe\"}", 26, NULL, 0);
		ASSERT_STR(raw_reply(s[i]), "ok");
	}
	s[3] = raw_connect(d->sock, SOCK_SEQPACKET);
	ASSERT_STR(raw_reply(s[3]), "EBUSY");
	close(s[3]);
	/* one goes, one more may come (once the old connection's thread has ended) */
	close(s[0]);
	s[0] = served_connection(d->sock, 100000, 0);
	ASSERT_TRUE(s[0] >= 0);
}

static void stranger(void *arg)
{
	struct daemon *d = arg;
	int s = raw_connect(d->sock, SOCK_SEQPACKET);

	/* no rule: refused at the door, with the reason, holding nothing of the daemon's */
	ASSERT_STR(raw_reply(s), "EPERM");
	ASSERT_STR(raw_reply(s), "EOF");
}

TEST(daemon_limits_connections)
{
	const char *two[] = { "--max-clients", "2", NULL };
	struct daemon d = start("s12", NULL);
	int a, b, c;

	if (as_user(UNPRIV + 1, hold_connections, &d))
		FAILF("per-uid limit");
	if (as_user(STRANGER, stranger, &d))
		FAILF("stranger");
	no_leaks(&d);
	stop(&d);
	/* the daemon's own limit, for everyone, root included */
	d = start("s13", two);
	a = raw_connect(d.sock, SOCK_SEQPACKET);
	b = raw_connect(d.sock, SOCK_SEQPACKET);
	raw_send(a, "{\"rootasm\":1,\"op\":\"probe\"}", 26, NULL, 0);
	ASSERT_STR(raw_reply(a), "ok");
	raw_send(b, "{\"rootasm\":1,\"op\":\"probe\"}", 26, NULL, 0);
	ASSERT_STR(raw_reply(b), "ok");
	c = raw_connect(d.sock, SOCK_SEQPACKET);
	ASSERT_STR(raw_reply(c), "EBUSY");
	close(a);
	close(b);
	close(c);
	stop(&d);
	/*
	 * An eighth of them is kept for administrators: a user whose rule allows
	 * it (16, the default max_connections) takes 14 of 16, not the 2 that
	 * root's rootasm-runtime still gets
	 */
	{
		const char *sixteen[] = { "--max-clients", "16", NULL };
		int ready[2], done[2], fds[2];
		char got[64] = "";
		pid_t pid;

		d = start("s13b", sixteen);
		ASSERT_TRUE(pipe2(ready, O_CLOEXEC) == 0 && pipe2(done, O_CLOEXEC) == 0);
		pid = fork();
		ASSERT_TRUE(pid >= 0);
		if (pid == 0) {
			int s[15], n = 0;
			char buf[64];

			close(ready[0]);
			close(done[1]);
			become(UNPRIV);
			for (int i = 0; i < 15; i++) {
				s[i] = raw_connect(d.sock, SOCK_SEQPACKET);
				raw_send(s[i], "{\"rootasm\":1,\"op\":\"probe\"}", 26, NULL, 0);
				n += !strcmp(raw_reply(s[i]), "ok");
			}
			snprintf(buf, sizeof(buf), "%d %s", n, last_error_keys[0] ? "refused" : "-");
			(void)!write(ready[1], buf, strlen(buf));
			close(ready[1]);
			(void)!read(done[0], buf, 1);	/* (held until the parent is done) */
			_exit(0);
		}
		close(ready[1]);
		close(done[0]);
		(void)!read(ready[0], got, sizeof(got) - 1);
		close(ready[0]);
		/* root, an administrator: the two kept (the user's refused 15th counts until its thread has ended) */
		for (int i = 0; i < 2; i++) {
			fds[i] = served_connection(d.sock, 500, 10000);
			ASSERT_TRUE(fds[i] >= 0);
		}
		c = raw_connect(d.sock, SOCK_SEQPACKET);
		ASSERT_STR(raw_reply(c), "EBUSY");
		close(c);
		close(fds[0]);
		close(fds[1]);
		close(done[1]);
		ASSERT_EQ(waitpid(pid, NULL, 0), pid);
		ASSERT_STR(got, "14 refused");
		stop(&d);
	}
}

TEST(daemon_client_dies_mid_request)
{
	struct daemon d = start("s4", NULL);
	char req[8192];
	json_t *st;

	snprintf(req, sizeof(req), "{\"rootasm\":1,\"op\":\"assemble\",\"layout\":\"%s\"}", path("layouts/t.yaml"));
	for (int i = 0; i < 50; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			int s = raw_connect(d.sock, SOCK_SEQPACKET);

			raw_send(s, req, strlen(req), NULL, 0);
			/* half the clients close, half are killed outright, before any reply */
			if (i % 2)
				_exit(0);
			kill(getpid(), SIGKILL);
		}
		waitpid(pid, NULL, 0);
	}
	/* a client that comes after them is served */
	{
		struct rootasm_error e = { 0 };
		int fd = via(&d, path("layouts/t.yaml"), &e);

		TREE_OK(fd);
		close(fd);
	}
	st = status(&d);
	/* every request was served or cut off; none is left hanging */
	ASSERT_TRUE(counter(st, "requests") >= 2);
	json_decref(st);
	no_leaks(&d);
	stop(&d);
	fprintf(stderr, "  50 clients died mid-request: 0 leaked mounts, loop devices, fds\n");
}

/*
 * rootasm_client_assemble() in two halves (rootasm-runtime prepares its
 * state while the daemon assembles): one request at a time per client, a
 * receive needs a request, others are served meanwhile, and a client closed
 * between the two leaves nothing behind.
 */
TEST(daemon_client_assembles_in_two_halves)
{
	struct daemon d = start("s16", NULL);
	struct rootasm_client_assemble_opts o = { .size = sizeof(o), .layout = path("layouts/t.yaml") };
	struct rootasm_client *c, *gone;
	struct rootasm_error e = { 0 };
	char *json = NULL;
	int fd;

	ASSERT_EQ(rootasm_client_connect(d.sock, &c, &e), 0);
	/* nothing sent: refused at once, not a wait for a reply that never comes */
	ASSERT_EQ(rootasm_client_assemble_receive(c, &e), -EINVAL);
	ASSERT_CONTAINS(e.msg, "no assemble request was sent");
	ASSERT_EQ(rootasm_client_assemble_send(c, &o, &e), 0);
	/* a second request before the first's reply is read: refused, whichever call it is */
	e = (struct rootasm_error){ 0 };
	ASSERT_EQ(rootasm_client_assemble_send(c, &o, &e), -EBUSY);
	ASSERT_CONTAINS(e.msg, "still to be read");
	ASSERT_EQ(rootasm_client_probe(c, &json, &e), -EBUSY);
	ASSERT_TRUE(json == NULL);
	ASSERT_EQ(rootasm_client_assemble(c, &o, &e), -EBUSY);
	/* another client is served meanwhile */
	fd = via(&d, path("layouts/t.yaml"), &e);
	TREE_OK(fd);
	close(fd);
	/* the reply read is the first request's: the tree */
	fd = rootasm_client_assemble_receive(c, &e);
	TREE_OK(fd);
	close(fd);
	/* and the client takes requests again */
	fd = rootasm_client_assemble(c, &o, &e);
	TREE_OK(fd);
	close(fd);
	rootasm_client_close(c);
	/* closed between the halves: the tree the daemon made is dropped */
	ASSERT_EQ(rootasm_client_connect(d.sock, &gone, &e), 0);
	ASSERT_EQ(rootasm_client_assemble_send(gone, &o, &e), 0);
	rootasm_client_close(gone);
	no_leaks(&d);
	stop(&d);
}

/*
 * A peer at the socket that answers an assemble with an fd of its choosing
 * (not rootasmd): the client hands on only a detached tree's root. A mount
 * attached in the client's namespace (here a shared one) would have the
 * caller change or move it (rootasm-runtime makes the tree's root private,
 * then moves it over a rootfs); a directory inside a tree is not its root.
 * Each reply is refused with why, the mount keeps its propagation; a
 * detached tree is taken.
 */
TEST(client_takes_only_a_detached_tree_from_a_reply)
{
	static const char ok[] = "{\"rootasm\":1,\"ok\":true}";
	struct rootasm_client_assemble_opts o = { .size = sizeof(o), .layout = path("layouts/t.yaml") };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int attached, detached, inside, lfd;
	struct {
		const char *what;
		int *fd;
		const char *why;	/* NULL: taken */
	} cases[] = {
		{ "an attached, shared mount", &attached, "a mount attached in this mount namespace" },
		{ "a directory inside a detached tree", &inside, "not the root of a mount" },
		{ "a detached tree", &detached, NULL },
	};

	sh("mkdir -p %s/peer && mount -t tmpfs rootasm-peer %s/peer && mount --make-shared %s/peer && "
	   "mkdir %s/peer/sub", fix, fix, fix, fix);
	attached = open(path("peer"), O_PATH | O_DIRECTORY | O_CLOEXEC);
	detached = (int)syscall(SYS_open_tree, AT_FDCWD, path("peer"), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	ASSERT_TRUE(attached >= 0 && detached >= 0);
	inside = openat(detached, "sub", O_PATH | O_DIRECTORY | O_CLOEXEC);
	ASSERT_TRUE(inside >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path("peer.sock"));
	lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	ASSERT_TRUE(lfd >= 0 && bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(lfd, 4) == 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rootasm_client *c;
		struct rootasm_error e = { 0 };
		pid_t pid;
		int fd, st;

		ASSERT_EQ(rootasm_client_connect(sa.sun_path, &c, &e), 0);
		pid = fork();
		ASSERT_TRUE(pid >= 0);
		if (pid == 0) {
			char buf[4096];
			int s = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

			if (s < 0 || recv(s, buf, sizeof(buf), 0) <= 0)
				_exit(1);
			raw_send(s, ok, strlen(ok), cases[i].fd, 1);
			_exit(0);
		}
		fd = rootasm_client_assemble(c, &o, &e);
		ASSERT_EQ(waitpid(pid, &st, 0), pid);
		ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		rootasm_client_close(c);
		fprintf(stderr, "  %s: %s\n", cases[i].what, fd >= 0 ? "taken" : err_line(&e));
		if (!cases[i].why) {
			ASSERT_TRUE(fd >= 0);
			close(fd);
			continue;
		}
		ASSERT_EQ(fd, -EPROTO);
		ASSERT_CONTAINS(e.msg, cases[i].why);
	}
	/* (the peer's mount is as it was: shared) */
	ASSERT_EQ(run_sh(NULL, "grep -q ' %s/peer .* shared:' /proc/self/mountinfo", fix), 0);
	close(lfd);
	close(attached);
	close(inside);
	close(detached);
}

/* (a child of tree_lock_makes_no_user_namespace_per_tree: its exit status says how many trees it locked) */
static int lock_many(int n)
{
	static const char *const maps[][2] = { { "/proc/self/setgroups", "deny" }, { "/proc/self/uid_map", "0 0 1" },
					       { "/proc/self/gid_map", "0 0 1" },
					       { "/proc/sys/user/max_user_namespaces", "4" } };
	int held = 0;

	if (unshare(CLONE_NEWUSER) < 0)
		return 200;
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		int fd = open(maps[i][0], O_WRONLY | O_CLOEXEC);

		if (fd < 0 || write(fd, maps[i][1], strlen(maps[i][1])) != (ssize_t)strlen(maps[i][1]))
			return 201 + (int)i;
		close(fd);
	}
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return 210;
	for (int i = 0; i < n; i++) {
		struct rootasm_error e = { 0 };
		int fs = fsopen("tmpfs", FSOPEN_CLOEXEC), t, locked;

		if (fs < 0 || fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0 ||
		    (t = fsmount(fs, FSMOUNT_CLOEXEC, 0)) < 0)
			return 211;
		close(fs);
		/* (every tree held, as a client keeps what it was given) */
		locked = rootasm_tree_lock(t, &e);
		if (locked < 0) {
			fprintf(stderr, "  tree %d: %s\n", i + 1, err_line(&e));
			break;
		}
		held++;
	}
	return held;
}

/*
 * Every tree locked for a user (rootasmd's for a non-administrator) is a
 * copy made in a user namespace other than its own, which each tree holds
 * for as long as it lives; user namespaces are counted for their creator
 * against user.max_user_namespaces: a user that kept every tree would use
 * up root's. One user namespace serves all the copies: with the limit at 4
 * (in a user namespace of the test's own), 12 trees are locked and held.
 */
TEST(tree_lock_makes_no_user_namespace_per_tree)
{
	pid_t pid = fork();
	int st;

	ASSERT_TRUE(pid >= 0);
	if (pid == 0)
		_exit(lock_many(12));
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	ASSERT_TRUE(WIFEXITED(st));
	ASSERT_EQ(WEXITSTATUS(st), 12);
}

TEST(daemon_client_that_never_reads_does_not_block_others)
{
	struct daemon d = start("s5", NULL);
	char req[8192];
	int s, sent = 0, st;
	pid_t pid;

	snprintf(req, sizeof(req), "{\"rootasm\":1,\"op\":\"assemble\",\"layout\":\"%s\"}", path("layouts/t.yaml"));
	s = raw_connect(d.sock, SOCK_SEQPACKET);
	/* requests until our side cannot send more; we read none of the replies (each carries a tree) */
	for (int i = 0; i < 2000; i++) {
		if (send(s, req, strlen(req), MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
			break;
		sent++;
	}
	/* meanwhile others are served, in bounded time (generous: the QEMU guest runs this under TCG) */
	pid = fork();
	if (pid == 0) {
		alarm(90);
		for (int i = 0; i < 20; i++) {
			struct rootasm_error e = { 0 };
			int fd = via(&d, path("layouts/t.yaml"), &e);

			if (fd < 0)
				FAILF("other client: %s", err_line(&e));
			close(fd);
		}
		_exit(0);
	}
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* the daemon gave up on the reader (its replies could not be queued) or queued them all */
	close(s);
	no_leaks(&d);
	stop(&d);
	fprintf(stderr, "  a peer sent %d requests and read nothing: others served, 0 leaked\n", sent);
}

TEST(daemon_killed_mid_assembly_then_restarted)
{
	struct daemon d = start("s6", NULL);
	pid_t kids[8];
	int st;

	/* clients assembling in a loop while the daemon is killed under them */
	for (int k = 0; k < 8; k++) {
		kids[k] = fork();
		if (kids[k] == 0) {
			for (;;) {
				struct rootasm_error e = { 0 };
				int fd = via(&d, path("layouts/t.yaml"), &e);

				if (fd < 0)
					_exit(0);	/* the daemon is gone */
				close(fd);
			}
		}
	}
	/* once it has served some, kill it */
	for (int i = 0; i < 100000; i++) {
		json_t *j = status(&d);
		long long n = counter(j, "assembled");

		json_decref(j);
		if (n >= 40)
			break;
	}
	ASSERT_EQ(kill(d.pid, SIGKILL), 0);
	ASSERT_EQ(waitpid(d.pid, &st, 0), d.pid);
	for (int k = 0; k < 8; k++)
		ASSERT_EQ(waitpid(kids[k], NULL, 0), kids[k]);
	/* the kernel took everything back with the process: no loop device, no mount */
	ASSERT_EQ(loops(), 0);
	close(d.err);
	/* a new daemon on the same path (the old socket file is replaced) serves again */
	d = start("s6", NULL);
	{
		struct rootasm_error e = { 0 };
		int fd = via(&d, path("layouts/t.yaml"), &e);

		if (fd < 0)
			FAILF("after restart: %s", err_line(&e));
		TREE_OK(fd);
		close(fd);
	}
	no_leaks(&d);
	stop(&d);
}

/* A second rootasmd on a live daemon's socket: refused in one line, the first one still reachable. */
/*
 * rootasm probe --via: the daemon's answers, as the CLI prints its own (the
 * same kernel and rights here, so the same lines); exit 0 only while it
 * answers (the DaemonSet's readiness check), 1 once it is gone.
 */
TEST(probe_via_is_the_daemons_answer_and_its_readiness)
{
	struct daemon d = start("s15", NULL);
	char *mine, *theirs;

	ASSERT_EQ(run_sh(&mine, "%s probe", cli_bin), 0);
	ASSERT_EQ(run_sh(&theirs, "%s probe --via %s", cli_bin, d.sock), 0);
	ASSERT_STR(theirs, mine);
	ASSERT_CONTAINS(theirs, "mount-api ");
	ASSERT_EQ(run_sh(&theirs, "%s --json probe --via %s", cli_bin, d.sock), 0);
	ASSERT_CONTAINS(theirs, "[{\"feature\":\"mount-api\",\"state\":\"present\"");
	no_leaks(&d);
	stop(&d);
	ASSERT_EQ(run_sh(&theirs, "%s probe --via %s", cli_bin, d.sock), 1);
	ASSERT_CONTAINS(theirs, d.sock);
}

TEST(daemon_refuses_a_socket_a_live_daemon_listens_on)
{
	struct daemon d = start("s7", NULL);
	char out[4096] = "";
	size_t len = 0;
	ssize_t n;
	int p[2], st;
	pid_t pid;
	json_t *j;

	ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 2);
		execl(daemon_bin, daemon_bin, "--socket", d.sock, "--policy", path("policy.json"), (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	/* it must end by itself: one that serves instead is stopped once it says so */
	while (len < sizeof(out) - 1 && (n = read(p[0], out + len, sizeof(out) - 1 - len)) > 0) {
		out[len += n] = '\0';
		if (strstr(out, "serving on"))
			kill(pid, SIGKILL);
	}
	close(p[0]);
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st) == 0)
		FAILF("a second rootasmd on %s did not fail (status %d): %s", d.sock, st, out);
	ASSERT_CONTAINS(out, "a live rootasmd (pid ");
	ASSERT_TRUE(strstr(out, "serving on") == NULL);
	/* the first one still serves at its path */
	j = status(&d);
	ASSERT_TRUE(counter(j, "refused") >= 0);
	json_decref(j);
	{
		struct rootasm_error e = { 0 };
		int fd = via(&d, path("layouts/t.yaml"), &e);

		if (fd < 0)
			FAILF("the first daemon after the second was refused: %s", err_line(&e));
		close(fd);
	}
	no_leaks(&d);
	stop(&d);
	/* stopped, it took its socket file with it: a new one binds (and a stale one is replaced: s6) */
	ASSERT_TRUE(access(d.sock, F_OK) < 0);
}

TEST(daemon_notices_an_image_replaced_while_cached)
{
	struct daemon d = start("s7", NULL);
	struct rootasm_error e = { 0 };
	json_t *st;
	int fd;

	sh("cp %s/src/l2.sqfs %s/src/swap.sqfs", fix, fix);
	put("layouts/swap.yaml", "version: 1\nlayers:\n  - dir: %s\n  - image: %s\n", path("src/l1"), path("src/swap.sqfs"));
	fd = via(&d, path("layouts/swap.yaml"), &e);
	ASSERT_STR(slurp_at(fd, "etc/motd"), "l2\n");
	/* replaced by rename (a new inode under the same name) while a tree of the old one is still open */
	sh("cd %s && mkdir -p new/etc && echo replaced > new/etc/motd && mksquashfs new new.sqfs -quiet -no-progress "
	   ">/dev/null && mv new.sqfs src/swap.sqfs", fix);
	{
		int fd2 = via(&d, path("layouts/swap.yaml"), &e);

		if (fd2 < 0)
			FAILF("%s", err_line(&e));
		ASSERT_STR(slurp_at(fd2, "etc/motd"), "replaced\n");
		close(fd2);
	}
	/* the old tree is unaffected */
	ASSERT_STR(slurp_at(fd, "etc/motd"), "l2\n");
	close(fd);
	/* rewritten in place (same inode, new size and times) */
	sh("cd %s && echo again > new/etc/motd && mksquashfs new new2.sqfs -quiet -no-progress >/dev/null && "
	   "cat new2.sqfs > src/swap.sqfs", fix);
	fd = via(&d, path("layouts/swap.yaml"), &e);
	ASSERT_STR(slurp_at(fd, "etc/motd"), "again\n");
	close(fd);
	st = status(&d);
	ASSERT_EQ(cache_n(st, "stale"), 2);
	ASSERT_EQ(cache_n(st, "entries"), 1);
	json_decref(st);
	no_leaks(&d);
	stop(&d);
}

struct conc {
	struct daemon *d;
	const char *layout;	/* (path()'s buffers are not the threads' to share: made before they start) */
	int ok;
	char err[512];
};

static void *conc_client(void *arg)
{
	struct conc *c = arg;
	struct rootasm_error e = { 0 };
	int fd = via(c->d, c->layout, &e);

	if (fd < 0) {
		snprintf(c->err, sizeof(c->err), "%s", err_line(&e));
		return NULL;
	}
	c->ok = !strcmp(slurp_at(fd, "etc/motd") ?: "", "l2\n") && !strcmp(slurp_at(fd, "vol/volfile") ?: "", "vol\n");
	close(fd);
	return NULL;
}

TEST(daemon_200_concurrent_clients)
{
	enum { N = 200 };
	struct daemon d = start("s8", NULL);
	static struct conc c[N];
	pthread_t t[N];
	char layout[4096];
	int ok = 0;
	json_t *st;

	snprintf(layout, sizeof(layout), "%s", path("layouts/t.yaml"));
	for (int i = 0; i < N; i++) {
		c[i] = (struct conc){ .d = &d, .layout = layout };
		ASSERT_EQ(pthread_create(&t[i], NULL, conc_client, &c[i]), 0);
	}
	for (int i = 0; i < N; i++) {
		pthread_join(t[i], NULL);
		if (!c[i].ok)
			FAILF("client %d: %s", i, c[i].err);
		ok++;
	}
	st = status(&d);
	ASSERT_EQ(counter(st, "assembled"), N);
	ASSERT_EQ(cache_n(st, "entries"), 2);
	fprintf(stderr, "  %d concurrent clients served, peak %lld connections at once; ", ok, counter(st, "clients_peak"));
	json_decref(st);
	no_leaks(&d);
	stop(&d);
	fprintf(stderr, "0 leaked\n");
}

/* ---------------------------------------------------------------- rootless */

struct rootless {
	struct daemon *d;
	const char *layout;
	bool creds;		/* the kernel records a credential in the namespace */
	int report;		/* pipe: what the client saw */
};

/* In a user namespace of our own (uid 0 -> UNPRIV) with a mount namespace it owns. */
static void own_namespaces(void)
{
	char map[64];
	int fd, uid = getuid();

	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		FAILF("unshare: %s", strerror(errno));
	fd = open("/proc/self/setgroups", O_WRONLY);
	(void)!write(fd, "deny", 4);
	close(fd);
	snprintf(map, sizeof(map), "0 %d 1", uid);
	fd = open("/proc/self/uid_map", O_WRONLY);
	ASSERT_EQ(write(fd, map, strlen(map)), (ssize_t)strlen(map));
	close(fd);
	fd = open("/proc/self/gid_map", O_WRONLY);
	ASSERT_EQ(write(fd, map, strlen(map)), (ssize_t)strlen(map));
	close(fd);
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		FAILF("make / private in our namespace: %s", strerror(errno));
}

static void rootless_client(void *arg)
{
	struct rootless *r = arg;
	struct rootasm_client_assemble_opts o = { .size = sizeof(o), .layout = r->layout, .flags = ROOTASM_CLIENT_USERNS };
	struct rootasm_client *c;
	struct rootasm_error e = { 0 };
	struct stat st;
	int fd, nsfd;

	own_namespaces();
	nsfd = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
	o.userns_fd = nsfd;
	if (rootasm_client_connect(r->d->sock, &c, &e) < 0)
		FAILF("connect: %s", err_line(&e));
	fd = rootasm_client_assemble(c, &o, &e);
	if (fd < 0)
		FAILF("assemble: %s", err_line(&e));
	rootasm_client_close(c);
	/* attached in our own mount namespace, by us */
	if (move_mount(fd, "", AT_FDCWD, path("rl/mnt"), MOVE_MOUNT_F_EMPTY_PATH) < 0)
		FAILF("move_mount into our namespace: %s", strerror(errno));
	close(fd);
	/* the layers' root-owned files are our root's */
	ASSERT_EQ(stat(path("rl/mnt/etc/motd"), &st), 0);
	ASSERT_EQ(st.st_uid, 0);
	ASSERT_EQ(st.st_gid, 0);
	ASSERT_STR(slurp_at(AT_FDCWD, path("rl/mnt/etc/motd")), "l2\n");
	/*
	 * A directory layer is the host's and is not idmapped: its files keep their
	 * host owners, so our root owns only what our uid (4242) owns on the host.
	 * /secret is another user's (4342), /rootsecret root's, both 0600: out of
	 * reach, as on the host (idmapped into our namespace, root's would be ours).
	 */
	ASSERT_EQ(stat(path("rl/mnt/secret"), &st), 0);
	ASSERT_EQ(st.st_uid, 65534);
	ASSERT_ERRNO(open(path("rl/mnt/secret"), O_RDONLY | O_CLOEXEC), EACCES);
	ASSERT_EQ(stat(path("rl/mnt/rootsecret"), &st), 0);
	ASSERT_EQ(st.st_uid, 65534);
	ASSERT_ERRNO(open(path("rl/mnt/rootsecret"), O_RDONLY | O_CLOEXEC), EACCES);
	ASSERT_EQ(stat(path("rl/mnt/mine"), &st), 0);
	ASSERT_EQ(st.st_uid, 0);
	ASSERT_STR(slurp_at(AT_FDCWD, path("rl/mnt/mine")), "mine\n");
	/* writable as our root: a new file, and a copy-up of a root-owned one */
	fd = open(path("rl/mnt/newfile"), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	ASSERT_TRUE(fd >= 0);
	close(fd);
	ASSERT_EQ(stat(path("rl/mnt/newfile"), &st), 0);
	ASSERT_EQ(st.st_uid, 0);
	fd = open(path("rl/mnt/etc/motd"), O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		FAILF("copy-up of /etc/motd: %s", strerror(errno));
	ASSERT_EQ(write(fd, "mine\n", 5), 5);
	close(fd);
	ASSERT_STR(slurp_at(AT_FDCWD, path("rl/mnt/etc/motd")), "mine\n");
	/* the tree is nosuid,nodev throughout */
	{
		char *mi = slurp_at(AT_FDCWD, "/proc/self/mountinfo");
		char *line = strstr(mi, path("rl/mnt"));

		ASSERT_TRUE(line != NULL);
		ASSERT_TRUE(strstr(line, "nosuid") != NULL && strstr(line, "nodev") != NULL);
	}
}

TEST(daemon_rootless_client_gets_a_tree_idmapped_into_its_namespace)
{
	struct daemon d = start("s9", NULL);
	struct rootless r = { .d = &d, .layout = path("layouts/rl.yaml") };
	struct rootasm_error e = { 0 };
	struct rootasm_client_assemble_opts o = { .size = sizeof(o), .layout = path("layouts/rl.yaml"),
						  .flags = ROOTASM_CLIENT_USERNS };
	struct rootasm_client *c;

	if (!userns_allowed(UNPRIV))
		SKIP("this kernel does not let an unprivileged uid make a user namespace "
		     "(kernel.unprivileged_userns_clone or user.max_user_namespaces)");
	sh("mkdir -p %s/rl/mnt && chmod 0755 %s/rl %s/rl/mnt", fix, fix, fix);
	if (as_user(UNPRIV, rootless_client, &r))
		FAILF("rootless client (daemon log: %s)", daemon_log(&d));
	/* the namespace fd must be the peer's own: root's initial one is refused for root too (not a caller's) */
	o.userns_fd = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
	ASSERT_EQ(rootasm_client_connect(d.sock, &c, &e), 0);
	ASSERT_TRUE(rootasm_client_assemble(c, &o, &e) < 0);
	ASSERT_CONTAINS(err_line(&e), "the assembler's own user namespace");
	rootasm_client_close(c);
	no_leaks(&d);
	stop(&d);
}

/*
 * --debug logs the plan the daemon executes, not one built again beside it: an
 * administrator's tree for a user namespace shows every image and tmpfs
 * idmapped into it (the plan the log used to print had no user namespace).
 */
struct debug_req {
	struct daemon *d;
	struct rootasm_client_assemble_opts *o;
	int fd;
	struct rootasm_error e;
	int done;
};

static void *debug_req_main(void *arg)
{
	struct debug_req *r = arg;
	struct rootasm_client *c;

	r->fd = rootasm_client_connect(r->d->sock, &c, &r->e);
	if (r->fd == 0) {
		r->fd = rootasm_client_assemble(c, r->o, &r->e);
		rootasm_client_close(c);
	}
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

TEST(daemon_debug_logs_the_plan_it_executes)
{
	static const char *const extra[] = { "--debug", NULL };
	struct daemon d = start("s10", extra);
	struct rootasm_client_assemble_opts o = { .size = sizeof(o), .layout = path("layouts/t.yaml"),
						  .flags = ROOTASM_CLIENT_USERNS };
	struct rootasm_error e = { 0 };
	int go[2], back[2], st, fd;
	char p[64], *log;
	pid_t pid;

	/* a user namespace of root's that maps 0 (to 100000): the child holds it while we write its maps */
	ASSERT_EQ(pipe2(go, O_CLOEXEC), 0);
	ASSERT_EQ(pipe2(back, O_CLOEXEC), 0);
	pid = fork();
	if (pid == 0) {
		char b;

		if (unshare(CLONE_NEWUSER) < 0)
			_exit(1);
		(void)!write(back[1], "u", 1);
		(void)!read(go[0], &b, 1);
		_exit(0);
	}
	{
		char b;

		ASSERT_EQ(read(back[0], &b, 1), 1);
	}
	snprintf(p, sizeof(p), "/proc/%d/uid_map", (int)pid);
	sh("echo '0 100000 65536' >%s && echo '0 100000 65536' >/proc/%d/gid_map", p, (int)pid);
	snprintf(p, sizeof(p), "/proc/%d/ns/user", (int)pid);
	o.userns_fd = open(p, O_RDONLY | O_CLOEXEC);
	ASSERT_TRUE(o.userns_fd >= 0);
	ASSERT_EQ(write(go[1], "x", 1), 1);
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	/* the request in a thread of its own: its trace is more than a pipe holds, and we read it meanwhile */
	{
		static char buf[1 << 20];
		struct debug_req r = { .d = &d, .o = &o, .fd = -1 };
		size_t len = 0;
		pthread_t t;

		ASSERT_EQ(pthread_create(&t, NULL, debug_req_main, &r), 0);
		for (;;) {
			struct pollfd pf = { d.err, POLLIN, 0 };
			ssize_t n;
			int fin = __atomic_load_n(&r.done, __ATOMIC_ACQUIRE);

			poll(&pf, 1, 50);
			while (len < sizeof(buf) - 1 && (n = read(d.err, buf + len, sizeof(buf) - 1 - len)) > 0)
				len += n;
			if (fin)
				break;
		}
		pthread_join(t, NULL);
		buf[len] = '\0';
		fd = r.fd;
		e = r.e;
		log = buf;
	}
	if (fd < 0)
		FAILF("assemble for a user namespace: %s", err_line(&e));
	close(fd);
	close(o.userns_fd);
	ASSERT_CONTAINS(log, "the plan it executes:");
	ASSERT_CONTAINS(log, "layers[1] image");
	ASSERT_CONTAINS(log, "idmap=principal's-user-namespace");
	ASSERT_CONTAINS(log, "upper/,work/=owned-by-the-user-namespace's-root");
	/* the grant it carries out: an administrator's, into the client's user namespace */
	ASSERT_CONTAINS(log, "grant: what the layout says (an administrator's tree); into a user namespace whose root is "
			"uid 100000 gid 100000 outside");
	no_leaks(&d);
	stop(&d);
}

/* ------------------------------------------------------- principals: attacks */

/* What a client of uid UNPRIV may not be given (rootasm.h, "principals"). */
struct attack {
	struct daemon *d;
	const char *text;	/* an inline layout */
	bool userns;
	const char *want;	/* the refusal's words, or NULL: the tree must come, read-only where it is root's */
};

static void attack_client(void *arg)
{
	struct attack *a = arg;
	struct rootasm_client_assemble_opts o = { .size = sizeof(o), .layout_text = a->text, .name = "attack",
						  .flags = a->userns ? ROOTASM_CLIENT_USERNS : 0 };
	struct rootasm_client *c;
	struct rootasm_error e = { 0 };
	int fd;

	if (a->userns) {
		own_namespaces();
		o.userns_fd = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
	}
	ASSERT_EQ(rootasm_client_connect(a->d->sock, &c, &e), 0);
	fd = rootasm_client_assemble(c, &o, &e);
	rootasm_client_close(c);
	if (a->want) {
		if (fd >= 0)
			FAILF("the daemon gave uid %d a tree it may not have", UNPRIV);
		ASSERT_CONTAINS(err_line(&e), a->want);
		return;
	}
	if (fd < 0)
		FAILF("assemble: %s", err_line(&e));
	if (move_mount(fd, "", AT_FDCWD, path("rl/mnt"), MOVE_MOUNT_F_EMPTY_PATH) < 0)
		FAILF("move_mount into our namespace: %s", strerror(errno));
	close(fd);
	/* root's file, through a rw bind of root's directory: neither writable nor ours */
	fd = open(path("rl/mnt/rw/rootfile"), O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd >= 0)
		FAILF("uid %d wrote root's file %s/src/rw/rootfile through its tree", UNPRIV, fix);
	ASSERT_TRUE(errno == EROFS || errno == EACCES);
	ASSERT_ERRNO(open(path("rl/mnt/rw/new"), O_CREAT | O_WRONLY | O_CLOEXEC, 0644), EROFS);
}

TEST(daemon_principal_rootless_layout_idmap_refused)
{
	struct daemon d = start("sa1", NULL);
	char text[1024];
	struct attack a = { .d = &d, .text = text, .want = "an idmap of the layout's own is for administrators" };

	/* the layout's own map would make the bind's root-owned files the client's */
	snprintf(text, sizeof(text), "version: 1\nlayers:\n  - dir: %s/src/l1\nupper: { tmpfs: {} }\nmounts:\n  - { bind: %s/src/rw, "
		 "target: /rw, idmap: { uids: [\"0:%d:1\"], gids: [\"0:%d:1\"] } }\n", fix, fix, UNPRIV, UNPRIV);
	if (as_user(UNPRIV, attack_client, &a))
		FAILF("attack (daemon log: %s)", daemon_log(&d));
	ASSERT_STR(slurp(path("src/rw/rootfile")), "root\n");
	no_leaks(&d);
	stop(&d);
}

TEST(daemon_principal_rootless_rw_bind_of_roots_directory_is_read_only)
{
	struct daemon d;
	char text[1024];
	struct attack a = { .text = text, .userns = true };

	if (!userns_allowed(UNPRIV))
		SKIP("this kernel does not let an unprivileged uid make a user namespace");
	d = start("sa2", NULL);
	a.d = &d;
	sh("mkdir -p %s/rl/mnt && chmod 0755 %s/rl %s/rl/mnt", fix, fix, fix);
	snprintf(text, sizeof(text), "version: 1\nlayers:\n  - image: %s/src/l2.sqfs\nupper: { tmpfs: {} }\n"
		 "mounts:\n  - { bind: %s/src/rw, target: /rw }\n", fix, fix);
	if (as_user(UNPRIV, attack_client, &a))
		FAILF("attack (daemon log: %s)", daemon_log(&d));
	ASSERT_STR(slurp(path("src/rw/rootfile")), "root\n");
	ASSERT_TRUE(access(path("src/rw/new"), F_OK) < 0);
	no_leaks(&d);
	stop(&d);
}

/*
 * The tree a user was sent stays as it was sent: in a user and mount
 * namespace of its own, where it has every capability, the user cannot
 * clear the tree's nosuid,nodev (so the device node in its own image opens
 * nothing), nor unmount a volume of it once attached.
 */
static void loosen_client(void *arg)
{
	struct attack *a = arg;
	struct rootasm_client_assemble_opts o = { .size = sizeof(o), .layout_text = a->text, .name = "loosen" };
	struct mount_attr clr = { .attr_clr = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV };
	struct rootasm_client *c;
	struct rootasm_error e = { 0 };
	int fd, dev;

	ASSERT_EQ(rootasm_client_connect(a->d->sock, &c, &e), 0);
	fd = rootasm_client_assemble(c, &o, &e);
	rootasm_client_close(c);
	if (fd < 0)
		FAILF("assemble: %s", err_line(&e));
	ASSERT_ERRNO(openat(fd, "dev/zero", O_RDONLY | O_CLOEXEC), EACCES);
	own_namespaces();
	if (syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &clr, sizeof(clr)) == 0) {
		dev = openat(fd, "dev/zero", O_RDONLY | O_CLOEXEC);
		FAILF("uid %d cleared nosuid,nodev on the tree it was sent; its device node then %s", UNPRIV,
		      dev >= 0 ? "opened" : "still did not open");
	}
	ASSERT_EQ(errno, EPERM);
	/* nodev alone, the root alone: the same */
	clr.attr_clr = MOUNT_ATTR_NODEV;
	ASSERT_ERRNO(syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH, &clr, sizeof(clr)), EPERM);
	ASSERT_ERRNO(openat(fd, "dev/zero", O_RDONLY | O_CLOEXEC), EACCES);
	/* attached in its own namespace: the volume on /vol cannot be taken off to see what it covers */
	if (move_mount(fd, "", AT_FDCWD, path("rl/mnt"), MOVE_MOUNT_F_EMPTY_PATH) < 0)
		FAILF("move_mount into our namespace: %s", strerror(errno));
	close(fd);
	ASSERT_STR(slurp_at(AT_FDCWD, path("rl/mnt/vol/volfile")), "vol\n");
	ASSERT_ERRNO(umount2(path("rl/mnt/vol"), MNT_DETACH), EINVAL);
	ASSERT_ERRNO(mount(NULL, path("rl/mnt"), NULL, MS_REMOUNT | MS_BIND, NULL), EPERM);
}

TEST(daemon_principal_a_users_tree_cannot_be_loosened)
{
	struct daemon d;
	char text[1024];
	struct attack a = { .text = text };

	if (!userns_allowed(UNPRIV))
		SKIP("this kernel does not let an unprivileged uid make a user namespace");
	d = start("sa7", NULL);
	a.d = &d;
	sh("mkdir -p %s/rl/mnt && chmod 0755 %s/rl %s/rl/mnt", fix, fix, fix);
	snprintf(text, sizeof(text), "version: 1\nlayers:\n  - image: %s/src/dev.sqfs\nupper: { tmpfs: {} }\n"
		 "mounts:\n  - { image: %s/src/vol.sqfs, target: /vol }\n", fix, fix);
	if (as_user(UNPRIV, loosen_client, &a))
		FAILF("loosen (daemon log: %s)", daemon_log(&d));
	no_leaks(&d);
	stop(&d);
}

/*
 * An administrator's `rootasm assemble --send-fd --peer-uid UID` to a listener of
 * another uid: the tree it gets is locked as a daemon user's is.
 */
static void send_fd_round(const char *via)
{
	struct mount_attr clr = { .attr_clr = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int ls, ready[2], st;
	char *out, b;
	pid_t pid;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path("sf.sock"));
	unlink(sa.sun_path);
	ls = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_EQ(bind(ls, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ASSERT_EQ(chmod(sa.sun_path, 0777), 0);
	ASSERT_EQ(pipe2(ready, O_CLOEXEC), 0);
	pid = fork();
	if (pid == 0) {
		char c = 0, ctl[CMSG_SPACE(sizeof(int))];
		struct iovec iov = { &c, 1 };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl) };
		int conn, fd, dev;

		/* the listener is uid UNPRIV: SO_PEERCRED gives the credentials listen() was called with */
		become(UNPRIV);
		if (listen(ls, 1) < 0)
			_exit(3);
		(void)!write(ready[1], "r", 1);
		conn = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
		if (conn < 0 || recvmsg(conn, &m, MSG_CMSG_CLOEXEC) < 1 || !CMSG_FIRSTHDR(&m))
			FAILF("receive the tree: %s", strerror(errno));
		memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof(int));
		own_namespaces();
		if (syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &clr, sizeof(clr)) == 0) {
			dev = openat(fd, "dev/zero", O_RDONLY | O_CLOEXEC);
			FAILF("uid %d cleared nosuid,nodev on the tree root sent it (its device node %s)", UNPRIV,
			      dev >= 0 ? "then opened" : "still did not open");
		}
		if (errno != EPERM)
			FAILF("mount_setattr: %s, not EPERM", strerror(errno));
		_exit(0);
	}
	close(ls);
	ASSERT_EQ(read(ready[0], &b, 1), 1);
	close(ready[0]);
	close(ready[1]);
	if (run_sh(&out, "%s assemble %s%s %s --send-fd %s --peer-uid %d", cli_bin, via ? "--via " : "", via ? via : "",
		   path("layouts/sf.yaml"), sa.sun_path, UNPRIV) != 0)
		FAILF("assemble%s --send-fd --peer-uid: %s", via ? " --via" : "", out);
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

TEST(send_fd_to_another_uid_sends_a_locked_tree)
{
	struct daemon d;

	if (!userns_allowed(UNPRIV))
		SKIP("this kernel does not let an unprivileged uid make a user namespace");
	put("layouts/sf.yaml", "version: 1\nlayers:\n  - image: ../src/dev.sqfs\nupper: { tmpfs: {} }\n");
	send_fd_round(NULL);
	/* the tree of rootasmd (an administrator's: root asked) is made so by the CLI before it goes on */
	d = start("s11", NULL);
	send_fd_round(d.sock);
	no_leaks(&d);
	stop(&d);
}

/* A plain client (no user namespace) reads through the tree fd it was given, without attaching it. */
struct peek {
	struct daemon *d;
	const char *text;
	bool writable;
};

static void peek_client(void *arg)
{
	struct peek *k = arg;
	struct rootasm_client_assemble_opts o = { .size = sizeof(o), .layout_text = k->text, .name = "peek" };
	struct rootasm_client *c;
	struct rootasm_error e = { 0 };
	const char *got;
	int fd;

	ASSERT_EQ(rootasm_client_connect(k->d->sock, &c, &e), 0);
	fd = rootasm_client_assemble(c, &o, &e);
	rootasm_client_close(c);
	if (fd < 0)
		FAILF("assemble: %s", err_line(&e));
	/* what is outside root's 0700 directory of the lower layer stays readable */
	ASSERT_STR(slurp_at(fd, "pub/p.txt"), "pub\n");
	ASSERT_STR(slurp_at(fd, "mine.txt"), "mine\n");
	/* the user's own 0755 "secret" covers root's 0700 one: its lookups may not be root's */
	got = slurp_at(fd, "secret/s.txt");
	if (got)
		FAILF("uid %d read %s/src/cov/low/secret/s.txt (\"%s\") through a layer of its own", UNPRIV, fix, got);
	ASSERT_EQ(errno, EACCES);
	if (k->writable) {
		/* its own file is copied up and written; the host file stays as it was */
		int w = openat(fd, "mine.txt", O_WRONLY | O_APPEND | O_CLOEXEC);

		if (w < 0)
			FAILF("append to its own file through the tree: %s", strerror(errno));
		ASSERT_EQ(write(w, "more\n", 5), 5);
		close(w);
		ASSERT_STR(slurp_at(fd, "mine.txt"), "mine\nmore\n");
	}
	close(fd);
}

TEST(daemon_principal_a_users_layer_cannot_uncover_what_it_may_not_search)
{
	struct daemon d = start("sa5", NULL);
	char text[1024];
	struct peek k = { .d = &d, .text = text };

	sh("rm -rf %s/src/cov && mkdir -p %s/src/cov/low/secret %s/src/cov/low/pub %s/src/cov/top/secret && "
	   "echo secret > %s/src/cov/low/secret/s.txt && echo pub > %s/src/cov/low/pub/p.txt && "
	   "chmod 0644 %s/src/cov/low/secret/s.txt && chmod 0700 %s/src/cov/low/secret && "
	   "echo mine > %s/src/cov/top/mine.txt && chown -R %d:%d %s/src/cov/top && chmod -R go+rX %s/src/cov/top",
	   fix, fix, fix, fix, fix, fix, fix, fix, fix, UNPRIV, UNPRIV, fix, fix);
	/* read-only: one overlay with the user's credential */
	snprintf(text, sizeof(text), "version: 1\nlayers:\n  - dir: %s/src/cov/low\n  - dir: %s/src/cov/top\n", fix, fix);
	if (as_user(UNPRIV, peek_client, &k))
		FAILF("read-only (daemon log: %s)", daemon_log(&d));
	/* writable: the user's view of the layers under an overlay with the upper */
	snprintf(text, sizeof(text), "version: 1\nlayers:\n  - dir: %s/src/cov/low\n  - dir: %s/src/cov/top\n"
		 "upper: { tmpfs: {} }\n", fix, fix);
	k.writable = true;
	if (as_user(UNPRIV, peek_client, &k))
		FAILF("writable (daemon log: %s)", daemon_log(&d));
	ASSERT_STR(slurp(path("src/cov/top/mine.txt")), "mine\n");
	/* a credential of the layout's own is the administrator's */
	{
		struct attack a = { .d = &d, .text = text, .want = "a credential of the layout's own is for administrators" };

		snprintf(text, sizeof(text), "version: 1\nlayers:\n  - dir: %s/src/cov/low\n  - dir: %s/src/cov/top\n"
			 "overlay: { override_creds: { uid: 0, gid: 0, capabilities: [CAP_SYS_ADMIN, CAP_DAC_READ_SEARCH] } }\n",
			 fix, fix);
		if (as_user(UNPRIV, attack_client, &a))
			FAILF("override_creds (daemon log: %s)", daemon_log(&d));
	}
	no_leaks(&d);
	stop(&d);
}

TEST(daemon_principal_what_a_mount_hides_is_not_shown)
{
	struct daemon d = start("sa6", NULL);
	char text[1024];
	struct attack a = { .d = &d, .text = text, .want = "hides part of it" };

	/* root hides a directory's old contents under a 0700 tmpfs */
	sh("rm -rf %s/src/hid && mkdir -p %s/src/hid/inner && echo hidden > %s/src/hid/inner/h.txt && "
	   "chmod -R go+rX %s/src/hid && mount -t tmpfs -o mode=0700 hide %s/src/hid/inner", fix, fix, fix, fix, fix);
	/* a layer: overlayfs would show the directory under the tmpfs */
	snprintf(text, sizeof(text), "version: 1\nlayers:\n  - dir: %s/src/hid\n", fix);
	if (as_user(UNPRIV, attack_client, &a))
		FAILF("dir layer (daemon log: %s)", daemon_log(&d));
	/* a bind: a clone without its submounts would, too */
	snprintf(text, sizeof(text), "version: 1\nlayers:\n  - image: %s/src/l2.sqfs\nmounts:\n"
		 "  - { bind: %s/src/hid, target: /mnt }\n", fix, fix);
	if (as_user(UNPRIV, attack_client, &a))
		FAILF("bind (daemon log: %s)", daemon_log(&d));
	/* the mount point itself, the same */
	snprintf(text, sizeof(text), "version: 1\nlayers:\n  - image: %s/src/l2.sqfs\nmounts:\n"
		 "  - { bind: %s/src/hid/inner, target: /mnt }\n", fix, fix);
	a.want = "cannot read it";	/* the 0700 tmpfs itself: not the user's to read */
	if (as_user(UNPRIV, attack_client, &a))
		FAILF("bind of the mount (daemon log: %s)", daemon_log(&d));
	sh("umount %s/src/hid/inner", fix);
	/* a root-only FIFO: not readable, not given */
	sh("mkfifo -m 0600 %s/src/hid/fifo", fix);
	snprintf(text, sizeof(text), "version: 1\nlayers:\n  - image: %s/src/l2.sqfs\nmounts:\n"
		 "  - { bind: %s/src/hid/fifo, target: /etc/motd }\n", fix, fix);
	a.want = "cannot read it";
	if (as_user(UNPRIV, attack_client, &a))
		FAILF("fifo (daemon log: %s)", daemon_log(&d));
	no_leaks(&d);
	stop(&d);
}

/* uid 0 that is not an administrator: no capabilities, or a root directory of its own */
static int uid0_client(struct daemon *d, bool chrooted, char *err, size_t size)
{
	int p[2], st;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		struct rootasm_client_assemble_opts o = { .size = sizeof(o), .layout = path("layouts/t.yaml") };
		struct { uint32_t version; int pid; } h = { 0x20080522, 0 };
		struct { uint32_t e, p, i; } cd[2] = { { 0 } };
		struct rootasm_client *c;
		struct rootasm_error e = { 0 };
		char sock[300];
		int fd;

		snprintf(sock, sizeof(sock), "%s", d->sock);
		if (chrooted) {
			/* the socket is in the fixture directory: it becomes our / */
			if (chroot(fix) < 0 || chdir("/") < 0)
				_exit(3);
			snprintf(sock, sizeof(sock), "/%s", strrchr(d->sock, '/') + 1);
		} else if (syscall(SYS_capset, &h, cd) < 0) {
			_exit(3);
		}
		if (rootasm_client_connect(sock, &c, &e) < 0) {
			dprintf(p[1], "connect: %s", err_line(&e));
			_exit(1);
		}
		fd = rootasm_client_assemble(c, &o, &e);
		dprintf(p[1], "%s", fd >= 0 ? "a tree" : err_line(&e));
		_exit(fd >= 0 ? 0 : 1);
	}
	close(p[1]);
	waitpid(pid, &st, 0);
	err[0] = '\0';
	{
		ssize_t n = read(p[0], err, size - 1);

		err[n > 0 ? n : 0] = '\0';
	}
	close(p[0]);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

TEST(daemon_principal_uid0_without_capabilities_is_an_ordinary_user)
{
	struct daemon d = start("sa3", NULL);
	char err[4096];

	/* the policy names no rule for uid 0: an ordinary uid 0 gets nothing */
	ASSERT_EQ(uid0_client(&d, false, err, sizeof(err)), 1);
	ASSERT_CONTAINS(err, "no rule of the policy names uid 0");
	ASSERT_EQ(uid0_client(&d, true, err, sizeof(err)), 1);
	ASSERT_CONTAINS(err, "no rule of the policy names uid 0");
	no_leaks(&d);
	stop(&d);
	/*
	 * A rule for uid 0: an ordinary user's tree, and no image in it, root's
	 * or not: without CAP_SYS_ADMIN uid 0 may still write root's files.
	 */
	put("policy-uid0.json", "{\"rootasmd-policy\": 1, \"rules\": [{\"uids\": [0], \"layouts\": [\"%s/layouts\"]}]}\n",
	    fix);
	{
		const char *extra[] = { "--policy", path("policy-uid0.json"), NULL };

		d = start("sa3b", extra);
	}
	ASSERT_EQ(uid0_client(&d, false, err, sizeof(err)), 1);
	ASSERT_CONTAINS(err, "layers[1].image: Operation not permitted");
	ASSERT_CONTAINS(err, "without CAP_SYS_ADMIN uid 0 may still write every root-owned file");
	no_leaks(&d);
	stop(&d);
}

struct named {
	struct daemon *d;
	const char *layout, *text;
	char err[4096];
};

static void named_client(void *arg)
{
	struct named *n = arg;
	struct rootasm_client_assemble_opts o = { .size = sizeof(o), .layout = n->layout, .layout_text = n->text,
						  .name = "inline" };
	struct rootasm_client *c;
	struct rootasm_error e = { 0 };

	ASSERT_EQ(rootasm_client_connect(n->d->sock, &c, &e), 0);
	if (rootasm_client_assemble(c, &o, &e) >= 0)
		FAILF("a tree from a file uid %d may not read", UNPRIV);
	/* the error says why, and nothing of what is in the file */
	if (strstr(err_line(&e), "hunter2") || strstr(err_line(&e), "password"))
		FAILF("the error quotes a file uid %d may not read: %s", UNPRIV, err_line(&e));
	ASSERT_CONTAINS(err_line(&e), "Permission denied");
}

TEST(daemon_principal_reads_layouts_as_the_client)
{
	struct daemon d = start("sa4", NULL);
	struct named n = { .d = &d, .layout = path("layouts/secret.yaml") };
	char text[512];

	/* root's 0600 files in the client's layout and source directories */
	put("layouts/secret.yaml", "password: hunter2\n");
	put("src/secret.yaml", "password: hunter2\n");
	sh("chmod 0600 %s/layouts/secret.yaml %s/src/secret.yaml", fix, fix);
	if (as_user(UNPRIV, named_client, &n))
		FAILF("by path (daemon log: %s)", daemon_log(&d));
	snprintf(text, sizeof(text), "version: 1\nlayers:\n  - dir: %s/src/l1\nmounts:\n  - { layout: %s/src/secret.yaml, "
		 "target: /s }\n", fix, fix);
	n.layout = NULL;
	n.text = text;
	if (as_user(UNPRIV, named_client, &n))
		FAILF("nested (daemon log: %s)", daemon_log(&d));
	no_leaks(&d);
	stop(&d);
}

static void rootless_refused(void *arg)
{
	struct rootless *r = arg;
	struct rootasm_client_assemble_opts o = { .size = sizeof(o), .layout = r->layout, .flags = ROOTASM_CLIENT_USERNS };
	struct rootasm_client *c;
	struct rootasm_error e = { 0 };

	own_namespaces();
	o.userns_fd = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
	ASSERT_EQ(rootasm_client_connect(r->d->sock, &c, &e), 0);
	ASSERT_TRUE(rootasm_client_assemble(c, &o, &e) < 0);
	ASSERT_CONTAINS(err_line(&e), "may not have trees idmapped into a user namespace");
}

TEST(daemon_rootless_needs_the_policy)
{
	struct daemon d;
	struct rootless r = { .d = &d, .layout = path("layouts/t.yaml") };

	if (!userns_allowed(UNPRIV + 1))
		SKIP("this kernel does not let an unprivileged uid make a user namespace");
	d = start("s10", NULL);

	/* UNPRIV+1's rule allows the layouts, not userns */
	if (as_user(UNPRIV + 1, rootless_refused, &r))
		FAILF("rootless refusal");
	no_leaks(&d);
	stop(&d);
}

TEST(daemon_socket_activation)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[4096] = "";
	int p[2], st, ls;
	pid_t pid;

	/* as systemd: a listening socket as fd 3, LISTEN_PID and LISTEN_FDS; no --socket */
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path("act.sock"));
	ls = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	ASSERT_EQ(bind(ls, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ASSERT_EQ(listen(ls, 16), 0);
	ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	if (pid == 0) {
		char v[32];

		dup2(ls, 3);
		dup2(p[1], 2);
		snprintf(v, sizeof(v), "%d", getpid());
		setenv("LISTEN_PID", v, 1);
		setenv("LISTEN_FDS", "1", 1);
		execl(daemon_bin, daemon_bin, "--policy", path("policy.json"), "--socket", path("unused.sock"), (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	close(ls);
	for (size_t len = 0; !strstr(buf, "serving on");) {
		ssize_t r = read(p[0], buf + len, sizeof(buf) - 1 - len);

		if (r <= 0)
			FAILF("no start: %s", buf);
		buf[len += r] = '\0';
	}
	ASSERT_CONTAINS(buf, "the socket systemd passed");
	{
		struct daemon d = { .pid = pid, .err = p[0] };
		struct rootasm_error e = { 0 };
		int fd;

		snprintf(d.sock, sizeof(d.sock), "%s", path("act.sock"));
		fd = via(&d, path("layouts/t.yaml"), &e);
		TREE_OK(fd);
		close(fd);
		ASSERT_TRUE(access(path("unused.sock"), F_OK) < 0);
		stop(&d);
	}
	/* a stream socket passed as fd 3 is refused at start */
	ls = socket(AF_UNIX, SOCK_STREAM, 0);
	pid = fork();
	if (pid == 0) {
		char v[32];
		int devnull = open("/dev/null", O_WRONLY);

		dup2(ls, 3);
		dup2(devnull, 2);
		snprintf(v, sizeof(v), "%d", getpid());
		setenv("LISTEN_PID", v, 1);
		setenv("LISTEN_FDS", "1", 1);
		execl(daemon_bin, daemon_bin, "--policy", path("policy.json"), (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1);
}

/* The next notification on @ns (a datagram), within 5 s; "" on timeout. */
static const char *notification(int ns)
{
	static char buf[4096];
	struct pollfd p = { ns, POLLIN, 0 };
	ssize_t n;

	buf[0] = '\0';
	if (poll(&p, 1, 5000) == 1 && (n = recv(ns, buf, sizeof(buf) - 1, 0)) >= 0)
		buf[n] = '\0';
	return buf;
}

/* What the daemon wrote to @fd until @want appears (5 s at most). */
static const char *log_until(int fd, const char *want)
{
	static char buf[1 << 15];
	static size_t len;
	struct pollfd p = { fd, POLLIN, 0 };
	ssize_t n;

	if (fd < 0) {
		len = 0;
		buf[0] = '\0';
		return buf;
	}
	while (!strstr(buf, want) && poll(&p, 1, 5000) == 1 && (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		buf[len += n] = '\0';
	return buf;
}

/*
 * As systemd runs it: NOTIFY_SOCKET (READY=1, RELOADING=1 then READY=1 around a
 * SIGHUP with the result as STATUS=, STOPPING=1) and stderr the journal stream
 * (JOURNAL_STREAM is its device:inode): every line carries a <N> priority and no
 * "rootasmd: ". Then stderr a pipe that JOURNAL_STREAM does not name: plain lines.
 */
TEST(daemon_tells_systemd_and_logs_with_journal_priorities)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *n, *log;
	struct stat st;
	int ns, p[2], status;
	pid_t pid;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path("notify.sock"));
	unlink(sa.sun_path);
	ns = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ASSERT_EQ(bind(ns, (struct sockaddr *)&sa, sizeof(sa)), 0);
	sh("cp %s/policy.json %s/pnotify.json", fix, fix);
	ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
	ASSERT_EQ(fstat(p[1], &st), 0);
	pid = fork();
	if (pid == 0) {
		char v[64];

		dup2(p[1], 2);
		snprintf(v, sizeof(v), "%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
		setenv("JOURNAL_STREAM", v, 1);
		setenv("NOTIFY_SOCKET", sa.sun_path, 1);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl(daemon_bin, daemon_bin, "--policy", path("pnotify.json"), "--socket", path("notify-d.sock"),
		      (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	n = notification(ns);
	ASSERT_CONTAINS(n, "READY=1");
	ASSERT_CONTAINS(n, "STATUS=serving; policy ");
	ASSERT_CONTAINS(n, "pnotify.json: ");
	log_until(-1, "");
	log = log_until(p[0], "serving on");
	ASSERT_CONTAINS(log, "<6>serving on ");
	ASSERT_CONTAINS(log, "<6>policy ");
	ASSERT_TRUE(!strstr(log, "rootasmd: "));

	/* a reload that works: RELOADING=1, then READY=1 and the policy as STATUS= */
	ASSERT_EQ(kill(pid, SIGHUP), 0);
	n = notification(ns);
	ASSERT_CONTAINS(n, "RELOADING=1");
	ASSERT_CONTAINS(n, "MONOTONIC_USEC=");
	n = notification(ns);
	ASSERT_CONTAINS(n, "READY=1");
	ASSERT_CONTAINS(n, "(reloaded)");
	log = log_until(p[0], "<6>reload: policy ");
	ASSERT_CONTAINS(log, "<6>reload: policy ");

	/* one that fails: said as an error, the previous policy stays, and STATUS= says so */
	put("pnotify.json", "%s", "not json");
	ASSERT_EQ(kill(pid, SIGHUP), 0);
	ASSERT_CONTAINS(notification(ns), "RELOADING=1");
	n = notification(ns);
	ASSERT_CONTAINS(n, "READY=1");
	ASSERT_CONTAINS(n, "STATUS=serving; reload failed: ");
	ASSERT_CONTAINS(n, "(the previous policy stays)");
	log = log_until(p[0], "(the previous policy stays)");
	ASSERT_CONTAINS(log, "<3>reload: policy: ");

	ASSERT_EQ(kill(pid, SIGTERM), 0);
	ASSERT_CONTAINS(notification(ns), "STOPPING=1");
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* every line it wrote has a priority */
	log = log_until(p[0], "\x01");
	for (const char *l = log; *l; l = strchr(l, '\n') + 1) {
		if (l[0] != '<' || l[1] < '0' || l[1] > '7' || l[2] != '>')
			FAILF("a log line without a priority: %.80s", l);
		if (!strchr(l, '\n'))
			break;
	}
	close(p[0]);

	/* JOURNAL_STREAM naming something else than stderr: plain lines, the name first */
	sh("cp %s/policy.json %s/pnotify.json", fix, fix);
	ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 2);
		setenv("JOURNAL_STREAM", "1:1", 1);
		unsetenv("NOTIFY_SOCKET");
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl(daemon_bin, daemon_bin, "--policy", path("pnotify.json"), "--socket", path("notify-d.sock"),
		      (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	log_until(-1, "");
	log = log_until(p[0], "serving on");
	ASSERT_CONTAINS(log, "rootasmd: serving on ");
	ASSERT_TRUE(!strstr(log, "<6>"));
	ASSERT_EQ(kill(pid, SIGTERM), 0);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(p[0]);
	close(ns);
}

TEST(daemon_refuses_a_bad_policy_and_keeps_the_old_one_on_reload)
{
	const char *bad[] = {
		"{\"rootasmd-policy\": 1, \"rules\": [{\"uids\": [1], \"bogus\": true}]}",
		"{\"rootasmd-policy\": 1, \"rules\": [{\"uids\": [1], \"layouts\": [\"relative\"]}]}",
		"{\"rootasmd-policy\": 1, \"rules\": [{\"uids\": [1], \"layouts\": [\"/a/../b\"]}]}",
		"{\"rootasmd-policy\": 1, \"rules\": [{\"uids\": [1], \"inline\": true}]}",
		"{\"rootasmd-policy\": 2, \"rules\": []}",
		"{\"rootasmd-policy\": 1, \"rules\": [{\"layouts\": [\"/a\"]}]}",
		"{\"rootasmd-policy\": 1, \"rules\": [{\"uids\": [-1]}]}",
		"{\"rootasmd-policy\": 1, \"rules\": [], \"rules\": []}",
		"not json",
	};
	struct daemon d;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char *err;
		int st, p[2];
		pid_t pid;
		char buf[2048] = "";

		put("bad.json", "%s", bad[i]);
		ASSERT_EQ(pipe(p), 0);
		pid = fork();
		if (pid == 0) {
			dup2(p[1], 2);
			execl(daemon_bin, daemon_bin, "--policy", path("bad.json"), "--socket", path("bad.sock"), (char *)NULL);
			_exit(127);
		}
		close(p[1]);
		(void)!read(p[0], buf, sizeof(buf) - 1);
		close(p[0]);
		waitpid(pid, &st, 0);
		err = buf;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 1 || !strstr(err, "policy"))
			FAILF("policy %zu accepted or wrong message: %s", i, err);
	}
	/* SIGHUP with a broken file keeps serving by the old rules */
	sh("cp %s/policy.json %s/policy2.json", fix, fix);
	{
		const char *extra[] = { "--policy", path("policy2.json"), NULL };
		struct rootasm_error e = { 0 };
		struct refusal r;
		int fd;

		d = start("s11", extra);
		put("policy2.json", "%s", "broken");
		kill(d.pid, SIGHUP);
		/* the reload has happened once the daemon says so */
		while (!strstr(daemon_log(&d), "policy:"))
			sched_yield();
		r = (struct refusal){ .d = &d, .layout = path("layouts/t.yaml") };
		if (as_user(UNPRIV, served, &r))
			FAILF("the old policy should still serve uid %d", UNPRIV);
		fd = via(&d, path("layouts/t.yaml"), &e);
		TREE_OK(fd);
		close(fd);
		stop(&d);
	}
}

/* Milliseconds since @t0 (CLOCK_MONOTONIC). */
static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* rootasmd --policy @rel must not start: exit 1 and one line naming the file and @why. */
static void policy_refused_at_start(const char *rel, const char *why)
{
	char buf[2048] = "", want[4200];
	size_t len = 0;
	ssize_t n;
	int st, p[2];
	pid_t pid;

	ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 2);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl(daemon_bin, daemon_bin, "--policy", path(rel), "--socket", path("refused.sock"), (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	/* a refusal comes at once: a daemon that serves with the file is not waited for */
	for (;;) {
		struct pollfd pf = { p[0], POLLIN, 0 };

		if (poll(&pf, 1, 3000) <= 0) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			FAILF("rootasmd started with --policy %s: %s", rel, buf);
		}
		n = read(p[0], buf + len, sizeof(buf) - 1 - len);
		if (n <= 0 || (len += n) == sizeof(buf) - 1)
			break;
		buf[len] = '\0';
	}
	close(p[0]);
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 1)
		FAILF("rootasmd --policy %s: status %d, want exit 1: %s", rel, st, buf);
	snprintf(want, sizeof(want), "rootasmd: policy: %s: policy: ", path(rel));
	ASSERT_TRUE(!strncmp(buf, want, strlen(want)));
	ASSERT_CONTAINS(buf, why);
	ASSERT_EQ(strchr(buf, '\n'), buf + strlen(buf) - 1);	/* one line */
}

TEST(daemon_policy_writable_by_others_is_refused)
{
	sh("cp %s/policy.json %s/p666.json && chmod 0666 %s/p666.json", fix, fix, fix);
	policy_refused_at_start("p666.json", "is writable by group and others (mode 0666)");
	sh("chmod 0620 %s/p666.json", fix);
	policy_refused_at_start("p666.json", "is writable by its group (mode 0620)");
	/* root's and 0644 is what the fixtures use: fine */
	sh("chmod 0644 %s/p666.json", fix);
	{
		const char *extra[] = { "--policy", path("p666.json"), NULL };
		struct daemon d = start("s12", extra);

		stop(&d);
	}
}

TEST(daemon_policy_owned_by_another_uid_is_refused)
{
	sh("cp %s/policy.json %s/pown.json && chown %d %s/pown.json", fix, fix, UNPRIV, fix);
	policy_refused_at_start("pown.json", "is owned by uid 4242, not root");
	/* root's 0644 file in a directory another uid owns: that uid could put its own policy there */
	sh("mkdir -p %s/pdir && cp %s/policy.json %s/pdir/p.json && chown %d %s/pdir", fix, fix, fix, UNPRIV, fix);
	policy_refused_at_start("pdir/p.json", "/pdir above it is not root's");
	sh("chown 0 %s/pdir && chmod 0777 %s/pdir", fix, fix);
	policy_refused_at_start("pdir/p.json", "/pdir above it is writable by group or others without the sticky bit");
	sh("rm -rf %s/pdir", fix);
}

TEST(daemon_policy_that_is_a_symlink_is_refused)
{
	sh("ln -sf policy.json %s/plink.json", fix);
	policy_refused_at_start("plink.json", "is a symbolic link, not a regular file");
	/* a FIFO at the start: refused at once, not waited on */
	sh("rm -f %s/pfifo.json && mkfifo -m 0644 %s/pfifo.json", fix, fix);
	policy_refused_at_start("pfifo.json", "is a FIFO, not a regular file");
}

TEST(daemon_policy_replaced_by_a_fifo_does_not_block_it)
{
	const char *extra[] = { "--policy", path("pfifo2.json"), NULL };
	struct refusal r;
	struct timespec t0;
	struct daemon d;
	int st;

	sh("rm -f %s/pfifo2.json && cp %s/policy.json %s/pfifo2.json", fix, fix, fix);
	d = start("s13", extra);
	sh("rm %s/pfifo2.json && mkfifo -m 0644 %s/pfifo2.json", fix, fix);
	ASSERT_EQ(kill(d.pid, SIGHUP), 0);
	/* the reload fails at once, naming the file and why; a bounded wait */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!strstr(daemon_log(&d), "is a FIFO") && ms_since(&t0) < 2000)
		usleep(10000);
	ASSERT_CONTAINS(daemon_log(&d), "pfifo2.json: policy: is a FIFO, not a regular file");
	/* the old policy still serves */
	r = (struct refusal){ .d = &d, .layout = path("layouts/t.yaml") };
	if (as_user(UNPRIV, served, &r))
		FAILF("the old policy should still serve uid %d", UNPRIV);
	/* and the main loop still reads its signals */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(kill(d.pid, SIGTERM), 0);
	while (waitpid(d.pid, &st, WNOHANG) == 0 && ms_since(&t0) < 2000)
		usleep(10000);
	if (ms_since(&t0) >= 2000) {
		kill(d.pid, SIGKILL);
		waitpid(d.pid, &st, 0);
		FAILF("rootasmd did not stop within 2 s of SIGTERM: %s", daemon_log(&d));
	}
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(d.err);
}

static void cleanup(void)
{
	if (getpid() == main_pid)
		sh("rm -rf %s", fix);
}

int main(int argc, char **argv)
{
	daemon_bin = argc > 1 ? realpath(argv[1], NULL) : NULL;
	cli_bin = argc > 2 ? realpath(argv[2], NULL) : NULL;
	if (!daemon_bin || !cli_bin) {
		fprintf(stderr, "usage: %s ROOTASMD ROOTASM\n", argv[0]);
		return 2;
	}
	if (geteuid() != 0)
		return harness_main(argc, argv);
	snprintf(fix, sizeof(fix), "%s/rootasm-daemon-XXXXXX",
		 getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(fix))
		return 2;
	main_pid = getpid();
	atexit(cleanup);
	/* rootasmd takes only a policy file that root owns and nobody else may write: 0644 */
	umask(022);
	/* the fixture is read by unprivileged clients too */
	sh("chmod 0755 %s", fix);
	sh("cd %s && mkdir -p src/l1/etc src/l2/etc src/vol layouts other/l1 && echo base > src/l1/etc/motd && "
	   "echo keep > src/l1/etc/keep && echo secret > src/l1/secret && chown %d:%d src/l1/secret && "
	   "chmod 0600 src/l1/secret && echo root > src/l1/rootsecret && chmod 0600 src/l1/rootsecret && "
	   "echo mine > src/l1/mine && chown %d:%d src/l1/mine && chmod 0600 src/l1/mine && "
	   "echo l2 > src/l2/etc/motd && echo vol > src/vol/volfile && mkdir src/rw && echo root > src/rw/rootfile && "
	   "mksquashfs src/l2 src/l2.sqfs -quiet -no-progress >/dev/null && "
	   "mksquashfs src/vol src/vol.sqfs -quiet -no-progress >/dev/null && ln -s / src/out && "
	   /* a user's own image with a device node in it (the pseudo-file: /dev/zero's numbers) */
	   "mkdir -p src/dev/dev && mksquashfs src/dev src/dev.sqfs -quiet -no-progress -p 'dev/zero c 0666 0 0 1 5' >/dev/null",
	   fix, UNPRIV + 100, UNPRIV + 100, UNPRIV, UNPRIV);
	put("layouts/t.yaml", "version: 1\nlayers:\n  - dir: ../src/l1\n  - image: ../src/l2.sqfs\nupper: { tmpfs: {} }\n"
	    "mounts:\n  - { image: ../src/vol.sqfs, target: /vol }\n  - { tmpfs: /tmp }\n");
	put("layouts/rl.yaml", "version: 1\nlayers:\n  - dir: ../src/l1\n  - image: ../src/l2.sqfs\nupper: { tmpfs: {} }\n"
	    "mounts:\n  - { image: ../src/vol.sqfs, target: /vol }\n");
	sh("cp %s/layouts/t.yaml %s/other/t.yaml && cp -r %s/src/l1 %s/other/ && ln -s ../other/t.yaml %s/layouts/link.yaml "
	   "&& ln -s ../src %s/other/src", fix, fix, fix, fix, fix, fix);
	put("policy.json",
	    "{\"rootasmd-policy\": 1, \"rules\": [\n"
	    " {\"uids\": [%d], \"layouts\": [\"%s/layouts\"], \"inline\": true, \"sources\": [\"%s/src\"], \"userns\": true},\n"
	    " {\"uids\": [%d], \"layouts\": [\"%s/layouts\"], \"max_connections\": 3}\n]}\n", UNPRIV, fix, fix, UNPRIV + 1, fix);
	if (chdir(fix) < 0)
		return 2;
	return harness_main(argc, argv);
}
