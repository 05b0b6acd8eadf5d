// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A registry's TLS as containers-certs.d(5) says (registry.c asks once per
 * image): the directory --cert-dir names, else the first that exists of
 * ~/.config/containers/certs.d/HOST[:PORT] (not for root), /etc/containers/
 * certs.d/HOST[:PORT] and /etc/docker/certs.d/HOST[:PORT]. In it, every *.crt
 * is a root trusted besides the system's, and a *.cert with the *.key of the
 * same name is the client certificate presented. A directory without any is
 * nothing; a *.cert without its key (or a key without its cert) is an error.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "open.h"
#include "registry-http.h"
#include "registry.h"
#include "util.h"

#define RG_CA_MAX	(8u << 20)	/* the system's bundle (about 200 KB) and a directory's roots */
#define RG_SYSTEM_CA	"/etc/ssl/certs/ca-certificates.crt"

/* Append the file @path to rem->ca_blob. */
static int add_root(struct ra_oci_remote *rem, int dfd, const char *name, const char *path, struct rootasm_error *e)
{
	_cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	_cleanup_free_ char *buf = NULL;
	size_t len;
	char *nb;
	int r;

	if (fd < 0)
		return ra_err(e, errno, -EBADF, "read certificate", path, NULL);
	r = ra_read_all(fd, RG_CA_MAX, NULL, NULL, &buf, &len);
	if (r < 0)
		return ra_err(e, r == -EFBIG ? EFBIG : -r, -EBADF, "read certificate", path, NULL);
	if (rem->ca_len + len + 2 > RG_CA_MAX)
		return ra_err(e, EFBIG, -EBADF, "read certificate", path, "the trusted roots pass %u bytes", RG_CA_MAX);
	nb = realloc(rem->ca_blob, rem->ca_len + len + 2);
	if (!nb)
		return ra_oom(e, "read certificate");
	rem->ca_blob = nb;
	memcpy(rem->ca_blob + rem->ca_len, buf, len);
	rem->ca_len += len;
	rem->ca_blob[rem->ca_len++] = '\n';
	rem->ca_blob[rem->ca_len] = '\0';
	return 0;
}

static bool ends(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n > m && !strcmp(s + n - m, suffix);
}

/* The directory for @host: --cert-dir, or containers-certs.d(5)'s first; NULL (0) when none. */
static int cert_dir(const struct ra_registry_how *how, const char *host, char *out, size_t size)
{
	const char *home = getenv("HOME");
	struct stat st;
	char c[3][4096];
	size_t n = 0;

	if (how && how->cert_dir) {
		snprintf(out, size, "%s", how->cert_dir);
		return 1;
	}
	if (geteuid() != 0 && home && *home)
		snprintf(c[n++], sizeof(c[0]), "%s/.config/containers/certs.d/%s", home, host);
	snprintf(c[n++], sizeof(c[0]), "/etc/containers/certs.d/%s", host);
	snprintf(c[n++], sizeof(c[0]), "/etc/docker/certs.d/%s", host);
	for (size_t i = 0; i < n; i++)
		if (stat(c[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			snprintf(out, size, "%s", c[i]);
			return 1;
		}
	return 0;
}

int rg_load_certs(struct ra_oci_remote *rem, const struct ra_registry_how *how, struct rootasm_error *e)
{
	char dir[4096], path[8192];
	struct dirent **ents = NULL;
	_cleanup_close_ int dfd = -EBADF;
	int n, r = 0;

	if (!cert_dir(how, rem->auth_host, dir, sizeof(dir)))
		return 0;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return ra_err_kind(e, errno == ENOENT || errno == ENOTDIR ? ROOTASM_ERROR_USAGE : ROOTASM_ERROR_RUNTIME,
				   errno, "read certificate directory", dir, NULL);
	/* in name order, as the directory lists nothing in any order of its own; the one we opened */
	n = scandirat(dfd, ".", &ents, NULL, alphasort);
	if (n < 0)
		return ra_err(e, errno, -EBADF, "read certificate directory", dir, NULL);
	for (int i = 0; i < n && r == 0; i++) {
		const char *name = ents[i]->d_name;

		snprintf(path, sizeof(path), "%s/%s", dir, name);
		if (ends(name, ".crt")) {
			/* the system's roots first: a directory adds to them, as containers-certs.d says */
			if (!rem->ca_blob && access(RG_SYSTEM_CA, R_OK) == 0)
				r = add_root(rem, AT_FDCWD, RG_SYSTEM_CA, RG_SYSTEM_CA, e);
			if (r == 0)
				r = add_root(rem, dfd, name, path, e);
		} else if (ends(name, ".cert") || ends(name, ".key")) {
			bool cert = ends(name, ".cert");
			size_t stem = strlen(name) - (cert ? 5 : 4);
			char other[512];

			snprintf(other, sizeof(other), "%.*s%s", (int)stem, name, cert ? ".key" : ".cert");
			if (faccessat(dfd, other, F_OK, 0) < 0) {
				r = ra_err_kind(e, ROOTASM_ERROR_USAGE, ENOENT, "read certificate directory", path,
						"a client %s without its %s (%s)", cert ? "certificate" : "key",
						cert ? "key" : "certificate", other);
			} else if (cert && !rem->client_cert) {
				snprintf(path, sizeof(path), "%s/%.*s.key", dir, (int)stem, name);
				rem->client_key = strdup(path);
				snprintf(path, sizeof(path), "%s/%s", dir, name);
				rem->client_cert = strdup(path);
				if (!rem->client_key || !rem->client_cert)
					r = ra_oom(e, "read certificate directory");
			}
		}
	}
	for (int i = 0; i < n; i++)
		free(ents[i]);
	free(ents);
	return r;
}
