// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The probe's answers kept across processes: once per boot, not once per
 * process. A root caller writes what it probed to /run/rootasm/probe.cache
 * (ROOTASM_PROBE_CACHE overrides the path; empty: no file), readable by all.
 * The file starts with a key: everything that can change an answer within
 * one boot, or tell one boot or kernel from another:
 *
 *   boot_id    /proc/sys/kernel/random/boot_id
 *   kernel     uname() release and version
 *   modules    overlay, squashfs, erofs, loop in /proc/modules (name:size)
 *   sysctl     user.max_user_namespaces, kernel.unprivileged_userns_clone,
 *              kernel.apparmor_restrict_unprivileged_userns
 *   caller     its user namespace, root directory and /dev/loop-control
 *              (dev:ino), euid, effective capabilities, seccomp mode and LSM
 *              label: what it may try ("not permitted", or a filter's
 *              ENOSYS) is its own. Not its mount namespace as such: one with
 *              the same root and loop control gets the same answers
 *
 * A reader recomputes the key (a few small reads, tens of microseconds) and
 * takes the answers only when every byte of it matches; otherwise it probes
 * for itself and, if it is root with CAP_SYS_ADMIN in the initial user
 * namespace and no seccomp filter, writes the file anew. The file is trusted
 * only when it and its directory are root's and nobody else may write them.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <linux/capability.h>

#include "chase.h"
#include "context.h"
#include "probe.h"
#include "util.h"

#define PC_MAGIC	"rootasm-probe-cache 1\n"
#define PC_DEFAULT	"/run/rootasm/probe.cache"
#define PC_MAX		16384

/* The cache file's path: NULL when none is kept. */
static const char *pc_path(void)
{
	const char *p = secure_getenv("ROOTASM_PROBE_CACHE");

	if (!p)
		return PC_DEFAULT;
	return p[0] == '/' ? p : NULL;
}

/* The directory of the cache file @path (absolute) into @dir; returns its last '/'. */
static const char *pc_dir(const char *path, char *dir, size_t size)
{
	const char *base = strrchr(path, '/');

	snprintf(dir, size, "%.*s", base == path ? 1 : (int)(base - path), path);
	return base;
}

/* Up to @size - 1 bytes of a small file, without the trailing newline; "-" when it is not there. */
static void small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, size - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0) {
		snprintf(buf, size, "-");
		return;
	}
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\0'))
		n--;
	buf[n] = '\0';
}

/* The modules whose presence can change an answer, as "name:size,...". */
static void modules(char *out, size_t size)
{
	static const char *const want[] = { "overlay", "squashfs", "erofs", "loop" };
	_cleanup_fclose_ FILE *f = fopen("/proc/modules", "re");
	char line[512];
	size_t n = 0;

	out[0] = '\0';
	if (!f) {
		snprintf(out, size, "-");
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char name[64];
		unsigned long sz;

		if (sscanf(line, "%63s %lu", name, &sz) != 2)
			continue;
		for (size_t i = 0; i < ARRAY_SIZE(want); i++)
			if (!strcmp(name, want[i]) && n < size)
				n += snprintf(out + n, size - n, "%s%s:%lu", n ? "," : "", name, sz);
	}
	if (!out[0])
		snprintf(out, size, "-");
}

/*
 * The key block: every line of the file before the answers. *ret_writer: the
 * caller may write the file (root with CAP_SYS_ADMIN in the initial user
 * namespace, no seccomp filter: the answers most callers get; a narrower
 * caller probes for itself and leaves the file to it).
 */
static int pc_key(char *buf, size_t size, bool *ret_writer)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { { 0 } };
	char boot[64], mods[256], s1[32], s2[32], s3[32], lsm[128], sec[16];
	struct stat ns, loop, root;
	struct utsname u;
	int n;

	small("/proc/sys/kernel/random/boot_id", boot, sizeof(boot));
	if (!strcmp(boot, "-") || uname(&u) < 0 || stat("/proc/self/ns/user", &ns) < 0 ||
	    stat("/", &root) < 0 || syscall(SYS_capget, &h, d) < 0)
		return -ENOENT;	/* no key, no cache */
	if (stat("/dev/loop-control", &loop) < 0)
		loop.st_dev = loop.st_ino = 0;
	/* 0: none, 2: a filter (strict mode would not be here to ask) */
	snprintf(sec, sizeof(sec), "%d", prctl(PR_GET_SECCOMP, 0, 0, 0, 0));
	small("/proc/thread-self/attr/current", lsm, sizeof(lsm));
	modules(mods, sizeof(mods));
	small("/proc/sys/user/max_user_namespaces", s1, sizeof(s1));
	small("/proc/sys/kernel/unprivileged_userns_clone", s2, sizeof(s2));
	small("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", s3, sizeof(s3));
	n = snprintf(buf, size, PC_MAGIC "boot_id %s\nkernel %s %s\nmodules %s\nsysctl %s,%s,%s\n"
		     "caller userns=%lu:%lu root=%lu:%lu loop-control=%lu:%lu euid=%u caps=%08x%08x seccomp=%s lsm=%s\n",
		     boot, u.release, u.version, mods, s1, s2, s3, (unsigned long)ns.st_dev, (unsigned long)ns.st_ino,
		     (unsigned long)root.st_dev, (unsigned long)root.st_ino, (unsigned long)loop.st_dev,
		     (unsigned long)loop.st_ino, (unsigned int)geteuid(), d[1].effective, d[0].effective, sec, lsm);
	if (ret_writer)
		*ret_writer = geteuid() == 0 && (d[0].effective & (1U << CAP_SYS_ADMIN)) && !strcmp(sec, "0") &&
			      ra_host_ids();
	return n > 0 && (size_t)n < size ? n : -ENAMETOOLONG;
}

void ra_probe_cache_load(struct rootasm_ctx *c)
{
	_cleanup_close_ int dfd = -EBADF, fd = -EBADF;
	_cleanup_free_ char *buf = NULL;
	const char *path = pc_path(), *base;
	char key[1024], dir[PATH_MAX];
	struct stat st;
	ssize_t n;
	int klen;

	if (c->pcache != RA_PCACHE_UNREAD)
		return;
	c->pcache = RA_PCACHE_MISS;
	if (!path || (klen = pc_key(key, sizeof(key), NULL)) < 0)
		return;
	base = pc_dir(path, dir, sizeof(dir));
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &st) < 0 || !ra_roots_alone(&st))
		return;
	fd = openat(dfd, base + 1, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !ra_roots_alone(&st) || st.st_size > PC_MAX)
		return;
	buf = malloc(PC_MAX + 1);
	if (!buf)
		return;
	n = read(fd, buf, PC_MAX);
	if (n < klen || memcmp(buf, key, klen))
		return;
	buf[n] = '\0';
	for (char *line = buf + klen, *next; *line; line = next) {
		char name[64];
		int state, off = 0;

		next = strchr(line, '\n');
		if (!next)
			break;	/* a cut-off line: take nothing more */
		*next++ = '\0';
		if (sscanf(line, "%63s %d %n", name, &state, &off) < 2 || (state != 1 && state != -1 && state != -2))
			continue;
		for (unsigned int f = 0; f < RA_FEAT_COUNT; f++)
			if (!strcmp(name, rootasm_feature_name(f)) && !c->cache[f]) {
				c->cache[f] = (signed char)state;
				snprintf(c->detail[f], RA_DETAIL_MAX, "%s", off ? line + off : "");
			}
	}
	c->pcache = RA_PCACHE_HIT;
}

void ra_probe_cache_save(struct rootasm_ctx *c)
{
	_cleanup_close_ int dfd = -EBADF, fd = -EBADF;
	_cleanup_free_ char *buf = NULL;
	const char *path = pc_path(), *base;
	char dir[PATH_MAX], tmp[64], proc[64];
	bool writer = false;
	struct stat st;
	size_t n;
	int klen;

	if (!c->pdirty || !path || geteuid() != 0)
		return;
	c->pdirty = false;
	buf = malloc(PC_MAX);
	if (!buf || (klen = pc_key(buf, PC_MAX, &writer)) < 0 || !writer)
		return;
	n = klen;
	for (unsigned int f = 0; f < RA_FEAT_COUNT && n < PC_MAX; f++)
		if (c->cache[f])
			n += snprintf(buf + n, PC_MAX - n, "%s %d %s\n", rootasm_feature_name(f), c->cache[f],
				      c->detail[f]);
	if (n >= PC_MAX)
		return;
	base = pc_dir(path, dir, sizeof(dir));
	if (!strcmp(path, PC_DEFAULT))
		(void)mkdir(dir, 0755);
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &st) < 0 || !ra_roots_alone(&st))
		return;
	/* complete or not at all: an unnamed file, filled, then linked under a temporary name and renamed */
	fd = openat(dfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, buf, n) != (ssize_t)n || fchmod(fd, 0644) < 0)
		return;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	snprintf(tmp, sizeof(tmp), ".probe.cache.%d", (int)getpid());
	if (linkat(AT_FDCWD, proc, dfd, tmp, AT_SYMLINK_FOLLOW) < 0)
		return;
	if (renameat(dfd, tmp, dfd, base + 1) < 0)
		(void)unlinkat(dfd, tmp, 0);
}
