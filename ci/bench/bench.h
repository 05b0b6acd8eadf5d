/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rootasm-bench: the timing harness behind ci/bench/run.
 *
 * A workload is described twice by the driver: as a rootasm layout (YAML) and
 * as a "spec" (one line per operation, below) that the baselines read:
 *
 *   stage DIR                    attached staging directory (legacy only)
 *   target DIR                   where the finished tree is attached (MS_MOVE / move_mount)
 *   layer image FILE squashfs|erofs
 *   layer dir DIR
 *   upper tmpfs [size=64M]       a tmpfs upper (legacy: the staging tmpfs is the upper's tmpfs)
 *   bind SRC /TARGET [ro,nosuid,nodev,noexec,rec,file]
 *   tmpfs /TARGET [ro,nosuid,nodev,noexec,size=...,mode=...]
 *   relative DIR                 legacy: chdir(DIR) and pass dir layers under it relative
 *                                (containerd's way around the one-page mount(2) data limit)
 */
#ifndef ROOTASM_BENCH_H
#define ROOTASM_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct b_layer {
	bool image;
	char *path;
	char *fstype;		/* image only */
};

struct b_vol {
	bool tmpfs;		/* else a bind */
	bool file;		/* bind of a regular file (the spec says so; legacy still stats) */
	bool rec;
	char *src, *target;
	unsigned long msflags;	/* MS_RDONLY/NOSUID/NODEV/NOEXEC */
	uint64_t attrs;		/* the same as MOUNT_ATTR_* */
	char *data;		/* tmpfs: "size=..,mode=.." or NULL */
};

struct b_spec {
	char *stage, *target, *reldir;
	struct b_layer *layers;
	size_t nlayers;
	bool upper;
	char *upper_data;	/* "size=64M" or NULL */
	struct b_vol *vols;
	size_t nvols;
};

/* A failure description, filled by the baselines. */
struct b_err {
	int err;
	char what[1024];
};

/* Room for element @n of an array of @n elements of @size bytes (doubling at powers of two). */
void *b_grow(void *p, size_t n, size_t size);

int b_fail(struct b_err *e, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

int spec_load(const char *path, struct b_spec *ret, struct b_err *e);

/*
 * Legacy way: staging tmpfs + loop/mount(2) images + overlay with lowerdir= +
 * bind mounts, then MS_MOVE of the root to @target and a lazy umount of the
 * staging tmpfs. Leaves the tree attached at @target (the caller tears it down).
 */
int legacy_build(const struct b_spec *s, const char *stage, const char *target, struct b_err *e);

/* Bytes of the overlay mount(2) data string the legacy way would pass. */
size_t legacy_data_len(const struct b_spec *s, const char *stage);

/* When the data string is longer than a page: the last lowerdir path as a page cuts it (malloc'ed), else NULL. */
char *legacy_data_page_tail(const struct b_spec *s, const char *stage);

/*
 * The bare-syscall floor of the detached way: the same tree as rootasm builds,
 * with nothing but the syscalls; with @strings, directory layers are passed as
 * "lowerdir+" strings instead of O_PATH fds. Returns the root's fd; caller owns it.
 */
int floor_build(const struct b_spec *s, bool strings, struct b_err *e);

/* One image layer as the floor mounts it (loop + fsmount); returns the mount fd. */
int floor_image(const struct b_layer *l, struct b_err *e);

/* LOOP_CTL_GET_FREE + LOOP_CONFIGURE(ro, autoclear); returns the loop fd, the node in @dev. */
int loop_attach(int ctl, int backing, char *dev, size_t size, struct b_err *e);

#endif
