/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Image sources as kinds, as volume kinds are (volume.h): one descriptor per
 * transport, in a file of its own, and one line of the table in source.c. import, inspect and the store's gc ask the table, never a
 * prefix of their own:
 *
 *   oci:DIR[:TAG]               source-oci.c       an OCI image layout (oci.c)
 *   docker-archive:FILE[:NAME]  source-archive.c   `docker save`'s tar, unpacked to a
 *                                                  layout (archive.c)
 *   docker://[HOST/]REPO[:TAG|@DIGEST]
 *                               source-registry.c  the OCI distribution API (registry.c)
 *
 * A kind parses its reference (check), opens the image (open: the image,
 * walked by oci.c with the kind's blob readers: ra_oci_image's ops, and what
 * the source calls it) and removes what it made on the way (close; in the
 * store directory after a killed import: scratch_prefix, swept by the gc).
 */
#ifndef ROOTASM_OCI_SOURCE_H
#define ROOTASM_OCI_SOURCE_H

#include <stdbool.h>

#include "oci.h"
#include "registry.h"

/* One open of a source: what the caller gives, and what the kind fills. */
struct ra_source_open {
	/* in */
	const struct ra_registry_how *how;	/* a registry's TLS and credentials */
	int scratch_fd;				/* a directory a kind may unpack into (needs_scratch) */
	const char *scratch;			/* its path */
	/* out (ra_source_close() frees them) */
	struct ra_oci_image *img;
	char *name;		/* the source's name for the image, NAME[:TAG] (an archive's RepoTag, a pull's tag), or NULL */
	char *display;		/* how inspect names it (a registry's HOST/REPO); NULL: the reference */
	char *source, *source_why;	/* a short name resolved (registries.conf(5)): what and why, or NULL */
	char *unpacked;		/* what it made in scratch, removed by close */
};

struct ra_source {
	const char *prefix;		/* "oci:", "docker-archive:", "docker://" */
	const char *syntax;		/* for messages: "oci:DIR[:TAG]" */
	bool needs_scratch;		/* it unpacks: import gives it the store's directory, inspect a private one */
	const char *scratch_prefix;	/* the names it makes in scratch (a killed import's, swept by the gc) */
	/* the reference alone, before anything is opened: usage errors first */
	int (*check)(const char *ref, struct rootasm_error *e);
	int (*open)(const char *ref, struct ra_source_open *so, struct rootasm_error *e);
	/* remove what it made in the scratch directory @fd (by its name there) */
	void (*remove)(int fd, const char *name);
};

extern const struct ra_source ra_source_oci, ra_source_archive, ra_source_registry;

/* How a registry is reached, as import's (and inspect's) options say: TLS, credentials, certificates. */
struct ra_registry_how ra_source_how(const struct rootasm_import_opts *o);

/* The kind of @ref by its prefix; NULL: none (a name or digest of the store). */
const struct ra_source *ra_source_of(const char *ref);
/* "oci:DIR[:TAG], docker-archive:FILE[:NAME] or docker://..." for messages, from the table. */
const char *ra_source_syntaxes(void);
/*
 * A reference of a transport rootasm does not read (oci-archive:, dir:,
 * containers-storage:...) or a registry's without docker://: a usage error
 * for @op saying what to do instead; else 0.
 */
int ra_source_foreign(const char *ref, const char *op, struct rootasm_error *e);
/* Every kind's leftovers named @name in the store directory @fd removed (the gc, under the exclusive lock). */
void ra_source_sweep(int fd, const char *name);
/* The image closed, what the kind made removed, the names freed; @so zeroed. */
void ra_source_close(const struct ra_source *k, struct ra_source_open *so);

#endif
