// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The parse stage: YAML (or JSON, which YAML reads) -> struct rootasm_layout.
 *
 * It owns the text and nothing else: no stat(), realpath() or open(); a host
 * path is kept as written (struct ra_src), and the open stage (open.c) turns
 * it into an fd. The fuzz target runs this stage with no filesystem at all.
 *
 * Every diagnostic names file:line:column, the key (as a path such as
 * "mounts[2].options[1]"), and what was expected. Every problem is reported
 * (through struct ra_diag), not only the first: after an error the parser
 * goes on with the next list item or top-level key. Every user-controlled
 * size has a cap (layout.h), checked before it costs anything: the YAML
 * nesting depth, the number of documents and aliases are counted in an event
 * pass before libyaml builds the document.
 *
 * The stage in files: yaml.c builds the document, layout-get.c reads its
 * nodes as typed values, this file parses the sections (layers, upper,
 * overlay, mounts) and the whole, layout-exec.c the exec section; model.c
 * walks and frees what they made.
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/mount.h>
#include <yaml.h>

#include "layout-parse.h"
#include "util.h"
#include "volume.h"

static int parse_layer(struct pctx *p, struct ynode *m, size_t i, void *elem)
{
	static const char *const keys[] = { "image", "dir", "type", "idmap", "trusted", NULL };
	struct ra_layer *ly = elem;
	struct ynode *img, *dir, *ty, *idm, *tr;
	char key[64];
	int r;

	snprintf(key, sizeof(key), "layers[%zu]", i);
	ly->src.fd = -EBADF;
	ly->idmap.userns.fd = -EBADF;
	r = ly_map(p, m, key, keys);
	if (r < 0)
		return r;
	img = ly_lookup(p, m, "image");
	dir = ly_lookup(p, m, "dir");
	ty = ly_lookup(p, m, "type");
	ly->loc = ly_loc_of(m);
	if (!!img == !!dir)
		return perr(p, m, key, "a layer needs exactly one of 'image' or 'dir'");
	if (ty && !img)
		return perr(p, ty, key, "'type' applies to image layers only");
	tr = ly_lookup(p, m, "trusted");
	if (tr && !img)
		return perr(p, tr, key, "'trusted' applies to image layers only");
	if ((idm = ly_lookup(p, m, "idmap"))) {
		snprintf(key, sizeof(key), "layers[%zu].idmap", i);
		r = ly_parse_idmap(p, idm, key, &ly->idmap);
		if (r < 0)
			return r;
	}
	if (img) {
		snprintf(key, sizeof(key), "layers[%zu].image", i);
		ly->kind = RA_LAYER_IMAGE;
		r = ly_get_source(p, img, key, RA_SRC_IMAGE, &ly->src);
		if (r == 0 && tr) {
			snprintf(key, sizeof(key), "layers[%zu].trusted", i);
			r = ly_get_bool(p, tr, key, &ly->src.trusted);
		}
		if (r == 0 && ty) {
			snprintf(key, sizeof(key), "layers[%zu].type", i);
			r = ly_get_fstype(p, ty, key, &ly->fstype);
		}
		return r;
	}
	snprintf(key, sizeof(key), "layers[%zu].dir", i);
	ly->kind = RA_LAYER_DIR;
	return ly_get_source(p, dir, key, RA_SRC_DIR, &ly->src);
}

/*
 * A section that is a list (layers, mounts): at least @min and at most @max
 * items (@max_by names who sets the limit), an array of them, each read by
 * @fn into its element; an item's error (-EINVAL) does not stop the next.
 * *@n counts the items begun, so that the free sees them.
 */
static int parse_list(struct pctx *p, struct ynode *seq, const char *key, size_t min, size_t max, const char *max_by,
		      void **arr, size_t size, size_t *n, int (*fn)(struct pctx *, struct ynode *, size_t, void *))
{
	size_t items, i = 0;
	char what[32];
	int r = ly_want(p, seq, key, YAML_SEQUENCE_NODE), bad = 0;

	if (r < 0)
		return r;
	items = ly_nitems(seq);
	if (items < min)
		return perr(p, seq, key, "at least one layer is needed");
	if (items > max)
		return perr(p, seq, key, "%zu %s; %sat most %zu", items, key, max_by, max);
	*arr = calloc(items ? items : 1, size);
	if (!*arr) {
		snprintf(what, sizeof(what), "parse %s", key);
		return ly_poom(p, what);
	}
	for_items(seq, it) {
		*n = i + 1;
		r = fn(p, ly_node(p, *it), i, (char *)*arr + i * size);
		i++;
		if (ly_go_on(r))
			bad = r;
		else if (r < 0)
			return r;
	}
	return bad;
}

static int parse_layers(struct pctx *p, struct ynode *seq, struct rootasm_layout *l)
{
	return parse_list(p, seq, "layers", 1, RA_MAX_LAYERS, "overlayfs takes ", (void **)&l->layers, sizeof(*l->layers),
			  &l->nlayers, parse_layer);
}

static int parse_upper(struct pctx *p, struct ynode *m, struct rootasm_layout *l)
{
	static const char *const keys[] = { "tmpfs", "dir", "upperdir", "workdir", NULL };
	struct ynode *t, *d, *u, *w;
	int r = ly_map(p, m, "upper", keys);

	if (r < 0)
		return r;
	t = ly_lookup(p, m, "tmpfs");
	d = ly_lookup(p, m, "dir");
	u = ly_lookup(p, m, "upperdir");
	w = ly_lookup(p, m, "workdir");
	l->upper.loc = ly_loc_of(m);
	if (!!t + !!d + !!u != 1)
		return perr(p, m, "upper", "needs exactly one of 'tmpfs', 'dir' or 'upperdir' (with 'workdir')");
	if (!!u != !!w)
		return perr(p, m, "upper", "'upperdir' and 'workdir' go together");
	if (t) {
		l->upper.kind = RA_UPPER_TMPFS;
		return ly_parse_tmpfs_map(p, t, "upper.tmpfs", &l->upper.tmpfs);
	}
	if (u) {
		l->upper.kind = RA_UPPER_DIRS;
		r = ly_get_source(p, u, "upper.upperdir", RA_SRC_DIR, &l->upper.src);
		return r < 0 ? r : ly_get_source(p, w, "upper.workdir", RA_SRC_DIR, &l->upper.work);
	}
	l->upper.kind = RA_UPPER_DIR;
	return ly_get_source(p, d, "upper.dir", RA_SRC_DIR, &l->upper.src);
}

static int parse_overlay(struct pctx *p, struct ynode *m, struct rootasm_layout *l)
{
	static const char *const keys[] = { "override_creds", NULL };
	static const char *const ckeys[] = { "uid", "gid", "groups", "capabilities", NULL };
	struct ra_creds *c = &l->creds;
	struct ynode *oc, *v;
	int r = ly_map(p, m, "overlay", keys), bad = 0;

	if (r < 0)
		return r;
	oc = ly_lookup(p, m, "override_creds");
	if (!oc)
		return 0;
	r = ly_map(p, oc, "overlay.override_creds", ckeys);
	if (r < 0)
		return r;
	c->set = true;
	c->loc = ly_loc_of(oc);
	if (!(v = ly_lookup(p, oc, "uid")))
		bad = perr(p, oc, "overlay.override_creds", "missing key 'uid'");
	else if ((r = ly_get_id(p, v, "overlay.override_creds.uid", &c->uid)) < 0)
		bad = r;
	if (!(v = ly_lookup(p, oc, "gid")))
		bad = perr(p, oc, "overlay.override_creds", "missing key 'gid'");
	else if ((r = ly_get_id(p, v, "overlay.override_creds.gid", &c->gid)) < 0)
		bad = r;
	if ((v = ly_lookup(p, oc, "groups")) && (r = ly_parse_groups(p, v, "overlay.override_creds.groups", &c->groups,
							       &c->ngroups)) < 0) {
		if (!ly_go_on(r))
			return r;
		bad = r;
	}
	if ((v = ly_lookup(p, oc, "capabilities"))) {
		r = ly_parse_caps(p, v, "overlay.override_creds.capabilities", &c->caps);
		if (r < 0)
			bad = r;
	}
	return bad;
}

/* A mount entry's optional key @name, when there: one its kind takes (@vkey), read by @get. */
#define OPTIONAL_KEY(name, vkey, get) do {						\
		if ((v = ly_lookup(p, m, name))) {						\
			snprintf(key, sizeof(key), "%s.%s", where, name);			\
			if (!(k->keys & (vkey)))						\
				return perr(p, v, key, "'%s' applies to %s only", name,		\
					    ra_volume_kinds_with(vkey, kinds, sizeof(kinds)));	\
			if ((r = (get)) < 0)							\
				return r;							\
		}										\
	} while (0)

/* A mount entry: exactly one kind's key (volume.h), then the keys that kind takes. */
static int parse_mount(struct pctx *p, struct ynode *m, size_t i, void *elem)
{
	static const char *const common_keys[] = { "target", "options", "type", "idmap", "trusted" };
	struct ra_mount *mt = elem;
	const char *keys[RA_MOUNT__COUNT + ARRAY_SIZE(common_keys) + 1];
	const struct ra_volume_kind *k = NULL;
	struct ynode *kind_node = NULL, *v;
	char key[96], where[64], kinds[128];
	unsigned int allow;
	int nkinds = 0, r;

	snprintf(where, sizeof(where), "mounts[%zu]", i);
	mt->src.fd = -EBADF;
	mt->idmap.userns.fd = -EBADF;
	for (size_t n = 0; n < RA_MOUNT__COUNT; n++)
		keys[n] = ra_volume_kinds[n]->name;
	for (size_t n = 0; n <= ARRAY_SIZE(common_keys); n++)
		keys[RA_MOUNT__COUNT + n] = n < ARRAY_SIZE(common_keys) ? common_keys[n] : NULL;
	r = ly_map(p, m, where, keys);
	if (r < 0)
		return r;
	mt->loc = ly_loc_of(m);
	for (size_t n = 0; n < RA_MOUNT__COUNT; n++) {
		if ((v = ly_lookup(p, m, ra_volume_kinds[n]->name))) {
			kind_node = v;
			mt->kind = (enum ra_mount_kind)n;
			nkinds++;
		}
	}
	if (nkinds != 1)
		return perr(p, m, where, "a mount needs exactly one of %s", ra_volume_kind_names(kinds, sizeof(kinds)));
	k = ra_volume_kind(mt);
	snprintf(key, sizeof(key), "%s.%s", where, k->name);
	v = ly_lookup(p, m, "target");
	if (!(k->keys & RA_VKEY_TARGET)) {
		/* "tmpfs: /tmp" names the target itself */
		if (v)
			return perr(p, v, where, "a %s mount names its target in '%s'; drop 'target'", k->name, k->name);
		r = ly_get_target(p, kind_node, key, &mt->target);
	} else {
		r = ly_get_source(p, kind_node, key, k->src, &mt->src);
		if (r == 0 && !v)
			return perr(p, m, where, "missing key 'target'");
		if (r == 0) {
			snprintf(key, sizeof(key), "%s.target", where);
			r = ly_get_target(p, v, key, &mt->target);
		}
	}
	if (r < 0)
		return r;
	OPTIONAL_KEY("type", RA_VKEY_TYPE, ly_get_fstype(p, v, key, &mt->fstype));
	OPTIONAL_KEY("trusted", RA_VKEY_TRUSTED, ly_get_bool(p, v, key, &mt->src.trusted));
	if ((v = ly_lookup(p, m, "options")) && !(k->keys & RA_VKEY_OPTIONS)) {
		snprintf(key, sizeof(key), "%s.options", where);
		return perr(p, v, key, "%s", k->no_options);
	}
	allow = OPT_ATTRS | (k->keys & RA_VKEY_TMPFS ? OPT_TMPFS : 0) | (k->keys & RA_VKEY_RECURSIVE ? OPT_RECURSIVE : 0);
	OPTIONAL_KEY("options", RA_VKEY_OPTIONS, ly_parse_options(p, v, key, allow, &mt->attrs, &mt->tmpfs));
	OPTIONAL_KEY("idmap", RA_VKEY_IDMAP, ly_parse_idmap(p, v, key, &mt->idmap));
	return 0;
}
#undef OPTIONAL_KEY

static int parse_mounts(struct pctx *p, struct ynode *seq, struct rootasm_layout *l)
{
	return parse_list(p, seq, "mounts", 0, RA_MAX_MOUNTS, "", (void **)&l->mounts, sizeof(*l->mounts),
			  &l->nmounts, parse_mount);
}

static int parse_root(struct pctx *p, struct ynode *root, struct rootasm_layout *l)
{
	static const char *const keys[] = { "version", "layers", "upper", "overlay", "mounts",
					    "attributes", "exec", NULL };
	struct ynode *v;
	int r, bad = 0;

	if (!root)
		return perr(p, NULL, "", "empty layout");
	r = ly_map(p, root, "(top level)", keys);
	if (r < 0)
		return r;
	if (!(v = ly_lookup(p, root, "version")))
		bad = perr(p, root, "version", "missing key 'version' (this tool reads version: 1)");
	else if (v->type != YAML_SCALAR_NODE || strcmp(ly_scalar(v), "1") || v->length != 1)
		bad = perr(p, v, "version", "unsupported version '%s' (this tool reads version: 1)",
			   v->type == YAML_SCALAR_NODE && !ly_clean_scalar(p, v, "version") ? ly_scalar(v) : ly_node_type(v));
	if (!(v = ly_lookup(p, root, "layers")))
		bad = perr(p, root, "layers", "missing key 'layers'");
	else if ((r = parse_layers(p, v, l)) < 0 && !ly_go_on(r))
		return r;
	else if (r < 0)
		bad = r;
	/* each section on its own: an error in one does not hide those in the next */
	static const struct {
		const char *key;
		int (*fn)(struct pctx *, struct ynode *, struct rootasm_layout *);
	} sections[] = {
		{ "upper", parse_upper }, { "overlay", parse_overlay }, { "mounts", parse_mounts },
		{ "exec", ly_parse_exec },
	};
	for (size_t i = 0; i < ARRAY_SIZE(sections); i++) {
		if (!(v = ly_lookup(p, root, sections[i].key)) || (i == 0 && ly_is_null(v)))
			continue;
		r = sections[i].fn(p, v, l);
		if (r < 0 && !ly_go_on(r))
			return r;
		if (r < 0)
			bad = r;
	}
	if ((v = ly_lookup(p, root, "attributes"))) {
		r = ly_parse_options(p, v, "attributes", OPT_ATTRS, &l->attributes, NULL);
		if (r < 0 && !ly_go_on(r))
			return r;
		if (r < 0)
			bad = r;
	}
	if (!bad && l->creds.set && l->nlayers < 2 && l->upper.kind == RA_UPPER_NONE)
		return perr(p, ly_lookup(p, root, "overlay"), "overlay.override_creds",
			    "a single read-only layer is not an overlay; add a layer or an upper");
	return bad;
}

int ra_layout_parse(const char *buf, size_t len, const char *file, const char *dir, struct ra_diag *d,
		    struct rootasm_layout **ret, struct rootasm_error *e)
{
	struct rootasm_layout *l;
	struct ydoc doc = { .root = -1 };
	struct ra_diag none = { 0 };
	struct pctx p = { .doc = &doc, .file = file, .dir = dir, .d = d ? d : &none, .e = e };
	int r;

	if (len > RA_LAYOUT_MAX_BYTES)
		return ra_layout_err(p.d, e, file, (struct ra_loc){ 0, 0 }, "", "layout is %zu bytes; at most %u",
				     len, RA_LAYOUT_MAX_BYTES);
	if (memchr(buf, '\0', len))
		return ra_layout_err(p.d, e, file, (struct ra_loc){ 0, 0 }, "syntax",
				     "a NUL byte at offset %zu; a layout is text", (size_t)((const char *)memchr(buf, '\0', len) - buf));
	r = ly_build_doc(&p, buf, len, &doc);
	if (r < 0) {
		ly_doc_free(&doc);
		return r;
	}
	l = calloc(1, sizeof(*l));
	if (!l) {
		ly_doc_free(&doc);
		return ra_oom(e, "parse layout");
	}
	l->exec.deny_mount_api = true;
	l->upper.src.fd = -EBADF;
	l->upper.work.fd = -EBADF;
	l->file = strdup(file);
	l->dir = dir ? strdup(dir) : NULL;
	if (!l->file || (dir && !l->dir))
		r = ra_oom(e, "parse layout");
	else
		r = parse_root(&p, doc.root >= 0 ? &doc.nodes[doc.root] : NULL, l);
	ly_doc_free(&doc);
	if (p.oom)
		r = p.oom;
	if (r == -EINVAL && d && d->keep_partial) {
		*ret = l;
		return r;
	}
	if (r < 0) {
		rootasm_layout_free(l);
		return r;
	}
	*ret = l;
	return 0;
}
