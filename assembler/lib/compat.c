/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Functions of an older symbol version, for programs built against an older
 * rootasm.h (librootasm.map says which). Each converts to and from what the
 * current function takes; none is declared in rootasm.h.
 *
 * rootasm_import@LIBROOTASM_0.2, rootasm_import_result_free@LIBROOTASM_0.2:
 * struct rootasm_import_result and struct rootasm_import_layer as 0.2 and 0.3
 * declared them, without the name and the reserved space 0.4 added at their
 * ends. The caller's result struct is the old size, and it indexes the layer
 * array with the old stride: the import fills a current result, then the old
 * one is built from it. A progress callback gets the current layer struct,
 * whose old fields sit where they sat.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "rootasm.h"
#include "store.h"
#include "util.h"

struct import_layer_v02 {
	char digest[80];
	char diff_id[80];
	char media_type[128];
	unsigned long long size;
	unsigned long long tar_bytes;
	char *image;
	bool cached;
	double seconds;
};

struct import_result_v02 {
	char *store;
	char *layout;
	char manifest[80], config[80];
	struct import_layer_v02 *layers;
	size_t nlayers;
	bool wrote;
};

/* the old fields are a prefix of the current structs */
_Static_assert(offsetof(struct rootasm_import_layer, reserved) == sizeof(struct import_layer_v02),
	       "struct rootasm_import_layer grew before its reserved space");
_Static_assert(offsetof(struct rootasm_import_result, name) == sizeof(struct import_result_v02),
	       "struct rootasm_import_result grew before its name");
_Static_assert(offsetof(struct rootasm_import_layer, seconds) == offsetof(struct import_layer_v02, seconds),
	       "struct rootasm_import_layer's old fields moved");
_Static_assert(offsetof(struct rootasm_import_result, wrote) == offsetof(struct import_result_v02, wrote),
	       "struct rootasm_import_result's old fields moved");

RA_SYMVER("rootasm_import@LIBROOTASM_0.2")
int ra_import_v02(struct rootasm_ctx *ctx, const char *ref, const struct rootasm_import_opts *o,
		  struct import_result_v02 *res, struct rootasm_error *e);
RA_SYMVER("rootasm_import_result_free@LIBROOTASM_0.2")
void ra_import_result_free_v02(struct import_result_v02 *res);

int ra_import_v02(struct rootasm_ctx *ctx, const char *ref, const struct rootasm_import_opts *o,
		  struct import_result_v02 *res, struct rootasm_error *e)
{
	struct rootasm_import_result cur;
	struct import_layer_v02 *layers;
	int r;

	if (!res)
		return rootasm_import(ctx, ref, o, NULL, e);	/* its usage error */
	memset(res, 0, sizeof(*res));
	r = rootasm_import(ctx, ref, o, &cur, e);
	if (r < 0)
		return r;
	layers = calloc(cur.nlayers ? cur.nlayers : 1, sizeof(*layers));
	if (!layers) {
		rootasm_import_result_free(&cur);
		return ra_oom(e, "import");
	}
	for (size_t i = 0; i < cur.nlayers; i++) {
		memcpy(&layers[i], &cur.layers[i], sizeof(layers[i]));
		cur.layers[i].image = NULL;	/* the old array owns it now */
	}
	res->store = TAKE_PTR(cur.store);
	res->layout = TAKE_PTR(cur.layout);
	memcpy(res->manifest, cur.manifest, sizeof(res->manifest));
	memcpy(res->config, cur.config, sizeof(res->config));
	res->layers = layers;
	res->nlayers = cur.nlayers;
	res->wrote = cur.wrote;
	rootasm_import_result_free(&cur);
	return r;
}

void ra_import_result_free_v02(struct import_result_v02 *res)
{
	if (!res)
		return;
	ra_import_result_release(res->layers, res->nlayers, sizeof(*res->layers),
				 offsetof(struct import_layer_v02, image), res->layout, res->store);
	memset(res, 0, sizeof(*res));
}
