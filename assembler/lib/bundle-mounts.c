// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A bundle's config.json as a layout's parts (for bundle-prepare.c): the
 * layout's host paths made absolute, linux.uidMappings/gidMappings as its
 * idmap, and the config's mounts rootasm takes (bundle.c's top comment says
 * which) as its binds and tmpfs mounts.
 */
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>

#include <jansson.h>

#include "bundle.h"
#include "context.h"
#include "exec.h"
#include "layout.h"
#include "layout-write.h"
#include "open.h"
#include "passwd.h"
#include "uapi.h"
#include "util.h"

/* @p made absolute against @base (a directory) when it is relative; caller frees. */
char *bd_absolute(const char *base, const char *p)
{
	char *r = NULL;

	if (p[0] == '/')
		return strdup(p);
	if (asprintf(&r, "%s/%s", base, p) < 0)
		return NULL;
	return r;
}

static int set_absolute(json_t *o, const char *key, const char *base)
{
	json_t *v = json_object_get(o, key);
	char *a;
	int r;

	if (!json_is_string(v))
		return 0;
	a = bd_absolute(base, json_string_value(v));
	r = a ? json_object_set_new(o, key, json_string(a)) : -1;
	free(a);
	return r < 0 ? -ENOMEM : 0;
}

/* In the layout @l (from @ldir), every relative host path made absolute. */
int bd_absolutize(json_t *l, const char *ldir)
{
	static const char *const keys[] = { "image", "dir", "bind", "layout" };
	static const char *const sect[] = { "layers", "mounts" };
	json_t *up = json_object_get(l, "upper");

	for (size_t s = 0; s < ARRAY_SIZE(sect); s++) {
		json_t *arr = json_object_get(l, sect[s]), *it;
		size_t i;

		json_array_foreach(arr, i, it) {
			for (size_t k = 0; k < ARRAY_SIZE(keys); k++)
				if (set_absolute(it, keys[k], ldir) < 0)
					return -ENOMEM;
		}
	}
	if (json_is_object(up) && set_absolute(up, "dir", ldir) < 0)
		return -ENOMEM;
	return 0;
}

/* OCI id mappings -> ["inside:outside:count", ...]; NULL (and *isbad set) when malformed. */
json_t *bd_ranges(json_t *maps, bool *isbad)
{
	json_t *a = json_array(), *m;
	size_t i;

	json_array_foreach(maps, i, m) {
		json_int_t c, h, s;
		char buf[96];

		if (json_unpack(m, "{s:I, s:I, s:I}", "containerID", &c, "hostID", &h, "size", &s) < 0 || c < 0 ||
		    h < 0 || s <= 0) {
			*isbad = true;
			json_decref(a);
			return NULL;
		}
		snprintf(buf, sizeof(buf), "%lld:%lld:%lld", (long long)c, (long long)h, (long long)s);
		json_array_append_new(a, json_string(buf));
	}
	return a;
}

/* The host id that container id 0 maps to in @maps, or -1. */
long long bd_host_root(json_t *maps)
{
	json_t *m;
	size_t i;

	json_array_foreach(maps, i, m) {
		json_int_t c, h, s;

		if (json_unpack(m, "{s:I, s:I, s:I}", "containerID", &c, "hostID", &h, "size", &s) == 0 && c <= 0 &&
		    0 < c + s)
			return h - c;
	}
	return -1;
}

/*
 * The layout entry for OCI mount @m, or NULL when rootasm leaves it to the runtime
 * (not bind/tmpfs, or an option rootasm cannot express; /dev of a tree that
 * is @nodev, a user's: the device nodes the runtime makes there would not open).
 */
json_t *bd_take_mount(json_t *m, const char *bundle, bool userns, bool nodev)
{
	static const char *const attrs[] = { "ro", "rw", "nosuid", "nodev", "noexec", "nosymfollow", "noatime",
					     "relatime", "strictatime", "nodiratime" };
	static const char *const noops[] = { "suid", "dev", "exec", "atime", "diratime", "bind" };
	static const char *const prop[][2] = { { "private", "private" }, { "rprivate", "private" },
					       { "shared", "shared" }, { "rshared", "shared" },
					       { "slave", "slave" }, { "rslave", "slave" },
					       { "unbindable", "unbindable" }, { "runbindable", "unbindable" } };
	const char *type = json_string_value(json_object_get(m, "type"));
	const char *src = json_string_value(json_object_get(m, "source"));
	const char *dst = json_string_value(json_object_get(m, "destination"));
	json_t *opts = json_object_get(m, "options"), *o, *lopts, *out;
	bool isbind = type && !strcmp(type, "bind"), recursive = false, proped = false;
	size_t i;

	json_array_foreach(opts, i, o) {
		const char *s = json_string_value(o);

		if (s && (!strcmp(s, "bind") || !strcmp(s, "rbind")))
			isbind = true;
	}
	if (!dst || dst[0] != '/' || strstr(dst, "/../") || !strcmp(dst, "/") || (nodev && !strcmp(dst, "/dev")))
		return NULL;
	if (!isbind && !(type && !strcmp(type, "tmpfs")))
		return NULL;
	/* in a user namespace a tmpfs must belong to the container's root: the runtime makes it there */
	if (!isbind && userns)
		return NULL;
	if (isbind && !src)
		return NULL;
	lopts = json_array();
	json_array_foreach(opts, i, o) {
		const char *s = json_string_value(o);
		bool ok = false;

		if (!s)
			goto leave;
		for (size_t k = 0; k < ARRAY_SIZE(noops); k++)
			ok |= !strcmp(s, noops[k]);
		if (ok)
			continue;
		if (!strcmp(s, "rbind")) {
			recursive = true;
			continue;
		}
		for (size_t k = 0; k < ARRAY_SIZE(attrs); k++)
			ok |= !strcmp(s, attrs[k]);
		for (size_t k = 0; !ok && k < ARRAY_SIZE(prop); k++) {
			if (!strcmp(s, prop[k][0])) {
				if (proped)
					goto leave;
				proped = ok = true;
				s = prop[k][1];
			}
		}
		if (!ok && !isbind && (!strncmp(s, "size=", 5) || !strncmp(s, "mode=", 5) || !strncmp(s, "nr_inodes=", 10)))
			ok = true;
		if (!ok)
			goto leave;
		json_array_append_new(lopts, json_string(s));
	}
	if (recursive)
		json_array_append_new(lopts, json_string("recursive"));
	if (isbind) {
		char *a = bd_absolute(bundle, src);

		out = ra_layout_json_bind(a, dst, lopts);
		free(a);
	} else {
		out = ra_layout_json_tmpfs(dst, lopts);
	}
	return out;
leave:
	json_decref(lopts);
	return NULL;
}
