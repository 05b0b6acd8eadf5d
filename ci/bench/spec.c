// SPDX-License-Identifier: LGPL-2.1-or-later
/* The workload spec the baselines read (format in bench.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

#include "bench.h"

int b_fail(struct b_err *e, int err, const char *fmt, ...)
{
	va_list ap;

	e->err = err;
	va_start(ap, fmt);
	vsnprintf(e->what, sizeof(e->what), fmt, ap);
	va_end(ap);
	return -err;
}

void *b_grow(void *p, size_t n, size_t size)
{
	/* capacity doubles at powers of two */
	if (n && (n & (n - 1)))
		return p;
	p = realloc(p, (n ? 2 * n : 1) * size);
	if (!p)
		abort();
	return p;
}

/* "ro,nosuid,size=16M" -> flags, attributes and the rest as mount data. */
static int parse_opts(char *s, struct b_vol *v, struct b_err *e)
{
	static const struct {
		const char *name;
		unsigned long ms;
		uint64_t attr;
	} map[] = {
		{ "ro", MS_RDONLY, MOUNT_ATTR_RDONLY },
		{ "nosuid", MS_NOSUID, MOUNT_ATTR_NOSUID },
		{ "nodev", MS_NODEV, MOUNT_ATTR_NODEV },
		{ "noexec", MS_NOEXEC, MOUNT_ATTR_NOEXEC },
	};
	char data[256] = "";

	for (char *o = strtok(s, ","); o; o = strtok(NULL, ",")) {
		size_t i;

		for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
			if (!strcmp(o, map[i].name))
				break;
		if (i < sizeof(map) / sizeof(map[0])) {
			v->msflags |= map[i].ms;
			v->attrs |= map[i].attr;
		} else if (!strcmp(o, "rec")) {
			v->rec = true;
		} else if (!strcmp(o, "file")) {
			v->file = true;
		} else if (strchr(o, '=')) {
			if (strlen(data) + strlen(o) + 2 > sizeof(data))
				return b_fail(e, EINVAL, "spec: options too long");
			if (*data)
				strcat(data, ",");
			strcat(data, o);
		} else {
			return b_fail(e, EINVAL, "spec: unknown option '%s'", o);
		}
	}
	v->data = *data ? strdup(data) : NULL;
	return 0;
}

int spec_load(const char *path, struct b_spec *s, struct b_err *e)
{
	char line[8192];
	unsigned int lineno = 0;
	FILE *f = fopen(path, "re");

	memset(s, 0, sizeof(*s));
	if (!f)
		return b_fail(e, errno, "open spec %s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *w[4] = { 0 };
		int n = 0;

		lineno++;
		for (char *t = strtok(line, " \t\n"); t && n < 4; t = strtok(NULL, " \t\n"))
			w[n++] = t;
		if (!n || w[0][0] == '#')
			continue;
		if (!strcmp(w[0], "stage") && n == 2) {
			s->stage = strdup(w[1]);
		} else if (!strcmp(w[0], "target") && n == 2) {
			s->target = strdup(w[1]);
		} else if (!strcmp(w[0], "relative") && n == 2) {
			s->reldir = strdup(w[1]);
		} else if (!strcmp(w[0], "layer") && n >= 3) {
			struct b_layer *l;

			s->layers = b_grow(s->layers, s->nlayers, sizeof(*l));
			l = &s->layers[s->nlayers++];
			l->image = !strcmp(w[1], "image");
			l->path = strdup(w[2]);
			l->fstype = l->image ? strdup(n > 3 ? w[3] : "squashfs") : NULL;
		} else if (!strcmp(w[0], "upper") && n >= 2 && !strcmp(w[1], "tmpfs")) {
			s->upper = true;
			s->upper_data = n > 2 ? strdup(w[2]) : NULL;
		} else if ((!strcmp(w[0], "bind") && n >= 3) || (!strcmp(w[0], "tmpfs") && n >= 2)) {
			struct b_vol *v;
			bool bind = w[0][0] == 'b';
			char *opts = w[bind ? 3 : 2];
			int r;

			s->vols = b_grow(s->vols, s->nvols, sizeof(*v));
			v = &s->vols[s->nvols++];
			memset(v, 0, sizeof(*v));
			v->tmpfs = !bind;
			v->src = bind ? strdup(w[1]) : NULL;
			v->target = strdup(w[bind ? 2 : 1]);
			if (opts && (r = parse_opts(opts, v, e)) < 0) {
				fclose(f);
				return r;
			}
		} else {
			fclose(f);
			return b_fail(e, EINVAL, "%s:%u: cannot parse '%s'", path, lineno, w[0]);
		}
	}
	fclose(f);
	if (!s->nlayers)
		return b_fail(e, EINVAL, "%s: no layers", path);
	return 0;
}
