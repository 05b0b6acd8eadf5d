/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A layout document, YAML or JSON, as a JSON object (layout-json.c). */
#ifndef ROOTASM_LAYOUT_JSON_H
#define ROOTASM_LAYOUT_JSON_H

#include <jansson.h>

#include "rootasm.h"

/*
 * @buf (@len bytes, named @file in errors) checked as `rootasm check
 * --offline` checks a layout (the same errors), then as a new JSON object in
 * *@ret (the caller's).
 */
int ra_layout_to_json(const char *buf, size_t len, const char *file, json_t **ret, struct rootasm_error *e);

#endif
