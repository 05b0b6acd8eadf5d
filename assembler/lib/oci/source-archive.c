// SPDX-License-Identifier: LGPL-2.1-or-later
/* The docker-archive: source (source.h): `docker save`'s tar (archive.c) unpacked to a layout, read as one. */
#include <stdlib.h>
#include <string.h>

#include "oci.h"
#include "registry.h"
#include "source.h"
#include "util.h"

/* docker save's tar unpacked to an OCI layout in the scratch directory, read as one; its RepoTag its name */
static int archive_open(const char *ref, struct ra_source_open *so, struct rootasm_error *e)
{
	_cleanup_free_ char *dir = NULL;
	int r = ra_docker_archive_unpack(ref, so->scratch_fd, so->scratch, &dir, &so->name, e);

	if (r < 0)
		return r;
	so->unpacked = strdup(strrchr(dir, '/') + 1);
	if (!so->unpacked) {
		ra_docker_archive_remove(so->scratch_fd, strrchr(dir, '/') + 1);
		return ra_oom(e, "import");
	}
	return ra_oci_open(dir, NULL, &so->img, e);
}

const struct ra_source ra_source_archive = {
	.prefix = "docker-archive:",
	.syntax = "docker-archive:FILE[:NAME]",
	.needs_scratch = true,
	.scratch_prefix = RA_ARCHIVE_PREFIX,
	.open = archive_open,
	.remove = ra_docker_archive_remove,
};
