/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Inside the parse stage: the YAML document (yaml.c builds it), the parse
 * context, and the typed accessors (layout-get.c) the sections (layout.c,
 * layout-exec.c) read it with. Not for the other stages.
 */
#ifndef ROOTASM_LAYOUT_PARSE_H
#define ROOTASM_LAYOUT_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "layout.h"

/*
 * The document, built from libyaml's events by build_doc() (not by
 * yaml_parser_load(), which leaks on some allocation failures and counts
 * nothing): scalars, lists and mappings as nodes in one table, aliases as
 * references to the anchored node.
 */
struct ypair {
	int key, value;
};

struct ynode {
	int type;				/* YAML_SCALAR_NODE, YAML_SEQUENCE_NODE, YAML_MAPPING_NODE */
	struct ra_loc loc;
	char *value;				/* scalar (NUL-terminated; length may tell of NULs inside) */
	size_t length;
	int style;
	int *items;				/* sequence: node indices */
	struct ypair *pairs;			/* mapping */
	size_t n, cap;
	bool open;				/* a collection not ended yet */
	bool want_value;			/* a mapping whose last key has no value yet */
};

struct yanchor {
	char *name;
	int id;
};

struct ydoc {
	struct ynode *nodes;
	size_t n, cap;
	int root;				/* -1: empty */
	struct yanchor *anchors;
	size_t nanchors, acap;
};

struct pctx {
	struct ydoc *doc;
	const char *file;
	const char *dir;
	struct ra_diag *d;
	struct rootasm_error *e;
	int oom;				/* -ENOMEM once an allocation failed */
};

#define perr(p, n, key, ...) ra_layout_err((p)->d, (p)->e, (p)->file, ly_loc_of(n), key, __VA_ARGS__)

/* Iterate a mapping's pairs, a list's items. */
#define for_pairs(map, pair) \
	for (struct ypair *pair = (map)->pairs; pair < (map)->pairs + (map)->n; pair++)
#define for_items(seq, it) \
	for (int *it = (seq)->items; it < (seq)->items + (seq)->n; it++)

/* What a mount's options may hold besides the attributes and propagation. */
enum { OPT_ATTRS = 1, OPT_RECURSIVE = 2, OPT_TMPFS = 4 };

/* yaml.c */
int ly_build_doc(struct pctx *p, const char *buf, size_t len, struct ydoc *d);
void ly_doc_free(struct ydoc *d);

/* layout-get.c */
struct ra_loc ly_loc_of(const struct ynode *n);
int ly_poom(struct pctx *p, const char *what);
bool ly_go_on(int r);
const char *ly_node_type(const struct ynode *n);
int ly_want(struct pctx *p, const struct ynode *n, const char *key, int t);
const char *ly_scalar(const struct ynode *n);
bool ly_is_null(const struct ynode *n);
int ly_clean_scalar(struct pctx *p, const struct ynode *n, const char *key);
int ly_get_string(struct pctx *p, const struct ynode *n, const char *key, const char **ret);
int ly_get_bool(struct pctx *p, const struct ynode *n, const char *key, bool *ret);
int ly_parse_u64(const char *s, int base, uint64_t max, uint64_t *ret);
int ly_get_id(struct pctx *p, const struct ynode *n, const char *key, uint32_t *ret);
int ly_check_size(const char *s, bool percent_ok, const char **why);
int ly_get_mode(struct pctx *p, const struct ynode *n, const char *key, const char *s,
		unsigned int *ret);
size_t ly_nitems(const struct ynode *seq);
struct ynode *ly_node(struct pctx *p, int id);
int ly_check_keys(struct pctx *p, struct ynode *map, const char *where,
		  const char *const *allowed);
int ly_map(struct pctx *p, struct ynode *n, const char *where, const char *const *allowed);
struct ynode *ly_lookup(struct pctx *p, struct ynode *map, const char *key);
int ly_get_target(struct pctx *p, const struct ynode *n, const char *key, char **ret);
int ly_get_source(struct pctx *p, const struct ynode *n, const char *key, enum ra_src_kind kind,
		  struct ra_src *src);
int ly_get_fstype(struct pctx *p, const struct ynode *n, const char *key, enum ra_fstype *ret);
int ly_parse_option(struct pctx *p, struct ynode *n, const char *key, unsigned int allow,
		    struct ra_attrs *a, struct ra_tmpfs *t);
int ly_parse_options(struct pctx *p, struct ynode *seq, const char *where, unsigned int allow,
		     struct ra_attrs *a, struct ra_tmpfs *t);
int ly_parse_tmpfs_map(struct pctx *p, struct ynode *map, const char *where, struct ra_tmpfs *t);
int ly_parse_ranges(struct pctx *p, struct ynode *seq, const char *where, struct ra_idrange **ret,
		    size_t *n);
int ly_parse_idmap(struct pctx *p, struct ynode *m, const char *where, struct ra_idmap *im);
int ly_parse_caps(struct pctx *p, struct ynode *seq, const char *where, uint64_t *ret);
int ly_parse_groups(struct pctx *p, struct ynode *seq, const char *where, gid_t **ret, size_t *n);
/* layout-exec.c */
int ly_parse_exec(struct pctx *p, struct ynode *m, struct rootasm_layout *l);

#endif
