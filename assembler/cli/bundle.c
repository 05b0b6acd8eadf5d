// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rootasm bundle create [--store DIR] IMAGE|LAYOUT BUNDLE
 * rootasm bundle prepare [--layout L] [--upper DIR] BUNDLE | rootasm bundle cleanup BUNDLE
 *
 * The front end of rootasm_bundle_create(), rootasm_bundle_prepare() and rootasm_bundle_cleanup()
 * (lib/bundle.c says what they do and whom they trust): options in, the
 * result out as a line or as JSON.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"

static const char help[] =
	"Usage: rootasm bundle create [OPTION...] IMAGE|LAYOUT BUNDLE\n"
	"       rootasm bundle prepare [OPTION...] BUNDLE\n"
	"       rootasm bundle cleanup [OPTION...] BUNDLE\n"
	"Make the root filesystem of an OCI runtime bundle (BUNDLE/config.json) with rootasm,\n"
	"for crun or runc to run it:\n"
	"\n"
	"  create    write BUNDLE/config.json (as `crun spec` does, with the process the\n"
	"            image's config asks for: entrypoint and cmd, env, working directory,\n"
	"            user; as `umoci unpack` does) and BUNDLE/rootfs, annotated with the\n"
	"            image's layout: ready for prepare. IMAGE: a name or digest of the\n"
	"            store; a LAYOUT file by that name is taken first\n"
	"  prepare   assemble the layout (--layout, or the config.json annotation\n"
	"            \"org.rootasm.layout\"; a JSON layout such as `rootasm import` writes),\n"
	"            with the config's bind and tmpfs mounts before the first one left to\n"
	"            the runtime (the listed order) as volumes and its\n"
	"            linux.uidMappings/gidMappings as idmapped layers, detached; attach it at\n"
	"            root.path with one move_mount; rewrite config.json without the mounts\n"
	"            rootasm made (the original is kept in BUNDLE/.rootasm/config.json)\n"
	"  cleanup   detach the tree prepare attached and restore config.json\n"
	"\n"
	"  --store DIR     create: the store IMAGE is in (default: $ROOTASM_STORE, else\n"
	"                  /var/lib/rootasm/store)\n"
	"  --layout L      the layout (relative: to BUNDLE, and beneath it)\n"
	"  --upper DIR     writes go to DIR/upper (work dir DIR/work) instead of the layout's\n"
	"                  upper. root.readonly is left to the runtime (it remounts the root\n"
	"                  read-only once its own mount points are made).\n"
	"                  With uid/gid mappings DIR/upper is made owned by the container's root\n"
	"  --json[=pretty] what was done as JSON\n"
	"  -q, --quiet     no line saying what was done\n"
	"  --debug         trace every operation\n"
	"  -h, --help      this text\n"
	"\n"
	"Mounts under one the runtime makes (proc, sysfs, devpts, ...), mounts with options\n"
	"rootasm cannot express and, with uid/gid mappings, tmpfs mounts stay in config.json\n"
	"for the runtime.\n"
	"Nothing in BUNDLE is followed through a symlink, and root.path must lie in BUNDLE.\n"
	"What prepare attached is recorded in $ROOTASM_RUN_DIR/bundles (default\n"
	"/run/rootasm/bundles); cleanup detaches only that.\n"
	"Exit status: 0, 1 failure, 2 bad usage, a bad config.json or layout.\n";

static json_t *strv_json(char **v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++) {
		if (json_array_append_new(a, json_string(v[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static int prepare(const char *bundle, const char *layout, const char *upper)
{
	struct rootasm_bundle_opts o = { .size = sizeof(o), .layout = layout, .upper = upper };
	struct rootasm_bundle_result res;
	struct rootasm_error e = { 0 };
	int r = 0;

	if (rootasm_bundle_prepare(cli_context(), bundle, &o, &res, &e) < 0)
		return cli_fail(&e);
	if (cli.json) {
		json_t *t = strv_json(res.rootasm_mounts, res.n_rootasm_mounts);
		json_t *l = strv_json(res.runtime_mounts, res.n_runtime_mounts);

		r = cli_json_out(t && l ? json_pack("{s:s, s:s, s:I, s:o, s:o}", "root", res.root, "layout", res.layout,
						    "mount_id", (json_int_t)res.mnt_id, "rootasm_mounts", t,
						    "runtime_mounts", l) : NULL) < 0 ? EXIT_RUNTIME : 0;
		if (!t || !l) {
			json_decref(t);
			json_decref(l);
		}
	} else if (!cli.quiet) {
		printf("%s: attached (mount id %llu); %zu mounts made by rootasm, %zu left to the runtime\n", res.root,
		       res.mnt_id, res.n_rootasm_mounts, res.n_runtime_mounts);
	}
	rootasm_bundle_result_free(&res);
	return r;
}

static int create(const char *image, const char *bundle, const char *store)
{
	struct rootasm_bundle_opts o = { .size = sizeof(o), .store = store };
	struct rootasm_bundle_result res;
	struct rootasm_error e = { 0 };
	int r = 0;

	if (rootasm_bundle_create(cli_context(), image, bundle, &o, &res, &e) < 0)
		return cli_fail(&e);
	if (cli.json)
		r = cli_json_out(json_pack("{s:s, s:s}", "root", res.root, "layout", res.layout)) < 0 ? EXIT_RUNTIME : 0;
	else if (!cli.quiet)
		printf("%s: config.json written for %s\n", res.root, res.layout);
	rootasm_bundle_result_free(&res);
	return r;
}

static int cleanup(const char *bundle)
{
	struct rootasm_bundle_result res;
	struct rootasm_error e = { 0 };
	int r = 0;

	if (rootasm_bundle_cleanup(cli_context(), bundle, NULL, &res, &e) < 0)
		return cli_fail(&e);
	if (cli.json)
		r = cli_json_out(json_pack("{s:s, s:b}", "root", res.root, "detached", res.detached)) < 0 ? EXIT_RUNTIME : 0;
	else if (!cli.quiet)
		printf("%s: %s; config.json restored\n", res.root,
		       res.detached ? "detached" : "was not attached (left alone)");
	rootasm_bundle_result_free(&res);
	return r;
}

int cmd_bundle(int argc, char **argv)
{
	static const struct option opts[] = {
		CLI_COMMON_LONGOPTS, CLI_ARG("layout", 'l'), CLI_ARG("upper", 'u'), CLI_ARG("store", 's'),
		{ 0 },
	};
	const char *layout = NULL, *upper = NULL, *store = NULL, *sub, *bundle, *image = NULL;
	char up[PATH_MAX];
	int c, r;

	while ((c = cli_getopt(argc, argv, NULL, opts, help, &r)) >= 0) {
		switch (c) {
		case 'l':
			layout = optarg;
			break;
		case 'u':
			upper = optarg;
			break;
		case 's':
			if (!*optarg)
				return cli_usage("--store needs a directory");
			store = optarg;
			break;
		}
	}
	if (c == CLI_OPTS_EXIT)
		return r;
	if (optind >= argc)
		return cli_usage("missing create, prepare or cleanup");
	sub = argv[optind++];
	if (strcmp(sub, "create") && strcmp(sub, "prepare") && strcmp(sub, "cleanup"))
		return cli_usage("unknown bundle command '%s' (create, prepare, cleanup)", sub);
	if (!strcmp(sub, "create")) {
		if (optind >= argc)
			return cli_usage("missing IMAGE or LAYOUT");
		image = argv[optind++];
	}
	if ((r = cli_last_operand(argc, argv, "BUNDLE", NULL, &bundle)) != CLI_GO_ON)
		return r;
	if (strcmp(sub, "prepare") && (layout || upper))
		return cli_usage("--layout and --upper go with prepare");
	if (strcmp(sub, "create") && store)
		return cli_usage("--store goes with create");
	if (image)
		return create(image, bundle, store);
	/* the upper is the caller's: relative to the working directory */
	if (upper && upper[0] != '/') {
		if (!realpath(upper, up)) {
			struct rootasm_error e = { .err = errno, .kind = ROOTASM_ERROR_USAGE };

			snprintf(e.op, sizeof(e.op), "bundle");
			snprintf(e.path, sizeof(e.path), "%s", upper);
			snprintf(e.msg, sizeof(e.msg), "%s", strerror(e.err));
			return cli_fail(&e);
		}
		upper = up;
	}
	return !strcmp(sub, "prepare") ? prepare(bundle, layout, upper) : cleanup(bundle);
}
