/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The volume kinds: one description per kind of `mounts:` entry (bind,
 * tmpfs, image, layout, overlay), each in a file of its own (volume-*.c),
 * gathered in ra_volume_kinds[] (volume.c). The stages go through it and
 * stay generic: the parse stage takes a kind's key and the optional keys it
 * allows, the open stage opens its source as the kind says, the authorize
 * stage applies the rule it names, the plan asks it for its route, the
 * engine for its detached mount, and the printers show what it says. A new
 * kind is its file, its entry in the table and its enum ra_mount_kind value.
 */
#ifndef ROOTASM_VOLUME_H
#define ROOTASM_VOLUME_H

#include <stdbool.h>
#include <stdint.h>

#include "layout.h"
#include "plan.h"

/* The keys of a mount entry besides the kind's own, and what its 'options' may hold. */
enum {
	RA_VKEY_TARGET = 1u << 0,	/* 'target' (without it the kind's key names the target, as tmpfs does) */
	RA_VKEY_OPTIONS = 1u << 1,	/* 'options': attributes and propagation */
	RA_VKEY_TYPE = 1u << 2,		/* 'type': the image's filesystem */
	RA_VKEY_TRUSTED = 1u << 3,	/* 'trusted': the layout vouches for the image */
	RA_VKEY_IDMAP = 1u << 4,	/* 'idmap' */
	RA_VKEY_TMPFS = 1u << 5,	/* tmpfs options in 'options' (size=, nr_inodes=, mode=); printed */
	RA_VKEY_RECURSIVE = 1u << 6,	/* 'recursive' in 'options' */
};

/* What the authorize stage asks of a principal that is not an administrator for the kind's source. */
enum ra_vauth {
	RA_VAUTH_NONE,			/* nothing of the host (tmpfs), or its own rules (a nested layout) */
	RA_VAUTH_BIND,			/* read (or connect to) the source; read-only where it cannot write it */
	RA_VAUTH_ADMIN,			/* for administrators only */
};

struct xstate;				/* the engine's state (xstate.h) */

struct ra_volume_kind {
	const char *name;		/* its key in a mount entry: "bind" */
	enum ra_src_kind src;		/* what the key's path names (RA_VKEY_TARGET); else unused */
	unsigned int keys;		/* RA_VKEY_* */
	const char *no_options;		/* without RA_VKEY_OPTIONS: why 'options' does not apply */
	bool image;			/* its source may be an image an administrator's layout vouches for */
	enum ra_vauth auth;
	/* the plan: its route and the kernel features it needs (*needs holds the common ones) */
	enum ra_route (*route)(const struct ra_mount *m, uint64_t have, unsigned int flags, uint64_t *needs,
			       bool *to_userns);
	/* features whose answer the route depends on (the probe is asked only for those); may be NULL */
	uint64_t (*consults)(const struct ra_mount *m);
	/* the engine: the volume as a detached mount (caller owns it); *dir: whether it is a directory */
	int (*mount)(struct xstate *x, const struct ra_op *op, bool *dir, struct rootasm_error *e);
};

extern const struct ra_volume_kind ra_volume_bind, ra_volume_tmpfs, ra_volume_image, ra_volume_layout,
	ra_volume_overlay;

/* The kinds by enum ra_mount_kind (volume.c). */
extern const struct ra_volume_kind *const ra_volume_kinds[RA_MOUNT__COUNT];

static inline const struct ra_volume_kind *ra_volume_kind(const struct ra_mount *m)
{
	return ra_volume_kinds[m->kind];
}

/* "image mounts", "bind and image mounts": the kinds taking @vkey, for messages, into @buf. */
const char *ra_volume_kinds_with(unsigned int vkey, char *buf, size_t size);

/* "'bind', 'tmpfs', 'image' or 'layout'": every kind's key, into @buf. */
const char *ra_volume_kind_names(char *buf, size_t size);

/* the engine's services for the kinds' mount() (engine-x.c): */
struct rootasm_ctx *ra_x_ctx(struct xstate *x);
/* The volume's attributes with what the authorize stage forces. */
struct ra_attrs ra_x_attrs(const struct ra_op *op);
/* Idmap @fd (the layout's idmap, or the caller's user namespace) and set @a: @fd, or -errno (@fd closed). */
int ra_x_finish(struct xstate *x, const struct ra_op *op, int fd, const struct ra_attrs *a, bool recursive,
		const char *what, struct rootasm_error *e);
/* The nested layout's plan executed into a tree. */
int ra_x_nested(struct xstate *x, const struct ra_op *op, struct rootasm_error *e);
/* A clone of the cached detached mount @cfd. */
int ra_x_clone_cached(int cfd, const char *what, struct rootasm_error *e);
/*
 * An overlay whose layers (and upper, with @upper) are set in @fsfd: the
 * credential @cs (NULL: the mounter's), CMD_CREATE and fsmount (read-only
 * without an upper), refusing the read-only mount some kernels (6.12) fall
 * back to when the work directory cannot be set up. @what names it in errors.
 */
struct ra_cred_spec;
int ra_x_overlay_create(int fsfd, bool upper, const struct ra_cred_spec *cs, const char *what,
			struct rootasm_error *e);
/* fsconfig(FSCONFIG_SET_FD) with its error. */
int ra_x_set_fd(int fsfd, const char *key, int fd, const char *what, struct rootasm_error *e);

#endif
