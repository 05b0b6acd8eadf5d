/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SHA-256 (FIPS 180-4) in a few hundred bytes of code, for the static
 * rootasm-runtime alone (static.c serves it as the library's libcrypto
 * table): the chain IDs of a Kubernetes container's image, a few short
 * strings per create. Not for bulk data: an import hashes with OpenSSL,
 * in rootasm-runtime-full.
 */
#ifndef RT_SHA256_H
#define RT_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct rt_sha256 {
	uint32_t h[8];
	uint64_t bytes;		/* hashed so far */
	unsigned char buf[64];	/* bytes % 64 of them wait here */
};

void rt_sha256_init(struct rt_sha256 *s);
void rt_sha256_update(struct rt_sha256 *s, const void *data, size_t len);
/* the digest into @out; @s is left initialised again */
void rt_sha256_final(struct rt_sha256 *s, unsigned char out[32]);

#endif
