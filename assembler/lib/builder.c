// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The layout builder: a layout made with calls instead of text.
 *
 * Each call records one item of the layout as one line of YAML, every string
 * in it a double-quoted scalar escaped here (so no path, however strange, is
 * read as anything but itself). rootasm_layout_builder_finish() hands the text
 * to the load path of rootasm_layout_load_mem(): the same parse stage (the same
 * checks, target normalization, character refusals and limits), the same open
 * stage and the same authorize stage, for the same principal. There is one
 * model and one validator; the builder only spares the caller the printing
 * and escaping. A layout error's line is mapped back to the call that wrote
 * it: the error's op names that call, its message starts with the key.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "util.h"

struct ent {
	char *text;				/* one line, no newline */
	const char *call;			/* the call that wrote it */
};

struct ents {
	struct ent *v;
	size_t n, cap;
};

struct rootasm_layout_builder {
	struct ents layers, mounts, env;
	struct ent upper, creds, hostname;
	bool oom;
};

/* A string being built; on allocation failure it is NULL and stays so. */
struct sb {
	char *s;
	size_t len, cap;
	bool oom;
};

static void sb_add(struct sb *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->len + n + 1) * 2;
		char *t = realloc(b->s, cap);

		if (!t) {
			free(b->s);
			*b = (struct sb){ .oom = true };
			return;
		}
		b->s = t;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void __attribute__((format(printf, 2, 3))) sb_printf(struct sb *b, const char *fmt, ...)
{
	char buf[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(buf)) {
		free(b->s);
		*b = (struct sb){ .oom = true };
		return;
	}
	sb_add(b, buf, n);
}

/*
 * @s as a YAML double-quoted scalar. What YAML would not take raw (C0, DEL,
 * C1, U+FFFE/U+FFFF) is written as \uXXXX: the parse stage then sees the
 * character itself and refuses it where the text would be refused.
 */
static void sb_quote(struct sb *b, const char *s)
{
	size_t len = strlen(s);

	sb_add(b, "\"", 1);
	for (size_t i = 0, l; i < len; i += l) {
		unsigned int cp = 0;

		l = ra_utf8_next(s + i, len - i, &cp);
		if (!l) {
			/* not UTF-8: as it is, so that the parse says so */
			l = 1;
			sb_add(b, s + i, 1);
		} else if (cp == '"' || cp == '\\') {
			sb_add(b, "\\", 1);
			sb_add(b, s + i, 1);
		} else if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0xfffe || cp == 0xffff) {
			sb_printf(b, "\\u%04X", cp);
		} else {
			sb_add(b, s + i, l);
		}
	}
	sb_add(b, "\"", 1);
}

/* @key (the text before the value, "- {image: ") and @value quoted; nothing when @value is NULL. */
static void sb_field(struct sb *b, const char *key, const char *value)
{
	if (!value)
		return;
	sb_add(b, key, strlen(key));
	sb_quote(b, value);
}

static int ents_add(struct rootasm_layout_builder *bl, struct ents *es, struct sb *b, const char *call)
{
	if (b->oom || !b->s)
		goto oom;
	if (es->n == es->cap) {
		size_t cap = es->cap ? es->cap * 2 : 8;
		struct ent *v = reallocarray(es->v, cap, sizeof(*v));

		if (!v)
			goto oom;
		es->v = v;
		es->cap = cap;
	}
	es->v[es->n++] = (struct ent){ .text = b->s, .call = call };
	return 0;
oom:
	free(b->s);
	bl->oom = true;
	return -ENOMEM;
}

static int ent_set(struct rootasm_layout_builder *bl, struct ent *en, struct sb *b, const char *call)
{
	if (b->oom || !b->s) {
		free(b->s);
		bl->oom = true;
		return -ENOMEM;
	}
	free(en->text);
	*en = (struct ent){ .text = b->s, .call = call };
	return 0;
}

/*
 * One line of the layout, @head, then each of @key1/@value1 and @key2/@value2
 * given (sb_field()), then @tail: added to the list @es or set as @en, by @call.
 */
static int put(struct rootasm_layout_builder *b, struct ents *es, struct ent *en, const char *head, const char *key1,
	       const char *value1, const char *key2, const char *value2, const char *tail, const char *call)
{
	struct sb s = { 0 };

	sb_add(&s, head, strlen(head));
	sb_field(&s, key1, value1);
	sb_field(&s, key2, value2);
	sb_add(&s, tail, strlen(tail));
	return es ? ents_add(b, es, &s, call) : ent_set(b, en, &s, call);
}

static void ents_free(struct ents *es)
{
	for (size_t i = 0; i < es->n; i++)
		free(es->v[i].text);
	free(es->v);
}

int rootasm_layout_builder_new(struct rootasm_layout_builder **ret)
{
	if (!ret)
		return -EINVAL;
	*ret = calloc(1, sizeof(**ret));
	return *ret ? 0 : -ENOMEM;
}

void rootasm_layout_builder_free(struct rootasm_layout_builder *b)
{
	if (!b)
		return;
	ents_free(&b->layers);
	ents_free(&b->mounts);
	ents_free(&b->env);
	free(b->upper.text);
	free(b->creds.text);
	free(b->hostname.text);
	free(b);
}

int rootasm_layout_builder_add_image_layer(struct rootasm_layout_builder *b, const char *path, const char *fstype)
{
	if (!b || !path)
		return -EINVAL;
	return put(b, &b->layers, NULL, "", "- {image: ", path, ", type: ", fstype, "}",
		   "rootasm_layout_builder_add_image_layer");
}

int rootasm_layout_builder_add_dir_layer(struct rootasm_layout_builder *b, const char *path)
{
	if (!b || !path)
		return -EINVAL;
	return put(b, &b->layers, NULL, "", "- {dir: ", path, NULL, NULL, "}", "rootasm_layout_builder_add_dir_layer");
}

int rootasm_layout_builder_set_upper_tmpfs(struct rootasm_layout_builder *b, const char *size)
{
	if (!b)
		return -EINVAL;
	return put(b, NULL, &b->upper, "upper: {tmpfs: {", "size: ", size, NULL, NULL, "}}",
		   "rootasm_layout_builder_set_upper_tmpfs");
}

int rootasm_layout_builder_set_upper_dir(struct rootasm_layout_builder *b, const char *path)
{
	if (!b || !path)
		return -EINVAL;
	return put(b, NULL, &b->upper, "", "upper: {dir: ", path, NULL, NULL, "}", "rootasm_layout_builder_set_upper_dir");
}

#define BUILDER_ATTRS (ROOTASM_BUILDER_RO | ROOTASM_BUILDER_NOSUID | ROOTASM_BUILDER_NODEV | ROOTASM_BUILDER_NOEXEC)

/* ", options: [...]" for @flags (known to be valid), nothing when none. */
static void sb_options(struct sb *s, unsigned int flags, const char *extra1, const char *extra2)
{
	static const struct { unsigned int flag; const char *name; } names[] = {
		{ ROOTASM_BUILDER_RO, "ro" }, { ROOTASM_BUILDER_NOSUID, "nosuid" },
		{ ROOTASM_BUILDER_NODEV, "nodev" }, { ROOTASM_BUILDER_NOEXEC, "noexec" },
		{ ROOTASM_BUILDER_RECURSIVE, "recursive" },
	};
	bool first = true;

	if (!flags && !extra1 && !extra2)
		return;
	sb_add(s, ", options: [", 12);
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		if (!(flags & names[i].flag))
			continue;
		sb_printf(s, "%s\"%s\"", first ? "" : ", ", names[i].name);
		first = false;
	}
	for (const char *x = extra1; x; x = x == extra1 ? extra2 : NULL) {
		sb_add(s, first ? "" : ", ", first ? 0 : 2);
		sb_quote(s, x);
		first = false;
	}
	sb_add(s, "]", 1);
}

int rootasm_layout_builder_add_bind(struct rootasm_layout_builder *b, const char *source, const char *target,
				    unsigned int flags)
{
	struct sb s = { 0 };

	if (!b || !source || !target || (flags & ~(BUILDER_ATTRS | ROOTASM_BUILDER_RECURSIVE)))
		return -EINVAL;
	sb_field(&s, "- {bind: ", source);
	sb_field(&s, ", target: ", target);
	sb_options(&s, flags, NULL, NULL);
	sb_add(&s, "}", 1);
	return ents_add(b, &b->mounts, &s, "rootasm_layout_builder_add_bind");
}

int rootasm_layout_builder_add_tmpfs(struct rootasm_layout_builder *b, const char *target, const char *size,
				     unsigned int mode, unsigned int flags)
{
	_cleanup_free_ char *sz = NULL;
	struct sb s = { 0 };
	char m[32];

	if (!b || !target || mode > 07777 || (flags & ~BUILDER_ATTRS))
		return -EINVAL;
	if (size && asprintf(&sz, "size=%s", size) < 0) {
		b->oom = true;
		return -ENOMEM;
	}
	snprintf(m, sizeof(m), "mode=%o", mode);
	sb_field(&s, "- {tmpfs: ", target);
	sb_options(&s, flags, sz ? sz : mode ? m : NULL, sz && mode ? m : NULL);
	sb_add(&s, "}", 1);
	return ents_add(b, &b->mounts, &s, "rootasm_layout_builder_add_tmpfs");
}

int rootasm_layout_builder_add_image_volume(struct rootasm_layout_builder *b, const char *path, const char *target,
					    const char *fstype, unsigned int flags)
{
	struct sb s = { 0 };

	if (!b || !path || !target || (flags & ~BUILDER_ATTRS))
		return -EINVAL;
	sb_field(&s, "- {image: ", path);
	sb_field(&s, ", target: ", target);
	sb_field(&s, ", type: ", fstype);
	sb_options(&s, flags, NULL, NULL);
	sb_add(&s, "}", 1);
	return ents_add(b, &b->mounts, &s, "rootasm_layout_builder_add_image_volume");
}

int rootasm_layout_builder_set_override_creds(struct rootasm_layout_builder *b, uid_t uid, gid_t gid,
					      const gid_t *groups, size_t ngroups)
{
	struct sb s = { 0 };

	if (!b || (ngroups && !groups))
		return -EINVAL;
	sb_printf(&s, "overlay: {override_creds: {uid: %u, gid: %u", (unsigned int)uid, (unsigned int)gid);
	if (ngroups) {
		sb_add(&s, ", groups: [", 11);
		for (size_t i = 0; i < ngroups; i++)
			sb_printf(&s, "%s%u", i ? ", " : "", (unsigned int)groups[i]);
		sb_add(&s, "]", 1);
	}
	sb_add(&s, "}}", 2);
	return ent_set(b, &b->creds, &s, "rootasm_layout_builder_set_override_creds");
}

int rootasm_layout_builder_set_exec_hostname(struct rootasm_layout_builder *b, const char *hostname)
{
	if (!b || !hostname)
		return -EINVAL;
	return put(b, NULL, &b->hostname, "", "  hostname: ", hostname, NULL, NULL, "",
		   "rootasm_layout_builder_set_exec_hostname");
}

int rootasm_layout_builder_add_exec_env(struct rootasm_layout_builder *b, const char *assignment)
{
	if (!b || !assignment)
		return -EINVAL;
	return put(b, &b->env, NULL, "", "  - ", assignment, NULL, NULL, "", "rootasm_layout_builder_add_exec_env");
}

/* The text, and which call wrote each line (calls[0] is line 1). */
static int render(const struct rootasm_layout_builder *b, struct sb *s, const char ***ret_calls, size_t *ret_n)
{
	static const char finish[] = "rootasm_layout_builder_finish";
	size_t max = 8 + b->layers.n + b->mounts.n + b->env.n, n = 0;
	const char **calls = calloc(max, sizeof(*calls));

	if (!calls)
		return -ENOMEM;
#define LINE(text, call) do { sb_add(s, text, strlen(text)); sb_add(s, "\n", 1); calls[n++] = (call); } while (0)
	LINE("version: 1", finish);
	if (b->layers.n)
		LINE("layers:", finish);
	for (size_t i = 0; i < b->layers.n; i++)
		LINE(b->layers.v[i].text, b->layers.v[i].call);
	if (b->upper.text)
		LINE(b->upper.text, b->upper.call);
	if (b->creds.text)
		LINE(b->creds.text, b->creds.call);
	if (b->mounts.n)
		LINE("mounts:", finish);
	for (size_t i = 0; i < b->mounts.n; i++)
		LINE(b->mounts.v[i].text, b->mounts.v[i].call);
	if (b->hostname.text || b->env.n)
		LINE("exec:", finish);
	if (b->hostname.text)
		LINE(b->hostname.text, b->hostname.call);
	if (b->env.n)
		LINE("  env:", "rootasm_layout_builder_add_exec_env");
	for (size_t i = 0; i < b->env.n; i++)
		LINE(b->env.v[i].text, b->env.v[i].call);
#undef LINE
	if (s->oom) {
		free(calls);
		return -ENOMEM;
	}
	*ret_calls = calls;
	*ret_n = n;
	return 0;
}

struct fin {
	const char **calls;
	size_t ncalls;
	void (*diag)(const struct rootasm_error *e, void *userdata);
	void *userdata;
};

/* A layout error at line N of the text: the call that wrote that line, the key in the message. */
static void to_call(const struct fin *f, struct rootasm_error *e)
{
	char msg[sizeof(e->msg)];

	if (!e->line || e->line > f->ncalls)
		return;
	if (e->op[0])
		snprintf(msg, sizeof(msg), "%s: %s", e->op, e->msg);
	else
		snprintf(msg, sizeof(msg), "%s", e->msg);
	memcpy(e->msg, msg, sizeof(msg));
	snprintf(e->op, sizeof(e->op), "%s", f->calls[e->line - 1]);
	memset(e->file, 0, sizeof(e->file));
	e->line = e->column = 0;
}

static void fin_diag(const struct rootasm_error *e, void *userdata)
{
	const struct fin *f = userdata;
	struct rootasm_error *c = malloc(sizeof(*c));

	/* no memory: the error as the parse stage gave it, rather than none */
	if (c) {
		*c = *e;
		to_call(f, c);
	}
	f->diag(c ? c : e, f->userdata);
	free(c);
}

int rootasm_layout_builder_finish(struct rootasm_layout_builder *b, struct rootasm_ctx *ctx,
				  const struct rootasm_load_opts *opts, struct rootasm_layout **ret,
				  struct rootasm_error *e)
{
	struct rootasm_load_opts o = { .size = sizeof(o) };
	struct fin f = { 0 };
	struct sb s = { 0 };
	int r;

	if (!b || !ret)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "rootasm_layout_builder_finish", NULL,
				   "no builder or no place for the layout");
	if (b->oom)
		return ra_oom(e, "rootasm_layout_builder_finish");
	if (opts) {
		/* the size rule of rootasm.h, then the caller's fields over the defaults */
		r = RA_OPTS_CHECK(opts, struct rootasm_load_opts, offsetof(struct rootasm_load_opts, diag),
				  "rootasm_layout_builder_finish", NULL, e);
		if (r < 0)
			return r;
		memcpy(&o, opts, opts->size < sizeof(o) ? opts->size : sizeof(o));
		o.size = sizeof(o);
	}
	if (!o.name)
		o.name = "(builder)";
	r = render(b, &s, &f.calls, &f.ncalls);
	if (r < 0)
		return ra_oom(e, "rootasm_layout_builder_finish");
	if (o.diag) {
		f.diag = o.diag;
		f.userdata = o.userdata;
		o.diag = fin_diag;
		o.userdata = &f;
	}
	r = rootasm_layout_load_mem(ctx, s.s, s.len, &o, ret, e);
	if (r < 0 && e)
		to_call(&f, e);
	free(f.calls);
	free(s.s);
	return r;
}
