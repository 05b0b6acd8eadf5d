// SPDX-License-Identifier: LGPL-2.1-or-later
/* --via SOCKET (assemble, exec): the tree from rootasmd instead of this process. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "util.h"

int cli_via_assemble(const char *sock, const char *path, const uid_t *receivers, size_t n_receivers,
		     struct rootasm_error *e)
{
	struct rootasm_client_assemble_opts o = { .size = sizeof(o), .receivers = receivers, .n_receivers = n_receivers };
	struct rootasm_client *c = NULL;
	char *abs = NULL, *text = NULL;
	int r;

	if (!strcmp(path, "-")) {
		/* inline: the daemon reads no file of ours; host paths in it must be absolute */
		size_t len = 0;

		r = ra_read_upto(0, CLI_STDIN_MAX, &text, &len);
		if (r == -ENOMEM)
			return r;
		if (r < 0)
			text = strdup("");	/* a read error: what came (nothing), as the daemon then says */
		if (!text)
			return -ENOMEM;
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
