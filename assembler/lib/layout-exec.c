// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The layout's exec section: what `rootasm exec` gives the command (struct
 * ra_exec; the sandbox itself is exec.c).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <linux/capability.h>
#include <yaml.h>

#include "layout-parse.h"
#include "passwd.h"
#include "util.h"

/* "KEY=VALUE": a name of letters, digits and '_', not starting with a digit. */
bool ra_env_ok(const char *s)
{
	const char *eq = strchr(s, '=');

	if (!eq || eq == s || isdigit((unsigned char)s[0]))
		return false;
	for (const char *c = s; c < eq; c++)
		if (!isalnum((unsigned char)*c) && *c != '_')
			return false;
	return true;
}

/*
 * exec.entrypoint, exec.cmd: a list of arguments. An argument of an image's
 * command may be empty or hold newlines and tabs (a `sh -c` script): only NUL
 * is refused (it would cut the argument short), and sizes are capped as the
 * kernel caps them.
 */
static int parse_args(struct pctx *p, struct ynode *seq, const char *where, char ***ret, size_t *ret_n)
{
	char **v;
	size_t n = 0;
	int r = ly_want(p, seq, where, YAML_SEQUENCE_NODE);

	if (r < 0)
		return r;
	if (ly_nitems(seq) > RA_MAX_ARGS)
		return perr(p, seq, where, "%zu arguments; at most %d", ly_nitems(seq), RA_MAX_ARGS);
	v = calloc(ly_nitems(seq) + 1, sizeof(char *));
	if (!v)
		return ly_poom(p, "parse arguments");
	*ret = v;
	for_items(seq, it) {
		struct ynode *a = ly_node(p, *it);
		char key[64];

		snprintf(key, sizeof(key), "%s[%zu]", where, n);
		r = ly_want(p, a, key, YAML_SCALAR_NODE);
		if (r < 0)
			return r;
		if (memchr(a->value, '\0', a->length))
			return perr(p, a, key, "value contains a NUL character");
		if (a->length >= RA_MAX_ARG)
			return perr(p, a, key, "argument longer than %u bytes", RA_MAX_ARG - 1);
		/* a plain empty scalar is YAML's null: an empty argument is written "" */
		if (ly_is_null(a))
			return perr(p, a, key, "expected a string, got null (an empty argument is written \"\")");
		v[n] = strdup(a->value);
		if (!v[n])
			return ly_poom(p, "parse arguments");
		*ret_n = ++n;
	}
	return 0;
}

int ly_parse_exec(struct pctx *p, struct ynode *m, struct rootasm_layout *l)
{
	static const char *const keys[] = { "deny_mount_api", "privileged", "uid", "gid", "groups", "capabilities",
					    "env", "hostname", "network", "entrypoint", "cmd", "workdir", "user",
					    NULL };
	struct ra_exec *x = &l->exec;
	struct ynode *v, *u, *g;
	const char *s;
	int r = ly_want(p, m, "exec", YAML_MAPPING_NODE), bad = 0;

	if (r == 0)
		r = ly_check_keys(p, m, "exec", keys);
	if (r < 0)
		return r;
	x->loc = ly_loc_of(m);
	if ((v = ly_lookup(p, m, "deny_mount_api")) && (r = ly_get_bool(p, v, "exec.deny_mount_api", &x->deny_mount_api)) < 0)
		bad = r;
	if ((v = ly_lookup(p, m, "privileged")) && (r = ly_get_bool(p, v, "exec.privileged", &x->privileged)) < 0)
		bad = r;
	u = ly_lookup(p, m, "uid");
	g = ly_lookup(p, m, "gid");
	if (!!u != !!g) {
		bad = perr(p, m, "exec", "give both 'uid' and 'gid', or neither");
	} else if (u) {
		x->user_set = true;
		if ((r = ly_get_id(p, u, "exec.uid", &x->uid)) < 0)
			bad = r;
		if ((r = ly_get_id(p, g, "exec.gid", &x->gid)) < 0)
			bad = r;
	}
	if ((v = ly_lookup(p, m, "groups")) && (r = ly_parse_groups(p, v, "exec.groups", &x->groups, &x->ngroups)) < 0) {
		if (!ly_go_on(r))
			return r;
		bad = r;
	}
	if ((v = ly_lookup(p, m, "capabilities"))) {
		x->caps_set = true;
		if ((r = ly_parse_caps(p, v, "exec.capabilities", &x->caps)) < 0)
			bad = r;
	}
	if ((v = ly_lookup(p, m, "env"))) {
		size_t i = 0;

		r = ly_want(p, v, "exec.env", YAML_SEQUENCE_NODE);
		if (r < 0)
			return r;
		if (ly_nitems(v) > RA_MAX_ENV)
			return perr(p, v, "exec.env", "%zu variables; at most %d", ly_nitems(v), RA_MAX_ENV);
		x->env = calloc(ly_nitems(v) + 1, sizeof(char *));
		if (!x->env)
			return ly_poom(p, "parse env");
		for_items(v, it) {
			char key[64];

			snprintf(key, sizeof(key), "exec.env[%zu]", i++);
			if ((r = ly_get_string(p, ly_node(p, *it), key, &s)) < 0) {
				bad = r;
				continue;
			}
			if (!ra_env_ok(s)) {
				bad = perr(p, ly_node(p, *it), key, "expected KEY=VALUE (KEY: letters, digits, '_'), got '%s'", s);
				continue;
			}
			if (!(x->env[x->nenv++] = strdup(s)))
				return ly_poom(p, "parse env");
		}
	}
	if ((v = ly_lookup(p, m, "hostname"))) {
		if ((r = ly_get_string(p, v, "exec.hostname", &s)) < 0)
			bad = r;
		else if (!rootasm_hostname_ok(s))
			bad = perr(p, v, "exec.hostname", "expected a hostname (1-64 of letters, digits, '.', '-'), got '%s'", s);
		else if (!(x->hostname = strdup(s)))
			return ly_poom(p, "parse hostname");
	}
	if ((v = ly_lookup(p, m, "network"))) {
		if ((r = ly_get_string(p, v, "exec.network", &s)) < 0)
			bad = r;
		else if (!strcmp(s, "host"))
			x->network = RA_NET_HOST;
		else if (!strcmp(s, "none"))
			x->network = RA_NET_NONE;
		else
			bad = perr(p, v, "exec.network", "expected 'host' or 'none', got '%s'", s);
	}
	if ((v = ly_lookup(p, m, "entrypoint")) && (r = parse_args(p, v, "exec.entrypoint", &x->entrypoint,
								 &x->nentrypoint)) < 0) {
		if (!ly_go_on(r))
			return r;
		bad = r;
	}
	if ((v = ly_lookup(p, m, "cmd")) && (r = parse_args(p, v, "exec.cmd", &x->cmd, &x->ncmd)) < 0) {
		if (!ly_go_on(r))
			return r;
		bad = r;
	}
	if ((v = ly_lookup(p, m, "workdir"))) {
		char buf[RA_PATH_MAX];

		if ((r = ly_get_string(p, v, "exec.workdir", &s)) < 0)
			bad = r;
		else if ((r = ra_normalize_target(s, buf, sizeof(buf))) == -EINVAL)
			bad = perr(p, v, "exec.workdir", "expected an absolute path, got '%s'", s);
		else if (r == -EXDEV)
			bad = perr(p, v, "exec.workdir", "'%s' contains '..'", s);
		else if (r < 0)
			bad = perr(p, v, "exec.workdir", "'%s' is too long", s);
		else if (!(x->workdir = strdup(buf)))
			return ly_poom(p, "parse workdir");
	}
	if ((v = ly_lookup(p, m, "user"))) {
		if (u)
			bad = perr(p, v, "exec.user", "give 'user' or 'uid' and 'gid', not both");
		else if ((r = ly_get_string(p, v, "exec.user", &s)) < 0)
			bad = r;
		else if (!ra_user_spec_ok(s))
			bad = perr(p, v, "exec.user", "expected USER[:GROUP] (names or numbers), got '%s'", s);
		else if (!(x->user = strdup(s)))
			return ly_poom(p, "parse user");
	}
	return bad;
}

