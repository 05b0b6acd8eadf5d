// SPDX-License-Identifier: LGPL-2.1-or-later
/* SHA-256 and OCI digest strings (digest.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

#include "digest.h"

int ra_sha256_init(struct ra_sha256 *h)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();

	h->md = NULL;
	h->bytes = 0;
	if (!c)
		return -ENOMEM;
	if (EVP_DigestInit_ex(c, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(c);
		return -ENOMEM;
	}
	h->md = c;
	return 0;
}

void ra_sha256_update(struct ra_sha256 *h, const void *buf, size_t len)
{
	if (len) {
		EVP_DigestUpdate(h->md, buf, len);
		h->bytes += len;
	}
}

int ra_sha256_final(struct ra_sha256 *h, char out[RA_DIGEST_MAX])
{
	unsigned char md[32];
	unsigned int n = 0;
	int r = 0;

	if (EVP_DigestFinal_ex(h->md, md, &n) != 1 || n != 32)
		r = -EIO;
	ra_sha256_free(h);
	if (r < 0)
		return r;
	memcpy(out, "sha256:", 7);
	for (unsigned int i = 0; i < 32; i++)
		snprintf(out + 7 + 2 * i, 3, "%02x", md[i]);
	return 0;
}

void ra_sha256_free(struct ra_sha256 *h)
{
	EVP_MD_CTX_free(h->md);
	h->md = NULL;
}

int ra_digest_parse(const char *s, char hex[RA_DIGEST_HEX + 1])
{
	const char *c = s ? strchr(s, ':') : NULL;

	if (!c || c == s)
		return -EINVAL;
	if (c - s != 6 || memcmp(s, "sha256", 6)) {
		/* algorithm: [a-z0-9]+([+._-][a-z0-9]+)* (image-spec descriptor.md) */
		for (const char *p = s; p < c; p++)
			if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || strchr("+._-", *p)))
				return -EINVAL;
		return -EOPNOTSUPP;
	}
	c++;
	if (strlen(c) != RA_DIGEST_HEX)
		return -EINVAL;
	for (int i = 0; i < RA_DIGEST_HEX; i++)
		if (!((c[i] >= '0' && c[i] <= '9') || (c[i] >= 'a' && c[i] <= 'f')))
			return -EINVAL;
	if (hex)
		memcpy(hex, c, RA_DIGEST_HEX + 1);
	return 0;
}
