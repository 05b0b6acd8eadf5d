/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SHA-256 through OpenSSL's libcrypto (EVP, loaded on first use), and the one parser of OCI
 * digests: "sha256:" followed by exactly 64 lowercase hex digits. Other
 * algorithms (sha512, ...) are refused by name.
 */
#ifndef ROOTASM_DIGEST_H
#define ROOTASM_DIGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RA_DIGEST_HEX		64
#define RA_DIGEST_MAX		(7 + RA_DIGEST_HEX + 1)	/* "sha256:" + hex + NUL */

struct ra_sha256 {
	void *md;		/* EVP_MD_CTX */
	uint64_t bytes;		/* how many were hashed */
};

/* 0, -ENOMEM, or -ELIBACC (libcrypto.so.3 could not be loaded). */
int ra_sha256_init(struct ra_sha256 *h);
void ra_sha256_update(struct ra_sha256 *h, const void *buf, size_t len);
/* "sha256:<hex>" into @out (RA_DIGEST_MAX bytes); frees the context. */
int ra_sha256_final(struct ra_sha256 *h, char out[RA_DIGEST_MAX]);
void ra_sha256_free(struct ra_sha256 *h);
/*
 * The chain id of layer @i (image-spec config.md, "ChainID"): @chain holds
 * layer i-1's, gets layer i's (its diff id @diff_id for i == 0). 0, -ENOMEM
 * or -ELIBACC.
 */
int ra_chain_id_next(char chain[RA_DIGEST_MAX], const char *diff_id, size_t i);
/* The sha256 of @len bytes at @buf into @out: 0, -ENOMEM or -ELIBACC. */
int ra_sha256_buf(const void *buf, size_t len, char out[RA_DIGEST_MAX]);
/* The sha256 of all of @fd (read with pread from offset 0) into @out; its size in *ret_bytes. 0 or -errno. */
int ra_sha256_fd(int fd, char out[RA_DIGEST_MAX], uint64_t *ret_bytes);

/*
 * Whether @s is a digest rootasm accepts; on success @hex (65 bytes, may be
 * NULL) receives the hex part. Returns 0, -EINVAL (malformed) or
 * -EOPNOTSUPP (a well-formed digest of another algorithm).
 */
int ra_digest_parse(const char *s, char hex[RA_DIGEST_HEX + 1]);

#endif
