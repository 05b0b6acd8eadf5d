/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Shared by the bundle code (bundle.c's top comment says what it does):
 * bundle.c (the bundle directory, its files and records; cleanup),
 * bundle-mounts.c (config.json's mounts as a layout's), bundle-prepare.c
 * (prepare) and bundle-create.c (create).
 */
#ifndef ROOTASM_BUNDLE_H
#define ROOTASM_BUNDLE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <jansson.h>

#include "rootasm.h"

#define CONFIG_MAX		(4u << 20)	/* config.json, the layout */
#define RECORD_MAX		(64u << 10)
#define ANN_LAYOUT		"org.rootasm.layout"
#define ANN_PREPARED		"org.rootasm.prepared"
#define STATE_DIR		".rootasm"
#define DEFAULT_RUN_DIR		"/run/rootasm"
#define RECORDS_DIR		"bundles"

#ifndef STATX_ATTR_MOUNT_ROOT
#define STATX_ATTR_MOUNT_ROOT	0x00002000
#endif

/* json_decrefp() is jansson's own (2.11+) */
#define _cleanup_json_ __attribute__((cleanup(json_decrefp)))

/* One bundle directory, opened once (bd_bundle_open()); all of it is reached beneath its fd. */
struct bundle {
	const char *op;			/* "bundle prepare", "bundle cleanup": for messages */
	int fd;				/* O_PATH of the bundle directory */
	struct stat st;			/* its identity and owner */
	uid_t author;			/* who may have written config.json: its owner, or the bundle's */
	uid_t read_uid;			/* the owner of what read_beneath() read last */
	char *path;			/* its absolute path, for messages and results */
	int records;			/* O_PATH of RUN_DIR/bundles, or -EBADF */
	char *records_path;
	char record[64];		/* DEV-INO.json */
	char shown[4][PATH_MAX];	/* in_bundle()'s */
	unsigned int nshown;
};

#define USAGE(e, b, err, path, ...) ra_err_kind(e, ROOTASM_ERROR_USAGE, err, (b)->op, path, __VA_ARGS__)

#define OPT(o, field, def) RA_OPT(o, struct rootasm_bundle_opts, field, def)

/* bundle.c: the bundle directory and what is beneath it */
int bd_bundle_open(struct bundle *b, const char *dir, struct rootasm_error *e);
void bd_bundle_done(struct bundle *b);
const char *bd_in_bundle(struct bundle *b, const char *rel);
int bd_beneath(int dirfd, const char *rel, int flags);
int bd_beneath_err(struct bundle *b, int err, const char *rel, const char *what, struct rootasm_error *e);
int bd_records_open(struct bundle *b, bool create, struct rootasm_error *e);
int bd_read_beneath(struct bundle *b, int dirfd, const char *rel, const char *shown, size_t max, char **ret,
		    size_t *ret_len, struct rootasm_error *e);
int bd_parse_object(struct bundle *b, const char *buf, size_t len, const char *shown, json_t **ret,
		    struct rootasm_error *e);
int bd_write_at(struct bundle *b, int dirfd, const char *name, const char *shown, const char *buf, size_t len,
		bool durable, struct rootasm_error *e);
int bd_dump(json_t *o, char **ret, size_t *ret_len, struct rootasm_error *e);
int bd_detach_fd(int fd);
int bd_root_rel(struct bundle *b, const char *root, char **ret, struct rootasm_error *e);
int bd_root_open(struct bundle *b, const char *rel, const char *shown, bool *made, int *ret_parent,
		 char **ret_name, struct rootasm_error *e);
/* The start of prepare, cleanup and create: the context, @res cleared, @opts checked (a layout and an upper are prepare's). */
int bd_begin(struct rootasm_ctx **ctx, struct rootasm_bundle_result *res, const struct rootasm_bundle_opts *opts,
	     const char *op, const char *dir, bool prepare, struct rootasm_error *e);
int bd_strv_of(json_t *a, char ***ret, size_t *n);
/*
 * The layout at @path (relative: beneath the bundle) as JSON, read by the
 * library's one reader of layout files for @p (ra_layout_file_read(): its
 * layout limit judged before it is read); *ret_dir the directory's fd
 * (caller closes).
 */
int bd_read_layout(struct bundle *b, const char *path, const struct rootasm_principal *p, json_t **ret, char **shown,
		   int *ret_dir, struct rootasm_error *e);
void bd_state_remove(struct bundle *b, int state, bool made);

/* bundle-mounts.c: config.json as a layout's parts */
char *bd_absolute(const char *base, const char *p);
int bd_absolutize(json_t *l, const char *ldir);
json_t *bd_ranges(json_t *maps, bool *isbad);
long long bd_host_root(json_t *maps);
json_t *bd_take_mount(json_t *m, const char *bundle, bool userns, bool nodev);

#endif
