// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Text for a terminal: what a layout or the host names (paths, layout file
 * names, messages with them) is printed with the characters that could move
 * the cursor, clear the screen or reorder the line escaped. One rule for the
 * plan (plan.c) and the error line (error.c):
 *
 *   C0 controls and DEL            \xNN      (ESC -> \x1b)
 *   bytes that are not UTF-8       \xNN
 *   C1 controls (U+0080-U+009F)    \uNNNN    (CSI -> \u009b)
 *   bidirectional formatting       \uNNNN    (U+061C, U+200E/F, U+202A-U+202E, U+2066-U+2069)
 *   line and paragraph separators  \uNNNN    (U+2028, U+2029)
 *
 * Everything else, other UTF-8 included, is copied as is.
 */
#include <stdio.h>
#include <string.h>

#include "util.h"

size_t ra_utf8_next(const char *str, size_t n, unsigned int *ret_cp)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t len;
	unsigned int cp;

	if (!n)
		return 0;
	if (s[0] < 0x80) {
		*ret_cp = s[0];
		return 1;
	}
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
	*ret_cp = cp;
	return len;
}

bool ra_char_unsafe(unsigned int cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x061c || cp == 0x200e || cp == 0x200f ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 || cp == 0x2029;
}

/* The unit at @s (@n bytes left): its length; @esc holds its escape, or "" when it is copied as is. */
static size_t unit(const char *s, size_t n, char esc[8])
{
	unsigned int cp;
	size_t l = ra_utf8_next(s, n, &cp);

	esc[0] = '\0';
	if (!l)
		snprintf(esc, 8, "\\x%02x", (unsigned char)s[0]);
	else if (cp < 0x20 || cp == 0x7f)
		snprintf(esc, 8, "\\x%02x", cp);
	else if (ra_char_unsafe(cp))
		snprintf(esc, 8, "\\u%04x", cp);
	return l ? l : 1;
}

char *ra_escape(const char *s, char *out, size_t size)
{
	size_t n = strlen(s), o = 0;

	if (!size)
		return out;
	for (size_t i = 0, l; i < n; i += l) {
		char esc[8];
		const char *w;
		size_t wl;

		l = unit(s + i, n - i, esc);
		w = esc[0] ? esc : s + i;
		wl = esc[0] ? strlen(esc) : l;
		if (o + wl >= size)
			break;		/* never half an escape or half a character */
		memcpy(out + o, w, wl);
		o += wl;
	}
	out[o] = '\0';
	return out;
}

int ra_fputs_escaped(const char *s, FILE *f)
{
	size_t n = strlen(s);

	for (size_t i = 0, l; i < n; i += l) {
		char esc[8];

		l = unit(s + i, n - i, esc);
		if (esc[0] ? fputs(esc, f) == EOF : fwrite(s + i, 1, l, f) != l)
			return EOF;
	}
	return 0;
}
