// SPDX-License-Identifier: LGPL-2.1-or-later
/* rootasm-cli-abi and rootasm-runtime-abi link libjansson as usual: their ra_jansson_load() has nothing to load. */
#include "dl.h"

int ra_jansson_load(struct rootasm_error *e)
{
	(void)e;
	return 0;
}
