// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The table of volume kinds (volume.h), and the words it gives messages.
 */
#include <stdio.h>
#include <string.h>

#include "volume.h"

const struct ra_volume_kind *const ra_volume_kinds[RA_MOUNT__COUNT] = {
	[RA_MOUNT_BIND] = &ra_volume_bind,
	[RA_MOUNT_TMPFS] = &ra_volume_tmpfs,
	[RA_MOUNT_IMAGE] = &ra_volume_image,
	[RA_MOUNT_LAYOUT] = &ra_volume_layout,
	[RA_MOUNT_OVERLAY] = &ra_volume_overlay,
};

/* "a", "a and b", "a, b and c" of the kinds @pick says yes to, each name in @quote, @last before the last. */
static const char *list(char *buf, size_t size, bool (*pick)(const struct ra_volume_kind *, unsigned int),
			unsigned int arg, const char *quote, const char *last)
{
	size_t n = 0, k = 0;

	for (size_t i = 0; i < RA_MOUNT__COUNT; i++)
		n += pick(ra_volume_kinds[i], arg);
	*buf = '\0';
	for (size_t i = 0; i < RA_MOUNT__COUNT; i++) {
		if (!pick(ra_volume_kinds[i], arg))
			continue;
		k++;
		snprintf(buf + strlen(buf), size - strlen(buf), "%s%s%s%s", k == 1 ? "" : k == n ? last : ", ", quote,
			 ra_volume_kinds[i]->name, quote);
	}
	return buf;
}

static bool takes(const struct ra_volume_kind *k, unsigned int vkey)
{
	return k->keys & vkey;
}

static bool any(const struct ra_volume_kind *k, unsigned int unused)
{
	return true;
}

const char *ra_volume_kinds_with(unsigned int vkey, char *buf, size_t size)
{
	list(buf, size, takes, vkey, "", " and ");
	snprintf(buf + strlen(buf), size - strlen(buf), " mounts");
	return buf;
}

const char *ra_volume_kind_names(char *buf, size_t size)
{
	return list(buf, size, any, 0, "'", " or ");
}
