// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Writing a layout (layout-write.h): the parts of a layout document as
 * JSON, one place for the key names and their order that import and bundle
 * prepare write.
 */
#include "layout-write.h"

json_t *ra_layout_json_doc(struct ra_jb *jb)
{
	struct ra_jb own = { 0 };
	json_t *o = json_object();

	ra_jset(jb ? jb : &own, o, "version", json_integer(1));
	return o;
}

json_t *ra_layout_json_image(const char *image, const char *type)
{
	return json_pack("{s:s, s:s}", "image", image, "type", type);
}

json_t *ra_layout_json_upper_tmpfs(void)
{
	return json_pack("{s:{}}", "tmpfs");
}

json_t *ra_layout_json_upper_dir(const char *dir)
{
	return json_pack("{s:s}", "dir", dir);
}

json_t *ra_layout_json_upper_dirs(const char *upperdir, const char *workdir)
{
	return json_pack("{s:s, s:s}", "upperdir", upperdir, "workdir", workdir);
}

json_t *ra_layout_json_idmap(json_t *uids, json_t *gids)
{
	return json_pack("{s:o, s:o}", "uids", uids, "gids", gids);
}

json_t *ra_layout_json_bind(const char *src, const char *target, json_t *options)
{
	return json_pack("{s:s?, s:s, s:o}", "bind", src, "target", target, "options", options);
}

json_t *ra_layout_json_tmpfs(const char *target, json_t *options)
{
	return json_pack("{s:s, s:o}", "tmpfs", target, "options", options);
}
