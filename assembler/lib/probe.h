/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef ROOTASM_PROBE_H
#define ROOTASM_PROBE_H

#include <stdbool.h>
#include <stdint.h>

#include "rootasm.h"

/* Probe @f once per context (cached): 1 present, 0 absent, -EPERM not permitted to try. */
int ra_feature(struct rootasm_ctx *ctx, enum rootasm_feature f);

/* Fail with one line naming the first missing (or not permitted) feature in @needs. */
int ra_require(struct rootasm_ctx *ctx, uint64_t needs, struct rootasm_error *e);

/*
 * The answers kept across processes (probecache.c): load fills the context's
 * unknown answers from the file when its key matches this process and boot
 * (once per context); save writes them back when it probed something new and
 * is root. Both with the context locked; neither fails (no file: probe).
 */
void ra_probe_cache_load(struct rootasm_ctx *c);
void ra_probe_cache_save(struct rootasm_ctx *c);

#endif
