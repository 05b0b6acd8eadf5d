// SPDX-License-Identifier: LGPL-2.1-or-later
/* rootasm-runtime-full (and rootasm-runtime-abi): the runtime that loads libraries (runtime.h: rt_static). */
#include <stdbool.h>

#include "runtime.h"

const bool rt_static = false;
