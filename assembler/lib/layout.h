/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The layout model: what a layout file says, validated, with source
 * locations. The parse stage (layout.c) fills it from text alone; the open
 * stage (open.c) adds one fd per host object (struct ra_src) and loads the
 * nested layouts. After that the model is read-only.
 */
#ifndef ROOTASM_LAYOUT_H
#define ROOTASM_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "rootasm.h"

#define RA_LAYOUT_MAX_BYTES	(1u << 20)	/* layout file size cap */
#define RA_MAX_LAYERS		500		/* overlayfs' own limit */
#define RA_MAX_MOUNTS		4096		/* per layout */
#define RA_MAX_TOTAL_MOUNTS	4096		/* per assembly, nested layouts included */
#define RA_MAX_LAYOUTS		64		/* layout files per assembly, the top one included */
#define RA_MAX_GROUPS		256
#define RA_MAX_DEPTH		8		/* nested layouts */
#define RA_MAX_YAML_DEPTH	32		/* nesting of YAML collections */
#define RA_MAX_YAML_ALIASES	1024
#define RA_MAX_YAML_NODES	262144
#define RA_PATH_MAX		4096
#define RA_MAX_IDRANGES		340		/* the kernel's own limit per map */
#define RA_IDMAP_TEXT_MAX	4095		/* a uid_map/gid_map write is at most one page, less one */

struct ra_loc {
	unsigned int line, column;		/* 1-based */
};

/* What kind of host object a path must name. */
enum ra_src_kind {
	RA_SRC_DIR,				/* a directory (layer, upper) */
	RA_SRC_IMAGE,				/* a regular file, read (squashfs/erofs image) */
	RA_SRC_BIND,				/* anything but a symlink (bind source) */
	RA_SRC_USERNS,				/* a user namespace (nsfs) */
	RA_SRC_LAYOUT,				/* a regular file, read (nested layout) */
	RA_SRC_LOWER,				/* a directory, or a regular file read (an image): an overlay's lower */
};

/* A host object the layout names: parsed as a path, opened once as an fd. */
struct ra_src {
	enum ra_src_kind kind;
	char *path;				/* as written (relative: to the layout's directory) */
	char *display;				/* for messages and the plan: the layout's directory joined on */
	char *key;				/* "layers[2].image" */
	struct ra_loc loc;
	int fd;					/* open stage; -EBADF before and when offline */
	mode_t mode;				/* st_mode of what was opened */
	uid_t uid;				/* its owner */
	/*
	 * A file (an image): the one trust rule's verdict (ra_admin_trusted()),
	 * taken at open on the fd and the directory it was found in: 0, root's
	 * throughout; -errno with admin_why saying why not. 1: not asked.
	 */
	int admin_trust;
	char *admin_why;
	bool trusted;				/* image: `trusted: true`, the layout vouches for the file */
	/* the authorize stage (authorize.c): what the principal is given of it */
	bool auth_ro;				/* bind: made read-only (auth_why says why) */
	char *auth_why;
};

struct ra_idrange {
	uint32_t inside, outside, count;
};

/* An idmapped mount: a given user namespace, or one made from ranges. */
struct ra_idmap {
	bool set;
	struct ra_src userns;			/* path NULL when ranges are given */
	struct ra_idrange *uids, *gids;
	size_t nuids, ngids;
};

enum ra_fstype {
	RA_FS_AUTO,
	RA_FS_SQUASHFS,
	RA_FS_EROFS,
};

/* Mount attributes and propagation, as mount_setattr() takes them. */
struct ra_attrs {
	uint64_t set, clr;
	uint64_t propagation;			/* MS_PRIVATE/MS_SHARED/MS_SLAVE/MS_UNBINDABLE or 0 */
	bool recursive;				/* bind: AT_RECURSIVE clone, recursive setattr */
};

enum ra_layer_kind {
	RA_LAYER_IMAGE,
	RA_LAYER_DIR,
};

struct ra_layer {
	enum ra_layer_kind kind;
	struct ra_src src;
	enum ra_fstype fstype;
	struct ra_idmap idmap;
	struct ra_loc loc;
};

enum ra_upper_kind {
	RA_UPPER_NONE,
	RA_UPPER_TMPFS,
	RA_UPPER_DIR,
	RA_UPPER_DIRS,				/* upperdir + workdir as they are (an engine's writable layer) */
};

struct ra_tmpfs {
	char *size;				/* validated "123", "64M", "50%"; NULL = default */
	char *nr_inodes;
	unsigned int mode;
	bool has_mode;
};

struct ra_upper {
	enum ra_upper_kind kind;
	struct ra_src src;			/* RA_UPPER_DIR; RA_UPPER_DIRS: the upperdir */
	struct ra_src work;			/* RA_UPPER_DIRS: the workdir */
	struct ra_tmpfs tmpfs;
	struct ra_loc loc;
};

struct ra_creds {
	bool set;
	uid_t uid;
	gid_t gid;
	gid_t *groups;
	size_t ngroups;
	uint64_t caps;				/* bit per capability number */
	struct ra_loc loc;
};

enum ra_mount_kind {
	RA_MOUNT_BIND,
	RA_MOUNT_TMPFS,
	RA_MOUNT_IMAGE,
	RA_MOUNT_LAYOUT,
	RA_MOUNT_OVERLAY,
	RA_MOUNT__COUNT,			/* each kind is described once: volume.h */
};

struct ra_mount {
	enum ra_mount_kind kind;
	struct ra_src src;			/* bind, image, layout; path NULL for tmpfs */
	char *target;				/* absolute, normalized, inside the rootfs */
	enum ra_fstype fstype;
	struct ra_attrs attrs;
	struct ra_tmpfs tmpfs;
	struct ra_idmap idmap;
	struct rootasm_layout *nested;		/* RA_MOUNT_LAYOUT, after the open stage */
	struct ra_loc loc;
};

/* exec: what `rootasm exec` gives the command (the sandbox; see exec.c). */
struct ra_exec {
	bool deny_mount_api;			/* the mount API in the seccomp profile (default true) */
	bool privileged;			/* opt out of the sandbox's restrictions */
	bool user_set;
	uid_t uid;
	gid_t gid;
	gid_t *groups;
	size_t ngroups;
	bool caps_set;
	uint64_t caps;				/* default: the OCI default set */
	char **env;				/* "KEY=VALUE", NULL-terminated; NULL: the default */
	size_t nenv;
	char *hostname;				/* NULL: "rootasm" */
	int network;				/* RA_NET_NONE (the default) or RA_NET_HOST */
	/* an image's command (its config's Entrypoint and Cmd), as `podman run IMAGE [CMD]` */
	char **entrypoint;			/* NULL-terminated; NULL: none */
	size_t nentrypoint;
	char **cmd;				/* NULL-terminated; NULL: none (the caller's CMD is needed) */
	size_t ncmd;
	char *workdir;				/* absolute, normalized; NULL: "/" */
	char *user;				/* "USER[:GROUP]" (names or ids) resolved in the tree; NULL: uid/gid */
	struct ra_loc loc;
};

#define RA_NET_NONE	0
#define RA_NET_HOST	1
#define RA_MAX_ENV	1024
#define RA_MAX_ARGS	4096		/* exec.entrypoint, exec.cmd: each */
#define RA_MAX_ARG	(128u << 10)	/* bytes of one argument (the kernel's MAX_ARG_STRLEN) */

struct rootasm_layout {
	char *file;				/* the layout file as given, for messages */
	char *dir;				/* its directory as given (display only) */
	struct ra_layer *layers;
	size_t nlayers;
	struct ra_upper upper;
	struct ra_creds creds;
	struct ra_mount *mounts;
	size_t nmounts;
	struct ra_attrs attributes;		/* on the root mount */
	struct ra_exec exec;
	bool opened;				/* the open stage ran: every ra_src has its fd */
	/* the top layout, opened: where its file was read (its directory fd's path); NULL: from memory */
	char *anchor;
	/* the top layout's file judged before its text was read (ra_authorize_layout_file()) */
	bool file_judged;
	/* the top layout: who it was loaded for (never NULL after a load: open.c); what it is given: authorize.c */
	struct rootasm_principal *principal;
	bool authorized;			/* the authorize stage ran */
};

/* Diagnostics of one load: the first error goes to @e, every one to @fn. */
struct ra_diag {
	void (*fn)(const struct rootasm_error *e, void *userdata);
	void *userdata;
	unsigned int count;
	bool keep_partial;			/* on a layout error, still return what was parsed */
};

/*
 * The parse stage: text -> model. Pure: it touches no file. @file names the
 * text in diagnostics; @dir is prefixed to relative paths for display only.
 * With @d->keep_partial a layout error (-EINVAL) still sets *ret to what was
 * parsed, so that the open stage can report its problems too; caller frees.
 */
int ra_layout_parse(const char *buf, size_t len, const char *file, const char *dir, struct ra_diag *d,
		    struct rootasm_layout **ret, struct rootasm_error *e);

/* exec.env's rule for an entry: "KEY=VALUE", KEY of letters, digits and '_', not first a digit. */
bool ra_env_ok(const char *s);

/* Normalize an absolute in-rootfs target: collapse "//" and "/./"; reject "..". */
int ra_normalize_target(const char *in, char *out, size_t size);

/* The name of capability @cap ("cap_chown") into @buf. */
const char *ra_cap_name(unsigned int cap, char *buf, size_t size);

/* A layout error at @file:@loc, key @key; also reported through @d. Returns -EINVAL. */
int ra_layout_err(struct ra_diag *d, struct rootasm_error *e, const char *file, struct ra_loc loc,
		  const char *key, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/*
 * The one walk over the host objects a layout names (model.c), in layout
 * order: each layer's source and its idmap's user namespace, the upper
 * directory, each mount's source and its idmap's user namespace (@m: that
 * mount), and with RA_WALK_NESTED a mount's nested layout right after it.
 * Objects with no path (a tmpfs, ranges, a tmpfs upper) are visited too.
 * A nonzero return from @fn ends the walk with it.
 */
typedef int (*ra_walk_fn)(struct rootasm_layout *l, struct ra_src *s, struct ra_mount *m, void *userdata);
#define RA_WALK_NESTED	1u
int ra_layout_walk(struct rootasm_layout *l, unsigned int flags, ra_walk_fn fn, void *userdata);

/*
 * The tree's upper replaced, before the open stage, by the directories
 * @upperdir and @workdir, as `upper: {upperdir, workdir}` would name them
 * (rootasm_load_opts.upper_dir: an engine's writable layer). -ENOMEM, else 0.
 */
int ra_layout_set_upper_dirs(struct rootasm_layout *l, const char *upperdir, const char *workdir);

/* Whether the layout makes an overlay (more than one layer, or an upper). */
static inline bool ra_is_overlay(const struct rootasm_layout *l)
{
	return l->nlayers > 1 || l->upper.kind != RA_UPPER_NONE;
}

/*
 * The end of a stage that reports every problem it finds (open, authorize):
 * its first hard error @r, else the error of the first problem (@bad, what
 * its diagnostics said first), else the stage is @done.
 */
static inline int ra_stage_end(int r, int bad, bool *done)
{
	if (r < 0)
		return r;
	if (bad)
		return bad;
	*done = true;
	return 0;
}

#endif
