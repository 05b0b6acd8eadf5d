// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The YAML document builder of the parse stage: libyaml's events -> struct
 * ydoc (layout-parse.h), with every size capped as it grows.
 *
 * libyaml is loaded with dlopen() by the first parse, as libarchive, libcrypto
 * and libcurl are by an import: a process that reads no layout (rootasm probe,
 * version, import, store; a runtime that only asks rootasmd) does not map it
 * at its start (issue 20).
 */
#include <string.h>
#include <yaml.h>

#include "dl.h"
#include "layout-parse.h"
#include "util.h"

RA_DL_TABLE(ym, RA_YAML_FUNCS, "libyaml-0.so.2", "load libyaml", "layouts need the libyaml-0-2 package");

#define yaml_parser_initialize ym.yaml_parser_initialize
#define yaml_parser_set_input_string ym.yaml_parser_set_input_string
#define yaml_parser_parse ym.yaml_parser_parse
#define yaml_event_delete ym.yaml_event_delete
#define yaml_parser_delete ym.yaml_parser_delete

/* libyaml's own failure: a syntax error at its mark, or out of memory. */
static int yaml_fail(struct pctx *p, yaml_parser_t *parser)
{
	struct ra_loc at = { parser->problem_mark.line + 1, parser->problem_mark.column + 1 };

	if (parser->error == YAML_MEMORY_ERROR)
		return ly_poom(p, "parse YAML (libyaml)");
	return ra_layout_err(p->d, p->e, p->file, at, "syntax", "%s%s%s",
			     parser->problem ? parser->problem : "malformed YAML",
			     parser->context ? " " : "", parser->context ? parser->context : "");
}

void ly_doc_free(struct ydoc *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->nodes[i].value);
		free(d->nodes[i].items);
		free(d->nodes[i].pairs);
	}
	free(d->nodes);
	for (size_t i = 0; i < d->nanchors; i++)
		free(d->anchors[i].name);
	free(d->anchors);
}

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	void *a;
	size_t c = *cap ? *cap : 8;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	a = realloc(*arr, c * elem);
	if (!a)
		return -ENOMEM;
	*arr = a;
	*cap = c;
	return 0;
}

/* Add node @id to the open collection on top of @stack (or make it the root). */
static int attach(struct ydoc *d, const int *stack, int depth, int id)
{
	struct ynode *parent;

	if (!depth) {
		d->root = id;
		return 0;
	}
	parent = &d->nodes[stack[depth - 1]];
	if (parent->type == YAML_SEQUENCE_NODE) {
		if (grow((void **)&parent->items, &parent->cap, parent->n + 1, sizeof(int)) < 0)
			return -ENOMEM;
		parent->items[parent->n++] = id;
		return 0;
	}
	/* a mapping: keys and values alternate; a pair counts once its value came */
	if (!parent->want_value) {
		if (grow((void **)&parent->pairs, &parent->cap, parent->n + 1, sizeof(struct ypair)) < 0)
			return -ENOMEM;
		parent->pairs[parent->n] = (struct ypair){ id, -1 };
		parent->want_value = true;
	} else {
		parent->pairs[parent->n++].value = id;
		parent->want_value = false;
	}
	return 0;
}

/*
 * The document, from libyaml's events, with the limits checked as it grows:
 * exactly one document, collections nested at most RA_MAX_YAML_DEPTH deep
 * (libyaml's scanner is quadratic in the nesting of flow collections, so the
 * depth is checked before it gets there), at most RA_MAX_YAML_ALIASES aliases
 * and RA_MAX_YAML_NODES nodes, no alias to a collection that is still open.
 */
int ly_build_doc(struct pctx *p, const char *buf, size_t len, struct ydoc *d)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	int stack[RA_MAX_YAML_DEPTH], depth = 0, docs = 0, aliases = 0, r = 0;
	bool done = false;

	r = ra_dl_load(&ym_dl, p->e);
	if (r == -ENOMEM)
		p->oom = r;
	if (r < 0)
		return r;
	if (!yaml_parser_initialize(&parser))
		return ly_poom(p, "parse YAML (libyaml)");
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	while (!done && r == 0) {
		struct ra_loc at;
		char *anchor = NULL;
		int id = -1;

		if (!yaml_parser_parse(&parser, &ev)) {
			r = yaml_fail(p, &parser);
			break;
		}
		at = (struct ra_loc){ ev.start_mark.line + 1, ev.start_mark.column + 1 };
		switch (ev.type) {
		case YAML_DOCUMENT_START_EVENT:
			if (++docs > 1)
				r = ra_layout_err(p->d, p->e, p->file, at, "syntax",
						  "a second YAML document; a layout is exactly one document");
			break;
		case YAML_SCALAR_EVENT:
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (ev.type != YAML_SCALAR_EVENT && depth >= RA_MAX_YAML_DEPTH) {
				r = ra_layout_err(p->d, p->e, p->file, at, "syntax",
						  "collections nested deeper than %d levels", RA_MAX_YAML_DEPTH);
				break;
			}
			if (d->n >= RA_MAX_YAML_NODES) {
				r = ra_layout_err(p->d, p->e, p->file, at, "syntax", "more than %d YAML nodes",
						  RA_MAX_YAML_NODES);
				break;
			}
			if (grow((void **)&d->nodes, &d->cap, d->n + 1, sizeof(*d->nodes)) < 0) {
				r = ly_poom(p, "parse YAML");
				break;
			}
			id = d->n++;
			d->nodes[id] = (struct ynode){ .loc = at };
			if (ev.type == YAML_SCALAR_EVENT) {
				struct ynode *n = &d->nodes[id];

				n->type = YAML_SCALAR_NODE;
				/* taken from the event: libyaml allocated it, we free it */
				n->value = (char *)ev.data.scalar.value;
				n->length = ev.data.scalar.length;
				n->style = ev.data.scalar.style;
				ev.data.scalar.value = NULL;
				anchor = (char *)ev.data.scalar.anchor;
				ev.data.scalar.anchor = NULL;
			} else if (ev.type == YAML_SEQUENCE_START_EVENT) {
				d->nodes[id].type = YAML_SEQUENCE_NODE;
				anchor = (char *)ev.data.sequence_start.anchor;
				ev.data.sequence_start.anchor = NULL;
			} else {
				d->nodes[id].type = YAML_MAPPING_NODE;
				anchor = (char *)ev.data.mapping_start.anchor;
				ev.data.mapping_start.anchor = NULL;
			}
			if (attach(d, stack, depth, id) < 0) {
				r = ly_poom(p, "parse YAML");
				break;
			}
			if (ev.type != YAML_SCALAR_EVENT) {
				d->nodes[id].open = true;
				stack[depth++] = id;
			}
			if (anchor) {
				if (grow((void **)&d->anchors, &d->acap, d->nanchors + 1, sizeof(*d->anchors)) < 0) {
					r = ly_poom(p, "parse YAML");
					break;
				}
				d->anchors[d->nanchors++] = (struct yanchor){ TAKE_PTR(anchor), id };
			}
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			d->nodes[stack[--depth]].open = false;
			break;
		case YAML_ALIAS_EVENT: {
			const char *name = (const char *)ev.data.alias.anchor;

			if (++aliases > RA_MAX_YAML_ALIASES) {
				r = ra_layout_err(p->d, p->e, p->file, at, "syntax", "more than %d aliases",
						  RA_MAX_YAML_ALIASES);
				break;
			}
			/* the latest anchor of that name (YAML lets a name be anchored again) */
			for (size_t i = d->nanchors; i-- > 0 && id < 0;)
				if (!strcmp(d->anchors[i].name, name))
					id = d->anchors[i].id;
			if (id < 0)
				r = ra_layout_err(p->d, p->e, p->file, at, "syntax", "alias *%s names no anchor", name);
			else if (d->nodes[id].open)
				r = ra_layout_err(p->d, p->e, p->file, at, "syntax",
						  "alias *%s refers to a collection that contains it", name);
			else if (attach(d, stack, depth, id) < 0)
				r = ly_poom(p, "parse YAML");
			break;
		}
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		default:
			break;
		}
		free(anchor);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	return r;
}

