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

/*
 * A 401 of another origin, where the registry redirected (its blob storage,
 * or a host of an attacker's): the registry's credentials (its Basic ones, to
 * the realm that challenge names) are not for it. 0, or the refusal.
 */
static int not_elsewhere(struct ra_oci_remote *rem, const char *op, const char *what, const struct xfer *x,
			 struct rootasm_error *e)
{
	if (x->status != 401 || !x->elsewhere[0])
		return 0;
	return ra_err_kind(e, ROOTASM_ERROR_PERMISSION, EACCES, op, rem->ref, "%s: HTTP 401 from %s, where the "
			   "registry redirected: its challenge is not answered (the registry's credentials go to the "
			   "registry alone)", what, x->elsewhere);
}

static int request(struct ra_oci_remote *rem, const char *path, const char *accept, uint64_t from, const char *op,
		   const char *what, struct xfer *x, struct rootasm_error *e)
{
	_cleanup_free_ char *url = NULL;

	if (rg_url(rem, path, &url) < 0)
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
		if (cr == CURLE_OK && (r = not_elsewhere(rem, op, what, x, e)) < 0)
			return r;
		/* a 401 (an expired token, say) is answered once; its body was never sent on */
		if (cr == CURLE_OK && x->status == 401 && tries == 0) {
			_cleanup_free_ char *ch = TAKE_PTR(x->www_auth);

			r = rg_authenticate(rem, ch, x->st ? 0 : x->deadline, e);
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

		if (r == 0 || x->too_big || x->out_of_time || tries >= TRIES ||
		    (r != -EIO && r != -ETIMEDOUT && r != -EAGAIN))
			return r;
		x->len = 0;
		nanosleep(&ts, NULL);
	}
}

/* ---------------------------------------------------------- the reference */

/* A reference's parts: NAME (HOST/REPO, or a short REPO), its tag or digest. */
struct ref_parts {
	char *name;
	char *reference;
	bool digest, qualified;
};

static void ref_parts_free(struct ref_parts *p)
{
	free(p->name);
	free(p->reference);
	memset(p, 0, sizeof(*p));
}

/*
 * [HOST/]REPO[:TAG|@sha256:HEX] (after "docker://"), as skopeo and podman
 * read it: the first component is a host if it has a '.' or a ':' or is
 * "localhost"; else it is a short name (registries.conf resolves it). No tag
 * and no digest: "latest". @ref names it in errors.
 */
static int split_ref(const char *s, const char *ref, struct ref_parts *p, struct rootasm_error *e)
{
	const char *slash = strchr(s, '/'), *at, *colon, *last, *repo;
	size_t hl = slash ? (size_t)(slash - s) : 0;

	memset(p, 0, sizeof(*p));
	p->qualified = ra_ref_has_host(s);
	repo = p->qualified ? slash + 1 : s;
	at = strchr(repo, '@');
	last = strrchr(repo, '/');
	colon = strchr(last ? last : repo, ':');
	if (at) {
		char hex[RA_DIGEST_HEX + 1];

		if (ra_digest_parse(at + 1, hex) < 0)
			return bad(e, "import", ref, "'%s' after '@' is not a sha256 digest", at + 1);
		p->name = strndup(s, at - s);
		p->reference = strdup(at + 1);
		p->digest = true;
	} else {
		p->name = colon ? strndup(s, colon - s) : strdup(s);
		p->reference = strdup(colon ? colon + 1 : "latest");
	}
	if (!p->name || !p->reference) {
		ref_parts_free(p);
		return ra_oom(e, "import");
	}
	repo = p->name + (p->qualified ? hl + 1 : 0);
	if (!*repo || !*p->reference || (p->qualified && hl == 0)) {
		ref_parts_free(p);
		return bad(e, "import", ref, "name it docker://REGISTRY/REPO[:TAG|@DIGEST]");
	}
	/* the distribution spec's repository names: [a-z0-9] components separated by [._-] or '/' */
	if (strspn(repo, "abcdefghijklmnopqrstuvwxyz0123456789._-/") != strlen(repo) || repo[0] == '/' ||
	    strstr(repo, "//") || repo[strlen(repo) - 1] == '/' || strlen(repo) > 255) {
		bad(e, "import", ref, "'%s' is not a repository name (lowercase letters, digits, '.', '_', '-', '/')",
		    repo);
		ref_parts_free(p);
		return -EINVAL;
	}
	if (!p->digest && strspn(p->reference, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") !=
	    strlen(p->reference)) {
		bad(e, "import", ref, "'%s' is not a tag", p->reference);
		ref_parts_free(p);
		return -EINVAL;
	}
	return 0;
}

int ra_registry_check_ref(const char *ref, struct rootasm_error *e)
{
	struct ref_parts p;
	int r = split_ref(ref + strlen(RA_REGISTRY_PREFIX), ref, &p, e);

	ref_parts_free(&p);
	return r;
}

/* HOST/REPO with Docker Hub's names: docker.io's one-component repositories are library/'s. */
static char *hub_name(const char *name)
{
	const char *repo = strchr(name, '/') + 1;
	char *r = NULL;

	if (!strncmp(name, "docker.io/", 10) && !strchr(repo, '/'))
		return asprintf(&r, "docker.io/library/%s", repo) < 0 ? NULL : r;
	return strdup(name);
}

/* What the URLs name for the registry @host: Docker Hub's API is registry-1.docker.io. */
static char *url_host(const char *host)
{
	return strdup(strcmp(host, "docker.io") ? host : "registry-1.docker.io");
}

/*
 * @rem aimed at @endpoint (HOST/REPO, qualified) for the image @logical
 * (HOST/REPO, what it is named by) and @reference: the URLs' host, the auth
 * file's, the repository, the name.
 */
static int aim(struct ra_oci_remote *rem, const char *logical, const char *endpoint, const char *reference,
	       struct rootasm_error *e)
{
	_cleanup_free_ char *ep = hub_name(endpoint), *lg = hub_name(logical);
	const char *slash;

	if (!ep || !lg)
		return ra_oom(e, "import");
	slash = strchr(ep, '/');
	rem->auth_host = strndup(ep, slash - ep);
	rem->host = rem->auth_host ? url_host(rem->auth_host) : NULL;
	rem->repo = strdup(slash + 1);
	rem->reference = strdup(reference);
	if (!rem->auth_host || !rem->host || !rem->repo || !rem->reference ||
	    asprintf(&rem->name, "docker://%s", lg) < 0) {
		rem->name = NULL;
		return ra_oom(e, "import");
	}
	return 0;
}

/* One place an image may be pulled from: its name, where, and how. */
struct source {
	char *logical;		/* HOST/REPO: the image's name */
	char *endpoint;		/* HOST/REPO: where it is asked for (a mirror's, a location's) */
	bool insecure;
};

struct plan {
	struct source *v;
	size_t n;
	struct ref_parts ref;
	char *resolved;		/* docker://HOST/REPO:TAG */
	const char *why;	/* how a short name was resolved (borrowed from conf, or static); NULL: as given */
	char why_buf[4200];
	struct ra_regconf conf;
};

static void plan_free(struct plan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->v[i].logical);
		free(p->v[i].endpoint);
	}
	free(p->v);
	free(p->resolved);
	ref_parts_free(&p->ref);
	ra_regconf_free(&p->conf);
	memset(p, 0, sizeof(*p));
}

static int add_source(struct plan *p, const char *logical, const char *host, const char *rest, bool insecure)
{
	struct source *g = realloc(p->v, (p->n + 1) * sizeof(*p->v));

	if (!g)
		return -ENOMEM;
	p->v = g;
	g = &p->v[p->n];
	g->logical = strdup(logical);
	g->insecure = insecure;
	if (asprintf(&g->endpoint, "%s%s", host, rest) < 0)
		g->endpoint = NULL;
	if (!g->logical || !g->endpoint) {
		free(g->logical);
		free(g->endpoint);
		return -ENOMEM;
	}
	p->n++;
	return 0;
}

/* The sources of the qualified name @name: its [[registry]]'s mirrors, then its location (or itself). */
static int add_sources(struct plan *p, const char *name, const char *ref, struct rootasm_error *e)
{
	const struct ra_regconf_registry *g = ra_regconf_find(&p->conf, name);
	const char *prefix = g ? (g->prefix ? g->prefix : g->location) : NULL;
	const char *rest = g && prefix[0] != '*' ? name + strlen(prefix) : "";
	const char *loc = g && g->location && *g->location ? g->location : NULL;
	char kind = p->ref.digest ? '@' : ':';

	if (g && g->blocked)
		return ra_err_kind(e, ROOTASM_ERROR_PERMISSION, EPERM, "import", ref, "%s is blocked by registries.conf "
				   "([[registry]] prefix %s)", name, prefix);
	for (size_t i = 0; g && i < g->nmirrors; i++) {
		const struct ra_regconf_mirror *m = &g->mirrors[i];

		/* a mirror serves what it may: mirror-by-digest-only, pull-from-mirror */
		if ((g->mirror_by_digest_only && !p->ref.digest) || (m->only && m->only != kind))
			continue;
		if (add_source(p, name, m->location, prefix[0] == '*' ? strchr(name, '/') : rest, m->insecure) < 0)
			return ra_oom(e, "import");
	}
	if (add_source(p, name, loc ? loc : name, loc ? rest : "", g && g->insecure) < 0)
		return ra_oom(e, "import");
	return 0;
}

/*
 * Where @ref (docker://...) is pulled from, in order: a short name resolved
 * (an alias; the search registries; docker.io without them), each name's
 * mirrors and location (registries.conf(5): registries-conf.c).
 */
static int plan_sources(struct plan *p, const char *ref, struct rootasm_error *e)
{
	const char *s = ref + strlen(RA_REGISTRY_PREFIX);
	char *qualified = NULL;
	int r;

	r = split_ref(s, ref, &p->ref, e);
	if (r == 0)
		r = ra_regconf_load(&p->conf, e);
	if (r < 0)
		return r;
	if (p->ref.qualified) {
		r = add_sources(p, p->ref.name, ref, e);
	} else if (ra_regconf_alias(&p->conf, p->ref.name)) {
		/* an alias: HOST/REPO, perhaps with a tag of its own (the reference's wins) */
		const struct ra_regconf_alias *a = ra_regconf_alias(&p->conf, p->ref.name);
		struct ref_parts ap;

		r = split_ref(a->value, ref, &ap, e);
		if (r == 0 && !ap.qualified)
			r = bad(e, "import", ref, "the alias %s = \"%s\" in %s names no registry", a->name, a->value, a->file);
		if (r == 0 && !strchr(s, ':') && !strchr(s, '@') && (ap.digest || strcmp(ap.reference, "latest"))) {
			free(p->ref.reference);
			p->ref.reference = TAKE_PTR(ap.reference);
			p->ref.digest = ap.digest;
		}
		if (r == 0) {
			snprintf(p->why_buf, sizeof(p->why_buf), "an alias in %s", a->file);
			p->why = p->why_buf;
			r = add_sources(p, ap.name, ref, e);
		}
		ref_parts_free(&ap);
	} else if (p->conf.nsearch) {
		if (p->conf.nsearch > 1 && p->conf.mode == RA_SHORT_ENFORCING)
			return bad(e, "import", ref, "the short name %s could be in any of %zu unqualified-search-registries "
				   "(%s%s%s) and short-name-mode is enforcing (nobody to ask): name the registry, add an "
				   "alias, or set short-name-mode = \"permissive\" (registries.conf(5))", p->ref.name,
				   p->conf.nsearch, p->conf.search[0], ", ", p->conf.search[1]);
		snprintf(p->why_buf, sizeof(p->why_buf), "unqualified-search-registries in %s", p->conf.search_file);
		p->why = p->why_buf;
		for (size_t i = 0; r == 0 && i < p->conf.nsearch; i++) {
			if (asprintf(&qualified, "%s/%s", p->conf.search[i], p->ref.name) < 0)
				return ra_oom(e, "import");
			r = add_sources(p, qualified, ref, e);
			free(qualified);
		}
	} else {
		/* no search list: Docker Hub, as Docker resolves a short name */
		if (asprintf(&qualified, "docker.io/%s", p->ref.name) < 0)
			return ra_oom(e, "import");
		r = add_sources(p, qualified, ref, e);
		free(qualified);
	}
	return r;
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
	free(rem->resolved);
	free(rem->resolved_why);
	free(rem->host);
	free(rem->auth_host);
	free(rem->repo);
	free(rem->reference);
	free(rem->basic);
	free(rem->ca_blob);
	free(rem->client_cert);
	free(rem->client_key);
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
		if (rg_url(rem, "/v2/", &url) < 0)
			return ra_oom(e, "import");
		cr = rg_get(rem, url, NULL, 0, &x);
		if (cr == CURLE_OK || rem->tls_verify || rem->http ||
		    (cr != CURLE_SSL_CONNECT_ERROR && cr != CURLE_COULDNT_CONNECT && cr != CURLE_RECV_ERROR &&
		     cr != CURLE_GOT_NOTHING && cr != CURLE_PEER_FAILED_VERIFICATION))
			break;
		rem->http = true;
		rg_xfer_free(&x);
		/* (the same patience: one ping, two ways of asking) */
		x = (struct xfer){ .max = ERRBODY_MAX, .deadline = x.deadline, .out_of_time = x.out_of_time };
	}
	if (cr == CURLE_OK && (r = not_elsewhere(rem, "ping registry", "GET /v2/", &x, e)) < 0)
		;
	else if (cr == CURLE_OK && x.status == 401)
		r = rg_authenticate(rem, x.www_auth, x.deadline, e);
	else if (cr != CURLE_OK || !rg_ok_status(x.status))
		r = rg_xfer_err(rem, "ping registry", "GET /v2/", cr, &x, e);
	rg_xfer_free(&x);
	return r;
}

/* A remote with libcurl loaded, named @ref (NULL: out of memory, said), or -errno in *r. */
static struct ra_oci_remote *remote_new(const char *ref, const struct ra_registry_how *how, const char *op, int *r,
					struct rootasm_error *e)
{
	struct ra_oci_remote *rem;

	*r = rg_curl_load(e);
	if (*r < 0)
		return NULL;
	rem = calloc(1, sizeof(*rem));
	if (!rem) {
		*r = ra_oom(e, op);
		return NULL;
	}
	pthread_mutex_init(&rem->lock, NULL);
	rem->owner = pthread_self();
	rem->tls_verify = how->tls_verify;
	rem->ref = strdup(ref);
	if (!rem->ref) {
		*r = ra_oom(e, op);
		ra_registry_free(rem);
		return NULL;
	}
	*r = rg_patience(rem, e);
	if (*r < 0) {
		ra_registry_free(rem);
		return NULL;
	}
	return rem;
}

int ra_registry_login(const char *registry, const struct ra_registry_how *how, char **ret_auth,
		      struct rootasm_error *e)
{
	struct ra_oci_remote *rem;
	struct xfer x = { .max = ERRBODY_MAX };
	int r;

	if (!registry || !*registry || strlen(registry) > 255 ||
	    strspn(registry, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]") != strlen(registry))
		return bad(e, "log in", registry, "not a registry (HOST[:PORT])");
	if (!how || !how->creds)
		return bad(e, "log in", registry, "no credentials to log in with");
	{
		char ref[300];

		snprintf(ref, sizeof(ref), "docker://%s", registry);
		rem = remote_new(ref, how, "log in", &r, e);
		if (!rem)
			return r;
	}
	/* no repository: a token is asked for no scope, as podman login asks it */
	rem->auth_host = strdup(!strcmp(registry, "registry-1.docker.io") || !strcmp(registry, "index.docker.io") ?
				"docker.io" : registry);
	rem->host = url_host(registry);
	if (!rem->auth_host || !rem->host) {
		r = ra_oom(e, "log in");
		goto out;
	}
	r = rg_load_auth(rem, how, e);
	if (r == 0)
		r = rg_load_certs(rem, how, e);
	if (r == 0)
		r = ping(rem, e);
	/* the challenge answered with them: /v2/ again, now with them (a 401 is answered once more, then refused) */
	if (r == 0)
		r = request(rem, "/v2/", NULL, 0, "log in", registry, &x, e);
	/* rem->basic: "Authorization: Basic " and the base64 an auth file keeps */
	if (r == 0 && ret_auth && !(*ret_auth = strdup(strchr(rem->basic, ' ') + strlen(" Basic "))))
		r = ra_oom(e, "log in");
out:
	rg_xfer_free(&x);
	ra_registry_free(rem);
	return r;
}

/* The image @ref at @src (its manifest by @parts' reference): rg_load_auth(), the certificates, ping, the manifest. */
static int open_source(const char *ref, const struct ra_registry_how *how, const struct source *src,
		       const struct ref_parts *parts, struct ra_oci_remote **ret, struct ra_registry_manifest *m,
		       struct rootasm_error *e)
{
	struct ra_oci_remote *rem;
	struct xfer x = { .max = RA_OCI_MANIFEST_MAX };
	char path[2048], what[1024], *got = m->digest;
	_cleanup_free_ char *mt = NULL;
	int r;

	rem = remote_new(ref, how, "import", &r, e);
	if (!rem)
		return r;
	/* registries.conf's insecure: no certificate check, plain HTTP allowed, for that source */
	rem->tls_verify = how->tls_verify && !src->insecure;
	r = aim(rem, src->logical, src->endpoint, parts->reference, e);
	if (r < 0)
		goto fail;
	r = rg_load_auth(rem, how, e);
	if (r == 0)
		r = rg_load_certs(rem, how, e);
	if (r < 0)
		goto fail;
	r = ping(rem, e);
	if (r < 0)
		goto fail;
	snprintf(path, sizeof(path), "/v2/%s/manifests/%s", rem->repo, rem->reference);
	/* (what was asked of whom: a short name's search registry, a mirror, is named) */
	snprintf(what, sizeof(what), "%s/%s%s%s", rem->auth_host, rem->repo, strchr(rem->reference, ':') ? "@" : ":",
		 rem->reference);
	r = request_doc(rem, path, MT_ACCEPT, "pull manifest", what, &x, e);
	if (r < 0)
		goto fail;
	r = ra_sha256_buf(x.buf ? x.buf : "", x.len, got);
	if (r < 0) {
		r = r == -ELIBACC ? ra_err(e, ELIBACC, -EBADF, "sha256", "libcrypto.so.3", "import needs the libssl3 package")
				  : ra_oom(e, "sha256");
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
	m->name = rem->name;
	m->mt = TAKE_PTR(mt);
	m->len = x.len;
	m->buf = x.buf ? TAKE_PTR(x.buf) : strdup("");
	rg_xfer_free(&x);
	if (!m->buf) {
		ra_registry_manifest_free(m);
		ra_registry_free(rem);
		return ra_oom(e, "import");
	}
	*ret = rem;
	return 0;
fail:
	rg_xfer_free(&x);
	ra_registry_free(rem);
	return r;
}

int ra_registry_open(const char *ref, const struct ra_registry_how *how, struct ra_oci_remote **ret,
		     struct ra_registry_manifest *m, struct rootasm_error *e)
{
	struct plan p = { 0 };
	char tried[1024] = "";
	size_t tl = 0;
	int r;

	r = plan_sources(&p, ref, e);
	for (size_t i = 0; r == 0 && i < p.n; i++) {
		/* each source in turn, as podman tries them: the first that serves the manifest is the one */
		r = open_source(ref, how, &p.v[i], &p.ref, ret, m, e);
		if (r == 0) {
			struct ra_oci_remote *rem = *ret;

			if (asprintf(&rem->resolved, "docker://%s%s%s", rem->name + strlen(RA_REGISTRY_PREFIX),
				     p.ref.digest ? "@" : ":", p.ref.reference) < 0 ||
			    (p.why && !(rem->resolved_why = strdup(p.why)))) {
				ra_registry_manifest_free(m);
				ra_registry_free(rem);
				r = ra_oom(e, "import");
			}
			break;
		}
		if (r == -ENOMEM || i + 1 == p.n)
			break;
		tl += snprintf(tried + tl, tl < sizeof(tried) ? sizeof(tried) - tl : 0, "%s%s", tl ? ", " : "",
			       p.v[i].endpoint);
		r = 0;
	}
	/* the last source's error, naming those tried before it */
	if (r < 0 && tried[0] && e && e->err)
		snprintf(e->msg + strlen(e->msg), sizeof(e->msg) - strlen(e->msg), " (tried before: %s)", tried);
	plan_free(&p);
	return r;
}

const char *ra_registry_resolved(const struct ra_oci_remote *rem, const char **why)
{
	if (why)
		*why = rem->resolved_why;
	return rem->resolved;
}

void ra_registry_manifest_free(struct ra_registry_manifest *m)
{
	free(m->buf);
	free(m->mt);
	m->buf = m->mt = NULL;
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
	r = ra_sha256_buf(x.buf ? x.buf : "", x.len, got);
	if (r < 0) {
		r = ra_oom(e, "pull blob");
		goto out;
	}
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
		struct rootasm_error re = { 0 };
		bool again;
		int r;

		r = request(rem, path, NULL, from, "pull blob", s->d.digest, &x, &re);
		rg_xfer_free(&x);
		/* more bytes than the descriptor's: rg_stream_write() said so, not curl's "failed writing" */
		if (s->r < 0)
			break;
		s->e = re;
		if (s->too_slow) {
			int64_t own = rg_stream_own(s, rg_now());

			s->r = ra_err(&s->e, ETIMEDOUT, -EBADF, "pull blob", rem->ref, "%s: slower than %ld bytes/s after "
				      "%d s, its tries together: %llu of %llu bytes in %lld s (ROOTASM_REGISTRY_TIMEOUT)",
				      s->d.digest, rg_floor(rem), rem->patience, (unsigned long long)s->got,
				      (unsigned long long)s->d.size, (long long)(own / 1000000000LL));
			break;
		}
		if (s->reader_gone || __atomic_load_n(&s->stop, __ATOMIC_RELAXED)) {
			s->r = -EPIPE;
			break;
		}
		if (r == 0 && s->got == s->d.size)
			break;
		/* a short body, a dropped connection, a timeout, a 5xx or 429: again, from where it stopped */
		again = r == 0 || s->e.err == EIO || s->e.err == ETIMEDOUT || s->e.err == EAGAIN;
		/*
		 * A try that got well further does not count (one fetched ahead waits
		 * for its reader: a timeout); one that got a little (a drip, dropped
		 * below the floor) does.
		 */
		if (again && (s->got - from >= TRY_PROGRESS || s->got == s->d.size))
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
	s->began = rg_now();
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
	/*
	 * A reader that stopped early wakes the writer (EPIPE), and stops its
	 * download at once (curl's progress callback): a registry that holds the
	 * connection open and sends nothing would otherwise keep it, try after
	 * try. What the download said before stays its error.
	 */
	if (r < 0)
		__atomic_store_n(&s->stop, true, __ATOMIC_RELAXED);
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

/* ------------------------------------------------------------ a registry image's blobs (oci.h's reader) */

static int reader_open(const struct ra_oci_image *img, const struct ra_oci_desc *d, struct rootasm_error *e)
{
	return ra_registry_blob_stream(img->remote, d, e);
}

static int reader_get(const struct ra_oci_image *img, const struct ra_oci_desc *d, size_t max, char **ret, size_t *len,
		      struct rootasm_error *e)
{
	return ra_registry_get(img->remote, d, max, ret, len, e);
}

/* the download's error (a lying registry), if any, says more than the reader's */
static int reader_done(const struct ra_oci_image *img, int fd, int r, struct rootasm_error *e)
{
	return ra_registry_stream_done(img->remote, fd, r, e);
}

static void reader_prefetch(const struct ra_oci_image *img, const struct ra_oci_desc *d)
{
	(void)ra_registry_prefetch(img->remote, d, NULL);
}

static void reader_progress(const struct ra_oci_image *img, rootasm_import_download_fn fn, void *userdata)
{
	ra_registry_progress(img->remote, fn, userdata);
}

const struct ra_oci_reader ra_registry_reader = {
	.where = "%s@sha256:%s",
	.open = reader_open,
	.get = reader_get,
	.done = reader_done,
	.prefetch = reader_prefetch,
	.ahead = RA_REGISTRY_PARALLEL - 1,
	.progress = reader_progress,
	.checked_as_read = true,
};
