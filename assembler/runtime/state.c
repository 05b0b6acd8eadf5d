// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The state of one container: ROOT/.rootasm/ID (ROOT: the runtime's --root),
 * a directory of root's (0700), and the lock of that container (flock on its
 * fd: a create, a delete and a cleanup of one id at a time; other ids are
 * never waited for):
 *
 *   ID/bundle/             the private bundle the delegate runs: owned by the
 *                          engine bundle's owner (rootasm_bundle_prepare()
 *                          takes its owner as the tree's principal)
 *   ID/bundle/config.json  the engine's config.json, root.path "rootfs",
 *                          relative bind sources made absolute
 *   ID/engine-bundle       the engine's bundle directory, as the state shows
 *                          it (spec.c), when the delegate runs the private
 *                          bundle (RT_RUN_PRIVATE)
 *   ID/delegate.json       the config crun runs the engine's bundle with
 *                          (RT_RUN_CONFIG)
 *   ID/bundle/rootfs       where the tree is attached: by
 *                          rootasm_bundle_prepare() (its record in
 *                          $ROOTASM_RUN_DIR/bundles), or for a tree of
 *                          rootasmd's by one move_mount, its unique mount id
 *                          in ID/via.mnt first (over the engine's rootfs:
 *                          neither, below)
 *
 * The engine's bundle is never written and its rootfs never used: for an
 * engine's bundle whose rootfs is a mount (RT_RUN_OVER), the delegate runs
 * that bundle in a mount namespace of its own where a clone of the tree
 * covers the rootfs (rt_over_enter()). The tree is not attached in ours
 * then: rootasmd's, received detached, or one assembled here the same way
 * (local_assemble()), goes to the delegate's namespace as it came, and is
 * gone with it (no ID/bundle, nothing for cleanup); only for a container
 * with a user namespace of its own (its layers idmapped to it by the
 * private bundle's prepare) is the tree at ID/bundle/rootfs, the record
 * cleanup goes by, and a clone of it covers the rootfs. Cleanup
 * detaches only what those records name, while it is the mount at rootfs;
 * it runs on delete, and on the next create or delete of an id whose create
 * failed or was killed (the directory is still there).
 *
 * A container with a user namespace of its own sets its rootfs up as its
 * root, a uid of the host that is not 0: .rootasm, ID and bundle are then
 * 0711 (search, not list: nobody learns the ids), as the path to the
 * engine's rootfs is for it; a --root that others cannot search is refused
 * (rt_state_prepare()), where the delegate would fail on the rootfs. Over
 * the engine's rootfs (RT_RUN_OVER) it reaches that rootfs as the engine
 * made it, and nothing of ours is opened to it.
 *
 * A container without a mount namespace of its own gets the delegate's
 * /proc, /dev and /sys stacked on the tree in ours: the recursive detach
 * takes them along (over the engine's rootfs, in the delegate's namespace,
 * which the container's processes hold until they end). One that joins a
 * mount namespace by path is refused (main.c): the delegate would look for
 * the tree there.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/nsfs.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "mntinfo.h"
#include "open.h"
#include "runtime.h"
#include "uapi.h"
#include "util.h"

#ifndef STATX_ATTR_MOUNT_ROOT
#define STATX_ATTR_MOUNT_ROOT	0x00002000
#endif
#define VIA_RECORD		"via.mnt"

static struct rootasm_ctx *ctx(void)
{
	static struct rootasm_ctx *c;

	if (!c && rootasm_ctx_new(0, &c) < 0)
		c = NULL;	/* the library's default context then */
	return c;
}

static int lib_error(const struct rootasm_error *e)
{
	char msg[8192];

	return rt_error("%s", rootasm_error_format(e, msg, sizeof(msg)));
}

/* mkdir -p @p (0700 for what it makes); 0 or -1 (said). */
static int mkdir_p(const char *p)
{
	char buf[PATH_MAX];

	if (snprintf(buf, sizeof(buf), "%s", p) >= (int)sizeof(buf))
		return rt_error("%s: path too long", p);
	for (char *s = buf + 1;; s++) {
		if (*s == '/' || !*s) {
			char c = *s;

			*s = '\0';
			if (mkdir(buf, 0700) < 0 && errno != EEXIST)
				return rt_error("mkdir %s: %s", buf, strerror(errno));
			*s = c;
			if (!c)
				return 0;
		}
	}
}

static int lock_id(struct rt_state *s, bool create);

int rt_state_lock(const char *root, const char *id, bool create, struct rt_state *s)
{
	struct stat st;
	char *dir, why[512];

	memset(s, 0, sizeof(*s));
	s->dir = s->fd = -EBADF;
	if (asprintf(&dir, "%s/" RT_STATE_SUBDIR, root) < 0)
		return rt_error("out of memory");
	if (create && (mkdir_p(root) < 0 || (mkdir(dir, 0700) < 0 && errno != EEXIST))) {
		if (errno != EEXIST)
			rt_error("mkdir %s: %s", dir, strerror(errno));
		free(dir);
		return -1;
	}
	s->dir = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->dir < 0 && errno == ENOENT && !create) {
		free(dir);
		return 1;
	}
	if (s->dir < 0 || fstat(s->dir, &st) < 0 || st.st_uid != 0 || (st.st_mode & 022)) {
		rt_error("%s: %s", dir, s->dir < 0 ? strerror(errno) : "not a directory of root's that nobody else "
			 "can write");
		free(dir);
		return -1;
	}
	/* and every directory above it (a 0777 --root: another user could move ours away and put its own) */
	if (ra_admin_trusted(s->dir, -EBADF, why, sizeof(why)) < 0) {
		rt_error("%s: %s", dir, why);
		free(dir);
		return -1;
	}
	if (asprintf(&s->path, "%s/%s", dir, id) < 0 || asprintf(&s->bundle, "%s/bundle", s->path) < 0 ||
	    asprintf(&s->config, "%s/" RT_DELEGATE_CONFIG, s->path) < 0 || !(s->id = strdup(id))) {
		free(dir);
		return rt_error("out of memory");
	}
	free(dir);
	return lock_id(s, create);
}

int rt_state_relock(struct rt_state *s)
{
	struct stat st;

	if (flock(s->fd, LOCK_EX) < 0)
		return rt_error("flock %s: %s", s->path, strerror(errno));
	if (fstat(s->fd, &st) < 0)
		return rt_error("stat %s: %s", s->path, strerror(errno));
	/*
	 * removed meanwhile (a delete), whatever is at its name now: the id may
	 * have been created again (an engine reuses ids), that state another
	 * container's (its directory may even have our inode number again)
	 */
	if (st.st_nlink == 0) {
		close_fdp(&s->fd);
		return 1;
	}
	return 0;
}

/* Open (@create: make) and lock ID in the state directory s->dir: 0, or 1 when there is none (without @create). */
static int lock_id(struct rt_state *s, bool create)
{
	const char *id = s->id;
	struct stat st;

	for (;;) {
		if (create) {
			if (mkdirat(s->dir, id, 0700) == 0)
				s->existed = false;
			else if (errno == EEXIST)
				s->existed = true;
			else
				return rt_error("mkdir %s: %s", s->path, strerror(errno));
		}
		s->fd = openat(s->dir, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (s->fd < 0 && errno == ENOENT && create)
			continue;
		if (s->fd < 0 && errno == ENOENT)
			return 1;
		if (s->fd < 0)
			return rt_error("open %s: %s", s->path, strerror(errno));
		if (flock(s->fd, LOCK_EX) < 0)
			return rt_error("flock %s: %s", s->path, strerror(errno));
		/* removed by the holder before us: take the one there now */
		if (fstat(s->fd, &st) < 0)
			return rt_error("stat %s: %s", s->path, strerror(errno));
		if (st.st_nlink > 0)
			return 0;
		close_fdp(&s->fd);
	}
}

void rt_state_unlock(struct rt_state *s)
{
	close_fdp(&s->fd);
	close_fdp(&s->dir);
	free(s->id);
	free(s->path);
	free(s->bundle);
	free(s->config);
	memset(s, 0, sizeof(*s));
	s->dir = s->fd = -EBADF;
}

static int open_rootfs(void *bfd)
{
	int fd = openat(*(int *)bfd, "rootfs", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/*
 * rootasmd's tree: detached when the mount at rootfs is still the one via.mnt
 * names, or stands on it (what the delegate stacked there detached first).
 */
static int via_cleanup(struct rt_state *s, int bfd)
{
	_cleanup_close_ int rfd = -EBADF;
	char buf[32] = "", p[64];
	uint64_t want;
	ssize_t n;
	int fd;

	fd = openat(s->fd, VIA_RECORD, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : rt_error("open %s/" VIA_RECORD ": %s", s->path, strerror(errno));
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	want = n > 0 ? strtoull(buf, NULL, 10) : 0;
	/*
	 * what the delegate stacked on it in our namespace detached first, or
	 * found wherever it is now (a user's bundle, renamed from a mount
	 * namespace of the owner's): ra_mount_uncover(); on an error the record
	 * stays for the next delete to try again
	 */
	rfd = want ? ra_mount_uncover(open_rootfs, &bfd, want) : -ENOENT;
	if (rfd < 0 && rfd != -ENOENT)
		return rt_error("umount the tree attached at %s/rootfs (mount %" PRIu64 "): %s", s->bundle, want,
				strerror(-rfd));
	if (rfd >= 0) {
		snprintf(p, sizeof(p), "/proc/self/fd/%d", rfd);
		if (umount2(p, MNT_DETACH) < 0)
			return rt_error("umount %s/rootfs: %s", s->bundle, strerror(errno));
	}
	if (unlinkat(s->fd, VIA_RECORD, 0) < 0)
		return rt_error("remove %s/" VIA_RECORD ": %s", s->path, strerror(errno));
	return 0;
}

/*
 * What is left in the private bundle @dfd after its tree is detached: files a
 * killed create (or prepare) left half written (.config.json.XXXX), and
 * .rootasm/ of a prepare killed before its record. Ours alone (a directory of
 * root's 0700 parent); never across a mount (a directory that is one stays,
 * and so does its parent: rmdir then fails, as it must). 0 or -errno.
 */
static int remove_leftovers(int dfd, int depth)
{
	_cleanup_close_ int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct statx stx;
	struct dirent *de;
	DIR *d;
	int r = 0;

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d)
		return -errno;
	fd = -EBADF;	/* the DIR's now */
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") || (depth == 0 && !strcmp(de->d_name, "rootfs")))
			continue;
		if (statx(dirfd(d), de->d_name, AT_SYMLINK_NOFOLLOW, STATX_TYPE, &stx) < 0) {
			r = -errno;
			break;
		}
		if (S_ISDIR(stx.stx_mode)) {
			_cleanup_close_ int sub = -EBADF;

			if ((stx.stx_attributes & STATX_ATTR_MOUNT_ROOT) || depth >= 4)
				continue;
			sub = openat(dirfd(d), de->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			r = sub < 0 ? -errno : remove_leftovers(sub, depth + 1);
			if (r == 0 && unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) < 0)
				r = -errno;
			if (r < 0)
				break;
		} else if (unlinkat(dirfd(d), de->d_name, 0) < 0) {
			r = -errno;
			break;
		}
	}
	closedir(d);
	return r;
}

#define CREATED_MARK	"created"

void rt_state_created(struct rt_state *s)
{
	int fd = openat(s->fd, CREATED_MARK, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd >= 0)
		close(fd);
}

/* /proc/@pid/@what into @buf (NUL-terminated): its length, or 0 when it cannot be read (gone). */
static ssize_t proc_read(int proc, const char *pid, const char *what, char *buf, size_t size)
{
	char p[64];
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "%s/%s", pid, what);
	fd = openat(proc, p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return n;
}

/* Whether /proc/@pid's arguments hold @arg as one of them. */
static bool argv_has(int proc, const char *pid, const char *arg, const char *arg2)
{
	char buf[8192];
	ssize_t n = proc_read(proc, pid, "cmdline", buf, sizeof(buf));

	for (char *a = buf; a < buf + n; a += strlen(a) + 1)
		if (!strcmp(a, arg) || (arg2 && !strcmp(a, arg2)))
			return true;
	return false;
}

/* Whether /proc/@pid's environment holds @entry ("NAME=VALUE"). */
static bool environ_has(int proc, const char *pid, const char *entry)
{
	static char buf[64 << 10];
	ssize_t n = proc_read(proc, pid, "environ", buf, sizeof(buf));

	for (char *a = buf; a < buf + n; a += strlen(a) + 1)
		if (!strcmp(a, entry))
			return true;
	return false;
}

/*
 * Whether /proc/@pid is a process of the create: root's (the delegate's), or
 * in a user namespace root made (a container's process before it executes),
 * and its arguments or its environment say so. Another user can set the
 * variable, for processes of its own only: those are not looked at.
 */
static bool of_the_create(int proc, const char *pid, const struct rt_state *s, const char *mark,
			  const struct stat *our_userns)
{
	char p[64];
	struct stat st;
	uid_t owner = (uid_t)-1;
	int ns;

	snprintf(p, sizeof(p), "%s/status", pid);
	if (fstatat(proc, p, &st, 0) < 0)
		return false;
	if (st.st_uid != 0) {
		struct stat theirs;

		/* (the initial user namespace is "owned" by root too: another user's process is in it) */
		snprintf(p, sizeof(p), "%s/ns/user", pid);
		ns = openat(proc, p, O_RDONLY | O_CLOEXEC);
		if (ns < 0)
			return false;
		if (fstat(ns, &theirs) < 0 || (theirs.st_dev == our_userns->st_dev && theirs.st_ino == our_userns->st_ino) ||
		    ioctl(ns, NS_GET_OWNER_UID, &owner) < 0)
			owner = (uid_t)-1;
		close(ns);
		if (owner != 0)
			return false;
	}
	return argv_has(proc, pid, s->bundle, s->config) || environ_has(proc, pid, mark);
}

/* Wait until each of the @n pidfds @fds is readable (its process dead), @ms at most; close them. */
static void wait_dead(int *fds, size_t n, long ms)
{
	struct pollfd p[64];
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (size_t at = 0; at < n; at += ARRAY_SIZE(p)) {
		size_t k = n - at < ARRAY_SIZE(p) ? n - at : ARRAY_SIZE(p), left = k;

		for (size_t i = 0; i < k; i++)
			p[i] = (struct pollfd){ .fd = fds[at + i], .events = POLLIN };
		while (left) {
			long rest;
			int r;

			clock_gettime(CLOCK_MONOTONIC, &t);
			rest = ms - (t.tv_sec - t0.tv_sec) * 1000 - (t.tv_nsec - t0.tv_nsec) / 1000000;
			if (rest <= 0)
				break;
			r = poll(p, k, (int)rest);
			if (r < 0 && errno != EINTR)
				break;
			for (size_t i = 0; r > 0 && i < k; i++)
				if (p[i].revents) {
					p[i].fd = -1;	/* (poll ignores it from now on) */
					left--;
				}
		}
	}
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
}

/*
 * Kill what a create that did not finish left running for this id: the
 * delegate's processes (its forked container init, before the delegate wrote
 * any state of its own) outlive a killed create, each in mount namespaces
 * that hold the tree. They are found by their arguments (--bundle and the
 * private bundle's path: ours alone, and no process of the container's own,
 * which runs what the config says, has it), or by the environment the
 * delegate was given (RT_ENV_STATE: a delegate that runs the engine's own
 * bundle, RT_RUN_OVER, and what it forked or executed before the container's
 * own process, whose environment is the config's), and waited for until dead.
 */
static void kill_strays(struct rt_state *s)
{
	_cleanup_close_ int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_free_ char *mark = NULL;
	int fds[256];
	size_t n = 0;
	struct dirent *de;
	struct stat ours;
	pid_t self = getpid();
	DIR *d;
	int fd;

	if (proc < 0 || fstatat(proc, "self/ns/user", &ours, 0) < 0 || asprintf(&mark, RT_ENV_STATE "=%s", s->path) < 0 ||
	    (fd = dup(proc)) < 0 || !(d = fdopendir(fd)))
		return;
	/*
	 * every one: each by a pidfd, matched again once its pid is held, so that
	 * a pid used again in between is never signalled; a full set of pidfds
	 * (or no fd left) waited for and closed before going on
	 */
	while ((de = readdir(d))) {
		size_t digits = strspn(de->d_name, "0123456789");
		pid_t pid = atoi(de->d_name);
		bool matched;
		int pfd;

		if (!digits || de->d_name[digits] || pid == self || !of_the_create(proc, de->d_name, s, mark, &ours))
			continue;
		pfd = (int)syscall(SYS_pidfd_open, pid, 0);
		if (pfd < 0 && (errno == EMFILE || errno == ENFILE) && n) {
			wait_dead(fds, n, 2000);
			n = 0;
			pfd = (int)syscall(SYS_pidfd_open, pid, 0);
		}
		if (pfd < 0) {
			/* no pidfd to be had (a filter refuses it): by pid, matched again just before */
			if (errno != ESRCH && of_the_create(proc, de->d_name, s, mark, &ours))
				kill(pid, SIGKILL);
			continue;
		}
		matched = of_the_create(proc, de->d_name, s, mark, &ours);
		if (!matched && n) {
			/* (or no fd left to read /proc with) */
			wait_dead(fds, n, 2000);
			n = 0;
			matched = of_the_create(proc, de->d_name, s, mark, &ours);
		}
		if (!matched || syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0) < 0) {
			close(pfd);
			continue;
		}
		fds[n++] = pfd;
		if (n == ARRAY_SIZE(fds)) {
			wait_dead(fds, n, 2000);
			n = 0;
		}
	}
	closedir(d);
	/* until each is dead (its pidfd readable: its namespaces, and what they held, released) */
	wait_dead(fds, n, 2000);
}

int rt_state_cleanup(struct rt_state *s)
{
	_cleanup_close_ int bfd = -EBADF;

	/*
	 * /proc of another pid namespace: its pids are not the ones kill() and
	 * pidfd_open() take (a stray found there would be another process here),
	 * and /proc/self, which the cleanup reads, is not this process
	 */
	if (!ra_proc_pids_ours())
		return rt_error("cleanup of %s: /proc is not of this process's pid namespace (mount one of it there)",
				s->path);
	if (!s->ran && faccessat(s->fd, CREATED_MARK, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
		kill_strays(s);
	bfd = openat(s->fd, "bundle", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (bfd >= 0) {
		struct rootasm_error e = { 0 };
		bool via = faccessat(s->fd, VIA_RECORD, F_OK, AT_SYMLINK_NOFOLLOW) == 0;

		if (via && via_cleanup(s, bfd) < 0)
			return -1;
		/* nothing to clean up: prepare did not get as far as its record ("not prepared", ENOENT) */
		if (!via && rootasm_bundle_cleanup(ctx(), s->bundle, NULL, NULL, &e) < 0 &&
		    !(e.err == ENOENT && rootasm_error_is_usage(&e)))
			return lib_error(&e);
		if (remove_leftovers(bfd, 0) < 0 ||
		    (unlinkat(bfd, "rootfs", AT_REMOVEDIR) < 0 && errno != ENOENT) ||
		    unlinkat(s->fd, "bundle", AT_REMOVEDIR) < 0)
			return rt_error("remove %s: %s", s->bundle, strerror(errno));
	} else if (errno != ENOENT) {
		return rt_error("open %s: %s", s->bundle, strerror(errno));
	}
	if (unlinkat(s->fd, VIA_RECORD, 0) < 0 && errno != ENOENT)
		return rt_error("remove %s/" VIA_RECORD ": %s", s->path, strerror(errno));
	if (unlinkat(s->fd, CREATED_MARK, 0) < 0 && errno != ENOENT)
		return rt_error("remove %s/" CREATED_MARK ": %s", s->path, strerror(errno));
	if (unlinkat(s->fd, RT_ENGINE_BUNDLE, 0) < 0 && errno != ENOENT)
		return rt_error("remove %s/" RT_ENGINE_BUNDLE ": %s", s->path, strerror(errno));
	if (unlinkat(s->fd, RT_DELEGATE_CONFIG, 0) < 0 && errno != ENOENT)
		return rt_error("remove %s/" RT_DELEGATE_CONFIG ": %s", s->path, strerror(errno));
	if (unlinkat(s->dir, s->id, AT_REMOVEDIR) < 0)
		return rt_error("remove %s: %s", s->path, strerror(errno));
	return 0;
}

/* root.path "rootfs"; the bind mounts' relative sources made absolute (relative to the engine's bundle). */
static int private_config(json_t *cfg, const char *bundle)
{
	json_t *root = json_object_get(cfg, "root"), *m;
	size_t i;

	if (!json_is_object(root)) {
		root = json_object();
		if (json_object_set_new(cfg, "root", root) < 0)
			return -1;
	}
	if (json_object_set_new(root, "path", json_string("rootfs")) < 0)
		return -1;
	json_array_foreach(json_object_get(cfg, "mounts"), i, m) {
		const char *src = json_string_value(json_object_get(m, "source"));
		const char *type = json_string_value(json_object_get(m, "type"));
		bool bind = type && !strcmp(type, "bind");
		json_t *o;
		size_t k;
		char *abs;

		json_array_foreach(json_object_get(m, "options"), k, o) {
			const char *s = json_string_value(o);

			bind |= s && (!strcmp(s, "bind") || !strcmp(s, "rbind"));
		}
		if (!bind || !src || src[0] == '/')
			continue;
		if (asprintf(&abs, "%s/%s", bundle, src) < 0)
			return -1;
		if (json_object_set_new(m, "source", json_string(abs)) < 0) {
			free(abs);
			return -1;
		}
		free(abs);
	}
	return 0;
}

static int write_file_at(int dfd, const char *name, const char *shown, const char *buf, size_t len)
{
	_cleanup_close_ int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0)
		return rt_error("create %s: %s", shown, strerror(errno));
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return rt_error("write %s: %s", shown, n < 0 ? strerror(errno) : "short write");
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The library's refusal of what an annotation chose, in the annotation's words. */
static int choice_error(const struct rt_choice *ch, const struct rootasm_error *e)
{
	char msg[8192];

	return rt_error("annotation %s '%s': %s", ch->ann, ch->value, rootasm_error_format(e, msg, sizeof(msg)));
}

/*
 * Whom the tree of @ch is for, as rootasm_bundle_prepare() takes the bundle's
 * principal: root's bundle (@uid 0) the caller, judged; else that user's;
 * limited to the layouts of @ch->dir. 0 with *who (the caller frees it), or
 * -errno with @e.
 */
static int choice_principal(const struct rt_choice *ch, uid_t uid, struct rootasm_principal **who,
			    struct rootasm_error *e)
{
	const char *dirs[] = { ch->dir };
	int r;

	r = uid == 0 ? rootasm_principal_self(who, e) : rootasm_principal_of_uid(uid, -EBADF, who, e);
	return r < 0 ? r : rootasm_principal_limit(*who, ROOTASM_LIMIT_LAYOUTS, dirs, 1, e);
}

/*
 * rootasmd assembles @ch->layout for the bundle's author (@uid: root's bundle
 * the runtime's own, judged), limited to @ch->dir as the library limits it here: the
 * request says who it is for ("as"); the daemon judges it as that principal's.
 * Sent here, its reply read by via_receive().
 */
static int via_send(struct rt_tree *t, const struct rt_choice *ch, uid_t uid)
{
	/* the engine's writable layer as the tree's upper: the request's "upper" (an administrator's word) */
	struct rootasm_client_assemble_opts o = { .size = sizeof(o), .layout = ch->layout, .upper_dir = t->upper,
						  .work_dir = t->work };
	struct rootasm_principal *who = NULL;
	struct rootasm_error e = { 0 };
	int r;

	r = choice_principal(ch, uid, &who, &e);
	if (r == 0)
		r = rootasm_client_connect(ch->via, &t->via, &e);
	if (r == 0) {
		o.principal = who;
		r = rootasm_client_assemble_send(t->via, &o, &e);
	}
	rootasm_principal_free(who);
	return r < 0 ? choice_error(ch, &e) : 0;
}

/* The tree rootasmd assembled: the reply to via_send(), the client closed. */
static int via_receive(const struct rt_choice *ch, struct rt_tree *t)
{
	struct rootasm_error e = { 0 };
	int tree = rootasm_client_assemble_receive(t->via, &e);

	rootasm_client_close(t->via);
	t->via = NULL;
	return tree < 0 ? choice_error(ch, &e) : tree;
}

/*
 * Over the engine's rootfs (root's bundle: the runtime's own principal,
 * judged), the tree assembled here as rootasmd would assemble it for
 * via_send()'s request: the same principal and limit, the same upper, the
 * library's one reader of layout files; detached, for the delegate's
 * namespace (rt_over_clone()), nothing of it attached in ours or written in
 * the state. Returns the tree's fd, or -1 said.
 */
static int local_assemble(const struct rt_tree *t, const struct rt_choice *ch)
{
	struct rootasm_load_opts o = { .size = sizeof(o), .upper_dir = t->upper, .work_dir = t->work };
	struct rootasm_principal *who = NULL;
	struct rootasm_layout *l = NULL;
	struct rootasm_error e = { 0 };
	int r;

	r = choice_principal(ch, 0, &who, &e);
	if (r == 0) {
		o.principal = who;
		r = rootasm_layout_load(ctx(), ch->layout, &o, &l, &e);
	}
	if (r == 0)
		r = rootasm_assemble(ctx(), l, &e);
	rootasm_layout_free(l);
	rootasm_principal_free(who);
	return r < 0 ? choice_error(ch, &e) : r;
}

/* The tree rootasmd assembled, attached at the private bundle's rootfs. */
static int via_attach(struct rt_state *s, int bfd, const struct rt_choice *ch, struct rt_tree *t)
{
	_cleanup_close_ int tree = -EBADF, rfd = -EBADF;
	bool is_root;
	char id[32];
	uint64_t mid;

	tree = via_receive(ch, t);
	if (tree < 0)
		return -1;
	mid = ra_fd_mount_id(tree, &is_root);
	if (!mid)
		return rt_error("statx %s: the tree's unique mount id (Linux 6.8)", ch->layout);
	rfd = openat(bfd, "rootfs", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (rfd < 0)
		return rt_error("open %s/rootfs: %s", s->bundle, strerror(errno));
	/* the record before the attach: a create killed in between leaves what cleanup needs */
	snprintf(id, sizeof(id), "%" PRIu64 "\n", mid);
	if (write_file_at(s->fd, VIA_RECORD, s->path, id, strlen(id)) < 0)
		return -1;
	if (move_mount(tree, "", rfd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return rt_error("move_mount %s/rootfs: %s", s->bundle, strerror(errno));
	return 0;
}

/*
 * linux.namespaces has a user namespace (made or joined): the host uid of its
 * root in @host (-1: unmapped), unless @host is NULL.
 */
static bool has_userns(json_t *cfg, long long *host)
{
	json_t *lx = json_object_get(cfg, "linux"), *n;
	bool user = false;
	size_t i;

	json_array_foreach(json_object_get(lx, "namespaces"), i, n)
		user |= !strcmp(json_string_value(json_object_get(n, "type")) ?: "", "user");
	if (host) {
		*host = -1;
		json_array_foreach(json_object_get(lx, "uidMappings"), i, n)
			if (json_integer_value(json_object_get(n, "containerID")) == 0)
				*host = json_integer_value(json_object_get(n, "hostID"));
	}
	return user;
}

/*
 * For a container with a user namespace: the state's directories searchable
 * by others (its root is one of them), and --root too, or refused.
 */
static int searchable_for_userns(struct rt_state *s, json_t *cfg)
{
	_cleanup_close_ int d = -EBADF;
	long long host;
	struct stat st;

	if (!has_userns(cfg, &host))
		return 0;
	if (fstatat(s->dir, "..", &st, 0) < 0)
		return rt_error("%s/../..: %s", s->path, strerror(errno));
	if (!(st.st_mode & S_IXOTH)) {
		char who[64] = "a uid of the host";

		if (host >= 0)
			snprintf(who, sizeof(who), "uid %lld of the host", host);
		return rt_error("linux.namespaces has a user namespace, whose root (%s) must reach the rootfs under "
				"--root, which others cannot search (mode %04o): give a --root others may search (0711), "
				"or no rootasm annotation", who, (unsigned)(st.st_mode & 07777));
	}
	d = openat(s->dir, ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d < 0 || fchmod(d, 0711) < 0 || fchmod(s->fd, 0711) < 0)
		return rt_error("chmod 0711 %s: %s", s->path, strerror(errno));
	return 1;
}

/*
 * A delegate that takes --config (crun) runs the engine's own bundle with the
 * private config: its state and every hook's (createContainer and
 * startContainer too, which run in the container's namespaces, where no
 * wrapper of ours can be) then name the engine's bundle and carry the
 * engine's annotations only, as the delegate alone would show them. That
 * config is the private bundle's as prepare left it, with the tree's absolute
 * path as its root and without prepare's own annotation; the private bundle
 * keeps its own (cleanup reads it).
 */
static int delegate_config(struct rt_state *s, int bfd)
{
	_cleanup_close_ int fd = openat(bfd, "config.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_free_ char *buf = NULL, *rootfs = NULL, *text = NULL;
	json_t *cfg, *root;
	struct stat st;
	size_t len = 0;
	int r;

	if (fd < 0 || fstat(fd, &st) < 0)
		return rt_error("open %s/config.json: %s", s->bundle, strerror(errno));
	/* what this process wrote: the private bundle is its owner's directory, which could put another file there */
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1)
		return rt_error("%s/config.json: not the file rootasm-runtime wrote (a regular file of uid %u, one link)",
				s->bundle, (unsigned)geteuid());
	if (ra_read_all(fd, 4u << 20, NULL, NULL, &buf, &len) < 0)
		return rt_error("read %s/config.json: %s", s->bundle, strerror(EIO));
	cfg = json_loadb(buf, len, 0, NULL);
	root = json_object_get(cfg, "root");
	if (!json_is_object(root))
		r = rt_error("%s/config.json: no root", s->bundle);
	else if (asprintf(&rootfs, "%s/rootfs", s->bundle) < 0 || json_object_set_new(root, "path", json_string(rootfs)) < 0)
		r = rt_error("out of memory");
	else {
		json_object_del(json_object_get(cfg, "annotations"), RT_ANN_PREPARED);
		text = json_dumps(cfg, JSON_COMPACT);
		r = text ? write_file_at(s->fd, RT_DELEGATE_CONFIG, s->config, text, strlen(text)) : rt_error("out of memory");
	}
	json_decref(cfg);
	return r;
}

int rt_tree_begin(struct rt_tree *t, const char *bundle, json_t *cfg, uid_t uid, const struct rt_choice *ch)
{
	char why[PATH_MAX + 256];

	/*
	 * Where the container's writes go, said to the engine when it is not
	 * where the engine looks (its writable layer of the container).
	 */
	if (!ch->own)
		rt_warn("annotation %s '%s' replaces the engine's image: what the container writes goes to rootasm's tree, "
			"not to the engine's writable layer (the engine's diff, commit and export do not see it)",
			ch->ann, ch->value);
	else if (uid != 0)
		/* an upper directory on the host is an administrator's (authorize): a user's bundle gets its own */
		rt_warn("the engine's image, in a bundle of uid %u: what the container writes goes to the tree's own "
			"upper, not to the engine's writable layer (the engine's diff, commit and export do not see it)",
			(unsigned)uid);
	else if (rt_engine_layer(bundle, cfg, &t->upper, &t->work, why, sizeof(why)) == 0)
		rt_warn("the engine's image, whose bundle %s: what the container writes goes to the tree's own upper, "
			"not to the engine's writable layer (the engine's diff, commit and export do not see it)", why);
	return ch->via ? via_send(t, ch, uid) : 0;
}

void rt_tree_done(struct rt_tree *t)
{
	rootasm_client_close(t->via);
	close_fdp(&t->fd);
	free(t->upper);
	free(t->work);
	*t = (struct rt_tree)RT_TREE_INIT;
}

int rt_state_prepare(struct rt_state *s, const char *bundle, json_t *cfg, uid_t uid, gid_t gid,
		     const struct rt_choice *ch, struct rt_tree *t, enum rt_run mode)
{
	_cleanup_close_ int bfd = -EBADF;
	_cleanup_free_ char *text = NULL, *shown = NULL;
	/* (over the engine's rootfs, the container reaches it as the engine made it: not through the state) */
	int userns = mode == RT_RUN_OVER ? 0 : searchable_for_userns(s, cfg);
	bool config = mode == RT_RUN_CONFIG;

	if (userns < 0)
		return -1;
	/* over the engine's rootfs, rootasmd's tree goes to the delegate as it came (rt_over_clone()) */
	if (mode == RT_RUN_OVER && ch->via)
		return (t->fd = via_receive(ch, t)) < 0 ? -1 : 0;
	/*
	 * and so does one assembled here, unless the container has a user
	 * namespace of its own: its layers are idmapped to it (the private
	 * bundle's prepare, below)
	 */
	if (mode == RT_RUN_OVER && !has_userns(cfg, NULL))
		return (t->fd = local_assemble(t, ch)) < 0 ? -1 : 0;
	if (mkdirat(s->fd, "bundle", 0700) < 0)
		return rt_error("mkdir %s: %s", s->bundle, strerror(errno));
	bfd = openat(s->fd, "bundle", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (bfd < 0 || fchownat(bfd, "", uid, gid, AT_EMPTY_PATH) < 0)
		return rt_error("chown %s to %u:%u: %s", s->bundle, (unsigned)uid, (unsigned)gid, strerror(errno));
	/* (made just above, in a directory only root writes: no symlink can be there) */
	if (userns && fchmodat(s->fd, "bundle", 0711, 0) < 0)
		return rt_error("chmod 0711 %s: %s", s->bundle, strerror(errno));
	if (asprintf(&shown, "%s/config.json", s->bundle) < 0) {
		shown = NULL;
		return rt_error("out of memory");
	}
	/* the hooks in the runtime's namespace see the engine's bundle in the state, as without rootasm (said) */
	if (mode == RT_RUN_PRIVATE && rt_hooks_wrap(cfg, bundle) < 0)
		return -1;
	if (private_config(cfg, bundle) < 0 || !(text = json_dumps(cfg, JSON_COMPACT)))
		return rt_error("out of memory");
	if (write_file_at(bfd, "config.json", shown, text, strlen(text)) < 0 ||
	    (mode == RT_RUN_PRIVATE && write_file_at(s->fd, RT_ENGINE_BUNDLE, s->path, bundle, strlen(bundle)) < 0))
		return -1;
	if (mkdirat(bfd, "rootfs", 0755) < 0)
		return rt_error("mkdir %s/rootfs: %s", s->bundle, strerror(errno));
	if (ch->via) {
		if (via_attach(s, bfd, ch, t) < 0)
			return -1;
		return config ? delegate_config(s, bfd) : 0;
	}
	{
		/* the layout's directory a limit of the bundle's principal (the library judges it) */
		const char *dirs[] = { ch->dir };
		struct rootasm_bundle_opts o = { .size = sizeof(o), .layout = ch->layout, .layout_dirs = dirs,
						 .n_layout_dirs = 1, .upper_dir = t->upper, .work_dir = t->work };
		struct rootasm_error e = { 0 };

		if (rootasm_bundle_prepare(ctx(), s->bundle, &o, NULL, &e) < 0)
			return choice_error(ch, &e);
	}
	return config ? delegate_config(s, bfd) : 0;
}

/*
 * Whether @path is a namespace's file in /proc (/proc/PID/ns/NAME,
 * /proc/PID/task/TID/ns/NAME, PID also self or thread-self): a magic link to
 * a file of nsfs, which no tree has.
 */
static bool proc_ns_file(const char *path)
{
	const char *p = path + strlen("/proc/");
	size_t n;

	if (strncmp(path, "/proc/", strlen("/proc/")))
		return false;
	for (int task = 0; task < 2; task++) {
		n = strspn(p, "0123456789");
		if (!n && !task && !strncmp(p, "self/", 5))
			n = 4;
		else if (!n && !task && !strncmp(p, "thread-self/", 12))
			n = 11;
		if (!n || p[n] != '/')
			return false;
		p += n + 1;
		if (!strncmp(p, "ns/", 3))
			return p[3] && p[3] != '.' && !strchr(p + 3, '/');
		if (task || strncmp(p, "task/", 5))
			return false;
		p += 5;
	}
	return false;
}

/*
 * During one rt_over_find(): the target's identity, the paths covered()
 * found there and not a symlink, and the symlinks with what they say (the
 * judged paths share most of their directories and links, /usr, /bin, the
 * bundle's: each looked at once); our working directory, once asked.
 */
static struct {
	char *path[128];
	size_t n;
	struct {
		char *path, *to;	/* a symlink found on the way, and what it says */
	} link[32];
	size_t nlinks;
	char *cwd;
	dev_t dev;	/* the target: a step that is it by another name (a case-folding directory) is covered */
	ino_t ino;
} walk;

static bool plain_has(const char *p)
{
	for (size_t i = 0; i < walk.n; i++)
		if (!strcmp(walk.path[i], p))
			return true;
	return false;
}

static void plain_add(const char *p)
{
	if (walk.n < ARRAY_SIZE(walk.path) && (walk.path[walk.n] = strdup(p)))
		walk.n++;
}

static const char *link_known(const char *p)
{
	for (size_t i = 0; i < walk.nlinks; i++)
		if (!strcmp(walk.link[i].path, p))
			return walk.link[i].to;
	return NULL;
}

static void link_add(const char *p, const char *to)
{
	char *a, *b;

	if (walk.nlinks >= ARRAY_SIZE(walk.link) || !(a = strdup(p)))
		return;
	if (!(b = strdup(to))) {
		free(a);
		return;
	}
	walk.link[walk.nlinks].path = a;
	walk.link[walk.nlinks++].to = b;
}

static void walk_forget(void)
{
	free(walk.cwd);
	walk.cwd = NULL;
	while (walk.n)
		free(walk.path[--walk.n]);
	while (walk.nlinks) {
		walk.nlinks--;
		free(walk.link[walk.nlinks].path);
		free(walk.link[walk.nlinks].to);
	}
}

/*
 * Whether the delegate, in a namespace where the tree covers @target, could
 * reach @path in the tree: @path resolved here one component and one symlink
 * at a time, as the kernel does, passes @target (or what lies below it) at
 * any step, or a directory that is @target by another name (its dev/ino: a
 * case-folding directory's other spelling, a bind mount of it); the part of
 * it that is not there is taken as written ('..' included). Also when it
 * cannot be judged: a relative path, one too long, too many symlinks, a part
 * that cannot be looked at, one through /proc (whose links name this
 * process's view: /proc/self/cwd is not the delegate's), a namespace's file
 * in /proc (a namespace joined by path, as the CRI plugin's /proc/PID/ns/ipc)
 * excepted.
 */
static bool covered(const char *target, const char *path)
{
	char cur[PATH_MAX] = "", rest[PATH_MAX], link[PATH_MAX], tmp[PATH_MAX];
	const char *known;
	bool there = true;
	int links = 0;

	if (path[0] != '/' || strlen(path) >= sizeof(rest))
		return true;
	if (proc_ns_file(path))
		return false;
	/* (as written: the delegate's lookup enters the tree wherever it passes @target) */
	if (ra_path_below(path, target))
		return true;
	strcpy(rest, path);
	while (rest[0]) {
		char *c = rest + strspn(rest, "/"), *end = c + strcspn(c, "/");
		size_t clen = (size_t)(end - c), len = strlen(cur);
		struct stat st;
		ssize_t n;

		if (!clen)
			break;
		if (clen == 1 && c[0] == '.') {
			memmove(rest, end, strlen(end) + 1);
			continue;
		}
		if (clen == 2 && c[0] == '.' && c[1] == '.') {
			char *slash = strrchr(cur, '/');

			if (slash)
				*slash = '\0';
			memmove(rest, end, strlen(end) + 1);
			if (cur[0] && ra_path_below(cur, target))
				return true;
			continue;
		}
		if (len + 1 + clen >= sizeof(cur))
			return true;
		cur[len] = '/';
		memcpy(cur + len + 1, c, clen);
		cur[len + 1 + clen] = '\0';
		memmove(rest, end, strlen(end) + 1);
		if (ra_path_below(cur, target) || ra_path_below(cur, "/proc"))
			return true;
		if (!there || plain_has(cur))
			continue;
		if ((known = link_known(cur))) {
			if (++links > 40)
				return true;
			strcpy(link, known);
		} else {
			if (lstat(cur, &st) < 0) {
				if (errno != ENOENT)
					return true;
				/* not there: the rest as written */
				there = false;
				continue;
			}
			if (!S_ISLNK(st.st_mode)) {
				if (st.st_dev == walk.dev && st.st_ino == walk.ino)
					return true;
				plain_add(cur);
				continue;
			}
			n = readlink(cur, link, sizeof(link) - 1);
			if (n <= 0 || ++links > 40)
				return true;
			link[n] = '\0';
			link_add(cur, link);
		}
		/* the link's target, then what was left of the path */
		if (snprintf(tmp, sizeof(tmp), "%s/%s", link, rest) >= (int)sizeof(tmp))
			return true;
		strcpy(rest, tmp);
		if (link[0] == '/')
			cur[0] = '\0';
		else
			*strrchr(cur, '/') = '\0';
	}
	return false;
}

/* covered() for @rel taken relative to @base (the bundle, a working directory); one too long is covered. */
static bool covered_from(const char *target, const char *base, const char *rel)
{
	char joined[PATH_MAX];

	return snprintf(joined, sizeof(joined), "%s/%s", base, rel) >= (int)sizeof(joined) || covered(target, joined);
}

/*
 * Whether @value names a path @target covers: @value itself, or one of the
 * parts ':', ',', ';', '=' and blanks separate in it (an overlay's
 * lowerdir=/a:/b, D-Bus's unix:path=/run/...); its relative parts are not
 * paths to this judgment (an option's key, a name).
 */
static bool names_covered(const char *target, const char *value)
{
	_cleanup_free_ char *copy = NULL;
	char *save = NULL, *p;

	if (value[0] == '/' && covered(target, value))
		return true;
	if (!strpbrk(value, ":,;= \t"))
		return false;
	copy = strdup(value);
	if (!copy)
		return true;
	for (p = strtok_r(copy, ":,;= \t", &save); p; p = strtok_r(NULL, ":,;= \t", &save))
		if (p[0] == '/' && covered(target, p))
			return true;
	return false;
}

/*
 * Whether @entry (NAME=VALUE, of the delegate's environment or a hook's)
 * names a path @target covers by a part the dynamic loader (LD_*) or
 * sd_notify (NOTIFY_SOCKET) takes relative to the working directory: the
 * runtime's, or the bundle the delegate changes to; also any part with a
 * '$' ($ORIGIN, which the loader expands). The loader's parts are separated
 * by ':', ';' and blanks; an empty one of LD_LIBRARY_PATH is that directory.
 */
static bool relative_covered(const char *target, const char *bundle, const char *entry)
{
	_cleanup_free_ char *copy = NULL;
	const char *v = strchr(entry, '=') + 1;
	bool ld = !strncmp(entry, "LD_", 3);

	if (!ld && strncmp(entry, "NOTIFY_SOCKET=", 14))
		return false;
	copy = strdup(v);
	if (!walk.cwd)
		walk.cwd = getcwd(NULL, 0);
	if (!copy || !walk.cwd)
		return true;
	for (char *p = copy, *next; p; p = next) {
		next = ld ? p + strcspn(p, ":; \t") : p + strlen(p);
		next = *next ? (*next = '\0', next + 1) : NULL;
		if (strchr(p, '$'))
			return true;
		if (p[0] == '/' || p[0] == '@' || (!p[0] && strncmp(entry, "LD_LIBRARY_PATH=", 16)))
			continue;
		if (covered_from(target, walk.cwd, p) || covered_from(target, bundle, p))
			return true;
	}
	return false;
}

/* An environment entry (NAME=VALUE) that names a path @target covers (names_covered(), relative_covered()). */
static bool env_covered(const char *target, const char *bundle, const char *entry)
{
	const char *eq = strchr(entry, '=');

	return eq && (names_covered(target, eq + 1) || relative_covered(target, bundle, entry));
}

/*
 * Whether a key of @cfg, in any object but the maps of free names
 * (annotations, sysctl, unified), is a judged key spelt otherwise, or one
 * its object has twice but for case, or not ASCII: runc's JSON decoder
 * (Go's) matches keys whatever their case (and folds some non-ASCII letters
 * to ASCII ones), and takes the last, where this judgment reads the key as
 * written.
 */
static bool key_variant(json_t *v)
{
	static const char *const judged[] = { "root", "path", "mounts", "source", "options", "hooks", "linux",
					      "seccomp", "listenerPath", "namespaces", "annotations", "env", "args",
					      "prestart", "createRuntime", "createContainer", "startContainer",
					      "poststart", "poststop" };
	const char *key, *other;
	json_t *o, *x;
	size_t i;

	if (json_is_array(v)) {
		json_array_foreach(v, i, o)
			if (key_variant(o))
				return true;
		return false;
	}
	json_object_foreach(v, key, o) {
		for (const char *c = key; *c; c++)
			if ((unsigned char)*c >= 0x80)
				return true;
		for (i = 0; i < ARRAY_SIZE(judged); i++)
			if (!strcasecmp(key, judged[i]) && strcmp(key, judged[i]))
				return true;
		json_object_foreach(v, other, x)
			if (other != key && !strcasecmp(key, other))
				return true;
		if (strcmp(key, "annotations") && strcmp(key, "sysctl") && strcmp(key, "unified") && key_variant(o))
			return true;
	}
	return false;
}

/*
 * Whether an option of a mount (@opt, one of mounts[].options) names a path
 * @target covers, every option of a comma-separated list: the values of the
 * overlay's directory options, each part, relative ones too (the delegate
 * takes them from the bundle: covered, unjudged), and every absolute path in
 * any other value.
 */
static bool option_covered(const char *target, const char *opt)
{
	static const char *const dirs[] = { "lowerdir", "lowerdir+", "upperdir", "workdir", "datadir+" };
	_cleanup_free_ char *copy = strdup(opt);
	char *save = NULL, *o;

	/* (overlayfs takes '\\' as an escape: what it names is not what is written) */
	if (!copy || strchr(opt, '\\'))
		return true;
	for (o = strtok_r(copy, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(o, '='), *save2 = NULL, *part;
		bool dir = false;

		if (!eq)
			continue;
		*eq = '\0';
		for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
			dir |= !strcmp(o, dirs[i]);
		if (!dir) {
			if (names_covered(target, eq + 1))
				return true;
			continue;
		}
		for (part = strtok_r(eq + 1, ":", &save2); part; part = strtok_r(NULL, ":", &save2))
			if (covered(target, part))
				return true;
	}
	return false;
}

/*
 * Whether the tree may cover @target in the delegate's namespace: never
 * where the system's programs, libraries, configuration and kernel
 * interfaces are, nor over anything the delegate reads or writes there
 * (@reads: its program, the engine's bundle as given and as resolved, its
 * config.json, its state, its log and pid files; @cfg's hooks, mount
 * sources, paths in mount options (an overlay's lowerdir=), namespaces
 * joined by path, seccomp listener, the paths its annotations give (crun's
 * run.oci.hooks.stdout, relative ones the bundle's); every path in the
 * delegate's environment (LD_PRELOAD, NOTIFY_SOCKET, D-Bus's address, ...)):
 * it would have them from the tree, which an image's author wrote. (A
 * target with ':' or ',' in it, which no engine makes, is never covered:
 * those separate the paths of an option.)
 */
static bool over_allowed(const char *target, const char *bundle, json_t *cfg, const char *const *reads, size_t n)
{
	static const char *const sys[] = { "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
					   "/etc", "/proc", "/sys", "/dev", "/boot" };
	json_t *hooks = json_object_get(cfg, "hooks"), *lx = json_object_get(cfg, "linux"), *list, *h, *m, *o;
	const char *kind, *key, *v;
	size_t i, k;

	if (strpbrk(target, ":,"))
		return false;
	for (i = 0; i < ARRAY_SIZE(sys); i++)
		if (ra_path_below(target, sys[i]))
			return false;
	v = json_string_value(json_object_get(json_object_get(lx, "seccomp"), "listenerPath"));
	if (v && names_covered(target, v))
		return false;
	json_array_foreach(json_object_get(lx, "namespaces"), i, o)
		if ((v = json_string_value(json_object_get(o, "path"))) && names_covered(target, v))
			return false;
	json_object_foreach(json_object_get(cfg, "annotations"), key, o) {
		if (!(v = json_string_value(o)))
			continue;
		/* (crun opens a hook's output file relative to the bundle) */
		if (!strncmp(key, "run.oci.hooks.", strlen("run.oci.hooks.")) && v[0] && v[0] != '/' &&
		    covered_from(target, bundle, v))
			return false;
		if (names_covered(target, v))
			return false;
	}
	for (char **e = environ; *e; e++)
		if (env_covered(target, bundle, *e))
			return false;
	if (key_variant(cfg))
		return false;
	for (i = 0; i < n; i++)
		if (reads[i] && covered(target, reads[i]))
			return false;
	/* a hook: its program, and what its arguments and environment name (it runs in the delegate's namespace) */
	json_object_foreach(hooks, kind, list) {
		json_array_foreach(list, i, h) {
			const char *p = json_string_value(json_object_get(h, "path"));

			if (p && covered(target, p))
				return false;
			json_array_foreach(json_object_get(h, "args"), k, o)
				if ((v = json_string_value(o)) && names_covered(target, v))
					return false;
			json_array_foreach(json_object_get(h, "env"), k, o)
				if ((v = json_string_value(o)) && env_covered(target, bundle, v))
					return false;
		}
	}
	/* (a relative source is the bundle's, as the delegate takes a bind's) */
	json_array_foreach(json_object_get(cfg, "mounts"), i, m) {
		const char *src = json_string_value(json_object_get(m, "source"));

		if (src && (src[0] == '/' ? covered(target, src) : covered_from(target, bundle, src)))
			return false;
		json_array_foreach(json_object_get(m, "options"), k, o)
			if ((v = json_string_value(o)) && option_covered(target, v))
				return false;
	}
	return true;
}

int rt_over_find(json_t *cfg, const char *bundle, uid_t uid, const char *const *reads, size_t n_reads,
		 struct rt_over *o)
{
	const char *rp = json_string_value(json_object_get(json_object_get(cfg, "root"), "path"));
	_cleanup_free_ char *joined = NULL;
	_cleanup_close_ int fd = -EBADF;
	char why[PATH_MAX + 128];
	struct statx stx;
	bool allowed;

	o->tree = -EBADF;
	/* a user's bundle: its root.path is the user's to name, and the delegate is root */
	if (uid != 0 || !rp || !*rp)
		return 0;
	if (rp[0] != '/' && asprintf(&joined, "%s/%s", bundle, rp) < 0) {
		joined = NULL;
		return rt_error("out of memory");
	}
	/* as the delegate resolves it (symlinks followed); what does not resolve, the delegate says */
	if (!realpath(joined ? joined : rp, o->target))
		return 0;
	fd = open(o->target, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/* the engine's rootfs is a mount (its overlay): a directory that is not, stays in the private bundle */
	if (fd < 0 || statx(fd, "", AT_EMPTY_PATH, STATX_INO, &stx) < 0 ||
	    !(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) || !(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
		return 0;
	/* and only root could put another directory at that path until the delegate has run (the trust rule) */
	if (ra_admin_trusted(fd, -EBADF, why, sizeof(why)) < 0)
		return 0;
	o->dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
	o->ino = stx.stx_ino;
	walk.dev = o->dev;
	walk.ino = o->ino;
	allowed = over_allowed(o->target, bundle, cfg, reads, n_reads);
	walk_forget();
	return allowed ? 1 : 0;
}

int rt_over_clone(struct rt_state *s, struct rt_over *o, struct rt_tree *t)
{
	_cleanup_close_ int bfd = -EBADF;

	/*
	 * the tree, detached (rootasmd's, or local_assemble()'s): the delegate's
	 * namespace is the only one it is ever attached in, gone with the
	 * container (or with this process before its delegate runs): nothing of
	 * it for cleanup to find
	 */
	if (t->fd >= 0) {
		o->tree = t->fd;
		t->fd = -EBADF;
	} else {
		bfd = openat(s->fd, "bundle", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		o->tree = bfd < 0 ? -1 : open_tree(bfd, "rootfs", OPEN_TREE_CLONE | AT_RECURSIVE | AT_SYMLINK_NOFOLLOW |
								 OPEN_TREE_CLOEXEC);
		if (o->tree < 0)
			return rt_error("open_tree %s/rootfs: %s", s->bundle, strerror(errno));
	}
	return 0;
}

static int over_fail(char *msg, size_t size, const char *what, const char *target, int err)
{
	/* (in the vfork child: strerrordesc_np(), a static string; strerror() may allocate for an unknown errno) */
	snprintf(msg, size, RT_NAME ": the engine's rootfs %s: %s: %s", target, what,
		 strerrordesc_np(err) ?: "unknown error");
	return -1;
}

int rt_over_enter(const struct rt_over *o, char *msg, size_t size)
{
	struct mount_attr a = { .propagation = MS_SLAVE };
	struct stat st;
	int t, r = 0;

	if (unshare(CLONE_NEWNS) < 0)
		return over_fail(msg, size, "unshare(CLONE_NEWNS)", o->target, errno);
	/*
	 * a clone of a shared tree is a peer of it: what the delegate mounts on
	 * it (a container without a mount namespace: /proc, /dev, /sys) would
	 * show on ours and in every namespace that has a copy; its root private
	 * (volumes below keep what the layout gave them), rootasmd's as well
	 * whatever it sent. Here, not before the unshare: the tree is detached
	 * (the kernel refuses to change a mount attached in another namespace),
	 * so no mount of the runtime's namespace is touched whatever the fd is.
	 */
	if (mount_setattr(o->tree, "", AT_EMPTY_PATH, &(struct mount_attr){ .propagation = MS_PRIVATE },
			  sizeof(struct mount_attr)) < 0)
		return over_fail(msg, size, "mount_setattr of the tree's root (MS_PRIVATE)", o->target, errno);
	t = open(o->target, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (t < 0)
		return over_fail(msg, size, "open", o->target, errno);
	if (fstat(t, &st) < 0)
		r = over_fail(msg, size, "stat", o->target, errno);
	else if (st.st_dev != o->dev || st.st_ino != o->ino)
		r = over_fail(msg, size, "not the directory judged", o->target, ESTALE);
	/*
	 * ours from here only: attached on a mount that is shared, the tree would
	 * show on the engine's rootfs in every namespace of its peer group (ours
	 * too); a slave still sees what they mount
	 */
	else if (mount_setattr(t, "", AT_EMPTY_PATH, &a, sizeof(a)) < 0)
		r = over_fail(msg, size, "mount_setattr(MS_SLAVE)", o->target, errno);
	else if (move_mount(o->tree, "", t, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		r = over_fail(msg, size, "move_mount", o->target, errno);
	close(t);
	return r;
}
