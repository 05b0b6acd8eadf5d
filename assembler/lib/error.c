// SPDX-License-Identifier: LGPL-2.1-or-later
/* The error context: one line that says what failed, on what path, and why. */
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "proto.h"
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

int rootasm_error_print_json(const struct rootasm_error *e, FILE *out, bool pretty)
{
	struct ra_jb b = { false };
	json_t *o = json_object();

	/* one writer of the fields: the daemon's replies carry the same object (proto.c) */
	ra_jset(&b, o, "error", ra_error_json(e));
	return ra_jdump(&b, o, out, pretty);
}
