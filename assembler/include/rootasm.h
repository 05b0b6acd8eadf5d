/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rootasm - assemble a container root filesystem out of detached mounts.
 *
 * Public API. Every function that returns int returns >= 0 on success (which
 * may be an fd) and -errno on failure. Functions that take a struct
 * rootasm_error fill it on failure (when non-NULL) with the operation, the
 * path, the cause and, where the kernel gave one, its fs_context message; it
 * is left untouched on success. Out of memory is reported like any other
 * failure (err ENOMEM, op naming what was being allocated).
 *
 * The data path: a layout is parsed (pure: no filesystem access), then every
 * host object it names is opened once (rootasm_layout_load() returns a layout
 * that holds one fd per host object), then planned (an ordered list of
 * operations, printed by rootasm_plan_print()) and executed
 * (rootasm_assemble()). Nothing after the load resolves a host path again.
 *
 * Threads: a struct rootasm_ctx may be shared by any number of threads (its
 * probe cache is locked). A loaded layout is read-only after
 * rootasm_layout_load(): several threads may assemble it at once. The library
 * never changes the process' signal mask, signal handlers or working
 * directory; helper processes are made with clone3(CLONE_PIDFD) without an
 * exit signal (a SIGCHLD handler of the caller never sees them), die with the
 * thread that made them (PR_SET_PDEATHSIG), and are reaped before the call
 * returns. rootasm_exec() is the exception documented there.
 *
 * ABI rules (librootasm.so.0; librootasm(3) says the same):
 *  - Exactly the functions this header declares are exported, each in a
 *    version node of the linker script (librootasm.map). Within one soname a
 *    function is added, never changed or removed; a new one goes to the node
 *    of the release that adds it.
 *  - Option structs (rootasm_load_opts, rootasm_assemble_opts,
 *    rootasm_send_opts, rootasm_exec_opts, rootasm_cache_opts,
 *    rootasm_client_assemble_opts, rootasm_import_opts, rootasm_bundle_opts)
 *    begin with "size": set it to sizeof() of the struct as your header
 *    declares it. The library reads only the first @size bytes; fields past
 *    them take their documented defaults, and a zeroed field always is the
 *    default, so a program built against an older header keeps working. A
 *    @size larger than the library knows is accepted when the bytes it does
 *    not know are all zero, and refused with E2BIG otherwise (a newer program
 *    asks for something this library cannot do); a @size too small for the
 *    flags is refused with EINVAL.
 *  - Unknown flag bits are refused with EINVAL, never ignored.
 *  - rootasm_cache_stats, which the library fills, begins with "size" too:
 *    the library writes only the first @size bytes of it.
 *  - Structs the library fills (rootasm_error, rootasm_exec_result,
 *    rootasm_mount_event, rootasm_bundle_result, rootasm_import_result,
 *    rootasm_import_layer) end in reserved space that the library zeroes:
 *    new fields take it over, so their size stays the same within a soname.
 *    rootasm_import_result and rootasm_import_layer got theirs in 0.4: the
 *    two functions that take them have a new symbol version (LIBROOTASM_0.4),
 *    and their LIBROOTASM_0.2 versions keep serving programs built before.
 *    rootasm_cache_entry_info is the library's, lent to a callback: it only
 *    grows at its end. Opaque objects (rootasm_err, rootasm_layout_builder, ...) have no size to keep.
 *  - Enums only grow at the end. A caller treats an unknown error kind as
 *    ROOTASM_ERROR_RUNTIME; no public array is sized by an enum (ask
 *    rootasm_feature_count()); rootasm_layout_needs() is a 64-bit mask, so
 *    there are at most 64 features within a soname.
 */
#ifndef ROOTASM_H
#define ROOTASM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Built with -fvisibility=hidden: what this header declares is the interface. */
#if defined(__GNUC__) && __GNUC__ >= 4
#pragma GCC visibility push(default)
#endif

#define ROOTASM_VERSION_MAJOR	0
#define ROOTASM_VERSION_MINOR	5
#define ROOTASM_VERSION_PATCH	0
#define ROOTASM_VERSION_STRING	"0.5.0"
#define ROOTASM_VERSION_NUMBER	(ROOTASM_VERSION_MAJOR * 10000 + ROOTASM_VERSION_MINOR * 100 + ROOTASM_VERSION_PATCH)

/* The library's version at run time ("0.2.0"). */
const char *rootasm_version(void);

/* ------------------------------------------------------------------ errors */

#define ROOTASM_ERR_OP_MAX	64
#define ROOTASM_ERR_PATH_MAX	4096
#define ROOTASM_ERR_MSG_MAX	512

enum rootasm_error_kind {
	ROOTASM_ERROR_RUNTIME = 0,	/* a runtime failure (exit status 1) */
	ROOTASM_ERROR_USAGE,		/* bad input: a layout, an option (exit status 2) */
	ROOTASM_ERROR_UNSUPPORTED,	/* the kernel lacks a feature the layout needs */
	ROOTASM_ERROR_PERMISSION,	/* the caller is not permitted (no privilege) */
};

struct rootasm_error {
	int err;				/* positive errno */
	enum rootasm_error_kind kind;
	char op[ROOTASM_ERR_OP_MAX];		/* "fsconfig lowerdir+"; for a layout error its key */
	char path[ROOTASM_ERR_PATH_MAX];	/* the path the operation was on */
	char msg[ROOTASM_ERR_MSG_MAX];		/* the kernel's fs_context message, or detail */
	char file[ROOTASM_ERR_PATH_MAX];	/* layout file, when the error has a location */
	unsigned int line, column;		/* 1-based; 0 when unknown */
	char feature[ROOTASM_ERR_OP_MAX];	/* ROOTASM_ERROR_UNSUPPORTED: the feature's name */
	unsigned char reserved[64];
};

/* Whether @e is a usage error (exit status 2). */
static inline bool rootasm_error_is_usage(const struct rootasm_error *e)
{
	return e->kind == ROOTASM_ERROR_USAGE;
}

/* Format @e as one line (no trailing newline, no control characters) into @buf; returns @buf. */
const char *rootasm_error_format(const struct rootasm_error *e, char *buf, size_t size);

/* Write @e as one JSON object ({"error": {...}}, see rootasm(1)) and a newline to @out. */
int rootasm_error_print_json(const struct rootasm_error *e, FILE *out, bool pretty);

/*
 * An error on the heap, its fields behind accessors: a program keeps one
 * without the 9 KB of struct rootasm_error, and without its caps. Filled from
 * a struct rootasm_error with rootasm_err_set(); when the library had to cut
 * the path or the file name to fit that struct (a path of 4096 bytes or more),
 * and @e is the struct the library last filled on this thread, the whole text
 * is taken. The string accessors return "" for an empty field, never NULL;
 * the strings live until the next rootasm_err_set() or rootasm_err_free().
 */
struct rootasm_err;

/* Caller owns *ret (rootasm_err_free()); a new one reads as no error (errno 0). */
int rootasm_err_new(struct rootasm_err **ret);
void rootasm_err_free(struct rootasm_err *err);
/* Copy @e into @err (what it held before is dropped); -ENOMEM leaves @err as it was. */
int rootasm_err_set(struct rootasm_err *err, const struct rootasm_error *e);
int rootasm_err_errno(const struct rootasm_err *err);		/* positive errno */
int rootasm_err_kind(const struct rootasm_err *err);		/* enum rootasm_error_kind */
const char *rootasm_err_op(const struct rootasm_err *err);
const char *rootasm_err_path(const struct rootasm_err *err);
const char *rootasm_err_message(const struct rootasm_err *err);
const char *rootasm_err_file(const struct rootasm_err *err);
unsigned int rootasm_err_line(const struct rootasm_err *err);
unsigned int rootasm_err_column(const struct rootasm_err *err);
const char *rootasm_err_feature(const struct rootasm_err *err);

/* ----------------------------------------------------------------- context */

struct rootasm_ctx;

#define ROOTASM_CTX_DEBUG	0x1u	/* trace every operation (also: ROOTASM_DEBUG=1 in the environment) */

/* A context: the feature probe cache and the debug log. Caller owns *ret. */
int rootasm_ctx_new(unsigned int flags, struct rootasm_ctx **ret);
void rootasm_ctx_free(struct rootasm_ctx *ctx);
/*
 * Dissolve the temporary detached mounts the context's assemblies and probes
 * left behind (the upper layer's base tmpfs, the probes' scratch mounts):
 * each dissolve waits for an RCU grace period, so rootasm_assemble() defers
 * them, at most 64 at a time, to this call (a latency-sensitive caller makes
 * it after it has delivered the tree), to rootasm_ctx_free(), or to the
 * process's exit. Nothing else stays behind: no loop device, no attached mount.
 */
void rootasm_ctx_flush(struct rootasm_ctx *ctx);
/* Where the debug trace goes (default: stderr, one line each, "rootasm: debug: ..."). */
void rootasm_ctx_set_log(struct rootasm_ctx *ctx, void (*fn)(void *userdata, const char *line), void *userdata);

/* -------------------------------------------------------------- principals */

/*
 * Who a tree is for. Every front end (the CLI, rootasmd, the bundle code)
 * builds one and hands it to rootasm_layout_load*(); none judges rights on
 * its own. What a principal is given (the authorize stage; `rootasm check
 * --as` prints it):
 *
 *   administrator  everything the layout says; image files (and every
 *                  directory above each) must be root-owned and not writable by
 *                  group or others (a root-owned sticky directory holds them
 *                  safely), unless the layout marks the image `trusted: true`
 *   user           host objects opened with its own credentials (it reaches
 *                  only what it could reach itself); a rw bind only of what it
 *                  could write, else read-only (said in the plan); no idmaps of
 *                  the layout's own; no upper directory on the host (copies-up
 *                  there would be made with the assembler's rights); every mount
 *                  of the tree nosuid,nodev, and the tree locked
 *
 * No principal is no administrator: NULL is the calling process, judged
 * (rootasm_principal_self()). Whatever a tree is given, the authorize stage
 * decides it once, as a grant the plan carries out (`rootasm check` prints it).
 *   user namespace (a user with userns_fd) image layers, image and tmpfs volumes
 *                  are idmapped into it (its root owns what the image's root
 *                  owns); host directories (dir layers, binds) are not: there its
 *                  root owns only what its owner owns on the host
 */
struct rootasm_principal;

/* An administrator (what the calling process may do, unreduced). Caller owns *ret. */
int rootasm_principal_admin(struct rootasm_principal **ret, struct rootasm_error *e);
/*
 * An ordinary user: @uid, @gid, @groups. @userns_fd >= 0: the user namespace
 * it attaches the tree in (duplicated; it must map uid 0 and gid 0, and be
 * owned by @uid unless @uid is 0). Caller owns *ret.
 */
int rootasm_principal_user(uid_t uid, gid_t gid, const gid_t *groups, size_t ngroups, int userns_fd,
			   struct rootasm_principal **ret, struct rootasm_error *e);
/*
 * A user as the user database knows it (since 0.5): @uid, its entry's primary
 * gid and every group it is in (getgrouplist()); with no entry, gid @uid and
 * no groups. @userns_fd as rootasm_principal_user(). Caller owns *ret.
 */
int rootasm_principal_of_uid(uid_t uid, int userns_fd, struct rootasm_principal **ret, struct rootasm_error *e);
/*
 * The process behind @pidfd (a socket peer's SO_PEERPIDFD) with the
 * credentials the kernel gave for it (SO_PEERCRED, SO_PEERGROUPS): an
 * administrator when, still alive, it has CAP_SYS_ADMIN in the initial user
 * namespace, this process's mount namespace and this process's root directory;
 * else a user, whatever its uid. @pidfd < 0: a user.
 */
int rootasm_principal_of_pidfd(int pidfd, uid_t uid, gid_t gid, const gid_t *groups, size_t ngroups,
			       struct rootasm_principal **ret, struct rootasm_error *e);
/*
 * What a front end limits @p to (since 0.5), checked by the authorize stage
 * on the fds the open stage holds and printed with the grant by rootasm
 * check: ROOTASM_LIMIT_LAYOUTS, the directory of the layout file (a file:
 * rootasm_layout_load(), or _load_mem() with ROOTASM_LOAD_DIR_FD) must be one
 * of @dirs or lie below one; ROOTASM_LIMIT_SOURCES, every host object the
 * layout opens, nested layouts' too. @dirs: clean absolute paths; n == 0
 * allows none. A second call for the same limit replaces it.
 * ROOTASM_LIMIT_USERNS (since 0.5; @dirs NULL, @n 0): no tree idmapped into a
 * user namespace, the principal's own or the assembly's (rootasmd's rule
 * without "userns").
 */
#define ROOTASM_LIMIT_LAYOUTS	1u
#define ROOTASM_LIMIT_SOURCES	2u
#define ROOTASM_LIMIT_USERNS	4u
int rootasm_principal_limit(struct rootasm_principal *p, unsigned int what, const char *const *dirs, size_t n,
			    struct rootasm_error *e);
/*
 * The calling process, judged as rootasm_principal_of_pidfd() judges a peer
 * (since 0.5): an administrator, or a user with its effective uid, gid and
 * groups (uid 0 without CAP_SYS_ADMIN, root in a user namespace of its own).
 * What a NULL principal means everywhere. Caller owns *ret.
 */
int rootasm_principal_self(struct rootasm_principal **ret, struct rootasm_error *e);
int rootasm_principal_is_admin(const struct rootasm_principal *p);
/* "administrator", "uid 1000 gid 1000 groups 100", "... in user namespace 4026532345" */
const char *rootasm_principal_describe(const struct rootasm_principal *p);
void rootasm_principal_free(struct rootasm_principal *p);
/*
 * Run @fn(@userdata) with @p's file-system credentials (a thread with its
 * fsuid, fsgid and groups, and no effective capability; an administrator's,
 * or the caller's own with @p NULL, runs in the calling thread) and return
 * what it returns.
 */
int rootasm_principal_run(const struct rootasm_principal *p, int (*fn)(void *userdata), void *userdata);

/* ------------------------------------------------------------------ layout */

struct rootasm_layout;

#define ROOTASM_LOAD_OFFLINE	0x1u	/* parse and validate only: open no host object (check --offline) */
#define ROOTASM_LOAD_DIR_FD	0x2u	/* rootasm_layout_load_mem(): dir_fd anchors relative paths */
#define ROOTASM_LOAD_ABSOLUTE	0x4u	/* refuse relative host paths (a layout from elsewhere: rootasmd) */

struct rootasm_load_opts {
	size_t size;				/* sizeof(struct rootasm_load_opts) */
	unsigned int flags;			/* ROOTASM_LOAD_* */
	/* Called for every problem found, not only the first: the text's, then the host paths' (each in file order). */
	void (*diag)(const struct rootasm_error *e, void *userdata);
	void *userdata;
	const char *name;			/* rootasm_layout_load_mem(): the name in diagnostics */
	int dir_fd;				/* with ROOTASM_LOAD_DIR_FD: anchor of relative paths */
	/*
	 * Who the tree is for (NULL: the calling process, judged:
	 * rootasm_principal_self()). A principal that is not
	 * one has the layout read and every host object opened with its own
	 * file-system credentials (a thread of its uid, gid and groups, with no
	 * capability), so it reaches nothing it could not reach on the host; then
	 * the authorize stage decides what it is given (rootasm_principal_user()).
	 * The layout keeps a copy: rootasm_assemble*() builds its tree for it.
	 */
	const struct rootasm_principal *principal;
	/*
	 * since 0.5: the tree's upper is these two existing directories,
	 * overlayfs' upperdir and workdir used as they are (an engine's
	 * writable layer of the container: nothing made in them, nothing
	 * chowned, index=off), in place of the layout's own upper, as
	 * `upper: {upperdir, workdir}` in it would name them: an
	 * administrator's only (the authorize stage refuses it to a user).
	 * Absolute; both or neither. NULL: the layout's.
	 */
	const char *upper_dir;
	const char *work_dir;
};

/*
 * Parse and validate a layout file (YAML or JSON), then open every host
 * object it names (unless ROOTASM_LOAD_OFFLINE). @opts may be NULL. Caller
 * owns *ret; it holds one fd per host object until rootasm_layout_free().
 */
int rootasm_layout_load(struct rootasm_ctx *ctx, const char *path, const struct rootasm_load_opts *opts,
			struct rootasm_layout **ret, struct rootasm_error *e);
/* The same from memory: relative paths are relative to the working directory, or opts->dir_fd. */
int rootasm_layout_load_mem(struct rootasm_ctx *ctx, const void *buf, size_t len,
			    const struct rootasm_load_opts *opts, struct rootasm_layout **ret,
			    struct rootasm_error *e);
void rootasm_layout_free(struct rootasm_layout *l);

/*
 * Call @fn for every host object @l (and its nested layouts) holds open:
 * @key names it in the layout ("layers[2].image"), @fd is the open stage's
 * fd (O_PATH or O_RDONLY; the caller may fstat it or read /proc/self/fd/N,
 * not close it). Stops at the first non-zero return of @fn and returns it.
 */
int rootasm_layout_sources(const struct rootasm_layout *l,
			   int (*fn)(const char *key, const char *display, int fd, void *userdata), void *userdata);

/*
 * A layout made with calls instead of text (no YAML or JSON to print and
 * escape). Each call records one item; rootasm_layout_builder_finish() gives
 * a layout exactly as rootasm_layout_load_mem() would for the same layout
 * written out: the same parse-stage checks (target normalization, control and
 * bidirectional characters, limits), the same open stage and the same
 * authorize stage for @opts->principal. Relative host paths are relative to
 * the working directory, or to @opts->dir_fd with ROOTASM_LOAD_DIR_FD. A
 * layout error names the builder call in its op ("rootasm_layout_builder_add_bind")
 * and begins its message with the key ("mounts[1].target: ..."), with no file
 * or line. The calls themselves return -EINVAL only for a NULL argument or an
 * unknown flag, -ENOMEM when out of memory (finish then fails with ENOMEM);
 * everything else is checked by finish. @fstype: "squashfs", "erofs", "auto"
 * or NULL (auto); @size: a tmpfs size ("64M", "50%") or NULL (the default).
 * The plan of a built layout shows the source lines of the text the builder
 * wrote (one item a line).
 */
struct rootasm_layout_builder;

#define ROOTASM_BUILDER_RO		0x1u	/* options "ro" */
#define ROOTASM_BUILDER_NOSUID		0x2u
#define ROOTASM_BUILDER_NODEV		0x4u
#define ROOTASM_BUILDER_NOEXEC		0x8u
#define ROOTASM_BUILDER_RECURSIVE	0x10u	/* binds only: the mounts below the source too */

/* Caller owns *ret (rootasm_layout_builder_free()). */
int rootasm_layout_builder_new(struct rootasm_layout_builder **ret);
void rootasm_layout_builder_free(struct rootasm_layout_builder *b);
/* Layers, bottom first. */
int rootasm_layout_builder_add_image_layer(struct rootasm_layout_builder *b, const char *path, const char *fstype);
int rootasm_layout_builder_add_dir_layer(struct rootasm_layout_builder *b, const char *path);
/* The upper layer (a second call replaces the first). */
int rootasm_layout_builder_set_upper_tmpfs(struct rootasm_layout_builder *b, const char *size);
int rootasm_layout_builder_set_upper_dir(struct rootasm_layout_builder *b, const char *path);
/* overlay.override_creds (replaces an earlier call). */
int rootasm_layout_builder_set_override_creds(struct rootasm_layout_builder *b, uid_t uid, gid_t gid,
					      const gid_t *groups, size_t ngroups);
/* Volumes, in order. @flags: ROOTASM_BUILDER_*; @mode of a tmpfs: 0 for the default (1777). */
int rootasm_layout_builder_add_bind(struct rootasm_layout_builder *b, const char *source, const char *target,
				    unsigned int flags);
int rootasm_layout_builder_add_tmpfs(struct rootasm_layout_builder *b, const char *target, const char *size,
				     unsigned int mode, unsigned int flags);
int rootasm_layout_builder_add_image_volume(struct rootasm_layout_builder *b, const char *path, const char *target,
					    const char *fstype, unsigned int flags);
/* exec: the hostname (replaces an earlier call) and one "KEY=VALUE" of the environment. */
int rootasm_layout_builder_set_exec_hostname(struct rootasm_layout_builder *b, const char *hostname);
int rootasm_layout_builder_add_exec_env(struct rootasm_layout_builder *b, const char *assignment);
/*
 * Validate and load what @b holds (@opts as for rootasm_layout_load_mem(),
 * may be NULL; its name defaults to "(builder)"). @b is left as it was: it
 * may be finished again, or changed and finished again. Caller owns *ret.
 */
int rootasm_layout_builder_finish(struct rootasm_layout_builder *b, struct rootasm_ctx *ctx,
				  const struct rootasm_load_opts *opts, struct rootasm_layout **ret,
				  struct rootasm_error *e);

#define ROOTASM_PLAN_JSON	0x1u
#define ROOTASM_PLAN_PRETTY	0x2u	/* indented JSON */

/* Write the plan of @l (the operations rootasm_assemble() will make, in order) to @out. */
int rootasm_plan_print(struct rootasm_ctx *ctx, const struct rootasm_layout *l, FILE *out, unsigned int flags);

/* ----------------------------------------------------------------- probe */

/* Kernel features, probed by trying each on a throwaway detached tmpfs. New ones are added at the end. */
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
};

/* How many features this library knows (enum values 0 .. count-1). */
unsigned int rootasm_feature_count(void);
const char *rootasm_feature_name(enum rootasm_feature f);	/* NULL when unknown */
const char *rootasm_feature_desc(enum rootasm_feature f);

#define ROOTASM_FEATURE_ABSENT	0
#define ROOTASM_FEATURE_PRESENT	1

/*
 * Probe feature @f (once per context; the answer is cached). Returns
 * ROOTASM_FEATURE_PRESENT, ROOTASM_FEATURE_ABSENT (the kernel lacks it), or
 * -EPERM when the caller lacks the privilege to try it (not a kernel
 * verdict). @detail (may be NULL) receives what the probe saw. Touches no
 * attached mount.
 */
int rootasm_probe_feature(struct rootasm_ctx *ctx, enum rootasm_feature f, char *detail, size_t size);

/*
 * The answers are kept once per boot in /run/rootasm/probe.cache (written by
 * root, readable by all; $ROOTASM_PROBE_CACHE names another file, empty: none),
 * keyed by the boot, the kernel, the modules and sysctls that can change an
 * answer and the caller (namespaces, root, euid, capabilities, seccomp, LSM
 * label); taken only when all of it matches. rootasm_probe_refresh() forgets
 * the context's answers and the file's: what is asked next is probed again
 * and written back. Returns 0.
 */
int rootasm_probe_refresh(struct rootasm_ctx *ctx);

/* Features @l needs, as a mask of (1 << enum rootasm_feature), a fold over its plan. */
uint64_t rootasm_layout_needs(struct rootasm_ctx *ctx, const struct rootasm_layout *l);

/* --------------------------------------------------------------- assemble */

/*
 * Assemble @l into a detached mount tree. Returns an O_PATH fd of the tree's
 * root mount; the caller owns it. Closing it dissolves the whole tree.
 * On failure nothing is left behind: no mount, no loop device, no fd.
 */
int rootasm_assemble(struct rootasm_ctx *ctx, const struct rootasm_layout *l, struct rootasm_error *e);

#define ROOTASM_ASSEMBLE_USERNS	0x1u	/* userns_fd: build the tree for a caller in that user namespace */
/*
 * Lock the tree's attributes as the kernel locks mounts it copies into a less
 * privileged mount namespace: its receiver cannot clear read-only, nodev,
 * nosuid, noexec or the atime flags (EPERM, even with every capability in its
 * own user and mount namespace) nor unmount a volume to see what it covers.
 * For a tree going to someone who is not an administrator; a layout whose
 * principal is not one is always locked.
 */
#define ROOTASM_ASSEMBLE_LOCK	0x2u

struct rootasm_assemble_opts {
	size_t size;			/* sizeof(struct rootasm_assemble_opts) */
	unsigned int flags;		/* ROOTASM_ASSEMBLE_* */
	/*
	 * With ROOTASM_ASSEMBLE_USERNS: a user namespace fd (of /proc/PID/ns/user)
	 * that maps uid 0 and gid 0. Every mount of the tree is idmapped into it
	 * (MOUNT_ATTR_IDMAP): files owned by on-disk id N appear as what N maps
	 * to; upper/ and work/ belong to its uid 0; override_creds records a
	 * credential inside it (the layout's uid/gid/capabilities read as ids and
	 * capabilities of that namespace; without one in the layout, its root
	 * with every capability there) where the kernel records one without
	 * CAP_SYS_ADMIN (feature overlay-override-creds-unprivileged), else, when
	 * the layout names none, the assembler's own. A layout with idmaps of its
	 * own is refused.
	 */
	int userns_fd;
	/*
	 * since 0.5: the uids the tree goes to (rootasm_send_fd_to()'s
	 * peer_uids). The authorize stage locks it and makes it nosuid,nodev
	 * (as ROOTASM_ASSEMBLE_LOCK) when one is neither root nor the caller's
	 * effective uid: the plan says which uid.
	 */
	const uid_t *receivers;
	size_t n_receivers;
};

/* rootasm_assemble() with options (@opts may be NULL: the same as rootasm_assemble()). */
int rootasm_assemble_with(struct rootasm_ctx *ctx, const struct rootasm_layout *l,
			  const struct rootasm_assemble_opts *opts, struct rootasm_error *e);

/*
 * A clone of the detached tree @tree_fd, made nosuid,nodev on every mount
 * and locked as ROOTASM_ASSEMBLE_LOCK locks it, for a tree that came from elsewhere
 * (rootasmd, another process) and goes on to someone who is not an
 * administrator. Returns the clone's O_PATH fd (the caller owns it); @tree_fd
 * is used up (moved into a helper's mount namespace): the caller still closes
 * it, and attaches only the clone. Needs CAP_SYS_ADMIN and user namespaces.
 */
int rootasm_tree_lock(int tree_fd, struct rootasm_error *e);

/* Attach the tree @tree_fd at @dir with one move_mount(). */
int rootasm_attach(int tree_fd, const char *dir, struct rootasm_error *e);
/*
 * The same at @path relative to the directory @dir_fd (AT_FDCWD: the working
 * directory), with one move_mount(2): a symlink as @path's last component is
 * not followed. An empty or NULL @path: @dir_fd itself is the mount point (an
 * O_PATH fd of a directory will do; MOVE_MOUNT_T_EMPTY_PATH). @flags: none yet,
 * 0 (others: EINVAL). The caller still owns and closes @tree_fd and @dir_fd.
 */
int rootasm_attach_at(int tree_fd, int dir_fd, const char *path, unsigned int flags, struct rootasm_error *e);

/*
 * The hand-off of a tree to another process over an AF_UNIX stream socket:
 * one message carrying exactly one fd (SCM_RIGHTS) and the payload, one line
 * of JSON: {"rootasm":"tree","version":2,"layout":"NAME"}\n (the layout's
 * name escaped as JSON strings are; null when none). Before anything is sent
 * the listener's credentials (SO_PEERCRED) are checked: its uid must be 0,
 * the caller's own uid, or one of opts->peer_uids. connect() and the send
 * give up after opts->timeout_ms (a full backlog cannot hold the tree).
 */
#define ROOTASM_SEND_ANY_PEER	0x1u	/* skip the SO_PEERCRED check: any listener gets the tree */

struct rootasm_send_opts {
	size_t size;			/* sizeof(struct rootasm_send_opts) */
	unsigned int flags;		/* ROOTASM_SEND_* */
	int timeout_ms;			/* for connect() and the send; 0: 5000 */
	const uid_t *peer_uids;		/* listener uids allowed besides 0 and our own */
	size_t n_peer_uids;
	const char *layout;		/* the layout's name, for the payload; may be NULL */
};

/* Connect to @socket_path and hand @tree_fd over. @opts may be NULL. */
int rootasm_send_fd(int tree_fd, const char *socket_path, const struct rootasm_send_opts *opts,
		    struct rootasm_error *e);
/*
 * The same over @sock_fd, a connected AF_UNIX stream or seqpacket socket (e.g. from
 * socketpair()); any other socket is a usage error (EAFNOSUPPORT, EPROTOTYPE).
 */
int rootasm_send_fd_to(int tree_fd, int sock_fd, const struct rootasm_send_opts *opts, struct rootasm_error *e);

/*
 * exec: the command runs in a sandbox, to the standard of `crun run` with the
 * configuration `crun spec` writes (rootasm(1) and rootasm.layout(5) list it):
 * new pid, mount, ipc, uts and cgroup namespaces (network: the host's, or a
 * new one with only loopback); every fd >= 3 closed except the preserved
 * ones; the capabilities of the layout's `exec:` section or the OCI default
 * set (CAP_AUDIT_WRITE, CAP_KILL, CAP_NET_BIND_SERVICE), the bounding set
 * reduced to them, no_new_privs; a seccomp profile on every ABI
 * (x86_64, i386, x32) over the init too; /proc with the OCI masked and
 * read-only paths; every mount of the tree nodev (device nodes of the tree
 * open nothing) and a minimal /dev of rootasm's own; a session of its own
 * (setsid: the caller's terminal is not the container's controlling
 * terminal); the container dies with the process that started it
 * (PR_SET_PDEATHSIG). ROOTASM_EXEC_PRIVILEGED (or the layout's
 * exec.privileged) drops the capability, seccomp, /proc, nodev and
 * no_new_privs restrictions.
 *
 * ROOTASM_EXEC_TTY gives the command a terminal of its own, as an OCI
 * runtime's `terminal: true`: a pty of the container's devpts (its /dev/ptmx)
 * is the command's stdin, stdout, stderr and controlling terminal, in a
 * session of its own; its master is stored in *tty_master (O_CLOEXEC, the
 * caller owns it and relays it). The terminal starts with the window size
 * of the caller's fd 0 when that is a terminal.
 */
#define ROOTASM_EXEC_PRIVILEGED		0x1u	/* no capability drop, seccomp profile, /proc masks, nodev, no_new_privs */
/* since 0.5 the default is a new network namespace (before: the host's), as `crun spec` writes it */
#define ROOTASM_EXEC_NETWORK_NONE	0x2u	/* a new network namespace with only loopback (the default) */
#define ROOTASM_EXEC_NETWORK_HOST	0x4u	/* the host's network namespace (the layout's network: host too) */
#define ROOTASM_EXEC_TTY		0x8u	/* a pty of its own: its master in *tty_master */

struct rootasm_exec_opts {
	size_t size;			/* sizeof(struct rootasm_exec_opts) */
	unsigned int flags;		/* ROOTASM_EXEC_*; they override the layout's exec: section */
	unsigned int preserve_fds;	/* fds 3 .. 3+N-1 reach the command (as crun/runc --preserve-fds) */
	const char *const *env;		/* more "KEY=VALUE" after the layout's, NULL-terminated; or NULL */
	const char *hostname;		/* NULL: the layout's, or "rootasm"; rootasm_hostname_ok() */
	int *tty_master;		/* ROOTASM_EXEC_TTY: receives the master of the command's pty */
};

/*
 * A hostname as the layout's exec.hostname and exec's hostname take it
 * (sethostname() and RFC 1123): 1-64 of [A-Za-z0-9.-], no leading '-' or '.'.
 */
static inline bool rootasm_hostname_ok(const char *s)
{
	size_t n = strlen(s);

	return n && n <= 64 && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") == n &&
	       s[0] != '-' && s[0] != '.';
}

struct rootasm_exec_result {
	int status;			/* exit code, or 128 + signal */
	bool from_pidfd_info;		/* read through PIDFD_INFO_EXIT */
	unsigned long long cgroupid;	/* from PIDFD_INFO_EXIT, 0 otherwise */
	unsigned long long reserved[4];	/* zeroed; later fields come out of it */
};

/*
 * Start @argv with the tree @tree_fd as its root, sandboxed as the exec:
 * section of @l (may be NULL: the defaults) and @opts say. The tree is
 * attached in the container's own mount namespace and goes away with it:
 * @tree_fd is used up (the caller still owns and closes the fd). Returns a
 * pidfd of the container's init (pid 1 of its pid namespace) once the
 * sandbox is set up; the caller owns it. Signals sent to the init with
 * pidfd_send_signal() are passed on to the command (the CLI forwards its
 * own that way). A setup failure is reported here, with its step and errno.
 *
 * The command (since 0.4), as `podman run IMAGE [CMD]` makes it from an
 * image's config: the layout's exec.entrypoint, then @argv when it has any
 * (NULL or { NULL }: none), else the layout's exec.cmd; with none of them it
 * is a usage error. The layout's exec.user is resolved in the tree's
 * /etc/passwd and /etc/group, exec.workdir is the working directory.
 */
int rootasm_exec_start(struct rootasm_ctx *ctx, const struct rootasm_layout *l, int tree_fd, char *const argv[],
		       const struct rootasm_exec_opts *opts, struct rootasm_error *e);

/*
 * rootasm_exec_start() in two steps (since 0.4), so that the sandbox is set
 * up while the tree is assembled (or fetched from rootasmd):
 * rootasm_exec_prepare() checks @opts and @argv as rootasm_exec_start() does
 * and starts the container's init in its new namespaces, where it sets up
 * what needs no tree (its session, mount propagation, hostname, loopback)
 * and waits; *@ret is the pending container. rootasm_exec_join() gives it
 * the tree (exec.user is resolved in it then) and returns what
 * rootasm_exec_start() returns, the init's pidfd once the sandbox is up, or
 * the setup's error; it frees @p in every case. @l and @argv are not kept:
 * the init has what it needs once prepare returns. rootasm_exec_pending_free()
 * gives up on a container that never got its tree: its init is killed and
 * reaped. The init dies with the thread that prepared it.
 */
struct rootasm_exec_pending;
int rootasm_exec_prepare(struct rootasm_ctx *ctx, const struct rootasm_layout *l, char *const argv[],
			 const struct rootasm_exec_opts *opts, struct rootasm_exec_pending **ret,
			 struct rootasm_error *e);
int rootasm_exec_join(struct rootasm_exec_pending *p, int tree_fd, struct rootasm_error *e);
void rootasm_exec_pending_free(struct rootasm_exec_pending *p);

/* Wait for the container started with rootasm_exec_start() and fill @res; closes nothing. */
int rootasm_exec_wait(int pidfd, struct rootasm_exec_result *res, struct rootasm_error *e);

/* rootasm_exec_start() + rootasm_exec_wait(): runs the command to its end. Forwards no signals. */
int rootasm_exec(struct rootasm_ctx *ctx, const struct rootasm_layout *l, int tree_fd, char *const argv[],
		 const struct rootasm_exec_opts *opts, struct rootasm_exec_result *res, struct rootasm_error *e);

/* ------------------------------------------------------------------- watch */

/*
 * Mount notifications (fanotify FAN_MNT_ATTACH/FAN_MNT_DETACH, Linux 6.15).
 * rootasm_watch_open() watches the mount namespace of @mntns_fd (an nsfs fd,
 * e.g. of /proc/self/ns/mnt); returns a non-blocking fanotify fd, caller owns it.
 */
struct rootasm_mount_event {
	bool attach, detach;		/* a move reports both */
	unsigned long long mnt_id;	/* unique 64-bit mount id (statmount) */
	unsigned long long reserved[2];	/* zeroed; later fields come out of it */
};

int rootasm_watch_open(int mntns_fd, struct rootasm_error *e);
/* Read what is queued (waiting up to @timeout_ms; 0 = do not wait); returns the count. */
int rootasm_watch_read(int fd, struct rootasm_mount_event *ev, size_t max, int timeout_ms);

/* Describe mount @mnt_id (in the namespace of @mntns_fd, or ours if < 0) as one line (text or JSON). */
int rootasm_mount_describe(unsigned long long mnt_id, int mntns_fd, bool json, char *buf, size_t size);
/* Count the mounts of the tree whose root is mounted at @path (it and all below it). */
int rootasm_tree_count(const char *path);
/* Print each mount of the tree at @path, with its id mappings, read back with statmount. */
int rootasm_tree_print(const char *path, FILE *out, bool json, struct rootasm_error *e);

/* ------------------------------------------------------------ image cache */

/*
 * An image cache held by a context: one detached mount per image file (one
 * loop device and superblock), lent to every assembly of that context that
 * names the image, so that an image is mounted once and then only cloned
 * (open_tree of a detached mount) or handed to overlayfs as a layer fd. Keyed
 * by the image file's st_dev, st_ino, st_size, st_mtim and st_ctim (a file
 * changed or replaced misses, and its old entry is dropped). Least recently
 * used entries are evicted past the limits. Nothing is ever attached: closing
 * the context dissolves every entry. `rootasm check` shows the route
 * "cached-mount" for image layers and volumes of a context with a cache.
 */
#define ROOTASM_CACHE_DEFAULT_ENTRIES	256
#define ROOTASM_CACHE_DEFAULT_BYTES	(64ULL << 30)

struct rootasm_cache_opts {
	size_t size;			/* sizeof(struct rootasm_cache_opts) */
	unsigned int max_entries;	/* 0: ROOTASM_CACHE_DEFAULT_ENTRIES */
	uint64_t max_bytes;		/* sum of the images' sizes; 0: ROOTASM_CACHE_DEFAULT_BYTES */
	unsigned int flags;		/* none yet: 0 */
};

/* Give @ctx an image cache (once: -EBUSY after that). Call before sharing @ctx between threads. */
int rootasm_ctx_set_cache(struct rootasm_ctx *ctx, const struct rootasm_cache_opts *opts);

struct rootasm_cache_stats {
	size_t size;			/* sizeof(struct rootasm_cache_stats) */
	uint64_t entries, bytes, max_entries, max_bytes;
	uint64_t hits, misses;		/* lookups */
	uint64_t evictions;		/* dropped for the limits */
	uint64_t stale;			/* dropped because the image file changed or was replaced */
	uint64_t bypass;		/* mounted for one assembly only: every entry was lent out */
	uint64_t lent;			/* references held by assemblies running now */
};

/* The cache's counters; -ENOENT when @ctx has no cache. */
int rootasm_cache_stats(struct rootasm_ctx *ctx, struct rootasm_cache_stats *st);

struct rootasm_cache_entry_info {
	const char *path;		/* the image as the layout named it (display form) */
	const char *digest;		/* NULL when keyed by the file */
	const char *fstype;		/* "squashfs", "erofs", "auto" */
	unsigned int dev_major, dev_minor;
	uint64_t ino, bytes;
	int64_t mtime_sec;
	long mtime_nsec;
	uint64_t hits;
	unsigned int lent;
	uint64_t mnt_id;		/* the detached mount's unique id (statx STATX_MNT_ID_UNIQUE), 0 if unknown */
};

/* Call @fn for each entry, most recently used first (under the cache's lock: @fn must not call rootasm_*). */
int rootasm_cache_list(struct rootasm_ctx *ctx, void (*fn)(const struct rootasm_cache_entry_info *i, void *userdata),
		       void *userdata);

/* Dissolve every entry not lent out; returns how many. */
int rootasm_cache_trim(struct rootasm_ctx *ctx);

/* ---------------------------------------------------------- daemon client */

/*
 * rootasmd, the per-node service (assembler/daemon/PROTOCOL.md), holds one image cache for the
 * node and hands finished trees over its AF_UNIX SOCK_SEQPACKET socket to
 * the clients its policy allows. The protocol is documented in
 * assembler/daemon/PROTOCOL.md; these calls speak it. A failed request fills
 * @e with the daemon's error (the fields of rootasm_error_print_json()).
 */
struct rootasm_client;

/* Connect to rootasmd at @socket_path. Caller owns *ret (rootasm_client_close()). */
int rootasm_client_connect(const char *socket_path, struct rootasm_client **ret, struct rootasm_error *e);
void rootasm_client_close(struct rootasm_client *c);

#define ROOTASM_CLIENT_USERNS	0x1u	/* send userns_fd: the tree is idmapped into that user namespace */

struct rootasm_client_assemble_opts {
	size_t size;			/* sizeof(struct rootasm_client_assemble_opts) */
	unsigned int flags;		/* ROOTASM_CLIENT_* */
	const char *layout;		/* an absolute path the daemon opens, or NULL ... */
	const char *layout_text;	/* ... a layout sent inline (host paths in it must be absolute) */
	size_t layout_len;		/* its length; 0: strlen(layout_text) */
	const char *name;		/* the inline layout's name in messages */
	int userns_fd;			/* with ROOTASM_CLIENT_USERNS: /proc/self/ns/user, or one we own */
	/*
	 * since 0.5: the uids the tree goes on to (at most 64), sent with the
	 * request: the daemon's grant locks the tree (as ROOTASM_ASSEMBLE_LOCK)
	 * when one is neither root nor the client, as rootasm_assemble_opts'
	 * receivers do for a tree assembled here
	 */
	const uid_t *receivers;
	size_t n_receivers;
	/*
	 * since 0.5: who the tree is for, when the client asks on someone
	 * else's word (rootasm-runtime for a bundle's author): an administrator,
	 * or a user (uid, gid, groups; no user namespace), with its limits
	 * (rootasm_principal_limit()), sent as the request's "as". rootasmd takes
	 * it only from an administrator client and then judges the request as
	 * this principal's; NULL: the client itself.
	 */
	const struct rootasm_principal *principal;
	/*
	 * since 0.5: the tree's upper, two existing directories used as they
	 * are (rootasm_load_opts.upper_dir, work_dir), sent as the request's
	 * "upper": rootasmd takes it only from an administrator client, for an
	 * administrator's tree. Absolute; both or neither.
	 */
	const char *upper_dir;
	const char *work_dir;
};

/*
 * Ask for a tree. Returns an O_PATH fd of its root mount, detached: the
 * caller owns it and attaches it (rootasm_attach(), in its own mount
 * namespace) or closes it (which dissolves it).
 */
int rootasm_client_assemble(struct rootasm_client *c, const struct rootasm_client_assemble_opts *opts,
			    struct rootasm_error *e);
/*
 * since 0.5: rootasm_client_assemble() in two halves, so that the caller
 * works while the daemon assembles: the request sent (0, or -errno with @e),
 * then its reply read (the tree's fd as above, or -errno with @e). One
 * request at a time per client; closing the client in between drops the
 * tree.
 */
int rootasm_client_assemble_send(struct rootasm_client *c, const struct rootasm_client_assemble_opts *opts,
				 struct rootasm_error *e);
int rootasm_client_assemble_receive(struct rootasm_client *c, struct rootasm_error *e);

/* The daemon's probe / status reply as JSON text; caller frees *ret_json. */
int rootasm_client_probe(struct rootasm_client *c, char **ret_json, struct rootasm_error *e);
int rootasm_client_status(struct rootasm_client *c, char **ret_json, struct rootasm_error *e);

/* ------------------------------------------------------------ OCI import */

/*
 * Import an OCI image layout ("oci:DIR[:TAG]", image-spec v1) into a store:
 * every layer becomes a read-only squashfs/erofs image keyed by its diff-id
 * (by its chain id when it is made with the layers below), shared by every
 * image that has it; then a layout (the layers bottom first, a tmpfs upper)
 * is written for the image. Every blob is verified against its descriptor
 * (size, sha256) before use; the layer images are published only after both
 * the blob's digest and its diff-id matched, with linkat() of a finished,
 * fsync'd O_TMPFILE, so a crash leaves nothing half-imported, and a failure
 * takes back what the import published (unless another import claimed it).
 * Needs root (owners, device nodes, trusted xattrs).
 */
enum rootasm_layer_fs {
	ROOTASM_LAYER_EROFS = 0,	/* mkfs.erofs, uncompressed, 4 KiB chunks (holes stay holes) */
	ROOTASM_LAYER_SQUASHFS = 1,	/* mksquashfs -comp zstd */
};

struct rootasm_import_layer {
	char digest[80];		/* the blob: "sha256:..." */
	char diff_id[80];		/* the uncompressed tar stream */
	char media_type[128];
	unsigned long long size;	/* blob bytes */
	unsigned long long tar_bytes;	/* uncompressed bytes (0 when cached) */
	char *image;			/* absolute path of the layer image in the store */
	bool cached;			/* already in the store: not read at all */
	double seconds;			/* time to convert it */
	/* since 0.4 (rootasm_import@LIBROOTASM_0.4): zeroed, new fields take it over */
	unsigned long long reserved[8];
};

/* Called before (done false) and after (done true) each layer. */
typedef void (*rootasm_import_progress_fn)(void *userdata, unsigned int index, unsigned int count,
					   const struct rootasm_import_layer *layer, bool done);

/*
 * docker://: a layer's download, @done of its @size bytes so far: called from
 * the thread that downloads it (several may run at once), at most every 100
 * ms per layer and once when it is complete.
 */
typedef void (*rootasm_import_download_fn)(void *userdata, const char *digest, unsigned long long done,
					   unsigned long long size);

struct rootasm_import_opts {
	size_t size;			/* sizeof(struct rootasm_import_opts) */
	const char *store;		/* NULL: $ROOTASM_STORE, else /var/lib/rootasm/store */
	enum rootasm_layer_fs fs;
	rootasm_import_progress_fn progress;
	void *userdata;
	unsigned int flags;		/* ROOTASM_IMPORT_* (others: EINVAL) */
	/* since 0.4 */
	rootasm_import_download_fn download;	/* may be NULL; gets userdata */
	const char *tag;		/* NULL: none; else NAME[:TAG] names the image in the store (rootasm_store_lookup()) */
	/*
	 * since 0.5: a layer may unpack to at most this many times its blob's
	 * size (at least ROOTASM_IMPORT_EXPANSION_FLOOR bytes): a gzip bomb is
	 * refused before it fills the store. 0: ROOTASM_IMPORT_EXPANSION.
	 */
	unsigned int max_expansion;
	/*
	 * since 0.5, docker:// only: the credentials, "USER:PASSWORD" (NULL: from
	 * the auth files); the auth file to read them from, alone (NULL:
	 * $REGISTRY_AUTH_FILE, else containers-auth.json(5)'s files in order
	 * until one has an entry for the image, its longest match first)
	 */
	const char *creds;
	const char *authfile;
	/*
	 * since 0.5, docker:// only: the registry's certificate directory (*.crt
	 * roots trusted besides the system's, a *.cert and its *.key presented);
	 * NULL: containers-certs.d(5)'s for the registry, if there is one
	 */
	const char *cert_dir;
	/*
	 * since 0.5: a layer's tree, staged in memory (a tmpfs) before its image
	 * is made, may hold at most this many bytes, counted as max_expansion
	 * counts them (its files' data, links' targets, xattrs, 1 KiB an entry),
	 * and take at most this many bytes of pages and one inode per 2 KiB of
	 * it (the tmpfs's size= and nr_inodes=); 0: no cap but max_expansion's. rootasm-runtime sets it for the image
	 * of a pod, whose author chose it (runtime.conf's import_layer_max).
	 */
	uint64_t max_layer_bytes;
};

/*
 * What an image is, without importing it (since 0.5): @ref as rootasm_import()
 * takes it (oci:DIR[:TAG], docker://REGISTRY/REPO[:TAG|@DIGEST],
 * docker-archive:FILE[:NAME], unpacked to a private directory and removed),
 * or an image of the store (a name or digest: what its record and layout
 * keep); of @o only store, flags' ROOTASM_IMPORT_TLS_NO_VERIFY, creds,
 * authfile and cert_dir count. Its manifest and config read and verified, no
 * layer fetched, nothing written to the store. *ret (caller frees) is a JSON
 * document with skopeo inspect's fields (Name, Digest, Created, DockerVersion,
 * Labels, Architecture, Os, Layers, LayersData, Env) and rootasm's (Config:
 * the config's section, ManifestMediaType, ConfigDigest, DiffIDs; Layout for
 * a stored image); with ROOTASM_INSPECT_RAW the manifest's bytes as read.
 */
#define ROOTASM_INSPECT_RAW	0x1u
int rootasm_inspect(struct rootasm_ctx *ctx, const char *ref, const struct rootasm_import_opts *o, unsigned int flags,
		    char **ret, struct rootasm_error *e);

/*
 * Log in to @registry (HOST[:PORT]) with @o->creds ("USER:PASSWORD", required;
 * of @o only flags' ROOTASM_IMPORT_TLS_NO_VERIFY and cert_dir count besides)
 * as podman login does (since 0.5): its /v2/ answered with them, a 401's
 * challenge answered (HTTP Basic, or a token from the realm for no scope).
 * With @ret_auth (may be NULL), what an auth file keeps for them: the
 * "auth" value, base64 of USER:PASSWORD (caller frees and wipes). Writes
 * nothing: `rootasm login` writes the auth file.
 */
int rootasm_registry_login(const char *registry, const struct rootasm_import_opts *o, char **ret_auth,
			   struct rootasm_error *e);

#define ROOTASM_IMPORT_EXPANSION	64u
#define ROOTASM_IMPORT_EXPANSION_FLOOR	(64ull << 20)

/* docker://: no TLS certificate check, and plain HTTP when the registry speaks no TLS (a local registry) */
#define ROOTASM_IMPORT_TLS_NO_VERIFY	(1u << 0)
#define ROOTASM_IMPORT_FLAGS		ROOTASM_IMPORT_TLS_NO_VERIFY

/*
 * rootasm_import_layer and rootasm_import_result end in reserved space since
 * 0.4, the size they keep from then on. rootasm_import() and
 * rootasm_import_result_free() of 0.4 (symbol version LIBROOTASM_0.4) take
 * them; a program built against an older header calls the versions of
 * LIBROOTASM_0.2, which fill and free the structs as that header declared
 * them (a progress callback's layer only grew at its end: it reads the same).
 */
struct rootasm_import_result {
	char *store;			/* absolute path of the store */
	char *layout;			/* absolute path of the image's layout */
	char manifest[80], config[80];	/* digests */
	struct rootasm_import_layer *layers;	/* bottom first */
	size_t nlayers;
	bool wrote;			/* anything was written to the store */
	/* since 0.4 */
	char *name;			/* the name the store gives it (NAME:TAG, normalized); NULL: none */
	/*
	 * since 0.5: a short name resolved by registries.conf(5): the reference
	 * pulled ("docker://HOST/REPO:TAG") and how ("an alias in FILE",
	 * "unqualified-search-registries in FILE"); NULL: pulled as given
	 */
	char *source;
	char *source_why;
	/*
	 * since 0.5: the manifest digest ("sha256:HEX") of the record the image is
	 * stored as when its config was already stored under another manifest
	 * (one image, one record: @manifest is then an alias of it, and @name
	 * names that record); NULL: stored as @manifest
	 */
	char *stored_as;
	unsigned long long reserved[5];	/* zeroed, new fields take it over */
};

int rootasm_import(struct rootasm_ctx *ctx, const char *ref, const struct rootasm_import_opts *opts,
		   struct rootasm_import_result *res, struct rootasm_error *e);
void rootasm_import_result_free(struct rootasm_import_result *res);

/* -------------------------------------------------------------- the store */

/*
 * The store an import writes, managed (since 0.4). @store is the store's
 * directory; NULL: $ROOTASM_STORE, else /var/lib/rootasm/store. An image is
 * named by NAME[:TAG] (the distribution spec's reference grammar: lowercase
 * path components separated by '/', the first may be a HOST[:PORT]; TAG
 * [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}, "latest" when none: never "..", an
 * empty component, a leading '/' or a control character), by its manifest
 * digest ("sha256:HEX") or by a unique prefix of 12 or more of its hex
 * digits. Changes are serialised with flock() on STORE/lock (an import holds
 * it shared); every file is replaced whole (temporary name, fsync, rename).
 */

/* NAME[:TAG] as the store keeps it (":latest" added) into @out; -EINVAL when it is not a name, -ENAMETOOLONG. */
int rootasm_store_name_normalize(const char *ref, char *out, size_t size);

/*
 * The layout of the image @ref (its erofs layout, else its squashfs one):
 * its absolute path in *ret_layout and its manifest digest in *ret_manifest
 * (either may be NULL; the caller frees them). Takes no lock and writes
 * nothing: for a runtime that looks images up by name. @ref may also be
 * (since 0.5) the absolute path of one of the store's layouts, as
 * rootasm_import() gave it (STORE/images/sha256/HEX.FS.layout.json): no
 * other path is one (ROOTASM_ERROR_USAGE, EINVAL). An unknown image is
 * ROOTASM_ERROR_USAGE with ENOENT. A name without a registry (since 0.5)
 * is also looked for as podman looks in its storage: localhost/NAME,
 * docker.io/library/NAME (docker.io/NAME with a '/'), and the one stored
 * REGISTRY/NAME (two images so named: ROOTASM_ERROR_USAGE, EINVAL).
 */
int rootasm_store_lookup(const char *store, const char *ref, char **ret_layout, char **ret_manifest,
			 struct rootasm_error *e);

struct rootasm_store_image {
	size_t size;			/* sizeof(struct rootasm_store_image), set by the library */
	char manifest[80];		/* "sha256:..." */
	char config[80];
	char **names;			/* NAME:TAG, nnames of them */
	size_t nnames;
	size_t nlayers;
	unsigned long long bytes;	/* the layer images its layouts name, in bytes */
	long long last_used;		/* seconds since the epoch: the layout's last read (atime), else the import */
	char *layout;			/* absolute path; NULL when it has none */
	unsigned long long reserved[4];
};

/* Every image of the store (none when there is no store); free with rootasm_store_images_free(). */
int rootasm_store_images(const char *store, struct rootasm_store_image **ret, size_t *ret_n, struct rootasm_error *e);
void rootasm_store_images_free(struct rootasm_store_image *v, size_t n);

/*
 * rmi: by NAME[:TAG], that name (the image goes with its last name); by
 * digest, every name of the image and the image. The image's record and
 * layouts go; its layer images stay until rootasm_store_gc(). Returns 1 when
 * the image was removed, 0 when only a name was.
 */
int rootasm_store_remove(const char *store, const char *ref, struct rootasm_error *e);
/*
 * rootasm_store_remove() as podman's rmi removes (since 0.5): by digest (or
 * a layout's path) an image of more than one name only with
 * ROOTASM_STORE_REMOVE_FORCE (else ROOTASM_ERROR_USAGE, EBUSY, naming them);
 * rootasm_store_remove() is this with that flag. Judged under the store's
 * lock, by what @ref was found as.
 */
#define ROOTASM_STORE_REMOVE_FORCE	0x1u
int rootasm_store_remove_flags(const char *store, const char *ref, unsigned int flags, struct rootasm_error *e);

#define ROOTASM_STORE_GC_DRY_RUN	0x1u	/* count, remove nothing */

struct rootasm_store_gc_result {
	size_t size;			/* sizeof(struct rootasm_store_gc_result): set it */
	size_t removed;			/* layer images removed (or that would be) */
	unsigned long long bytes;	/* their size */
	size_t in_use;			/* unreferenced but on a loop device (a live tree, rootasmd's cache): kept */
	unsigned long long reserved[4];
};

/*
 * Remove the layer images no image's layout names (and their records),
 * except those a loop device is backed by. @res may be NULL.
 */
int rootasm_store_gc(const char *store, unsigned int flags, struct rootasm_store_gc_result *res,
		     struct rootasm_error *e);

typedef void (*rootasm_store_verify_fn)(void *userdata, const char *path, const char *problem);

/*
 * Check what is stored: every layer image an image's layout names is there,
 * each layer image's sha256 is the one recorded when it was made, and the
 * store's directories and layer images are root's, writable by nobody else. Each
 * problem (and each layer image that cannot be checked) goes to @fn; returns
 * the number of problems (0: all is well).
 */
int rootasm_store_verify(const char *store, rootasm_store_verify_fn fn, void *userdata, struct rootasm_error *e);

/* ---------------------------------------------------------- OCI bundles */

/*
 * The root filesystem of an OCI runtime bundle (BUNDLE/config.json and its
 * root.path), assembled by rootasm for crun or runc; called by root, for a
 * bundle that may belong to anyone (rootasm(1), "bundle", says what is done).
 *
 * rootasm_bundle_prepare() assembles the layout (opts->layout, else the
 * config's annotation "org.rootasm.layout") with the config's bind and tmpfs
 * mounts as volumes and linux.uidMappings/gidMappings as idmapped layers,
 * attaches the tree at root.path with one move_mount, keeps the original
 * config.json as BUNDLE/.rootasm/config.json and rewrites config.json without
 * the mounts rootasm made, with the annotation "org.rootasm.prepared" (the
 * tree's unique mount id, for people: never read back).
 * rootasm_bundle_cleanup() detaches that tree (by its unique mount id: at
 * root.path once the mounts a runtime stacked on it there are detached, or
 * wherever in the caller's namespace it was moved to), restores config.json
 * byte for byte and removes BUNDLE/.rootasm.
 *
 * The bundle directory is opened once; config.json, .rootasm/ and root.path
 * are reached from it with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 * RESOLVE_NO_MAGICLINKS): a symlink in the bundle, or a root.path outside it,
 * is refused (ROOTASM_ERROR_USAGE naming the path). What prepare attached is
 * recorded in $ROOTASM_RUN_DIR/bundles/DEV-INO.json (default /run/rootasm;
 * the variable is for tests), a directory of root's that nobody else may
 * write, keyed by the bundle directory's st_dev and st_ino: cleanup believes
 * that record, never config.json. On failure nothing is left behind (no
 * mount, no record, no file of .rootasm/, no root.path it made).
 */
struct rootasm_bundle_opts {
	size_t size;			/* sizeof(struct rootasm_bundle_opts) */
	unsigned int flags;		/* none yet: 0 */
	const char *layout;		/* prepare: the layout (relative: beneath the bundle); NULL: the annotation */
	const char *upper;		/* prepare: absolute; writes go to UPPER/upper instead of the layout's upper */
	/* since 0.4 */
	const char *store;		/* create: the store the image is looked up in (NULL: as rootasm_store_lookup()) */
	/*
	 * since 0.5, prepare: the layout (@layout or the annotation's) must lie
	 * in one of these directories, a limit of the bundle's principal
	 * (ROOTASM_LIMIT_LAYOUTS) that a front end choosing on an annotation
	 * states (rootasm-runtime: its layout directory, the store's images): a
	 * path outside them is not looked up, the way to it follows no symlink,
	 * and for a bundle of root's (an administrator's) the file must be an
	 * administrator's under the trust rule. n_layout_dirs 0: no limit.
	 */
	const char *const *layout_dirs;
	size_t n_layout_dirs;
	/*
	 * since 0.5, prepare: writes go to @upper_dir itself, overlayfs' work
	 * directory @work_dir (both absolute, on one filesystem, used as they
	 * are: nothing is made in them), instead of the layout's upper: an
	 * engine's writable layer of the container (rootasm-runtime: its
	 * overlay's upperdir and workdir), so the engine's own tools see what
	 * the container writes. Not with @upper; the layout's layers must be
	 * what the engine's lower layers are.
	 */
	const char *upper_dir;
	const char *work_dir;
};

/* What was done; the library fills it (zeroed first, also on failure); free with rootasm_bundle_result_free(). */
struct rootasm_bundle_result {
	char *root;			/* the absolute path of root.path */
	char *layout;			/* prepare: the layout's absolute path */
	unsigned long long mnt_id;	/* the tree's unique mount id (cleanup: 0 when nothing was detached) */
	char **rootasm_mounts;		/* prepare: the config's mounts rootasm made (destinations, in order) */
	size_t n_rootasm_mounts;
	char **runtime_mounts;		/* prepare: those left in config.json for the runtime */
	size_t n_runtime_mounts;
	bool detached;			/* cleanup: the tree was detached (false: it was not attached, left alone) */
	unsigned long long reserved[4];	/* zeroed; later fields come out of it */
};

/* @opts and @res may be NULL. */
int rootasm_bundle_prepare(struct rootasm_ctx *ctx, const char *bundle_dir, const struct rootasm_bundle_opts *opts,
			   struct rootasm_bundle_result *res, struct rootasm_error *e);
/* @opts may be NULL; its layout and upper must be. */
int rootasm_bundle_cleanup(struct rootasm_ctx *ctx, const char *bundle_dir, const struct rootasm_bundle_opts *opts,
			   struct rootasm_bundle_result *res, struct rootasm_error *e);
void rootasm_bundle_result_free(struct rootasm_bundle_result *res);

/*
 * Write a runtime bundle for @image (since 0.4): a layout file by that name,
 * else an image of the store (rootasm_store_lookup()). BUNDLE_DIR (made 0700
 * when missing; refused when it has a config.json) gets config.json as `crun
 * spec` writes it, with the process from the layout's exec: section (an
 * imported image's config: entrypoint + cmd as args, env, workdir as cwd, the
 * user, by name resolved in the assembled tree), root.path "rootfs" (made),
 * and the annotation "org.rootasm.layout" naming the layout: ready for
 * rootasm_bundle_prepare(). res->layout: the layout, res->root: the rootfs.
 */
int rootasm_bundle_create(struct rootasm_ctx *ctx, const char *image, const char *bundle_dir,
			  const struct rootasm_bundle_opts *opts, struct rootasm_bundle_result *res,
			  struct rootasm_error *e);

#if defined(__GNUC__) && __GNUC__ >= 4
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif
