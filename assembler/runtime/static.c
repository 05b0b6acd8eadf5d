// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The static rootasm-runtime (runtime.h: rt_static): linked -static-pie with
 * libjansson.a and libyaml.a, and with this file, whose ra_dl_load() and
 * rootasm_principal_of_uid() stand for the library's (dl.c and
 * principal-nss.c are then not linked: their objects define nothing else).
 *
 * Every call goes through it (an engine runs its runtime for create, start,
 * state, kill and delete of every container, a pod's pause container too), so
 * its start is its cost: without a dynamic loader and libc.so to map and
 * relocate, a pass-through took 3.63 ms against 4.10 ms linked dynamically
 * (README, "Engines": a machine where a bare /bin/true took 2.30 ms). glibc's
 * static dlopen() is never used:
 * it would map a second libc.so into the process (NSS modules and the
 * import's libraries do). What needs them is handed to rootasm-runtime-full
 * before anything is changed (rt_exec_full(); containerd and the store may
 * have been asked): a user's bundle, an import.
 * libcrypto's SHA-256 it serves from its own (sha256.c): a Kubernetes
 * container on its pod's image, once that is in the store, needs the chain
 * IDs of the image's layers (a few short strings), and handing it over for
 * them cost an exec of rootasm-runtime-full and libcrypto's load.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>
#include <yaml.h>

#include "dl.h"
#include "runtime.h"
#include "sha256.h"
#include "util.h"

const bool rt_static = true;

#define RA_ADDR(f) (void *)&f,
static void *const yaml_funcs[] = { RA_YAML_FUNCS(RA_ADDR) };

/*
 * libcrypto's table (RA_CRYPTO_FUNCS): what digest.c calls of it, for
 * SHA-256 alone, on a struct st_md (an EVP_MD_CTX here; digest.c never
 * looks inside it). Each has the very type of the function it stands for.
 * Short strings only (chain IDs, a manifest): a digest of more than
 * ST_MD_MAX bytes fails (digest.c: -EIO), so that bulk data (a layer, an
 * image) is never hashed here, slowly, by a path that should have been the
 * twin's.
 */
#define ST_MD_MAX (64 * 1024)
struct st_md {
	struct rt_sha256 s;
	bool over;
};
static const char sha256_md;

static const EVP_MD *st_EVP_sha256(void)
{
	return (const EVP_MD *)&sha256_md;
}

static EVP_MD_CTX *st_EVP_MD_CTX_new(void)
{
	return (EVP_MD_CTX *)calloc(1, sizeof(struct st_md));
}

static void st_EVP_MD_CTX_free(EVP_MD_CTX *c)
{
	free(c);
}

static int st_EVP_DigestInit_ex(EVP_MD_CTX *c, const EVP_MD *md, ENGINE *impl)
{
	if (!c || md != st_EVP_sha256() || impl)
		return 0;
	rt_sha256_init(&((struct st_md *)c)->s);
	((struct st_md *)c)->over = false;
	return 1;
}

static int st_EVP_DigestUpdate(EVP_MD_CTX *c, const void *d, size_t n)
{
	struct st_md *m = (struct st_md *)c;

	if (n > ST_MD_MAX - m->s.bytes) {
		m->over = true;
		return 0;
	}
	rt_sha256_update(&m->s, d, n);
	return 1;
}

static int st_EVP_DigestFinal_ex(EVP_MD_CTX *c, unsigned char *md, unsigned int *n)
{
	struct st_md *m = (struct st_md *)c;

	if (m->over)
		return 0;
	rt_sha256_final(&m->s, md);
	if (n)
		*n = 32;
	return 1;
}

#define RA_SAME_TYPE(f) _Static_assert(__builtin_types_compatible_p(__typeof__(&st_##f), __typeof__(&f)), #f);
RA_CRYPTO_FUNCS(RA_SAME_TYPE)
#define RA_ST_ADDR(f) (void *)&st_##f,
static void *const crypto_funcs[] = { RA_CRYPTO_FUNCS(RA_ST_ADDR) };

/* libyaml: linked in; libcrypto's SHA-256: ours; anything else is rootasm-runtime-full's, never reached here */
int ra_dl_load(struct ra_dl *d, struct rootasm_error *e)
{
	if (!strcmp(d->soname, "libyaml-0.so.2") && d->n == ARRAY_SIZE(yaml_funcs) && !d->init) {
		memcpy(d->table, yaml_funcs, sizeof(yaml_funcs));
		return 0;
	}
	if (!strcmp(d->soname, "libcrypto.so.3") && d->n == ARRAY_SIZE(crypto_funcs) && !d->init) {
		memcpy(d->table, crypto_funcs, sizeof(crypto_funcs));
		return 0;
	}
	return ra_err(e, ELIBACC, -EBADF, d->op, d->soname, "not in the static " RT_NAME " (" RT_FULL " loads it)");
}

/* the user database's principal: rootasm-runtime-full's (main.c hands it a user's bundle first) */
int rootasm_principal_of_uid(uid_t uid, int userns_fd, struct rootasm_principal **ret, struct rootasm_error *e)
{
	(void)userns_fd;
	*ret = NULL;
	return ra_err(e, ELIBACC, -EBADF, "principal", NULL, "uid %u: the user database is " RT_FULL "'s",
		      (unsigned)uid);
}
