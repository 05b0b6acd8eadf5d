/* SPDX-License-Identifier: GPL-2.0 */
/*
 * watch_mountns - tests/qemu/selinux/run's probe of FILE__WATCH_MOUNTNS (kernel
 * patch 0116): switch to an SELinux context, then ask for a fanotify mark.
 *
 *   watch_mountns CONTEXT|- mntns|inode
 *
 * mntns: a FAN_MARK_MNTNS mark on our mount namespace (needs file:watch_mountns
 *        on /proc/self/ns/mnt), then a tmpfs mounted on /mnt must be reported as
 *        FAN_MNT_ATTACH with its mount id;
 * inode: a plain inode mark on / (file:watch, which the test policy leaves to
 *        handle_unknown): the control that the refusal is the mount-namespace one.
 * Exit: 0 mark made (and for mntns the event seen), 13 EACCES, 3 setcon failed,
 * 1 anything else. One line on stdout says which.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

/* Debian 12's headers predate 6.15 */
#ifndef FAN_REPORT_MNT
#define FAN_REPORT_MNT 0x00004000
#endif
#ifndef FAN_MARK_MNTNS
#define FAN_MARK_MNTNS 0x00000110
#endif
#ifndef FAN_MNT_ATTACH
#define FAN_MNT_ATTACH 0x01000000
#define FAN_MNT_DETACH 0x02000000
#endif
#ifndef FAN_EVENT_INFO_TYPE_MNT
#define FAN_EVENT_INFO_TYPE_MNT 7
#endif
#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x00004000U
#endif

static int setcon(const char *ctx)
{
	int fd = open("/proc/self/attr/current", O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, ctx, strlen(ctx));
	close(fd);
	return n == (ssize_t)strlen(ctx) ? 0 : -1;
}

static int mark_failed(const char *what)
{
	int e = errno;

	printf("%s: %s\n", what, strerror(e));
	return e == EACCES ? 13 : 1;
}

/* the mark works: a mount on /mnt is reported with the mount id statx gives */
static int see_attach(int fan)
{
	union { struct fanotify_event_metadata md; char b[4096]; } buf;
	struct pollfd p = { .fd = fan, .events = POLLIN };
	struct statx sx;
	ssize_t n;
	int rc = 1;

	if (mount("watch_mountns", "/mnt", "tmpfs", 0, NULL) < 0) {
		printf("mount tmpfs on /mnt: %s\n", strerror(errno));
		return 1;
	}
	if (statx(AT_FDCWD, "/mnt", 0, STATX_MNT_ID_UNIQUE, &sx) < 0 ||
	    !(sx.stx_mask & STATX_MNT_ID_UNIQUE)) {
		printf("statx(/mnt, STATX_MNT_ID_UNIQUE) failed\n");
		goto out;
	}
	if (poll(&p, 1, 5000) != 1 || (n = read(fan, &buf, sizeof(buf))) <= 0) {
		printf("no fanotify event after the mount\n");
		goto out;
	}
	if (!(buf.md.mask & FAN_MNT_ATTACH) || n < (ssize_t)buf.md.event_len ||
	    buf.md.event_len < buf.md.metadata_len + 12u) {
		printf("unexpected event: mask %#llx len %u\n",
		       (unsigned long long)buf.md.mask, buf.md.event_len);
		goto out;
	}
	{
		const unsigned char *info = (const unsigned char *)&buf + buf.md.metadata_len;
		uint64_t id;

		/* struct fanotify_event_info_mnt: a 4-byte header, the id at offset 8 */
		memcpy(&id, info + 8, sizeof(id));
		if (info[0] != FAN_EVENT_INFO_TYPE_MNT || id != sx.stx_mnt_id) {
			printf("event info type %u mount id %llu, /mnt is %llu\n", info[0],
			       (unsigned long long)id, (unsigned long long)sx.stx_mnt_id);
			goto out;
		}
	}
	printf("mark made; FAN_MNT_ATTACH of /mnt (mount id %llu) reported\n",
	       (unsigned long long)sx.stx_mnt_id);
	rc = 0;
out:
	umount2("/mnt", MNT_DETACH);
	return rc;
}

int main(int argc, char **argv)
{
	int fan, ns;

	if (argc != 3 || (strcmp(argv[2], "mntns") && strcmp(argv[2], "inode"))) {
		fprintf(stderr, "usage: watch_mountns CONTEXT|- mntns|inode\n");
		return 2;
	}
	if (strcmp(argv[1], "-") && setcon(argv[1]) < 0) {
		printf("setcon %s: %s\n", argv[1], strerror(errno));
		return 3;
	}
	if (!strcmp(argv[2], "inode")) {
		fan = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC, O_RDONLY);
		if (fan < 0)
			return mark_failed("fanotify_init");
		if (fanotify_mark(fan, FAN_MARK_ADD, FAN_OPEN, AT_FDCWD, "/") < 0)
			return mark_failed("fanotify_mark(inode /)");
		printf("inode mark made\n");
		return 0;
	}
	fan = fanotify_init(FAN_REPORT_MNT | FAN_CLOEXEC | FAN_NONBLOCK, 0);
	if (fan < 0)
		return mark_failed("fanotify_init(FAN_REPORT_MNT)");
	ns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	if (ns < 0)
		return mark_failed("open /proc/self/ns/mnt");
	if (fanotify_mark(fan, FAN_MARK_ADD | FAN_MARK_MNTNS,
			  FAN_MNT_ATTACH | FAN_MNT_DETACH, ns, NULL) < 0)
		return mark_failed("fanotify_mark(FAN_MARK_MNTNS)");
	return see_attach(fan);
}
