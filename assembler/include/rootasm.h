/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rootasm - assemble a container root filesystem out of detached mounts.
 *
 * Public API. Every function returns >= 0 on success (which may be an fd)
 * and -errno on failure. Functions that take a struct rootasm_error fill it
 * on failure (when non-NULL) with the operation, the path and, where the
 * kernel gave one, the fs_context message; it is left untouched on success.
 */
#ifndef ROOTASM_H
#define ROOTASM_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ROOTASM_ERR_OP_MAX	64
#define ROOTASM_ERR_PATH_MAX	4096
#define ROOTASM_ERR_MSG_MAX	512

struct rootasm_error {
	int err;				/* positive errno, or 0 */
	char op[ROOTASM_ERR_OP_MAX];		/* "fsconfig lowerdir+", "parse", ... */
	char path[ROOTASM_ERR_PATH_MAX];	/* path the operation was on */
	char msg[ROOTASM_ERR_MSG_MAX];		/* kernel fs_context message, or detail */
	char file[ROOTASM_ERR_PATH_MAX];	/* layout file, when the error has a location */
	unsigned int line, column;		/* 1-based; 0 when unknown */
	bool usage;				/* bad input (exit 2), not a runtime failure */
};

/* Format @e as one line (no trailing newline) into @buf; returns @buf. */
const char *rootasm_error_format(const struct rootasm_error *e, char *buf, size_t size);

struct rootasm_layout;

/* Parse and validate a layout file (YAML or JSON). Caller owns *ret. */
int rootasm_layout_load(const char *path, struct rootasm_layout **ret, struct rootasm_error *e);
void rootasm_layout_free(struct rootasm_layout *l);

enum rootasm_plan_format {
	ROOTASM_PLAN_TEXT,
	ROOTASM_PLAN_JSON,
};

/* Write the ordered plan of @l to @out (a FILE *). */
int rootasm_layout_print_plan(const struct rootasm_layout *l, void *out, enum rootasm_plan_format fmt);

/* Kernel features, probed by trying each on a throwaway tmpfs. */
enum rootasm_feature {
	ROOTASM_FEAT_MOUNT_API,		/* fsopen/fsconfig/fsmount/move_mount/open_tree (5.2) */
	ROOTASM_FEAT_MOUNT_SETATTR,	/* mount_setattr (5.12) */
	ROOTASM_FEAT_OPENAT2,		/* openat2 RESOLVE_IN_ROOT (5.6) */
	ROOTASM_FEAT_LOOP_CONFIGURE,	/* LOOP_CONFIGURE (5.8) */
	ROOTASM_FEAT_OVL_FD_LAYERS,	/* overlay lowerdir+/upperdir/workdir via FSCONFIG_SET_FD (6.13) */
	ROOTASM_FEAT_FSCONFIG_OPATH,	/* FSCONFIG_SET_FD accepts O_PATH fds (6.15) */
	ROOTASM_FEAT_OPEN_TREE_DETACHED,/* open_tree(OPEN_TREE_CLONE) of a detached mount (6.15) */
	ROOTASM_FEAT_MOVE_DETACHED,	/* move_mount of a detached tree onto a detached tree (6.15) */
	ROOTASM_FEAT_OVL_DETACHED_LAYERS,/* overlay layers that are detached mounts (6.15) */
	ROOTASM_FEAT_OVL_OVERRIDE_CREDS,/* overlay "override_creds" option (6.15) */
	ROOTASM_FEAT_OVL_CREDS_NOADMIN,	/* override_creds recorded without CAP_SYS_ADMIN over detached layers */
	ROOTASM_FEAT_PIDFD_INFO_EXIT,	/* PIDFD_GET_INFO with PIDFD_INFO_EXIT (6.15) */
	ROOTASM_FEAT_FANOTIFY_MNT,	/* fanotify FAN_MNT_ATTACH/DETACH, FAN_MARK_MNTNS (6.15) */
	ROOTASM_FEAT_STATMOUNT_IDMAP,	/* statmount STATMOUNT_MNT_UIDMAP/GIDMAP (6.15) */
	ROOTASM_FEAT_OPEN_TREE_ATTR,	/* open_tree_attr() (6.15) */
	ROOTASM_FEAT_IDMAP_IDMAPPED,	/* an idmapped mount of an idmapped mount (6.15) */
	_ROOTASM_FEAT_MAX,
};

struct rootasm_probe {
	bool present[_ROOTASM_FEAT_MAX];
	char detail[_ROOTASM_FEAT_MAX][160];
};

/* Probe every feature; needs CAP_SYS_ADMIN. Touches no attached mount. */
int rootasm_probe(struct rootasm_probe *ret);
const char *rootasm_feature_name(enum rootasm_feature f);
const char *rootasm_feature_desc(enum rootasm_feature f);

/* Whether exec should deny the mount API to the command (layout exec.deny_mount_api). */
bool rootasm_layout_deny_mount_api(const struct rootasm_layout *l);

/* Features that @l needs, as a bit mask of (1u << enum rootasm_feature). */
unsigned int rootasm_layout_needs(const struct rootasm_layout *l);

/*
 * Assemble @l into a detached mount tree. Returns an O_PATH fd of the tree's
 * root mount; the caller owns it. Closing it dissolves the whole tree.
 * On failure nothing is left behind: no mount, no loop device, no fd.
 */
int rootasm_assemble(const struct rootasm_layout *l, struct rootasm_error *e);

/* Attach the tree @tree_fd at @dir with one move_mount(). */
int rootasm_attach(int tree_fd, const char *dir, struct rootasm_error *e);

/*
 * Send @tree_fd over the AF_UNIX stream socket at @socket_path with
 * SCM_RIGHTS. Protocol: one message whose payload is the line
 * "rootasm-tree 1 <layout-path>\n" carrying exactly one fd.
 */
int rootasm_send_fd(int tree_fd, const char *socket_path, const char *layout_path,
		    struct rootasm_error *e);

struct rootasm_exec_opts {
	bool deny_mount_api;		/* seccomp filter that denies the mount API */
	bool quiet;
};

struct rootasm_exec_result {
	int status;			/* exit code, or 128 + signal */
	bool from_pidfd_info;		/* read through PIDFD_INFO_EXIT */
	unsigned long long cgroupid;	/* from PIDFD_INFO_EXIT, 0 otherwise */
};

/*
 * Run @argv with the tree as root in a new mount and pid namespace. The tree
 * is attached in that namespace and goes away with it: @tree_fd is used up
 * (the caller still owns and closes the fd, but cannot attach the tree again).
 * Returns 0 and fills @res (the command's status), or -errno.
 */
int rootasm_exec(int tree_fd, char *const argv[], const struct rootasm_exec_opts *opts,
		 struct rootasm_exec_result *res, struct rootasm_error *e);

/*
 * Mount notifications (fanotify FAN_MNT_ATTACH/FAN_MNT_DETACH, Linux 6.15).
 * rootasm_watch_open() watches the mount namespace of @mntns_fd (an nsfs fd,
 * e.g. of /proc/self/ns/mnt); returns a non-blocking fanotify fd, caller owns it.
 */
struct rootasm_mount_event {
	bool attach, detach;		/* a move reports both */
	unsigned long long mnt_id;	/* unique 64-bit mount id (statmount) */
};

int rootasm_watch_open(int mntns_fd, struct rootasm_error *e);
/* Read what is queued (waiting up to @timeout_ms; 0 = do not wait); returns the count. */
int rootasm_watch_read(int fd, struct rootasm_mount_event *ev, size_t max, int timeout_ms);

/* Describe mount @mnt_id (in the namespace of @mntns_fd, or ours if < 0) as one line. */
int rootasm_mount_describe(unsigned long long mnt_id, int mntns_fd, bool json, char *buf, size_t size);
/* Count the mounts of the tree whose root is mounted at @path (it and all below it). */
int rootasm_tree_count(const char *path);
/* Print each mount of the tree at @path, with its id mappings, read back with statmount. */
int rootasm_tree_print(const char *path, void *out, bool json, struct rootasm_error *e);

#ifdef __cplusplus
}
#endif
#endif
