// SPDX-License-Identifier: LGPL-2.1-or-later
/* statmount(2) and listmount(2) (Linux 6.8), statx(STATX_MNT_ID_UNIQUE). */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "mntinfo.h"
#include "util.h"

int ra_statmount(uint64_t id, uint64_t mask, uint64_t mnt_ns_id, struct ra_statmount **ret)
{
	struct ra_mnt_id_req req = {
		.size = mnt_ns_id ? RA_MNT_ID_REQ_SIZE_VER1 : RA_MNT_ID_REQ_SIZE_VER0,
		.mnt_id = id,
		.param = mask,
		.mnt_ns_id = mnt_ns_id,
	};
	size_t size = 4096;

	for (int i = 0; i < 8; i++, size *= 4) {
		struct ra_statmount *sm = calloc(1, size);

		if (!sm)
			return -ENOMEM;
		if (syscall(__NR_statmount, &req, sm, size, 0) == 0) {
			*ret = sm;
			return 0;
		}
		free(sm);
		if (errno != EOVERFLOW)
			return -errno;
	}
	return -EOVERFLOW;
}

int ra_mount_id(int dfd, const char *path, uint64_t *ret)
{
	struct statx sx;

	if (statx(dfd, path, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT,
		  RA_STATX_MNT_ID_UNIQUE, &sx) < 0)
		return -errno;
	if (!(sx.stx_mask & RA_STATX_MNT_ID_UNIQUE))
		return -EOPNOTSUPP;
	/* the root of a mount, not a directory somewhere inside one */
	if ((sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) && !(sx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
		return -EINVAL;
	*ret = sx.stx_mnt_id;
	return 0;
}

int ra_mount_find(uint64_t want)
{
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	_cleanup_free_ struct ra_statmount *sm = NULL;
	_cleanup_close_ int fd = -EBADF;
	bool is_root = false;
	int r = ra_statmount(want, RA_STATMOUNT_MNT_POINT, 0, &sm);

	if (r < 0)
		return r;
	if (!(sm->mask & RA_STATMOUNT_MNT_POINT))
		return -EOPNOTSUPP;
	fd = ra_openat2_retry(AT_FDCWD, sm->str + sm->mnt_point, &how);
	if (fd < 0)
		return fd;
	/* (the path found, then opened: the fd's own mount decides) */
	if (ra_fd_mount_id(fd, &is_root) != want || !is_root)
		return -EBUSY;
	r = fd;
	fd = -EBADF;
	return r;
}

/* Whether @want is below the mount @id: a parent of it, or a parent of one (at most 16 down). */
static bool stands_on(uint64_t id, uint64_t want)
{
	for (int i = 0; i < 16; i++) {
		_cleanup_free_ struct ra_statmount *sm = NULL;

		if (ra_statmount(id, RA_STATMOUNT_MNT_BASIC, 0, &sm) < 0 || sm->mnt_parent_id == id)
			return false;
		if (sm->mnt_parent_id == want)
			return true;
		id = sm->mnt_parent_id;
	}
	return false;
}

int ra_mount_uncover(int (*reopen)(void *ud), void *ud, uint64_t want)
{
	/*
	 * What the place resolves to is the root of the top mount there: one that
	 * stands on @want is mounted on @want's root too (anything between them
	 * holds that place), so it was made for this tree
	 */
	for (int i = 0; i < 16; i++) {
		_cleanup_close_ int fd = reopen(ud);
		bool is_root = false;
		uint64_t id;
		char p[64];

		/* (nothing to open there at first: not there; after a detach, an error) */
		if (fd < 0)
			return i == 0 ? ra_mount_find(want) : fd;
		id = ra_fd_mount_id(fd, &is_root);
		if (id == want && is_root) {
			int r = fd;

			fd = -EBADF;
			return r;
		}
		/* not at the place (detached already, or moved): wherever it is */
		if (!id || !is_root || !stands_on(id, want))
			return ra_mount_find(want);
		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		if (umount2(p, MNT_DETACH) < 0)
			return -errno;
	}
	return -ELOOP;
}

int ra_listmount(uint64_t id, uint64_t **ret, size_t *n)
{
	struct ra_mnt_id_req req = { .size = RA_MNT_ID_REQ_SIZE_VER0, .mnt_id = id };
	uint64_t *ids = NULL;
	size_t have = 0;

	for (;;) {
		uint64_t *grown = realloc(ids, (have + 256) * sizeof(*ids));
		long r;

		if (!grown) {
			free(ids);
			return -ENOMEM;
		}
		ids = grown;
		r = syscall(__NR_listmount, &req, ids + have, 256, 0);
		if (r < 0) {
			free(ids);
			return -errno;
		}
		have += r;
		if (r < 256)
			break;
		req.param = ids[have - 1];	/* continue after the last one listed */
	}
	*ret = ids;
	*n = have;
	return 0;
}

void ra_format_idmap(const char *s, uint32_t num, char *buf, size_t size)
{
	size_t used = 0;

	buf[0] = '\0';
	for (uint32_t i = 0; i < num && used + 1 < size; i++) {
		unsigned int a, b, c;

		if (sscanf(s, "%u %u %u", &a, &b, &c) == 3)
			used += snprintf(buf + used, size - used, "%s%u:%u:%u", i ? "," : "", a, b, c);
		s += strlen(s) + 1;
	}
}

int ra_mounts_below(int fd, char **ret_where)
{
	_cleanup_free_ uint64_t *ids = NULL;
	char path[PATH_MAX];
	struct statx sx;
	size_t n = 0;
	ssize_t len;
	int r;

	*ret_where = NULL;
	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, RA_STATX_MNT_ID_UNIQUE, &sx) < 0)
		return -errno;
	if (!(sx.stx_mask & RA_STATX_MNT_ID_UNIQUE))
		return -EOPNOTSUPP;
	len = ra_fd_path(fd, path, sizeof(path));
	if (len < 0)
		return len;
	/* not reachable from our root, or deleted: no path to compare mount points with */
	if (path[0] != '/' || (len > 10 && !strcmp(path + len - 10, " (deleted)")))
		return -ENOENT;
	r = ra_listmount(sx.stx_mnt_id, &ids, &n);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ struct ra_statmount *sm = NULL;

		r = ra_statmount(ids[i], RA_STATMOUNT_MNT_POINT, 0, &sm);
		if (r == -ENOENT)
			continue;	/* gone since it was listed */
		if (r < 0)
			return r;
		if (!(sm->mask & RA_STATMOUNT_MNT_POINT))
			return -EOPNOTSUPP;
		if (ra_path_below(sm->str + sm->mnt_point, path)) {
			*ret_where = strdup(sm->str + sm->mnt_point);
			return *ret_where ? 1 : -ENOMEM;
		}
	}
	return 0;
}
