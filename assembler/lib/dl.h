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

struct ra_dl_sym {
	const char *name;
	size_t off;	/* of its pointer in the table */
};

/* { "f", offsetof(table's type, f) }, for an X-macro list of function names */
#define RA_DL_SYM(table, f) { #f, offsetof(__typeof__(table), f) },

struct ra_dl {
	const char *soname;	/* "libyaml-0.so.2" */
	const char *op;		/* "load libyaml": the error's operation */
	const char *needs;	/* "layouts need the libyaml-0-2 package" */
	const struct ra_dl_sym *syms;
	size_t n_syms;
	void *table;		/* where the pointers go */
	int (*init)(void);	/* after the symbols, once they all resolved: 0, or < 0 */
	pthread_mutex_t lock;
	bool ok;
};

/*
 * Load @d once: 0 when every symbol resolved (and init, if any, succeeded).
 * A failure is not kept (the next call tries again: a dlopen() that ran out
 * of memory may work next time): out of memory is reported as such (-ENOMEM),
 * anything else as -ELIBACC naming the library and the package it needs. @e
 * may be NULL.
 */
int ra_dl_load(struct ra_dl *d, struct rootasm_error *e);

#endif
