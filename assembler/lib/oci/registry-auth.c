// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A registry's authentication (registry.c asks when a request meets a 401):
 * the credentials of the auth file skopeo and podman read, and a bearer
 * token from the realm a WWW-Authenticate challenge names (anonymous, or
 * with those credentials as HTTP Basic).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "open.h"
#include "registry-http.h"
#include "util.h"

/* ---------------------------------------------------------- authentication */

/*
 * The credentials skopeo and podman use (containers-auth.json(5)):
 * $REGISTRY_AUTH_FILE, else ${XDG_RUNTIME_DIR}/containers/auth.json, else
 * ~/.docker/config.json; the first file that exists is read, and its entry
 * for the registry ("auths": {"HOST": {"auth": base64("user:password")}},
 * also as "https://HOST" or Docker Hub's "https://index.docker.io/v1/").
 * The base64 text is what HTTP Basic sends, so it is used as it is.
 */
int rg_load_auth(struct ra_oci_remote *rem, struct rootasm_error *e)
{
	const char *env = getenv("REGISTRY_AUTH_FILE"), *xdg = getenv("XDG_RUNTIME_DIR"), *home = getenv("HOME");
	char paths[3][4096];
	size_t n = 0;

	if (env && *env)
		snprintf(paths[n++], sizeof(paths[0]), "%s", env);
	if (xdg && *xdg)
		snprintf(paths[n++], sizeof(paths[0]), "%s/containers/auth.json", xdg);
	if (home && *home)
		snprintf(paths[n++], sizeof(paths[0]), "%s/.docker/config.json", home);
	for (size_t i = 0; i < n; i++) {
		_cleanup_close_ int fd = open(paths[i], O_RDONLY | O_NOCTTY | O_CLOEXEC);
		_cleanup_free_ char *buf = NULL;
		char keys[3][512];
		json_error_t je;
		json_t *j, *auths;
		size_t len;
		int r;

		if (fd < 0 && errno == ENOENT)
			continue;
		if (fd < 0)
			return ra_err(e, errno, -EBADF, "read auth file", paths[i], NULL);
		r = ra_read_all(fd, 1u << 20, NULL, NULL, &buf, &len);
		if (r < 0)
			return ra_err(e, r == -EFBIG ? EFBIG : -r, -EBADF, "read auth file", paths[i], NULL);
		j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
		if (!j)
			return bad(e, "read auth file", paths[i], "line %d column %d: %s", je.line, je.column, je.text);
		auths = json_object_get(j, "auths");
		snprintf(keys[0], sizeof(keys[0]), "%s", rem->auth_host);
		snprintf(keys[1], sizeof(keys[1]), "https://%s", rem->auth_host);
		snprintf(keys[2], sizeof(keys[2]), "%s", strcmp(rem->auth_host, "docker.io") ? "" :
			 "https://index.docker.io/v1/");
		for (size_t k = 0; json_is_object(auths) && k < 3 && !rem->basic; k++) {
			const char *a = NULL;

			if (!keys[k][0] || json_unpack(json_object_get(auths, keys[k]), "{s:s}", "auth", &a) || !*a)
				continue;
			if (strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") != strlen(a)) {
				json_decref(j);
				return bad(e, "read auth file", paths[i], "auths.\"%s\".auth is not base64", keys[k]);
			}
			if (asprintf(&rem->basic, "Authorization: Basic %s", a) < 0) {
				rem->basic = NULL;
				json_decref(j);
				return ra_oom(e, "read auth file");
			}
		}
		json_decref(j);
		return 0;	/* the first file that exists is the one (as containers-auth.json(5) says) */
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
int rg_authenticate(struct ra_oci_remote *rem, const char *ch, struct rootasm_error *e)
{
	_cleanup_free_ char *realm = NULL, *service = NULL, *scope = NULL, *authz = NULL;
	struct curl_slist *hdrs = NULL;
	struct xfer x = { .max = RA_REGISTRY_TOKEN_MAX };
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
	strncat(url, "scope=", sizeof(url) - strlen(url) - 1);
	if (scope) {
		url_escape(url, sizeof(url), scope);
	} else {
		char s[1024];

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
