/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef ROOTASM_PROBE_H
#define ROOTASM_PROBE_H

#include <stdbool.h>
#include <stdint.h>

#include "rootasm.h"

/* Probe @f once per context (cached): 1 present, 0 absent, -EPERM not permitted to try. */
int ra_feature(struct rootasm_ctx *ctx, enum rootasm_feature f);

/* ra_feature() as a plan "have" callback (plan.h): present or not. */
bool ra_feature_bool(void *ctx, enum rootasm_feature f);

/* Fail with one line naming the first missing (or not permitted) feature in @needs. */
int ra_require(struct rootasm_ctx *ctx, uint64_t needs, struct rootasm_error *e);

#endif
