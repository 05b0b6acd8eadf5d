// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A layout document, YAML or JSON, as a JSON object: for the code that takes
 * a layout apart and puts another one together (bundle-prepare.c merges the
 * runtime config's mounts into it). The text is first parsed as `rootasm
 * check --offline` parses it (ra_layout_parse(): the same errors, with file,
 * line and column), then its YAML document is written out as JSON: mappings
 * as objects, sequences as arrays, plain null/~/empty as null, plain
 * true/false as booleans, plain decimal numbers as numbers, everything else
 * as a string (the parse stage reads each as the same scalar again). Aliases
 * are expanded, at most RA_LAYOUT_JSON_NODES nodes in all.
 */
#include <string.h>
#include <yaml.h>

#include <jansson.h>

#include "layout.h"
#include "layout-json.h"
#include "layout-parse.h"
#include "util.h"

#define RA_LAYOUT_JSON_NODES	65536

static json_t *scalar(const struct ynode *n)
{
	const char *v = n->value ? n->value : "";

	if (n->style == YAML_PLAIN_SCALAR_STYLE) {
		if (!n->length || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") || !strcmp(v, "NULL"))
			return json_null();
		if (!strcmp(v, "true"))
			return json_true();
		if (!strcmp(v, "false"))
			return json_false();
		if (n->length < 16 && strspn(v, "0123456789") == n->length && (v[0] != '0' || n->length == 1))
			return json_integer(strtoll(v, NULL, 10));
	}
	return json_stringn(v, n->length);
}

static json_t *node(const struct ydoc *d, int id, size_t *budget)
{
	const struct ynode *n;
	json_t *o;

	if (id < 0 || (size_t)id >= d->n || !*budget)
		return NULL;
	(*budget)--;
	n = &d->nodes[id];
	if (n->type == YAML_SCALAR_NODE)
		return scalar(n);
	if (n->type == YAML_SEQUENCE_NODE) {
		o = json_array();
		for (size_t i = 0; o && i < n->n; i++)
			if (json_array_append_new(o, node(d, n->items[i], budget)) < 0) {
				json_decref(o);
				return NULL;
			}
		return o;
	}
	o = json_object();
	for (size_t i = 0; o && i < n->n; i++) {
		const struct ynode *k = &d->nodes[n->pairs[i].key];

		if (k->type != YAML_SCALAR_NODE || json_object_set_new(o, k->value ? k->value : "",
								       node(d, n->pairs[i].value, budget)) < 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

int ra_layout_to_json(const char *buf, size_t len, const char *file, json_t **ret, struct rootasm_error *e)
{
	struct rootasm_layout *l = NULL;
	struct ydoc doc = { .root = -1 };
	struct ra_diag none = { 0 };
	struct pctx p = { .doc = &doc, .file = file, .d = &none, .e = e };
	size_t budget = RA_LAYOUT_JSON_NODES;
	int r;

	/* what check says of it, first */
	r = ra_layout_parse(buf, len, file, NULL, NULL, &l, e);
	if (r < 0)
		return r;
	rootasm_layout_free(l);
	r = ly_build_doc(&p, buf, len, &doc);
	if (r < 0) {
		ly_doc_free(&doc);
		return r;
	}
	*ret = doc.root >= 0 ? node(&doc, doc.root, &budget) : NULL;
	ly_doc_free(&doc);
	if (!*ret && !budget)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, E2BIG, "read layout", file,
				   "more than %u nodes with its aliases expanded", RA_LAYOUT_JSON_NODES);
	if (!*ret)
		return ra_oom(e, "read layout");
	if (!json_is_object(*ret)) {
		json_decref(*ret);
		*ret = NULL;
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "read layout", file, "not a mapping");
	}
	return 0;
}
