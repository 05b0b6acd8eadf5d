// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The static rootasm-runtime's own SHA-256 (assembler/runtime/sha256.c, what
 * it checks a Kubernetes container's layers with): FIPS 180-4's examples, and
 * OpenSSL's digest of every length to 1000 bytes fed in random pieces.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>

#include "sha256.h"

static void hex(const unsigned char d[32], char out[65])
{
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static void check(const char *msg, size_t len, size_t repeat, const char *want)
{
	struct rt_sha256 s;
	unsigned char d[32];
	char got[65];

	rt_sha256_init(&s);
	for (size_t i = 0; i < repeat; i++)
		rt_sha256_update(&s, msg, len);
	rt_sha256_final(&s, d);
	hex(d, got);
	assert_string_equal(got, want);
}

static void test_fips_examples(void **state)
{
	(void)state;
	check("", 0, 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	check("abc", 3, 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	check("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, 1,
	      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	check("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrst"
	      "nopqrstu", 112, 1, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
	check("a", 1, 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/* every length to 1000 (each padding case: 55, 56, 63, 64 and their multiples) in random pieces, against OpenSSL */
static void test_against_openssl(void **state)
{
	unsigned char buf[1000], want[32], got[32];
	unsigned int n;

	(void)state;
	srandom(20261207);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)random();
	for (size_t len = 0; len <= sizeof(buf); len++) {
		EVP_MD_CTX *c = EVP_MD_CTX_new();
		struct rt_sha256 s;

		assert_non_null(c);
		assert_int_equal(EVP_DigestInit_ex(c, EVP_sha256(), NULL), 1);
		assert_int_equal(EVP_DigestUpdate(c, buf, len), 1);
		assert_int_equal(EVP_DigestFinal_ex(c, want, &n), 1);
		EVP_MD_CTX_free(c);
		rt_sha256_init(&s);
		for (size_t off = 0; off < len;) {
			size_t piece = (size_t)random() % 130;

			if (piece > len - off)
				piece = len - off;
			rt_sha256_update(&s, buf + off, piece);
			off += piece;
		}
		rt_sha256_final(&s, got);
		if (memcmp(got, want, 32))
			fail_msg("length %zu: the digests differ", len);
		/* final leaves it initialised: the empty message's digest next */
		rt_sha256_final(&s, got);
		assert_memory_equal(got, "\xe3\xb0\xc4\x42\x98\xfc\x1c\x14", 8);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fips_examples),
		cmocka_unit_test(test_against_openssl),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
