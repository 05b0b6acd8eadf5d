// SPDX-License-Identifier: LGPL-2.1-or-later
/* The error context: one line that says what failed, on what path, and why. */
#include <stdio.h>
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

int ra_err(struct rootasm_error *e, int err, int fsfd, const char *op, const char *path,
	   const char *fmt, ...)
{
	if (err < 0)
		err = -err;
	if (!err)
		err = EIO;
	if (!e)
		return -err;
	e->err = err;
	e->usage = false;
	e->file[0] = '\0';
	e->line = e->column = 0;
	snprintf(e->op, sizeof(e->op), "%s", op ? op : "");
	snprintf(e->path, sizeof(e->path), "%s", path ? path : "");
	e->msg[0] = '\0';
	if (fsfd >= 0)
		ra_fs_messages(fsfd, e->msg, sizeof(e->msg));
	if (fmt && !e->msg[0]) {
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
		va_end(ap);
	}
	return -err;
}

/* One line, always: control characters from user input become '?'. */
static const char *one_line(char *buf)
{
	for (char *s = buf; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
	return buf;
}

const char *rootasm_error_format(const struct rootasm_error *e, char *buf, size_t size)
{
	int n = 0;

	buf[0] = '\0';
	if (e->file[0] && e->line)
		n = snprintf(buf, size, "%s:%u:%u: ", e->file, e->line, e->column);
	else if (e->file[0])
		n = snprintf(buf, size, "%s: ", e->file);
	if (n < 0 || (size_t)n >= size)
		return one_line(buf);
	if (e->usage) {
		/* Layout errors: the message is the whole story. */
		const char *m = e->msg[0] ? e->msg : strerror(e->err ? e->err : EINVAL);

		if (e->path[0] && strcmp(e->path, e->file))
			snprintf(buf + n, size - n, "%s %s: %s", e->op, e->path, m);
		else
			snprintf(buf + n, size - n, "%s%s%s", e->op, e->op[0] ? ": " : "", m);
		return one_line(buf);
	}
	snprintf(buf + n, size - n, "%s%s%s: %s%s%s%s", e->op, e->path[0] ? " " : "", e->path,
		 strerror(e->err ? e->err : EIO), e->msg[0] ? " (" : "", e->msg, e->msg[0] ? ")" : "");
	return one_line(buf);
}
