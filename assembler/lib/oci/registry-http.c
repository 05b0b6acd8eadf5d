// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The HTTP under the registry client (registry.c, registry-auth.c): libcurl,
 * loaded once with dlopen(); one GET (rg_get()) into a capped buffer or onto
 * a layer's stream, its headers and the words of its error.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <jansson.h>

#include "dl.h"
#include "registry-http.h"
#include "util.h"

struct ra_curl ra_cu;

static const char *const cu_names[] = { RA_CURL_FUNCS(RA_DL_NAME) };

/* once the symbols resolved, before any transfer: curl_global_init() is not thread-safe (ra_dl's lock) */
static int cu_init(void)
{
	return ra_cu.p_curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -ENOMEM;
}

RA_DL_LOADER(cu, ra_cu, cu_names, "libcurl.so.4", "load libcurl", "a docker:// import needs the libcurl4 package",
	     cu_init);

int rg_curl_load(struct rootasm_error *e)
{
	return ra_dl_load(&cu_dl, e);
}

int64_t rg_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int rg_patience(struct ra_oci_remote *rem, struct rootasm_error *e)
{
	const char *v = secure_getenv("ROOTASM_REGISTRY_TIMEOUT");
	char *end;
	long n;

	rem->patience = PATIENCE_SECS;
	if (!v || !*v)
		return 0;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || *end || n < 1 || n > PATIENCE_MAX)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "import", "ROOTASM_REGISTRY_TIMEOUT",
				   "'%.32s' is not a number of seconds (1-%d)", v, PATIENCE_MAX);
	rem->patience = (int)n;
	return 0;
}

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
size_t rg_stream_write(struct stream *s, const char *p, size_t len)
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
	/* (the time a send waits, its reader busy with the layers before, is not the registry's: off the floor) */
	int64_t t0 = rg_now();

	if (s->rem->progress && (s->got == s->d.size || t0 - s->said >= 100000000LL)) {
		s->said = t0;
		s->rem->progress(s->rem->progress_ud, s->d.digest, s->got, s->d.size);
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
	s->waited += rg_now() - t0;
	return total;
}

/*
 * libcurl's progress callback, for a layer (at least once a second): non-zero
 * aborts the transfer nobody will read, or one of a layer that, past its
 * patience, averages less than the floor.
 */
static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
	struct stream *s = ((struct xfer *)ud)->st;
	int64_t own = rg_stream_own(s, rg_now());

	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	if (own > s->rem->patience * 1000000000LL && (double)s->got * 1e9 < (double)rg_floor(s->rem) * own) {
		s->too_slow = true;
		return 1;
	}
	return __atomic_load_n(&s->stop, __ATOMIC_RELAXED);
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
		return rg_stream_write(x->st, p, len);
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

int rg_url(struct ra_oci_remote *rem, const char *path, char **ret)
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
	CURL *c;
	char range[48];
	long left_ms = 0;
	CURLcode r;

	if (!x->st) {
		/* a document: what is left of its patience, its tries together */
		int64_t now = rg_now();

		if (!x->deadline)
			x->deadline = now + rem->patience * 1000000000LL;
		if (now >= x->deadline) {
			x->out_of_time = true;
			return CURLE_OPERATION_TIMEDOUT;
		}
		left_ms = (long)((x->deadline - now + 999999) / 1000000);
	}
	c = slot && *slot ? *slot : curl_easy_init();
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
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, x->st ? rg_floor(rem) : 1L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, (long)(x->st && rem->patience < LOW_SPEED_SECS ? rem->patience :
							   LOW_SPEED_SECS));
	curl_easy_setopt(c, CURLOPT_USERAGENT, "rootasm/" ROOTASM_VERSION_STRING);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, x->curl_err);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, x);
	if (rem->ca_blob) {
		struct curl_blob b = { .data = rem->ca_blob, .len = rem->ca_len, .flags = CURL_BLOB_COPY };

		curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &b);
	}
	if (rem->client_cert) {
		curl_easy_setopt(c, CURLOPT_SSLCERT, rem->client_cert);
		curl_easy_setopt(c, CURLOPT_SSLKEY, rem->client_key);
	}
	if (!rem->tls_verify) {
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (!x->st) {
		curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, left_ms);
	} else {
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
	if (r == CURLE_OPERATION_TIMEDOUT && !x->st && rg_now() >= x->deadline)
		x->out_of_time = true;
	x->elsewhere[0] = '\0';
	/* (read only with a 401: the one answer whose origin matters, so no work per blob request) */
	if (r == CURLE_OK && x->status == 401) {
		char *eff = NULL, *base = NULL;

		if (curl_easy_getinfo(c, CURLINFO_EFFECTIVE_URL, &eff) == CURLE_OK && eff && rg_url(rem, "/", &base) == 0 &&
		    strncasecmp(eff, base, strlen(base))) {
			const char *h = strstr(eff, "://");
			size_t n = h ? (size_t)(h + 3 - eff) + strcspn(h + 3, "/?#") : strcspn(eff, "/?#");

			snprintf(x->elsewhere, sizeof(x->elsewhere), "%.*s", (int)(n < 255 ? n : 255), eff);
		}
		free(base);
	}
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
	if (cr == CURLE_OPERATION_TIMEDOUT && x->out_of_time)
		return ra_err(e, ETIMEDOUT, -EBADF, op, rem->ref, "%s: not all of it within %d s, its tries together "
			      "(ROOTASM_REGISTRY_TIMEOUT)", what, rem->patience);
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
