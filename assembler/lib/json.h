/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * JSON output through jansson, the one JSON library of the project. Strings
 * from the host (paths, messages) need not be UTF-8: ra_jstr() replaces what
 * is not with U+FFFD instead of failing. A builder (struct ra_jb) remembers an
 * allocation failure anywhere in a document so that it is reported once.
 */
#ifndef ROOTASM_JSON_H
#define ROOTASM_JSON_H

#include <stdbool.h>
#include <stdio.h>
#include <jansson.h>

struct ra_jb {
	bool oom;
};

/* Whether @s is valid UTF-8. */
bool utf8_valid(const char *s);

/* A JSON string of @s (NULL -> null); invalid UTF-8 becomes U+FFFD. */
json_t *ra_jstr(const char *s);
/* o[k] = v; on any NULL the builder is marked. Returns @o. */
json_t *ra_jset(struct ra_jb *b, json_t *o, const char *k, json_t *v);
/* a += v; the same. Returns @a. */
json_t *ra_japp(struct ra_jb *b, json_t *a, json_t *v);
/*
 * Dump @o and a newline (pretty: indented), ASCII only (\uXXXX: no control or
 * bidi character reaches a terminal); -ENOMEM if the builder failed, -EIO. Drops @o.
 */
int ra_jdump(struct ra_jb *b, json_t *o, FILE *out, bool pretty);

struct rootasm_ctx;
/*
 * Every kernel feature's answer in @ctx, as `rootasm probe --json` and the
 * daemon's probe reply give them: [{feature, state, present, description,
 * detail}]; NULL when out of memory.
 */
json_t *ra_features_json(struct rootasm_ctx *ctx);
/* rootasm_probe_feature()'s answer as a word: "present", "not-permitted" or "absent". */
const char *ra_feature_state(int answer);

struct rootasm_error;
/*
 * The error as JSON (error.c): @e as the object rootasm_error_print_json()
 * writes under "error" and the daemon's replies carry (NULL when out of memory).
 */
json_t *ra_error_json(const struct rootasm_error *e);
/* The reverse, for a reply's "error": fills @e (message is recomputed from the fields). */
void ra_error_from_json(json_t *j, struct rootasm_error *e);

#endif
