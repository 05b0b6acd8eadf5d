// SPDX-License-Identifier: LGPL-2.1-or-later
/* rootasm inspect [--raw] [--store DIR] [--tls-verify[=BOOL]] [--creds USER[:PASS]] [--authfile FILE] [--cert-dir DIR] IMAGE */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"

static const char help[] =
	"Usage: rootasm inspect [OPTION...] oci:DIR[:TAG] | docker://REGISTRY/REPO[:TAG|@DIGEST]\n"
	"       rootasm inspect [OPTION...] docker-archive:FILE[:NAME] | NAME[:TAG] | DIGEST\n"
	"Print what an image is without importing it, as `skopeo inspect` does: its\n"
	"manifest and config read and verified (a registry's fetched with the same TLS\n"
	"and credentials as an import; an archive unpacked to a private directory and\n"
	"removed), no layer fetched, nothing written to the store; or, for a NAME or\n"
	"DIGEST, what the store keeps of an imported image. A JSON document: Name, Digest\n"
	"(the manifest's), Created, DockerVersion, Labels, Architecture, Os, Layers (blob\n"
	"digests), LayersData (MIMEType, Digest, Size), Env; and rootasm's: Config (the\n"
	"config's Cmd, Entrypoint, User, WorkingDir, ...; a stored image's exec section),\n"
	"ManifestMediaType, ConfigDigest, DiffIDs, Layout (a stored image's).\n"
	"Needs no privilege.\n"
	"\n"
	"  --raw           the manifest's bytes, as the source gave them\n"
	"  --store DIR     the store NAME and DIGEST are looked up in (default: as import)\n"
	"  --tls-verify[=BOOL]  docker://: check the registry's TLS certificate (default\n"
	"                  true); false also allows plain HTTP (a local registry)\n"
	"  --creds USER[:PASSWORD]  docker://: these credentials (without PASSWORD: asked\n"
	"                  on the terminal)\n"
	"  --authfile FILE docker://: credentials from FILE only (default: as import)\n"
	"  --cert-dir DIR  docker://: the registry's certificates (default: as import)\n"
	"  --json[=pretty] the document on one line (pretty: indented, as without --json)\n"
	"  -q, --quiet     (nothing else is printed anyway)\n"
	"  --debug         trace what is read\n"
	"  -h, --help      this text\n"
	"\n"
	"Exit status: 0, 1 failure, 2 bad usage or a bad image (a digest that does not match).\n";

int cmd_inspect(int argc, char **argv)
{
	static const struct option opts[] = {
		CLI_COMMON_LONGOPTS, { "tls-verify", optional_argument, NULL, 'V' }, CLI_ARG("creds", 'C'),
		CLI_ARG("authfile", 'A'), CLI_ARG("cert-dir", 'D'), CLI_FLAG("quiet", 'q'), CLI_FLAG("raw", 'r'),
		CLI_ARG("store", 's'), { 0 },
	};
	struct rootasm_import_opts o = { .size = sizeof(o) };
	struct rootasm_error e = { 0 };
	char *creds = NULL, *doc = NULL;
	unsigned int flags = 0;
	const char *ref;
	json_error_t je;
	json_t *j;
	int c, r;

	while ((c = cli_getopt_registry(argc, argv, ":hq", opts, help, &o, &creds, &r)) >= 0) {
		if (c == 'r') {
			flags |= ROOTASM_INSPECT_RAW;
		} else if (c == 's') {
			o.store = optarg;
		}
	}
	if (c == CLI_OPTS_EXIT)
		return r;
	r = cli_last_operand(argc, argv, "image", "oci:DIR[:TAG], docker://REGISTRY/REPO[:TAG|@DIGEST], "
			     "docker-archive:FILE[:NAME], or a stored image's NAME[:TAG] or DIGEST", &ref);
	if (r != CLI_GO_ON)
		return r;
	if ((flags & ROOTASM_INSPECT_RAW) && cli.json)
		return cli_usage("--raw prints the manifest as it is: not with --json");
	r = rootasm_inspect(cli_context(), ref, &o, flags, &doc, &e);
	cli_registry_done(creds);
	if (r < 0)
		return cli_fail(&e);
	if (flags & ROOTASM_INSPECT_RAW) {
		fputs(doc, stdout);
		free(doc);
		return fflush(stdout) == 0 ? 0 : EXIT_RUNTIME;
	}
	/* printed as every result is (non-ASCII as \\uXXXX): indented, or one line with --json */
	j = json_loadb(doc, strlen(doc), JSON_REJECT_DUPLICATES, &je);
	free(doc);
	if (!cli.json)
		cli.pretty = true;
	return cli_json_out(j) < 0 ? EXIT_RUNTIME : 0;
}
