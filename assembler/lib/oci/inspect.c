// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What an image is, without importing it (`rootasm inspect`): its manifest
 * and config read and verified as an import reads them (oci.c; a registry's
 * with registry.c, the same TLS and credentials), no layer fetched, nothing
 * written. The document has skopeo inspect's fields, so that what a skopeo
 * or podman user reads there reads the same here, and rootasm's own (the
 * config's digest, the diff ids the store keys layers by).
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "context.h"
#include "json.h"
#include "oci.h"
#include "registry.h"
#include "util.h"

#define OPT(o, field, def) RA_OPT(o, struct rootasm_import_opts, field, def)

/* The document of @img, named @name. */
static json_t *describe(const struct ra_oci_image *img, const char *name)
{
	struct ra_jb b = { false };
	json_t *o = json_object(), *layers = json_array(), *data = json_array(), *diffs = json_array();
	json_t *cfg = img->config_doc, *run = img->run;

	ra_jset(&b, o, "Name", ra_jstr(name));
	ra_jset(&b, o, "Digest", ra_jstr(img->manifest.digest));
	ra_jset(&b, o, "Created", json_incref(json_is_string(json_object_get(cfg, "created")) ?
					      json_object_get(cfg, "created") : json_null()));
	ra_jset(&b, o, "DockerVersion", json_incref(json_is_string(json_object_get(cfg, "docker_version")) ?
						    json_object_get(cfg, "docker_version") : json_string("")));
	ra_jset(&b, o, "Labels", json_incref(json_is_object(json_object_get(run, "Labels")) ?
					     json_object_get(run, "Labels") : json_null()));
	ra_jset(&b, o, "Architecture", json_incref(json_is_string(json_object_get(cfg, "architecture")) ?
						   json_object_get(cfg, "architecture") : json_string("")));
	ra_jset(&b, o, "Os", json_incref(json_is_string(json_object_get(cfg, "os")) ? json_object_get(cfg, "os") :
					 json_string("")));
	for (size_t i = 0; i < img->nlayers; i++) {
		const struct ra_oci_layer *l = &img->layers[i];
		json_t *d = json_object();

		ra_japp(&b, layers, ra_jstr(l->d.digest));
		ra_jset(&b, d, "MIMEType", ra_jstr(l->d.media_type));
		ra_jset(&b, d, "Digest", ra_jstr(l->d.digest));
		ra_jset(&b, d, "Size", json_integer((json_int_t)l->d.size));
		ra_jset(&b, d, "Annotations", json_null());
		ra_japp(&b, data, d);
		ra_japp(&b, diffs, ra_jstr(l->diff_id));
	}
	ra_jset(&b, o, "Layers", layers);
	ra_jset(&b, o, "LayersData", data);
	ra_jset(&b, o, "Env", json_incref(json_is_array(json_object_get(run, "Env")) ? json_object_get(run, "Env") :
					  json_null()));
	/* rootasm's: what the store keys an import by */
	ra_jset(&b, o, "ManifestMediaType", ra_jstr(img->manifest.media_type));
	ra_jset(&b, o, "Config", ra_jstr(img->config.digest));
	ra_jset(&b, o, "DiffIDs", diffs);
	if (b.oom) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int rootasm_inspect(struct rootasm_ctx *ctx, const char *ref, const struct rootasm_import_opts *o, char **ret_json,
		    struct rootasm_error *e)
{
	_cleanup_free_ char *dir = NULL, *tag = NULL;
	struct ra_oci_image *img = NULL;
	char *text = NULL;
	const char *name;
	json_t *doc;
	int r;

	ctx = ra_ctx(ctx);
	r = RA_OPTS_CHECK(o, struct rootasm_import_opts, offsetof(struct rootasm_import_opts, progress), "inspect",
			  ref, e);
	if (r < 0)
		return r;
	if (!ret_json)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "inspect", ref, "no result pointer");
	*ret_json = NULL;
	if (!ref || !*ref)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "inspect", ref, "no image reference");
	if (!strncmp(ref, "docker-archive:", strlen("docker-archive:")))
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EOPNOTSUPP, "inspect", ref,
				   "an archive is inspected after it is imported (rootasm images shows it)");
	if (ra_registry_is_ref(ref)) {
		struct ra_registry_how how = { .tls_verify = !(OPT(o, flags, 0u) & ROOTASM_IMPORT_TLS_NO_VERIFY),
					       .authfile = OPT(o, authfile, NULL), .creds = OPT(o, creds, NULL),
					       .cert_dir = OPT(o, cert_dir, NULL) };

		r = ra_oci_open_registry(ref, &how, &img, e);
		name = ref + strlen("docker://");
	} else {
		r = ra_oci_parse_ref(ref, &dir, &tag, e);
		if (r == 0)
			r = ra_oci_open(dir, tag, &img, e);
		name = ref;
	}
	if (r < 0)
		return r;
	RA_TRACE(ctx, "inspect %s: manifest %s, %zu layers", ref, img->manifest.digest, img->nlayers);
	/* a registry's image by its name, HOST/REPO, as skopeo names it */
	doc = describe(img, img->remote && !strncmp(img->dir, "docker://", 9) ? img->dir + 9 : name);
	if (doc)
		text = json_dumps(doc, JSON_INDENT(4) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
	json_decref(doc);
	ra_oci_free(img);
	if (!text)
		return ra_oom(e, "inspect");
	*ret_json = text;
	return 0;
}
