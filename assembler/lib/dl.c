// SPDX-License-Identifier: LGPL-2.1-or-later
/* Libraries loaded when first needed (dl.h). */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dl.h"
#include "util.h"

int ra_dl_load(struct ra_dl *d, struct rootasm_error *e)
{
	char why[256] = "";
	int err = 0;

	if (__atomic_load_n(&d->ok, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&d->lock);
	if (!d->ok) {
		void *h;

		errno = 0;
		h = dlopen(d->soname, RTLD_NOW | RTLD_LOCAL);
		err = errno;
		if (!h)
			snprintf(why, sizeof(why), "%s", dlerror());
		for (size_t i = 0; h && !why[0] && i < d->n; i++) {
			void *p = dlsym(h, d->names[i]);

			if (!p)
				snprintf(why, sizeof(why), "%s", dlerror());
			else
				memcpy((char *)d->table + i * sizeof(p), &p, sizeof(p));
		}
		if (!why[0] && d->init && d->init() < 0) {
			err = ENOMEM;
			snprintf(why, sizeof(why), "%s: its initialisation failed", d->soname);
		}
		if (!why[0])
			__atomic_store_n(&d->ok, true, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&d->lock);
	if (!why[0])
		return 0;
	/* glibc's loader says "cannot allocate ..." or leaves the allocator's ENOMEM in errno */
	if (err == ENOMEM || strstr(why, "allocate"))
		return ra_oom(e, d->op);
	return ra_err(e, ELIBACC, -EBADF, d->op, d->soname, "%s (%s)", why, d->needs);
}
