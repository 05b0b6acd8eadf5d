// SPDX-License-Identifier: LGPL-2.1-or-later
/* JSON output helpers (json.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "util.h"

/* Length of the valid UTF-8 sequence at @s (at most @n bytes), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned int cp;

	return ra_utf8_next((const char *)s, n, &cp);
}

bool utf8_valid(const char *s)
{
	size_t n = strlen(s);

	for (size_t i = 0, l; i < n; i += l)
		if (!(l = utf8_len((const unsigned char *)s + i, n - i)))
			return false;
	return true;
}

json_t *ra_jstr(const char *s)
{
	size_t n, o = 0;
	char *buf;
	json_t *j;

	if (!s)
		return json_null();
	j = json_string(s);
	if (j)
		return j;
	n = strlen(s);
	buf = malloc(n * 3 + 1);
	if (!buf)
		return NULL;
	for (size_t i = 0; i < n;) {
		size_t l = utf8_len((const unsigned char *)s + i, n - i);

		if (l) {
			memcpy(buf + o, s + i, l);
			o += l;
			i += l;
		} else {
			memcpy(buf + o, "\xef\xbf\xbd", 3);	/* U+FFFD */
			o += 3;
			i++;
		}
	}
	buf[o] = '\0';
	j = json_string(buf);
	free(buf);
	return j;
}

/* The *_new() calls take @v even when they fail; without a container it is dropped here. */
json_t *ra_jset(struct ra_jb *b, json_t *o, const char *k, json_t *v)
{
	if (!o)
		json_decref(v);
	if (!o || !v || json_object_set_new(o, k, v) < 0)
		b->oom = true;
	return o;
}

json_t *ra_japp(struct ra_jb *b, json_t *a, json_t *v)
{
	if (!a)
		json_decref(v);
	if (!a || !v || json_array_append_new(a, v) < 0)
		b->oom = true;
	return a;
}

/*
 * jansson escapes only what JSON requires (U+0000-U+001F, '"', '\\'): C1 controls
 * and bidirectional formatting characters in a host path would reach a terminal
 * as they are. JSON_ENSURE_ASCII writes every non-ASCII character as \uXXXX;
 * DEL (0x7f) is ASCII and stays raw, and since it can only stand inside a
 * string of that output, each one becomes \u007f (the same string to a parser).
 */
int ra_jdump(struct ra_jb *b, json_t *o, FILE *out, bool pretty)
{
	size_t flags = (pretty ? JSON_INDENT(2) : JSON_COMPACT) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII, n = 0;
	char *s = NULL;
	int r = 0;

	/*
	 * Into one buffer of the right size: json_dumps() grows a buffer as it goes,
	 * and a failed growth while it writes an object's key is not noticed (jansson
	 * 2.14): the document would lose the key, and still come out.
	 */
	if (!b->oom && o && (n = json_dumpb(o, NULL, 0, flags)) > 0 && (s = malloc(n + 1)) &&
	    json_dumpb(o, s, n, flags) == n)
		s[n] = '\0';
	else
		n = 0;
	json_decref(o);
	if (!n) {
		free(s);
		return -ENOMEM;
	}
	for (const char *p = s; *p && r == 0; p++)
		if ((*p == 0x7f ? fputs("\\u007f", out) : fputc(*p, out)) == EOF)
			r = -EIO;
	if (r == 0 && fputc('\n', out) == EOF)
		r = -EIO;
	free(s);
	return r;
}
