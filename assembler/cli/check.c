// SPDX-License-Identifier: LGPL-2.1-or-later
/* rootasm check [--offline] [--json] LAYOUT | rootasm check --live DIR */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char help[] =
	"Usage: rootasm check [OPTION...] LAYOUT\n"
	"       rootasm check --live [OPTION...] DIR\n"
	"       rootasm check --as USER[:USERNS] [--layout-dir DIR]... [--source-dir DIR]... LAYOUT\n"
	"Validate LAYOUT and print its plan: the operations `assemble` makes, in order,\n"
	"with the layout line of each, its syscall route, idmaps, tmpfs options and the\n"
	"override_creds credential. Every problem is reported, not only the first.\n"
	"\n"
	"  --offline      validate the text only: open none of the host paths it names\n"
	"                 (nested layouts are not read)\n"
	"  --live         print the mounts of the tree attached at DIR, read back from\n"
	"                 the kernel with statmount (with their id mappings)\n"
	"  --as USER[:USERNS]\n"
	"                 the plan that USER (a name or uid, with its groups) would get,\n"
	"                 as rootasmd gives it to a client that is not an administrator:\n"
	"                 the layout read and its host objects opened with USER's rights,\n"
	"                 what USER may not have refused or reduced; USERNS names a user\n"
	"                 namespace file (/proc/PID/ns/user) the tree is for (needs root)\n"
	"  --layout-dir DIR, --source-dir DIR\n"
	"                 with --as: the limits of a rootasmd policy rule (its \"layouts\",\n"
	"                 its \"sources\"): LAYOUT must lie in a layout directory, every\n"
	"                 host object in a source directory (each option repeatable)\n"
	"  --json[=pretty] the plan (or the mounts) as JSON; errors as JSON on stderr\n"
	"  -q, --quiet    print no plan (nor mounts): validate only, the exit status says\n"
	"  --debug        trace what is opened and probed\n"
	"  -h, --help     this text\n"
	"\n"
	"LAYOUT '-' is read from standard input. Exit status: 0 valid, 2 invalid, 1 other failures.\n";

/* --as USER[:USERNS]: a user principal (USER's uid, primary gid and groups from the user database). */
static int principal_of(const char *arg, struct rootasm_principal **ret)
{
	struct rootasm_error e = { 0 };
	char user[256], *end;
	const char *ns = strchr(arg, ':');
	struct passwd *pw;
	int nsfd = -1, r;
	unsigned long uid;

	if ((ns ? (size_t)(ns - arg) : strlen(arg)) >= sizeof(user) || arg == ns || !*arg)
		return cli_usage("--as '%s': USER[:USERNS]", arg);
	snprintf(user, sizeof(user), "%.*s", (int)(ns ? ns - arg : (long)strlen(arg)), arg);
	errno = 0;
	uid = strtoul(user, &end, 10);
	if (!*end && user[0] >= '0' && user[0] <= '9') {
		if (errno || uid >= 4294967295UL)
			return cli_usage("--as '%s': not a uid", user);
	} else {
		pw = getpwnam(user);
		if (!pw)
			return cli_usage("--as '%s': no such user", user);
		uid = pw->pw_uid;
	}
	if (ns) {
		nsfd = open(ns + 1, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (nsfd < 0)
			return cli_usage("--as: user namespace '%s': %s", ns + 1, strerror(errno));
	}
	r = rootasm_principal_of_uid((uid_t)uid, nsfd, ret, &e);
	if (nsfd >= 0)
		close(nsfd);
	return r < 0 ? cli_fail(&e) : 0;
}

int cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {
		CLI_COMMON_LONGOPTS, CLI_FLAG("offline", 'o'), CLI_FLAG("live", 'l'), CLI_ARG("as", 'a'),
		CLI_ARG("layout-dir", 'L'), CLI_ARG("source-dir", 'S'), { 0 },
	};
	struct rootasm_principal *p = NULL;
	const char *as = NULL, *ldirs[64], *sdirs[64];
	size_t nl = 0, ns = 0;
	struct rootasm_layout *l;
	bool live = false, offline = false;
	const char *path;
	int c, r;

	/* options and the operand in any order (getopt permutes them) */
	while ((c = cli_getopt(argc, argv, NULL, opts, help, &r)) >= 0) {
		if (c == 'o')
			offline = true;
		else if (c == 'l')
			live = true;
		else if (c == 'a')
			as = optarg;
		else if (c == 'L' || c == 'S') {
			const char **v = c == 'L' ? ldirs : sdirs;
			size_t *n = c == 'L' ? &nl : &ns;

			if (*n == 64)
				return cli_usage("at most 64 of --%s", c == 'L' ? "layout-dir" : "source-dir");
			v[(*n)++] = optarg;
		}
	}
	if (c == CLI_OPTS_EXIT)
		return r;
	if ((r = cli_last_operand(argc, argv, live ? "DIR" : "LAYOUT", NULL, &path)) != CLI_GO_ON)
		return r;
	if (live && offline)
		return cli_usage("--live and --offline do not go together");
	if (live) {
		struct rootasm_error e = { 0 };

		if (cli.quiet && !cli.json) {
			/* the same reading of the tree, nothing printed */
			FILE *null = fopen("/dev/null", "we");

			if (!null)
				return cli_errno(errno, "open /dev/null");
			r = rootasm_tree_print(path, null, false, &e);
			fclose(null);
		} else {
			r = rootasm_tree_print(path, stdout, cli.json, &e);
		}
		return r < 0 ? cli_fail(&e) : 0;
	}
	if (as && (live || offline))
		return cli_usage("--as goes with neither --live nor --offline (the rights are judged on the host objects)");
	if ((nl || ns) && !as)
		return cli_usage("--layout-dir and --source-dir limit the principal of --as");
	if (as) {
		struct rootasm_error e = { 0 };

		r = principal_of(as, &p);
		if (r)
			return r;
		if ((nl && rootasm_principal_limit(p, ROOTASM_LIMIT_LAYOUTS, ldirs, nl, &e) < 0) ||
		    (ns && rootasm_principal_limit(p, ROOTASM_LIMIT_SOURCES, sdirs, ns, &e) < 0)) {
			rootasm_principal_free(p);
			return cli_fail(&e);
		}
		cli.principal = p;
	}
	r = cli_load(path, CLI_LOAD_ALL_ERRORS | (offline ? ROOTASM_LOAD_OFFLINE : 0), &l);
	cli.principal = NULL;
	rootasm_principal_free(p);
	if (r)
		return r;
	if (cli.quiet && !cli.json) {
		rootasm_layout_free(l);
		return 0;
	}
	r = rootasm_plan_print(cli_context(), l, stdout, (cli.json ? ROOTASM_PLAN_JSON : 0) |
			       (cli.pretty ? ROOTASM_PLAN_PRETTY : 0));
	rootasm_layout_free(l);
	/* the plan is built (and a JSON document made) before a byte is written: on failure, none was */
	return r < 0 ? cli_errno(-r, "print the plan") : 0;
}
