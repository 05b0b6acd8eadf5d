// SPDX-License-Identifier: LGPL-2.1-or-later
/* --via SOCKET (assemble, exec): the tree from rootasmd instead of this process. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

int cli_via_assemble(const char *sock, const char *path, struct rootasm_error *e)
{
	struct rootasm_client_assemble_opts o = { .size = sizeof(o) };
	struct rootasm_client *c = NULL;
	char *abs = NULL, *text = NULL;
	int r;

	if (!strcmp(path, "-")) {
		/* inline: the daemon reads no file of ours; host paths in it must be absolute */
		size_t cap = (1u << 20) + 1, len = 0;
		ssize_t n;

		text = malloc(cap + 1);
		if (!text)
			return -ENOMEM;
		while (len < cap && (n = read(0, text + len, cap - len)) != 0) {
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				break;
			len += n;
		}
		text[len] = '\0';
		o.layout_text = text;
		o.layout_len = len;
		o.name = "<stdin>";
	} else {
		/* the daemon resolves nothing against our working directory: the file's real path */
		abs = realpath(path, NULL);
		if (!abs) {
			r = -errno;
			memset(e, 0, sizeof(*e));
			e->err = -r;
			e->kind = ROOTASM_ERROR_USAGE;
			snprintf(e->op, sizeof(e->op), "open layout");
			snprintf(e->path, sizeof(e->path), "%s", path);
			return r;
		}
		o.layout = abs;
	}
	r = rootasm_client_connect(sock, &c, e);
	if (r == 0)
		r = rootasm_client_assemble(c, &o, e);
	rootasm_client_close(c);
	free(abs);
	free(text);
	return r;
}
