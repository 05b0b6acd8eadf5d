/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An image in a registry, "docker://REGISTRY/REPO[:TAG|@DIGEST]", read with
 * the OCI distribution API through libcurl (loaded with dlopen() when a
 * docker:// reference first needs it). oci.c walks the documents as it walks
 * a layout's; this file fetches them:
 *
 *   ra_registry_open()          parse the reference, ping /v2/, authenticate,
 *                               fetch the manifest (or index) by tag or digest,
 *                               for ra_oci_open_registry() (oci.c) to walk
 *   ra_registry_get()           a document by digest (a nested manifest, the
 *                               config): capped, size and sha256 checked
 *   ra_registry_blob_stream()   a layer: a socket the caller reads while a
 *                               thread downloads into it (hashing as the bytes
 *                               arrive, resuming with Range after a drop)
 *   ra_registry_prefetch()      the next layers' downloads, started while the
 *                               one before is converted (bounded read-ahead)
 *   ra_registry_stream_done()   joins that thread; its error wins
 */
#ifndef ROOTASM_OCI_REGISTRY_H
#define ROOTASM_OCI_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "oci.h"

#define RA_REGISTRY_PREFIX	"docker://"
#define RA_REGISTRY_TOKEN_MAX	(1u << 20)	/* a token endpoint's answer */
#define RA_REGISTRY_PARALLEL	4		/* downloads at once: the layer read and those fetched ahead */

struct ra_oci_remote;

static inline bool ra_registry_is_ref(const char *ref)
{
	return ref && !strncmp(ref, RA_REGISTRY_PREFIX, strlen(RA_REGISTRY_PREFIX));
}

/* A manifest (or index) as the registry gave it, checked against the reference and Docker-Content-Digest. */
struct ra_registry_manifest {
	char *buf;			/* its bytes (NUL-terminated) */
	size_t len;
	char *mt;			/* the media type the registry said; NULL: none */
	char digest[RA_DIGEST_MAX];	/* its sha256 */
	const char *name;		/* the image's name, the remote's (valid while it is) */
};

/*
 * Open "docker://..." (@tls_verify false: no certificate check, plain HTTP
 * allowed): the remote in *@ret (caller frees it, or hands it to
 * ra_oci_open_remote()) and its manifest in @m (ra_registry_manifest_free()).
 */
/* How a registry is reached: rootasm_import_opts' TLS flag and credentials. */
struct ra_registry_how {
	bool tls_verify;
	const char *authfile;	/* NULL: $REGISTRY_AUTH_FILE, else containers-auth.json(5)'s files in order */
	const char *creds;	/* "USER:PASSWORD", or NULL: from the auth files */
	const char *cert_dir;	/* NULL: containers-certs.d(5)'s directory for the registry, if there is one */
};

int ra_registry_open(const char *ref, const struct ra_registry_how *how, struct ra_oci_remote **ret,
		     struct ra_registry_manifest *m, struct rootasm_error *e);
/* "docker://[HOST/]REPO[:TAG|@DIGEST]" parsed, nothing opened: 0, or a usage error. */
int ra_registry_check_ref(const char *ref, struct rootasm_error *e);
/*
 * The reference @rem pulls, "docker://HOST/REPO:TAG" or "...@sha256:HEX",
 * after short-name resolution (registries.conf's aliases and search
 * registries; docker.io without them), and how it came to be (NULL: as
 * given; "an alias in FILE", "unqualified-search-registries in FILE",
 * "docker.io (no unqualified-search-registries)"). Valid while @rem is.
 */
const char *ra_registry_resolved(const struct ra_oci_remote *rem, const char **why);

/* A registry image's blobs: downloads (oci.h's reader). */
extern const struct ra_oci_reader ra_registry_reader;

/* ------------------------------------------------------ registries.conf(5) */

#define RA_REGCONF_SYSTEM	"/etc/containers/registries.conf"

enum ra_short_mode { RA_SHORT_ENFORCING, RA_SHORT_PERMISSIVE, RA_SHORT_DISABLED };

struct ra_regconf_mirror {
	char *location;
	bool insecure;
	char only;			/* 0: any reference; '@': by digest only; ':': by tag only */
};

struct ra_regconf_registry {
	char *prefix, *location;	/* either may be NULL (then the other is both) */
	bool insecure, blocked, mirror_by_digest_only;
	struct ra_regconf_mirror *mirrors;
	size_t nmirrors;
};

struct ra_regconf_alias {
	char *name, *value, *file;
};

struct ra_regconf {
	char **search;			/* unqualified-search-registries */
	size_t nsearch;
	bool search_set;
	char *search_file, *mode_file;	/* which file set them */
	enum ra_short_mode mode;
	struct ra_regconf_alias *aliases;
	size_t naliases;
	struct ra_regconf_registry *regs;
	size_t nregs;
};

/* registries.conf and its drop-ins as podman reads them (registries-conf.c); ra_regconf_free() it. */
int ra_regconf_load(struct ra_regconf *c, struct rootasm_error *e);
void ra_regconf_free(struct ra_regconf *c);
/* The [[registry]] whose prefix is the longest matching @name (HOST[/PATH], no tag), or NULL. */
const struct ra_regconf_registry *ra_regconf_find(const struct ra_regconf *c, const char *name);
/* The alias of the short name @name (no tag), or NULL. */
const struct ra_regconf_alias *ra_regconf_alias(const struct ra_regconf *c, const char *name);
void ra_registry_manifest_free(struct ra_registry_manifest *m);
/*
 * rootasm_registry_login(): @registry's /v2/ answered with @how->creds (a
 * 401's challenge answered, Basic or a token for no scope, then /v2/ again);
 * *ret_auth (may be NULL): the base64 of the credentials, as an auth file keeps them.
 */
int ra_registry_login(const char *registry, const struct ra_registry_how *how, char **ret_auth,
		      struct rootasm_error *e);
void ra_registry_free(struct ra_oci_remote *rem);

/* Report each layer's download to @fn (rootasm_import_download_fn, from the download threads). */
void ra_registry_progress(struct ra_oci_remote *rem, rootasm_import_download_fn fn, void *userdata);

/* The blob @d into *@ret (malloc'd, *@len bytes): at most @max, size and digest checked. */
int ra_registry_get(struct ra_oci_remote *rem, const struct ra_oci_desc *d, size_t max, char **ret, size_t *len,
		    struct rootasm_error *e);

/* Stream the blob @d (started ahead or now): returns the fd to read it from (caller owns it). */
int ra_registry_blob_stream(struct ra_oci_remote *rem, const struct ra_oci_desc *d, struct rootasm_error *e);

/*
 * Start downloading the blob @d ahead, if fewer than RA_REGISTRY_PARALLEL
 * downloads run: ra_registry_blob_stream() of it later reads what arrived
 * meanwhile (held in memory, at most 16 MiB, the download waiting beyond).
 * Downloads never read are stopped by ra_registry_free().
 */
int ra_registry_prefetch(struct ra_oci_remote *rem, const struct ra_oci_desc *d, struct rootasm_error *e);

/*
 * After the reader of @fd is done (@r its result): stops and joins the
 * download. Returns @r, or the download's error (in @e) when it failed.
 */
int ra_registry_stream_done(struct ra_oci_remote *rem, int fd, int r, struct rootasm_error *e);

#endif
