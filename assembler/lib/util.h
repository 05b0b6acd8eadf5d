/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internal helpers: fd ownership, cleanup attributes, error context, syscalls. */
#ifndef ROOTASM_UTIL_H
#define ROOTASM_UTIL_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/openat2.h>

#include "rootasm.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static inline void close_fdp(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;

		close(*fd);	/* never retried: the fd is gone either way */
		errno = saved;
	}
}

static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

/* Free a NULL-terminated array of strings and the strings. */
static inline void strv_free(char **v)
{
	for (char **i = v; i && *i; i++)
		free(*i);
	free(v);
}

/* Free an array of @n strings and the strings. */
static inline void strvn_free(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

#define _cleanup_close_ __attribute__((cleanup(close_fdp)))
#define _cleanup_free_ __attribute__((cleanup(freep)))
#define _cleanup_fclose_ __attribute__((cleanup(fclosep)))

/* Hand ownership of a pointer on: returns it and leaves NULL behind. */
/* Root's, and writable by nobody else: what root may trust (a probe cache, a store's layer image). */
static inline bool ra_roots_alone(const struct stat *st)
{
	return st->st_uid == 0 && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

/* a function exported under the symbol version @sym ("NAME@@VERSION" the default, "NAME@VERSION" an old one) */
#define RA_SYMVER(sym) __attribute__((visibility("default"), used, symver(sym)))
#define TAKE_PTR(p) ({ __typeof__(p) _p = (p); (p) = NULL; _p; })

/* Hand ownership of an fd on: returns it and leaves -EBADF behind. */
#define take_fd(fd) ({ int _t = (fd); (fd) = -EBADF; _t; })

/*
 * Fill @e (when non-NULL) and return -err. @path may be NULL. The kernel's
 * fs_context message is read from @fsfd when it is >= 0.
 */
int ra_err(struct rootasm_error *e, int err, int fsfd, const char *op, const char *path,
	   const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Keep the whole @path and @file of the error just put in @e when its fields cut them (rootasm_err_set()). */
void ra_err_long(const struct rootasm_error *e, const char *path, const char *file);

/* Out of memory while doing @op: fills @e and returns -ENOMEM. */
int ra_oom(struct rootasm_error *e, const char *op);

/* The same, with an error kind (usage, unsupported, permission). */
int ra_err_kind(struct rootasm_error *e, enum rootasm_error_kind kind, int err, const char *op,
		const char *path, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/*
 * The size rule of the public option structs (rootasm.h): a caller's struct
 * of @size bytes, of which this library knows the first @known. Returns 0,
 * -EINVAL when @size is below @min (the fields every caller sets), or -E2BIG
 * when a byte this library does not know is set (or @size is absurd).
 */
static inline int ra_opts_size(const void *opts, size_t size, size_t min, size_t known)
{
	if (size < min)
		return -EINVAL;
	if (size > 4096)
		return -E2BIG;
	for (size_t i = known; i < size; i++)
		if (((const unsigned char *)opts)[i])
			return -E2BIG;
	return 0;
}

/*
 * The same rule for a public option struct @o (NULL: none, 0) of the type
 * named @name ("rootasm_exec_opts"), as a usage error of @op on @what in @e:
 * E2BIG, "struct NAME of SIZE bytes sets fields this library (VERSION) does
 * not know"; EINVAL, "struct NAME.size is SIZE: set it to sizeof(struct
 * NAME)". Returns 0 or the -errno (error.c). RA_OPTS_CHECK() fills in the
 * size, the known size and the name from @o, a pointer to a struct @type.
 */
int ra_opts_check(const void *o, size_t size, size_t min, size_t known, const char *name, const char *op,
		  const char *what, struct rootasm_error *e);
#define RA_OPTS_CHECK(o, type, min, op, what, e) \
	ra_opts_check((o), (o) ? (o)->size : 0, (min), sizeof(type), #type + sizeof("struct"), (op), (what), (e))

/* The end of @field in the struct @type; and @o's @field when its caller's struct has it, else @def. */
#define RA_OPT_END(type, field)	(offsetof(type, field) + sizeof(((type *)0)->field))
#define RA_OPT(o, type, field, def)	((o) && (o)->size >= RA_OPT_END(type, field) ? (o)->field : (def))

/* Whether @p is a clean absolute path: no "." or ".." component, no "//", no trailing "/" (fileio.c). */
bool ra_path_clean(const char *p);

/* Whether / is no mount's root here: a plain chroot (fileio.c). The kernel makes such a process no user namespace. */
bool ra_chrooted(void);

/*
 * Whether the absolute path @path is @top or lies beneath it, component-wise
 * ("/a/b" is below "/a", "/ab" is not; @top's trailing slashes do not count):
 * what follows @top in @path, its slashes skipped ("" for @top itself), or
 * NULL when @path is not there.
 */
static inline const char *ra_path_below(const char *path, const char *top)
{
	size_t n = strlen(top);

	while (n > 1 && top[n - 1] == '/')
		n--;
	if (n == 1 && top[0] == '/')
		n = 0;			/* "/": every absolute path */
	else if (strncmp(path, top, n))
		return NULL;
	if (path[n] != '/' && (n == 0 || path[n] != '\0'))
		return NULL;
	while (path[n] == '/')
		n++;
	return path + n;
}

/* Whether /proc's pids are ours: /proc/self names this process by the pid it has here. */
static inline bool ra_proc_pids_ours(void)
{
	char link[32], want[32];
	ssize_t n = readlink("/proc/self", link, sizeof(link) - 1);

	if (n <= 0)
		return false;
	link[n] = '\0';
	snprintf(want, sizeof(want), "%d", (int)getpid());
	return !strcmp(link, want);
}

/*
 * Text for a terminal (escape.c): C0/C1 controls, DEL, bidirectional formatting
 * characters and bytes that are not UTF-8 escaped (\x1b, \u202e).
 */
/* The length of the UTF-8 character at @s (at most @n bytes) and its code point; 0: not UTF-8. */
size_t ra_utf8_next(const char *s, size_t n, unsigned int *cp);
/* Whether code point @cp is one that is escaped (a control or bidirectional formatting character). */
bool ra_char_unsafe(unsigned int cp);
/* @s escaped into @out (at most @size bytes, NUL included; cut at a whole unit); returns @out. */
char *ra_escape(const char *s, char *out, size_t size);
/* @s escaped onto @f; EOF on a write error. */
int ra_fputs_escaped(const char *s, FILE *f);

/*
 * What an fd is (fileio.c, also in rootasmd's and the CLI's helper library):
 * ra_reopen(): @fd (an O_PATH fd) re-opened with @flags through
 * /proc/self/fd; caller owns the result. ra_fd_path(): the path
 * /proc/self/fd says @fd has, NUL-terminated in @buf (cut to fit): its
 * length, or -errno. ra_is_userns(): whether @fd is a user namespace
 * (nsfs, NS_GET_NSTYPE). ra_fd_mount_id(): the unique id (statx
 * STATX_MNT_ID_UNIQUE) of the mount @fd is on, 0 when unknown; *is_root
 * (when not NULL): whether @fd is that mount's root.
 */
int ra_reopen(int fd, int flags);
ssize_t ra_fd_path(int fd, char *buf, size_t size);
bool ra_is_userns(int fd);
uint64_t ra_fd_mount_id(int fd, bool *is_root);

/*
 * The one trust rule for what an administrator's configuration names (a
 * layout file, runtime.conf, a state directory): @fd is root's and not
 * writable by group or others, and so is every directory from @dirfd (the one
 * holding it; ignored when @fd is a directory itself: from @fd) up to the
 * root, but for sticky ones (sshd's StrictModes). 0, or -errno with @why.
 */
int ra_admin_trusted(int fd, int dirfd, char *why, size_t size);
/*
 * The same, remembering in @m the directories a walk found trusted (each with
 * the mount it was reached through), so that
 * the next walk of one request (a layout's image files, most in one store
 * directory) stops where an earlier one passed: a directory trusted with
 * every directory above it stays so while the request runs, as only root
 * could move it or change one above it. @m zeroed before its first use.
 */
struct ra_trust_dir {
	dev_t dev;
	ino_t ino;
	uint64_t mnt;		/* the unique id of the mount it was reached through */
};
struct ra_trust_memo {
	size_t n;
	struct ra_trust_dir dir[16];
};
int ra_admin_trusted_memo(int fd, int dirfd, struct ra_trust_memo *m, char *why, size_t size);
/*
 * The same for @fd, opened at @path (relative to @at): its directory opened
 * with openat2(@resolve) and checked to hold @fd under that name.
 */
int ra_admin_trusted_path(int fd, int at, const char *path, uint64_t resolve, char *why, size_t size);

/*
 * Read @fd until its end or @max bytes, whichever comes first, into a new
 * NUL-terminated buffer (caller frees *ret): 0 or -errno (fileio.c; its
 * sibling ra_read_all() of open.h fails with -EFBIG past @max instead).
 */
int ra_read_upto(int fd, size_t max, char **ret, size_t *ret_len);

/* Drain the fs_context message log of @fsfd into @buf ("" when empty). */
void ra_fs_messages(int fsfd, char *buf, size_t size);

static inline int sys_openat2(int dfd, const char *path, struct open_how *how)
{
	return syscall(SYS_openat2, dfd, path, how, sizeof(*how));
}

/* openat2() as -errno; EAGAIN (RESOLVE_BENEATH: a rename raced with "..") tried again, up to 8 times */
static inline int ra_openat2_retry(int dfd, const char *path, struct open_how *how)
{
	int fd, tries = 0;

	do
		fd = sys_openat2(dfd, path, how);
	while (fd < 0 && errno == EAGAIN && ++tries < 8);
	return fd < 0 ? -errno : fd;
}

static inline int sys_pidfd_open(pid_t pid, unsigned int flags)
{
	return syscall(SYS_pidfd_open, pid, flags);
}

static inline int sys_pidfd_send_signal(int pidfd, int sig)
{
	return syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

/* pidfs uapi (Linux 6.13 / 6.15), numbers as upstream include/uapi/linux/pidfd.h */
#define PIDFS_IOCTL_MAGIC	0xFF
#define PIDFD_INFO_PID		(1UL << 0)
#define PIDFD_INFO_CREDS	(1UL << 1)
#define PIDFD_INFO_CGROUPID	(1UL << 2)
#define PIDFD_INFO_EXIT		(1UL << 3)
#define PIDFD_INFO_SIZE_VER0	64

struct ra_pidfd_info {
	uint64_t mask;
	uint64_t cgroupid;
	uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
	int32_t exit_code;
};

#define PIDFD_GET_INFO _IOWR(PIDFS_IOCTL_MAGIC, 11, struct ra_pidfd_info)

#endif
