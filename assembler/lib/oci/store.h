/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The store shared by store.c (import) and oci/catalog.c (names, images,
 * rmi, gc, verify): where it is and its lock.
 *
 * STORE/lock orders what changes the store as a whole: an import holds it
 * shared while it runs (imports of each other need no lock: store.c), and
 * exclusive for the moment it names its image; rmi, gc and a name change hold
 * it exclusive. A lookup takes no lock (every file it reads is replaced whole).
 */
#ifndef ROOTASM_STORE_H
#define ROOTASM_STORE_H

#include "rootasm.h"

#define RA_STORE_DEFAULT	"/var/lib/rootasm/store"

/* @opt, else $ROOTASM_STORE, else the default. */
const char *ra_store_path(const char *opt);

/* flock(@how) on STORE/lock of the store directory @store_fd (made when missing); returns the fd, caller owns it. */
int ra_store_lock(int store_fd, int how, const char *store, struct rootasm_error *e);

/* Name the image @manifest (a "sha256:" digest) @ref (NAME[:TAG], checked), under the lock @how held exclusive. */
int ra_store_name(int store_fd, const char *store, const char *ref, const char *manifest, struct rootasm_error *e);

#endif
