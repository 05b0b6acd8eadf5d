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

#include "emit.h"
#include "exec.h"
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

/*
 * The exec section's keys, each read by one function; an error in one does
 * not hide those in the next (-EINVAL), anything else ends the parse.
 */
static int x_deny_mount_api(struct pctx *p, struct ynode *v, struct ynode *m, struct ra_exec *x)
{
	return ly_get_bool(p, v, "exec.deny_mount_api", &x->deny_mount_api);
}

static int x_privileged(struct pctx *p, struct ynode *v, struct ynode *m, struct ra_exec *x)
{
	return ly_get_bool(p, v, "exec.privileged", &x->privileged);
}

/* uid and gid: both or neither */
static int x_uid(struct pctx *p, struct ynode *v, struct ynode *m, struct ra_exec *x)
{
	struct ynode *g = ly_lookup(p, m, "gid");
	int r, bad = 0;

	if (!g)
		return perr(p, m, "exec", "give both 'uid' and 'gid', or neither");
	x->user_set = true;
	if ((r = ly_get_id(p, v, "exec.uid", &x->uid)) < 0)
		bad = r;
	if ((r = ly_get_id(p, g, "exec.gid", &x->gid)) < 0)
		bad = r;
	return bad;
}

static int x_gid(struct pctx *p, struct ynode *v, struct ynode *m, struct ra_exec *x)
{
	return ly_lookup(p, m, "uid") ? 0 : perr(p, m, "exec", "give both 'uid' and 'gid', or neither");
}

static int x_groups(struct pctx *p, struct ynode *v, struct ynode *m, struct ra_exec *x)
{
	return ly_parse_groups(p, v, "exec.groups", &x->groups, &x->ngroups);
}

static int x_caps(struct pctx *p, struct ynode *v, struct ynode *m, struct ra_exec *x)
{
	x->caps_set = true;
	return ly_parse_caps(p, v, "exec.capabilities", &x->caps);
}

static int x_env(struct pctx *p, struct ynode *v, struct ynode *m, struct ra_exec *x)
{
	size_t i = 0;
	const char *s;
	int r = ly_want(p, v, "exec.env", YAML_SEQUENCE_NODE), bad = 0;

	/* not a list, or too long: nothing of it is worth reading on */
	if (r < 0)
		return -ENOTRECOVERABLE;
	if (ly_nitems(v) > RA_MAX_ENV) {
		perr(p, v, "exec.env", "%zu variables; at most %d", ly_nitems(v), RA_MAX_ENV);
		return -ENOTRECOVERABLE;
	}
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
	return bad;
}

static int x_hostname(struct pctx *p, struct ynode *v, struct ynode *m, struct ra_exec *x)
{
	const char *s;
	int r = ly_get_string(p, v, "exec.hostname", &s);

	if (r < 0)
		return r;
	if (!rootasm_hostname_ok(s))
		return perr(p, v, "exec.hostname", "expected a hostname (1-64 of letters, digits, '.', '-'), got '%s'", s);
	return (x->hostname = strdup(s)) ? 0 : ly_poom(p, "parse hostname");
}

static int x_network(struct pctx *p, struct ynode *v, struct ynode *m, struct ra_exec *x)
{
	const char *s;
	int r = ly_get_string(p, v, "exec.network", &s);

	if (r < 0)
		return r;
	if (!strcmp(s, "host"))
		x->network = RA_NET_HOST;
	else if (!strcmp(s, "none"))
		x->network = RA_NET_NONE;
	else
		return perr(p, v, "exec.network", "expected 'host' or 'none', got '%s'", s);
	return 0;
}

static int x_entrypoint(struct pctx *p, struct ynode *v, struct ynode *m, struct ra_exec *x)
{
	return parse_args(p, v, "exec.entrypoint", &x->entrypoint, &x->nentrypoint);
}

static int x_cmd(struct pctx *p, struct ynode *v, struct ynode *m, struct ra_exec *x)
{
	return parse_args(p, v, "exec.cmd", &x->cmd, &x->ncmd);
}

static int x_workdir(struct pctx *p, struct ynode *v, struct ynode *m, struct ra_exec *x)
{
	char buf[RA_PATH_MAX];
	const char *s;
	int r = ly_get_string(p, v, "exec.workdir", &s);

	if (r < 0)
		return r;
	r = ra_normalize_target(s, buf, sizeof(buf));
	if (r == -EINVAL)
		return perr(p, v, "exec.workdir", "expected an absolute path, got '%s'", s);
	if (r == -EXDEV)
		return perr(p, v, "exec.workdir", "'%s' contains '..'", s);
	if (r < 0)
		return perr(p, v, "exec.workdir", "'%s' is too long", s);
	return (x->workdir = strdup(buf)) ? 0 : ly_poom(p, "parse workdir");
}

static int x_user(struct pctx *p, struct ynode *v, struct ynode *m, struct ra_exec *x)
{
	const char *s;
	int r;

	if (ly_lookup(p, m, "uid"))
		return perr(p, v, "exec.user", "give 'user' or 'uid' and 'gid', not both");
	if ((r = ly_get_string(p, v, "exec.user", &s)) < 0)
		return r;
	if (!ra_user_spec_ok(s))
		return perr(p, v, "exec.user", "expected USER[:GROUP] (names or numbers), got '%s'", s);
	return (x->user = strdup(s)) ? 0 : ly_poom(p, "parse user");
}

static const struct {
	const char *key;
	int (*parse)(struct pctx *p, struct ynode *v, struct ynode *m, struct ra_exec *x);
} exec_keys[] = {
	{ "deny_mount_api", x_deny_mount_api }, { "privileged", x_privileged }, { "uid", x_uid }, { "gid", x_gid },
	{ "groups", x_groups }, { "capabilities", x_caps }, { "env", x_env }, { "hostname", x_hostname },
	{ "network", x_network }, { "entrypoint", x_entrypoint }, { "cmd", x_cmd }, { "workdir", x_workdir },
	{ "user", x_user },
};

int ly_parse_exec(struct pctx *p, struct ynode *m, struct rootasm_layout *l)
{
	const char *keys[ARRAY_SIZE(exec_keys) + 1];
	int r, bad = 0;

	for (size_t i = 0; i <= ARRAY_SIZE(exec_keys); i++)
		keys[i] = i < ARRAY_SIZE(exec_keys) ? exec_keys[i].key : NULL;
	r = ly_map(p, m, "exec", keys);
	if (r < 0)
		return r;
	l->exec.loc = ly_loc_of(m);
	for (size_t i = 0; i < ARRAY_SIZE(exec_keys); i++) {
		struct ynode *v = ly_lookup(p, m, exec_keys[i].key);

		if (!v)
			continue;
		r = exec_keys[i].parse(p, v, m, &l->exec);
		if (r == -ENOTRECOVERABLE)
			return -EINVAL;
		if (r < 0 && !ly_go_on(r))
			return r;
		if (r < 0)
			bad = r;
	}
	return bad;
}

/* What `rootasm exec` gives the command, as exec.c will set it up. */
void ra_exec_describe(struct pr *pr, const struct ra_exec *x)
{
	em_yes(pr, "privileged", x->privileged,
	       "exec: PRIVILEGED (no capability drop, no seccomp profile, no /proc masks)", "exec: sandboxed");
	em_num(pr, "uid", " uid=%s", x->user_set ? x->uid : 0);
	em_num(pr, "gid", " gid=%s", x->user_set ? x->gid : 0);
	em_groups(pr, " groups=", x->groups, x->ngroups);
	if (x->caps_set) {
		em_caps(pr, "capabilities", " caps=", x->caps);
	} else {
		char oci[128];

		em_put(pr, "capabilities", " caps=%s", x->privileged ? "all" : "oci-default");
		if (!x->privileged)
			em_txt(pr, "(%s)", ra_caps_text(RA_OCI_DEFAULT_CAPS, "+", oci, sizeof(oci)));
	}
	EM_AT(pr, BELOW);
	em_list(pr, "env", "", NULL, NULL);
	for (size_t i = 0; i < x->nenv; i++)
		em_put(pr, NULL, " env=%s", x->env[i]);
	em_end(pr);
	em_txt(pr, "\n");
	EM_AT(pr, TAIL);
	em_put(pr, "hostname", " hostname=%s", x->hostname ? x->hostname : "rootasm");
	EM_AT(pr, LATE);
	em_put(pr, "network", " network=%s", x->network == RA_NET_NONE ? "none" : "host");
	EM_AT(pr, TAIL);
	em_yes(pr, "deny_mount_api", x->deny_mount_api, " deny_mount_api=true", " deny_mount_api=false");
}
