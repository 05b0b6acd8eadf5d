// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What an image is, without importing it (`rootasm inspect`): its manifest
 * and config read and verified as an import reads them (oci.c; a registry's
 * with registry.c, the same TLS and credentials), no layer fetched, nothing
 * written. The document has skopeo inspect's fields, so that what a skopeo
 * or podman user reads there reads the same here, and rootasm's own (the
 * config's digest, the diff ids the store keys layers by).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "catalog.h"
#include "context.h"
#include "json.h"
#include "oci.h"
#include "source.h"
#include "registry.h"
#include "store.h"
#include "util.h"

#define OPT(o, field, def) RA_OPT(o, struct rootasm_import_opts, field, def)

/* @o's member @k (a new reference) when it has json type @type, else @dflt. */
static json_t *member(json_t *o, const char *k, json_type type, json_t *dflt)
{
	json_t *v = json_object_get(o, k);

	if (v && json_typeof(v) == type) {
		json_decref(dflt);
		return json_incref(v);
	}
	return dflt;
}

/* The arrays both documents have, one layer each (references taken): Layers, LayersData, DiffIDs. */
struct layers_json {
	json_t *layers, *data, *diffs;
};

static void add_layer(struct ra_jb *b, struct layers_json *lj, json_t *digest, json_t *media_type, json_t *size,
		      json_t *diff_id)
{
	json_t *d = json_object();

	ra_japp(b, lj->layers, json_incref(digest));
	ra_jset(b, d, "MIMEType", media_type);
	ra_jset(b, d, "Digest", digest);
	ra_jset(b, d, "Size", size);
	ra_jset(b, d, "Annotations", json_null());
	ra_japp(b, lj->data, d);
	ra_japp(b, lj->diffs, diff_id);
}

/*
 * The chain id of the layers whose diff ids @diffs lists, bottom first
 * (image-spec's ChainID: what containerd names the snapshot of an image's
 * top layer, which rootasm-runtime compares), or null.
 */
static json_t *chain_of(json_t *diffs)
{
	char chain[RA_DIGEST_MAX] = "";
	size_t n = json_array_size(diffs);
	int r = n ? 0 : -EINVAL;

	for (size_t i = 0; r == 0 && i < n; i++) {
		const char *d = json_string_value(json_array_get(diffs, i));

		r = d && ra_digest_parse(d, NULL) == 0 ? ra_chain_id_next(chain, d, i) : -EINVAL;
	}
	return r == 0 ? ra_jstr(chain) : json_null();
}

/* The document of @img, named @name. */
static json_t *describe(const struct ra_oci_image *img, const char *name)
{
	struct ra_jb b = { false };
	struct layers_json lj = { json_array(), json_array(), json_array() };
	json_t *o = json_object(), *cfg = img->config_doc, *run = img->run;

	ra_jset(&b, o, "Name", ra_jstr(name));
	ra_jset(&b, o, "Digest", ra_jstr(img->manifest.digest));
	ra_jset(&b, o, "Created", member(cfg, "created", JSON_STRING, json_null()));
	ra_jset(&b, o, "DockerVersion", member(cfg, "docker_version", JSON_STRING, json_string("")));
	ra_jset(&b, o, "Labels", member(run, "Labels", JSON_OBJECT, json_null()));
	ra_jset(&b, o, "Architecture", member(cfg, "architecture", JSON_STRING, json_string("")));
	ra_jset(&b, o, "Os", member(cfg, "os", JSON_STRING, json_string("")));
	for (size_t i = 0; i < img->nlayers; i++) {
		const struct ra_oci_layer *l = &img->layers[i];

		add_layer(&b, &lj, ra_jstr(l->d.digest), ra_jstr(l->d.media_type), json_integer((json_int_t)l->d.size),
			  ra_jstr(l->diff_id));
	}
	ra_jset(&b, o, "Layers", lj.layers);
	ra_jset(&b, o, "LayersData", lj.data);
	ra_jset(&b, o, "Env", member(run, "Env", JSON_ARRAY, json_null()));
	/* rootasm's: the config's own section (Cmd, Entrypoint, User, WorkingDir, ...), what the store keys by */
	ra_jset(&b, o, "Config", json_incref(json_is_object(run) ? run : json_null()));
	ra_jset(&b, o, "ManifestMediaType", ra_jstr(img->manifest.media_type));
	ra_jset(&b, o, "ConfigDigest", ra_jstr(img->config.digest));
	ra_jset(&b, o, "DiffIDs", lj.diffs);
	ra_jset(&b, o, "ChainID", chain_of(lj.diffs));
	if (b.oom) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/*
 * An image of the store (@ref: a name or digest, rootasm_store_lookup()):
 * what its record and layout say; the config itself is not kept, so no
 * Created, Architecture or Os, and Config is the layout's exec section.
 */
static json_t *describe_stored(const char *store, const char *ref, struct rootasm_error *e)
{
	_cleanup_free_ char *layout = NULL, *manifest = NULL;
	struct ra_jb b = { false };
	struct layers_json lj;
	json_t *o = NULL, *rec = NULL, *lay = NULL, *l;
	struct cat c = { .fd = -EBADF, .images = -EBADF, .layers = -EBADF, .lock = -EBADF };
	char name[RA_DIGEST_HEX + 16];
	size_t i;
	int r;

	/* looking is not using: its LAST USE stays */
	r = ra_store_lookup(store, ref, false, &layout, &manifest, e);
	if (r < 0)
		return NULL;
	r = cat_open(store, 0, &c, e);
	if (r < 0)
		return NULL;
	snprintf(name, sizeof(name), "%s.json", manifest + strlen("sha256:"));
	r = cat_load_json_at(c.images, name, RECORD_MAX, &rec);
	if (r == 0)
		r = cat_load_json_at(c.images, strrchr(layout, '/') + 1, RECORD_MAX, &lay);
	cat_close(&c);
	if (r < 0) {
		ra_err(e, r == -EBADMSG ? EINVAL : -r, -EBADF, "inspect", ref, "its record in %s", ra_store_path(store));
		goto out;
	}
	o = json_object();
	lj = (struct layers_json){ json_array(), json_array(), json_array() };
	ra_jset(&b, o, "Name", ra_jstr(ref));
	ra_jset(&b, o, "Digest", ra_jstr(manifest));
	json_array_foreach(json_object_get(rec, "layers"), i, l)
		add_layer(&b, &lj, json_incref(json_object_get(l, "digest")), json_incref(json_object_get(l, "mediaType")),
			  json_incref(json_object_get(l, "size")), json_incref(json_object_get(l, "diff_id")));
	ra_jset(&b, o, "Layers", lj.layers);
	ra_jset(&b, o, "LayersData", lj.data);
	ra_jset(&b, o, "Env", member(json_object_get(lay, "exec"), "env", JSON_ARRAY, json_null()));
	ra_jset(&b, o, "Config", member(lay, "exec", JSON_OBJECT, json_null()));
	ra_jset(&b, o, "ConfigDigest", json_incref(json_object_get(rec, "config")));
	ra_jset(&b, o, "DiffIDs", lj.diffs);
	ra_jset(&b, o, "ChainID", chain_of(lj.diffs));
	ra_jset(&b, o, "Layout", ra_jstr(layout));
	if (b.oom) {
		json_decref(o);
		o = NULL;
		ra_oom(e, "inspect");
	}
out:
	json_decref(rec);
	json_decref(lay);
	return o;
}

int rootasm_inspect(struct rootasm_ctx *ctx, const char *ref, const struct rootasm_import_opts *o, unsigned int flags,
		    char **ret, struct rootasm_error *e)
{
	const struct ra_source *kind = ra_source_of(ref);
	struct ra_registry_how how = ra_source_how(o);
	struct ra_source_open so = { .how = &how, .scratch_fd = -EBADF };
	struct ra_oci_image *img = NULL;
	char tmp[] = "/tmp/rootasm-inspect-XXXXXX";
	bool made = false;
	char *text = NULL;
	json_t *doc = NULL;
	int r;

	ctx = ra_ctx(ctx);
	r = RA_OPTS_CHECK(o, struct rootasm_import_opts, offsetof(struct rootasm_import_opts, progress), "inspect",
			  ref, e);
	if (r < 0)
		return r;
	if (!ret)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "inspect", ref, "no result pointer");
	*ret = NULL;
	if (flags & ~ROOTASM_INSPECT_RAW)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "inspect", ref, "unknown flags 0x%x",
				   flags & ~ROOTASM_INSPECT_RAW);
	if (!ref || !*ref)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "inspect", ref, "no image reference");
	/* (a transport rootasm does not read is no name of the store's: said as such) */
	if (!kind && !strchr(ref, '@') && (r = ra_source_foreign(ref, "inspect", e)) < 0) {
		struct rootasm_error found = { 0 };

		/* (a stored REGISTRY/NAME is the store's image, docker:// or not; a look, not a use) */
		if (ra_store_lookup(OPT(o, store, NULL), ref, false, NULL, NULL, &found) < 0)
			return r;
		*e = (struct rootasm_error){ 0 };
	}
	if (!kind) {
		/* a name or digest of the store: what it keeps of the image */
		if (flags & ROOTASM_INSPECT_RAW)
			return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "inspect", ref,
					   "the store keeps no manifest to print raw; inspect its source");
		doc = describe_stored(OPT(o, store, NULL), ref, e);
		if (!doc)
			return -(e && e->err ? e->err : EIO);
		goto print;
	}
	r = kind->check ? kind->check(ref, e) : 0;
	if (r < 0)
		return r;
	if (kind->needs_scratch) {
		/* a source that unpacks (an archive, as import reads it) does it in a private directory */
		if (!mkdtemp(tmp))
			return ra_err(e, errno, -EBADF, "mkdtemp", tmp, NULL);
		made = true;
		so.scratch = tmp;
		so.scratch_fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (so.scratch_fd < 0) {
			r = ra_err(e, errno, -EBADF, "open", tmp, NULL);
			goto out;
		}
	}
	r = kind->open(ref, &so, e);
	if (r < 0)
		goto out;
	img = so.img;
	RA_TRACE(ctx, "inspect %s: manifest %s, %zu layers", ref, img->manifest.digest, img->nlayers);
	if (flags & ROOTASM_INSPECT_RAW) {
		text = img->manifest_raw ? strndup(img->manifest_raw, img->manifest_raw_len) : NULL;
		r = text ? 0 : ra_oom(e, "inspect");
		goto out;
	}
	/* as the source names it (a registry's HOST/REPO, as skopeo does), else as given */
	doc = describe(img, so.display ? so.display : ref);
print:
	if (doc)
		text = json_dumps(doc, JSON_INDENT(4) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
	json_decref(doc);
	r = text ? 0 : ra_oom(e, "inspect");
out:
	ra_source_close(kind, &so);	/* the image, and what the source unpacked */
	close_fdp(&so.scratch_fd);
	if (made)
		rmdir(tmp);
	if (r == 0)
		*ret = text;
	else
		free(text);
	return r;
}

int rootasm_registry_login(const char *registry, const struct rootasm_import_opts *o, char **ret_auth,
			   struct rootasm_error *e)
{
	struct ra_registry_how how = { 0 };
	const char *creds;
	int r;

	r = RA_OPTS_CHECK(o, struct rootasm_import_opts, offsetof(struct rootasm_import_opts, progress), "log in",
			  registry, e);
	if (r < 0)
		return r;
	if (ret_auth)
		*ret_auth = NULL;
	creds = OPT(o, creds, NULL);
	if (!creds || !strchr(creds, ':') || creds[0] == ':')
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "log in", registry, "credentials USER:PASSWORD expected");
	how.tls_verify = !(OPT(o, flags, 0u) & ROOTASM_IMPORT_TLS_NO_VERIFY);
	how.creds = creds;
	how.cert_dir = OPT(o, cert_dir, NULL);
	return ra_registry_login(registry, &how, ret_auth, e);
}
