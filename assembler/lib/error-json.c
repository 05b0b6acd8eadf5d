// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * An error as JSON: the object `--json` prints and rootasmd's replies carry,
 * and back. Apart from error.c, so that filling an error needs no JSON (the
 * lazy loading of libjansson, dl.c, fills errors too).
 */
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "util.h"

int rootasm_error_print_json(const struct rootasm_error *e, FILE *out, bool pretty)
{
	struct ra_jb b = { false };
	json_t *o = json_object();

	/* one writer of the fields: the daemon's replies carry the same object (ra_error_json()) */
	ra_jset(&b, o, "error", ra_error_json(e));
	return ra_jdump(&b, o, out, pretty);
}

/* ------------------------------------------------------ as JSON */

static const char *const kind_names[] = {
	[ROOTASM_ERROR_RUNTIME] = "runtime",
	[ROOTASM_ERROR_USAGE] = "usage",
	[ROOTASM_ERROR_UNSUPPORTED] = "unsupported",
	[ROOTASM_ERROR_PERMISSION] = "permission",
};

json_t *ra_error_json(const struct rootasm_error *e)
{
	struct ra_jb b = { false };
	json_t *in = json_object();
	char line[8192];
	const char *name = e->err > 0 ? strerrorname_np(e->err) : NULL;

	ra_jset(&b, in, "message", ra_jstr(rootasm_error_format(e, line, sizeof(line))));
	ra_jset(&b, in, "kind", ra_jstr((unsigned int)e->kind < ARRAY_SIZE(kind_names) ? kind_names[e->kind] : "runtime"));
	ra_jset(&b, in, "errno", json_integer(e->err));
	ra_jset(&b, in, "errname", ra_jstr(name));
	ra_jset(&b, in, "op", ra_jstr(e->op));
	ra_jset(&b, in, "path", ra_jstr(e->path[0] ? e->path : NULL));
	ra_jset(&b, in, "detail", ra_jstr(e->msg[0] ? e->msg : NULL));
	ra_jset(&b, in, "file", ra_jstr(e->file[0] ? e->file : NULL));
	ra_jset(&b, in, "line", e->line ? json_integer(e->line) : json_null());
	ra_jset(&b, in, "column", e->column ? json_integer(e->column) : json_null());
	ra_jset(&b, in, "feature", ra_jstr(e->feature[0] ? e->feature : NULL));
	if (b.oom) {
		json_decref(in);
		return NULL;
	}
	return in;
}

static void str_field(json_t *j, const char *k, char *dst, size_t size)
{
	const char *s = json_string_value(json_object_get(j, k));

	snprintf(dst, size, "%s", s ? s : "");
}

void ra_error_from_json(json_t *j, struct rootasm_error *e)
{
	const char *kind = json_string_value(json_object_get(j, "kind"));
	json_int_t v;

	memset(e, 0, sizeof(*e));
	e->kind = ROOTASM_ERROR_RUNTIME;
	for (size_t i = 0; kind && i < ARRAY_SIZE(kind_names); i++)
		if (!strcmp(kind, kind_names[i]))
			e->kind = i;
	v = json_integer_value(json_object_get(j, "errno"));
	e->err = v > 0 && v < 4096 ? (int)v : EIO;
	str_field(j, "op", e->op, sizeof(e->op));
	str_field(j, "path", e->path, sizeof(e->path));
	str_field(j, "detail", e->msg, sizeof(e->msg));
	str_field(j, "file", e->file, sizeof(e->file));
	str_field(j, "feature", e->feature, sizeof(e->feature));
	v = json_integer_value(json_object_get(j, "line"));
	e->line = v > 0 && v < (1 << 30) ? (unsigned int)v : 0;
	v = json_integer_value(json_object_get(j, "column"));
	e->column = v > 0 && v < (1 << 30) ? (unsigned int)v : 0;
	if (!e->op[0])
		snprintf(e->op, sizeof(e->op), "rootasmd");
}
