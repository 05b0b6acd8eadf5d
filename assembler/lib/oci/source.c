// SPDX-License-Identifier: LGPL-2.1-or-later
/* The table of image sources (source.h): a new source is a file of its own and a line here. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source.h"
#include "util.h"

static const struct ra_source *const sources[] = {
	&ra_source_oci,
	&ra_source_archive,
	&ra_source_registry,
};

#define OPT(o, field, def) RA_OPT(o, struct rootasm_import_opts, field, def)

struct ra_registry_how ra_source_how(const struct rootasm_import_opts *o)
{
	return (struct ra_registry_how){ .tls_verify = !(OPT(o, flags, 0u) & ROOTASM_IMPORT_TLS_NO_VERIFY),
					 .authfile = OPT(o, authfile, NULL), .creds = OPT(o, creds, NULL),
					 .cert_dir = OPT(o, cert_dir, NULL) };
}

const struct ra_source *ra_source_of(const char *ref)
{
	for (size_t i = 0; ref && i < ARRAY_SIZE(sources); i++)
		if (!strncmp(ref, sources[i]->prefix, strlen(sources[i]->prefix)))
			return sources[i];
	return NULL;
}

int ra_source_foreign(const char *ref, const char *op, struct rootasm_error *e)
{
	/* containers-transports(5)'s others */
	static const char *const foreign[] = { "oci-archive:", "dir:", "containers-storage:", "docker-daemon:",
					       "ostree:", "sif:", "tarball:" };
	for (size_t i = 0; ref && i < ARRAY_SIZE(foreign); i++)
		if (!strncmp(ref, foreign[i], strlen(foreign[i])))
			return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, op, ref, "the transport %.*s is not one rootasm "
					   "reads: skopeo copy %s oci:DIR, then %s oci:DIR", (int)strlen(foreign[i]) - 1,
					   foreign[i], ref, op);
	/* HOST[:PORT]/REPO...: a registry's, without its transport (podman pull takes it so) */
	if (ref && ra_ref_has_host(ref))
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, op, ref, "a registry's image is named with its "
				   "transport: docker://%s", ref);
	return 0;
}

static char syntaxes[256];

static void make_syntaxes(void)
{
	for (size_t i = 0, n = 0; i < ARRAY_SIZE(sources) && n < sizeof(syntaxes); i++)
		n += snprintf(syntaxes + n, sizeof(syntaxes) - n, "%s%s", i == 0 ? "" : i + 1 == ARRAY_SIZE(sources) ?
			      " or " : ", ", sources[i]->syntax);
}

const char *ra_source_syntaxes(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, make_syntaxes);
	return syntaxes;
}

void ra_source_sweep(int fd, const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(sources); i++) {
		const char *p = sources[i]->scratch_prefix;

		if (p && !strncmp(name, p, strlen(p)) && sources[i]->remove)
			sources[i]->remove(fd, name);
	}
}

void ra_source_close(const struct ra_source *k, struct ra_source_open *so)
{
	ra_oci_free(so->img);
	if (k && so->unpacked && so->scratch_fd >= 0 && k->remove)
		k->remove(so->scratch_fd, so->unpacked);
	free(so->name);
	free(so->display);
	free(so->source);
	free(so->source_why);
	free(so->unpacked);
	so->img = NULL;
	so->name = so->display = so->source = so->source_why = so->unpacked = NULL;
}
