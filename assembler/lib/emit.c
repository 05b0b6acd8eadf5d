// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The emitter the plan is printed through (plan-print.c, and the exec
 * section's own description in layout-exec.c): each field said once, with
 * its JSON member name (NULL: not in the JSON) and its text (NULL: not in the
 * text, "%s" standing for the value), to two back ends (emit.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "exec.h"
#include "layout.h"
#include "util.h"

/* text: where an item of the current container goes (NULL: it does not show); a list's separator first */
static FILE *em_tx(struct pr *pr)
{
	struct lvl *v = TOP(pr);

	if (!v->text || (v->line && v->at != v->pass))
		return NULL;
	if (v->list && v->n++ && v->sep)
		fputs(v->sep, pr->f);
	return pr->f;
}

/* JSON: @v (taken) as member @k (NULL: none) of the current object, or an item of the current array: whether it went in */
static bool em_jadd(struct pr *pr, const char *k, json_t *v)
{
	struct lvl *c = TOP(pr);

	if (!c->j || !(c->list || k)) {
		json_decref(v);
		return false;
	}
	if (c->list)
		ra_japp(&pr->b, c->j, v);
	else
		ra_jset(&pr->b, c->j, k, v);
	return !pr->b.oom;
}

/* JSON: @k is the string @s (NULL: null); text: @t, @s escaped for its "%s" (@s NULL: nothing) */
void em_put(struct pr *pr, const char *k, const char *t, const char *s)
{
	const char *v = t ? strstr(t, "%s") : NULL;
	FILE *f;

	if (pr->json)
		return (void)em_jadd(pr, k, ra_jstr(s));
	if (!t || !s || !(f = em_tx(pr)))
		return;
	if (!v)
		return (void)fputs(t, f);
	fwrite(t, 1, (size_t)(v - t), f);
	ra_fputs_escaped(s, f);
	fputs(v + 2, f);
}

void em_num(struct pr *pr, const char *k, const char *t, long long v)
{
	char s[24];

	if (pr->json)
		return (void)em_jadd(pr, k, json_integer(v));
	snprintf(s, sizeof(s), "%lld", v);
	em_put(pr, k, t, s);
}

/* JSON: @k is @v; text: @ty or @tn (NULL: nothing) */
void em_yes(struct pr *pr, const char *k, bool v, const char *ty, const char *tn)
{
	if (pr->json)
		return (void)em_jadd(pr, k, json_boolean(v));
	em_put(pr, k, v ? ty : tn, "");
}

/* only when @v: JSON @k true, text @t */
void em_flag(struct pr *pr, const char *k, bool v, const char *t)
{
	if (v)
		em_yes(pr, k, true, t, NULL);
}

/* text only */
void em_txt(struct pr *pr, const char *fmt, ...)
{
	FILE *f = em_tx(pr);
	va_list ap;

	if (!f)
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
}

/* the current line's fields from here on are in @part of its text */
#define em_at(pr, part) (TOP(pr)->at = (part))

/* A container: member @k (or an item), its text @t (NULL: nothing of it shows), a list's separator and empty text. */
static void em_open(struct pr *pr, const char *k, const char *t, bool list, const char *sep, const char *none, bool line)
{
	json_t *j = NULL;
	bool text = t && !pr->json;
	FILE *f;

	if (pr->depth == ARRAY_SIZE(pr->lv))
		abort();	/* cannot be: layouts nest at most RA_MAX_DEPTH deep */
	if (pr->depth) {
		if (pr->json) {
			bool in = em_jadd(pr, k, json_incref(j = list ? json_array() : json_object()));

			json_decref(j);		/* the parent holds it, if it took it */
			if (!in)
				j = NULL;
		}
		text = text && (f = em_tx(pr));
		if (text)
			fputs(t, f);
	} else if (pr->json) {
		j = json_object();	/* the document (ra_jdump() says ENOMEM without it) */
	}
	pr->lv[pr->depth++] = (struct lvl){ .j = j, .text = text, .list = list, .sep = sep, .none = none,
					    .line = line, .pass = -1 };
}

void em_obj(struct pr *pr, const char *k, const char *t)
{
	em_open(pr, k, t, false, NULL, NULL, false);
}

void em_list(struct pr *pr, const char *k, const char *t, const char *sep, const char *none)
{
	em_open(pr, k, t, true, sep, none, false);
}

void em_end(struct pr *pr)
{
	struct lvl *v = TOP(pr);

	if (v->text && v->list && !v->n && v->none)
		fputs(v->none, pr->f);
	pr->depth--;
}

/*
 * JSON: an object; text: a line. `for (line(); again();)` walks the
 * description of its fields once per part of the text (once for the JSON),
 * then ends it.
 */
void em_line(struct pr *pr, const char *k)
{
	em_open(pr, k, "", false, NULL, NULL, true);
}

bool em_again(struct pr *pr)
{
	struct lvl *v = TOP(pr);

	v->at = BODY;
	if (++v->pass < (v->text ? NPARTS : 1))
		return true;
	em_end(pr);
	return false;
}

void em_caps(struct pr *pr, const char *k, const char *t, uint64_t caps)
{
	char name[64];

	em_list(pr, k, t, "+", "none");
	RA_CAP_FOREACH(v, caps)
		em_put(pr, NULL, "%s", ra_cap_name(v, name, sizeof(name)));
	em_end(pr);
}

void em_groups(struct pr *pr, const char *t, const gid_t *g, size_t n)
{
	em_list(pr, "groups", t, "+", "none");
	for (size_t i = 0; i < n; i++)
		em_num(pr, NULL, "%s", g[i]);
	em_end(pr);
}
