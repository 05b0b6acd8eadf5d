// SPDX-License-Identifier: LGPL-2.1-or-later
/* The plan: the ordered operations a layout turns into, as text or JSON. */
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>

#include "layout.h"
#include "util.h"

static const char *const layer_kind[] = { "image", "dir" };
static const char *const mount_kind[] = { "bind", "tmpfs", "image", "layout" };
static const char *const fstype[] = { "auto", "squashfs", "erofs" };

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void attrs_list(FILE *f, const struct ra_attrs *a, bool json)
{
	static const struct {
		uint64_t bit;
		const char *name;
	} t[] = {
		{ MOUNT_ATTR_RDONLY, "ro" }, { MOUNT_ATTR_NOSUID, "nosuid" }, { MOUNT_ATTR_NODEV, "nodev" },
		{ MOUNT_ATTR_NOEXEC, "noexec" }, { MOUNT_ATTR_NOSYMFOLLOW, "nosymfollow" },
		{ MOUNT_ATTR_NODIRATIME, "nodiratime" }, { MOUNT_ATTR_NOATIME, "noatime" },
		{ MOUNT_ATTR_STRICTATIME, "strictatime" },
	};
	const char *prop = a->propagation == MS_PRIVATE ? "private" : a->propagation == MS_SHARED ? "shared" :
			   a->propagation == MS_SLAVE ? "slave" : a->propagation == MS_UNBINDABLE ? "unbindable" : NULL;
	bool first = true;

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		if (!(a->set & t[i].bit))
			continue;
		fprintf(f, json ? "%s\"%s\"" : "%s%s", first ? "" : json ? ", " : ",", t[i].name);
		first = false;
	}
	if (prop) {
		fprintf(f, json ? "%s\"%s\"" : "%s%s", first ? "" : json ? ", " : ",", prop);
		first = false;
	}
	if (a->recursive)
		fprintf(f, json ? "%s\"%s\"" : "%s%s", first ? "" : json ? ", " : ",", "recursive");
	else if (first && !json)
		fputc('-', f);
}

static void caps_list(FILE *f, uint64_t caps, bool json)
{
	bool first = true;

	for (unsigned int c = 0; c < 64; c++) {
		if (!(caps & (1ULL << c)))
			continue;
		fprintf(f, json ? "%s\"%s\"" : "%s%s", first ? "" : json ? ", " : ",", ra_cap_name(c));
		first = false;
	}
	if (first && !json)
		fputs("none", f);
}

static void print_text(FILE *f, const struct rootasm_layout *l, int indent)
{
	int step = 1;

	fprintf(f, "%*slayout %s\n", indent, "", l->file);
	for (size_t i = 0; i < l->nlayers; i++) {
		const struct ra_layer *ly = &l->layers[i];

		fprintf(f, "%*s%2d. layer %zu (%s%s%s) %s\n", indent, "", step++, i, layer_kind[ly->kind],
			ly->kind == RA_LAYER_IMAGE ? ", " : "", ly->kind == RA_LAYER_IMAGE ? fstype[ly->fstype] : "",
			ly->path);
	}
	if (l->upper.kind == RA_UPPER_TMPFS)
		fprintf(f, "%*s%2d. upper tmpfs size=%s\n", indent, "", step++,
			l->upper.tmpfs.size ? l->upper.tmpfs.size : "default");
	else if (l->upper.kind == RA_UPPER_DIR)
		fprintf(f, "%*s%2d. upper dir %s\n", indent, "", step++, l->upper.path);
	if (l->nlayers > 1 || l->upper.kind != RA_UPPER_NONE) {
		fprintf(f, "%*s%2d. overlay of %zu layer(s)%s", indent, "", step++, l->nlayers,
			l->upper.kind == RA_UPPER_NONE ? ", read-only" : "");
		if (l->creds.set) {
			fprintf(f, ", override_creds uid=%u gid=%u groups=", l->creds.uid, l->creds.gid);
			for (size_t i = 0; i < l->creds.ngroups; i++)
				fprintf(f, "%s%u", i ? "," : "", l->creds.groups[i]);
			if (!l->creds.ngroups)
				fputs("none", f);
			fputs(" caps=", f);
			caps_list(f, l->creds.caps, false);
		}
		fputc('\n', f);
	} else {
		fprintf(f, "%*s%2d. root is layer 0, read-only\n", indent, "", step++);
	}
	for (size_t i = 0; i < l->nmounts; i++) {
		const struct ra_mount *m = &l->mounts[i];

		fprintf(f, "%*s%2d. mount %s %s on %s options=", indent, "", step++, mount_kind[m->kind],
			m->source ? m->source : "-", m->target);
		attrs_list(f, &m->attrs, false);
		if (m->tmpfs.size)
			fprintf(f, " size=%s", m->tmpfs.size);
		if (m->tmpfs.nr_inodes)
			fprintf(f, " nr_inodes=%s", m->tmpfs.nr_inodes);
		if (m->tmpfs.has_mode)
			fprintf(f, " mode=%o", m->tmpfs.mode);
		fputc('\n', f);
		if (m->nested)
			print_text(f, m->nested, indent + 4);
	}
	if (l->attributes.set || l->attributes.propagation) {
		fprintf(f, "%*s%2d. root attributes ", indent, "", step++);
		attrs_list(f, &l->attributes, false);
		fputc('\n', f);
	}
}

static void print_json(FILE *f, const struct rootasm_layout *l)
{
	fputs("{\"layout\": ", f);
	json_str(f, l->file);
	fputs(", \"layers\": [", f);
	for (size_t i = 0; i < l->nlayers; i++) {
		fprintf(f, "%s{\"kind\": \"%s\", \"path\": ", i ? ", " : "", layer_kind[l->layers[i].kind]);
		json_str(f, l->layers[i].path);
		if (l->layers[i].kind == RA_LAYER_IMAGE)
			fprintf(f, ", \"type\": \"%s\"", fstype[l->layers[i].fstype]);
		fputc('}', f);
	}
	fputs("], \"upper\": ", f);
	if (l->upper.kind == RA_UPPER_TMPFS) {
		fputs("{\"kind\": \"tmpfs\", \"size\": ", f);
		if (l->upper.tmpfs.size)
			json_str(f, l->upper.tmpfs.size);
		else
			fputs("null", f);
		fputc('}', f);
	} else if (l->upper.kind == RA_UPPER_DIR) {
		fputs("{\"kind\": \"dir\", \"path\": ", f);
		json_str(f, l->upper.path);
		fputc('}', f);
	} else {
		fputs("null", f);
	}
	fputs(", \"override_creds\": ", f);
	if (l->creds.set) {
		fprintf(f, "{\"uid\": %u, \"gid\": %u, \"groups\": [", l->creds.uid, l->creds.gid);
		for (size_t i = 0; i < l->creds.ngroups; i++)
			fprintf(f, "%s%u", i ? ", " : "", l->creds.groups[i]);
		fputs("], \"capabilities\": [", f);
		caps_list(f, l->creds.caps, true);
		fputs("]}", f);
	} else {
		fputs("null", f);
	}
	fputs(", \"mounts\": [", f);
	for (size_t i = 0; i < l->nmounts; i++) {
		const struct ra_mount *m = &l->mounts[i];

		fprintf(f, "%s{\"kind\": \"%s\", \"source\": ", i ? ", " : "", mount_kind[m->kind]);
		if (m->source)
			json_str(f, m->source);
		else
			fputs("null", f);
		fputs(", \"target\": ", f);
		json_str(f, m->target);
		fputs(", \"options\": [", f);
		attrs_list(f, &m->attrs, true);
		fputc(']', f);
		if (m->nested) {
			fputs(", \"nested\": ", f);
			print_json(f, m->nested);
		}
		fputc('}', f);
	}
	fputs("], \"attributes\": [", f);
	attrs_list(f, &l->attributes, true);
	fprintf(f, "], \"exec\": {\"deny_mount_api\": %s}}", l->deny_mount_api ? "true" : "false");
}

int rootasm_layout_print_plan(const struct rootasm_layout *l, void *out, enum rootasm_plan_format fmt)
{
	FILE *f = out;

	if (fmt == ROOTASM_PLAN_JSON) {
		print_json(f, l);
		fputc('\n', f);
	} else {
		print_text(f, l, 0);
	}
	return ferror(f) ? -EIO : 0;
}
