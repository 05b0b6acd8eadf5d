/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef ROOTASM_PROBE_H
#define ROOTASM_PROBE_H

#include <stdbool.h>

#include "rootasm.h"

/* Probe @f once per process (cached). */
bool ra_feature(enum rootasm_feature f);
const char *ra_feature_detail(enum rootasm_feature f);

/* Fail with one line naming the first missing feature in @needs. */
int ra_require(unsigned int needs, struct rootasm_error *e);

#endif
