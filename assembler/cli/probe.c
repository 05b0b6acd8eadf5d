// SPDX-License-Identifier: LGPL-2.1-or-later
/* rootasm probe [--refresh | --via SOCKET] [--json] */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <jansson.h>

#include "cli.h"
#include "json.h"

static const char help[] =
	"Usage: rootasm probe [OPTION...]\n"
	"Try each kernel feature rootasm uses on a throwaway detached tmpfs (never read\n"
	"off the version number) and print one line each: present, absent (the kernel\n"
	"lacks it), or not-permitted (this process may not try it: no CAP_SYS_ADMIN,\n"
	"no access to loop devices). The answers are kept once per boot in\n"
	"/run/rootasm/probe.cache (written by root, readable by all) and taken from\n"
	"there while the boot, the kernel, the modules and sysctls that can change\n"
	"them and the caller's namespaces and rights stay the same.\n"
	"\n"
	"  --refresh      probe every feature again and rewrite the kept answers\n"
	"  --via SOCKET   the answers of rootasmd at SOCKET (its kernel, its rights):\n"
	"                 exit 0 only when it answered (a readiness check)\n"
	"  --json[=pretty] an array of {feature, state, present, description, detail}\n"
	"  -q, --quiet    only the features that are not present\n"
	"  --debug        trace each probe\n"
	"  -h, --help     this text\n";

/* The daemon's answers, printed as ours are. */
static int probe_via(const char *sock)
{
	struct rootasm_error e = { 0 };
	struct rootasm_client *c = NULL;
	char *text = NULL;
	json_t *rep, *arr, *f;
	size_t i;
	int r;

	r = rootasm_client_connect(sock, &c, &e);
	if (r == 0)
		r = rootasm_client_probe(c, &text, &e);
	rootasm_client_close(c);
	if (r < 0)
		return cli_fail(&e);
	rep = json_loadb(text, strlen(text), 0, NULL);
	free(text);
	arr = json_object_get(rep, "features");
	if (!json_is_array(arr)) {
		json_decref(rep);
		return cli_errno(EBADMSG, "probe via rootasmd (a reply without its features)");
	}
	if (cli.json) {
		r = cli_json_out(json_incref(arr));
		json_decref(rep);
		return r < 0 ? EXIT_RUNTIME : 0;
	}
	json_array_foreach(arr, i, f) {
		const char *detail = json_string_value(json_object_get(f, "detail"));

		if (!cli.quiet || !json_is_true(json_object_get(f, "present")))
			printf("%-38s %-13s %s%s%s%s\n", json_string_value(json_object_get(f, "feature")),
			       json_string_value(json_object_get(f, "state")),
			       json_string_value(json_object_get(f, "description")), detail && *detail ? " [" : "",
			       detail ? detail : "", detail && *detail ? "]" : "");
	}
	json_decref(rep);
	return 0;
}

int cmd_probe(int argc, char **argv)
{
	static const struct option opts[] = { { "refresh", no_argument, NULL, 'R' }, CLI_ARG("via", 'v'),
					      CLI_COMMON_LONGOPTS, { 0 } };
	unsigned int n = rootasm_feature_count();
	const char *via = NULL;
	bool refresh = false;
	json_t *arr = NULL;
	int c, r;

	while ((c = cli_getopt(argc, argv, NULL, opts, help, &r)) >= 0) {
		refresh |= c == 'R';
		if (c == 'v')
			via = optarg;
	}
	if (c == CLI_OPTS_EXIT)
		return r;
	if ((r = cli_no_operand(argc, argv)) != CLI_GO_ON)
		return r;
	if (via && refresh)
		return cli_usage("--refresh probes this process's kernel and rights; with --via the daemon's are asked");
	if (via)
		return probe_via(via);
	if (refresh)
		rootasm_probe_refresh(cli_context());
	if (cli.json) {
		/* the library's one form of the answers, as the daemon's probe reply */
		arr = ra_features_json(cli_context());
		if (!arr)
			return cli_errno(ENOMEM, "probe");
		return cli_json_out(arr) < 0 ? EXIT_RUNTIME : 0;
	}
	for (unsigned int f = 0; f < n; f++) {
		char detail[256];

		r = rootasm_probe_feature(cli_context(), f, detail, sizeof(detail));
		if (!cli.quiet || r <= 0)
			printf("%-38s %-13s %s%s%s%s\n", rootasm_feature_name(f), ra_feature_state(r), rootasm_feature_desc(f),
			       detail[0] ? " [" : "", detail, detail[0] ? "]" : "");
	}
	return 0;
}
