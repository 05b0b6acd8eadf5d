// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The probe's answers as JSON (`rootasm probe --json`, rootasmd's probe),
 * beside the probe: through its public functions only, so that rootasmd's
 * helper library can carry it too.
 */
#include <errno.h>

#include "json.h"
#include "util.h"

const char *ra_feature_state(int answer)
{
	return answer > 0 ? "present" : answer == -EPERM ? "not-permitted" : "absent";
}

json_t *ra_features_json(struct rootasm_ctx *ctx)
{
	struct ra_jb b = { false };
	json_t *arr = json_array();

	for (unsigned int f = 0; f < rootasm_feature_count(); f++) {
		char detail[256] = "";
		int r = rootasm_probe_feature(ctx, f, detail, sizeof(detail));
		json_t *o = json_object();

		ra_jset(&b, o, "feature", ra_jstr(rootasm_feature_name(f)));
		ra_jset(&b, o, "state", ra_jstr(ra_feature_state(r)));
		/* not-permitted is no verdict on the kernel: present is unknown (null) then */
		ra_jset(&b, o, "present", r == -EPERM ? json_null() : json_boolean(r > 0));
		ra_jset(&b, o, "description", ra_jstr(rootasm_feature_desc(f)));
		ra_jset(&b, o, "detail", ra_jstr(detail));
		ra_japp(&b, arr, o);
	}
	if (b.oom || !arr) {
		json_decref(arr);
		return NULL;
	}
	return arr;
}
