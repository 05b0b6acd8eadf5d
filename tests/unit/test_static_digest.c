// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The static rootasm-runtime's libcrypto (assembler/runtime/static.c): the
 * library's digest.c through the table static.c serves, as the static
 * runtime links them (static.c's ra_dl_load(), not dl.c's): SHA-256 and
 * chain IDs as OpenSSL gives them, and nothing longer than 64 KiB hashed
 * (bulk data is rootasm-runtime-full's).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>

#include "digest.h"

/* OpenSSL's "sha256:HEX" of @len bytes at @buf */
static void openssl_digest(const void *buf, size_t len, char out[RA_DIGEST_MAX])
{
	unsigned char md[32];
	unsigned int n;

	assert_int_equal(EVP_Digest(buf, len, md, &n, EVP_sha256(), NULL), 1);
	memcpy(out, "sha256:", 7);
	for (int i = 0; i < 32; i++)
		snprintf(out + 7 + 2 * i, 3, "%02x", md[i]);
}

static void test_digests_as_openssl(void **state)
{
	static unsigned char buf[64 * 1024 + 1];
	char want[RA_DIGEST_MAX], got[RA_DIGEST_MAX];
	static const size_t lens[] = { 0, 3, 55, 56, 64, 1000, 64 * 1024 };

	(void)state;
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 131 + 7);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		openssl_digest(buf, lens[i], want);
		assert_int_equal(ra_sha256_buf(buf, lens[i], got), 0);
		assert_string_equal(got, want);
	}
	/* more than 64 KiB: refused, not hashed */
	assert_int_equal(ra_sha256_buf(buf, sizeof(buf), got), -EIO);
}

static void test_chain_ids_as_openssl(void **state)
{
	const char *diff[3] = { "sha256:1111111111111111111111111111111111111111111111111111111111111111",
				"sha256:2222222222222222222222222222222222222222222222222222222222222222",
				"sha256:3333333333333333333333333333333333333333333333333333333333333333" };
	char chain[RA_DIGEST_MAX], want[RA_DIGEST_MAX], s[2 * RA_DIGEST_MAX];

	(void)state;
	assert_int_equal(ra_chain_id_next(chain, diff[0], 0), 0);
	assert_string_equal(chain, diff[0]);
	snprintf(want, sizeof(want), "%s", diff[0]);
	for (int i = 1; i < 3; i++) {
		/* image-spec: ChainID(L0|...|Ln) = SHA256(ChainID(L0|...|Ln-1) + " " + DiffID(Ln)) */
		snprintf(s, sizeof(s), "%s %s", want, diff[i]);
		openssl_digest(s, strlen(s), want);
		assert_int_equal(ra_chain_id_next(chain, diff[i], i), 0);
		assert_string_equal(chain, want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_digests_as_openssl),
		cmocka_unit_test(test_chain_ids_as_openssl),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
