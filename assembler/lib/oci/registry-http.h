/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Shared by registry.c (requests, the image, layers streamed) and
 * registry-auth.c (credentials, tokens): libcurl as loaded (dlopen), one
 * registry's state and one response.
 */
#ifndef ROOTASM_OCI_REGISTRY_HTTP_H
#define ROOTASM_OCI_REGISTRY_HTTP_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>

#include "registry.h"

/*
 * libcurl, loaded when a docker:// reference is first opened: linked in,
 * it (with its TLS, HTTP/2, SSH, LDAP and IDN libraries) would cost every
 * rootasm process its start, as libarchive would (unpack.c). Its calls
 * below go through ra_cu.
 */
#define RA_CURL_FUNCS(X) \
	X(curl_global_init) X(curl_easy_init) X(curl_easy_setopt) X(curl_easy_perform) X(curl_easy_getinfo) \
	X(curl_easy_cleanup) X(curl_easy_reset) X(curl_easy_strerror) X(curl_slist_append) X(curl_slist_free_all)

struct ra_curl {
#define X(f) __typeof__(&f) p_##f;
	RA_CURL_FUNCS(X)
#undef X
};
extern struct ra_curl ra_cu;	/* registry.c */
#define curl_easy_init ra_cu.p_curl_easy_init
#undef curl_easy_setopt
#undef curl_easy_getinfo
#define curl_easy_setopt ra_cu.p_curl_easy_setopt
#define curl_easy_perform ra_cu.p_curl_easy_perform
#define curl_easy_getinfo ra_cu.p_curl_easy_getinfo
#define curl_easy_cleanup ra_cu.p_curl_easy_cleanup
#define curl_easy_reset ra_cu.p_curl_easy_reset
#define curl_easy_strerror ra_cu.p_curl_easy_strerror
#define curl_slist_append ra_cu.p_curl_slist_append
#define curl_slist_free_all ra_cu.p_curl_slist_free_all

#define MT_ACCEPT	"Accept: application/vnd.oci.image.index.v1+json, " \
			"application/vnd.oci.image.manifest.v1+json, " \
			"application/vnd.docker.distribution.manifest.list.v2+json, " \
			"application/vnd.docker.distribution.manifest.v2+json"
#define ERRBODY_MAX	4096		/* what an error response's body is read for its message */
#define TRIES		4		/* a layer's download: tries in a row that get less than TRY_PROGRESS further */
#define AHEAD_BUF	(16 << 20)	/* what a layer fetched ahead may hold before it is read */
#define MAX_REDIRS	8
/*
 * A registry's patience (ROOTASM_REGISTRY_TIMEOUT seconds, else this): the
 * whole time a document (the ping, a token, a manifest, a config) has, its
 * tries together; and the time a layer downloads (less the time it waits for
 * its reader) before it must average BLOB_FLOOR bytes a second, its tries
 * together. A layer's download is also dropped (and tried again) when it
 * gets less than BLOB_FLOOR bytes a second for LOW_SPEED_SECS (or the
 * patience, if shorter): a registry that sends all but the end at once
 * cannot drip the rest. BLOB_FLOOR is a quarter of 16 KiB/s, a link
 * RA_REGISTRY_PARALLEL downloads share; a patience above PATIENCE_SECS
 * lowers it in proportion (rg_floor(): a slow link's way). Documents:
 * 1 byte/s for LOW_SPEED_SECS, within their patience.
 */
#define PATIENCE_SECS	60
#define PATIENCE_MAX	86400
#define BLOB_FLOOR	(4 << 10)
#define LOW_SPEED_SECS	30
/* a try of a layer that got this much further does not count as a try (it was not dripped) */
#define TRY_PROGRESS	(1 << 20)

#define bad(e, op, path, ...) ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, op, path, __VA_ARGS__)

struct ra_oci_remote {
	char *ref;			/* as given, for messages */
	char *name;			/* docker://HOST/REPO: img->dir (the image's name, not a mirror's) */
	char *resolved;			/* docker://HOST/REPO:TAG|@DIGEST as pulled (ra_registry_resolved()) */
	char *resolved_why;		/* how a short name became it, or NULL */
	char *host;			/* what the URLs name: HOST[:PORT], registry-1.docker.io for docker.io */
	char *auth_host;		/* what the auth file names: HOST[:PORT] as given, docker.io */
	char *repo;
	char *reference;		/* the tag or the digest */
	bool tls_verify, http;		/* http: plain HTTP (only with tls_verify false) */
	char *basic;			/* "Authorization: Basic ..." from the auth file, or NULL */
	/* containers-certs.d(5): the roots to trust (the system's and the directory's *.crt), a client certificate */
	char *ca_blob;			/* NULL: libcurl's default roots */
	size_t ca_len;
	char *client_cert, *client_key;	/* paths, or NULL */
	pthread_mutex_t lock;		/* guards authz (the download thread renews it too) */
	char *authz;			/* "Authorization: ..." for the registry, or NULL */
	char *challenge;		/* the last WWW-Authenticate */
	/* the layers being downloaded: the one being read, and those fetched ahead */
	struct stream *streams;
	/* the handle of the thread that opened the image: its connections are kept for the next request */
	pthread_t owner;
	CURL *easy;
	rootasm_import_download_fn progress;
	void *progress_ud;
	int patience;			/* seconds: PATIENCE_SECS, or ROOTASM_REGISTRY_TIMEOUT's */
};

/* One response: its status, the headers we need, its body somewhere. */
struct xfer {
	long status;
	char *www_auth, *ctype, *digest;	/* WWW-Authenticate, Content-Type, Docker-Content-Digest */
	/* the body of a 2xx: into buf (up to max) or onto sock */
	char *buf;
	size_t len, max;
	bool too_big;
	struct stream *st;
	uint64_t from;			/* the Range asked for */
	/* a document's: when its patience ends (CLOCK_MONOTONIC ns, set by its first try), and whether it did */
	int64_t deadline;
	bool out_of_time;
	bool began;			/* the 2xx body has begun */
	/*
	 * A 401 that came from another origin than the registry's (a redirect):
	 * its scheme://host[:port] (never its path: a storage's signed URL); it
	 * is not the registry's to answer with the registry's credentials. Set
	 * for a 401 only.
	 */
	char elsewhere[256];
	/* the body of anything else: its start, for the message */
	char err[ERRBODY_MAX];
	size_t errlen;
	char curl_err[CURL_ERROR_SIZE];
};

struct stream {
	struct stream *next;		/* rem->streams */
	struct ra_oci_remote *rem;
	struct ra_oci_desc d;		/* no media_type */
	int sock;			/* the writer's end */
	int rd;				/* the reader's end, until handed out (then -EBADF) */
	int rd_given;			/* the number it had: the caller's fd */
	pthread_t thread;
	CURL *easy;			/* the download thread's: a resume reuses the connection when it can */
	bool thread_joined;
	bool stop;			/* set (atomically) when nobody will read it: the transfer is aborted */
	struct ra_sha256 h;
	uint64_t got, skip;		/* bytes sent on; of this response, bytes still to drop */
	int64_t said;			/* when the progress callback was last called (rg_now()) */
	/* the floor: when the download began, the time it waited for its reader (ns), whether it fell below */
	int64_t began, waited;
	bool too_slow;
	bool reader_gone;
	int r;				/* the download's result */
	struct rootasm_error e;
};

/* registry-auth.c: the credentials for the registry (given, or an auth file's); a token for the challenge @ch. */
struct ra_registry_how;
int rg_load_auth(struct ra_oci_remote *rem, const struct ra_registry_how *how, struct rootasm_error *e);
/* registry-certs.c: the registry's certificate directory (--cert-dir, or certs.d's), into rem->ca_blob, client_* */
int rg_load_certs(struct ra_oci_remote *rem, const struct ra_registry_how *how, struct rootasm_error *e);
/* (@deadline: the document's whose request it answers, CLOCK_MONOTONIC ns; 0: a patience of its own) */
int rg_authenticate(struct ra_oci_remote *rem, const char *ch, int64_t deadline, struct rootasm_error *e);
/* registry-http.c */
/* libcurl loaded (once): 0, or ELIBACC naming the package that brings it */
int rg_curl_load(struct rootasm_error *e);
/* BLOB_FLOOR for @rem's patience, bytes a second */
static inline long rg_floor(const struct ra_oci_remote *rem)
{
	return rem->patience > PATIENCE_SECS ? (long)BLOB_FLOOR * PATIENCE_SECS / rem->patience : (long)BLOB_FLOOR;
}
/* CLOCK_MONOTONIC in ns */
int64_t rg_now(void);
/* @s's own time at @now: since its download began, less what it waited for its reader (ns) */
static inline int64_t rg_stream_own(const struct stream *s, int64_t now)
{
	return now - s->began - s->waited;
}
/* ROOTASM_REGISTRY_TIMEOUT read into rem->patience: 0, or a usage error naming it */
int rg_patience(struct ra_oci_remote *rem, struct rootasm_error *e);
/* "https://HOST/PATH" of the remote's registry into *@ret (caller frees): 0 or -ENOMEM */
int rg_url(struct ra_oci_remote *rem, const char *path, char **ret);
/* a layer's bytes onto its stream (hashed, cut at its size): what was taken */
size_t rg_stream_write(struct stream *s, const char *p, size_t len);
void rg_xfer_free(struct xfer *x);
bool rg_ok_status(long s);
CURLcode rg_get(struct ra_oci_remote *rem, const char *url, struct curl_slist *hdrs, uint64_t from, struct xfer *x);
int rg_xfer_err(struct ra_oci_remote *rem, const char *op, const char *what, CURLcode cr, const struct xfer *x,
		struct rootasm_error *e);

#endif
