// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The OCI parsers that need no filesystem: digests, image references, layer media types;
 * and the loader of the libraries an import dlopen()s (dl.c).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "digest.h"
#include "dl.h"
#include "oci.h"

#define HEX "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void digests(void **state)
{
	char hex[RA_DIGEST_HEX + 1];

	assert_int_equal(ra_digest_parse("sha256:" HEX, hex), 0);
	assert_string_equal(hex, HEX);
	assert_int_equal(ra_digest_parse("sha512:" HEX HEX, hex), -EOPNOTSUPP);
	assert_int_equal(ra_digest_parse("sha256:" HEX "0", hex), -EINVAL);		/* too long */
	assert_int_equal(ra_digest_parse("sha256:0123", hex), -EINVAL);		/* too short */
	assert_int_equal(ra_digest_parse("sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef", hex),
			 -EINVAL);						/* uppercase */
	assert_int_equal(ra_digest_parse(HEX, hex), -EINVAL);			/* no algorithm */
	assert_int_equal(ra_digest_parse(":" HEX, hex), -EINVAL);
	assert_int_equal(ra_digest_parse("SHA256:" HEX, hex), -EINVAL);		/* not an algorithm name */
	assert_int_equal(ra_digest_parse(NULL, hex), -EINVAL);
}

static void sha256_of_abc(void **state)
{
	struct ra_sha256 h;
	char out[RA_DIGEST_MAX];

	assert_int_equal(ra_sha256_init(&h), 0);
	ra_sha256_update(&h, "a", 1);
	ra_sha256_update(&h, "bc", 2);
	assert_int_equal(ra_sha256_final(&h, out), 0);
	assert_string_equal(out, "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void refs(void **state)
{
	struct rootasm_error e = { 0 };
	char *dir = NULL, *tag = NULL;

	assert_int_equal(ra_oci_parse_ref("oci:/srv/img:v1", &dir, &tag, &e), 0);
	assert_string_equal(dir, "/srv/img");
	assert_string_equal(tag, "v1");
	free(dir);
	free(tag);
	assert_int_equal(ra_oci_parse_ref("oci:rel/dir", &dir, &tag, &e), 0);
	assert_string_equal(dir, "rel/dir");
	assert_null(tag);
	free(dir);
	assert_int_equal(ra_oci_parse_ref("oci:d:a:b", &dir, &tag, &e), 0);	/* the tag is what follows the first ':' */
	assert_string_equal(tag, "a:b");
	free(dir);
	free(tag);
	assert_int_equal(ra_oci_parse_ref("/srv/img", &dir, &tag, &e), -EINVAL);
	assert_int_equal(e.kind, ROOTASM_ERROR_USAGE);
	assert_int_equal(ra_oci_parse_ref("docker://debian", &dir, &tag, &e), -EINVAL);
	assert_int_equal(ra_oci_parse_ref("oci:", &dir, &tag, &e), -EINVAL);
	assert_int_equal(ra_oci_parse_ref("oci::tag", &dir, &tag, &e), -EINVAL);
	assert_int_equal(ra_oci_parse_ref("oci:dir:", &dir, &tag, &e), -EINVAL);
}

static void media_types(void **state)
{
	assert_int_equal(ra_oci_layer_comp("application/vnd.oci.image.layer.v1.tar"), RA_OCI_TAR);
	assert_int_equal(ra_oci_layer_comp("application/vnd.oci.image.layer.v1.tar+gzip"), RA_OCI_GZIP);
	assert_int_equal(ra_oci_layer_comp("application/vnd.oci.image.layer.v1.tar+zstd"), RA_OCI_ZSTD);
	assert_int_equal(ra_oci_layer_comp("application/vnd.docker.image.rootfs.diff.tar.gzip"), RA_OCI_GZIP);
	assert_int_equal(ra_oci_layer_comp("application/vnd.docker.image.rootfs.diff.tar"), RA_OCI_TAR);
	assert_int_equal(ra_oci_layer_comp("application/vnd.docker.image.rootfs.foreign.diff.tar.gzip"), RA_OCI_GZIP);
	assert_int_equal(ra_oci_layer_comp("application/vnd.oci.image.layer.v1.tar+bzip2"), -EOPNOTSUPP);
	assert_int_equal(ra_oci_layer_comp(NULL), -EOPNOTSUPP);
}

/* Store names: the reference grammar, ":latest" added, nothing that could escape the store. */
static void store_names(void **state)
{
	static const struct {
		const char *in, *out;
	} good[] = {
		{ "debian", "debian:latest" },
		{ "debian:bookworm", "debian:bookworm" },
		{ "library/debian:12.5-slim", "library/debian:12.5-slim" },
		{ "localhost:5000/a/b__c/d-e.f:_t", "localhost:5000/a/b__c/d-e.f:_t" },
		{ "registry.example.com/team/img", "registry.example.com/team/img:latest" },
		{ "a--b", "a--b:latest" },
		{ "localhost:65535/a", "localhost:65535/a:latest" },
		{ "h:1/a:b", "h:1/a:b" },
	};
	static const char *const bad[] = {
		"", ":", "a:", "../a", "a/../b", "a/./b", "/a", "a/", "a//b", "A", "a..b", "a.", ".a", "-a", "a_",
		"a___b", "a:b:c", "a:-x", "a:x/y", "a\tb", "a b", "host:port/x", "a/b:" , "localhost:99999/a", "localhost:65536/a", "localhost:0/a", "localhost:00000/a", "x:" "0123456789012345678901234567890123456789"
		"01234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890",
	};
	char out[512];

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(rootasm_store_name_normalize(good[i].in, out, sizeof(out)), 0);
		assert_string_equal(out, good[i].out);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (rootasm_store_name_normalize(bad[i], out, sizeof(out)) != -EINVAL)
			fail_msg("'%s' was taken as a store name", bad[i]);
}

/* ra_dl_load(): the library's symbols, or one error naming it; a failure is not kept */
#define LC_FUNCS(X) X(getpid) X(strlen)
RA_DL_TABLE(lc, LC_FUNCS, "librootasm-test-none.so.0", "load test", "it needs nothing");
static int init_calls;
static int init_fails_once(void)
{
	return init_calls++ ? 0 : -1;
}

static void dl_load(void **state)
{
	static const char *const missing[] = { "getpid", "rootasm_no_such_function" };
	struct rootasm_error e = { 0 };

	(void)state;
	/* no such library: ELIBACC, naming it and the package */
	assert_int_equal(ra_dl_load(&lc_dl, &e), -ELIBACC);
	assert_string_equal(e.op, "load test");
	assert_string_equal(e.path, "librootasm-test-none.so.0");
	assert_non_null(strstr(e.msg, "(it needs nothing)"));
	assert_null(lc.getpid);
	/* a symbol it lacks: ELIBACC, the loader's words */
	lc_dl.soname = "libc.so.6";
	lc_dl.names = missing;
	assert_int_equal(ra_dl_load(&lc_dl, &e), -ELIBACC);
	assert_non_null(strstr(e.msg, "rootasm_no_such_function"));
	/* the same loader again: tried anew; an init that fails is out of memory, and is tried again too */
	lc_dl.names = lc_names;
	lc_dl.init = init_fails_once;
	assert_int_equal(ra_dl_load(&lc_dl, &e), -ENOMEM);
	assert_string_equal(e.op, "load test");
	assert_int_equal(ra_dl_load(&lc_dl, NULL), 0);
	assert_int_equal(init_calls, 2);
	assert_int_equal(lc.getpid(), getpid());
	assert_int_equal(lc.strlen("four"), 4);
	/* loaded: not again */
	assert_int_equal(ra_dl_load(&lc_dl, NULL), 0);
	assert_int_equal(init_calls, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(digests),
		cmocka_unit_test(sha256_of_abc),
		cmocka_unit_test(refs),
		cmocka_unit_test(media_types),
		cmocka_unit_test(store_names),
		cmocka_unit_test(dl_load),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
