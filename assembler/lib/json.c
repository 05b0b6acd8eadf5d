// SPDX-License-Identifier: LGPL-2.1-or-later
/* JSON output helpers (json.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

/* Length of the valid UTF-8 sequence at @s (at most @n bytes), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	unsigned int cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0)
		len = 2, cp = s[0] & 0x1f;
	else if ((s[0] & 0xf0) == 0xe0)
		len = 3, cp = s[0] & 0x0f;
	else if ((s[0] & 0xf8) == 0xf0)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond Unicode */
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
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

int ra_jdump(struct ra_jb *b, json_t *o, FILE *out, bool pretty)
{
	int r = 0;

	if (b->oom || !o)
		r = -ENOMEM;
	else if (json_dumpf(o, out, (pretty ? JSON_INDENT(2) : JSON_COMPACT) | JSON_PRESERVE_ORDER) < 0 ||
		 fputc('\n', out) == EOF)
		r = -EIO;
	json_decref(o);
	return r;
}
