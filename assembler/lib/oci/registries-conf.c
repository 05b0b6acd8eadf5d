// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * registries.conf(5), version 2, as podman and skopeo read it: where a
 * docker:// reference is pulled from.
 *
 *   files     $CONTAINERS_REGISTRIES_CONF, else ~/.config/containers/
 *             registries.conf when it exists, else /etc/containers/
 *             registries.conf; then the drop-ins of ~/.config/containers/
 *             registries.conf.d when it exists, else of /etc/containers/
 *             registries.conf.d, *.conf in name order, each overriding what
 *             it sets (the search list and short-name-mode replaced, a
 *             [[registry]] of the same prefix replaced, aliases merged)
 *   unqualified-search-registries, short-name-mode, [aliases]
 *             a short name (no registry: "alpine:3") is an alias's, else
 *             each search registry's in turn; "enforcing" (the default)
 *             refuses more than one candidate (nobody to ask), "permissive"
 *             and "disabled" try them in order. No search list: docker.io,
 *             as Docker resolves it.
 *   [[registry]] prefix, location, insecure, blocked, mirror-by-digest-only,
 *             [[registry.mirror]] location, insecure, pull-from-mirror
 *             the longest prefix matching the name (HOST[/PATH], or
 *             "*.DOMAIN" for its hosts) rewrites it to location; its mirrors
 *             are tried first, then the location; blocked is refused
 *
 * The TOML read is what these files use: comments, [table] and [[array]]
 * headers, key = value with bare or quoted keys, basic and literal strings,
 * booleans and arrays of strings over lines. Anything else a file says
 * (another table, an inline table, a number) is refused with its file and
 * line, never half-understood; keys this file does not know are ignored, as
 * containers/image ignores them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "open.h"
#include "registry.h"
#include "util.h"

#define CONF_MAX	(1u << 20)
#define DROPINS_MAX	256

struct parse {
	const char *file, *p, *end;
	int line;
	struct ra_regconf *c;
	enum { SEC_TOP, SEC_ALIASES, SEC_REGISTRY, SEC_MIRROR, SEC_OTHER } sec;
	struct rootasm_error *e;
};

static int perr(struct parse *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int perr(struct parse *x, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return ra_err_kind(x->e, ROOTASM_ERROR_USAGE, EINVAL, "read registries.conf", x->file, "line %d: %s", x->line,
			   msg);
}

static void skip_blank(struct parse *x, bool newlines)
{
	while (x->p < x->end) {
		if (*x->p == ' ' || *x->p == '\t' || *x->p == '\r') {
			x->p++;
		} else if (*x->p == '#') {
			while (x->p < x->end && *x->p != '\n')
				x->p++;
		} else if (*x->p == '\n' && newlines) {
			x->line++;
			x->p++;
		} else {
			break;
		}
	}
}

/* A basic ("...", escapes) or literal ('...') string, or with @bare a bare key; caller frees *ret. */
static int string(struct parse *x, bool bare, char **ret)
{
	char q = x->p < x->end ? *x->p : 0, *out, *o;
	const char *s;

	if (bare && q != '"' && q != '\'') {
		s = x->p;
		while (x->p < x->end && (strchr("-_", *x->p) || (*x->p >= 'a' && *x->p <= 'z') ||
					 (*x->p >= 'A' && *x->p <= 'Z') || (*x->p >= '0' && *x->p <= '9')))
			x->p++;
		if (x->p == s)
			return perr(x, "a key expected");
		*ret = strndup(s, x->p - s);
		return *ret ? 0 : ra_oom(x->e, "read registries.conf");
	}
	if (q != '"' && q != '\'')
		return perr(x, "a string expected");
	out = o = malloc(x->end - x->p + 1);
	if (!out)
		return ra_oom(x->e, "read registries.conf");
	for (x->p++; x->p < x->end && *x->p != q && *x->p != '\n'; x->p++) {
		if (q == '"' && *x->p == '\\' && x->p + 1 < x->end) {
			x->p++;
			switch (*x->p) {
			case 'n': *o++ = '\n'; break;
			case 't': *o++ = '\t'; break;
			case '"': case '\\': *o++ = *x->p; break;
			default:
				free(out);
				return perr(x, "the escape \\%c is not one rootasm reads", *x->p);
			}
			continue;
		}
		if ((unsigned char)*x->p < 0x20 && *x->p != '\t') {
			free(out);
			return perr(x, "a control character in a string");
		}
		*o++ = *x->p;
	}
	if (x->p >= x->end || *x->p != q) {
		free(out);
		return perr(x, "a string without its closing %c", q);
	}
	x->p++;
	*o = '\0';
	*ret = out;
	return 0;
}

/* A value: a string (*str), a boolean (*b), or an array of strings (*arr, *n); what it was in *kind. */
struct value {
	char kind;	/* 's', 'b', 'a' */
	char *str;
	bool b;
	char **arr;
	size_t n;
};

static void value_free(struct value *v)
{
	free(v->str);
	for (size_t i = 0; i < v->n; i++)
		free(v->arr[i]);
	free(v->arr);
	memset(v, 0, sizeof(*v));
}

static int value(struct parse *x, struct value *v)
{
	int r;

	memset(v, 0, sizeof(*v));
	if (x->p < x->end && (*x->p == '"' || *x->p == '\'')) {
		v->kind = 's';
		return string(x, false, &v->str);
	}
	if (x->end - x->p >= 4 && !strncmp(x->p, "true", 4)) {
		v->kind = 'b';
		v->b = true;
		x->p += 4;
		return 0;
	}
	if (x->end - x->p >= 5 && !strncmp(x->p, "false", 5)) {
		v->kind = 'b';
		x->p += 5;
		return 0;
	}
	if (x->p >= x->end || *x->p != '[')
		return perr(x, "a string, true, false or an array of strings expected");
	v->kind = 'a';
	for (x->p++;;) {
		char **grown;

		skip_blank(x, true);
		if (x->p < x->end && *x->p == ']') {
			x->p++;
			return 0;
		}
		grown = v->n < 4096 ? realloc(v->arr, (v->n + 1) * sizeof(*v->arr)) : NULL;
		if (!grown) {
			value_free(v);
			return v->n < 4096 ? ra_oom(x->e, "read registries.conf") : perr(x, "an array of over 4096 items");
		}
		v->arr = grown;
		r = string(x, false, &v->arr[v->n]);
		if (r < 0) {
			value_free(v);
			return r;
		}
		v->n++;
		skip_blank(x, true);
		if (x->p < x->end && *x->p == ',')
			x->p++;
		else if (x->p >= x->end || *x->p != ']') {
			value_free(v);
			return perr(x, "',' or ']' expected in an array");
		}
	}
}

static int grow(void **arr, size_t n, size_t size)
{
	void *g = realloc(*arr, (n + 1) * size);

	if (!g)
		return -ENOMEM;
	memset((char *)g + n * size, 0, size);
	*arr = g;
	return 0;
}

static void registry_free(struct ra_regconf_registry *g)
{
	free(g->prefix);
	free(g->location);
	for (size_t i = 0; i < g->nmirrors; i++)
		free(g->mirrors[i].location);
	free(g->mirrors);
	memset(g, 0, sizeof(*g));
}

void ra_regconf_free(struct ra_regconf *c)
{
	strvn_free(c->search, c->nsearch);
	for (size_t i = 0; i < c->naliases; i++) {
		free(c->aliases[i].name);
		free(c->aliases[i].value);
		free(c->aliases[i].file);
	}
	free(c->aliases);
	for (size_t i = 0; i < c->nregs; i++)
		registry_free(&c->regs[i]);
	free(c->regs);
	free(c->search_file);
	free(c->mode_file);
	memset(c, 0, sizeof(*c));
}

static int want(struct parse *x, const char *key, const struct value *v, char kind)
{
	static const char *const names[] = { ['s'] = "a string", ['b'] = "true or false", ['a'] = "an array of strings" };

	return v->kind == kind ? 0 : perr(x, "%s: %s expected", key, names[(unsigned char)kind]);
}

static int take_str(char **dst, struct value *v)
{
	free(*dst);
	*dst = v->str;
	v->str = NULL;
	return 0;
}

static int keyval(struct parse *x, char *key, struct value *v)
{
	struct ra_regconf *c = x->c;
	struct ra_regconf_registry *g = c->nregs ? &c->regs[c->nregs - 1] : NULL;
	int r = 0;

	switch (x->sec) {
	case SEC_TOP:
		if (!strcmp(key, "unqualified-search-registries")) {
			r = want(x, key, v, 'a');
			if (r == 0) {
				strvn_free(c->search, c->nsearch);
				c->search = v->arr;
				c->nsearch = v->n;
				c->search_set = true;
				v->arr = NULL;
				v->n = 0;
				free(c->search_file);
				c->search_file = strdup(x->file);
			}
		} else if (!strcmp(key, "short-name-mode")) {
			r = want(x, key, v, 's');
			if (r == 0 && !strcmp(v->str, "enforcing"))
				c->mode = RA_SHORT_ENFORCING;
			else if (r == 0 && !strcmp(v->str, "permissive"))
				c->mode = RA_SHORT_PERMISSIVE;
			else if (r == 0 && !strcmp(v->str, "disabled"))
				c->mode = RA_SHORT_DISABLED;
			else if (r == 0)
				r = perr(x, "short-name-mode: \"enforcing\", \"permissive\" or \"disabled\", not \"%.64s\"",
					 v->str);
			if (r == 0) {
				free(c->mode_file);
				c->mode_file = strdup(x->file);
			}
		} else if (!strcmp(key, "registries") || !strcmp(key, "registry")) {
			r = perr(x, "%s: registries.conf version 1 is not read; write version 2 (registries.conf(5))", key);
		}
		break;
	case SEC_ALIASES:
		/* appended: a later alias of the same name wins (ra_regconf_alias() asks from the end) */
		r = want(x, key, v, 's');
		if (r < 0)
			break;
		if (grow((void **)&c->aliases, c->naliases, sizeof(*c->aliases)) < 0)
			return ra_oom(x->e, "read registries.conf");
		c->aliases[c->naliases].name = strdup(key);
		c->aliases[c->naliases].value = TAKE_PTR(v->str);
		c->aliases[c->naliases].file = strdup(x->file);
		if (!c->aliases[c->naliases].name || !c->aliases[c->naliases].file) {
			c->naliases++;
			return ra_oom(x->e, "read registries.conf");
		}
		c->naliases++;
		break;
	case SEC_REGISTRY:
		if (!strcmp(key, "prefix") || !strcmp(key, "location")) {
			r = want(x, key, v, 's');
			if (r == 0)
				take_str(key[0] == 'p' ? &g->prefix : &g->location, v);
		} else if (!strcmp(key, "insecure") || !strcmp(key, "blocked") || !strcmp(key, "mirror-by-digest-only")) {
			r = want(x, key, v, 'b');
			if (r == 0)
				*(key[0] == 'i' ? &g->insecure : key[0] == 'b' ? &g->blocked : &g->mirror_by_digest_only) = v->b;
		} else if (!strcmp(key, "mirror")) {
			r = perr(x, "mirror: write each as a [[registry.mirror]] table");
		}
		break;
	case SEC_MIRROR: {
		struct ra_regconf_mirror *m = &g->mirrors[g->nmirrors - 1];

		if (!strcmp(key, "location")) {
			r = want(x, key, v, 's');
			if (r == 0)
				take_str(&m->location, v);
		} else if (!strcmp(key, "insecure")) {
			r = want(x, key, v, 'b');
			if (r == 0)
				m->insecure = v->b;
		} else if (!strcmp(key, "pull-from-mirror")) {
			r = want(x, key, v, 's');
			if (r == 0 && !strcmp(v->str, "all"))
				m->only = 0;
			else if (r == 0 && !strcmp(v->str, "digest-only"))
				m->only = '@';
			else if (r == 0 && !strcmp(v->str, "tag-only"))
				m->only = ':';
			else if (r == 0)
				r = perr(x, "pull-from-mirror: \"all\", \"digest-only\" or \"tag-only\", not \"%.64s\"", v->str);
		}
		break;
	}
	case SEC_OTHER:
		break;
	}
	return r;
}

static int header(struct parse *x)
{
	bool arr = x->end - x->p >= 2 && x->p[1] == '[';
	const char *s = x->p + (arr ? 2 : 1), *close = memchr(s, ']', x->end - s);
	struct ra_regconf *c = x->c;
	char name[64];

	if (!close || close - s >= (long)sizeof(name) || (arr && (close + 1 >= x->end || close[1] != ']')))
		return perr(x, "a table header [NAME] or [[NAME]] expected");
	snprintf(name, sizeof(name), "%.*s", (int)(close - s), s);
	x->p = close + (arr ? 2 : 1);
	if (arr && !strcmp(name, "registry")) {
		if (c->nregs >= 4096 || grow((void **)&c->regs, c->nregs, sizeof(*c->regs)) < 0)
			return ra_oom(x->e, "read registries.conf");
		c->nregs++;
		x->sec = SEC_REGISTRY;
	} else if (arr && !strcmp(name, "registry.mirror")) {
		struct ra_regconf_registry *g = c->nregs ? &c->regs[c->nregs - 1] : NULL;

		if (!g)
			return perr(x, "[[registry.mirror]] before any [[registry]]");
		if (g->nmirrors >= 256 || grow((void **)&g->mirrors, g->nmirrors, sizeof(*g->mirrors)) < 0)
			return ra_oom(x->e, "read registries.conf");
		g->nmirrors++;
		x->sec = SEC_MIRROR;
	} else if (!arr && !strcmp(name, "aliases")) {
		x->sec = SEC_ALIASES;
	} else if (!arr && (!strcmp(name, "registries.search") || !strcmp(name, "registries.insecure") ||
			    !strcmp(name, "registries.block"))) {
		return perr(x, "[%s]: registries.conf version 1 is not read; write version 2 (registries.conf(5))", name);
	} else {
		x->sec = SEC_OTHER;	/* a table rootasm has no use for */
	}
	return 0;
}

static int parse_text(struct ra_regconf *c, const char *file, const char *buf, size_t len, struct rootasm_error *e)
{
	struct parse x = { .file = file, .p = buf, .end = buf + len, .line = 1, .c = c, .e = e };
	int r;

	for (;;) {
		_cleanup_free_ char *key = NULL;
		struct value v;

		skip_blank(&x, true);
		if (x.p >= x.end)
			return 0;
		if (*x.p == '[') {
			r = header(&x);
		} else {
			r = string(&x, true, &key);
			if (r < 0)
				return r;
			skip_blank(&x, false);
			if (x.p >= x.end || *x.p != '=')
				return perr(&x, "'=' expected after %.64s", key);
			x.p++;
			skip_blank(&x, false);
			r = value(&x, &v);
			if (r < 0)
				return r;
			r = keyval(&x, key, &v);
			value_free(&v);
		}
		if (r < 0)
			return r;
		skip_blank(&x, false);
		if (x.p < x.end && *x.p != '\n')
			return perr(&x, "the end of the line expected");
	}
}

/* The registry of @prefix in @c, or NULL. */
static struct ra_regconf_registry *by_prefix(struct ra_regconf *c, const char *prefix)
{
	for (size_t i = 0; i < c->nregs; i++) {
		const char *p = c->regs[i].prefix ? c->regs[i].prefix : c->regs[i].location;

		if (p && !strcmp(p, prefix))
			return &c->regs[i];
	}
	return NULL;
}

static int check_registries(struct ra_regconf *c, const char *file, struct rootasm_error *e)
{
	for (size_t i = 0; i < c->nregs; i++) {
		struct ra_regconf_registry *g = &c->regs[i];

		if (!g->prefix && !g->location)
			return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "read registries.conf", file,
					   "[[registry]] %zu has neither prefix nor location", i + 1);
		if (g->prefix && g->prefix[0] == '*' && (g->prefix[1] != '.' || strchr(g->prefix, '/') ||
							 (g->location && *g->location)))
			return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "read registries.conf", file,
					   "[[registry]] prefix %s: a wildcard is \"*.DOMAIN\", with no location", g->prefix);
		for (size_t k = 0; k < g->nmirrors; k++)
			if (!g->mirrors[k].location || !*g->mirrors[k].location)
				return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "read registries.conf", file,
						   "[[registry.mirror]] without a location");
	}
	return 0;
}

/* @d (a drop-in) over @c: what it sets replaces what @c had. */
static int merge(struct ra_regconf *c, struct ra_regconf *d)
{
	if (d->search_set) {
		strvn_free(c->search, c->nsearch);
		c->search = TAKE_PTR(d->search);
		c->nsearch = d->nsearch;
		d->nsearch = 0;
		c->search_set = true;
		free(c->search_file);
		c->search_file = TAKE_PTR(d->search_file);
	}
	if (d->mode_file) {
		c->mode = d->mode;
		free(c->mode_file);
		c->mode_file = TAKE_PTR(d->mode_file);
	}
	/* a drop-in's aliases after the file's: the later wins */
	for (size_t i = 0; i < d->naliases; i++) {
		if (grow((void **)&c->aliases, c->naliases, sizeof(*c->aliases)) < 0)
			return -ENOMEM;
		c->aliases[c->naliases++] = d->aliases[i];
		memset(&d->aliases[i], 0, sizeof(d->aliases[i]));
	}
	for (size_t i = 0; i < d->nregs; i++) {
		struct ra_regconf_registry *g = &d->regs[i], *old;

		old = by_prefix(c, g->prefix ? g->prefix : g->location);
		if (!old) {
			if (grow((void **)&c->regs, c->nregs, sizeof(*c->regs)) < 0)
				return -ENOMEM;
			old = &c->regs[c->nregs++];
		} else {
			registry_free(old);
		}
		*old = *g;
		memset(g, 0, sizeof(*g));
	}
	return 0;
}

/* Read @path into @c (missing: nothing, 0, unless @must). */
static int load_file(struct ra_regconf *c, int at, const char *name, const char *shown, bool must,
		     struct rootasm_error *e)
{
	_cleanup_close_ int fd = openat(at, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	_cleanup_free_ char *buf = NULL;
	char why[256];
	size_t len;
	int r;

	if (fd < 0 && errno == ENOENT && !must)
		return 0;
	if (fd < 0)
		return ra_err(e, errno, -EBADF, "read registries.conf", shown, NULL);
	r = ra_check_readable_file(fd, why, sizeof(why));
	if (r < 0)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, -r, "read registries.conf", shown, "%s", why);
	r = ra_read_all(fd, CONF_MAX, NULL, NULL, &buf, &len);
	if (r == -EFBIG)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EFBIG, "read registries.conf", shown, "larger than %u bytes",
				   CONF_MAX);
	if (r < 0)
		return ra_err(e, -r, -EBADF, "read registries.conf", shown, NULL);
	r = parse_text(c, shown, buf, len, e);
	return r < 0 ? r : check_registries(c, shown, e);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int load_dropins(struct ra_regconf *c, const char *dir, struct rootasm_error *e)
{
	DIR *d = opendir(dir);
	char *names[DROPINS_MAX];
	size_t n = 0;
	struct dirent *de;
	int r = 0;

	if (!d)
		return errno == ENOENT || errno == ENOTDIR ? 0 : ra_err(e, errno, -EBADF, "read registries.conf.d", dir, NULL);
	while ((de = readdir(d)) && n < DROPINS_MAX) {
		size_t l = strlen(de->d_name);

		if (de->d_name[0] != '.' && l > 5 && !strcmp(de->d_name + l - 5, ".conf") && !(names[n] = strdup(de->d_name)))
			r = ra_oom(e, "read registries.conf.d");
		else if (de->d_name[0] != '.' && l > 5 && !strcmp(de->d_name + l - 5, ".conf"))
			n++;
	}
	qsort(names, n, sizeof(*names), by_name);
	for (size_t i = 0; i < n; i++) {
		struct ra_regconf one = { 0 };
		char shown[4200];

		snprintf(shown, sizeof(shown), "%s/%s", dir, names[i]);
		if (r == 0)
			r = load_file(&one, dirfd(d), names[i], shown, false, e);
		if (r == 0 && merge(c, &one) < 0)
			r = ra_oom(e, "read registries.conf.d");
		ra_regconf_free(&one);
		free(names[i]);
	}
	closedir(d);
	return r;
}

int ra_regconf_load(struct ra_regconf *c, struct rootasm_error *e)
{
	const char *env = getenv("CONTAINERS_REGISTRIES_CONF"), *home = getenv("HOME");
	char user[4200], userd[4200];
	struct stat st;
	int r;

	memset(c, 0, sizeof(*c));
	snprintf(user, sizeof(user), "%s/.config/containers/registries.conf", home && *home ? home : "/nonexistent");
	snprintf(userd, sizeof(userd), "%s.d", user);
	if (env && *env)
		r = load_file(c, AT_FDCWD, env, env, true, e);
	else if (stat(user, &st) == 0)
		r = load_file(c, AT_FDCWD, user, user, true, e);
	else
		r = load_file(c, AT_FDCWD, RA_REGCONF_SYSTEM, RA_REGCONF_SYSTEM, false, e);
	if (r == 0)
		r = load_dropins(c, stat(userd, &st) == 0 ? userd : RA_REGCONF_SYSTEM ".d", e);
	if (r < 0)
		ra_regconf_free(c);
	return r;
}

/* Whether @name (HOST[/PATH], no tag) lies under @prefix: itself, or it followed by '/'; "*.DOMAIN": its hosts. */
static size_t matches(const char *name, const char *prefix)
{
	size_t pl = strlen(prefix), hl = strcspn(name, "/");

	if (prefix[0] == '*')
		return hl > pl - 1 && !strncmp(name + hl - (pl - 1), prefix + 1, pl - 1) ? pl : 0;
	return !strncmp(name, prefix, pl) && (name[pl] == '\0' || name[pl] == '/') ? pl : 0;
}

const struct ra_regconf_registry *ra_regconf_find(const struct ra_regconf *c, const char *name)
{
	const struct ra_regconf_registry *best = NULL;
	size_t bl = 0;

	for (size_t i = 0; i < c->nregs; i++) {
		const char *p = c->regs[i].prefix ? c->regs[i].prefix : c->regs[i].location;
		size_t l = matches(name, p);

		/* the longest prefix; of wildcards and names alike, an exact host beats "*." */
		if (l > bl) {
			best = &c->regs[i];
			bl = l;
		}
	}
	return best;
}

const struct ra_regconf_alias *ra_regconf_alias(const struct ra_regconf *c, const char *name)
{
	/* the last of that name: a later line or file overrides an earlier */
	for (size_t i = c->naliases; i-- > 0;)
		if (!strcmp(c->aliases[i].name, name))
			return &c->aliases[i];
	return NULL;
}
