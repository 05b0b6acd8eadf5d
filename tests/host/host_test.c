// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Host tests: root, on the running kernel, each test in its own private
 * mount namespace (harness.c). What exists is read from the kernel
 * (/proc/self/mountinfo, /sys/block/loop*), never from rootasm's own say-so.
 */

#include <dirent.h>
#include <stdarg.h>
#include <stdbool.h>
#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/capability.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <linux/loop.h>
#include <linux/magic.h>

#include "harness.h"
#include "rootasm.h"

#define ARRAY_SIZE_(a) (sizeof(a) / sizeof((a)[0]))

static const char *bin;		/* the rootasm CLI */

static void put(const char *rel, const char *text)
{
	FILE *f = fopen(path(rel), "w");

	if (!f)
		FAILF("fopen %s: %s", rel, strerror(errno));
	fputs(text, f);
	fclose(f);
}

static char *mountinfo(void)
{
	char *s = slurp("/proc/self/mountinfo");

	return s ? strdup(s) : NULL;
}

/* Mount points at or below @prefix in this namespace, per mountinfo. */
static int mounts_under(const char *prefix)
{
	_Pragma("GCC diagnostic ignored \"-Wshadow\"")
	char *mi = mountinfo(), *save = NULL, *line;
	size_t len = strlen(prefix);
	int n = 0;

	for (line = strtok_r(mi, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char mp[4096];

		if (sscanf(line, "%*s %*s %*s %*s %4095s", mp) == 1 && !strncmp(mp, prefix, len) &&
		    (mp[len] == '\0' || mp[len] == '/'))
			n++;
	}
	free(mi);
	return n;
}

/* Whether the per-mount options (field 6) of mountinfo @line include @opt. */
static bool has_opt(const char *line, const char *opt)
{
	char opts[1024], *save = NULL;

	if (!line || sscanf(line, "%*s %*s %*s %*s %*s %1023s", opts) != 1)
		return false;
	for (char *o = strtok_r(opts, ",", &save); o; o = strtok_r(NULL, ",", &save))
		if (!strcmp(o, opt))
			return true;
	return false;
}

/* The mountinfo line for mount point @mp, or NULL. */
static char *mount_at(const char *mp)
{
	char *mi = mountinfo(), *save = NULL, *line, *found = NULL;

	for (line = strtok_r(mi, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char m[4096];

		if (sscanf(line, "%*s %*s %*s %*s %4095s", m) == 1 && !strcmp(m, mp)) {
			free(found);
			found = strdup(line);
		}
	}
	free(mi);
	return found;
}

/* Loop devices backed by this test's files (others on the machine are not ours to judge). */
static char *loops(void)
{
	static char buf[1 << 16];
	glob_t g;

	buf[0] = '\0';
	if (glob("/sys/block/loop*/loop/backing_file", 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++) {
			char *s = slurp(g.gl_pathv[i]);

			if (!s || strncmp(s, fix, strlen(fix)))
				continue;
			strncat(buf, g.gl_pathv[i], sizeof(buf) - strlen(buf) - 1);
			strncat(buf, "=", sizeof(buf) - strlen(buf) - 1);
			strncat(buf, s ? s : "?", sizeof(buf) - strlen(buf) - 1);
		}
		globfree(&g);
	}
	return strdup(buf);
}

/* Whether @p is on a tmpfs (erofs reads no file there: a loop device instead). */
static bool on_tmpfs(const char *p)
{
	struct statfs sf;

	return statfs(p, &sf) == 0 && sf.f_type == TMPFS_MAGIC;
}

/* 0 when the kernel grants us a write lease on @p (no other open file has it), else the errno */
static int lease_errno(const char *p)
{
	int fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), r = 0;

	if (fd < 0)
		return errno;
	if (fcntl(fd, F_SETLEASE, F_WRLCK) < 0)
		r = errno;
	else
		fcntl(fd, F_SETLEASE, F_UNLCK);
	close(fd);
	return r;
}

static char *fds(void)
{
	char buf[8192] = "";
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;

	while ((de = readdir(d))) {
		char l[512] = "", p[300];

		if (de->d_name[0] == '.' || atoi(de->d_name) == dirfd(d))
			continue;
		snprintf(p, sizeof(p), "/proc/self/fd/%s", de->d_name);
		if (readlink(p, l, sizeof(l) - 1) < 0)
			continue;
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s->%s\n", de->d_name, l);
	}
	closedir(d);
	return strdup(buf);
}

/*
 * Run a command; returns its exit status (128+sig if killed, 124 when @secs
 * (> 0) passed and it was killed). Its stdout goes to *@out (or /dev/null when
 * @out is NULL), its stderr to *@err; @keep_fd (>= 0) stays open in it.
 */
static int run_full(char **out, char **err, int keep_fd, int secs, const char *const *argv)
{
	static char obuf[16384], ebuf[8192];
	struct pollfd pf[2];
	int po[2], pe[2], status, open_pipes = 2;
	size_t ol = 0, el = 0;
	pid_t pid;

	if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0)
		FAILF("pipe");
	pid = fork();
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		dup2(out ? po[1] : devnull, 1);
		dup2(pe[1], 2);
		if (keep_fd >= 0)
			fcntl(keep_fd, F_SETFD, 0);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	pf[0] = (struct pollfd){ po[0], POLLIN, 0 };
	pf[1] = (struct pollfd){ pe[0], POLLIN, 0 };
	while (open_pipes) {
		int n = poll(pf, 2, secs > 0 ? secs * 1000 : -1);

		if (n == 0) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			close(po[0]);
			close(pe[0]);
			return 124;
		}
		for (int i = 0; i < 2; i++) {
			char *buf = i ? ebuf : obuf;
			size_t *len = i ? &el : &ol, cap = i ? sizeof(ebuf) : sizeof(obuf);
			ssize_t r;

			if (pf[i].fd < 0 || !pf[i].revents)
				continue;
			r = read(pf[i].fd, buf + *len, cap - 1 - *len);
			if (r > 0) {
				*len += r;
			} else {
				pf[i].fd = -1;
				open_pipes--;
			}
		}
	}
	obuf[ol] = ebuf[el] = '\0';
	close(po[0]);
	close(pe[0]);
	waitpid(pid, &status, 0);
	if (out)
		*out = obuf;
	if (err)
		*err = ebuf;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int run(char **err, const char *const *argv)
{
	return run_full(NULL, err, -1, 0, argv);
}

#define RUN(err, ...) run(err, (const char *const[]){ bin, __VA_ARGS__, NULL })
#define RUN_OUT(out, err, keep, ...) run_full(out, err, keep, 0, (const char *const[]){ bin, __VA_ARGS__, NULL })
#define RUN_STDOUT(out, ...) run_full(out, NULL, -1, 0, (const char *const[]){ bin, __VA_ARGS__, NULL })

static struct rootasm_layout *load(const char *rel)
{
	struct rootasm_layout *l = NULL;
	struct rootasm_error e = { 0 };
	char buf[8192];

	if (rootasm_layout_load(NULL, path(rel), NULL, &l, &e) < 0)
		FAILF("load %s: %s", rel, rootasm_error_format(&e, buf, sizeof(buf)));
	return l;
}

/* Assemble @rel with the library and attach it at a fresh directory; returns the directory. */
static const char *assemble_at(const char *rel, const char *mnt)
{
	struct rootasm_layout *l = load(rel);
	struct rootasm_error e = { 0 };
	char buf[8192];
	int fd;

	mkdir(path(mnt), 0755);
	fd = rootasm_assemble(NULL, l, &e);
	if (fd < 0)
		FAILF("assemble %s: %s", rel, rootasm_error_format(&e, buf, sizeof(buf)));
	if (rootasm_attach(fd, path(mnt), &e) < 0)
		FAILF("attach %s: %s", rel, rootasm_error_format(&e, buf, sizeof(buf)));
	close(fd);
	rootasm_layout_free(l);
	return path(mnt);
}

static uint64_t held_caps(void)
{
	cap_t c = cap_get_proc();
	uint64_t m = 0;

	for (cap_value_t v = 0; v < 64 && cap_valid(v); v++) {
		cap_flag_value_t on = CAP_CLEAR;

		if (cap_get_flag(c, v, CAP_EFFECTIVE, &on) == 0 && on == CAP_SET)
			m |= 1ULL << v;
	}
	cap_free(c);
	return m;
}

/* "[cap_a, cap_b, ...]": what we hold, less @drop. */
static const char *caps_yaml(uint64_t drop)
{
	static char buf[2048];
	uint64_t m = held_caps() & ~drop;

	strcpy(buf, "[");
	for (int v = 0; v < 64; v++) {
		if (!(m & (1ULL << v)))
			continue;
		char *n = cap_to_name(v);

		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s", buf[1] ? ", " : "", n);
		cap_free(n);
	}
	strcat(buf, "]");
	return buf;
}

static void layoutf(const char *rel, const char *fmt, ...)
{
	char text[16384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	put(rel, text);
}

/* ---------------------------------------------------------------- tests */

TEST(image_and_dir_layers_with_whiteouts)
{
	/* dir l1 (bottom), squashfs l2, erofs l3 that deletes /etc/deleted */
	const char *m;
	struct stat st;

	layoutf("t1.yaml", "version: 1\nlayers:\n  - dir: l1\n  - image: l2.sqfs\n  - image: l3.erofs\n");
	m = assemble_at("t1.yaml", "m1");
	ASSERT_STR(slurp(path("m1/etc/motd")), "l2\n");
	ASSERT_STR(slurp(path("m1/newfile")), "new\n");
	ASSERT_STR(slurp(path("m1/etc/keep")), "keep\n");
	ASSERT_ERRNO(stat(path("m1/etc/deleted"), &st), ENOENT);
	/* the file is still in the bottom layer: the whiteout hides it */
	ASSERT_EQ(stat(path("l1/etc/deleted"), &st), 0);
	ASSERT_CONTAINS(mount_at(m), " - overlay ");
	ASSERT_EQ(mounts_under(m), 1);
	/*
	 * While the tree is attached: a loop device backs the squashfs; the erofs is
	 * mounted on its file itself (no loop device; it is open in the kernel: no
	 * write lease for us), except on tmpfs, where erofs cannot read a file
	 */
	ASSERT_CONTAINS(loops(), "l2.sqfs");
	if (on_tmpfs(path("l3.erofs"))) {
		ASSERT_CONTAINS(loops(), "l3.erofs");
	} else {
		ASSERT_TRUE(strstr(loops(), "l3.erofs") == NULL);
		ASSERT_EQ(lease_errno(path("l3.erofs")), EAGAIN);
	}
	ASSERT_EQ(umount2(m, MNT_DETACH), 0);
	/* and nothing has it open once the tree is gone (its superblock goes after the umount: wait) */
	for (int i = 0; i < 100 && lease_errno(path("l3.erofs")) == EAGAIN; i++)
		usleep(20000);
	ASSERT_EQ(lease_errno(path("l3.erofs")), 0);
}

TEST(erofs_on_tmpfs_takes_a_loop_device)
{
	/* erofs reads no file of tmpfs (no read_folio): the same image goes on a loop device there */
	const char *m;
	struct stat st;

	mkdir(path("tm"), 0755);
	ASSERT_EQ(mount("none", path("tm"), "tmpfs", 0, "mode=0755"), 0);
	sh("cp %s %s", path("l3.erofs"), path("tm/l3.erofs"));
	layoutf("t1t.yaml", "version: 1\nlayers:\n  - dir: l1\n  - image: tm/l3.erofs\n");
	m = assemble_at("t1t.yaml", "m1t");
	/* l3's whiteout hides l1's /etc/deleted */
	ASSERT_STR(slurp(path("m1t/etc/keep")), "keep\n");
	ASSERT_ERRNO(stat(path("m1t/etc/deleted"), &st), ENOENT);
	ASSERT_CONTAINS(loops(), "tm/l3.erofs");
	ASSERT_EQ(umount2(m, MNT_DETACH), 0);
	ASSERT_EQ(umount2(path("tm"), MNT_DETACH), 0);
}

TEST(tmpfs_upper_takes_writes)
{
	struct stat st;
	int fd;

	layoutf("t2.yaml", "version: 1\nlayers:\n  - dir: l1\n  - image: l2.sqfs\nupper:\n  tmpfs: { size: 8M }\n");
	assemble_at("t2.yaml", "m2");
	fd = open(path("m2/etc/written"), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(write(fd, "x\n", 2), 2);
	close(fd);
	ASSERT_EQ(unlink(path("m2/etc/keep")), 0);
	put("m2/etc/motd", "changed\n");
	ASSERT_STR(slurp(path("m2/etc/written")), "x\n");
	ASSERT_STR(slurp(path("m2/etc/motd")), "changed\n");
	/* no layer changed */
	ASSERT_ERRNO(stat(path("l1/etc/written"), &st), ENOENT);
	ASSERT_STR(slurp(path("l1/etc/keep")), "keep\n");
	ASSERT_STR(slurp(path("l2/etc/motd")), "l2\n");
	/* the size limit is the tmpfs upper's */
	ASSERT_ERRNO(system("dd if=/dev/zero of=m2/big bs=1M count=16 2>/dev/null") == 0 ? 0 : (errno = ENOSPC, -1), ENOSPC);
}

/*
 * upper: {upperdir, workdir}: an engine's writable layer used as it is (its
 * own names, nothing made in it); a user's tree never gets one (copies-up
 * there are the assembler's), and the two go together.
 */
TEST(upperdir_and_workdir_as_they_are)
{
	struct stat st;
	char *err, *out;

	sh("mkdir -p %s/eng/fs %s/eng/work && echo earlier > %s/eng/fs/before", fix, fix, fix);
	layoutf("t2d.yaml", "version: 1\nlayers:\n  - dir: l1\n  - image: l2.sqfs\nupper:\n"
		"  upperdir: eng/fs\n  workdir: eng/work\n");
	ASSERT_EQ(RUN_STDOUT(&out, "check", path("t2d.yaml")), 0);
	ASSERT_CONTAINS(out, "upper dirs ");
	ASSERT_CONTAINS(out, "/eng/fs workdir=");
	ASSERT_CONTAINS(out, "/eng/work [o_path-fds]");
	assemble_at("t2d.yaml", "m2d");
	ASSERT_STR(slurp(path("m2d/before")), "earlier\n");
	put("m2d/etc/written", "x\n");
	ASSERT_EQ(unlink(path("m2d/etc/keep")), 0);
	/* the writes are in the upper directory itself, its whiteout too; nothing made beside them */
	ASSERT_STR(slurp(path("eng/fs/etc/written")), "x\n");
	ASSERT_EQ(lstat(path("eng/fs/etc/keep"), &st), 0);
	ASSERT_TRUE(S_ISCHR(st.st_mode) && st.st_rdev == 0);
	ASSERT_ERRNO(stat(path("eng/fs/upper"), &st), ENOENT);
	ASSERT_ERRNO(stat(path("eng/upper"), &st), ENOENT);
	ASSERT_STR(slurp(path("l1/etc/keep")), "keep\n");
	sh("chmod 0755 %s", fix);
	ASSERT_EQ(RUN(&err, "check", "--as", "1771", path("t2d.yaml")), 1);
	ASSERT_CONTAINS(err, "upper.upperdir: Operation not permitted (");
	ASSERT_CONTAINS(err, "an upper directory on the host is for administrators");
	layoutf("t2e.yaml", "version: 1\nlayers:\n  - dir: l1\nupper:\n  upperdir: eng/fs\n");
	ASSERT_EQ(RUN(&err, "check", path("t2e.yaml")), 2);
	ASSERT_CONTAINS(err, "t2e.yaml:5:3: upper: 'upperdir' and 'workdir' go together");
}

TEST(readonly_rootfs_refuses_writes)
{
	layoutf("t3.yaml", "version: 1\nlayers:\n  - dir: l1\n  - image: l2.sqfs\n");
	assemble_at("t3.yaml", "m3");
	ASSERT_ERRNO(open(path("m3/etc/new"), O_CREAT | O_WRONLY | O_CLOEXEC, 0644), EROFS);
	ASSERT_ERRNO(mkdir(path("m3/dir"), 0755), EROFS);
	ASSERT_TRUE(has_opt(mount_at(path("m3")), "ro"));
	/* a single layer is the root itself, read-only */
	layoutf("t3b.yaml", "version: 1\nlayers:\n  - dir: l1\n");
	assemble_at("t3b.yaml", "m3b");
	ASSERT_ERRNO(open(path("m3b/etc/new"), O_CREAT | O_WRONLY | O_CLOEXEC, 0644), EROFS);
	ASSERT_STR(slurp(path("m3b/etc/motd")), "base\n");
}

static bool have(enum rootasm_feature f)
{
	return rootasm_probe_feature(NULL, f, NULL, 0) > 0;
}

static bool creds_noadmin_works(void)
{
	return have(ROOTASM_FEAT_OVL_CREDS_NOADMIN);
}

/*
 * When the unprivileged override_creds probe says absent, it must be because
 * the kernel refused the overlay (create), never because the probe's own
 * credential child failed to set up (a setns() into fd 0 once made every
 * kernel look like it lacked the feature).
 */
TEST(probe_creds_noadmin_verdict_comes_from_the_kernel)
{
	char d[512] = "";
	int r = rootasm_probe_feature(NULL, ROOTASM_FEAT_OVL_CREDS_NOADMIN, d, sizeof(d));

	if (r > 0)
		return;
	ASSERT_EQ(r, 0);
	ASSERT_CONTAINS(d, "create");
	ASSERT_TRUE(strstr(d, "setns") == NULL && strstr(d, "setres") == NULL && strstr(d, "capset") == NULL);
}

TEST(override_creds_without_mknod_denies_mknod)
{
	/* the credential keeps CAP_SYS_ADMIN: the running kernel (6.17+) requires it */
	layoutf("t4a.yaml", "version: 1\nlayers:\n  - dir: l1\nupper: { tmpfs: {} }\n"
		"overlay:\n  override_creds: { uid: 0, gid: 0, capabilities: %s }\n",
		caps_yaml(1ULL << CAP_MKNOD));
	layoutf("t4b.yaml", "version: 1\nlayers:\n  - dir: l1\nupper: { tmpfs: {} }\n");
	assemble_at("t4a.yaml", "m4a");
	assemble_at("t4b.yaml", "m4b");
	/* the caller (us) holds CAP_MKNOD; the recorded credential does not */
	ASSERT_ERRNO(mknod(path("m4a/null"), S_IFCHR | 0666, makedev(1, 3)), EPERM);
	ASSERT_EQ(mknod(path("m4b/null"), S_IFCHR | 0666, makedev(1, 3)), 0);
}

TEST(override_creds_checks_reads_against_recorded_credential)
{
	int fd;

	char *err;

	/*
	 * Read-only overlays: with an upper, overlayfs sets up its mode-000 work
	 * directory under the recorded credential, which then needs CAP_DAC_OVERRIDE.
	 */
	layoutf("t5a.yaml", "version: 1\nlayers:\n  - dir: l1\n  - image: l2.sqfs\n"
		"overlay:\n  override_creds: { uid: 0, gid: 0, capabilities: %s }\n",
		caps_yaml((1ULL << CAP_DAC_OVERRIDE) | (1ULL << CAP_DAC_READ_SEARCH)));
	layoutf("t5b.yaml", "version: 1\nlayers:\n  - dir: l1\n  - image: l2.sqfs\n");
	assemble_at("t5a.yaml", "m5a");
	assemble_at("t5b.yaml", "m5b");
	/* /secret: uid 4242, mode 0600. We (the mounter) can read it... */
	fd = open(path("m5b/secret"), O_RDONLY | O_CLOEXEC);
	ASSERT_TRUE(fd >= 0);
	close(fd);
	ASSERT_STR(slurp(path("l1/secret")), "secret\n");
	/* ...but through the overlay that recorded the reduced credential, no */
	ASSERT_ERRNO(open(path("m5a/secret"), O_RDONLY | O_CLOEXEC), EACCES);
	/* a file the credential may read is fine */
	ASSERT_STR(slurp(path("m5a/etc/motd")), "l2\n");
	/* with an upper, the same credential is refused at create, and the error says why */
	layoutf("t5c.yaml", "version: 1\nlayers:\n  - dir: l1\nupper: { tmpfs: {} }\n"
		"overlay:\n  override_creds: { uid: 0, gid: 0, capabilities: %s }\n",
		caps_yaml(1ULL << CAP_DAC_OVERRIDE));
	mkdir(path("m5c"), 0755);
	ASSERT_EQ(RUN(&err, "assemble", path("t5c.yaml"), "--attach", path("m5c")), 1);
	ASSERT_CONTAINS(err, "create overlay");
	ASSERT_CONTAINS(err, "Permission denied");
	ASSERT_CONTAINS(err, "needs CAP_DAC_OVERRIDE");
}

TEST(override_creds_without_sys_admin)
{
	/* The running kernel decides: 6.15/6.16 and the kernel/ series allow it, 6.17+ refuse it. */
	char *err;
	char *before = mountinfo(), *lb = loops();
	int rc;

	/* an unprivileged uid with only what an upper needs (the mode-000 work dir) */
	layoutf("t6.yaml", "version: 1\nlayers:\n  - dir: l1\n  - image: l2.sqfs\nupper: { tmpfs: {} }\n"
		"overlay:\n  override_creds: { uid: 1000, gid: 1000, capabilities: [CAP_DAC_OVERRIDE] }\n");
	mkdir(path("m6"), 0755);
	rc = RUN(&err, "assemble", path("t6.yaml"), "--attach", path("m6"));
	if (creds_noadmin_works()) {
		ASSERT_EQ(rc, 0);
		ASSERT_ERRNO(mknod(path("m6/null"), S_IFCHR | 0666, makedev(1, 3)), EPERM);
		/* writable: the upper takes a new file in / ... */
		put("m6/written", "x\n");
		ASSERT_STR(slurp(path("m6/written")), "x\n");
		/* ...but copying up root's /etc needs CAP_CHOWN, which the recorded credential lacks */
		ASSERT_ERRNO(open(path("m6/etc/written"), O_CREAT | O_WRONLY | O_CLOEXEC, 0644), EPERM);
		/* without CAP_DAC_OVERRIDE the work directory cannot be set up: an error, never a silent ro mount */
		layoutf("t6b.yaml", "version: 1\nlayers:\n  - dir: l1\nupper: { tmpfs: {} }\n"
			"overlay:\n  override_creds: { uid: 1000, gid: 1000, capabilities: [] }\n");
		mkdir(path("m6b"), 0755);
		ASSERT_EQ(RUN(&err, "assemble", path("t6b.yaml"), "--attach", path("m6b")), 1);
		ASSERT_CONTAINS(err, "needs CAP_DAC_OVERRIDE");
		ASSERT_EQ(mounts_under(path("m6b")), 0);
		return;
	}
	ASSERT_EQ(rc, 1);
	ASSERT_CONTAINS(err, "override_creds without CAP_SYS_ADMIN");
	ASSERT_CONTAINS(err, "Linux 6.17+");
	ASSERT_EQ(strchr(err, '\n'), err + strlen(err) - 1);	/* one line */
	ASSERT_STR(mountinfo(), before);
	ASSERT_STR(loops(), lb);
}

TEST(volumes_bind_tmpfs_image_nested)
{
	const char *m;
	char *line;

	layoutf("t7.yaml",
		"version: 1\nlayers:\n  - dir: l1\n  - image: l2.sqfs\nupper: { tmpfs: {} }\n"
		"mounts:\n"
		"  - { bind: data, target: /srv/data, options: [ro, nosuid, nodev] }\n"
		"  - { bind: hostfile, target: /etc/resolv.conf, options: [ro] }\n"
		"  - { tmpfs: /tmp, options: [nosuid, nodev, size=4M, mode=755] }\n"
		"  - { image: vol.sqfs, target: /opt/vol }\n"
		"  - { layout: sub.yaml, target: /srv/sub }\n"
		"  - { tmpfs: /srv/data2, options: [noexec] }\n"
		"attributes: [nosuid, nodev]\n");
	m = assemble_at("t7.yaml", "m7");
	ASSERT_EQ(mounts_under(m), 7);
	line = mount_at(m);
	ASSERT_TRUE(has_opt(line, "rw") && has_opt(line, "nosuid") && has_opt(line, "nodev"));
	line = mount_at(path("m7/srv/data"));
	ASSERT_TRUE(has_opt(line, "ro") && has_opt(line, "nosuid") && has_opt(line, "nodev"));
	ASSERT_STR(slurp(path("m7/srv/data/file")), "hello\n");
	ASSERT_ERRNO(open(path("m7/srv/data/new"), O_CREAT | O_WRONLY | O_CLOEXEC, 0644), EROFS);
	ASSERT_TRUE(has_opt(mount_at(path("m7/etc/resolv.conf")), "ro"));
	ASSERT_STR(slurp(path("m7/etc/resolv.conf")), "nameserver 192.0.2.1\n");
	line = mount_at(path("m7/tmp"));
	ASSERT_CONTAINS(line, " - tmpfs ");
	ASSERT_CONTAINS(line, "size=4096k");
	ASSERT_CONTAINS(line, "mode=755");
	line = mount_at(path("m7/opt/vol"));
	ASSERT_CONTAINS(line, " - squashfs ");
	ASSERT_STR(slurp(path("m7/opt/vol/volfile")), "vol\n");
	/* the nested layout is a whole read-only tree of its own (layer l2 only) */
	ASSERT_STR(slurp(path("m7/srv/sub/etc/motd")), "l2\n");
	ASSERT_TRUE(has_opt(mount_at(path("m7/srv/sub")), "ro"));
	ASSERT_TRUE(has_opt(mount_at(path("m7/srv/data2")), "noexec"));
}

TEST(volumes_overlay_of_a_dir_and_an_image)
{
	struct stat st;
	char *err = NULL, *out = NULL;
	const char *m;

	/* the source's root has its own owner and mode; the volume's root shows them */
	sh("mkdir -p %s/ovsrc && echo src > %s/ovsrc/file && chown 1771:1772 %s/ovsrc && chmod 0750 %s/ovsrc && "
	   "mkfifo %s/ovfifo", fix, fix, fix, fix, fix);
	layoutf("ov.yaml", "version: 1\nlayers:\n  - dir: l1\nupper: { tmpfs: {} }\nmounts:\n"
		"  - { overlay: ovsrc, target: /srv/ov, options: [nosuid, size=1M] }\n"
		"  - { overlay: vol.sqfs, target: /opt/ov }\n");
	ASSERT_EQ(RUN_STDOUT(&out, "check", path("ov.yaml")), 0);
	ASSERT_CONTAINS(out, "mounts[0] overlay ");
	ASSERT_CONTAINS(out, "-> /srv/ov options=nosuid size=1M type=auto [fsconfig-set-fd+fsmount]");
	m = assemble_at("ov.yaml", "mov");
	ASSERT_EQ(mounts_under(m), 3);
	ASSERT_CONTAINS(mount_at(path("mov/srv/ov")), " - overlay ");
	ASSERT_TRUE(has_opt(mount_at(path("mov/srv/ov")), "nosuid"));
	ASSERT_TRUE(stat(path("mov/srv/ov"), &st) == 0 && st.st_uid == 1771 && st.st_gid == 1772 &&
		    (st.st_mode & 07777) == 0750);
	/* writes land in the volume's own tmpfs: the source and the image are never written */
	ASSERT_STR(slurp(path("mov/srv/ov/file")), "src\n");
	sh("echo more >> %s && echo new > %s && echo w >> %s", path("mov/srv/ov/file"), path("mov/srv/ov/new"),
	   path("mov/opt/ov/volfile"));
	ASSERT_STR(slurp(path("mov/srv/ov/file")), "src\nmore\n");
	ASSERT_STR(slurp(path("ovsrc/file")), "src\n");
	ASSERT_ERRNO(stat(path("ovsrc/new"), &st), ENOENT);
	ASSERT_STR(slurp(path("mov/opt/ov/volfile")), "vol\nw\n");
	/* size= is the upper's */
	ASSERT_TRUE(system("dd if=/dev/zero of=mov/srv/ov/big bs=1M count=4 2>/dev/null") != 0);
	/* what it is not: a FIFO source, an idmap, and a tree that is not an administrator's */
	layoutf("ov2.yaml", "version: 1\nlayers:\n  - dir: l1\nmounts:\n  - { overlay: ovfifo, target: /x }\n");
	ASSERT_EQ(RUN(&err, "check", path("ov2.yaml")), 2);
	ASSERT_CONTAINS(err, "mounts[0].overlay");
	ASSERT_CONTAINS(err, "expected a directory or a regular file (an image)");
	layoutf("ov3.yaml", "version: 1\nlayers:\n  - dir: l1\nmounts:\n"
		"  - { overlay: ovsrc, target: /x, idmap: { uids: [\"0:1771:1\"], gids: [\"0:1771:1\"] } }\n");
	ASSERT_EQ(RUN(&err, "check", path("ov3.yaml")), 2);
	ASSERT_CONTAINS(err, "'idmap' applies to bind and image mounts only");
	sh("chmod 0755 %s", fix);
	ASSERT_EQ(RUN(&err, "check", "--as", "1771", path("ov.yaml")), 1);
	ASSERT_CONTAINS(err, "'overlay' mounts are for administrators (the tree is for uid 1771");
}

TEST(symlinks_cannot_redirect_targets_out_of_the_rootfs)
{
	struct stat st;
	char *hostmi = NULL;

	/* l1 has /etclink -> /etc and /up -> ../.. (relative to /, so the root itself) */
	layoutf("t8.yaml",
		"version: 1\nlayers:\n  - dir: l1\nupper: { tmpfs: {} }\n"
		"mounts:\n"
		"  - { tmpfs: /etclink/escape1 }\n"
		"  - { tmpfs: /up/up/escape2 }\n"
		"  - { bind: hostfile, target: /etclink/escape3 }\n");
	hostmi = mountinfo();
	assemble_at("t8.yaml", "m8");
	/* everything landed inside the tree */
	ASSERT_TRUE(mount_at(path("m8/etc/escape1")) != NULL);
	ASSERT_TRUE(mount_at(path("m8/escape2")) != NULL);
	ASSERT_TRUE(mount_at(path("m8/etc/escape3")) != NULL);
	ASSERT_EQ(mounts_under(path("m8")), 4);
	/* and nothing outside it: not on the host's /etc, not beside the fixture */
	ASSERT_ERRNO(stat("/etc/escape1", &st), ENOENT);
	ASSERT_ERRNO(stat("/etc/escape3", &st), ENOENT);
	ASSERT_ERRNO(stat("/escape2", &st), ENOENT);
	ASSERT_ERRNO(stat(path("escape2"), &st), ENOENT);
	ASSERT_TRUE(mount_at("/etc/escape1") == NULL);
	(void)hostmi;
}

/* ---------------------------------------------------------- principals (authorize.c, chase.c) */

TEST(principal_symlink_from_a_users_directory_to_root_is_refused)
{
	char *err = NULL, *before = mountinfo();

	/*
	 * /u belongs to uid 1771, who swapped its directory d for a symlink to
	 * /: u/d/etc would be the host's /etc as a layer. From a directory one user
	 * owns into one another owns: refused (systemd's CHASE_SAFE).
	 */
	sh("mkdir -p %s/pu/u && chown 1771:1771 %s/pu/u && ln -s / %s/pu/u/d && chown -h 1771:1771 %s/pu/u/d",
	   fix, fix, fix, fix);
	layoutf("pu.yaml", "version: 1\nlayers:\n  - dir: pu/u/d/etc\n");
	mkdir(path("mpu"), 0755);
	ASSERT_EQ(RUN(&err, "assemble", path("pu.yaml"), "--attach", path("mpu")), 2);
	ASSERT_CONTAINS(err, "layers[0].dir");
	ASSERT_CONTAINS(err, "an unsafe path");
	ASSERT_EQ(strchr(err, '\n'), err + strlen(err) - 1);
	ASSERT_STR(mountinfo(), before);
	/* through a directory anyone may write without the sticky bit: the same */
	sh("mkdir -p %s/pw/w/x && chmod 0777 %s/pw/w", fix, fix);
	layoutf("pw.yaml", "version: 1\nlayers:\n  - dir: pw/w/x\n");
	ASSERT_EQ(RUN(&err, "check", path("pw.yaml")), 2);
	ASSERT_CONTAINS(err, "a directory others may write");
	/* root's symlinks, and root-owned sticky directories (/tmp) are fine */
	sh("mkdir -p %s/pr/real/sub %s/ps && ln -s real %s/pr/link && chmod 1777 %s/ps && mkdir %s/ps/x", fix, fix, fix,
	   fix, fix);
	layoutf("pr.yaml", "version: 1\nlayers:\n  - dir: pr/link/sub\n  - dir: ps/x\n");
	ASSERT_EQ(RUN(&err, "check", path("pr.yaml")), 0);
}

TEST(principal_race_a_users_directory_swapped_for_a_symlink_to_root)
{
	const int RUNS = harness_scale(100, 20);
	int own = 0, refused = 0, bad = 0;
	char *err = NULL;
	pid_t sw, me = getpid();

	/*
	 * uid 1771 owns pu2/u and flips pu2/u/d between its own directory (with
	 * etc/marker) and a symlink to / while root assembles u/d/etc: each run
	 * gets 1771's etc or is refused, never the host's /etc.
	 */
	sh("chmod 0755 %s", fix);	/* uid 1771 reaches its directory */
	sh("mkdir -p %s/pu2/u/real/etc %s/pu2/mnt && echo mine > %s/pu2/u/real/etc/marker && ln -s / %s/pu2/u/d && "
	   "chown -hR 1771:1771 %s/pu2/u", fix, fix, fix, fix, fix);
	layoutf("pu2/l.yaml", "version: 1\nlayers:\n  - dir: u/d/etc\n");
	sw = fork();
	if (sw == 0) {
		int dfd;

		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != me || setgroups(0, NULL) < 0 ||
		    setresgid(1771, 1771, 1771) < 0 || setresuid(1771, 1771, 1771) < 0)
			_exit(1);
		dfd = open(path("pu2/u"), O_PATH | O_DIRECTORY | O_CLOEXEC);
		for (;;)
			renameat2(dfd, "real", dfd, "d", RENAME_EXCHANGE);
	}
	for (int i = 0; i < RUNS; i++) {
		int rc = run_full(NULL, &err, -1, 10,
				  (const char *const[]){ bin, "assemble", path("pu2/l.yaml"), "--attach", path("pu2/mnt"), NULL });

		if (rc != 0) {
			if (strchr(err, '\n') != err + strlen(err) - 1 || (!strstr(err, "an unsafe path") &&
			    !strstr(err, "No such file") && !strstr(err, "Not a directory")))
				FAILF("run %d: rc %d, unexpected error: %s", i, rc, err);
			refused++;
			continue;
		}
		if (access(path("pu2/mnt/passwd"), F_OK) == 0 || access(path("pu2/mnt/marker"), F_OK) < 0)
			bad++;
		else
			own++;
		if (umount2(path("pu2/mnt"), MNT_DETACH) < 0)
			FAILF("umount: %s", strerror(errno));
	}
	kill(sw, SIGKILL);
	waitpid(sw, NULL, 0);
	fprintf(stderr, "  %d runs: %d got uid 1771's directory, %d refused, %d got the host's /etc\n", RUNS, own, refused,
		bad);
	ASSERT_EQ(bad, 0);
	ASSERT_TRUE(own > 0 && refused > 0);
}

TEST(principal_sources_in_one_directory_each_checked)
{
	char *err = NULL;
	char *l;

	/*
	 * Absolute paths in one directory: after the first, each is walked from
	 * the directory the one before left (chase.c's memo), one component
	 * instead of all; every rule still applies to it. pm/u belongs to uid
	 * 1771: its own a is fine, root's r in it is refused (1771 could swap
	 * it), and so is a symlink as the last component.
	 */
	sh("mkdir -p %s/pm/u/a %s/pm/u/r %s/pm/d/a %s/pm/d/b && ln -s a %s/pm/d/link && chown 1771:1771 %s/pm/u %s/pm/u/a",
	   fix, fix, fix, fix, fix, fix, fix);
	ASSERT_TRUE(asprintf(&l, "version: 1\nlayers:\n  - dir: %s/pm/u/a\n  - dir: %s/pm/u/r\n", fix, fix) > 0);
	layoutf("pm1.yaml", "%s", l);
	ASSERT_EQ(RUN(&err, "check", path("pm1.yaml")), 2);
	ASSERT_CONTAINS(err, "layers[1].dir");
	ASSERT_CONTAINS(err, "reached through a directory owned by uid 1771");
	free(l);
	ASSERT_TRUE(asprintf(&l, "version: 1\nlayers:\n  - dir: %s/pm/d/a\n  - dir: %s/pm/d/link\n", fix, fix) > 0);
	layoutf("pm2.yaml", "%s", l);
	ASSERT_EQ(RUN(&err, "check", path("pm2.yaml")), 2);
	ASSERT_CONTAINS(err, "layers[1].dir");
	free(l);
	/* and what is fine stays fine: two directories side by side, then one in another directory */
	ASSERT_TRUE(asprintf(&l, "version: 1\nlayers:\n  - dir: %s/pm/d/a\n  - dir: %s/pm/d/b\n  - dir: %s/pm/u/a\n",
			     fix, fix, fix) > 0);
	layoutf("pm3.yaml", "%s", l);
	ASSERT_EQ(RUN(&err, "check", path("pm3.yaml")), 0);
	free(l);
}

TEST(principal_admin_images_must_be_roots)
{
	char *err = NULL;

	/* an image file another user owns, or may write, or in a directory others may write */
	sh("mkdir -p %s/pi/ok %s/pi/gw && cp %s %s/pi/ok/user.sqfs && chown 1771 %s/pi/ok/user.sqfs && "
	   "cp %s %s/pi/ok/mode.sqfs && chmod 0666 %s/pi/ok/mode.sqfs && cp %s %s/pi/gw/a.sqfs && chmod 0775 %s/pi/gw && "
	   "chown 0:1771 %s/pi/gw && cp %s %s/pi/ok/good.sqfs",
	   fix, fix, path("l2.sqfs"), fix, fix, path("l2.sqfs"), fix, fix, path("l2.sqfs"), fix, fix, fix,
	   path("l2.sqfs"), fix);
	layoutf("pi1.yaml", "version: 1\nlayers:\n  - image: pi/ok/user.sqfs\n");
	ASSERT_EQ(RUN(&err, "check", path("pi1.yaml")), 1);
	ASSERT_CONTAINS(err, "layers[0].image");
	ASSERT_CONTAINS(err, "not root's");
	layoutf("pi2.yaml", "version: 1\nlayers:\n  - image: pi/ok/mode.sqfs\n");
	ASSERT_EQ(RUN(&err, "check", path("pi2.yaml")), 1);
	ASSERT_CONTAINS(err, "writable by group or others");
	layoutf("pi3.yaml", "version: 1\nlayers:\n  - dir: l1\nmounts:\n  - { image: pi/gw/a.sqfs, target: /v }\n");
	ASSERT_EQ(RUN(&err, "check", path("pi3.yaml")), 1);
	ASSERT_CONTAINS(err, "mounts[0].image");
	ASSERT_CONTAINS(err, "/pi/gw above it is writable by group or others without the sticky bit");
	/* every directory above it: root's file in root's directory, in a directory a group may write, is not trusted */
	sh("mkdir -p %s/pi/gw/sub && cp %s %s/pi/gw/sub/b.sqfs", fix, path("l2.sqfs"), fix);
	layoutf("pi5.yaml", "version: 1\nlayers:\n  - image: pi/gw/sub/b.sqfs\n");
	ASSERT_EQ(RUN(&err, "check", path("pi5.yaml")), 1);
	ASSERT_CONTAINS(err, "/pi/gw above it is writable by group or others without the sticky bit");
	/* the layout may vouch for them; root's own file in root's directory needs nothing */
	layoutf("pi4.yaml", "version: 1\nlayers:\n  - image: pi/ok/user.sqfs\n    trusted: true\n  - image: pi/ok/good.sqfs\n"
		"upper: { tmpfs: {} }\nmounts:\n  - { image: pi/gw/a.sqfs, target: /v, trusted: true }\n");
	ASSERT_EQ(RUN(&err, "check", path("pi4.yaml")), 0);
	mkdir(path("mpi"), 0755);
	if (RUN(&err, "assemble", path("pi4.yaml"), "--attach", path("mpi")) != 0)
		FAILF("%s", err);
	ASSERT_STR(slurp(path("mpi/etc/motd")), "l2\n");
}

/* A nested layout an administrator's layout assembles follows the same rule: whoever may change it chooses the tree. */
TEST(principal_admin_nested_layouts_must_be_roots)
{
	char *err = NULL;

	sh("mkdir -p %s/pn/ok %s/pn/gw && chmod 0775 %s/pn/gw && chown 0:1771 %s/pn/gw", fix, fix, fix, fix);
	layoutf("pn/ok/user.yaml", "version: 1\nlayers:\n  - dir: ../../l1\n");
	layoutf("pn/ok/mode.yaml", "version: 1\nlayers:\n  - dir: ../../l1\n");
	layoutf("pn/gw/sub.yaml", "version: 1\nlayers:\n  - dir: ../../l1\n");
	layoutf("pn/ok/good.yaml", "version: 1\nlayers:\n  - dir: ../../l1\n");
	sh("chown 1771 %s/pn/ok/user.yaml && chmod 0666 %s/pn/ok/mode.yaml", fix, fix);
	layoutf("pn1.yaml", "version: 1\nlayers:\n  - dir: l1\nmounts:\n  - { layout: pn/ok/user.yaml, target: /v }\n");
	ASSERT_EQ(RUN(&err, "check", path("pn1.yaml")), 1);
	ASSERT_CONTAINS(err, "pn1.yaml:5:15: mounts[0].layout: ");
	ASSERT_CONTAINS(err, "the nested layout file ");
	ASSERT_CONTAINS(err, "not root's");
	layoutf("pn2.yaml", "version: 1\nlayers:\n  - dir: l1\nmounts:\n  - { layout: pn/ok/mode.yaml, target: /v }\n");
	ASSERT_EQ(RUN(&err, "check", path("pn2.yaml")), 1);
	ASSERT_CONTAINS(err, "writable by group or others");
	layoutf("pn3.yaml", "version: 1\nlayers:\n  - dir: l1\nmounts:\n  - { layout: pn/gw/sub.yaml, target: /v }\n");
	ASSERT_EQ(RUN(&err, "check", path("pn3.yaml")), 1);
	ASSERT_CONTAINS(err, "/pn/gw above it is writable by group or others without the sticky bit");
	/* nor may it be assembled; root's own file in root's directory needs nothing */
	mkdir(path("mpn"), 0755);
	ASSERT_EQ(RUN(&err, "assemble", path("pn1.yaml"), "--attach", path("mpn")), 1);
	layoutf("pn4.yaml", "version: 1\nlayers:\n  - dir: l1\nmounts:\n  - { layout: pn/ok/good.yaml, target: /v }\n");
	ASSERT_EQ(RUN(&err, "check", path("pn4.yaml")), 0);
}

TEST(principal_check_as_shows_what_a_user_gets)
{
	char *out = NULL, *err = NULL;

	/* uid 1771 must reach the fixture to name anything in it */
	sh("chmod 0755 %s", fix);
	/* root's directory and a directory uid 1771 owns, both bound rw; a root-only directory */
	sh("mkdir -p %s/pa/root %s/pa/mine %s/pa/secret && chown 1771 %s/pa/mine && chmod 0700 %s/pa/secret", fix, fix,
	   fix, fix, fix);
	layoutf("pa.yaml", "version: 1\nlayers:\n  - dir: l1\nupper: { tmpfs: {} }\nmounts:\n"
		"  - { bind: pa/root, target: /r }\n  - { bind: pa/mine, target: /m }\n");
	ASSERT_EQ(RUN_STDOUT(&out, "check", "--as", "1771", path("pa.yaml")), 0);
	ASSERT_CONTAINS(out, "for uid 1771");
	ASSERT_CONTAINS(out, "-> /r options=- forced=ro (read-only: uid 1771");
	{
		/* its own directory stays rw */
		char *m = strstr(out, "-> /m"), *nl = m ? strchr(m, '\n') : NULL, *f = m ? strstr(m, "forced") : NULL;

		ASSERT_TRUE(m && nl && (!f || f > nl));
	}
	ASSERT_CONTAINS(out, "every mount of the tree nosuid,nodev,recursive");
	/* the grant, before the steps: what the tree as a whole is given */
	ASSERT_CONTAINS(out, "for uid 1771 gid 1771\ngrant: every mount nosuid,nodev, locked: its receiver cannot clear "
			"an attribute or unmount a volume (the tree is not for an administrator)\n 1. ");
	/* the same as the administrator: no reduction */
	ASSERT_EQ(RUN_STDOUT(&out, "check", path("pa.yaml")), 0);
	ASSERT_CONTAINS(out, "for administrator\ngrant: what the layout says (an administrator's tree)\n");
	ASSERT_TRUE(!strstr(out, "forced="));
	ASSERT_TRUE(!strstr(out, "every mount of the tree"));
	/* what uid 1771 cannot read, it cannot name; the layout's own idmaps and host upper dirs are refused */
	layoutf("pb.yaml", "version: 1\nlayers:\n  - dir: pa/secret\nupper: { dir: pa/mine }\nmounts:\n"
		"  - { bind: pa/root, target: /r, idmap: { uids: [\"0:1771:1\"], gids: [\"0:1771:1\"] } }\n");
	ASSERT_EQ(RUN(&err, "check", "--as", "1771", path("pb.yaml")), 1);
	ASSERT_CONTAINS(err, "layers[0].dir: Operation not permitted (");
	ASSERT_CONTAINS(err, "cannot read this directory");
	ASSERT_CONTAINS(err, "upper.dir");
	ASSERT_CONTAINS(err, "mounts[0].bind");
	ASSERT_CONTAINS(err, "an idmap of the layout's own is for administrators");
	/* JSON: the same decisions */
	ASSERT_EQ(RUN_STDOUT(&out, "--json", "check", "--as", "1771", path("pa.yaml")), 0);
	ASSERT_CONTAINS(out, "\"principal\":\"uid 1771");
	ASSERT_CONTAINS(out, "\"forced\":[\"ro\"]");
	ASSERT_CONTAINS(out, "\"op\":\"tree-attributes\"");
	ASSERT_CONTAINS(out, "\"grant\":{\"administrator\":false,\"tree_forced\":[\"nosuid\",\"nodev\"],\"locked\":true,"
			"\"why\":\"the tree is not for an administrator\",\"receiver\":null,\"userns\":null,\"layouts\":null,"
			"\"sources\":null,\"no_userns\":false}");
	/*
	 * A rootasmd rule's limits, as limits of the principal the authorize
	 * stage checks on what it opened: within them, the grant names them ...
	 */
	{
		char lim[8192], sdir[4096], ldir[4096];

		snprintf(ldir, sizeof(ldir), "%s", fix);
		snprintf(sdir, sizeof(sdir), "%s", path("pa"));
		ASSERT_EQ(RUN_STDOUT(&out, "check", "--as", "1771", "--layout-dir", ldir, "--source-dir", path("l1"),
				     "--source-dir", sdir, path("pa.yaml")), 0);
		snprintf(lim, sizeof(lim), "; layout files only from %s; host objects only from %s,%s\n", ldir, path("l1"),
			 sdir);
		ASSERT_CONTAINS(out, lim);
		/* ... a layout file outside the layout directories is refused ... */
		ASSERT_EQ(RUN(&err, "check", "--as", "1771", "--layout-dir", sdir, path("pa.yaml")), 1);
		snprintf(lim, sizeof(lim), "the layout file lies in %s, in none of the layout directories allowed to uid 1771",
			 ldir);
		ASSERT_CONTAINS(err, lim);
		/* a relative path is judged as the absolute path it is, from the working directory */
		ASSERT_EQ(run_sh(&out, "cd %s && %s check --as 1771 --layout-dir %s --source-dir %s --source-dir %s pa.yaml",
				 fix, bin, ldir, path("l1"), sdir), 0);
		ASSERT_EQ(run_sh(&out, "cd %s && %s check --as 1771 --layout-dir %s pa.yaml", fix, bin, sdir), 1);
		ASSERT_CONTAINS(out, lim);
		/* ... and a host object outside the source directories, by its fd: a symlink in them leading out too */
		ASSERT_EQ(RUN(&err, "check", "--as", "1771", "--source-dir", sdir, path("pa.yaml")), 1);
		ASSERT_CONTAINS(err, "layers[0].dir");
		ASSERT_CONTAINS(err, "in none of the source directories allowed to uid 1771");
		sh("ln -sfn %s %s/pa/up", fix, fix);
		layoutf("pl.yaml", "version: 1\nlayers:\n  - dir: pa/up/l1\n");
		ASSERT_EQ(RUN(&err, "check", "--as", "1771", "--source-dir", sdir, path("pl.yaml")), 1);
		snprintf(lim, sizeof(lim), "it is %s, in none of the source directories", path("l1"));
		ASSERT_CONTAINS(err, lim);
		/* limits are --as's */
		ASSERT_EQ(RUN(&err, "check", "--layout-dir", sdir, path("pa.yaml")), 2);
		ASSERT_CONTAINS(err, "--layout-dir and --source-dir limit the principal of --as");
	}
}

TEST(attach_adds_exactly_the_tree)
{
	struct rootasm_layout *l;
	struct rootasm_error e = { 0 };
	char *before, *during, *after;
	int fd;

	layoutf("t9.yaml",
		"version: 1\nlayers:\n  - dir: l1\n  - image: l2.sqfs\nupper: { tmpfs: {} }\n"
		"mounts:\n  - { tmpfs: /tmp }\n  - { bind: data, target: /data }\n  - { image: vol.sqfs, target: /vol }\n");
	l = load("t9.yaml");
	mkdir(path("m9"), 0755);
	before = mountinfo();
	fd = rootasm_assemble(NULL, l, &e);
	ASSERT_TRUE(fd >= 0);
	/* the whole tree exists, and the namespace has not seen any of it */
	during = mountinfo();
	ASSERT_STR(during, before);
	ASSERT_EQ(rootasm_attach(fd, path("m9"), &e), 0);
	after = mountinfo();
	/* exactly root + 3 volumes appeared, all under m9, and nothing else changed */
	ASSERT_EQ(mounts_under(path("m9")), 4);
	{
		int nb = 0, na = 0;

		for (char *s = before; *s; s++)
			nb += *s == '\n';
		for (char *s = after; *s; s++)
			na += *s == '\n';
		ASSERT_EQ(na - nb, 4);
	}
	close(fd);
	rootasm_layout_free(l);
}

/*
 * Options by their whole name only (getopt took any unambiguous start of one:
 * podman's `login --password S` was --password-stdin with S the registry,
 * which rootasm looked up and named in its error), and a bundled short
 * option is named by its letter.
 */
TEST(cli_options_by_their_whole_name)
{
	char *err;

	ASSERT_EQ(RUN(&err, "images", "--stor", path("nostore")), 2);
	ASSERT_CONTAINS(err, "unknown option '--stor' (did you mean --store?");
	ASSERT_EQ(RUN(&err, "--vers"), 2);
	ASSERT_CONTAINS(err, "unknown option '--vers' (did you mean --version?");
	ASSERT_EQ(RUN(&err, "login", "-u", "alice", "--password", "s3cret-w0rd", "127.0.0.1:1"), 2);
	ASSERT_CONTAINS(err, "--password-stdin");
	ASSERT_TRUE(strstr(err, "s3cret-w0rd") == NULL);
	ASSERT_EQ(RUN(&err, "login", "-u", "alice", "--password-st", "127.0.0.1:1"), 2);
	ASSERT_CONTAINS(err, "did you mean --password-stdin?");
	ASSERT_EQ(RUN(&err, "images", "-qz"), 2);
	ASSERT_CONTAINS(err, "unknown option '-z'");
	ASSERT_EQ(RUN(&err, "images", "--json", "-zq"), 2);
	ASSERT_CONTAINS(err, "unknown option '-z'");
	/* an unknown option's value is not repeated (it may be a password) */
	ASSERT_EQ(RUN(&err, "login", "--passw=hunter2-x", "127.0.0.1:1"), 2);
	ASSERT_TRUE(strstr(err, "hunter2-x") == NULL);
	ASSERT_EQ(RUN(&err, "login", "--passwd=hunter2-x", "127.0.0.1:1"), 2);
	ASSERT_TRUE(strstr(err, "hunter2-x") == NULL);
	ASSERT_EQ(RUN(&err, "login", "--password-stdin=hunter2-x", "127.0.0.1:1"), 2);
	ASSERT_CONTAINS(err, "option '--password-stdin' takes no value");
	ASSERT_TRUE(strstr(err, "hunter2-x") == NULL);
	/* exec's podman letters: -e KEY=VALUE, -i (nothing to add), -t (not asked here: no terminal) */
	{
		char *out;

		layoutf("xo.yaml", "version: 1\nlayers:\n  - dir: l1\nupper: { tmpfs: {} }\n");
		ASSERT_EQ(RUN_OUT(&out, &err, -1, "exec", "-i", "-e", "A=from-e", path("xo.yaml"), "--", "/bin/sh", "-c",
				  "echo $A"), 0);
		ASSERT_STR(out, "from-e\n");
	}
	/* the whole name, with its value after '=' or apart, as before */
	ASSERT_EQ(RUN(&err, "images", "--store=/nonexistent-store-x", "--quiet"), RUN(&err, "images", "--store",
										    "/nonexistent-store-x", "--quiet"));
}

TEST(cli_attach)
{
	char *err;

	layoutf("t10.yaml", "version: 1\nlayers:\n  - dir: l1\nupper: { tmpfs: {} }\nmounts:\n  - { tmpfs: /tmp }\n");
	mkdir(path("m10"), 0755);
	ASSERT_EQ(RUN(&err, "assemble", path("t10.yaml"), "--attach", path("m10")), 0);
	ASSERT_STR(err, "");
	ASSERT_EQ(mounts_under(path("m10")), 2);
	ASSERT_STR(slurp(path("m10/etc/motd")), "base\n");
}

/*
 * assemble --json names the tree it attached by its unique mount id, the one
 * statx(STATX_MNT_ID_UNIQUE) reads at DIR afterwards; --audit --quiet prints
 * nothing (its verdict is the exit status).
 */
TEST(cli_attach_json_names_the_tree_by_its_unique_mount_id)
{
	unsigned long long id = 0;
	struct statx sx;
	char *err, *out, *m;

	layoutf("t10j.yaml", "version: 1\nlayers:\n  - dir: l1\nupper: { tmpfs: {} }\nmounts:\n  - { tmpfs: /tmp }\n");
	mkdir(path("m10j"), 0755);
	ASSERT_EQ(run_full(&out, &err, -1, 0, (const char *const[]){ bin, "assemble", "--json", path("t10j.yaml"), "--attach",
							      path("m10j"), NULL }), 0);
	ASSERT_STR(err, "");
	ASSERT_CONTAINS(out, "\"attached\":");
	m = strstr(out, "\"mount_id\":");
	ASSERT_TRUE(m != NULL);
	id = strtoull(m + strlen("\"mount_id\":"), NULL, 10);
	ASSERT_EQ(statx(AT_FDCWD, path("m10j"), AT_SYMLINK_NOFOLLOW, 0x4000U /* STATX_MNT_ID_UNIQUE */, &sx), 0);
	ASSERT_TRUE(sx.stx_mask & 0x4000U);
	ASSERT_TRUE(id != 0);
	ASSERT_EQ(sx.stx_mnt_id, id);

	if (have(ROOTASM_FEAT_FANOTIFY_MNT)) {
		mkdir(path("m10q"), 0755);
		ASSERT_EQ(run_full(&out, &err, -1, 0, (const char *const[]){ bin, "assemble", path("t10j.yaml"), "--attach",
								      path("m10q"), "--audit", "--quiet", NULL }), 0);
		ASSERT_STR(out, "");
		ASSERT_STR(err, "");
		ASSERT_EQ(mounts_under(path("m10q")), 2);
	}
}

TEST(send_fd_to_a_client_that_attaches)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char payload[4096] = "";
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { payload, sizeof(payload) - 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	char *before;
	int ls, cs, tree, status;
	pid_t pid;

	layoutf("t11.yaml", "version: 1\nlayers:\n  - dir: l1\n  - image: l2.sqfs\nupper: { tmpfs: {} }\n"
		"mounts:\n  - { tmpfs: /run }\n");
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path("sock"));
	ls = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_EQ(bind(ls, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ASSERT_EQ(listen(ls, 1), 0);
	before = mountinfo();
	pid = fork();
	if (pid == 0) {
		execl(bin, bin, "assemble", path("t11.yaml"), "--send-fd", path("sock"), (char *)NULL);
		_exit(127);
	}
	cs = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
	ASSERT_TRUE(cs >= 0);
	ASSERT_TRUE(recvmsg(cs, &msg, MSG_CMSG_CLOEXEC) > 0);
	waitpid(pid, &status, 0);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* one line of JSON (protocol 2) */
	ASSERT_TRUE(!strncmp(payload, "{\"rootasm\":\"tree\",\"version\":2,\"layout\":\"", 40));
	ASSERT_CONTAINS(payload, "t11.yaml\"}\n");
	c = CMSG_FIRSTHDR(&msg);
	ASSERT_TRUE(c && c->cmsg_type == SCM_RIGHTS);
	memcpy(&tree, CMSG_DATA(c), sizeof(int));
	/* the sender has exited; the tree lives on in our fd, still unseen */
	ASSERT_STR(mountinfo(), before);
	mkdir(path("m11"), 0755);
	ASSERT_EQ(move_mount(tree, "", AT_FDCWD, path("m11"), MOVE_MOUNT_F_EMPTY_PATH), 0);
	ASSERT_EQ(mounts_under(path("m11")), 2);
	ASSERT_STR(slurp(path("m11/etc/motd")), "l2\n");
	close(tree);
}

TEST(exec_passes_exit_status)
{
	char *err;

	layoutf("t12.yaml", "version: 1\nlayers:\n  - dir: l1\n  - image: l2.sqfs\nupper: { tmpfs: {} }\n");
	ASSERT_EQ(RUN(&err, "exec", path("t12.yaml"), "--", "/bin/sh", "-c", "exit 7"), 7);
	ASSERT_EQ(RUN(&err, "exec", path("t12.yaml"), "/bin/sh", "-c", "exit 0"), 0);
	/* it runs inside the tree, as pid 2 under rootasm's init, with /proc of its own */
	ASSERT_EQ(RUN(&err, "exec", path("t12.yaml"), "--", "/bin/sh", "-c",
		      "test \"$(cat /etc/motd)\" = l2 && test -f /newfile && test $$ = 2 && test -r /proc/1/status"), 0);
	/* killed by a signal: 128 + N */
	ASSERT_EQ(RUN(&err, "exec", path("t12.yaml"), "--", "/bin/sh", "-c", "kill -9 $$"), 137);
	/* not found: 127, with one line naming it */
	ASSERT_EQ(RUN(&err, "exec", path("t12.yaml"), "--", "/nonexistent"), 127);
	ASSERT_CONTAINS(err, "/nonexistent");
	/* the mount API is denied to the command by default */
	ASSERT_EQ(RUN(&err, "exec", path("t12.yaml"), "--", "/bin/sh", "-c", "mount -t tmpfs none /tmp"), 1);
	ASSERT_CONTAINS(err, "permission denied");
	/* a layout that opts out lets it through */
	/* a layout that opts out of the mount API rules and keeps CAP_SYS_ADMIN may mount */
	layoutf("t12b.yaml", "version: 1\nlayers:\n  - dir: l1\n  - image: l2.sqfs\nupper: { tmpfs: {} }\n"
		"exec: { deny_mount_api: false, capabilities: [CAP_SYS_ADMIN] }\n");
	ASSERT_EQ(RUN(&err, "exec", path("t12b.yaml"), "--", "/bin/sh", "-c", "mkdir -p /tmp && mount -t tmpfs none /tmp"), 0);
	/* with the rules but CAP_SYS_ADMIN kept: the profile alone denies it */
	layoutf("t12c.yaml", "version: 1\nlayers:\n  - dir: l1\n  - image: l2.sqfs\nupper: { tmpfs: {} }\n"
		"exec: { capabilities: [CAP_SYS_ADMIN] }\n");
	ASSERT_EQ(RUN(&err, "exec", path("t12c.yaml"), "--", "/bin/sh", "-c", "mkdir -p /tmp && mount -t tmpfs none /tmp"), 1);
	/* 126: found but not executable; 125: rootasm failed (here the layout) */
	ASSERT_EQ(RUN(&err, "exec", path("t12.yaml"), "--", "/etc/motd"), 126);
	ASSERT_CONTAINS(err, "/etc/motd: Permission denied");
	ASSERT_EQ(RUN(&err, "exec", path("nonexistent.yaml"), "--", "/bin/true"), 125);
	/* nothing stays behind in our namespace */
	ASSERT_EQ(mounts_under(fix), 0);
}

TEST(exec_forwards_signals)
{
	struct timespec ts = { 0, 300 * 1000 * 1000 };
	int status;
	pid_t pid;

	layoutf("t13.yaml", "version: 1\nlayers:\n  - dir: l1\nupper: { tmpfs: {} }\n");
	pid = fork();
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		dup2(devnull, 2);
		execl(bin, bin, "exec", path("t13.yaml"), "--", "/bin/sh", "-c", "trap 'exit 42' TERM; while :; do sleep 0.05; done", (char *)NULL);
		_exit(127);
	}
	nanosleep(&ts, NULL);
	nanosleep(&ts, NULL);
	ASSERT_EQ(kill(pid, SIGTERM), 0);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 42);
}

/* Assemble @rel expecting failure; nothing may change: mountinfo, loop devices, our fds. */
static void expect_clean_failure(const char *rel, const char *want, void (*between)(void))
{
	struct rootasm_layout *l = load(rel);
	struct rootasm_error e = { 0 };
	char *mi, *lo, *fd_before, buf[8192];
	int fd;

	if (between)
		between();
	mi = mountinfo();
	lo = loops();
	fd_before = fds();
	fd = rootasm_assemble(NULL, l, &e);
	ASSERT_TRUE(fd < 0);
	rootasm_error_format(&e, buf, sizeof(buf));
	ASSERT_CONTAINS(buf, want);
	ASSERT_TRUE(strchr(buf, '\n') == NULL);
	ASSERT_STR(mountinfo(), mi);
	/*
	 * a loop device is released at its last close, which is not always ours:
	 * once, beside the other host suites, one was still bound right after the
	 * failure (a bounded wait; one that stays bound is a leak)
	 */
	for (int i = 0; i < 100 && strcmp(loops(), lo); i++)
		usleep(20000);
	ASSERT_STR(loops(), lo);
	ASSERT_STR(fds(), fd_before);
	rootasm_layout_free(l);
}

static void corrupt_image(void)
{
	/* the same file (inode), its contents gone: the fd the layout holds sees it */
	sh("truncate -s 0 %s/bad.sqfs && truncate -s 1M %s/bad.sqfs", fix, fix);
}

TEST(failure_corrupted_image_leaves_nothing)
{
	sh("cp %s/l2.sqfs %s/bad.sqfs", fix, fix);
	/* the image is emptied after the layout was loaded: the third layer fails to mount */
	layoutf("f1.yaml", "version: 1\nlayers:\n  - dir: l1\n  - image: l3.erofs\n  - image: bad.sqfs\nupper: { tmpfs: {} }\n");
	expect_clean_failure("f1.yaml", "bad.sqfs: neither squashfs nor erofs", corrupt_image);
}

TEST(loaded_layout_uses_the_objects_it_opened)
{
	struct rootasm_layout *l;
	struct rootasm_error e = { 0 };
	int fd;

	/* once loaded, the layout holds the image and the directories it names, by fd */
	sh("rm -rf %s/swap && mkdir -p %s/swap/dir/etc && echo original > %s/swap/dir/etc/marker && cp %s/l2.sqfs %s/swap/img.sqfs",
	   fix, fix, fix, fix, fix);
	layoutf("swap/s.yaml", "version: 1\nlayers:\n  - dir: dir\n  - image: img.sqfs\nupper: { tmpfs: {} }\n"
		"mounts:\n  - { bind: dir, target: /b }\n");
	l = load("swap/s.yaml");
	/* everything is swapped after the load: other files, a symlink to the host's /etc */
	sh("cd %s/swap && mv dir dir.old && ln -s /etc dir && mv img.sqfs img.old && cp %s/vol.sqfs img.sqfs", fix, fix);
	mkdir(path("ms"), 0755);
	fd = rootasm_assemble(NULL, l, &e);
	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(rootasm_attach(fd, path("ms"), &e), 0);
	close(fd);
	ASSERT_STR(slurp(path("ms/etc/marker")), "original\n");
	ASSERT_STR(slurp(path("ms/b/etc/marker")), "original\n");
	ASSERT_STR(slurp(path("ms/etc/motd")), "l2\n");		/* the original image */
	ASSERT_TRUE(access(path("ms/volfile"), F_OK) < 0);		/* not the new one */
	ASSERT_TRUE(access(path("ms/etc/shadow"), F_OK) < 0);	/* not the host's /etc */
	rootasm_layout_free(l);
}

TEST(failure_bad_option_leaves_nothing)
{
	/* the kernel refuses: a squashfs image declared as erofs; its message is in the error */
	layoutf("f2.yaml", "version: 1\nlayers:\n  - dir: l1\n  - image: l3.erofs\nupper: { tmpfs: {} }\n"
		"mounts:\n  - { tmpfs: /tmp }\n  - { image: vol.sqfs, target: /vol, type: erofs }\n");
	expect_clean_failure("f2.yaml", "f2.yaml:8:5: erofs ", NULL);
	/* an erofs image declared squashfs, as the second of three layers */
	layoutf("f2b.yaml", "version: 1\nlayers:\n  - image: l2.sqfs\n  - image: l3.erofs\n    type: squashfs\n"
		"  - dir: l1\nupper: { tmpfs: {} }\n");
	expect_clean_failure("f2b.yaml", "squashfs ", NULL);
}

TEST(failure_unreachable_target_leaves_nothing)
{
	/* /etc/motd is a file: nothing can be mounted below it; two volumes are already in */
	layoutf("f3.yaml", "version: 1\nlayers:\n  - dir: l1\n  - image: l2.sqfs\nupper: { tmpfs: {} }\n"
		"mounts:\n  - { tmpfs: /tmp }\n  - { image: vol.sqfs, target: /vol }\n  - { tmpfs: /etc/motd/x }\n");
	expect_clean_failure("f3.yaml", "f3.yaml:9:5: resolve target /etc/motd/x: Not a directory", NULL);
	/* a read-only rootfs cannot grow a mount point */
	layoutf("f3b.yaml", "version: 1\nlayers:\n  - dir: l1\n  - image: l2.sqfs\nmounts:\n  - { tmpfs: /nowhere }\n");
	expect_clean_failure("f3b.yaml", "Read-only file system", NULL);
}

static void drop_setuid(void)
{
	cap_t c = cap_get_proc();
	cap_value_t v = CAP_SETUID;

	cap_set_flag(c, CAP_EFFECTIVE, 1, &v, CAP_CLEAR);
	cap_set_flag(c, CAP_PERMITTED, 1, &v, CAP_CLEAR);
	if (cap_set_proc(c) < 0)
		FAILF("cap_set_proc");
	cap_free(c);
}

TEST(failure_invalid_credential_leaves_nothing)
{
	/* a mounter without CAP_SETUID cannot take on uid 1000 */
	layoutf("f4.yaml", "version: 1\nlayers:\n  - dir: l1\n  - image: l2.sqfs\nupper: { tmpfs: {} }\n"
		"overlay:\n  override_creds: { uid: 1000, gid: 0, capabilities: [CAP_SYS_ADMIN] }\n");
	expect_clean_failure("f4.yaml", "override_creds setresuid: Operation not permitted", drop_setuid);
}

TEST(probe_reports_every_feature)
{
	char *err, line[256];
	FILE *f;
	int n = 0;

	ASSERT_EQ(RUN(&err, "probe"), 0);
	f = popen("exec \"$ROOTASM_BIN\" probe --json", "r");
	ASSERT_TRUE(f != NULL);
	while (fgets(line, sizeof(line), f))
		;
	pclose(f);
	for (unsigned int i = 0; i < rootasm_feature_count(); i++)
		n += rootasm_feature_name(i) != NULL;
	ASSERT_EQ(n, rootasm_feature_count());
	ASSERT_TRUE(rootasm_feature_name(rootasm_feature_count()) == NULL);
	/*
	 * The assembler's mount features are present on every kernel these tests
	 * run on (>= 6.15, or the kernel/ series); the others are checked by the
	 * tests that use them. ROOTASM_EXPECT_ALL=1 (the host run) wants all.
	 */
	{
		bool all = getenv("ROOTASM_EXPECT_ALL") != NULL;
		char d[256];

		for (int i = 0; i <= ROOTASM_FEAT_OVL_OVERRIDE_CREDS; i++)
			if (rootasm_probe_feature(NULL, i, d, sizeof(d)) != 1)
				FAILF("%s absent: %s", rootasm_feature_name(i), d);
		for (unsigned int i = ROOTASM_FEAT_PIDFD_INFO_EXIT; all && i < rootasm_feature_count(); i++)
			if (rootasm_probe_feature(NULL, i, d, sizeof(d)) != 1)
				FAILF("%s absent: %s", rootasm_feature_name(i), d);
	}
}

static pid_t main_pid;

TEST(audit_sees_nothing_while_assembling_and_exactly_the_tree_at_attach)
{
	char *err;
	int rc;
	FILE *f;
	char cmd[8192], line[1024] = "";

	if (!have(ROOTASM_FEAT_FANOTIFY_MNT))
		SKIP("kernel lacks fanotify mount events");
	/* root + 5 volumes, one of them a nested layout (a tree of its own) */
	layoutf("a1.yaml",
		"version: 1\nlayers:\n  - dir: l1\n  - image: l2.sqfs\nupper: { tmpfs: {} }\n"
		"mounts:\n  - { tmpfs: /tmp }\n  - { bind: data, target: /data }\n  - { image: vol.sqfs, target: /vol }\n"
		"  - { layout: sub.yaml, target: /sub }\n  - { tmpfs: /data2 }\n");
	mkdir(path("ma1"), 0755);
	snprintf(cmd, sizeof(cmd), "%s assemble %s --attach %s --audit", bin, path("a1.yaml"), path("ma1"));
	f = popen(cmd, "r");
	ASSERT_TRUE(f != NULL);
	(void)!fgets(line, sizeof(line), f);
	rc = pclose(f);
	ASSERT_EQ(WEXITSTATUS(rc), 0);
	ASSERT_STR(line, "audit: 0 mount events while assembling, 6 attach events at the attach, "
			 "the attached tree has 6 mounts: ok\n");
	/* and mountinfo agrees */
	ASSERT_EQ(mounts_under(path("ma1")), 6);
	(void)err;
}

TEST(watch_reports_attach_move_detach)
{
	int p[2], status, n = 0;
	pid_t pid;
	char buf[8192] = "", *s;
	ssize_t r, len = 0;

	if (!have(ROOTASM_FEAT_FANOTIFY_MNT))
		SKIP("kernel lacks fanotify mount events");
	mkdir(path("w1"), 0755);
	mkdir(path("w2"), 0755);
	ASSERT_EQ(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		execl(bin, bin, "watch", "--count", "4", "--timeout", "20", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	/* wait for "watching ..." on stderr: the mark is in place */
	while (!strstr(buf, "watching") && (r = read(p[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		buf[len += r] = '\0';
	/* one operation at a time, each after the watcher has described the last */
#define NEXT_LINE(k) do {							\
		int _l = 0;							\
		for (char *_s = buf; (_s = strchr(_s, '\n')); _s++)		\
			_l++;							\
		if (_l >= (k))							\
			break;							\
		r = read(p[0], buf + len, sizeof(buf) - 1 - len);		\
		if (r <= 0)							\
			FAILF("watch ended early: %s", buf);			\
		buf[len += r] = '\0';						\
	} while (1)
	ASSERT_EQ(mount("none", path("w1"), "tmpfs", 0, NULL), 0);		/* attach */
	NEXT_LINE(2);
	ASSERT_EQ(mount(path("w1"), path("w2"), NULL, MS_MOVE, NULL), 0);	/* move: attach|detach */
	NEXT_LINE(3);
	ASSERT_EQ(mount(path("data"), path("w1"), NULL, MS_BIND, NULL), 0);	/* attach (bind) */
	NEXT_LINE(4);
	ASSERT_EQ(umount2(path("w2"), 0), 0);					/* detach */
	while ((r = read(p[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		buf[len += r] = '\0';
	waitpid(pid, &status, 0);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	s = strstr(buf, "\n") + 1;
	ASSERT_TRUE(!strncmp(s, "attach ", 7));
	ASSERT_CONTAINS(s, "fs_type=tmpfs");
	s = strchr(s, '\n') + 1;
	ASSERT_TRUE(!strncmp(s, "move ", 5));
	ASSERT_CONTAINS(s, "/w2 fs_type=tmpfs");
	s = strchr(s, '\n') + 1;
	ASSERT_TRUE(!strncmp(s, "attach ", 7));
	ASSERT_CONTAINS(s, "/w1 fs_type=");	/* the bind of data/: whatever fs holds the fixture */
	s = strchr(s, '\n') + 1;
	ASSERT_TRUE(!strncmp(s, "detach ", 7));
	ASSERT_CONTAINS(s, "(gone");
	for (s = buf; (s = strchr(s, '\n')); s++)
		n++;
	ASSERT_EQ(n, 5);
}

TEST(idmapped_layers_and_volumes)
{
	struct stat st;
	FILE *f;
	char line[4096], all[16384] = "";

	if (!have(ROOTASM_FEAT_STATMOUNT_IDMAP))
		SKIP("kernel lacks statmount idmaps");
	layoutf("i1.yaml",
		"version: 1\nlayers:\n  - dir: l1\n    idmap: { uids: [\"0:100000:65536\"], gids: [\"0:100000:65536\"] }\n"
		"  - image: l2.sqfs\n    idmap: { uids: [\"0:300000:10\"], gids: [\"0:300000:10\"] }\n"
		"upper: { tmpfs: {} }\n"
		"mounts:\n  - { bind: data, target: /data, idmap: { uids: [\"0:200000:1000\"], gids: [\"0:200000:1000\"] } }\n");
	assemble_at("i1.yaml", "mi1");
	ASSERT_EQ(stat(path("mi1/etc/keep"), &st), 0);		/* l1: on disk 0 */
	ASSERT_EQ(st.st_uid, 100000);
	ASSERT_EQ(stat(path("mi1/home/user"), &st), 0);		/* l1: on disk 1000 */
	ASSERT_EQ(st.st_uid, 101000);
	ASSERT_EQ(stat(path("mi1/newfile"), &st), 0);		/* l2 image */
	ASSERT_EQ(st.st_uid, 300000);
	ASSERT_EQ(stat(path("mi1/data/file"), &st), 0);
	ASSERT_EQ(st.st_uid, 200000);
	ASSERT_EQ(st.st_gid, 200000);
	/* check --live reads the mappings back from the kernel */
	snprintf(line, sizeof(line), "%s check --live %s", bin, path("mi1"));
	f = popen(line, "r");
	while (fgets(line, sizeof(line), f))
		strncat(all, line, sizeof(all) - strlen(all) - 1);
	ASSERT_EQ(pclose(f), 0);
	ASSERT_CONTAINS(all, "/mi1 fs_type=overlay");
	ASSERT_CONTAINS(all, "/mi1/data fs_type=");
	ASSERT_CONTAINS(all, "uidmap=0:200000:1000 gidmap=0:200000:1000");
}

TEST(idmapped_mount_of_an_idmapped_mount)
{
	struct stat st;
	char *err;

	if (!have(ROOTASM_FEAT_IDMAP_IDMAPPED))
		SKIP("kernel lacks idmapped mounts of idmapped mounts");
	/* first tree: /data idmapped 0 -> 200000 */
	layoutf("i2a.yaml", "version: 1\nlayers:\n  - dir: l1\nupper: { tmpfs: {} }\n"
		"mounts:\n  - { bind: data, target: /data, idmap: { uids: [\"0:200000:1000\"], gids: [\"0:200000:1000\"] } }\n");
	assemble_at("i2a.yaml", "mi2a");
	ASSERT_EQ(stat(path("mi2a/data/file"), &st), 0);
	ASSERT_EQ(st.st_uid, 200000);
	/* second tree binds that idmapped mount with another mapping: it replaces the first */
	layoutf("i2b.yaml", "version: 1\nlayers:\n  - dir: l1\nupper: { tmpfs: {} }\n"
		"mounts:\n  - { bind: mi2a/data, target: /d, idmap: { uids: [\"0:300000:1000\"], gids: [\"0:300000:1000\"] } }\n");
	mkdir(path("mi2b"), 0755);
	ASSERT_EQ(RUN(&err, "assemble", path("i2b.yaml"), "--attach", path("mi2b")), 0);
	ASSERT_EQ(stat(path("mi2b/d/file"), &st), 0);
	ASSERT_EQ(st.st_uid, 300000);
	ASSERT_TRUE(has_opt(mount_at(path("mi2b/d")), "idmapped"));
}

TEST(exec_reports_status_from_pidfd_info)
{
	char *err;

	layoutf("r1.yaml", "version: 1\nlayers:\n  - dir: l1\nupper: { tmpfs: {} }\n");
	ASSERT_EQ(RUN(&err, "exec", "--report", path("r1.yaml"), "--", "/bin/sh", "-c", "exit 9"), 9);
	ASSERT_CONTAINS(err, "exited with status 9");
	if (have(ROOTASM_FEAT_PIDFD_INFO_EXIT))
		ASSERT_CONTAINS(err, "through PIDFD_INFO_EXIT");
	else
		ASSERT_CONTAINS(err, "from waitid");
	/* the thread-group leader exits before its other thread: the status is the group's */
	if (access(path("l1/bin/tg_exit"), X_OK) < 0)
		FAILF("tg_exit helper missing (pass it as the second argument)");
	ASSERT_EQ(RUN(&err, "exec", "--report", path("r1.yaml"), "--", "/bin/tg_exit", "3"), 3);
	ASSERT_CONTAINS(err, "exited with status 3");
}

static int our_children(void)
{
	pid_t pids[16];

	return harness_children(pids, 16);
}

TEST(exec_sandbox_is_set_up_while_the_tree_is_assembled)
{
	struct rootasm_exec_result res;
	struct rootasm_exec_pending *p = NULL;
	struct rootasm_layout *l;
	struct rootasm_error e = { 0 };
	char *const argv[] = { "/bin/sh", "-c", "[ \"$(cat /proc/sys/kernel/hostname)\" = early ] && [ \"$HOME\" = /home/u ] && "
				     "grep -q '^Uid:.4242' /proc/self/status && exit 7", NULL };
	int unused_master = -1;
	/* tty_master set without ROOTASM_EXEC_TTY: ignored, as rootasm_exec_start() always did */
	struct rootasm_exec_opts o = { .size = sizeof(o), .hostname = "early", .tty_master = &unused_master };
	siginfo_t si = { 0 };
	char *err, *t;
	int fd, pidfd;

	sh("mkdir -p %s/ovu/etc && echo 'u:x:4242:4242::/home/u:/bin/sh' > %s/ovu/etc/passwd && "
	   "echo 'u:x:4242:' > %s/ovu/etc/group", fix, fix, fix);
	layoutf("ov.yaml", "version: 1\nlayers:\n  - dir: l1\n  - dir: ovu\nupper: { tmpfs: {} }\nexec:\n  user: u\n");
	l = load("ov.yaml");
	/* the init is started, in its namespaces, before there is a tree; it waits for one */
	ASSERT_EQ(rootasm_exec_prepare(NULL, l, argv, &o, &p, &e), 0);
	ASSERT_TRUE(p != NULL);
	ASSERT_EQ(our_children(), 1);
	fd = rootasm_assemble(NULL, l, &e);
	rootasm_layout_free(l);	/* the pending container keeps nothing of it */
	ASSERT_TRUE(fd >= 0);
	/* exec.user is resolved in the tree at the join: uid, HOME from its /etc/passwd */
	pidfd = rootasm_exec_join(p, fd, &e);
	close(fd);
	ASSERT_TRUE(pidfd >= 0);
	ASSERT_EQ(rootasm_exec_wait(pidfd, &res, &e), 0);
	close(pidfd);
	ASSERT_EQ(res.status, 7);
	ASSERT_EQ(unused_master, -1);
	ASSERT_EQ(our_children(), 0);

	/* given up before its tree: the init is killed and reaped, nothing is left */
	l = load("ov.yaml");
	ASSERT_EQ(rootasm_exec_prepare(NULL, l, argv, &o, &p, &e), 0);
	rootasm_layout_free(l);
	ASSERT_EQ(our_children(), 1);
	rootasm_exec_pending_free(p);
	ASSERT_EQ(our_children(), 0);
	ASSERT_ERRNO(waitid(P_ALL, 0, &si, WEXITED | WNOHANG | __WALL), ECHILD);

	/* a tree that is not a detached mount: the init says so at its step, and is reaped */
	l = load("ov.yaml");
	ASSERT_EQ(rootasm_exec_prepare(NULL, l, argv, &o, &p, &e), 0);
	rootasm_layout_free(l);
	fd = open(path("ovu"), O_PATH | O_DIRECTORY | O_CLOEXEC);	/* (its /etc/passwd names u) */
	ASSERT_TRUE(rootasm_exec_join(p, fd, &e) < 0);
	close(fd);
	ASSERT_CONTAINS(e.op, "attach the tree over /");
	ASSERT_EQ(our_children(), 0);

	/* the CLI overlaps them: the init is started before the first layer is mounted */
	ASSERT_EQ(RUN(&err, "--debug", "exec", path("ov.yaml"), "--", "/bin/sh", "-c", "exit 0"), 0);
	t = strstr(err, "exec: init pid");
	ASSERT_TRUE(t != NULL);
	ASSERT_TRUE(strstr(err, "overlay: 2 layers") > t);
}

/* ---------------------------------------------------------------- the exec sandbox */


static void need_escape(void)
{
	if (access(path("l1/bin/escape"), X_OK) < 0)
		FAILF("escape helper missing (pass it as the third argument)");
}

TEST(exec_sandbox_closes_inherited_fds)
{
	char *out, *err;
	int fd;

	need_escape();
	layoutf("x1.yaml", "version: 1\nlayers:\n  - dir: l1\nupper: { tmpfs: {} }\n");
	/* fd 7 on the host's / (not close-on-exec), as runc's CVE-2024-21626 had it */
	fd = open("/", O_PATH | O_DIRECTORY);
	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(dup2(fd, 7), 7);
	ASSERT_EQ(RUN_OUT(&out, &err, 7, "exec", path("x1.yaml"), "--", "/bin/escape", "fd", "7", "etc/hostname"), 0);
	ASSERT_CONTAINS(out, "denied fd: EBADF");
	/* named with --preserve-fds, it does get through: the option is what decides */
	ASSERT_EQ(dup2(fd, 3), 3);
	for (int i = 4; i < 7; i++)
		ASSERT_EQ(dup2(fd, i), i);
	ASSERT_EQ(RUN_OUT(&out, &err, -1, "exec", "--preserve-fds", "5", path("x1.yaml"), "--", "/bin/escape", "fd", "7",
			  "etc/hostname"), 0);
	ASSERT_CONTAINS(out, "ESCAPED fd");
	/* a gap in the preserved range is refused: rootasm's own fds could take those numbers */
	close(5);
	ASSERT_EQ(RUN_OUT(&out, &err, -1, "exec", "--preserve-fds", "5", path("x1.yaml"), "--", "/bin/true"), 125);
	ASSERT_CONTAINS(err, "fd 5 is not open");
}

/*
 * runc's CVE-2024-21626 by the working directory: the init still holds the
 * caller's fds and the layout's when it enters it, and /proc/self/fd/N (or a
 * symlink of the tree to it) would be a directory of the host: the command's
 * cwd, and its ".." the host's /. Resolved in the tree, through no magic link.
 */
TEST(exec_workdir_is_in_the_tree)
{
	char *out, *err;
	int fd, rc;

	need_escape();
	/* a caller's fd on the host's / (fd 7), and whatever fds the init holds of its own */
	fd = open("/", O_PATH | O_DIRECTORY);
	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(dup2(fd, 7), 7);
	close(fd);
	for (int n = 3; n < 16; n++) {
		layoutf("xw.yaml", "version: 1\nlayers:\n  - dir: l1\nupper: { tmpfs: {} }\nexec: { workdir: /proc/self/fd/%d }\n",
			n);
		rc = RUN_OUT(&out, &err, 7, "exec", path("xw.yaml"), "--", "/bin/sh", "-c", "ls -d ../etc/hostname");
		if (rc == 0 || !strstr(err, "change to the working directory"))
			FAILF("workdir /proc/self/fd/%d: exit %d, out: %s, err: %s", n, rc, out, err);
	}
	/* the same through a symlink of the tree's */
	sh("rm -rf %s/wdl && mkdir -p %s/wdl && ln -s /proc/self/fd/7 %s/wdl/app && ln -s /etc %s/wdl/etclink", fix, fix,
	   fix, fix);
	layoutf("xw2.yaml", "version: 1\nlayers:\n  - dir: l1\n  - dir: wdl\nupper: { tmpfs: {} }\nexec: { workdir: /app }\n");
	rc = RUN_OUT(&out, &err, 7, "exec", path("xw2.yaml"), "--", "/bin/sh", "-c", "ls -d ../etc/hostname");
	if (rc == 0 || !strstr(err, "change to the working directory"))
		FAILF("workdir /app -> /proc/self/fd/7: exit %d, out: %s, err: %s", rc, out, err);
	/* a symlink of the tree to an absolute path: resolved in the tree, as before */
	layoutf("xw3.yaml", "version: 1\nlayers:\n  - dir: l1\n  - dir: wdl\nupper: { tmpfs: {} }\n"
		"exec: { workdir: /etclink }\n");
	ASSERT_EQ(RUN_OUT(&out, &err, 7, "exec", path("xw3.yaml"), "--", "/bin/sh", "-c", "pwd -P"), 0);
	ASSERT_STR(out, "/etc\n");
	close(7);
	/*
	 * The same for what else the init looks up before the command runs: a
	 * tree whose /dev is a symlink to /proc/self/fd/7, the caller's fd 7 the
	 * host's /dev. The init judged the host's /dev/null usable through it
	 * and made no /dev of its own; now the caller's fds are closed first.
	 */
	fd = open("/dev", O_PATH | O_DIRECTORY);
	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(dup2(fd, 7), 7);
	close(fd);
	sh("rm -rf %s/wdev && mkdir -p %s/wdev && ln -s /proc/self/fd/7 %s/wdev/dev", fix, fix, fix);
	layoutf("xw4.yaml", "version: 1\nlayers:\n  - dir: l1\n  - dir: wdev\nupper: { tmpfs: {} }\n");
	rc = RUN_OUT(&out, &err, 7, "exec", path("xw4.yaml"), "--", "/bin/sh", "-c", "ls /dev/ | head -3");
	if (rc == 0 || !strstr(err, "/dev"))
		FAILF("a /dev of the tree's that leads to the caller's fd: exit %d, out: %s, err: %s", rc, out, err);
	close(7);
}

/*
 * An image without a /proc directory (FROM scratch): the command gets /proc
 * all the same, its mount point made in the tree's upper (crun makes it);
 * in a tree that cannot have one (read-only, no upper), exec says so.
 */
TEST(exec_makes_proc_where_the_image_has_none)
{
	char *out, *err;

	sh("rm -rf %s/noproc && cp -a %s/l1 %s/noproc && rmdir %s/noproc/proc", fix, fix, fix, fix);
	layoutf("xnp.yaml", "version: 1\nlayers:\n  - dir: noproc\nupper: { tmpfs: {} }\n");
	ASSERT_EQ(RUN_OUT(&out, &err, -1, "exec", path("xnp.yaml"), "--", "/bin/sh", "-c",
			  "cat /proc/self/status | grep -c NoNewPrivs; test -r /proc/self/fd/0 && echo fd"), 0);
	ASSERT_STR(out, "1\nfd\n");
	layoutf("xnp2.yaml", "version: 1\nlayers:\n  - dir: noproc\n");
	ASSERT_EQ(RUN_OUT(&out, &err, -1, "exec", path("xnp2.yaml"), "--", "/bin/true"), 125);
	ASSERT_CONTAINS(err, "mount /proc");
	/* an image whose /proc is a symlink (here to /etc): nothing mounted through it, and said so */
	sh("rm -rf %s/procln && mkdir -p %s/procln && ln -s /etc %s/procln/proc", fix, fix, fix);
	layoutf("xnp3.yaml", "version: 1\nlayers:\n  - dir: noproc\n  - dir: procln\nupper: { tmpfs: {} }\n");
	ASSERT_EQ(RUN_OUT(&out, &err, -1, "exec", path("xnp3.yaml"), "--", "/bin/true"), 125);
	ASSERT_CONTAINS(err, "mount /proc: Not a directory");
}

TEST(exec_sandbox_capabilities_and_namespaces)
{
	char *out, *err, host[512] = "", mine[64];

	need_escape();
	layoutf("x2.yaml", "version: 1\nlayers:\n  - dir: l1\nupper: { tmpfs: {} }\n");
	ASSERT_EQ(RUN_OUT(&out, &err, -1, "exec", path("x2.yaml"), "--", "/bin/escape", "status"), 0);
	/* the OCI default set: CAP_AUDIT_WRITE, CAP_KILL, CAP_NET_BIND_SERVICE; bounding the same */
	ASSERT_CONTAINS(out, "CapEff:\t0000000020000420");
	ASSERT_CONTAINS(out, "CapBnd:\t0000000020000420");
	ASSERT_CONTAINS(out, "NoNewPrivs:\t1");
	ASSERT_CONTAINS(out, "Seccomp:\t2");
	/* the layout's credential instead */
	layoutf("x2b.yaml", "version: 1\nlayers:\n  - dir: l1\nupper: { tmpfs: {} }\n"
		"exec: { uid: 1000, gid: 1000, groups: [5], capabilities: [CAP_CHOWN] }\n");
	ASSERT_EQ(RUN_OUT(&out, &err, -1, "exec", path("x2b.yaml"), "--", "/bin/escape", "status"), 0);
	ASSERT_CONTAINS(out, "CapEff:\t0000000000000001");
	ASSERT_CONTAINS(out, "CapAmb:\t0000000000000001");
	ASSERT_EQ(RUN_OUT(&out, &err, -1, "exec", path("x2b.yaml"), "--", "/bin/sh", "-c",
			  "cat /proc/self/status | grep -E '^(Uid|Gid|Groups)'"), 0);
	ASSERT_CONTAINS(out, "Uid:\t1000\t1000\t1000\t1000");
	ASSERT_CONTAINS(out, "Gid:\t1000\t1000\t1000\t1000");
	ASSERT_CONTAINS(out, "Groups:\t5");
	/*
	 * new pid, mount, ipc, uts, cgroup and network namespaces (the host's
	 * network only when asked for: there the command, uid 0 of the host, would
	 * be root to the host's abstract unix sockets)
	 */
	for (const char *const *ns = (const char *const[]){ "pid", "mnt", "ipc", "uts", "cgroup", "net", NULL }; *ns; ns++) {
		char p[64], l[64];
		ssize_t n;

		snprintf(p, sizeof(p), "/proc/self/ns/%s", *ns);
		n = readlink(p, l, sizeof(l) - 1);
		ASSERT_TRUE(n > 0);
		l[n] = '\0';
		snprintf(host + strlen(host), sizeof(host) - strlen(host), "%s\n", l);
	}
	ASSERT_EQ(RUN_OUT(&out, &err, -1, "exec", path("x2.yaml"), "--", "/bin/sh", "-c",
			  "for n in pid mnt ipc uts cgroup net; do readlink /proc/self/ns/$n; done; cat /proc/sys/kernel/hostname; "
			  "busybox ip link show lo"), 0);
	{
		char copy[512];

		snprintf(copy, sizeof(copy), "%s", host);
		for (char *h = strtok(copy, "\n"); h; h = strtok(NULL, "\n")) {
			snprintf(mine, sizeof(mine), "%s\n", h);
			if (strstr(out, mine))
				FAILF("namespace %s is the host's", h);
		}
	}
	ASSERT_CONTAINS(out, "rootasm\n");
	ASSERT_CONTAINS(out, "LOOPBACK,UP");
	snprintf(mine, sizeof(mine), "%.*s", (int)strcspn(strstr(host, "net:"), "\n") + 1, strstr(host, "net:"));
	/* the host's, asked for by the option or the layout; the option wins over the layout */
	ASSERT_EQ(RUN_OUT(&out, &err, -1, "exec", "--network", "host", "--hostname", "box", path("x2.yaml"), "--",
			  "/bin/sh", "-c", "readlink /proc/self/ns/net; cat /proc/sys/kernel/hostname"), 0);
	ASSERT_CONTAINS(out, mine);
	ASSERT_CONTAINS(out, "box\n");
	layoutf("x2n.yaml", "version: 1\nlayers:\n  - dir: l1\nupper: { tmpfs: {} }\nexec: { network: host }\n");
	ASSERT_EQ(RUN_OUT(&out, &err, -1, "exec", path("x2n.yaml"), "--", "/bin/sh", "-c", "readlink /proc/self/ns/net"), 0);
	ASSERT_CONTAINS(out, mine);
	ASSERT_EQ(RUN_OUT(&out, &err, -1, "exec", "--network", "none", path("x2n.yaml"), "--", "/bin/sh", "-c",
			  "readlink /proc/self/ns/net"), 0);
	if (strstr(out, mine))
		FAILF("--network none over the layout's network: host: the host's network namespace");
	/* a minimal /dev when the tree has none, with working nodes */
	ASSERT_EQ(RUN_OUT(&out, &err, -1, "exec", path("x2.yaml"), "--", "/bin/sh", "-c",
			  "ls /dev; echo x > /dev/null && head -c 4 /dev/zero | wc -c; test -c /dev/urandom && echo URANDOM"), 0);
	ASSERT_CONTAINS(out, "pts\n");
	ASSERT_CONTAINS(out, "4\n");
	ASSERT_CONTAINS(out, "URANDOM");
}

/*
 * The OCI masked paths the container's /proc has are covered (a /dev/null on
 * files, an empty read-only tmpfs on directories) and the read-only paths are
 * read-only; a masked path that /proc lacks gets nothing (its mask is not made).
 */
TEST(exec_proc_masks_cover_what_proc_has)
{
	static const char *const files[] = { "kcore", "keys", "latency_stats", "timer_list", "timer_stats", "sched_debug" };
	static const char *const dirs[] = { "acpi", "asound", "scsi" };
	char *out, *err, needle[64];
	struct stat st;
	size_t present = 0;

	layoutf("xm.yaml", "version: 1\nlayers:\n  - dir: l1\nupper: { tmpfs: {} }\n");
	ASSERT_EQ(RUN_OUT(&out, &err, -1, "exec", path("xm.yaml"), "--", "/bin/sh", "-c",
			  "cat /proc/self/mountinfo; for f in kcore keys timer_list; do test -e /proc/$f && "
			  "{ head -c 16 /proc/$f | wc -c; }; done; touch /proc/acpi/x 2>&1; echo 1 > /proc/sys/kernel/hostname 2>&1; true"), 0);
	/* the host's /proc and the container's show the same kernel's entries */
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(needle, sizeof(needle), " /proc/%s ", files[i]);
		if (stat(strcat(strcpy((char[64]){ 0 }, "/proc/"), files[i]), &st) == 0) {
			present++;
			ASSERT_CONTAINS(out, needle);
		} else if (strstr(out, needle)) {
			FAILF("a mask on /proc/%s, which /proc does not have", files[i]);
		}
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(needle, sizeof(needle), " /proc/%s ro,", dirs[i]);
		if (stat(strcat(strcpy((char[64]){ 0 }, "/proc/"), dirs[i]), &st) == 0 && S_ISDIR(st.st_mode)) {
			present++;
			ASSERT_CONTAINS(out, needle);
		} else if (strstr(out, needle)) {
			FAILF("a mask on /proc/%s, which /proc does not have", dirs[i]);
		}
	}
	ASSERT_TRUE(present > 0);
	ASSERT_CONTAINS(out, " /proc/sys ro,");
	/* a masked file reads as empty; nothing is written under a masked directory or /proc/sys */
	if (stat("/proc/keys", &st) == 0 || stat("/proc/timer_list", &st) == 0)
		ASSERT_TRUE(strstr(out, "\n0\n") != NULL);
	ASSERT_TRUE(strstr(out, "\n16\n") == NULL);
	ASSERT_TRUE(stat("/proc/acpi", &st) < 0 || strstr(out, "Read-only file system") != NULL);
}

/* A mask that cannot be made (no /dev/null to clone) fails the exec: the command never runs unmasked. */
TEST(exec_proc_mask_that_cannot_be_made_fails_closed)
{
	char cmd[PATH_MAX * 2], line[512] = "";
	FILE *f;
	int rc;

	layoutf("xn.yaml", "version: 1\nlayers:\n  - dir: l1\nupper: { tmpfs: {} }\n");
	snprintf(cmd, sizeof(cmd), "unshare -m --propagation private sh -c 'mount -t tmpfs none /dev && "
		 "exec %s exec %s -- /bin/sh -c \"echo RAN\"' 2>&1", bin, path("xn.yaml"));
	f = popen(cmd, "r");
	ASSERT_TRUE(f != NULL);
	(void)!fgets(line, sizeof(line), f);
	rc = pclose(f);
	ASSERT_EQ(WEXITSTATUS(rc), 125);
	ASSERT_CONTAINS(line, "rootasm: exec mask /proc paths: No such file or directory");
	ASSERT_TRUE(strstr(line, "RAN") == NULL);
	ASSERT_EQ(mounts_under(fix), 0);
}

TEST(exec_sandbox_denies_escapes)
{
	char *out, *err, cmd[4200];
	bool i386, x32;
	FILE *f;

	need_escape();
	/* which ABIs this kernel runs, asked outside the sandbox: each must be denied inside */
	snprintf(cmd, sizeof(cmd), "%s abi", path("l1/bin/escape"));
	f = popen(cmd, "r");
	ASSERT_TRUE(f && fread(cmd, 1, sizeof(cmd) - 1, f) > 0);
	pclose(f);
	i386 = strstr(cmd, "i386 yes") != NULL;
	x32 = strstr(cmd, "x32 yes") != NULL;
	fprintf(stderr, "  this kernel: i386 ABI %s, x32 ABI %s\n", i386 ? "yes" : "no", x32 ? "yes" : "no");
	layoutf("x3.yaml", "version: 1\nlayers:\n  - dir: l1\nupper: { tmpfs: {} }\n"
		"mounts:\n  - { bind: data, target: /data }\n  - { tmpfs: /tmp }\n");
	ASSERT_EQ(RUN_OUT(&out, &err, -1, "exec", path("x3.yaml"), "--", "/bin/sh", "-c",
			  "escape handle /data/file; escape ptrace; escape sysctl; escape mount; escape userns"), 0);
	/* not one attempt worked, on any ABI */
	if (strstr(out, "ESCAPED"))
		FAILF("an escape worked:\n%s", out);
	ASSERT_CONTAINS(out, "denied open_by_handle_at");
	ASSERT_CONTAINS(out, "denied ptrace pid 1: EPERM");
	/* /proc/sys is read-only inside; core_pattern exists only with CONFIG_COREDUMP */
	ASSERT_CONTAINS(out, access("/proc/sys/kernel/core_pattern", F_OK) == 0 ? "denied write core_pattern: EROFS"
									     : "denied write core_pattern: ENOENT");
	ASSERT_CONTAINS(out, "denied write drop_caches: EROFS");
	ASSERT_CONTAINS(out, "denied mount x86_64: EPERM");
	ASSERT_CONTAINS(out, "denied fsopen x86_64: EPERM");
	if (i386) {
		ASSERT_CONTAINS(out, "denied mount i386: EPERM");
		ASSERT_CONTAINS(out, "denied fsopen i386: EPERM");
		ASSERT_CONTAINS(out, "denied open_tree_attr i386: EPERM");
	} else {
		ASSERT_CONTAINS(out, "denied mount i386: NOABI");
	}
	ASSERT_CONTAINS(out, "denied open_tree_attr x86_64: EPERM");
	/* the profile answers x32 numbers before the kernel looks for an x32 table */
	ASSERT_CONTAINS(out, "denied mount x32: EPERM");
	ASSERT_CONTAINS(out, "denied unshare CLONE_NEWUSER: EPERM");
	ASSERT_CONTAINS(out, "denied clone CLONE_NEWUSER: EPERM");
	ASSERT_CONTAINS(out, "denied clone3 CLONE_NEWUSER: ENOSYS");
	/* --privileged opts out: the same mount works */
	ASSERT_EQ(RUN_OUT(&out, &err, -1, "exec", "--privileged", path("x3.yaml"), "--", "/bin/escape", "mount"), 0);
	ASSERT_CONTAINS(out, "ESCAPED mount x86_64");
}

/* The pid of the process whose command line has @marker, or 0. */
static pid_t find_proc(const char *marker)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t found = 0;

	while (d && (de = readdir(d)) && !found) {
		char buf[512];
		ssize_t n = harness_proc_read(de->d_name, "cmdline", buf, sizeof(buf));

		for (ssize_t i = 0; i < n; i++)
			if (!buf[i])
				buf[i] = ' ';
		if (n > 0 && strstr(buf, marker) && !strstr(buf, "rootasm"))
			found = atoi(de->d_name);
	}
	if (d)
		closedir(d);
	return found;
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

TEST(exec_container_dies_with_rootasm)
{
	static const int sigs[] = { SIGKILL, SIGALRM, SIGPIPE };

	layoutf("x4.yaml", "version: 1\nlayers:\n  - dir: l1\nupper: { tmpfs: {} }\n");
	for (size_t i = 0; i < ARRAY_SIZE_(sigs); i++) {
		char marker[32];
		struct timespec t0;
		pid_t pid, inner = 0;
		int status;

		snprintf(marker, sizeof(marker), "4242%zu", i);
		pid = fork();
		if (pid == 0) {
			int devnull = open("/dev/null", O_WRONLY);

			dup2(devnull, 2);
			execl(bin, bin, "exec", path("x4.yaml"), "--", "/bin/sleep", marker, (char *)NULL);
			_exit(127);
		}
		clock_gettime(CLOCK_MONOTONIC, &t0);
		while (!(inner = find_proc(marker)) && ms_since(&t0) < 10000)
			usleep(10000);
		ASSERT_TRUE(inner > 0);
		ASSERT_EQ(kill(pid, sigs[i]), 0);
		ASSERT_EQ(waitpid(pid, &status, 0), pid);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		while (find_proc(marker) && ms_since(&t0) < 5000)
			usleep(5000);
		if ((inner = find_proc(marker))) {
			/* do not leave it behind (it would hold our output open for hours) */
			kill(inner, SIGKILL);
			FAILF("the container outlived rootasm killed by %s", strsignal(sigs[i]));
		}
		if (ms_since(&t0) > 1000)
			FAILF("the container took %ld ms to go after %s", ms_since(&t0), strsignal(sigs[i]));
	}
}

/* Run @argv with @input on its stdin (a pipe, closed after @input): as run_full() otherwise. */
static int run_in(const char *input, char **out, char **err, int secs, const char *const *argv)
{
	int p[2], saved, r;

	if (pipe2(p, O_CLOEXEC) < 0)
		FAILF("pipe");
	if (write(p[1], input, strlen(input)) != (ssize_t)strlen(input))
		FAILF("write stdin");
	close(p[1]);
	saved = fcntl(0, F_DUPFD_CLOEXEC, 10);
	if (saved < 0 || dup2(p[0], 0) < 0)
		FAILF("dup2 stdin");
	close(p[0]);
	r = run_full(out, err, -1, secs, argv);
	dup2(saved, 0);
	close(saved);
	return r;
}

#define RUN_IN(input, out, err, ...) run_in(input, out, err, 20, (const char *const[]){ bin, __VA_ARGS__, NULL })

/*
 * `rootasm exec LAYOUT -- /bin/escape WHAT` with stdio a raw pty of ours, in a
 * session of its own whose controlling terminal the pty is (@ctty) or is not
 * (nobody's then). Its output up to @last into @out; *@queued: the bytes
 * pushed into the pty's input meanwhile. The exit status (waitpid's).
 */
static int escape_on_pty(const char *layout, const char *what, bool ctty, const char *last, char *out, size_t size,
			 int *queued)
{
	struct termios t;
	struct timespec t0;
	int master, slave, status;
	size_t ol = 0;
	pid_t pid;

	out[0] = '\0';
	master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	ASSERT_TRUE(master >= 0);
	ASSERT_EQ(unlockpt(master), 0);
	slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	ASSERT_TRUE(slave >= 0);
	/* raw: a pushed byte is input at once (no line to wait for), and is not echoed */
	ASSERT_EQ(tcgetattr(slave, &t), 0);
	cfmakeraw(&t);
	ASSERT_EQ(tcsetattr(slave, TCSANOW, &t), 0);
	pid = fork();
	if (pid == 0) {
		if (setsid() < 0 || (ctty && ioctl(slave, TIOCSCTTY, 0) < 0))
			_exit(126);
		for (int i = 0; i < 3; i++)
			dup2(slave, i);
		execl(bin, bin, "exec", path(layout), "--", "/bin/escape", what, (char *)NULL);
		_exit(127);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	/* what the command printed, through the pty */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!strstr(out, last) && ol < size - 1 && ms_since(&t0) < 5000) {
		struct pollfd pf = { master, POLLIN, 0 };
		ssize_t n;

		if (poll(&pf, 1, 100) <= 0)
			continue;
		n = read(master, out + ol, size - 1 - ol);
		if (n <= 0)
			break;
		ol += n;
		out[ol] = '\0';
	}
	fprintf(stderr, "  %s", out);
	ASSERT_EQ(ioctl(slave, FIONREAD, queued), 0);
	close(slave);
	close(master);
	return status;
}

/*
 * bubblewrap's CVE-2017-5226: a command that shares the caller's controlling
 * terminal pushes input into the caller's shell with TIOCSTI. rootasm exec runs
 * here with a pty of ours as its controlling terminal and stdio.
 */
TEST(exec_command_cannot_reach_the_callers_terminal)
{
	char out[4096], *legacy;
	int status, queued = -1;

	need_escape();
	layoutf("x5.yaml", "version: 1\nlayers:\n  - dir: l1\nupper: { tmpfs: {} }\n");
	/* (its last line is tty_nr) */
	status = escape_on_pty("x5.yaml", "tty", true, "tty_nr", out, sizeof(out), &queued);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* nothing was pushed into our terminal's input */
	ASSERT_EQ(queued, 0);
	/* the command has no controlling terminal: not ours, and /dev/tty is none */
	ASSERT_CONTAINS(out, "tty_nr 0\n");
	ASSERT_CONTAINS(out, "denied open /dev/tty: ENXIO");
	/* where the kernel still takes TIOCSTI from a process without CAP_SYS_ADMIN, it is refused */
	legacy = slurp("/proc/sys/dev/tty/legacy_tiocsti");
	if (legacy && atoi(legacy) == 1)
		ASSERT_CONTAINS(out, "denied tiocsti fd 0: EPERM");
	else
		fprintf(stderr, "  (dev.tty.legacy_tiocsti is off: TIOCSTI is refused to every process without CAP_SYS_ADMIN)\n");
}

/*
 * A tty the caller hands over that is no session's controlling terminal (a
 * runner's pty, subprocess with start_new_session): the command could make it
 * its own (setsid, TIOCSCTTY) and push input into it, which the caller's next
 * reader (a shell) runs. TIOCSTI is in the profile, whatever cmd's upper bits.
 */
TEST(exec_command_cannot_push_input_into_a_tty_it_takes)
{
	char out[4096], *legacy;
	int status, queued = -1;

	need_escape();
	legacy = slurp("/proc/sys/dev/tty/legacy_tiocsti");
	if (!legacy || atoi(legacy) != 1) {
		fprintf(stderr, "  (dev.tty.legacy_tiocsti is off: TIOCSTI is refused to every process without "
			"CAP_SYS_ADMIN; nothing here to show)\n");
		return;
	}
	layoutf("x5b.yaml", "version: 1\nlayers:\n  - dir: l1\nupper: { tmpfs: {} }\n");
	status = escape_on_pty("x5b.yaml", "tty-steal", false, "upper bits", out, sizeof(out), &queued);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT_CONTAINS(out, "denied tiocsti stolen: EPERM");
	ASSERT_CONTAINS(out, "denied tiocsti stolen, upper bits: EPERM");
	/* nothing was pushed into the pty's input */
	ASSERT_EQ(queued, 0);
}

TEST(exec_tty_gives_the_command_a_terminal_of_its_own)
{
	char *out, *err;

	layoutf("x6.yaml", "version: 1\nlayers:\n  - dir: l1\nupper: { tmpfs: {} }\n");
	/* stdin and stdout are pipes here: the command's are a pty, its controlling terminal */
	ASSERT_EQ(RUN_IN("", &out, &err, "exec", "--tty", path("x6.yaml"), "--", "/bin/sh", "-c",
			 "busybox tty; test -t 0 && test -t 1 && test -t 2 && echo isatty; echo ctty > /dev/tty; exit 3"), 3);
	ASSERT_CONTAINS(out, "/dev/pts/");
	ASSERT_CONTAINS(out, "isatty");
	ASSERT_CONTAINS(out, "ctty");
	/* our stdin reaches it; the end of it is the terminal's end-of-file */
	ASSERT_EQ(RUN_IN("hello\n", &out, &err, "exec", "--tty", path("x6.yaml"), "--", "/bin/sh", "-c",
			 "read x && echo got:$x"), 0);
	ASSERT_CONTAINS(out, "got:hello");
	ASSERT_EQ(RUN_IN("a\nb", &out, &err, "exec", "--tty", path("x6.yaml"), "--", "/bin/cat"), 0);
	/* the command and its exit status, as without --tty */
	ASSERT_EQ(RUN_IN("", &out, &err, "exec", "--tty", path("x6.yaml"), "--", "/nonexistent"), 127);
	ASSERT_CONTAINS(out, "/nonexistent");
	ASSERT_EQ(RUN_IN("", &out, &err, "exec", "--tty", path("x6.yaml"), "--", "/bin/sh", "-c", "kill -9 $$"), 137);
	/* without --tty the command has none */
	ASSERT_EQ(RUN_IN("", &out, &err, "exec", path("x6.yaml"), "--", "/bin/sh", "-c", "test -t 0 || echo notatty"), 0);
	ASSERT_CONTAINS(out, "notatty");
}

/* A device node in a layer (an imported image keeps them) opens no host device. */
TEST(exec_tree_is_nodev)
{
	char node[64], *out, *err;
	struct stat st;
	int ctl, n;

	need_escape();
	/* a block device of the host: a free loop device (it opens even unbound) */
	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	ASSERT_TRUE(ctl >= 0);
	n = ioctl(ctl, LOOP_CTL_GET_FREE);
	close(ctl);
	ASSERT_TRUE(n >= 0);
	snprintf(node, sizeof(node), "/dev/loop%d", n);
	ASSERT_EQ(stat(node, &st), 0);
	ASSERT_TRUE(S_ISBLK(st.st_mode));
	sh("mkdir -p %s/lnodev", fix);
	ASSERT_EQ(mknod(path("lnodev/blk"), S_IFBLK | 0600, st.st_rdev), 0);
	layoutf("x7.yaml", "version: 1\nlayers:\n  - dir: l1\n  - dir: lnodev\nupper: { tmpfs: {} }\n");
	ASSERT_EQ(RUN_OUT(&out, &err, -1, "exec", path("x7.yaml"), "--", "/bin/escape", "fd", "-100", "/blk"), 0);
	ASSERT_CONTAINS(out, "denied fd: EACCES");
	/* rootasm's own /dev still works */
	ASSERT_EQ(RUN_OUT(&out, &err, -1, "exec", path("x7.yaml"), "--", "/bin/sh", "-c",
			  "echo x > /dev/null && head -c 3 /dev/zero | wc -c"), 0);
	ASSERT_CONTAINS(out, "3\n");
	/* --privileged turns it off: the same node opens the host's device */
	ASSERT_EQ(RUN_OUT(&out, &err, -1, "exec", "--privileged", path("x7.yaml"), "--", "/bin/escape", "fd", "-100",
			  "/blk"), 0);
	ASSERT_CONTAINS(out, "ESCAPED fd");
}

/* --hostname is checked as the layout's exec.hostname is. */
TEST(exec_hostname_option_is_checked)
{
	static const char *const bad[] = { "a/b", "a\nb", "-a", "", "x2345678901234567890123456789012345678901234567890123456789012345" };
	char *out, *err;

	layoutf("x8.yaml", "version: 1\nlayers:\n  - dir: l1\nupper: { tmpfs: {} }\n");
	for (size_t i = 0; i < ARRAY_SIZE_(bad); i++) {
		ASSERT_EQ(RUN_OUT(&out, &err, -1, "exec", "--hostname", bad[i], path("x8.yaml"), "--", "/bin/sh", "-c",
				  "true"), 125);
		ASSERT_CONTAINS(err, "--hostname");
		/* one line */
		ASSERT_TRUE(strchr(err, '\n') == err + strlen(err) - 1);
	}
	ASSERT_EQ(mounts_under(fix), 0);
	ASSERT_EQ(RUN_OUT(&out, &err, -1, "exec", "--hostname", "web-1.example", path("x8.yaml"), "--", "/bin/sh", "-c",
			  "cat /proc/sys/kernel/hostname"), 0);
	ASSERT_CONTAINS(out, "web-1.example\n");
}

/* A setup step that fails is named, with the kernel's errno: here /dev is a file in the tree. */
TEST(exec_setup_failure_names_its_step)
{
	char *out, *err;

	sh("mkdir -p %s/ldevfile && : > %s/ldevfile/dev", fix, fix);
	layoutf("x9.yaml", "version: 1\nlayers:\n  - dir: l1\n  - dir: ldevfile\nupper: { tmpfs: {} }\n");
	ASSERT_EQ(RUN_OUT(&out, &err, -1, "exec", path("x9.yaml"), "--", "/bin/sh", "-c", "true"), 125);
	ASSERT_CONTAINS(err, "rootasm: exec mount /dev: ");
	ASSERT_TRUE(strchr(err, '\n') == err + strlen(err) - 1);
	ASSERT_EQ(mounts_under(fix), 0);
}

TEST(rootless_image_layer_is_not_permitted_not_missing)
{
	char dir[] = "/tmp/rootasm-rootless-XXXXXX", cmd[8192];
	FILE *f;
	char line[1024] = "";
	int rc;

	/* nobody, root in a user namespace of its own: loop devices are not for it */
	if (!mkdtemp(dir))
		FAILF("mkdtemp");
	sh("chmod 755 %s && cp %s/l2.sqfs %s/ && chmod 644 %s/l2.sqfs && printf 'version: 1\\nlayers:\\n  - image: l2.sqfs\\n' > %s/r.yaml "
	   "&& mkdir %s/m && chmod 777 %s/m", dir, fix, dir, dir, dir, dir, dir);
	snprintf(cmd, sizeof(cmd), "su nobody -s /bin/sh -c 'unshare -Urm %s assemble %s/r.yaml --attach %s/m' 2>&1", bin, dir, dir);
	f = popen(cmd, "r");
	ASSERT_TRUE(f != NULL);
	(void)!fgets(line, sizeof(line), f);
	rc = pclose(f);
	sh("rm -rf %s", dir);
	ASSERT_EQ(WEXITSTATUS(rc), 1);
	ASSERT_CONTAINS(line, "not permitted loop-configure");
	ASSERT_TRUE(strstr(line, "kernel lacks") == NULL);
}

/*
 * No principal is no administrator: the CLI judges itself as rootasmd judges
 * a client. Root in a user namespace of its own (nobody's) gets a user's
 * tree: nosuid,nodev, locked (it cannot remount it suid); uid 0 without
 * CAP_SYS_ADMIN is shown a user's plan. Before, both were administrators.
 */
TEST(caller_without_cap_sys_admin_gets_a_users_tree)
{
	char dir[] = "/tmp/rootasm-self-XXXXXX", cmd[8192];
	char *out = NULL;
	FILE *f;
	size_t len = 0;
	int rc;

	if (!mkdtemp(dir))
		FAILF("mkdtemp");
	sh("chmod 755 %s && mkdir -p %s/low/etc %s/m && echo hi > %s/low/etc/motd && chmod 777 %s/m && "
	   "printf 'version: 1\\nlayers:\\n  - dir: low\\nupper: { tmpfs: {} }\\n' > %s/r.yaml && chmod -R a+rX %s/low %s/r.yaml",
	   dir, dir, dir, dir, dir, dir, dir, dir);
	snprintf(cmd, sizeof(cmd), "su nobody -s /bin/sh -c 'unshare -Urm sh -c \"%s assemble %s/r.yaml --attach %s/m && "
		 "grep \\\" %s/m \\\" /proc/self/mountinfo && cat %s/m/etc/motd && "
		 "if mount -o remount,bind,suid %s/m 2>/dev/null; then echo loosened; fi\"' 2>&1", bin, dir, dir, dir, dir, dir);
	f = popen(cmd, "r");
	ASSERT_TRUE(f != NULL);
	(void)!getdelim(&out, &len, '\0', f);
	rc = pclose(f);
	if (WEXITSTATUS(rc) != 0)
		FAILF("rootless assemble: %s", out ? out : "");
	ASSERT_CONTAINS(out, "nosuid,nodev");
	ASSERT_CONTAINS(out, "hi\n");
	ASSERT_TRUE(!strstr(out, "loosened"));
	free(out);
	out = NULL;
	snprintf(cmd, sizeof(cmd), "capsh --drop=cap_sys_admin -- -c '%s check %s/r.yaml' 2>&1", bin, dir);
	f = popen(cmd, "r");
	ASSERT_TRUE(f != NULL);
	(void)!getdelim(&out, &len, '\0', f);
	rc = pclose(f);
	sh("rm -rf %s", dir);
	ASSERT_EQ(WEXITSTATUS(rc), 0);
	ASSERT_CONTAINS(out, "\nfor uid 0 gid 0");
	ASSERT_CONTAINS(out, "\ngrant: every mount nosuid,nodev, locked");
	free(out);
}

/*
 * Where rootasm runs, not what it does, is the cause: a plain chroot (its /
 * no mount point: nothing can be made private) and a missing /proc are said
 * so, in one line each; before, "exec make / private: Invalid argument" and
 * errors about /proc/self/fd paths.
 */
TEST(chroot_and_missing_proc_are_explained)
{
	char dir[] = "/tmp/rootasm-chroot-XXXXXX", cmd[8192];
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	if (!mkdtemp(dir))
		FAILF("mkdtemp");
	snprintf(cmd, sizeof(cmd),
		 "unshare -m --propagation private sh -c 'C=%s/c; mkdir -p $C/usr $C/etc $C/proc $C/dev $C/l/etc && "
		 "mount --bind /usr $C/usr && mount --bind /etc $C/etc && "
		 "for d in bin sbin lib lib32 lib64 libx32; do [ -L /$d ] && ln -s $(readlink /$d) $C/$d; done; "
		 "cp %s $C/rootasm && printf \"version: 1\\nlayers:\\n  - dir: /l\\n\" > $C/l.yaml && "
		 "echo \"rc=$(chroot $C /rootasm exec /l.yaml -- /usr/bin/true 2>&1; echo \" $?\")\"; "
		 "mount -t proc proc $C/proc && mount --rbind /dev $C/dev && "
		 "echo \"rc=$(chroot $C /rootasm exec /l.yaml -- /usr/bin/true 2>&1; echo \" $?\")\"; "
		 "echo \"probe=$(chroot $C /rootasm probe --refresh | awk '\\''{ printf \"%%s %%s;\", $1, $2 }'\\'')\"; "
		 "echo \"hostprobe=$(%s probe --refresh | awk '\\''{ printf \"%%s %%s;\", $1, $2 }'\\'')\"' 2>&1",
		 dir, bin, bin);
	f = popen(cmd, "r");
	ASSERT_TRUE(f != NULL);
	(void)!getdelim(&out, &len, '\0', f);
	pclose(f);
	sh("rm -rf %s", dir);
	ASSERT_CONTAINS(out, "rc=rootasm: start /proc/self/fd: No such file or directory (rootasm reads its fds, mounts "
			"and namespaces in /proc: mount it (mount -t proc proc /proc))\n 1\n");
	ASSERT_CONTAINS(out, "rc=rootasm: exec make / private: Invalid argument (/ is not a mount point here (a plain "
			"chroot): rootasm mounts in a private mount namespace, which needs / to be a mount;");
	ASSERT_CONTAINS(out, ")\n 125\n");
	/*
	 * The probe in the chroot answers as outside, but where the chroot is the
	 * cause: no user namespace for a chrooted process (idmap-of-idmapped:
	 * not-permitted, not absent); statmount-idmap asked of a mount that is ours
	 */
	{
		static const char was[] = "idmap-of-idmapped present;", now[] = "idmap-of-idmapped not-permitted;";
		char *in = strstr(out, "\nprobe="), *host = strstr(out, "hostprobe="), h[4096], want[4200], *p;

		ASSERT_TRUE(in && host);
		snprintf(h, sizeof(h), "%.*s", (int)strcspn(host + strlen("hostprobe="), "\n"), host + strlen("hostprobe="));
		p = strstr(h, was);
		if (p)
			snprintf(want, sizeof(want), "%.*s%s%s", (int)(p - h), h, now, p + strlen(was));
		else
			snprintf(want, sizeof(want), "%s", h);
		in += strlen("\nprobe=");
		in[strcspn(in, "\n")] = '\0';
		ASSERT_STR(in, want);
	}
	free(out);
}

/* ---------------------------------------------------------------- the hand-off */

/* A listener on @sockpath made by a child running as @uid; returns the listening fd (ours too). */
static int listener_as(const char *sockpath, uid_t uid, int backlog)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int sv[2], ls = -1, status;
	pid_t pid;

	ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sockpath);
	unlink(sockpath);
	pid = fork();
	if (pid == 0) {
		union {
			char buf[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} u;
		struct iovec iov = { "x", 1 };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		/* SO_PEERCRED tells the credentials of the process that called listen() */
		if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(sockpath, 0777) < 0 ||
		    setresuid(uid, uid, uid) < 0 || listen(fd, backlog) < 0)
			_exit(1);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
		_exit(sendmsg(sv[1], &m, 0) == 1 ? 0 : 1);
	}
	{
		union {
			char buf[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} u;
		char x;
		struct iovec iov = { &x, 1 };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };

		ASSERT_EQ(recvmsg(sv[0], &m, MSG_CMSG_CLOEXEC), 1);
		memcpy(&ls, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof(int));
	}
	waitpid(pid, &status, 0);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(sv[0]);
	close(sv[1]);
	return ls;
}

TEST(send_fd_refuses_a_listener_it_did_not_expect)
{
	char *err, *mi = mountinfo(), *lo;
	int ls, cs, n;
	char buf[64];

	layoutf("h1.yaml", "version: 1\nlayers:\n  - dir: l1\n  - image: l2.sqfs\nupper: { tmpfs: {} }\n");
	/* a listener owned by nobody, in a world-writable place */
	ls = listener_as(path("nobody.sock"), 65534, 4);
	lo = loops();
	ASSERT_EQ(RUN(&err, "assemble", path("h1.yaml"), "--send-fd", path("nobody.sock")), 1);
	ASSERT_CONTAINS(err, "the listener runs as uid 65534");
	ASSERT_EQ(strchr(err, '\n'), err + strlen(err) - 1);
	/* it got a connection, but no tree and no payload */
	cs = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
	ASSERT_TRUE(cs >= 0);
	n = recv(cs, buf, sizeof(buf), MSG_DONTWAIT);
	ASSERT_TRUE(n == 0 || (n < 0 && errno == EAGAIN));
	close(cs);
	ASSERT_STR(mountinfo(), mi);
	ASSERT_STR(loops(), lo);
	/* named with --peer-uid, the same listener gets it */
	ASSERT_EQ(RUN(&err, "assemble", path("h1.yaml"), "--send-fd", path("nobody.sock"), "--peer-uid", "65534"), 0);
	cs = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
	ASSERT_TRUE(recv(cs, buf, sizeof(buf), 0) > 0);
	close(cs);
	close(ls);
}

TEST(send_fd_gives_up_on_a_full_backlog)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timespec t0;
	char *err, *lo;
	int ls, filled = 0;

	layoutf("h2.yaml", "version: 1\nlayers:\n  - dir: l1\n  - image: l2.sqfs\nupper: { tmpfs: {} }\n");
	ls = listener_as(path("full.sock"), 0, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path("full.sock"));
	/* fill the backlog: connect until the kernel says it is full */
	for (int i = 0; i < 64; i++) {
		int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

		if (connect(c, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			close(c);
			break;
		}
		filled++;
	}
	ASSERT_TRUE(filled > 0);
	lo = loops();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(RUN(&err, "assemble", path("h2.yaml"), "--send-fd", path("full.sock"), "--timeout", "300"), 1);
	ASSERT_CONTAINS(err, "backlog is full");
	ASSERT_TRUE(ms_since(&t0) < 5000);
	/* the tree went with rootasm: its loop device too */
	ASSERT_STR(loops(), lo);
	close(ls);
}

TEST(send_fd_payload_cannot_be_forged_and_a_socketpair_works)
{
	int sv[2], tree = -1, status;
	char payload[8192] = "";
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { payload, sizeof(payload) - 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	ssize_t n;
	pid_t pid;

	/* a layout whose name has a newline and a quote in it */
	layoutf("h3\n\"evil\":1.yaml", "version: 1\nlayers:\n  - dir: l1\nupper: { tmpfs: {} }\n");
	ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	pid = fork();
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		dup2(devnull, 2);
		dup2(sv[1], 3);	/* without close-on-exec: inherited */
		execl(bin, bin, "assemble", path("h3\n\"evil\":1.yaml"), "--send-fd-fd", "3", (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	n = recvmsg(sv[0], &msg, MSG_CMSG_CLOEXEC);
	waitpid(pid, &status, 0);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT_TRUE(n > 0);
	payload[n] = '\0';
	/* exactly one line, the name escaped inside one JSON string */
	ASSERT_EQ(strchr(payload, '\n'), payload + n - 1);
	ASSERT_CONTAINS(payload, "h3\\n\\\"evil\\\":1.yaml\"}");
	ASSERT_TRUE(CMSG_FIRSTHDR(&msg) && CMSG_FIRSTHDR(&msg)->cmsg_type == SCM_RIGHTS);
	memcpy(&tree, CMSG_DATA(CMSG_FIRSTHDR(&msg)), sizeof(int));
	mkdir(path("mh3"), 0755);
	ASSERT_EQ(move_mount(tree, "", AT_FDCWD, path("mh3"), MOVE_MOUNT_F_EMPTY_PATH), 0);
	ASSERT_STR(slurp(path("mh3/etc/motd")), "base\n");
	close(tree);
	close(sv[0]);
}

/* ---------------------------------------------------------------- threads */

struct worker {
	struct rootasm_ctx *ctx;
	const struct rootasm_layout *l;
	int n, ok, failed, wrong;
	char first_error[512];
};

/* Read @rel inside the detached tree @root into a static-free buffer. */
static bool tree_has(int root, const char *rel, const char *want)
{
	char buf[64] = "";
	int fd = openat(root, rel, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return !strcmp(buf, want);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	for (int i = 0; i < w->n; i++) {
		struct rootasm_error e = { 0 };
		int fd = rootasm_assemble(w->ctx, w->l, &e);

		if (fd < 0) {
			if (!w->failed++)
				rootasm_error_format(&e, w->first_error, sizeof(w->first_error));
			continue;
		}
		/* the tree is whole: both layers, the bind volume, the image volume */
		if (tree_has(fd, "etc/motd", "l2\n") && tree_has(fd, "etc/keep", "keep\n") &&
		    tree_has(fd, "data/file", "hello\n") && tree_has(fd, "vol/volfile", "vol\n"))
			w->ok++;
		else
			w->wrong++;
		close(fd);
	}
	return NULL;
}

TEST(threads_assemble_one_layout_at_once)
{
	enum { THREADS = 8 };
	const int EACH = harness_scale(125, 20);
	struct rootasm_ctx *ctx;
	struct rootasm_layout *l;
	struct worker w[THREADS];
	pthread_t t[THREADS];
	char *mi, *lo, *fd_before;
	int ok = 0;

	/* image and dir layers, an upper, override_creds (a helper child each time), an idmapped bind */
	layoutf("th.yaml", "version: 1\nlayers:\n  - dir: l1\n  - image: l2.sqfs\nupper: { tmpfs: {} }\n"
		"overlay:\n  override_creds: { uid: 0, gid: 0, capabilities: %s }\n"
		"mounts:\n  - { bind: data, target: /data, idmap: { uids: [\"0:100000:1000\"], gids: [\"0:100000:1000\"] } }\n"
		"  - { image: vol.sqfs, target: /vol }\n  - { tmpfs: /tmp }\n", caps_yaml(1ULL << CAP_MKNOD));
	ASSERT_EQ(rootasm_ctx_new(0, &ctx), 0);
	l = load("th.yaml");
	mi = mountinfo();
	lo = loops();
	fd_before = fds();
	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ .ctx = ctx, .l = l, .n = EACH };
		ASSERT_EQ(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		ASSERT_EQ(pthread_join(t[i], NULL), 0);
		if (w[i].failed)
			FAILF("thread %d: %d of %d failed, first: %s", i, w[i].failed, EACH, w[i].first_error);
		ASSERT_EQ(w[i].wrong, 0);
		ok += w[i].ok;
	}
	ASSERT_EQ(ok, THREADS * EACH);
	/* nothing left: no mount, no loop device, no fd beyond the layout's own (once the
	 * context has dissolved the temporary mounts it defers, rootasm_ctx_flush()) */
	rootasm_ctx_flush(ctx);
	ASSERT_STR(mountinfo(), mi);
	ASSERT_STR(loops(), lo);
	ASSERT_STR(fds(), fd_before);
	fprintf(stderr, "  %d threads, %d assemblies, 0 failed, 0 leaked\n", THREADS, ok);
	rootasm_layout_free(l);
	rootasm_ctx_free(ctx);
}

/* ---------------------------------------------------------------- races */

static void swapper(const char *dir, volatile bool *stop)
{
	/* each name flips between the real object and a symlink out of the fixture, or a FIFO */
	static const char *const pairs[][2] = {
		{ "layer", "evil-etc" }, { "bind", "evil-root" }, { "img.sqfs", "evil-fifo" },
		{ "layer", "evil-fifo2" }, { "img.sqfs", "evil-etc2" },
	};
	int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);

	for (unsigned int i = 0; !*stop; i++) {
		const char *const *p = pairs[i % ARRAY_SIZE_(pairs)];

		renameat2(dfd, p[0], dfd, p[1], RENAME_EXCHANGE);
		renameat2(dfd, p[0], dfd, p[1], RENAME_EXCHANGE);
	}
	_exit(0);
}

TEST(race_swapped_host_objects_never_get_in)
{
	const int RUNS = harness_scale(600, 60);
	int ok = 0, refused = 0, bad = 0, hung = 0;
	char cmd[8192], *err;
	pid_t sw, me;

	sh("rm -rf %s/race && mkdir -p %s/race/layer/etc %s/race/bind %s/race/imgsrc %s/race/mnt", fix, fix, fix, fix, fix);
	sh("cd %s/race && echo layer-token > layer/marker-layer && echo bind-token > bind/marker-bind && "
	   "echo img-token > imgsrc/marker-img && mksquashfs imgsrc img.sqfs -quiet -no-progress >/dev/null && "
	   "ln -s /etc evil-etc && ln -s /etc evil-etc2 && ln -s /root evil-root && mkfifo evil-fifo evil-fifo2", fix);
	layoutf("race/r.yaml", "version: 1\nlayers:\n  - image: img.sqfs\n  - dir: layer\nupper: { tmpfs: {} }\n"
		"mounts:\n  - { bind: bind, target: /b }\n");
	me = getpid();
	sw = fork();
	if (sw == 0) {
		static volatile bool never;

		/* spinning forever: it must not outlive this test, however the test ends */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != me)
			_exit(1);
		swapper(path("race"), &never);
	}
	for (int i = 0; i < RUNS; i++) {
		int rc;

		snprintf(cmd, sizeof(cmd), "%s/race/r.yaml", fix);
		rc = run_full(NULL, &err, -1, 10, (const char *const[]){ bin, "assemble", cmd, "--attach", path("race/mnt"), NULL });
		if (rc == 124) {
			hung++;
			continue;
		}
		if (rc != 0) {
			/* refused, in one line, naming what it found instead */
			if (strchr(err, '\n') != err + strlen(err) - 1 ||
			    (!strstr(err, "symbolic link") && !strstr(err, "FIFO") && !strstr(err, "No such file")))
				FAILF("run %d: rc %d, unexpected error: %s", i, rc, err);
			refused++;
			continue;
		}
		/* the tree holds the objects the layout names, and nothing swapped in */
		if (strcmp(slurp(path("race/mnt/marker-layer")) ?: "", "layer-token\n") ||
		    strcmp(slurp(path("race/mnt/marker-img")) ?: "", "img-token\n") ||
		    strcmp(slurp(path("race/mnt/b/marker-bind")) ?: "", "bind-token\n") ||
		    access(path("race/mnt/passwd"), F_OK) == 0 || access(path("race/mnt/b/.bashrc"), F_OK) == 0)
			bad++;
		else
			ok++;
		if (umount2(path("race/mnt"), MNT_DETACH) < 0)
			FAILF("umount: %s", strerror(errno));
	}
	kill(sw, SIGKILL);
	waitpid(sw, NULL, 0);
	fprintf(stderr, "  %d runs: %d assembled the objects they opened, %d refused in one line, %d wrong, %d hung\n",
		RUNS, ok, refused, bad, hung);
	ASSERT_EQ(bad, 0);
	ASSERT_EQ(hung, 0);
	/* the swapper really raced: both outcomes happened */
	ASSERT_TRUE(ok > 0 && refused > 0);
}

/* @s is one line: exactly one '\n', at its end. */
static bool one_line(const char *s)
{
	return s && *s && strchr(s, '\n') == s + strlen(s) - 1;
}

TEST(layout_on_procfs_is_refused_without_reading_it)
{
	struct timespec t0;
	char *err;
	int rc;

	/* /proc/kmsg is a "regular file": a read blocks, and takes messages off the kernel log */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = run_full(NULL, &err, -1, 3, (const char *const[]){ bin, "check", "/proc/kmsg", NULL });
	ASSERT_EQ(rc, 2);
	ASSERT_TRUE(ms_since(&t0) < 2000);
	ASSERT_TRUE(one_line(err));
	ASSERT_CONTAINS(err, "open layout /proc/kmsg: is a file of procfs, a pseudo filesystem");
	/* the same as a nested layout: named by its layout line and key */
	layoutf("kmsg.yaml", "version: 1\nlayers:\n  - dir: l1\nmounts:\n  - { layout: /proc/kmsg, target: /x }\n");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = run_full(NULL, &err, -1, 3, (const char *const[]){ bin, "check", path("kmsg.yaml"), NULL });
	ASSERT_EQ(rc, 2);
	ASSERT_TRUE(ms_since(&t0) < 2000);
	ASSERT_TRUE(one_line(err));
	ASSERT_CONTAINS(err, "kmsg.yaml:5:15: mounts[0].layout: /proc/kmsg: is a file of procfs");
	/* sysfs too, though its reads would not block */
	rc = run_full(NULL, &err, -1, 3, (const char *const[]){ bin, "check", "/sys/kernel/uevent_seqnum", NULL });
	ASSERT_EQ(rc, 2);
	ASSERT_CONTAINS(err, "is a file of sysfs");
}

TEST(idmap_into_our_own_user_namespace_is_refused_by_check)
{
	char *err;

	/* an idmap into the namespace rootasm runs in maps every id to itself */
	layoutf("ownns.yaml", "version: 1\nlayers:\n  - dir: l1\n    idmap: { userns: /proc/self/ns/user }\n");
	ASSERT_EQ(RUN(&err, "check", path("ownns.yaml")), 2);
	ASSERT_TRUE(one_line(err));
	ASSERT_CONTAINS(err, "ownns.yaml:4:22: layers[0].idmap.userns: /proc/self/ns/user: is the user namespace "
			"rootasm runs in: an idmap into it would change nothing; name another process's namespace");
	/* a volume's, through a path of our own pid */
	layoutf("ownns2.yaml", "version: 1\nlayers:\n  - dir: l1\nmounts:\n"
		"  - { bind: data, target: /d, idmap: { userns: /proc/thread-self/ns/user } }\n");
	ASSERT_EQ(RUN(&err, "check", path("ownns2.yaml")), 2);
	ASSERT_TRUE(one_line(err));
	ASSERT_CONTAINS(err, "ownns2.yaml:5:48: mounts[0].idmap.userns: /proc/thread-self/ns/user: is the user namespace rootasm runs in");
}

TEST(send_fd_fd_refuses_a_socket_that_is_not_af_unix)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t salen = sizeof(sa);
	int ls, cs, as, sv[2], tree = -1;
	char *err, arg[16], byte;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { &byte, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };

	layoutf("tcp.yaml", "version: 1\nlayers:\n  - dir: l1\nupper: { tmpfs: {} }\n");
	/* a network namespace of this test's own, its loopback up (a QEMU guest boots with lo down) */
	ASSERT_EQ(unshare(CLONE_NEWNET), 0);
	{
		struct ifreq ifr = { .ifr_name = "lo" };
		int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

		ASSERT_TRUE(s >= 0);
		ASSERT_EQ(ioctl(s, SIOCGIFFLAGS, &ifr), 0);
		ifr.ifr_flags |= IFF_UP;
		ASSERT_EQ(ioctl(s, SIOCSIFFLAGS, &ifr), 0);
		close(s);
	}
	/* a connected TCP socket on 127.0.0.1: SO_PEERCRED reads uid -1 there, SCM_RIGHTS does not exist */
	ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_TRUE(ls >= 0);
	ASSERT_EQ(bind(ls, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ASSERT_EQ(listen(ls, 1), 0);
	ASSERT_EQ(getsockname(ls, (struct sockaddr *)&sa, &salen), 0);
	cs = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_EQ(connect(cs, (struct sockaddr *)&sa, sizeof(sa)), 0);
	as = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
	ASSERT_TRUE(as >= 0);
	snprintf(arg, sizeof(arg), "%d", cs);
	ASSERT_EQ(run_full(NULL, &err, cs, 10, (const char *const[]){ bin, "assemble", path("tcp.yaml"), "--send-fd-fd",
								     arg, NULL }), 2);
	ASSERT_TRUE(one_line(err));
	ASSERT_CONTAINS(err, "send-fd fd ");
	ASSERT_CONTAINS(err, ": an AF_INET (IPv4) socket, not an AF_UNIX socket");
	ASSERT_TRUE(!strstr(err, "uid 4294967295"));
	/* nothing came over it */
	ASSERT_ERRNO(recv(as, &byte, 1, MSG_DONTWAIT), EAGAIN);
	close(as);
	close(cs);
	close(ls);
	/* AF_UNIX, but a datagram socket */
	ASSERT_EQ(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv), 0);
	snprintf(arg, sizeof(arg), "%d", sv[1]);
	ASSERT_EQ(run_full(NULL, &err, sv[1], 10, (const char *const[]){ bin, "assemble", path("tcp.yaml"), "--send-fd-fd",
									arg, NULL }), 2);
	ASSERT_TRUE(one_line(err));
	ASSERT_CONTAINS(err, "an AF_UNIX socket, but not a connected stream or seqpacket one");
	close(sv[0]);
	close(sv[1]);
	/* a seqpacket socketpair carries the tree */
	ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	snprintf(arg, sizeof(arg), "%d", sv[1]);
	ASSERT_EQ(run_full(NULL, &err, sv[1], 10, (const char *const[]){ bin, "assemble", path("tcp.yaml"), "--send-fd-fd",
									arg, NULL }), 0);
	close(sv[1]);
	ASSERT_TRUE(recvmsg(sv[0], &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT) > 0);
	ASSERT_TRUE(CMSG_FIRSTHDR(&msg) && CMSG_FIRSTHDR(&msg)->cmsg_type == SCM_RIGHTS);
	memcpy(&tree, CMSG_DATA(CMSG_FIRSTHDR(&msg)), sizeof(int));
	ASSERT_TRUE(tree >= 0);
	close(tree);
	close(sv[0]);
}

static void cleanup(void)
{
	if (getpid() == main_pid)	/* not in the per-test children */
		sh("rm -rf %s", fix);
}

int main(int argc, char **argv)
{
	bin = argc > 1 ? argv[1] : getenv("ROOTASM_BIN");
	if (bin)
		bin = realpath(bin, NULL);
	if (!bin) {
		fprintf(stderr, "usage: %s ROOTASM_BIN\n", argv[0]);
		return 2;
	}
	setenv("ROOTASM_BIN", bin, 1);
	if (geteuid() != 0)
		return harness_main(argc, argv);
	snprintf(fix, sizeof(fix), "%s/rootasm-host-XXXXXX", getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(fix))
		return 2;
	main_pid = getpid();
	atexit(cleanup);
	sh("cd %s && mkdir -p l1/bin l1/etc l1/proc l1/home/user l2/etc l3/etc data vol", fix);
	sh("cd %s && cp /bin/busybox l1/bin/ && for c in sh cat test sleep mount kill; do ln -s busybox l1/bin/$c; done", fix);
	if (argc > 2)
		sh("cp %s %s/l1/bin/tg_exit", argv[2], fix);
	if (argc > 3)
		sh("cp %s %s/l1/bin/escape", argv[3], fix);
	sh("cd %s && echo base > l1/etc/motd && echo gone > l1/etc/deleted && echo keep > l1/etc/keep", fix);
	sh("cd %s && echo secret > l1/secret && chown 4242:4242 l1/secret && chmod 0600 l1/secret", fix);
	sh("cd %s && chown 1000:1000 l1/home/user && ln -s /etc l1/etclink && ln -s ../.. l1/up", fix);
	sh("cd %s && echo l2 > l2/etc/motd && echo new > l2/newfile && mknod l3/etc/deleted c 0 0", fix);
	sh("cd %s && echo hello > data/file && echo 'nameserver 192.0.2.1' > hostfile && echo vol > vol/volfile", fix);
	sh("cd %s && mksquashfs l2 l2.sqfs -quiet -no-progress -comp zstd >/dev/null && "
	   "mksquashfs vol vol.sqfs -quiet -no-progress >/dev/null && mkfs.erofs --quiet l3.erofs l3 >/dev/null", fix);
	sh("cd %s && printf 'version: 1\\nlayers:\\n  - dir: l2\\n' > sub.yaml", fix);
	if (chdir(fix) < 0)
		return 2;
	return harness_main(argc, argv);
}

/*
 * A failed assembly leaves nothing on the host: not the mount points it made on
 * the way to a target inside a writable bind volume (they land in the host's
 * directory), nor the empty file of a file volume's target. Directories that were
 * there before stay.
 */
TEST(failure_removes_the_mount_points_it_made_on_the_host)
{
	struct stat st;

	sh("rm -rf %s/rw6 && mkdir -p %s/rw6/keep && echo kept > %s/rw6/keep/file && head -c 1M /dev/zero > %s/bad6.sqfs",
	   fix, fix, fix, fix);
	layoutf("f6.yaml", "version: 1\nlayers:\n  - dir: l1\n  - image: l2.sqfs\nupper: { tmpfs: {} }\n"
		"mounts:\n"
		"  - { bind: rw6, target: /data, options: [rw] }\n"
		"  - { tmpfs: /data/a/b/c }\n"
		"  - { bind: hostfile, target: /data/f/g/resolv.conf }\n"
		"  - { tmpfs: /data/keep/x }\n"
		"  - { image: bad6.sqfs, target: /vol6 }\n");
	/* bad6.sqfs is a regular file, no image: the last volume fails, after the others are in */
	expect_clean_failure("f6.yaml", "bad6.sqfs", NULL);
	ASSERT_ERRNO(lstat(path("rw6/a"), &st), ENOENT);
	ASSERT_ERRNO(lstat(path("rw6/f"), &st), ENOENT);
	ASSERT_ERRNO(lstat(path("rw6/keep/x"), &st), ENOENT);
	ASSERT_STR(slurp(path("rw6/keep/file")), "kept\n");
	/* the same layout without the bad volume: its mount points stay, they are the tree's */
	layoutf("f6ok.yaml", "version: 1\nlayers:\n  - dir: l1\n  - image: l2.sqfs\nupper: { tmpfs: {} }\n"
		"mounts:\n"
		"  - { bind: rw6, target: /data, options: [rw] }\n"
		"  - { tmpfs: /data/a/b/c }\n"
		"  - { bind: hostfile, target: /data/f/g/resolv.conf }\n");
	assemble_at("f6ok.yaml", "m6");
	ASSERT_TRUE(mount_at(path("m6/data/a/b/c")) != NULL);
	ASSERT_EQ(lstat(path("rw6/a/b/c"), &st), 0);
	ASSERT_TRUE(S_ISDIR(st.st_mode));
	ASSERT_EQ(lstat(path("rw6/f/g/resolv.conf"), &st), 0);
	ASSERT_TRUE(S_ISREG(st.st_mode));
}

/* The layout builder: the tree of t9.yaml, made with calls, assembled and attached. */
TEST(builder_assembles_what_the_yaml_would)
{
	struct rootasm_layout_builder *b = NULL;
	struct rootasm_layout *l = NULL;
	struct rootasm_error e = { 0 };
	char fmt[1024];
	int fd;

	ASSERT_EQ(rootasm_layout_builder_new(&b), 0);
	ASSERT_EQ(rootasm_layout_builder_add_dir_layer(b, path("l1")), 0);
	ASSERT_EQ(rootasm_layout_builder_add_image_layer(b, path("l2.sqfs"), "squashfs"), 0);
	ASSERT_EQ(rootasm_layout_builder_set_upper_tmpfs(b, "8M"), 0);
	ASSERT_EQ(rootasm_layout_builder_add_tmpfs(b, "/tmp", NULL, 0, ROOTASM_BUILDER_NOSUID), 0);
	ASSERT_EQ(rootasm_layout_builder_add_bind(b, path("data"), "/data", ROOTASM_BUILDER_RO), 0);
	ASSERT_EQ(rootasm_layout_builder_add_image_volume(b, path("vol.sqfs"), "/vol", NULL, 0), 0);
	if (rootasm_layout_builder_finish(b, NULL, NULL, &l, &e) < 0)
		FAILF("finish: %s", rootasm_error_format(&e, fmt, sizeof(fmt)));
	rootasm_layout_builder_free(b);
	fd = rootasm_assemble(NULL, l, &e);
	if (fd < 0)
		FAILF("assemble: %s", rootasm_error_format(&e, fmt, sizeof(fmt)));
	mkdir(path("mb"), 0755);
	ASSERT_EQ(rootasm_attach(fd, path("mb"), &e), 0);
	ASSERT_EQ(mounts_under(path("mb")), 4);
	ASSERT_STR(slurp(path("mb/etc/motd")), "l2\n");
	ASSERT_STR(slurp(path("mb/etc/keep")), "keep\n");
	put("mb/etc/written", "x\n");
	ASSERT_ERRNO(open(path("mb/data/nope"), O_CREAT | O_WRONLY | O_CLOEXEC, 0644), EROFS);
	ASSERT_EQ(umount2(path("mb"), MNT_DETACH), 0);
	close(fd);
	rootasm_layout_free(l);
}

/* rootasm_attach_at(): a directory fd and a path, the fd itself, no flags, no symlink followed. */
TEST(attach_at_dirfd_and_path)
{
	struct rootasm_layout *l;
	struct rootasm_error e = { 0 };
	int fd, dfd, tfd;

	layoutf("ta.yaml", "version: 1\nlayers:\n  - dir: l1\n  - image: l2.sqfs\n");
	l = load("ta.yaml");
	mkdir(path("ma"), 0755);
	mkdir(path("ma/x"), 0755);
	mkdir(path("ma/y"), 0755);
	ASSERT_EQ(symlink("x", path("ma/link")), 0);
	dfd = open(path("ma"), O_PATH | O_DIRECTORY | O_CLOEXEC);
	ASSERT_TRUE(dfd >= 0);
	fd = rootasm_assemble(NULL, l, &e);
	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(rootasm_attach_at(fd, dfd, "x", 1, &e), -EINVAL);
	ASSERT_EQ(e.kind, ROOTASM_ERROR_USAGE);
	/* the last component a symlink: not followed (move_mount refuses it), nothing attached */
	ASSERT_TRUE(rootasm_attach_at(fd, dfd, "link", 0, &e) < 0);
	ASSERT_EQ(mounts_under(path("ma/x")), 0);
	ASSERT_EQ(rootasm_attach_at(fd, dfd, "x", 0, &e), 0);
	ASSERT_STR(slurp(path("ma/x/etc/motd")), "l2\n");
	ASSERT_EQ(mounts_under(path("ma/x")), 1);
	close(fd);
	/* an empty path: the directory fd is the mount point */
	fd = rootasm_assemble(NULL, l, &e);
	ASSERT_TRUE(fd >= 0);
	tfd = open(path("ma/y"), O_PATH | O_DIRECTORY | O_CLOEXEC);
	ASSERT_TRUE(tfd >= 0);
	ASSERT_EQ(rootasm_attach_at(fd, tfd, "", 0, &e), 0);
	ASSERT_STR(slurp(path("ma/y/etc/motd")), "l2\n");
	ASSERT_EQ(mounts_under(path("ma/y")), 1);
	ASSERT_EQ(rootasm_attach_at(fd, -1, "", 0, &e), -EBADF);
	ASSERT_STR(e.op, "move_mount");
	close(fd);
	close(tfd);
	close(dfd);
	rootasm_layout_free(l);
}

/* The builder's layout goes through the authorize stage for its principal, as a loaded one does. */
TEST(builder_authorizes_for_its_principal)
{
	struct rootasm_principal *p = NULL;
	struct rootasm_layout_builder *b = NULL;
	struct rootasm_layout *l = NULL;
	struct rootasm_error e = { 0 };
	struct rootasm_load_opts o = { .size = sizeof(o) };
	char *buf = NULL, fmt[1024];
	size_t len = 0;
	FILE *f;

	sh("chmod 0755 %s", fix);
	sh("mkdir -p %s/pu/root %s/pu/secret && chmod 0700 %s/pu/secret", fix, fix, fix);
	ASSERT_EQ(rootasm_principal_user(1771, 1771, NULL, 0, -1, &p, &e), 0);
	o.principal = p;
	ASSERT_EQ(rootasm_layout_builder_new(&b), 0);
	ASSERT_EQ(rootasm_layout_builder_add_dir_layer(b, path("l1")), 0);
	ASSERT_EQ(rootasm_layout_builder_set_upper_tmpfs(b, NULL), 0);
	ASSERT_EQ(rootasm_layout_builder_add_bind(b, path("pu/root"), "/r", 0), 0);
	if (rootasm_layout_builder_finish(b, NULL, &o, &l, &e) < 0)
		FAILF("finish: %s", rootasm_error_format(&e, fmt, sizeof(fmt)));
	f = open_memstream(&buf, &len);
	ASSERT_TRUE(f != NULL);
	ASSERT_EQ(rootasm_plan_print(NULL, l, f, 0), 0);
	fclose(f);
	ASSERT_CONTAINS(buf, "for uid 1771");
	ASSERT_CONTAINS(buf, "-> /r options=- forced=ro (read-only: uid 1771");
	ASSERT_CONTAINS(buf, "every mount of the tree nosuid,nodev,recursive");
	free(buf);
	rootasm_layout_free(l);
	/* what uid 1771 cannot read it cannot name: the open stage ran with its credentials */
	ASSERT_EQ(rootasm_layout_builder_add_dir_layer(b, path("pu/secret")), 0);
	memset(&e, 0, sizeof(e));
	ASSERT_TRUE(rootasm_layout_builder_finish(b, NULL, &o, &l, &e) < 0);
	ASSERT_STR(e.op, "rootasm_layout_builder_add_dir_layer");
	ASSERT_CONTAINS(e.msg, "layers[1].dir");
	rootasm_layout_builder_free(b);
	rootasm_principal_free(p);
}
