// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The libjansson of the rootasm command and of rootasm-runtime, loaded by the
 * first JSON call (issue 20).
 *
 * Most runs of the command never touch JSON: `assemble`, `exec` and `probe`
 * of a YAML layout without --json. Loading libjansson at every start cost
 * 0.46 ms of CPU per process on the 2026-12-05 host (`perf stat -r 300
 * -e task-clock`: an empty main() 1.88 ms, the same linked with -ljansson
 * 2.34 ms; a page fault costs 7.7 us there). So the executable is linked
 * without it, and defines the functions it and the library's objects call,
 * each of which loads libjansson.so.4 with dlopen() once (dl.c) and calls the
 * real one. The variadic ones call jansson's va_list forms, as jansson's own do.
 *
 * The list is checked by the link: a json_ function used anywhere in the
 * command (or the runtime) and missing here is an undefined symbol. Only this
 * executable and rootasm-runtime (linked the same way) use it; librootasm.so and rootasmd
 * link libjansson as usual (and the package depends on libjansson4 through
 * them).
 *
 * --json loads it before the command starts (cli/common.c: ra_jansson_load()), so
 * a libjansson that cannot be loaded is one error before anything is done.
 * Later, each function returns what it returns when memory runs out, which
 * every caller handles (a missing library is also said once).
 */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "dl.h"
#include "rootasm.h"

#define JANSSON_FUNCS(X)										\
	X(json_array) X(json_array_append_new) X(json_array_get) X(json_array_size) X(json_delete)	\
	X(json_dumpb) X(json_dumpf) X(json_dumps) X(json_equal) X(json_false) X(json_integer)		\
	X(json_integer_value) X(json_loadb) X(json_loads) X(json_null) X(json_object) X(json_object_del)		\
	X(json_object_get) X(json_object_iter) X(json_object_iter_key) X(json_object_iter_next)	\
	X(json_object_iter_value) X(json_object_key_to_iter) X(json_object_set_new)			\
	X(json_object_size) X(json_string) X(json_string_length) X(json_string_value)		\
	X(json_stringn) X(json_true) X(json_vpack_ex) X(json_vunpack_ex)

RA_DL_TABLE(jl, JANSSON_FUNCS, "libjansson.so.4", "load libjansson", "JSON needs the libjansson4 package");

/*
 * 0 once libjansson is loaded; else -1, and each function returns what it returns
 * when memory runs out (NULL, -1, 0), which every caller handles as that. A
 * library that is not there (not a lack of memory) is also said once, as one
 * plain line (as JSON it would need libjansson).
 */
static int load_failed(void)
{
	static bool said;
	struct rootasm_error e = { 0 };

	/* (once more, for the error: a load that ran out of memory may work now) */
	if (ra_dl_load(&jl_dl, &e) == 0)
		return 0;
	if (!said && e.err != ENOMEM) {
		said = true;
		fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, e.op, e.msg);
	}
	return -1;
}

/* every json_ call: no error structure (several KB) filled unless the load failed */
static int need(void)
{
	return ra_dl_load(&jl_dl, NULL) == 0 ? 0 : load_failed();
}

int ra_jansson_load(struct rootasm_error *e)
{
	return ra_dl_load(&jl_dl, e);
}

/* return the real @f(args), or @fail */
#define J(fail, f, ...)	return need() < 0 ? (fail) : jl.f(__VA_ARGS__)

json_t *json_array(void) { J(NULL, json_array); }
int json_array_append_new(json_t *a, json_t *v) { J(-1, json_array_append_new, a, v); }
json_t *json_array_get(const json_t *a, size_t i) { J(NULL, json_array_get, a, i); }
size_t json_array_size(const json_t *a) { J(0, json_array_size, a); }
void json_delete(json_t *j)
{
	if (need() == 0)
		jl.json_delete(j);
}
size_t json_dumpb(const json_t *j, char *buf, size_t size, size_t flags) { J(0, json_dumpb, j, buf, size, flags); }
int json_dumpf(const json_t *j, FILE *out, size_t flags) { J(-1, json_dumpf, j, out, flags); }
char *json_dumps(const json_t *j, size_t flags) { J(NULL, json_dumps, j, flags); }
int json_equal(const json_t *a, const json_t *b) { J(0, json_equal, a, b); }
json_t *json_false(void) { J(NULL, json_false); }
json_t *json_integer(json_int_t v) { J(NULL, json_integer, v); }
json_int_t json_integer_value(const json_t *j) { J(0, json_integer_value, j); }
json_t *json_loadb(const char *buf, size_t n, size_t flags, json_error_t *err)
{
	J(NULL, json_loadb, buf, n, flags, err);
}
json_t *json_loads(const char *s, size_t flags, json_error_t *err) { J(NULL, json_loads, s, flags, err); }
json_t *json_null(void) { J(NULL, json_null); }
json_t *json_object(void) { J(NULL, json_object); }
int json_object_del(json_t *o, const char *k) { J(-1, json_object_del, o, k); }
json_t *json_object_get(const json_t *o, const char *k) { J(NULL, json_object_get, o, k); }
void *json_object_iter(json_t *o) { J(NULL, json_object_iter, o); }
const char *json_object_iter_key(void *it) { J(NULL, json_object_iter_key, it); }
void *json_object_iter_next(json_t *o, void *it) { J(NULL, json_object_iter_next, o, it); }
json_t *json_object_iter_value(void *it) { J(NULL, json_object_iter_value, it); }
void *json_object_key_to_iter(const char *k) { J(NULL, json_object_key_to_iter, k); }
int json_object_set_new(json_t *o, const char *k, json_t *v) { J(-1, json_object_set_new, o, k, v); }
size_t json_object_size(const json_t *o) { J(0, json_object_size, o); }
json_t *json_string(const char *s) { J(NULL, json_string, s); }
size_t json_string_length(const json_t *s) { J(0, json_string_length, s); }
const char *json_string_value(const json_t *s) { J(NULL, json_string_value, s); }
json_t *json_stringn(const char *s, size_t n) { J(NULL, json_stringn, s, n); }
json_t *json_true(void) { J(NULL, json_true); }
json_t *json_vpack_ex(json_error_t *err, size_t flags, const char *fmt, va_list ap)
{
	J(NULL, json_vpack_ex, err, flags, fmt, ap);
}
int json_vunpack_ex(json_t *root, json_error_t *err, size_t flags, const char *fmt, va_list ap)
{
	J(-1, json_vunpack_ex, root, err, flags, fmt, ap);
}

json_t *json_pack(const char *fmt, ...)
{
	va_list ap;
	json_t *j;

	va_start(ap, fmt);
	j = json_vpack_ex(NULL, 0, fmt, ap);
	va_end(ap);
	return j;
}

int json_unpack(json_t *root, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = json_vunpack_ex(root, NULL, 0, fmt, ap);
	va_end(ap);
	return r;
}

int json_unpack_ex(json_t *root, json_error_t *err, size_t flags, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = json_vunpack_ex(root, err, flags, fmt, ap);
	va_end(ap);
	return r;
}
