// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Mount notifications and read-back:
 *
 *   watch     fanotify_init(FAN_CLASS_NOTIF|FAN_REPORT_MNT) ->
 *             fanotify_mark(FAN_MARK_ADD|FAN_MARK_MNTNS, FAN_MNT_ATTACH|FAN_MNT_DETACH, nsfd)
 *             -> events carrying a FAN_EVENT_INFO_TYPE_MNT record with the mount id
 *   describe  statmount(mnt_id[, mnt_ns_id]) -> mount point, fs type, source, id maps
 *   tree      statx(STATX_MNT_ID_UNIQUE) of the root, then listmount() recursively
 */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/ioctl.h>

#include "json.h"
#include "mntinfo.h"
#include "util.h"

#define RA_NS_GET_MNTNS_ID _IOR(0xb7, 0x5, uint64_t)

int rootasm_watch_open(int mntns_fd, struct rootasm_error *e)
{
	_cleanup_close_ int fd = -EBADF;

	fd = fanotify_init(FAN_CLASS_NOTIF | RA_FAN_REPORT_MNT | FAN_CLOEXEC | FAN_NONBLOCK, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ra_err(e, errno, -EBADF, "fanotify_init", "FAN_REPORT_MNT", NULL);
	if (fanotify_mark(fd, FAN_MARK_ADD | RA_FAN_MARK_MNTNS, RA_FAN_MNT_ATTACH | RA_FAN_MNT_DETACH,
			  mntns_fd, NULL) < 0)
		return ra_err(e, errno, -EBADF, "fanotify_mark", "FAN_MARK_MNTNS", NULL);
	return take_fd(fd);
}

int rootasm_watch_read(int fd, struct rootasm_mount_event *ev, size_t max, int timeout_ms)
{
	char buf[8192] __attribute__((aligned(8)));
	size_t n = 0;

	while (n < max) {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t len;

		if (poll(&p, 1, n ? 0 : timeout_ms) <= 0)
			break;
		len = read(fd, buf, sizeof(buf));
		if (len < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (len < 0)
			return n ? (int)n : -errno;
		for (struct fanotify_event_metadata *m = (void *)buf; FAN_EVENT_OK(m, len) && n < max;
		     m = FAN_EVENT_NEXT(m, len)) {
			char *info = (char *)m + m->metadata_len, *end = (char *)m + m->event_len;

			ev[n] = (struct rootasm_mount_event){
				.attach = !!(m->mask & RA_FAN_MNT_ATTACH),
				.detach = !!(m->mask & RA_FAN_MNT_DETACH),
			};
			while (info + 4 <= end) {
				struct ra_fanotify_event_info_mnt *im = (void *)info;

				if (im->len < 4)
					break;
				if (im->info_type == RA_FAN_EVENT_INFO_TYPE_MNT && im->len >= sizeof(*im))
					ev[n].mnt_id = im->mnt_id;
				info += im->len;
			}
			n++;
		}
	}
	return n;
}

static int statmount_ns(unsigned long long id, int nsfd, uint64_t mask, struct ra_statmount **ret)
{
	uint64_t nsid = 0;

	if (nsfd >= 0 && ioctl(nsfd, RA_NS_GET_MNTNS_ID, &nsid) < 0)
		return -errno;
	return ra_statmount(id, mask, nsid, ret);
}

int rootasm_mount_describe(unsigned long long mnt_id, int mntns_fd, bool json, char *buf, size_t size)
{
	struct ra_statmount *sm = NULL;
	uint64_t mask = RA_STATMOUNT_MNT_POINT | RA_STATMOUNT_FS_TYPE | RA_STATMOUNT_SB_SOURCE |
			RA_STATMOUNT_MNT_BASIC | RA_STATMOUNT_MNT_UIDMAP | RA_STATMOUNT_MNT_GIDMAP;
	char uid[512] = "", gid[512] = "", mp[1024] = "", src[1024] = "", fs[64] = "";
	int r = statmount_ns(mnt_id, mntns_fd, mask, &sm);

	if (r < 0) {
		/* older kernels do not know the idmap bits: ask again without them */
		r = statmount_ns(mnt_id, mntns_fd, mask & ~(RA_STATMOUNT_MNT_UIDMAP | RA_STATMOUNT_MNT_GIDMAP), &sm);
	}
	if (r < 0) {
		snprintf(buf, size, json ? "{\"mnt_id\":%llu,\"gone\":true}" : "mnt_id=%llu (gone: %s)",
			 mnt_id, strerror(-r));
		return r;
	}
	if (sm->mask & RA_STATMOUNT_MNT_POINT)
		snprintf(mp, sizeof(mp), "%s", sm->str + sm->mnt_point);
	if (sm->mask & RA_STATMOUNT_FS_TYPE)
		snprintf(fs, sizeof(fs), "%s", sm->str + sm->fs_type);
	if (sm->mask & RA_STATMOUNT_SB_SOURCE)
		snprintf(src, sizeof(src), "%s", sm->str + sm->sb_source);
	if (sm->mask & RA_STATMOUNT_MNT_UIDMAP)
		ra_format_idmap(sm->str + sm->mnt_uidmap, sm->mnt_uidmap_num, uid, sizeof(uid));
	if (sm->mask & RA_STATMOUNT_MNT_GIDMAP)
		ra_format_idmap(sm->str + sm->mnt_gidmap, sm->mnt_gidmap_num, gid, sizeof(gid));
	if (json) {
		struct ra_jb b = { false };
		json_t *o = json_object();
		char *text;

		ra_jset(&b, o, "mnt_id", json_integer(mnt_id));
		ra_jset(&b, o, "parent_id", json_integer(sm->mnt_parent_id));
		ra_jset(&b, o, "mount_point", ra_jstr(mp));
		ra_jset(&b, o, "fs_type", ra_jstr(fs));
		ra_jset(&b, o, "source", ra_jstr(src));
		ra_jset(&b, o, "uidmap", ra_jstr(uid));
		ra_jset(&b, o, "gidmap", ra_jstr(gid));
		text = b.oom ? NULL : json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
		snprintf(buf, size, "%s", text ? text : "{\"error\":\"out of memory\"}");
		free(text);
		json_decref(o);
		if (!text) {
			free(sm);
			return -ENOMEM;
		}
	} else {
		snprintf(buf, size, "mnt_id=%llu mount_point=%s fs_type=%s source=%s%s%s%s%s", mnt_id, mp, fs,
			 src[0] ? src : "-", uid[0] ? " uidmap=" : "", uid, gid[0] ? " gidmap=" : "", gid);
	}
	free(sm);
	return 0;
}

/* listmount() lists every mount below @id (not only its children): one call, no recursion. */
static int walk(uint64_t id, FILE *out, bool json, int *n)
{
	_cleanup_free_ uint64_t *below = NULL;
	size_t nb = 0;
	char line[4096];
	int r = ra_listmount(id, &below, &nb);

	if (r < 0)
		return r;
	for (size_t i = 0; i <= nb; i++) {
		uint64_t m = i ? below[i - 1] : id;

		if (out) {
			rootasm_mount_describe(m, -1, json, line, sizeof(line));
			fprintf(out, json ? "%s%s" : "%s%s\n", json && i ? ", " : "", line);
		}
		(*n)++;
	}
	return 0;
}

int rootasm_tree_count(const char *path)
{
	uint64_t id;
	int n = 0, r = ra_mount_id(AT_FDCWD, path, &id);

	if (r < 0)
		return r;
	r = walk(id, NULL, false, &n);
	return r < 0 ? r : n;
}

int rootasm_tree_print(const char *path, FILE *out, bool json, struct rootasm_error *e)
{
	uint64_t id;
	int n = 0, r = ra_mount_id(AT_FDCWD, path, &id);

	if (r < 0)
		return ra_err(e, r, -EBADF, "statx STATX_MNT_ID_UNIQUE", path,
			      r == -EINVAL ? "not a mount point: attach a tree there first" : NULL);
	if (json)
		fputs("[", out);
	r = walk(id, out, json, &n);
	if (json)
		fputs("]\n", out);
	if (r < 0)
		return ra_err(e, r, -EBADF, "listmount", path, NULL);
	return n;
}
