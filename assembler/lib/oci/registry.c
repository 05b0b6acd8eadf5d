// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Pulling from a registry (registry.h), the OCI distribution API:
 *
 *   GET /v2/                                the ping: 200, or 401 with the
 *                                           WWW-Authenticate challenge
 *   GET REALM?service=S&scope=repository:REPO:pull
 *                                           a bearer token (anonymous, or with
 *                                           Basic credentials from the auth file)
 *   GET /v2/REPO/manifests/TAG|DIGEST       Accept: OCI index/manifest, Docker
 *                                           list/schema 2; at most 4 MiB
 *   GET /v2/REPO/blobs/DIGEST               config (capped) and layers (streamed,
 *                                           resumed with Range: bytes=N-)
 *
 * Every document is checked against its digest before oci.c parses it; a
 * layer is hashed as its bytes arrive and cut at its descriptor's size.
 * Redirects (a blob store) are followed, at most 8, over http(s) only, and
 * the Authorization header is not sent to another host (libcurl's rule).
 *
 * A layer goes download thread --send()--> socketpair --read()--> unpack.c:
 * no temporary file, and the reader needs no change (it reads an fd). A
 * socket rather than a pipe: send(MSG_NOSIGNAL) fails with EPIPE instead of
 * raising SIGPIPE when the reader gave up, and shutdown() of the reader's end
 * wakes a blocked writer.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <dlfcn.h>
#include <jansson.h>

#include "open.h"
#include "registry-http.h"
#include "util.h"

struct ra_curl ra_cu;

static char cu_error[256];
static pthread_once_t cu_once = PTHREAD_ONCE_INIT;

static void cu_load(void)
{
	void *h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		snprintf(cu_error, sizeof(cu_error), "%s", dlerror());
		return;
	}
#define X(f) if (!(*(void **)&ra_cu.p_##f = dlsym(h, #f))) { snprintf(cu_error, sizeof(cu_error), "%s", dlerror()); return; }
	RA_CURL_FUNCS(X)
#undef X
	/* once, before any thread: curl_global_init() is not thread-safe */
	if (ra_cu.p_curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		snprintf(cu_error, sizeof(cu_error), "curl_global_init failed");
}

static int cu_load_once(struct rootasm_error *e)
{
	pthread_once(&cu_once, cu_load);
	if (cu_error[0])
		return ra_err(e, ELIBACC, -EBADF, "load libcurl", "libcurl.so.4", "%s (a docker:// import needs the "
			      "libcurl4 package)", cu_error);
	return 0;
}

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
	struct timespec said;		/* when the progress callback was last called */
	bool reader_gone;
	int r;				/* the download's result */
	struct rootasm_error e;
};

static void xfer_reset(struct xfer *x)
{
	free(x->www_auth);
	free(x->ctype);
	free(x->digest);
	x->www_auth = x->ctype = x->digest = NULL;
	x->status = 0;
	x->began = false;
	x->errlen = 0;
	x->err[0] = '\0';
}

void rg_xfer_free(struct xfer *x)
{
	xfer_reset(x);
	free(x->buf);
	x->buf = NULL;
}

bool rg_ok_status(long s)
{
	return s >= 200 && s < 300;
}

/* A header line: the status line resets (a redirect, a 100), then the headers we keep. */
static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
	struct xfer *x = ud;
	size_t len = size * n, k;
	static const struct {
		const char *name;
		size_t off;
	} keep[] = {
		{ "www-authenticate:", offsetof(struct xfer, www_auth) },
		{ "content-type:", offsetof(struct xfer, ctype) },
		{ "docker-content-digest:", offsetof(struct xfer, digest) },
	};

	if (len >= 5 && !strncmp(p, "HTTP/", 5)) {
		const char *sp = memchr(p, ' ', len);

		xfer_reset(x);
		x->status = sp ? strtol(sp + 1, NULL, 10) : 0;
		return len;
	}
	for (size_t i = 0; i < ARRAY_SIZE(keep); i++) {
		char **field = (char **)((char *)x + keep[i].off);

		k = strlen(keep[i].name);
		if (len <= k || strncasecmp(p, keep[i].name, k))
			continue;
		p += k;
		len -= k;
		while (len && (*p == ' ' || *p == '\t'))
			p++, len--;
		while (len && (p[len - 1] == '\r' || p[len - 1] == '\n' || p[len - 1] == ' '))
			len--;
		free(*field);
		*field = strndup(p, len);
		if (!*field)
			return 0;
		break;
	}
	return size * n;
}

/* A layer's bytes: hashed, cut at the descriptor's size, sent to the reader. */
static size_t stream_write(struct stream *s, const char *p, size_t len)
{
	size_t total = len;

	if (s->skip) {
		size_t k = len < s->skip ? len : s->skip;

		s->skip -= k;
		p += k;
		len -= k;
	}
	if (len > s->d.size - s->got) {
		ra_err_kind(&s->e, ROOTASM_ERROR_USAGE, EINVAL, "pull blob", s->rem->ref,
			    "%s: the registry sends more than its descriptor's %llu bytes", s->d.digest,
			    (unsigned long long)s->d.size);
		s->r = -EINVAL;
		return 0;
	}
	ra_sha256_update(&s->h, p, len);
	s->got += len;
	if (s->rem->progress) {
		struct timespec now;

		clock_gettime(CLOCK_MONOTONIC, &now);
		if (s->got == s->d.size || (now.tv_sec - s->said.tv_sec) * 1000000000LL + now.tv_nsec -
		    s->said.tv_nsec >= 100000000LL) {
			s->said = now;
			s->rem->progress(s->rem->progress_ud, s->d.digest, s->got, s->d.size);
		}
	}
	while (len) {
		ssize_t w = send(s->sock, p, len, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			s->reader_gone = true;
			return 0;
		}
		p += w;
		len -= w;
	}
	return total;
}

/* libcurl's progress callback, for a layer: non-zero aborts the transfer nobody will read. */
static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
	struct xfer *x = ud;

	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	return __atomic_load_n(&x->st->stop, __ATOMIC_RELAXED);
}

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	struct xfer *x = ud;
	size_t len = size * n;

	if (!rg_ok_status(x->status)) {
		size_t k = len < sizeof(x->err) - 1 - x->errlen ? len : sizeof(x->err) - 1 - x->errlen;

		memcpy(x->err + x->errlen, p, k);
		x->errlen += k;
		x->err[x->errlen] = '\0';
		return len;
	}
	if (x->st) {
		/* a 200 to a Range request is the whole blob again: what was sent on already is dropped */
		if (!x->began)
			x->st->skip = x->status == 200 ? x->from : 0;
		x->began = true;
		return stream_write(x->st, p, len);
	}
	if (len > x->max - x->len) {
		x->too_big = true;
		return 0;
	}
	if (!x->buf) {
		/* grown as needed: a document is read whole, and never more than max */
		x->buf = malloc(x->max + 1);
		if (!x->buf)
			return 0;
	}
	memcpy(x->buf + x->len, p, len);
	x->len += len;
	return len;
}

static int url_of(struct ra_oci_remote *rem, const char *path, char **ret)
{
	if (asprintf(ret, "%s://%s%s", rem->http ? "http" : "https", rem->host, path) < 0) {
		*ret = NULL;
		return -ENOMEM;
	}
	return 0;
}

/*
 * GET @url into @x with @hdrs (and Range from @from when > 0): the CURLcode.
 * Only http and https, redirects followed (at most MAX_REDIRS).
 */
CURLcode rg_get(struct ra_oci_remote *rem, const char *url, struct curl_slist *hdrs, uint64_t from, struct xfer *x)
{
	/* a handle per thread, kept (with its connections); another thread's request gets one of its own */
	CURL **slot = x->st ? &x->st->easy : pthread_equal(pthread_self(), rem->owner) ? &rem->easy : NULL;
	CURL *c = slot && *slot ? *slot : curl_easy_init();
	char range[48];
	CURLcode r;

	if (!c)
		return CURLE_OUT_OF_MEMORY;
	if (slot && *slot)
		curl_easy_reset(c);
	x->curl_err[0] = '\0';
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(c, CURLOPT_MAXREDIRS, (long)MAX_REDIRS);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 30L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, (long)LOW_SPEED_SECS);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "rootasm/" ROOTASM_VERSION_STRING);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, x->curl_err);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, x);
	if (!rem->tls_verify) {
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (x->st) {
		curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
		curl_easy_setopt(c, CURLOPT_XFERINFODATA, x);
		curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	}
	x->from = from;
	if (from) {
		snprintf(range, sizeof(range), "%llu-", (unsigned long long)from);
		curl_easy_setopt(c, CURLOPT_RANGE, range);
	}
	r = curl_easy_perform(c);
	if (slot)
		*slot = c;
	else
		curl_easy_cleanup(c);
	return r;
}

/* The registry's own words from an error body ({"errors":[{"code","message"}]}), else its start. */
static void err_words(const struct xfer *x, char *buf, size_t size)
{
	json_t *j = json_loadb(x->err, x->errlen, 0, NULL);
	const char *code = NULL, *msg = NULL;

	buf[0] = '\0';
	if (j && json_unpack(j, "{s:[{s:s, s?s}]}", "errors", "code", &code, "message", &msg) == 0)
		snprintf(buf, size, ": %s%s%s", code, msg ? " " : "", msg ? msg : "");
	json_decref(j);
}

/* An error for a transfer that failed (@cr) or a status that is not 2xx. */
int rg_xfer_err(struct ra_oci_remote *rem, const char *op, const char *what, CURLcode cr, const struct xfer *x,
		struct rootasm_error *e)
{
	char words[512];

	if (cr == CURLE_TOO_MANY_REDIRECTS)
		return bad(e, op, rem->ref, "%s: more than %d redirects (a redirect loop?)", what, MAX_REDIRS);
	if (cr == CURLE_WRITE_ERROR && x->too_big)
		return bad(e, op, rem->ref, "%s: larger than %zu bytes, the most rootasm reads", what, x->max);
	if (cr == CURLE_OUT_OF_MEMORY)
		return ra_oom(e, op);
	if (cr != CURLE_OK)
		return ra_err(e, cr == CURLE_OPERATION_TIMEDOUT ? ETIMEDOUT : EIO, -EBADF, op, rem->ref, "%s: %s%s",
			      what, x->curl_err[0] ? x->curl_err : curl_easy_strerror(cr),
			      rem->tls_verify && (cr == CURLE_SSL_CONNECT_ERROR || cr == CURLE_PEER_FAILED_VERIFICATION) ?
			      " (a registry without TLS or with a certificate of its own: --tls-verify=false)" : "");
	err_words(x, words, sizeof(words));
	if (x->status == 401 || x->status == 403)
		return ra_err_kind(e, ROOTASM_ERROR_PERMISSION, EACCES, op, rem->ref, "%s: HTTP %ld%s%s", what,
				   x->status, words, rem->basic ? "" : " (no credentials for this registry in the "
				   "auth file)");
	if (x->status == 404)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, ENOENT, op, rem->ref, "%s: not found (HTTP 404)%s", what,
				   words);
	if (x->status == 429 || x->status >= 500)
		return ra_err(e, EAGAIN, -EBADF, op, rem->ref, "%s: HTTP %ld%s", what, x->status, words);
	return bad(e, op, rem->ref, "%s: HTTP %ld%s", what, x->status, words);
}

static int request(struct ra_oci_remote *rem, const char *path, const char *accept, uint64_t from, const char *op,
		   const char *what, struct xfer *x, struct rootasm_error *e)
{
	_cleanup_free_ char *url = NULL;

	if (url_of(rem, path, &url) < 0)
		return ra_oom(e, op);
	for (int tries = 0;; tries++) {
		struct curl_slist *hdrs = NULL;
		CURLcode cr;
		int r;

		pthread_mutex_lock(&rem->lock);
		if (rem->authz)
			hdrs = curl_slist_append(hdrs, rem->authz);
		pthread_mutex_unlock(&rem->lock);
		if (accept)
			hdrs = curl_slist_append(hdrs, accept);
		cr = rg_get(rem, url, hdrs, from, x);
		curl_slist_free_all(hdrs);
		/* a 401 (an expired token, say) is answered once; its body was never sent on */
		if (cr == CURLE_OK && x->status == 401 && tries == 0) {
			_cleanup_free_ char *ch = TAKE_PTR(x->www_auth);

			r = rg_authenticate(rem, ch, e);
			if (r < 0)
				return r;
			continue;
		}
		if (cr != CURLE_OK || !rg_ok_status(x->status))
			return rg_xfer_err(rem, op, what, cr, x, e);
		return 0;
	}
}

/*
 * A document (a manifest, a config): request(), made again from its start
 * after a dropped connection, a timeout, a 5xx or 429 (TRIES in all).
 */
static int request_doc(struct ra_oci_remote *rem, const char *path, const char *accept, const char *op,
		       const char *what, struct xfer *x, struct rootasm_error *e)
{
	for (int tries = 1;; tries++) {
		int r = request(rem, path, accept, 0, op, what, x, e);
		struct timespec ts = { 0, 200000000L << (tries - 1) };

		if (r == 0 || x->too_big || tries >= TRIES || (r != -EIO && r != -ETIMEDOUT && r != -EAGAIN))
			return r;
		x->len = 0;
		nanosleep(&ts, NULL);
	}
}

/* ---------------------------------------------------------- the reference */

/*
 * docker://[HOST/]REPO[:TAG|@sha256:HEX], as skopeo and podman read it: the
 * first component is a host if it has a '.' or a ':' or is "localhost"; else
 * the image is Docker Hub's (docker.io, library/ for a one-component REPO).
 * No tag and no digest: "latest".
 */
static int parse_ref(struct ra_oci_remote *rem, const char *ref, struct rootasm_error *e)
{
	const char *s = ref + strlen(RA_REGISTRY_PREFIX), *slash = strchr(s, '/'), *at, *colon, *last;
	_cleanup_free_ char *repo = NULL;
	size_t hl = slash ? (size_t)(slash - s) : 0;
	bool host = slash && (memchr(s, '.', hl) || memchr(s, ':', hl) || (hl == 9 && !strncmp(s, "localhost", 9)));

	if (host) {
		rem->auth_host = strndup(s, hl);
		s = slash + 1;
	} else {
		rem->auth_host = strdup("docker.io");
	}
	if (!rem->auth_host)
		return ra_oom(e, "import");
	rem->host = strdup(strcmp(rem->auth_host, "docker.io") ? rem->auth_host : "registry-1.docker.io");
	at = strchr(s, '@');
	last = strrchr(s, '/');
	colon = strchr(last ? last : s, ':');
	if (at) {
		char hex[RA_DIGEST_HEX + 1];

		if (ra_digest_parse(at + 1, hex) < 0)
			return bad(e, "import", ref, "'%s' after '@' is not a sha256 digest", at + 1);
		repo = strndup(s, at - s);
		rem->reference = strdup(at + 1);
	} else {
		repo = colon ? strndup(s, colon - s) : strdup(s);
		rem->reference = strdup(colon ? colon + 1 : "latest");
	}
	if (!repo || !rem->reference || !rem->host)
		return ra_oom(e, "import");
	if (!*repo || !*rem->reference)
		return bad(e, "import", ref, "name it docker://REGISTRY/REPO[:TAG|@DIGEST]");
	/* the distribution spec's repository names: [a-z0-9] components separated by [._-] or '/' */
	if (strspn(repo, "abcdefghijklmnopqrstuvwxyz0123456789._-/") != strlen(repo) || repo[0] == '/' ||
	    strstr(repo, "//") || repo[strlen(repo) - 1] == '/' || strlen(repo) > 255)
		return bad(e, "import", ref, "'%s' is not a repository name (lowercase letters, digits, '.', '_', "
			   "'-', '/')", repo);
	if (!at && strspn(rem->reference, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") !=
	    strlen(rem->reference))
		return bad(e, "import", ref, "'%s' is not a tag", rem->reference);
	if (!host && !strchr(repo, '/') && asprintf(&rem->repo, "library/%s", repo) < 0)
		rem->repo = NULL;
	else if (host || strchr(repo, '/'))
		rem->repo = TAKE_PTR(repo);
	if (!rem->repo || asprintf(&rem->name, "docker://%s/%s", rem->auth_host, rem->repo) < 0) {
		rem->name = NULL;
		return ra_oom(e, "import");
	}
	return 0;
}

static void stream_end(struct ra_oci_remote *rem, struct stream *s);

void ra_registry_progress(struct ra_oci_remote *rem, rootasm_import_download_fn fn, void *userdata)
{
	rem->progress = fn;
	rem->progress_ud = userdata;
}

void ra_registry_free(struct ra_oci_remote *rem)
{
	if (!rem)
		return;
	while (rem->streams)
		stream_end(rem, rem->streams);
	if (rem->easy)
		curl_easy_cleanup(rem->easy);
	free(rem->ref);
	free(rem->name);
	free(rem->host);
	free(rem->auth_host);
	free(rem->repo);
	free(rem->reference);
	free(rem->basic);
	free(rem->authz);
	free(rem->challenge);
	pthread_mutex_destroy(&rem->lock);
	free(rem);
}

/*
 * The ping, GET /v2/: https first; with --tls-verify=false, plain HTTP when
 * https cannot be spoken (as skopeo does). A 401 answers it too: its
 * challenge is answered before the first real request.
 */
static int ping(struct ra_oci_remote *rem, struct rootasm_error *e)
{
	struct xfer x = { .max = ERRBODY_MAX };
	_cleanup_free_ char *url = NULL;
	CURLcode cr;
	int r = 0;

	for (;;) {
		free(url);
		if (url_of(rem, "/v2/", &url) < 0)
			return ra_oom(e, "import");
		cr = rg_get(rem, url, NULL, 0, &x);
		if (cr == CURLE_OK || rem->tls_verify || rem->http ||
		    (cr != CURLE_SSL_CONNECT_ERROR && cr != CURLE_COULDNT_CONNECT && cr != CURLE_RECV_ERROR &&
		     cr != CURLE_GOT_NOTHING && cr != CURLE_PEER_FAILED_VERIFICATION))
			break;
		rem->http = true;
		rg_xfer_free(&x);
		x = (struct xfer){ .max = ERRBODY_MAX };
	}
	if (cr == CURLE_OK && x.status == 401)
		r = rg_authenticate(rem, x.www_auth, e);
	else if (cr != CURLE_OK || !rg_ok_status(x.status))
		r = rg_xfer_err(rem, "ping registry", "GET /v2/", cr, &x, e);
	rg_xfer_free(&x);
	return r;
}

static void sha256_buf(const char *buf, size_t len, char out[RA_DIGEST_MAX])
{
	struct ra_sha256 h;

	out[0] = '\0';
	if (ra_sha256_init(&h) < 0)
		return;
	ra_sha256_update(&h, buf, len);
	if (ra_sha256_final(&h, out) < 0)
		out[0] = '\0';
}

int ra_registry_open(const char *ref, bool tls_verify, struct ra_oci_image **ret, struct rootasm_error *e)
{
	struct ra_oci_remote *rem;
	struct xfer x = { .max = RA_OCI_MANIFEST_MAX };
	char path[2048], got[RA_DIGEST_MAX];
	_cleanup_free_ char *mt = NULL;
	int r;

	r = cu_load_once(e);
	if (r < 0)
		return r;
	rem = calloc(1, sizeof(*rem));
	if (!rem)
		return ra_oom(e, "import");
	pthread_mutex_init(&rem->lock, NULL);
	rem->owner = pthread_self();
	rem->tls_verify = tls_verify;
	rem->ref = strdup(ref);
	if (!rem->ref) {
		r = ra_oom(e, "import");
		goto fail;
	}
	r = parse_ref(rem, ref, e);
	if (r < 0)
		goto fail;
	r = rg_load_auth(rem, e);
	if (r < 0)
		goto fail;
	r = ping(rem, e);
	if (r < 0)
		goto fail;
	snprintf(path, sizeof(path), "/v2/%s/manifests/%s", rem->repo, rem->reference);
	r = request_doc(rem, path, MT_ACCEPT, "pull manifest", rem->reference, &x, e);
	if (r < 0)
		goto fail;
	sha256_buf(x.buf ? x.buf : "", x.len, got);
	if (!got[0]) {
		r = ra_err(e, ELIBACC, -EBADF, "sha256", "libcrypto.so.3", "import needs the libssl3 package");
		goto fail;
	}
	if (strchr(rem->reference, ':') && strcmp(got, rem->reference)) {
		r = bad(e, "verify manifest", ref, "its sha256 is %s, the reference names %s", got, rem->reference);
		goto fail;
	}
	if (x.digest && strcmp(x.digest, got)) {
		r = bad(e, "verify manifest", ref, "its sha256 is %s, the registry's Docker-Content-Digest says %.80s",
			got, x.digest);
		goto fail;
	}
	/* the media type the registry says ("type/subtype; params"); oci.c checks it against the document */
	if (x.ctype) {
		mt = strndup(x.ctype, strcspn(x.ctype, "; "));
		if (!mt) {
			r = ra_oom(e, "import");
			goto fail;
		}
	}
	r = ra_oci_open_remote(rem, rem->name, x.buf ? x.buf : "", x.len, mt, got, ret, e);
	rg_xfer_free(&x);
	return r;		/* the image owns rem now, even on failure */
fail:
	rg_xfer_free(&x);
	ra_registry_free(rem);
	return r;
}

int ra_registry_get(struct ra_oci_remote *rem, const struct ra_oci_desc *d, size_t max, char **ret, size_t *len,
		    struct rootasm_error *e)
{
	struct xfer x = { .max = d->size < max ? d->size : max };
	char path[2048], got[RA_DIGEST_MAX];
	bool doc;
	int r;

	if (d->size > max)
		return bad(e, "pull blob", rem->ref, "%s is %llu bytes by its descriptor; rootasm reads at most %zu "
			   "for a %s", d->digest, (unsigned long long)d->size, max, d->media_type);
	/* a manifest (below an index) is a manifest of the registry's: /manifests/, not /blobs/ */
	doc = *d->media_type && strstr(MT_ACCEPT, d->media_type);
	snprintf(path, sizeof(path), "/v2/%s/%s/%s", rem->repo, doc ? "manifests" : "blobs", d->digest);
	r = request_doc(rem, path, doc ? MT_ACCEPT : NULL, "pull blob", d->digest, &x, e);
	if (r < 0 && x.too_big)
		r = bad(e, "pull blob", rem->ref, "%s: the registry sends more than its descriptor's %llu bytes",
			d->digest, (unsigned long long)d->size);
	if (r < 0)
		goto out;
	if (x.len != d->size) {
		r = bad(e, "verify blob", rem->ref, "%s: %zu bytes, its descriptor says %llu (truncated)", d->digest,
			x.len, (unsigned long long)d->size);
		goto out;
	}
	sha256_buf(x.buf ? x.buf : "", x.len, got);
	if (strcmp(got, d->digest)) {
		r = bad(e, "verify blob", rem->ref, "%s: its sha256 is %s", d->digest, got);
		goto out;
	}
	*ret = x.buf ? TAKE_PTR(x.buf) : strdup("");
	*len = x.len;
	r = *ret ? 0 : ra_oom(e, "pull blob");
out:
	rg_xfer_free(&x);
	return r;
}

/* ---------------------------------------------------------- a layer, streamed */

static void *stream_main(void *arg)
{
	struct stream *s = arg;
	struct ra_oci_remote *rem = s->rem;
	char path[2048];
	int tries;

	snprintf(path, sizeof(path), "/v2/%s/blobs/%s", rem->repo, s->d.digest);
	for (tries = 1;; tries++) {
		struct xfer x = { .st = s };
		uint64_t from = s->got;
		bool again;
		int r;

		r = request(rem, path, NULL, from, "pull blob", s->d.digest, &x, &s->e);
		rg_xfer_free(&x);
		if (s->r < 0)
			break;		/* more bytes than the descriptor's: stream_write() said so */
		if (s->reader_gone || __atomic_load_n(&s->stop, __ATOMIC_RELAXED)) {
			s->r = -EPIPE;
			break;
		}
		if (r == 0 && s->got == s->d.size)
			break;
		/* a short body, a dropped connection, a timeout, a 5xx or 429: again, from where it stopped */
		again = r == 0 || s->e.err == EIO || s->e.err == ETIMEDOUT || s->e.err == EAGAIN;
		/* a try that got further does not count (one fetched ahead waits for its reader: a timeout) */
		if (again && s->got > from)
			tries = 1;
		if (again && tries < TRIES) {
			struct timespec ts = { 0, 200000000L << (tries - 1) };

			nanosleep(&ts, NULL);
			continue;
		}
		/* a blob that keeps ending short is the registry's fault, as a wrong one is (exit 2) */
		if (r == 0 || (again && s->e.err == EIO)) {
			char last[256];

			snprintf(last, sizeof(last), "%s", r ? s->e.msg : "");
			r = bad(&s->e, "pull blob", rem->ref, "%s: truncated: %llu of %llu bytes after %d tries%s%s",
				s->d.digest, (unsigned long long)s->got, (unsigned long long)s->d.size, tries,
				r ? "; the last: " : "", last);
		} else if (again)
			snprintf(s->e.msg + strlen(s->e.msg), sizeof(s->e.msg) - strlen(s->e.msg),
				 " (%llu of %llu bytes, %d tries)", (unsigned long long)s->got,
				 (unsigned long long)s->d.size, tries);
		s->r = r;
		break;
	}
	if (s->r == 0) {
		char got[RA_DIGEST_MAX];

		if (ra_sha256_final(&s->h, got) < 0)
			s->r = ra_err(&s->e, EIO, -EBADF, "sha256", rem->ref, NULL);
		else if (strcmp(got, s->d.digest))
			s->r = bad(&s->e, "verify blob", rem->ref, "%s: its sha256 is %s", s->d.digest, got);
	}
	/* the reader sees the end; on an error it is cut short, and stream_done() says why */
	shutdown(s->sock, SHUT_WR);
	return NULL;
}

/* Start the download of @d into a new socket pair; the stream keeps the reader's end (s->rd). */
static int stream_start(struct ra_oci_remote *rem, const struct ra_oci_desc *d, int bufsz, struct stream **ret,
			struct rootasm_error *e)
{
	struct stream *s;
	int sv[2], r;

	s = calloc(1, sizeof(*s));
	if (!s)
		return ra_oom(e, "pull blob");
	r = ra_sha256_init(&s->h);
	if (r < 0) {
		free(s);
		return r == -ELIBACC ? ra_err(e, ELIBACC, -EBADF, "sha256", "libcrypto.so.3",
					      "import needs the libssl3 package") : ra_oom(e, "pull blob");
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		r = ra_err(e, errno, -EBADF, "socketpair", NULL, NULL);
		ra_sha256_free(&s->h);
		free(s);
		return r;
	}
	s->rd = sv[0];
	s->sock = sv[1];
	shutdown(s->rd, SHUT_WR);
	/*
	 * Room between the download and the unpacking: what a layer fetched
	 * ahead holds while the layers before it are converted. Beyond
	 * net.core.wmem_max only as root (SO_SNDBUFFORCE); in memory, never on disk.
	 */
	if (setsockopt(s->sock, SOL_SOCKET, SO_SNDBUFFORCE, &bufsz, sizeof(bufsz)) < 0)
		(void)setsockopt(s->sock, SOL_SOCKET, SO_SNDBUF, &bufsz, sizeof(bufsz));
	s->rem = rem;
	s->d = *d;
	s->d.media_type = NULL;
	r = pthread_create(&s->thread, NULL, stream_main, s);
	if (r) {
		close(s->sock);
		close(s->rd);
		ra_sha256_free(&s->h);
		free(s);
		return ra_err(e, r, -EBADF, "pull blob", rem->ref, "start the download thread");
	}
	s->next = rem->streams;
	rem->streams = s;
	*ret = s;
	return 0;
}

/* Stop (the reader's end shut: the writer gets EPIPE), join and free @s, unlinked from @rem. */
static void stream_end(struct ra_oci_remote *rem, struct stream *s)
{
	for (struct stream **p = &rem->streams; *p; p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			break;
		}
	/* one handed out was shut by stream_done(), or closed by its reader: either wakes a blocked writer */
	__atomic_store_n(&s->stop, true, __ATOMIC_RELAXED);
	if (s->rd >= 0)
		shutdown(s->rd, SHUT_RDWR);
	if (!s->thread_joined)
		pthread_join(s->thread, NULL);
	close(s->sock);
	close_fdp(&s->rd);
	if (s->easy)
		curl_easy_cleanup(s->easy);
	ra_sha256_free(&s->h);
	free(s);
}

int ra_registry_prefetch(struct ra_oci_remote *rem, const struct ra_oci_desc *d, struct rootasm_error *e)
{
	struct stream *s;
	size_t n = 0;

	for (s = rem->streams; s; s = s->next, n++)
		if (!strcmp(s->d.digest, d->digest))
			return 0;
	if (n >= RA_REGISTRY_PARALLEL)
		return 0;
	return stream_start(rem, d, AHEAD_BUF, &s, e);
}

int ra_registry_blob_stream(struct ra_oci_remote *rem, const struct ra_oci_desc *d, struct rootasm_error *e)
{
	struct stream *s;
	int r;

	for (s = rem->streams; s; s = s->next)
		if (s->rd >= 0 && !strcmp(s->d.digest, d->digest))
			break;
	if (!s) {
		r = stream_start(rem, d, 1 << 20, &s, e);
		if (r < 0)
			return r;
	}
	s->rd_given = s->rd;
	return take_fd(s->rd);
}

int ra_registry_stream_done(struct ra_oci_remote *rem, int fd, int r, struct rootasm_error *e)
{
	struct stream *s;

	for (s = rem->streams; s; s = s->next)
		if (s->rd < 0 && s->rd_given == fd)
			break;
	if (!s)
		return r;
	/* a reader that stopped early wakes the writer (EPIPE) */
	shutdown(fd, SHUT_RDWR);
	pthread_join(s->thread, NULL);
	s->thread_joined = true;
	if (s->r < 0 && s->r != -EPIPE) {
		if (e)
			*e = s->e;
		r = s->r;
	}
	stream_end(rem, s);
	return r;
}
