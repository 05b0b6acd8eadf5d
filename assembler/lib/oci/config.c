// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The image config used: what a container of the image runs (image-spec
 * config.md, "config": Env, Entrypoint, Cmd, WorkingDir, User) as the exec:
 * section of the layout an import writes (layouts/FORMAT.md, "exec"):
 *
 *   Env          env         the entries exec.env takes (KEY of letters,
 *                            digits, '_'; no control character): others are
 *                            left out and named in the image record
 *   Entrypoint   entrypoint  as they are (`rootasm exec LAYOUT [CMD]` runs the
 *   Cmd          cmd         entrypoint, then CMD or else cmd: podman's rule)
 *   WorkingDir   workdir     made absolute ("" or missing: none, i.e. "/")
 *   User         user        "USER[:GROUP]", resolved in the tree when the
 *                            command runs; one rootasm cannot take refuses
 *                            the image (a command must not run as root by
 *                            mistake)
 *
 * The same keys that umoci unpack and `crun spec`-style bundles take from a
 * config (bundle-create.c makes config.json's process from this section).
 */
#include <string.h>

#include <jansson.h>

#include "json.h"
#include "layout.h"
#include "oci.h"
#include "passwd.h"
#include "util.h"

static int bad(struct rootasm_error *e, const char *what)
{
	return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "read image config", NULL, "%s", what);
}

/* The strings of the array @a (null: none) into a new JSON array in *ret (NULL when none). */
static int args_of(json_t *a, const char *key, json_t **ret, struct rootasm_error *e)
{
	char why[128];
	json_t *v, *out;
	size_t i;

	*ret = NULL;
	if (!a || json_is_null(a))
		return 0;
	if (!json_is_array(a)) {
		snprintf(why, sizeof(why), "config.%s is not an array of strings", key);
		return bad(e, why);
	}
	if (json_array_size(a) > RA_MAX_ARGS) {
		snprintf(why, sizeof(why), "config.%s has %zu arguments; at most %d", key, json_array_size(a),
			 RA_MAX_ARGS);
		return bad(e, why);
	}
	out = json_array();
	if (!out)
		return ra_oom(e, "read image config");
	json_array_foreach(a, i, v) {
		if (!json_is_string(v) || json_string_length(v) >= RA_MAX_ARG) {
			json_decref(out);
			snprintf(why, sizeof(why), "config.%s[%zu] is not a string (of less than %u bytes)", key, i,
				 RA_MAX_ARG);
			return bad(e, why);
		}
		if (json_array_append(out, v) < 0) {
			json_decref(out);
			return ra_oom(e, "read image config");
		}
	}
	*ret = out;
	return 0;
}

static bool clean(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

int ra_oci_exec_section(const struct ra_oci_image *img, json_t **ret, json_t **ret_dropped, struct rootasm_error *e)
{
	json_t *run = img->run, *x, *v, *a, *env;
	struct ra_jb jb = { 0 };
	const char *s;
	size_t i;
	int r;

	*ret = *ret_dropped = NULL;
	if (!run || !json_is_object(run))
		return 0;
	x = json_object();
	env = json_object_get(run, "Env");
	if (env && !json_is_null(env)) {
		if (!json_is_array(env)) {
			json_decref(x);
			return bad(e, "config.Env is not an array of strings");
		}
		a = json_array();
		json_array_foreach(env, i, v) {
			s = json_string_value(v);
			if (!s) {
				json_decref(a);
				json_decref(x);
				return bad(e, "config.Env has an entry that is not a string");
			}
			if (ra_env_ok(s) && clean(s) && strlen(s) < RA_PATH_MAX && json_array_size(a) < RA_MAX_ENV)
				ra_japp(&jb, a, json_string(s));
			else
				ra_japp(&jb, *ret_dropped ? *ret_dropped : (*ret_dropped = json_array()), ra_jstr(s));
		}
		ra_jset(&jb, x, "env", a);
	}
	for (int k = 0; k < 2; k++) {
		static const char *const in[] = { "Entrypoint", "Cmd" }, *const out[] = { "entrypoint", "cmd" };

		r = args_of(json_object_get(run, in[k]), in[k], &a, e);
		if (r < 0) {
			json_decref(x);
			json_decref(*ret_dropped);
			*ret_dropped = NULL;
			return r;
		}
		/* an empty Entrypoint is none (podman: --entrypoint "") */
		if (a && json_array_size(a))
			ra_jset(&jb, x, out[k], a);
		else
			json_decref(a);
	}
	s = json_string_value(json_object_get(run, "WorkingDir"));
	if (s && *s) {
		char abs[RA_PATH_MAX], norm[RA_PATH_MAX];

		/* Docker takes a relative WorkingDir as relative to "/" */
		snprintf(abs, sizeof(abs), "%s%s", s[0] == '/' ? "" : "/", s);
		if (!clean(s) || ra_normalize_target(abs, norm, sizeof(norm)) < 0) {
			json_decref(x);
			json_decref(*ret_dropped);
			*ret_dropped = NULL;
			return bad(e, "config.WorkingDir is not a path rootasm takes (control characters, '..', too long)");
		}
		ra_jset(&jb, x, "workdir", json_string(norm));
	}
	s = json_string_value(json_object_get(run, "User"));
	if (s && *s) {
		if (!ra_user_spec_ok(s)) {
			json_decref(x);
			json_decref(*ret_dropped);
			*ret_dropped = NULL;
			return bad(e, "config.User is not USER[:GROUP] of names or numbers");
		}
		ra_jset(&jb, x, "user", json_string(s));
	}
	if (jb.oom) {
		json_decref(x);
		json_decref(*ret_dropped);
		*ret_dropped = NULL;
		return ra_oom(e, "read image config");
	}
	if (!json_object_size(x))
		json_decref(x);
	else
		*ret = x;
	return 0;
}
