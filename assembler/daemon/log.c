// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rootasmd's log: stderr, one write per message. Under systemd stderr is a
 * stream to the journal, which reads a "<N>" at the start of each line as the
 * line's priority (sd-daemon(3): SD_ERR is "<3>", SD_INFO "<6>"); systemd says
 * so in JOURNAL_STREAM (the stream's "device:inode"), which is compared with
 * stderr itself, so a daemon started from a shell of a systemd unit, whose
 * stderr is something else, writes plain lines.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rootasmd.h"

static bool journal;

bool rd_log_init(void)
{
	const char *v = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	int n = 0;

	journal = v && sscanf(v, "%llu:%llu%n", &dev, &ino, &n) == 2 && !v[n] && fstat(2, &st) == 0 &&
		  st.st_dev == dev && st.st_ino == ino;
	return journal;
}

void rd_log(int prio, const char *fmt, ...)
{
	char *msg = NULL, *out = NULL, *p;
	size_t len = 0;
	FILE *f;
	va_list ap;
	int saved = errno;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	f = msg ? open_memstream(&out, &len) : NULL;
	if (!f) {
		/* out of memory: the message's format at least, on its own line */
		if (journal)
			fprintf(stderr, "<%d>%s\n", prio, msg ? msg : fmt);
		else
			fprintf(stderr, "rootasmd: %s\n", msg ? msg : fmt);
		free(msg);
		errno = saved;
		return;
	}
	/* every line of the message (a plan has several); a newline at its end ends the last one */
	for (char *line = msg; line; line = p) {
		p = strchr(line, '\n');
		if (p)
			*p++ = '\0';
		if (p && !*p)
			p = NULL;
		if (journal)
			fprintf(f, "<%d>%s\n", prio, line);
		else
			fprintf(f, "%s%s\n", line == msg ? "rootasmd: " : "", line);
	}
	if (fclose(f) == 0) {
		for (char *o = out; len;) {
			ssize_t w = write(2, o, len);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				break;
			o += w;
			len -= w;
		}
	}
	free(out);
	free(msg);
	errno = saved;
}
