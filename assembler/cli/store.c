// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rootasm images | rmi NAME|DIGEST... | store gc | store verify: the front
 * end of the managed store (rootasm_store_*(), lib/oci/catalog.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cli.h"

static const char images_help[] =
	"Usage: rootasm images [OPTION...]\n"
	"List the images of the store: name (NAME:TAG, one line each; <none> when\n"
	"unnamed), manifest digest, layers, size (of the layer images its layout names,\n"
	"shared ones counted for each image; as podman's: 1.99 MB) and last use (the\n"
	"layout's last read).\n"
	"\n"
	"  --store DIR     the store (default: $ROOTASM_STORE, else /var/lib/rootasm/store)\n"
	"  --json[=pretty] a JSON array: names, manifest, config, layers, bytes, last_used,\n"
	"                  layout\n"
	"  -q, --quiet     the manifest digests alone\n"
	"  --debug         (nothing to trace)\n"
	"  -h, --help      this text\n"
	"\n"
	"Exit status: 0, 1 failure, 2 bad usage.\n";

static const char rmi_help[] =
	"Usage: rootasm rmi [OPTION...] NAME[:TAG]|DIGEST...\n"
	"Remove images from the store: by NAME[:TAG], that name (the image goes with its\n"
	"last name); by digest (sha256:HEX, or 12 or more of its first hex digits), every\n"
	"name of the image and the image: of an image of more than one name only with\n"
	"--force, as podman's rmi. Its layer images stay until `rootasm store gc`.\n"
	"\n"
	"  --store DIR     the store (default: $ROOTASM_STORE, else /var/lib/rootasm/store)\n"
	"  -f, --force     by digest, an image of several names too\n"
	"  --json[=pretty] what was removed as JSON\n"
	"  -q, --quiet     no line per image\n"
	"  --debug         (nothing to trace)\n"
	"  -h, --help      this text\n"
	"\n"
	"Exit status: 0, 1 failure, 2 bad usage or an image the store does not have.\n";

static const char store_help[] =
	"Usage: rootasm store [OPTION...] gc|verify\n"
	"Look after the store:\n"
	"\n"
	"  gc        remove the layer images no image's layout names (and their records);\n"
	"            one that is open (on a loop device or mounted: a live tree, rootasmd's\n"
	"            cache) stays\n"
	"  verify    check that every layer image an image's layout names is there and\n"
	"            that each layer image's sha256 is the one recorded when it was made\n"
	"\n"
	"  --store DIR     the store (default: $ROOTASM_STORE, else /var/lib/rootasm/store)\n"
	"  --dry-run       gc: count what would go, remove nothing\n"
	"  --json[=pretty] the result as JSON\n"
	"  -q, --quiet     no summary line\n"
	"  --debug         (nothing to trace)\n"
	"  -h, --help      this text\n"
	"\n"
	"Changes are serialised with the store's lock: gc waits for running imports.\n"
	"Exit status: 0, 1 failure (verify: a problem found), 2 bad usage.\n";

/* --store, the common options, nothing else; returns CLI_GO_ON or an exit status. */
static int parse(int argc, char **argv, const char *help, const char **store, bool *dry_run, bool *force)
{
	static const struct option opts[] = {
		CLI_COMMON_LONGOPTS, CLI_ARG("store", 's'), CLI_FLAG("dry-run", 'n'), CLI_FLAG("force", 'f'), { 0 },
	};
	int c, r;

	while ((c = cli_getopt(argc, argv, force ? ":hqf" : NULL, opts, help, &r)) >= 0) {
		switch (c) {
		case 'f':
			if (!force)
				return cli_usage("unknown option '%s'", argv[optind - 1]);
			*force = true;
			break;
		case 's':
			if (!*optarg)
				return cli_usage("--store needs a directory");
			*store = optarg;
			break;
		case 'n':
			if (!dry_run)
				return cli_usage("unknown option '--dry-run'");
			*dry_run = true;
			break;
		}
	}
	return c == CLI_OPTS_EXIT ? r : CLI_GO_ON;
}

static void when(long long t, char *buf, size_t size)
{
	time_t tt = t;
	struct tm tm;

	if (!t || !localtime_r(&tt, &tm) || !strftime(buf, size, "%Y-%m-%d %H:%M", &tm))
		snprintf(buf, size, "-");
}

/* @b bytes as podman prints a size (go-units' HumanSizeWithPrecision(b, 3): 1000s, three digits): "1.99 MB" */
static void human_size(unsigned long long b, char *buf, size_t size)
{
	static const char *const unit[] = { "B", "kB", "MB", "GB", "TB", "PB" };
	double x = (double)b;
	size_t u = 0;

	while (x >= 999.5 && u + 1 < sizeof(unit) / sizeof(unit[0])) {	/* (999.5: "1e+03" in three digits) */
		x /= 1000;
		u++;
	}
	snprintf(buf, size, "%.3g %s", x, unit[u]);
}

int cmd_images(int argc, char **argv)
{
	struct rootasm_store_image *v = NULL;
	struct rootasm_error e = { 0 };
	const char *store = NULL;
	size_t n = 0, width = strlen("<none>");
	int r;

	if ((r = parse(argc, argv, images_help, &store, NULL, NULL)) != CLI_GO_ON)
		return r;
	if (optind < argc)
		return cli_usage("unexpected argument '%s'", argv[optind]);
	if (rootasm_store_images(store, &v, &n, &e) < 0)
		return cli_fail(&e);
	if (cli.json) {
		json_t *a = json_array();

		for (size_t i = 0; a && i < n; i++) {
			json_t *names = json_array();

			for (size_t k = 0; names && k < v[i].nnames; k++)
				json_array_append_new(names, json_string(v[i].names[k]));
			if (!names || json_array_append_new(a, json_pack("{s:o, s:s, s:s, s:I, s:I, s:I, s:s?}", "names", names,
									 "manifest", v[i].manifest, "config", v[i].config,
									 "layers", (json_int_t)v[i].nlayers, "bytes",
									 (json_int_t)v[i].bytes, "last_used",
									 (json_int_t)v[i].last_used, "layout",
									 v[i].layout)) < 0) {
				json_decref(a);
				a = NULL;
			}
		}
		rootasm_store_images_free(v, n);
		return cli_json_out(a) < 0 ? EXIT_RUNTIME : 0;
	}
	/* the NAME column as wide as its longest name (podman's table too) */
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < v[i].nnames; k++)
			width = strlen(v[i].names[k]) > width ? strlen(v[i].names[k]) : width;
	if (!cli.quiet)
		printf("%-*s  %-19s %6s %10s  %s\n", (int)width, "NAME", "DIGEST", "LAYERS", "SIZE", "LAST USE");
	for (size_t i = 0; i < n; i++) {
		char t[32], sz[16];

		if (cli.quiet) {
			printf("%s\n", v[i].manifest);
			continue;
		}
		when(v[i].last_used, t, sizeof(t));
		human_size(v[i].bytes, sz, sizeof(sz));
		for (size_t k = 0; k < (v[i].nnames ? v[i].nnames : 1); k++)
			printf("%-*s  %.19s %6zu %10s  %s\n", (int)width, v[i].nnames ? v[i].names[k] : "<none>",
			       v[i].manifest, v[i].nlayers, sz, t);
	}
	rootasm_store_images_free(v, n);
	return fflush(stdout) == 0 ? 0 : EXIT_RUNTIME;
}

int cmd_rmi(int argc, char **argv)
{
	struct rootasm_error e = { 0 };
	bool force = false;
	const char *store = NULL;
	json_t *out = NULL;
	int r, status = 0;

	if ((r = parse(argc, argv, rmi_help, &store, NULL, &force)) != CLI_GO_ON)
		return r;
	if (optind >= argc)
		return cli_usage("missing NAME[:TAG] or DIGEST");
	if (cli.json && !(out = json_array()))
		return cli_errno(ENOMEM, "rmi");
	for (; optind < argc; optind++) {
		r = rootasm_store_remove_flags(store, argv[optind], force ? ROOTASM_STORE_REMOVE_FORCE : 0, &e);
		if (r < 0) {
			int s = cli_fail(&e);

			status = status ? status : s;
			continue;
		}
		if (out)
			json_array_append_new(out, json_pack("{s:s, s:b}", "ref", argv[optind], "image_removed", r > 0));
		else if (!cli.quiet)
			printf("%s: %s\n", argv[optind], r > 0 ? "removed" : "name removed (the image has other names)");
	}
	if (out && cli_json_out(out) < 0)
		return EXIT_RUNTIME;
	return status;
}

static void problem(void *userdata, const char *path, const char *what)
{
	json_t *a = userdata;

	if (a)
		json_array_append_new(a, json_pack("{s:s, s:s}", "path", path, "problem", what));
	else
		printf("%s: %s\n", path, what);
}

int cmd_store(int argc, char **argv)
{
	struct rootasm_store_gc_result g = { .size = sizeof(g) };
	struct rootasm_error e = { 0 };
	const char *store = NULL, *sub;
	bool dry = false;
	int r;

	if ((r = parse(argc, argv, store_help, &store, &dry, NULL)) != CLI_GO_ON)
		return r;
	if (optind >= argc)
		return cli_usage("missing gc or verify");
	sub = argv[optind++];
	if (optind < argc)
		return cli_usage("unexpected argument '%s'", argv[optind]);
	if (!strcmp(sub, "gc")) {
		if (rootasm_store_gc(store, dry ? ROOTASM_STORE_GC_DRY_RUN : 0, &g, &e) < 0)
			return cli_fail(&e);
		if (cli.json)
			return cli_json_out(json_pack("{s:b, s:I, s:I, s:I}", "dry_run", dry, "removed", (json_int_t)g.removed,
						      "bytes", (json_int_t)g.bytes, "in_use", (json_int_t)g.in_use)) < 0 ?
				       EXIT_RUNTIME : 0;
		if (!cli.quiet)
			printf("%s %zu layer images (%.1f MB); %zu unreferenced but in use, kept\n",
			       dry ? "would remove" : "removed", g.removed, g.bytes / 1e6, g.in_use);
		return 0;
	}
	if (!strcmp(sub, "verify")) {
		json_t *a = cli.json ? json_array() : NULL;

		if (cli.json && !a)
			return cli_errno(ENOMEM, "store verify");
		r = rootasm_store_verify(store, problem, a, &e);
		if (r < 0) {
			json_decref(a);
			return cli_fail(&e);
		}
		if (a)
			return cli_json_out(json_pack("{s:i, s:o}", "problems", r, "checked", a)) < 0 ? EXIT_RUNTIME :
			       r ? EXIT_RUNTIME : 0;
		if (!cli.quiet)
			printf("%d problem%s\n", r, r == 1 ? "" : "s");
		return r ? EXIT_RUNTIME : 0;
	}
	return cli_usage("unknown store command '%s' (gc, verify)", sub);
}
