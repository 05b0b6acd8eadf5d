// SPDX-License-Identifier: LGPL-2.1-or-later
/* The oci: source (source.h): an OCI image layout, oci:DIR[:TAG], read by oci.c. */
#include <stdlib.h>
#include <string.h>

#include "oci.h"
#include "registry.h"
#include "source.h"
#include "util.h"

static int oci_check(const char *ref, struct rootasm_error *e)
{
	_cleanup_free_ char *dir = NULL, *tag = NULL;

	return ra_oci_parse_ref(ref, &dir, &tag, e);
}

static int oci_open(const char *ref, struct ra_source_open *so, struct rootasm_error *e)
{
	_cleanup_free_ char *dir = NULL, *tag = NULL;
	int r = ra_oci_parse_ref(ref, &dir, &tag, e);

	return r < 0 ? r : ra_oci_open(dir, tag, &so->img, e);
}

const struct ra_source ra_source_oci = {
	.prefix = "oci:",
	.syntax = "oci:DIR[:TAG]",
	.check = oci_check,
	.open = oci_open,
};
