/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Libraries rootasm loads with dlopen() when a command first needs them, not
 * at every process start: libyaml (the first layout parse), libarchive and
 * libcrypto (an import), libcurl (a docker:// import).
 */
#ifndef RA_DL_H
#define RA_DL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "rootasm.h"

struct ra_dl {
	const char *soname;	/* "libyaml-0.so.2" */
	const char *op;		/* "load libyaml": the error's operation */
	const char *needs;	/* "layouts need the libyaml-0-2 package" */
	const char *const *names; /* the functions, in the table's order */
	size_t n;
	void *table;		/* n function pointers, one after the other */
	int (*init)(void);	/* after the symbols, once they all resolved: 0, or < 0 */
	pthread_mutex_t lock;
	bool ok;
};

#define RA_DL_PTR(f) __typeof__(&f) f;
#define RA_DL_NAME(f) #f,

/*
 * @name##_dl, the loader of @tbl (a struct of function pointers, one per
 * entry of the array @nms, in its order), with @initfn (NULL: none) run once they resolved.
 */
#define RA_DL_LOADER(name, tbl, nms, so, what, need, initfn)					\
	_Static_assert(sizeof(tbl) == sizeof(nms), #tbl ": a pointer per name");			\
	static struct ra_dl name##_dl = { .soname = so, .op = what, .needs = need, .names = nms,	\
					  .n = sizeof(nms) / sizeof((nms)[0]), .table = &(tbl),		\
					  .init = initfn, .lock = PTHREAD_MUTEX_INITIALIZER }

/*
 * A static table @name of typed pointers to the functions the X-macro @FUNCS
 * lists, and @name##_dl, its loader: ra_dl_load(&name##_dl, e), then call
 * name.f(). Define each f as name.f after it, so calls read as the library's.
 */
#define RA_DL_TABLE(name, FUNCS, so, what, need)							\
	static struct { FUNCS(RA_DL_PTR) } name;							\
	static const char *const name##_names[] = { FUNCS(RA_DL_NAME) };				\
	RA_DL_LOADER(name, name, name##_names, so, what, need, NULL)

/* The functions yaml.c takes from libyaml, in its table's order (the static rootasm-runtime links them in). */
#define RA_YAML_FUNCS(X)											\
	X(yaml_parser_initialize) X(yaml_parser_set_input_string) X(yaml_parser_parse) X(yaml_event_delete)	\
	X(yaml_parser_delete)

/*
 * The functions digest.c takes from libcrypto, in its table's order (the
 * static rootasm-runtime serves them from a SHA-256 of its own: static.c).
 */
#define RA_CRYPTO_FUNCS(X)											\
	X(EVP_MD_CTX_new) X(EVP_MD_CTX_free) X(EVP_DigestInit_ex) X(EVP_DigestUpdate) X(EVP_DigestFinal_ex) X(EVP_sha256)

/*
 * Load @d once: 0 when every symbol resolved (and init, if any, succeeded).
 * A failure is not kept (the next call tries again: a dlopen() that ran out
 * of memory may work next time): out of memory is reported as such (-ENOMEM),
 * anything else as -ELIBACC naming the library and the package it needs. @e
 * may be NULL.
 */
int ra_dl_load(struct ra_dl *d, struct rootasm_error *e);

/*
 * The rootasm command only (jansson-lazy.c, linked into its executable): load
 * libjansson, which its json_ functions otherwise load on first use.
 */
struct rootasm_error;
int ra_jansson_load(struct rootasm_error *e);

#endif
