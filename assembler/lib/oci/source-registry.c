// SPDX-License-Identifier: LGPL-2.1-or-later
/* The docker:// source (source.h): an image of a registry (registry.c), its blobs downloads. */
#include <stdlib.h>
#include <string.h>

#include "oci.h"
#include "registry.h"
#include "source.h"
#include "util.h"

static int source_open(const char *ref, struct ra_source_open *so, struct rootasm_error *e)
{
	const char *why, *pulled;
	int r = ra_oci_open_registry(ref, so->how, &so->img, e);

	if (r < 0)
		return r;
	/* what was pulled (a short name resolved: said), its tag the image's name; HOST/REPO as skopeo names it */
	pulled = ra_registry_resolved(so->img->remote, &why);
	if ((why && (!(so->source = strdup(pulled)) || !(so->source_why = strdup(why)))) ||
	    (!strchr(pulled, '@') && !(so->name = strdup(pulled + strlen(RA_REGISTRY_PREFIX)))) ||
	    !(so->display = strdup(so->img->dir + strlen(RA_REGISTRY_PREFIX))))
		return ra_oom(e, "import");
	return 0;
}

const struct ra_source ra_source_registry = {
	.prefix = RA_REGISTRY_PREFIX,
	.syntax = "docker://[REGISTRY/]REPO[:TAG|@DIGEST]",
	.check = ra_registry_check_ref,
	.open = source_open,
};
