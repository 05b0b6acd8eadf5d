// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The two baselines rootasm is measured against, built from the same spec:
 *
 *   legacy  what runc and bubblewrap do, as tight as it can be written:
 *           mount(tmpfs) on the attached staging dir (it holds the image mount
 *           points and the overlay's upper/ and work/) -> per image: open,
 *           LOOP_CTL_GET_FREE, LOOP_CONFIGURE(ro, autoclear), mount(2) -> mkdir
 *           root/ -> mount(overlay, "lowerdir=top:...:bottom,upperdir=,workdir=")
 *           -> per volume: stat(src), mkdir/creat the target, mount(MS_BIND) and,
 *           for flags, mount(MS_BIND|MS_REMOUNT|flags); tmpfs: mount(tmpfs)
 *           -> mount(root, target, MS_MOVE) -> umount2(stage, MNT_DETACH).
 *   floor   the detached way with nothing but syscalls (no parser, no probe,
 *           no error context): layers by O_PATH fd or loop+fsmount, overlay via
 *           fsconfig(FSCONFIG_SET_FD), volumes via open_tree/fsmount +
 *           openat2(RESOLVE_IN_ROOT) + move_mount. With @strings, directory
 *           layers go in as fsconfig(FSCONFIG_SET_STRING, "lowerdir+", path):
 *           one syscall per layer instead of open + fsconfig + close.
 *
 * The caller tears both down the way it tears down rootasm's tree.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/loop.h>
#include <linux/openat2.h>

#include "bench.h"

int loop_attach(int ctl, int backing, char *dev, size_t size, struct b_err *e)
{
	struct loop_config cfg = {
		.fd = backing,
		.info.lo_flags = LO_FLAGS_READ_ONLY | LO_FLAGS_AUTOCLEAR,
	};

	/* Another process may take the free device between GET_FREE and CONFIGURE. */
	for (int tries = 0; tries < 64; tries++) {
		int nr = ioctl(ctl, LOOP_CTL_GET_FREE), lfd;

		if (nr < 0)
			return b_fail(e, errno, "LOOP_CTL_GET_FREE: %s", strerror(errno));
		snprintf(dev, size, "/dev/loop%d", nr);
		lfd = open(dev, O_RDONLY | O_CLOEXEC);
		if (lfd < 0 && errno == ENOENT) {
			usleep(1000);
			continue;
		}
		if (lfd < 0)
			return b_fail(e, errno, "open %s: %s", dev, strerror(errno));
		if (ioctl(lfd, LOOP_CONFIGURE, &cfg) == 0)
			return lfd;
		close(lfd);
		if (errno != EBUSY)
			return b_fail(e, errno, "LOOP_CONFIGURE %s: %s", dev, strerror(errno));
	}
	return b_fail(e, EBUSY, "LOOP_CONFIGURE: no free loop device");
}

/* ---- legacy ---------------------------------------------------------------- */

/* mkdir -p / touch @p; the components before @from already exist. */
static int make_target(char *p, size_t from, bool file, struct b_err *e)
{
	for (int pass = 0; pass < 2; pass++) {
		int fd;

		if (file) {
			fd = open(p, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOCTTY, 0644);
			if (fd >= 0) {
				close(fd);
				return 0;
			}
		} else if (mkdir(p, 0755) == 0 || errno == EEXIST) {
			return 0;
		}
		if (errno != ENOENT || pass)
			break;
		for (char *c = p + from + 1; (c = strchr(c, '/')); c++) {
			*c = '\0';
			fd = mkdir(p, 0755);
			*c = '/';
			if (fd < 0 && errno != EEXIST)
				return b_fail(e, errno, "mkdir parents of %s: %s", p, strerror(errno));
		}
	}
	return b_fail(e, errno, "create mount point %s: %s", p, strerror(errno));
}

static const char *layer_path(const struct b_spec *s, size_t i, const char *stage, char *buf, size_t size)
{
	const struct b_layer *l = &s->layers[i];
	size_t rl = s->reldir ? strlen(s->reldir) : 0;

	if (l->image) {
		snprintf(buf, size, "%s/i%zu", stage, i);
		return buf;
	}
	if (rl && !strncmp(l->path, s->reldir, rl) && l->path[rl] == '/')
		return l->path + rl + 1;
	return l->path;
}

/* "lowerdir=top:...:bottom[,upperdir=S/upper,workdir=S/work]" into a malloc'ed string. */
static char *overlay_data(const struct b_spec *s, const char *stage)
{
	size_t size = 64 + 2 * strlen(stage), len;
	char buf[PATH_MAX], *d;

	for (size_t i = 0; i < s->nlayers; i++)
		size += strlen(s->layers[i].path) + strlen(stage) + 24;
	d = malloc(size);
	if (!d)
		abort();
	len = (size_t)snprintf(d, size, "lowerdir=");
	for (size_t i = s->nlayers; i-- > 0;)
		len += (size_t)snprintf(d + len, size - len, "%s%s", layer_path(s, i, stage, buf, sizeof(buf)),
					i ? ":" : "");
	if (s->upper)
		snprintf(d + len, size - len, ",upperdir=%s/upper,workdir=%s/work", stage, stage);
	return d;
}

size_t legacy_data_len(const struct b_spec *s, const char *stage)
{
	char *d = overlay_data(s, stage);
	size_t n = strlen(d) + 1;

	free(d);
	return n;
}

char *legacy_data_page_tail(const struct b_spec *s, const char *stage)
{
	char *d = overlay_data(s, stage), *colon, *tail = NULL;
	long page = sysconf(_SC_PAGESIZE);

	if (strlen(d) >= (size_t)page) {
		d[page - 1] = '\0';
		colon = strrchr(d, ':');
		tail = strdup(colon ? colon + 1 : d);
	}
	free(d);
	return tail;
}

int legacy_build(const struct b_spec *s, const char *stage, const char *target, struct b_err *e)
{
	char p[PATH_MAX], root[PATH_MAX];
	size_t rootlen;
	bool overlay = s->nlayers > 1 || s->upper;
	int ctl = -1, r = 0;

	if (mount("tmpfs", stage, "tmpfs", 0, s->upper_data) < 0)
		return b_fail(e, errno, "mount tmpfs %s: %s", stage, strerror(errno));
	rootlen = (size_t)snprintf(root, sizeof(root), "%s/root", stage);
	if (mkdir(root, 0755) < 0) {
		r = b_fail(e, errno, "mkdir %s: %s", root, strerror(errno));
		goto fail;
	}
	for (size_t i = 0; i < s->nlayers; i++) {
		const struct b_layer *l = &s->layers[i];
		char dev[64];
		int fd, lfd;

		if (!l->image)
			continue;
		if (ctl < 0 && (ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC)) < 0) {
			r = b_fail(e, errno, "open /dev/loop-control: %s", strerror(errno));
			goto fail;
		}
		fd = open(l->path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			r = b_fail(e, errno, "open %s: %s", l->path, strerror(errno));
			goto fail;
		}
		lfd = loop_attach(ctl, fd, dev, sizeof(dev), e);
		close(fd);
		if (lfd < 0) {
			r = lfd;
			goto fail;
		}
		if (overlay) {
			snprintf(p, sizeof(p), "%s/i%zu", stage, i);
			if (mkdir(p, 0755) < 0) {
				close(lfd);
				r = b_fail(e, errno, "mkdir %s: %s", p, strerror(errno));
				goto fail;
			}
		}
		/* The superblock holds the device now; autoclear frees it with the last mount. */
		r = mount(dev, overlay ? p : root, l->fstype, MS_RDONLY, NULL);
		close(lfd);
		if (r < 0) {
			r = b_fail(e, errno, "mount %s %s: %s", l->fstype, l->path, strerror(errno));
			goto fail;
		}
	}
	if (overlay) {
		char *data;

		if (s->upper && (mkdir(strcat(strcpy(p, stage), "/upper"), 0755) < 0 ||
				 mkdir(strcat(strcpy(p, stage), "/work"), 0700) < 0)) {
			r = b_fail(e, errno, "mkdir %s: %s", p, strerror(errno));
			goto fail;
		}
		data = overlay_data(s, stage);
		if (mount("overlay", root, "overlay", s->upper ? 0 : MS_RDONLY, data) < 0) {
			r = b_fail(e, errno, "mount overlay (lowerdir= data %zu bytes, one page is %ld): %s",
				   strlen(data) + 1, sysconf(_SC_PAGESIZE), strerror(errno));
			free(data);
			goto fail;
		}
		free(data);
	} else if (!s->layers[0].image) {
		if (mount(s->layers[0].path, root, NULL, MS_BIND, NULL) < 0 ||
		    mount(NULL, root, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL) < 0) {
			r = b_fail(e, errno, "bind %s: %s", s->layers[0].path, strerror(errno));
			goto fail;
		}
	}
	for (size_t i = 0; i < s->nvols; i++) {
		const struct b_vol *v = &s->vols[i];
		struct stat st;
		bool file = false;

		snprintf(p, sizeof(p), "%s%s", root, v->target);
		if (!v->tmpfs) {
			/* runc stats the source to know whether to make a file or a directory */
			if (stat(v->src, &st) < 0) {
				r = b_fail(e, errno, "stat %s: %s", v->src, strerror(errno));
				goto fail;
			}
			file = !S_ISDIR(st.st_mode);
		}
		r = make_target(p, rootlen, file, e);
		if (r < 0)
			goto fail;
		if (v->tmpfs)
			r = mount("tmpfs", p, "tmpfs", v->msflags, v->data);
		else if ((r = mount(v->src, p, NULL, MS_BIND | (v->rec ? MS_REC : 0), NULL)) == 0 && v->msflags)
			r = mount(NULL, p, NULL, MS_BIND | MS_REMOUNT | v->msflags, NULL);
		if (r < 0) {
			r = b_fail(e, errno, "mount volume %s: %s", v->target, strerror(errno));
			goto fail;
		}
	}
	if (ctl >= 0)
		close(ctl);
	if (mount(root, target, NULL, MS_MOVE, NULL) < 0) {
		r = b_fail(e, errno, "MS_MOVE %s -> %s: %s", root, target, strerror(errno));
		goto fail;
	}
	/* The overlay holds private clones of its layers: the staging tmpfs can go. */
	umount2(stage, MNT_DETACH);
	return 0;
fail:
	if (ctl >= 0)
		close(ctl);
	umount2(stage, MNT_DETACH);
	return r;
}

/* ---- floor ----------------------------------------------------------------- */

/* fsopen(tmpfs) + "k=v,k=v" + fsmount; returns the mount fd. */
static int tmpfs_mount(const char *data, uint64_t attrs, struct b_err *e)
{
	char buf[256];
	int fsfd = fsopen("tmpfs", FSOPEN_CLOEXEC), mfd;

	if (fsfd < 0)
		return b_fail(e, errno, "fsopen tmpfs: %s", strerror(errno));
	snprintf(buf, sizeof(buf), "%s", data ? data : "");
	for (char *save, *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *v = strchr(kv, '=');

		if (v)
			*v++ = '\0';
		if (fsconfig(fsfd, FSCONFIG_SET_STRING, kv, v, 0) < 0) {
			close(fsfd);
			return b_fail(e, errno, "fsconfig tmpfs %s: %s", kv, strerror(errno));
		}
	}
	if (fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0 ||
	    (mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, attrs)) < 0) {
		close(fsfd);
		return b_fail(e, errno, "create tmpfs: %s", strerror(errno));
	}
	close(fsfd);
	return mfd;
}

static int image_mount(int ctl, const struct b_layer *l, struct b_err *e)
{
	char dev[64];
	int fd, lfd, fsfd, mfd = -1;

	fd = open(l->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return b_fail(e, errno, "open %s: %s", l->path, strerror(errno));
	lfd = loop_attach(ctl, fd, dev, sizeof(dev), e);
	close(fd);
	if (lfd < 0)
		return lfd;
	fsfd = fsopen(l->fstype, FSOPEN_CLOEXEC);
	if (fsfd < 0 || fsconfig(fsfd, FSCONFIG_SET_STRING, "source", dev, 0) < 0 ||
	    fsconfig(fsfd, FSCONFIG_SET_FLAG, "ro", NULL, 0) < 0 ||
	    fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0 ||
	    (mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, MOUNT_ATTR_RDONLY)) < 0)
		mfd = b_fail(e, errno, "mount %s: %s", l->path, strerror(errno));
	if (fsfd >= 0)
		close(fsfd);
	close(lfd);
	return mfd;
}

int floor_image(const struct b_layer *l, struct b_err *e)
{
	int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC), fd;

	if (ctl < 0)
		return b_fail(e, errno, "open /dev/loop-control: %s", strerror(errno));
	fd = image_mount(ctl, l, e);
	close(ctl);
	return fd;
}

/* The target beneath @root (O_PATH fd), made when missing. */
static int floor_target(int root, const char *target, bool file, struct b_err *e)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	char buf[PATH_MAX];
	int d, fd;

	fd = syscall(SYS_openat2, root, target, &how, sizeof(how));
	if (fd >= 0 || errno != ENOENT)
		return fd >= 0 ? fd : b_fail(e, errno, "openat2 %s: %s", target, strerror(errno));
	snprintf(buf, sizeof(buf), "%s", target);
	d = dup(root);
	for (char *save, *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		bool last = !save || !*save;

		fd = openat(d, c, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT) {
			int r = last && file ? openat(d, c, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)
					     : mkdirat(d, c, 0755);

			if (r < 0 && errno != EEXIST)
				break;
			if (last && file && r >= 0)
				close(r);
			fd = openat(d, c, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		}
		close(d);
		d = fd;
		if (d < 0)
			break;
	}
	if (d < 0)
		return b_fail(e, errno, "create mount point %s: %s", target, strerror(errno));
	return d;
}

int floor_build(const struct b_spec *s, bool strings, struct b_err *e)
{
	int *fds = calloc(s->nlayers + 2, sizeof(int));
	int ctl = -1, fsfd = -1, root = -1, ubase = -1, r = 0;
	size_t n = 0;

	if (!fds)
		abort();
	if (s->nlayers < 2 && !s->upper) {
		free(fds);
		return b_fail(e, EOPNOTSUPP, "floor: a single read-only layer is not modelled");
	}
	fsfd = fsopen("overlay", FSOPEN_CLOEXEC);
	if (fsfd < 0) {
		r = b_fail(e, errno, "fsopen overlay: %s", strerror(errno));
		goto out;
	}
	for (size_t i = s->nlayers; i-- > 0;) {
		const struct b_layer *l = &s->layers[i];

		if (l->image) {
			if (ctl < 0 && (ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC)) < 0) {
				r = b_fail(e, errno, "open /dev/loop-control: %s", strerror(errno));
				goto out;
			}
			fds[n] = image_mount(ctl, l, e);
		} else if (strings && strlen(l->path) < 256) {
			/* fsconfig strings are capped at 256 bytes; each lowerdir+ is one value */
			if (fsconfig(fsfd, FSCONFIG_SET_STRING, "lowerdir+", l->path, 0) < 0) {
				r = b_fail(e, errno, "lowerdir+ %s: %s", l->path, strerror(errno));
				goto out;
			}
			continue;
		} else {
			fds[n] = open(l->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (fds[n] < 0)
				b_fail(e, errno, "open %s: %s", l->path, strerror(errno));
		}
		if (fds[n] < 0) {
			r = -e->err;
			goto out;
		}
		if (fsconfig(fsfd, FSCONFIG_SET_FD, "lowerdir+", NULL, fds[n++]) < 0) {
			r = b_fail(e, errno, "lowerdir+ %s: %s", l->path, strerror(errno));
			goto out;
		}
	}
	if (s->upper) {
		ubase = tmpfs_mount(s->upper_data, 0, e);
		if (ubase < 0) {
			r = ubase;
			goto out;
		}
		if (mkdirat(ubase, "upper", 0755) < 0 || mkdirat(ubase, "work", 0700) < 0 ||
		    (fds[n++] = openat(ubase, "upper", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0 ||
		    (fds[n++] = openat(ubase, "work", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0 ||
		    fsconfig(fsfd, FSCONFIG_SET_FD, "upperdir", NULL, fds[n - 2]) < 0 ||
		    fsconfig(fsfd, FSCONFIG_SET_FD, "workdir", NULL, fds[n - 1]) < 0) {
			r = b_fail(e, errno, "upper: %s", strerror(errno));
			goto out;
		}
	}
	if (fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0 ||
	    (root = fsmount(fsfd, FSMOUNT_CLOEXEC, s->upper ? 0 : MOUNT_ATTR_RDONLY)) < 0) {
		r = b_fail(e, errno, "create overlay: %s", strerror(errno));
		goto out;
	}
	for (size_t i = 0; i < s->nvols && r == 0; i++) {
		const struct b_vol *v = &s->vols[i];
		int vfd, tfd;

		if (v->tmpfs) {
			vfd = tmpfs_mount(v->data, v->attrs, e);
		} else {
			struct mount_attr ma = { .attr_set = v->attrs };

			vfd = open_tree(AT_FDCWD, v->src, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (v->rec ? AT_RECURSIVE : 0));
			if (vfd < 0)
				b_fail(e, errno, "open_tree %s: %s", v->src, strerror(errno));
			else if (v->attrs && mount_setattr(vfd, "", AT_EMPTY_PATH, &ma, sizeof(ma)) < 0) {
				close(vfd);
				vfd = b_fail(e, errno, "mount_setattr %s: %s", v->src, strerror(errno));
			}
		}
		if (vfd < 0) {
			r = -e->err;
			break;
		}
		tfd = floor_target(root, v->target, v->file, e);
		if (tfd < 0)
			r = tfd;
		else if (move_mount(vfd, "", tfd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
			r = b_fail(e, errno, "move_mount %s: %s", v->target, strerror(errno));
		if (tfd >= 0)
			close(tfd);
		close(vfd);
	}
out:
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
	free(fds);
	if (ubase >= 0)
		close(ubase);
	if (fsfd >= 0)
		close(fsfd);
	if (ctl >= 0)
		close(ctl);
	if (r < 0 && root >= 0)
		close(root);
	return r < 0 ? r : root;
}
