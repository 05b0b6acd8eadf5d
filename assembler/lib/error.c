// SPDX-License-Identifier: LGPL-2.1-or-later
/* The error context: one line that says what failed, on what path, and why. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

void ra_fs_messages(int fsfd, char *buf, size_t size)
{
	size_t used = 0;
	char line[512];

	buf[0] = '\0';
	for (;;) {
		/* Each read() returns one message: "e ovl: ...", "w ...", "i ..." */
		ssize_t n = read(fsfd, line, sizeof(line) - 1);

		if (n <= 0)
			break;
		line[n] = '\0';
		if (n > 0 && line[n - 1] == '\n')
			line[--n] = '\0';
		if (n > 2 && line[1] == ' ' && used + 3 < size) {
			int w = snprintf(buf + used, size - used, "%s%s", used ? "; " : "", line + 2);

			used = w < 0 ? used : (size_t)w + used >= size ? size - 1 : used + w;
		}
	}
}

/*
 * The whole path and file of the last error this thread filled, when
 * struct rootasm_error had to cut them: rootasm_err_set() takes them from
 * here for that very struct. Freed at the thread's exit.
 */
struct long_text {
	const struct rootasm_error *e;
	char *path, *file;
};

static __thread struct long_text long_text;
static pthread_key_t long_key;
static pthread_once_t long_once = PTHREAD_ONCE_INIT;
static bool long_key_ok;

static void long_free(void *p)
{
	struct long_text *t = p;

	free(t->path);
	free(t->file);
	*t = (struct long_text){ NULL };
}

static void long_init(void)
{
	long_key_ok = pthread_key_create(&long_key, long_free) == 0;
}

void ra_err_long(const struct rootasm_error *e, const char *path, const char *file)
{
	bool lp = path && strlen(path) >= sizeof(e->path), lf = file && strlen(file) >= sizeof(e->file);

	if (long_text.e == e || lp || lf)
		long_free(&long_text);
	if (!lp && !lf)
		return;
	pthread_once(&long_once, long_init);
	if (!long_key_ok || pthread_setspecific(long_key, &long_text))
		return;
	long_text.path = lp ? strdup(path) : NULL;
	long_text.file = lf ? strdup(file) : NULL;
	long_text.e = e;
}

static int fill(struct rootasm_error *e, enum rootasm_error_kind kind, int err, int fsfd, const char *op,
		const char *path, const char *fmt, va_list ap)
{
	if (err < 0)
		err = -err;
	if (!err)
		err = EIO;
	if (!e)
		return -err;
	memset(e, 0, sizeof(*e));
	e->err = err;
	e->kind = kind;
	snprintf(e->op, sizeof(e->op), "%s", op && *op ? op : "rootasm");
	snprintf(e->path, sizeof(e->path), "%s", path ? path : "");
	ra_err_long(e, path, NULL);
	if (fsfd >= 0)
		ra_fs_messages(fsfd, e->msg, sizeof(e->msg));
	if (fmt && !e->msg[0])
		vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	return -err;
}

int ra_err(struct rootasm_error *e, int err, int fsfd, const char *op, const char *path,
	   const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = fill(e, ROOTASM_ERROR_RUNTIME, err, fsfd, op, path, fmt, ap);
	va_end(ap);
	return r;
}

int ra_err_kind(struct rootasm_error *e, enum rootasm_error_kind kind, int err, const char *op,
		const char *path, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = fill(e, kind, err, -EBADF, op, path, fmt, ap);
	va_end(ap);
	return r;
}

int ra_oom(struct rootasm_error *e, const char *op)
{
	return ra_err(e, ENOMEM, -EBADF, op, NULL, "out of memory");
}

int ra_opts_check(const void *o, size_t size, size_t min, size_t known, const char *name, const char *op,
		  const char *what, struct rootasm_error *e)
{
	int r = o ? ra_opts_size(o, size, min, known) : 0;

	if (r == -E2BIG)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, E2BIG, op, what,
				   "struct %s of %zu bytes sets fields this library (%s) does not know", name, size,
				   ROOTASM_VERSION_STRING);
	if (r < 0)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, op, what,
				   "struct %s.size is %zu: set it to sizeof(struct %s)", name, size, name);
	return 0;
}

const char *rootasm_error_format(const struct rootasm_error *e, char *buf, size_t size)
{
	/* every field, whole, and the words between them: then escaped into @buf */
	char line[sizeof(e->file) + sizeof(e->op) + sizeof(e->path) + sizeof(e->msg) + 256];
	size_t n = 0;
	int w = 0;

	if (!size)
		return buf;
	line[0] = '\0';
	if (e->file[0] && e->line)
		w = snprintf(line, sizeof(line), "%s:%u:%u: ", e->file, e->line, e->column);
	else if (e->file[0])
		w = snprintf(line, sizeof(line), "%s: ", e->file);
	n = w > 0 ? (size_t)w : 0;
	if (e->kind == ROOTASM_ERROR_USAGE) {
		/* Layout errors: the message is the whole story. */
		const char *m = e->msg[0] ? e->msg : strerror(e->err ? e->err : EINVAL);

		if (e->path[0] && strcmp(e->path, e->file))
			snprintf(line + n, sizeof(line) - n, "%s %s: %s", e->op, e->path, m);
		else
			snprintf(line + n, sizeof(line) - n, "%s%s%s", e->op, e->op[0] ? ": " : "", m);
	} else {
		snprintf(line + n, sizeof(line) - n, "%s%s%s: %s%s%s%s", e->op, e->path[0] ? " " : "", e->path,
			 strerror(e->err ? e->err : EIO), e->msg[0] ? " (" : "", e->msg, e->msg[0] ? ")" : "");
	}
	/* one line, always, and nothing a terminal would act on: ESC as \x1b, U+202E as \u202e */
	return ra_escape(line, buf, size);
}

/* ------------------------------------------------------ struct rootasm_err */

struct rootasm_err {
	int err;
	enum rootasm_error_kind kind;
	char *op, *path, *msg, *file, *feature;
	unsigned int line, column;
};

int rootasm_err_new(struct rootasm_err **ret)
{
	if (!ret)
		return -EINVAL;
	*ret = calloc(1, sizeof(**ret));
	return *ret ? 0 : -ENOMEM;
}

static void err_clear(struct rootasm_err *err)
{
	free(err->op);
	free(err->path);
	free(err->msg);
	free(err->file);
	free(err->feature);
	*err = (struct rootasm_err){ 0 };
}

void rootasm_err_free(struct rootasm_err *err)
{
	if (!err)
		return;
	err_clear(err);
	free(err);
}

/* @s of a fixed field of @size bytes, or the whole text the library kept of it (@full). */
static char *field(const char *s, size_t size, const char *full)
{
	if (full && !strncmp(full, s, size - 1))
		return strdup(full);
	return strndup(s, size);
}

int rootasm_err_set(struct rootasm_err *err, const struct rootasm_error *e)
{
	struct rootasm_err n = { 0 };
	bool mine = long_text.e == e;

	if (!err || !e)
		return -EINVAL;
	n.err = e->err;
	n.kind = e->kind;
	n.line = e->line;
	n.column = e->column;
	n.op = strndup(e->op, sizeof(e->op));
	n.path = field(e->path, sizeof(e->path), mine ? long_text.path : NULL);
	n.msg = strndup(e->msg, sizeof(e->msg));
	n.file = field(e->file, sizeof(e->file), mine ? long_text.file : NULL);
	n.feature = strndup(e->feature, sizeof(e->feature));
	if (!n.op || !n.path || !n.msg || !n.file || !n.feature) {
		err_clear(&n);
		return -ENOMEM;
	}
	err_clear(err);
	*err = n;
	return 0;
}

int rootasm_err_errno(const struct rootasm_err *err)
{
	return err->err;
}

int rootasm_err_kind(const struct rootasm_err *err)
{
	return err->kind;
}

#define ERR_STR(name, f) \
	const char *rootasm_err_##name(const struct rootasm_err *err) { return err->f ? err->f : ""; }
ERR_STR(op, op)
ERR_STR(path, path)
ERR_STR(message, msg)
ERR_STR(file, file)
ERR_STR(feature, feature)
#undef ERR_STR

unsigned int rootasm_err_line(const struct rootasm_err *err)
{
	return err->line;
}

unsigned int rootasm_err_column(const struct rootasm_err *err)
{
	return err->column;
}
