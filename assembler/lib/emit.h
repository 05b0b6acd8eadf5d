/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One description, two outputs: the emitter (emit.c) the plan and the exec
 * section are described to. JSON: a jansson document (json.h: a NULL from any
 * constructor makes the whole document fail with ENOMEM). Text: what the
 * layout and the host name is escaped (escape.c). A text line's fields may
 * come in another order than the JSON's: the description of a line is walked
 * once per part of it (EM_AT() says which part a field is in), each walk
 * writing only that part.
 */
#ifndef ROOTASM_EMIT_H
#define ROOTASM_EMIT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "json.h"
#include "layout.h"

/* a text line's parts, in the order they are written */
enum { BODY, LATE, TAIL, BELOW, NPARTS };


struct lvl {
	json_t *j;		/* JSON: the object or array it fills; NULL: not in the JSON */
	bool text;		/* it shows in the text */
	bool list, line;
	const char *sep, *none;	/* text: a list's separator, and what it shows without items */
	size_t n;		/* text: the items it showed */
	int pass, at;		/* text, a line: the part this walk writes, the part the description is in */
};

struct pr {
	bool json;
	struct ra_jb b;		/* JSON: whether an allocation failed */
	FILE *f;
	struct lvl lv[3 * RA_MAX_DEPTH + 8];	/* a plan, its ops, an op, its nested plan, ... an idmap, its uids */
	size_t depth;
};

#define TOP(pr) (&(pr)->lv[(pr)->depth - 1])

/* the current line's fields from here on are in @part of its text */
#define EM_AT(pr, part) (TOP(pr)->at = (part))

/* JSON: @k is the string @s (NULL: null); text: @t, @s escaped for its "%s" (@s NULL: nothing) */
void em_put(struct pr *pr, const char *k, const char *t, const char *s);
void em_num(struct pr *pr, const char *k, const char *t, long long v);
/* JSON: @k is @v; text: @ty or @tn (NULL: nothing) */
void em_yes(struct pr *pr, const char *k, bool v, const char *ty, const char *tn);
/* only when @v: JSON @k true, text @t */
void em_flag(struct pr *pr, const char *k, bool v, const char *t);
/* text only */
void em_txt(struct pr *pr, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A container: member @k (or an item), its text @t (NULL: nothing of it shows); a list's separator and empty text. */
void em_obj(struct pr *pr, const char *k, const char *t);
void em_list(struct pr *pr, const char *k, const char *t, const char *sep, const char *none);
void em_end(struct pr *pr);
/* JSON: an object; text: a line. `for (em_line(); em_again();)` walks its description once per part. */
void em_line(struct pr *pr, const char *k);
bool em_again(struct pr *pr);
/* capabilities ("cap_chown+cap_kill", JSON: names) and supplementary groups ("1+2") */
void em_caps(struct pr *pr, const char *k, const char *t, uint64_t caps);
void em_groups(struct pr *pr, const char *t, const gid_t *g, size_t n);

/* What `rootasm exec` gives the command, as the sandbox will set it up (layout-exec.c, beside its keys). */
void ra_exec_describe(struct pr *pr, const struct ra_exec *x);

#endif
