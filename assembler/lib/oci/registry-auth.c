// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A registry's authentication (registry.c asks when a request meets a 401):
 * the credentials of the auth file skopeo and podman read, and a bearer
 * token from the realm a WWW-Authenticate challenge names (anonymous, or
 * with those credentials as HTTP Basic).
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include <jansson.h>

#include "open.h"
#include "registry-http.h"
#include "registry.h"
#include "util.h"

/* ---------------------------------------------------------- authentication */

/* @in (@n bytes) as base64 into @out (of @size, NUL-terminated): 0, or -ENOSPC. */
static int b64(const unsigned char *in, size_t n, char *out, size_t size)
{
	static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0;

	if ((n + 2) / 3 * 4 + 1 > size)
		return -ENOSPC;
	for (size_t i = 0; i < n; i += 3) {
		unsigned int v = in[i] << 16 | (i + 1 < n ? in[i + 1] << 8 : 0) | (i + 2 < n ? in[i + 2] : 0);

		out[o++] = t[v >> 18 & 63];
		out[o++] = t[v >> 12 & 63];
		out[o++] = i + 1 < n ? t[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? t[v & 63] : '=';
	}
	out[o] = '\0';
	return 0;
}

/*
 * How well the auth file's key @k names the image HOST/REPO of @rem: the
 * length of what it matches (a registry, or a namespace of it: "HOST/NS"
 * covers "HOST/NS/REPO", not "HOST/NSX"), or 0. Keys may carry a scheme and,
 * as Docker writes them, a path ("https://index.docker.io/v1/" is docker.io).
 */
static size_t key_match(const struct ra_oci_remote *rem, const char *k)
{
	char key[1024], want[1024], *slash;
	bool scheme = !strncmp(k, "https://", 8) || !strncmp(k, "http://", 7);
	size_t n;

	if (scheme)
		k = strstr(k, "://") + 3;
	snprintf(key, sizeof(key), "%s", k);
	if (!strcmp(key, "index.docker.io/v1/") || !strcmp(key, "index.docker.io/v1") || !strcmp(key, "index.docker.io"))
		snprintf(key, sizeof(key), "docker.io");
	/* a legacy key with a scheme names a registry only: its path is Docker's API version, /v1/ or /v2/ */
	slash = strchr(key, '/');
	if (scheme && slash && (!strcmp(slash, "/v1") || !strcmp(slash, "/v1/") || !strcmp(slash, "/v2") ||
				!strcmp(slash, "/v2/")))
		*slash = '\0';
	n = strlen(key);
	while (n > 1 && key[n - 1] == '/')
		key[--n] = '\0';
	snprintf(want, sizeof(want), "%s/%s", rem->auth_host, rem->repo);
	if (!n || strncmp(want, key, n) || (want[n] != '/' && want[n] != '\0'))
		return 0;
	/* the registry itself, at least: "HOST" does not cover "HOSTX" */
	return n >= strlen(rem->auth_host) ? n : 0;
}

#define HELPER_OUT_MAX		(64u << 10)
#define HELPER_TIMEOUT_MS	30000

extern char **environ;

/*
 * @plain ("USER:PASSWORD") as the header HTTP Basic sends, into rem->basic:
 * 0, -ENOSPC (its base64 and NUL over @max bytes), -ENOMEM.
 */
static int basic_header(struct ra_oci_remote *rem, const char *plain, size_t max)
{
	char enc[2800];
	int r = 0;

	if (b64((const unsigned char *)plain, strlen(plain), enc, max < sizeof(enc) ? max : sizeof(enc)) < 0)
		r = -ENOSPC;
	else if (asprintf(&rem->basic, "Authorization: Basic %s", enc) < 0)
		r = -ENOMEM, rem->basic = NULL;
	explicit_bzero(enc, sizeof(enc));
	return r;
}

/* user:secret (a credential helper's) into rem->basic: 0, or -errno. */
static int basic_of(struct ra_oci_remote *rem, const char *user, const char *secret, const char *op, const char *path,
		    struct rootasm_error *e)
{
	char plain[2048];
	int r = -ENOSPC;

	if ((size_t)snprintf(plain, sizeof(plain), "%s:%s", user, secret) < sizeof(plain))
		r = basic_header(rem, plain, 2800);
	explicit_bzero(plain, sizeof(plain));
	return r == -ENOSPC ? bad(e, op, path, "credentials too long") : r == -ENOMEM ? ra_oom(e, op) : r;
}

/*
 * The credentials the helper docker-credential-@name (on PATH) keeps for
 * @server, as Docker's credential helper protocol asks them: "get" with the
 * server on stdin, {"ServerURL", "Username", "Secret"} on stdout. 1 and
 * rem->basic set; 0 when it has none ("credentials not found"); -errno.
 */
static int cred_helper(struct ra_oci_remote *rem, const char *name, const char *server, const char *path,
		       struct rootasm_error *e)
{
	char prog[256], what[300], *argv[] = { prog, (char *)"get", NULL };
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, st = 0, r;
	posix_spawn_file_actions_t fa;
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, cap = 0;
	const char *user = NULL, *secret = NULL;
	struct timespec t0, t;
	json_t *j;
	pid_t pid;

	snprintf(what, sizeof(what), "credential helper docker-credential-%s", name);
	if (!*name || strlen(name) > 64 || strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
	    strlen(name))
		return bad(e, "read auth file", path, "credential helper '%.64s': not a helper's name", name);
	snprintf(prog, sizeof(prog), "docker-credential-%s", name);
	/* the server goes in before the helper runs: no write can meet a reader that is gone */
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0) {
		r = ra_err(e, errno, -EBADF, what, path, NULL);
		goto close;
	}
	if (write(in[1], server, strlen(server)) != (ssize_t)strlen(server)) {
		r = ra_err(e, errno ? errno : EIO, -EBADF, what, path, NULL);
		goto close;
	}
	close(in[1]);
	in[1] = -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_adddup2(&fa, out[1], 2);
	r = posix_spawnp(&pid, prog, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(out[1]);
	out[1] = -1;
	if (r) {
		r = r == ENOENT ? ra_err_kind(e, ROOTASM_ERROR_USAGE, ENOENT, what, path, "%s is not on PATH", prog) :
				  ra_err(e, r, -EBADF, what, path, NULL);
		goto close;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd pfd = { out[0], POLLIN, 0 };
		long left;
		ssize_t n;

		clock_gettime(CLOCK_MONOTONIC, &t);
		left = HELPER_TIMEOUT_MS - ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0 || poll(&pfd, 1, (int)left) == 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			r = ra_err_kind(e, ROOTASM_ERROR_RUNTIME, ETIMEDOUT, what, path, "no answer in %d s",
					HELPER_TIMEOUT_MS / 1000);
			goto close;
		}
		if (len + 4096 + 1 > cap) {
			char *nb = cap + 4096 + 1 > HELPER_OUT_MAX ? NULL : realloc(buf, cap + 4096 + 1);

			if (!nb) {
				kill(pid, SIGKILL);
				waitpid(pid, NULL, 0);
				r = cap + 4096 + 1 > HELPER_OUT_MAX ? bad(e, what, path, "more than %u bytes of answer",
									 HELPER_OUT_MAX) : ra_oom(e, what);
				goto close;
			}
			buf = nb;
			cap += 4096 + 1;
		}
		n = read(out[0], buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (buf)
		buf[len] = '\0';
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		/* what every helper says when it keeps nothing for the server: no entry here */
		if (buf && strstr(buf, "credentials not found")) {
			r = 0;
			goto close;
		}
		while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
			buf[--len] = '\0';
		r = ra_err_kind(e, ROOTASM_ERROR_RUNTIME, EIO, what, path, "failed for %s: %.200s", server,
				buf && *buf ? buf : "(no message)");
		goto close;
	}
	j = json_loadb(buf ? buf : "", len, 0, NULL);
	if (!j || json_unpack(j, "{s:s, s:s}", "Username", &user, "Secret", &secret) || !*secret) {
		json_decref(j);
		r = bad(e, what, path, "its answer for %s has no Username and Secret", server);
		goto close;
	}
	if (!strcmp(user, "<token>")) {
		json_decref(j);
		r = ra_err_kind(e, ROOTASM_ERROR_UNSUPPORTED, EOPNOTSUPP, what, path,
				"it keeps an identity token for %s, which rootasm does not exchange", server);
		goto close;
	}
	r = basic_of(rem, user, secret, what, path, e);
	json_decref(j);
	r = r < 0 ? r : 1;
close:
	if (buf)
		explicit_bzero(buf, cap);
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0)
			close(in[i]);
		if (out[i] >= 0)
			close(out[i]);
	}
	return r;
}

/*
 * The best entry of the auth file @path for @rem into rem->basic: 1 found, 0
 * none (or no such file, unless @must_exist), or -errno. As Docker reads it:
 * the helper credHelpers names for the registry, else the one credsStore
 * names, else (that one has nothing for it) the longest entry of "auths"; a
 * helper only from a file of the caller's own (or root's), since it runs
 * with the caller's rights.
 */
static int auth_file(struct ra_oci_remote *rem, const char *path, bool legacy, bool must_exist,
		     struct rootasm_error *e)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	_cleanup_free_ char *buf = NULL;
	const char *best = NULL, *bestkey = NULL, *k;
	size_t bestlen = 0, len;
	json_error_t je;
	json_t *j, *auths, *v;
	int r;

	if (fd < 0 && (errno == ENOENT || errno == ENOTDIR))
		return must_exist ? ra_err_kind(e, ROOTASM_ERROR_USAGE, errno, "read auth file", path, NULL) : 0;
	if (fd < 0)
		return ra_err(e, errno, -EBADF, "read auth file", path, NULL);
	r = ra_read_all(fd, 1u << 20, NULL, NULL, &buf, &len);
	if (r < 0)
		return ra_err(e, r == -EFBIG ? EFBIG : -r, -EBADF, "read auth file", path, NULL);
	j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	if (!j)
		return bad(e, "read auth file", path, "line %d column %d: %s", je.line, je.column, je.text);
	if (!legacy) {
		const char *helper = NULL, *hkey = NULL, *store = json_string_value(json_object_get(j, "credsStore"));
		struct stat st;

		/* credHelpers: a key naming the registry itself (a scheme and Docker's /v1/ aside) */
		json_object_foreach(json_object_get(j, "credHelpers"), k, v) {
			size_t m = key_match(rem, k);

			if (m && json_is_string(v) && m == strlen(rem->auth_host)) {
				helper = json_string_value(v);
				hkey = k;
			}
		}
		if ((helper || store) && (fstat(fd, &st) < 0 || (st.st_uid != geteuid() && st.st_uid != 0))) {
			json_decref(j);
			return ra_err_kind(e, ROOTASM_ERROR_PERMISSION, EPERM, "read auth file", path,
					   "it names a credential helper, and it is uid %u's: a helper runs with the "
					   "caller's rights", (unsigned int)st.st_uid);
		}
		if (helper) {
			r = cred_helper(rem, helper, hkey, path, e);
			json_decref(j);
			return r;
		}
		if (store) {
			/* the default store: Docker Hub as Docker names it to helpers, others by HOST[:PORT] */
			r = cred_helper(rem, store, !strcmp(rem->auth_host, "docker.io") ? "https://index.docker.io/v1/" :
				        rem->auth_host, path, e);
			if (r != 0) {
				json_decref(j);
				return r;
			}
		}
	}
	/* ~/.dockercfg is the "auths" object itself */
	auths = legacy ? j : json_object_get(j, "auths");
	json_object_foreach(json_is_object(auths) ? auths : NULL, k, v) {
		const char *a = NULL;
		size_t m = key_match(rem, k);

		if (m > bestlen && !json_unpack(v, "{s:s}", "auth", &a) && *a) {
			best = a;
			bestkey = k;
			bestlen = m;
		}
	}
	if (best && strspn(best, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") != strlen(best)) {
		r = bad(e, "read auth file", path, "auths.\"%s\".auth is not base64", bestkey);
		json_decref(j);
		return r;
	}
	/* the base64 text is what HTTP Basic sends: used as it is */
	if (best && asprintf(&rem->basic, "Authorization: Basic %s", best) < 0) {
		rem->basic = NULL;
		json_decref(j);
		return ra_oom(e, "read auth file");
	}
	json_decref(j);
	return best ? 1 : 0;
}

/*
 * The credentials skopeo and podman use (containers-auth.json(5)): the ones
 * given (--creds USER:PASSWORD), else the auth file given (--authfile, or
 * $REGISTRY_AUTH_FILE) alone, else these in order until one has an entry for
 * the image: ${XDG_RUNTIME_DIR}/containers/auth.json (without
 * XDG_RUNTIME_DIR: /run/containers/UID/auth.json), ~/.config/containers/
 * auth.json, ~/.docker/config.json, ~/.dockercfg. In a file, the entry
 * naming the longest match wins: "HOST/NS/REPO", "HOST/NS", then "HOST"
 * ("auths": {KEY: {"auth": base64("user:password")}}).
 */
int rg_load_auth(struct ra_oci_remote *rem, const struct ra_registry_how *how, struct rootasm_error *e)
{
	const char *env = getenv("REGISTRY_AUTH_FILE"), *xdg = getenv("XDG_RUNTIME_DIR"), *home = getenv("HOME");
	const char *given = how && how->authfile ? how->authfile : env && *env ? env : NULL;
	char paths[5][4096];
	bool legacy[5] = { false };
	size_t n = 0;

	if (how && how->creds) {
		const char *colon = strchr(how->creds, ':');
		int r;

		if (!colon || colon == how->creds)
			return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "import", rem->ref,
					   "--creds: USER:PASSWORD expected");
		r = basic_header(rem, how->creds, 2048);
		if (r == -ENOSPC)
			return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "import", rem->ref, "--creds: too long");
		return r < 0 ? ra_oom(e, "import") : 0;
	}
	if (given) {
		/* a file named explicitly must be there */
		int r = auth_file(rem, given, false, true, e);

		return r < 0 ? r : 0;
	}
	if (xdg && *xdg)
		snprintf(paths[n++], sizeof(paths[0]), "%s/containers/auth.json", xdg);
	else
		snprintf(paths[n++], sizeof(paths[0]), "/run/containers/%u/auth.json", (unsigned int)getuid());
	if (home && *home) {
		snprintf(paths[n++], sizeof(paths[0]), "%s/.config/containers/auth.json", home);
		snprintf(paths[n++], sizeof(paths[0]), "%s/.docker/config.json", home);
		legacy[n] = true;
		snprintf(paths[n++], sizeof(paths[0]), "%s/.dockercfg", home);
	}
	for (size_t i = 0; i < n; i++) {
		int r = auth_file(rem, paths[i], legacy[i], false, e);

		if (r != 0)
			return r < 0 ? r : 0;	/* the first file with an entry for the image */
	}
	return 0;
}

/* The value of @key in a challenge's parameters (key="value", ...): malloc'd, or NULL. */
static char *param(const char *ch, const char *key)
{
	size_t k = strlen(key);

	for (const char *p = ch; (p = strcasestr(p, key)); p += k) {
		const char *v, *end;

		if ((p != ch && p[-1] != ' ' && p[-1] != ',') || p[k] != '=')
			continue;
		v = p + k + 1;
		if (*v == '"') {
			end = strchr(++v, '"');
			if (!end)
				return NULL;
		} else {
			end = v + strcspn(v, ", ");
		}
		return strndup(v, end - v);
	}
	return NULL;
}

/* @s percent-encoded for a query string, appended to @out (of @size). */
static void url_escape(char *out, size_t size, const char *s)
{
	size_t o = strlen(out);

	for (; *s && o + 4 < size; s++) {
		unsigned char c = *s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("-._~", c))
			out[o++] = c;
		else
			o += snprintf(out + o, size - o, "%%%02X", c);
	}
	out[o] = '\0';
}

/*
 * Answer the challenge @ch (WWW-Authenticate of a 401): Basic with the auth
 * file's credentials, or Bearer: a token from the realm for pulling REPO
 * (with the credentials, when there are any). Sets rem->authz.
 */
int rg_authenticate(struct ra_oci_remote *rem, const char *ch, int64_t deadline, struct rootasm_error *e)
{
	_cleanup_free_ char *realm = NULL, *service = NULL, *scope = NULL, *authz = NULL;
	struct curl_slist *hdrs = NULL;
	struct xfer x = { .max = RA_REGISTRY_TOKEN_MAX, .deadline = deadline };
	char url[4096];
	const char *tok = NULL;
	json_t *j;
	CURLcode cr;
	int r;

	if (!ch)
		return ra_err_kind(e, ROOTASM_ERROR_PERMISSION, EACCES, "authenticate", rem->ref,
				   "the registry answers 401 without a WWW-Authenticate challenge");
	if (!strncasecmp(ch, "Basic", 5)) {
		if (!rem->basic)
			return ra_err_kind(e, ROOTASM_ERROR_PERMISSION, EACCES, "authenticate", rem->ref,
					   "the registry asks for a password; none for %s in the auth file", rem->auth_host);
		authz = strdup(rem->basic);
		if (!authz)
			return ra_oom(e, "authenticate");
		goto set;
	}
	if (strncasecmp(ch, "Bearer", 6))
		return ra_err_kind(e, ROOTASM_ERROR_UNSUPPORTED, EOPNOTSUPP, "authenticate", rem->ref,
				   "the registry asks for '%.40s' authentication; rootasm knows Basic and Bearer", ch);
	realm = param(ch, "realm");
	service = param(ch, "service");
	scope = param(ch, "scope");
	if (!realm || (strncmp(realm, "https://", 8) && strncmp(realm, "http://", 7)))
		return bad(e, "authenticate", rem->ref, "the Bearer challenge has no http(s) realm");
	/* credentials go to a token endpoint over TLS only, unless --tls-verify=false said otherwise */
	if (rem->basic && rem->tls_verify && strncmp(realm, "https://", 8))
		return ra_err_kind(e, ROOTASM_ERROR_PERMISSION, EACCES, "authenticate", rem->ref,
				   "the token realm %s is not https; credentials are not sent in the clear", realm);
	snprintf(url, sizeof(url), "%s%s", realm, strchr(realm, '?') ? "&" : "?");
	if (service) {
		strncat(url, "service=", sizeof(url) - strlen(url) - 1);
		url_escape(url, sizeof(url), service);
		strncat(url, "&", sizeof(url) - strlen(url) - 1);
	}
	if (scope) {
		strncat(url, "scope=", sizeof(url) - strlen(url) - 1);
		url_escape(url, sizeof(url), scope);
	} else if (rem->repo) {
		/* (none for a login: the token then says only who it is for) */
		char s[1024];

		strncat(url, "scope=", sizeof(url) - strlen(url) - 1);
		snprintf(s, sizeof(s), "repository:%s:pull", rem->repo);
		url_escape(url, sizeof(url), s);
	}
	if (rem->basic)
		hdrs = curl_slist_append(hdrs, rem->basic);
	cr = rg_get(rem, url, hdrs, 0, &x);
	curl_slist_free_all(hdrs);
	if (cr != CURLE_OK || !rg_ok_status(x.status)) {
		r = rg_xfer_err(rem, "authenticate", realm, cr, &x, e);
		rg_xfer_free(&x);
		return r;
	}
	j = json_loadb(x.buf ? x.buf : "", x.len, 0, NULL);
	rg_xfer_free(&x);
	if (j && (json_unpack(j, "{s:s}", "token", &tok) || !*tok))
		(void)json_unpack(j, "{s:s}", "access_token", &tok);
	if (!tok || !*tok || strpbrk(tok, "\r\n")) {
		json_decref(j);
		return bad(e, "authenticate", rem->ref, "the token endpoint %s answers no token", realm);
	}
	r = asprintf(&authz, "Authorization: Bearer %s", tok);
	json_decref(j);
	if (r < 0) {
		authz = NULL;
		return ra_oom(e, "authenticate");
	}
set:
	pthread_mutex_lock(&rem->lock);
	free(rem->authz);
	rem->authz = TAKE_PTR(authz);
	pthread_mutex_unlock(&rem->lock);
	return 0;
}

/*
 * GET @path of the registry with the current authorization (and @accept);
 * a 401 is answered once (authenticate()) and the request made again.
 * Returns 0 with x->status 2xx, or an error in @e.
 */
