// SPDX-License-Identifier: LGPL-2.1-or-later
/* rootasm import [--store DIR] [--fs erofs|squashfs] [--tag NAME[:TAG]] [--quiet] oci:DIR[:TAG] */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"

static const char help[] =
	"Usage: rootasm import [OPTION...] oci:DIR[:TAG] | docker-archive:FILE[:NAME]\n"
	"Import an OCI image layout (skopeo copy ... oci:DIR, umoci, buildah push oci:;\n"
	"Docker's schema 2 media types too) into a content-addressed store: each layer\n"
	"(tar, tar+gzip, tar+zstd) becomes a read-only layer image keyed by its diff-id\n"
	"(its chain id when made with the layers below) and shared by every image that has it;\n"
	"then a layout for the image is written (its layers bottom first, a tmpfs upper)\n"
	"and its path printed. Every blob's size and sha256 are checked against its\n"
	"descriptor before it is used; nothing is published before both the blob's\n"
	"digest and its diff-id matched. A second import of the same image writes nothing.\n"
	"OCI whiteouts become overlayfs whiteouts, opaque markers opaque directories.\n"
	"Needs root (owners, device nodes, trusted.* xattrs).\n"
	"\n"
	"  --store DIR     the store (default: $ROOTASM_STORE, else /var/lib/rootasm/store)\n"
	"  --tag NAME[:TAG]  name the image in the store (TAG: latest when none); `rootasm\n"
	"                  images` lists it, `rootasm exec`/`bundle create` take the name\n"
	"  --fs FS         erofs (default: uncompressed, 4 KiB chunks: sparse files stay\n"
	"                  sparse) or squashfs (zstd)\n"
	"  --quiet         no progress lines on stderr\n"
	"  --json[=pretty] the result (layout, store, digests, each layer) as JSON; progress\n"
	"                  as one JSON object per layer and line on stderr\n"
	"  --debug         trace what is read and converted\n"
	"  -h, --help      this text\n"
	"\n"
	"docker-archive:FILE is what `docker save` and `podman save` write (a tar, plain,\n"
	"gzip or zstd): NAME picks the image among its RepoTags (without it the archive\n"
	"must hold one), which names the image in the store unless --tag does.\n"
	"TAG selects the manifest by its org.opencontainers.image.ref.name annotation;\n"
	"without it the index must list one manifest. A nested index is followed to the\n"
	"manifest for linux and this machine's architecture.\n"
	"Exit status: 0, 1 failure, 2 bad usage or a bad image (a digest that does not match).\n";

/* With --json: one JSON object per layer and line, {"event": "layer", ...}. */
static void progress_json(unsigned int i, unsigned int n, const struct rootasm_import_layer *l)
{
	json_t *o = json_pack("{s:s, s:I, s:I, s:s, s:s, s:s, s:I, s:I, s:b, s:f}", "event", "layer", "index",
			      (json_int_t)i + 1, "count", (json_int_t)n, "digest", l->digest, "diff_id", l->diff_id,
			      "media_type", l->media_type, "size", (json_int_t)l->size, "tar_bytes",
			      (json_int_t)l->tar_bytes, "cached", l->cached, "seconds", l->seconds);
	char *s = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;

	if (s)
		fprintf(stderr, "%s\n", s);
	free(s);
	json_decref(o);
}

static void progress(void *userdata, unsigned int i, unsigned int n, const struct rootasm_import_layer *l, bool done)
{
	const char *mt = strrchr(l->media_type, '.');

	if (!done)
		return;
	if (cli.json) {
		progress_json(i, n, l);
	} else if (l->cached) {
		fprintf(stderr, "rootasm: import: layer %u/%u %.19s… in the store\n", i + 1, n, l->diff_id);
	} else {
		fprintf(stderr, "rootasm: import: layer %u/%u %.19s… %s %.1f MB -> %.1f MB tar in %.2f s (%.0f MB/s)\n",
			i + 1, n, l->diff_id, mt ? mt + 1 : l->media_type, l->size / 1e6, l->tar_bytes / 1e6, l->seconds,
			l->seconds > 0 ? l->tar_bytes / 1e6 / l->seconds : 0.0);
	}
}

int cmd_import(int argc, char **argv)
{
	static const struct option opts[] = {
		CLI_COMMON_LONGOPTS,
		{ "store", required_argument, NULL, 's' },
		{ "fs", required_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "tag", required_argument, NULL, 't' },
		{ 0 },
	};
	struct rootasm_import_opts o = { .size = sizeof(o), .progress = progress };
	struct rootasm_import_result res;
	struct rootasm_error e = { 0 };
	const char *ref;
	int c, r;

	while ((c = getopt_long(argc, argv, ":hq", opts, NULL)) >= 0) {
		switch (c) {
		case 's':
			o.store = optarg;
			break;
		case 'f':
			if (!strcmp(optarg, "erofs"))
				o.fs = ROOTASM_LAYER_EROFS;
			else if (!strcmp(optarg, "squashfs"))
				o.fs = ROOTASM_LAYER_SQUASHFS;
			else
				return cli_usage("--fs takes erofs or squashfs, not '%s'", optarg);
			break;
		case 'q':
			o.progress = NULL;
			break;
		case 't':
			o.tag = optarg;
			break;
		default:
			if ((r = cli_common(c, argc, argv, help)) != CLI_GO_ON)
				return r;
		}
	}
	if (optind >= argc)
		return cli_usage("missing oci:DIR[:TAG] or docker-archive:FILE[:NAME]");
	ref = argv[optind++];
	if (optind < argc)
		return cli_usage("more than one image ('%s')", argv[optind]);
	if (o.store && !*o.store)
		return cli_usage("--store needs a directory");
	if (rootasm_import(cli_context(), ref, &o, &res, &e) < 0)
		return cli_fail(&e);
	if (cli.json) {
		json_t *ls = json_array(), *out;

		for (size_t i = 0; ls && i < res.nlayers; i++) {
			const struct rootasm_import_layer *l = &res.layers[i];

			if (json_array_append_new(ls, json_pack("{s:s, s:s, s:s, s:I, s:I, s:s, s:b, s:f}", "digest", l->digest,
								"diff_id", l->diff_id, "media_type", l->media_type, "size",
								(json_int_t)l->size, "tar_bytes", (json_int_t)l->tar_bytes,
								"image", l->image, "cached", l->cached, "seconds",
								l->seconds)) < 0) {
				json_decref(ls);
				ls = NULL;
			}
		}
		out = ls ? json_pack("{s:s, s:s, s:s, s:s, s:o, s:b}", "layout", res.layout, "store", res.store, "manifest",
				     res.manifest, "config", res.config, "layers", ls, "wrote", res.wrote) : NULL;
		rootasm_import_result_free(&res);
		return cli_json_out(out) < 0 ? EXIT_RUNTIME : 0;
	}
	printf("%s\n", res.layout);
	rootasm_import_result_free(&res);
	return fflush(stdout) == 0 ? 0 : EXIT_RUNTIME;
}
