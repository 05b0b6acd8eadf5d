/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rootasm_import() across the 0.4 change of its structs: a program built
 * against 0.2/0.3's header (the structs without reserved space, bound to
 * rootasm_import@LIBROOTASM_0.2 as its link then bound it) gets exactly its
 * struct filled and its layer array at its stride; a program built now gets
 * the name and zeroed reserved space.
 *
 * Usage: abi_import MKOCI.PY  (as root: an import needs it)
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rootasm.h"

/* 0.3's rootasm.h, as a program built against it declared them */
struct old_layer {
	char digest[80];
	char diff_id[80];
	char media_type[128];
	unsigned long long size;
	unsigned long long tar_bytes;
	char *image;
	bool cached;
	double seconds;
};

struct old_result {
	char *store;
	char *layout;
	char manifest[80], config[80];
	struct old_layer *layers;
	size_t nlayers;
	bool wrote;
};

int old_import(struct rootasm_ctx *ctx, const char *ref, const struct rootasm_import_opts *o,
	       struct old_result *res, struct rootasm_error *e);
void old_result_free(struct old_result *res);
__asm__(".symver old_import,rootasm_import@LIBROOTASM_0.2");
__asm__(".symver old_result_free,rootasm_import_result_free@LIBROOTASM_0.2");

static int failed, checks;

#define CHECK(cond, ...) do {							\
	checks++;								\
	if (!(cond)) {								\
		failed++;							\
		printf("not ok - " __VA_ARGS__);				\
		printf("  (%s:%d: %s)\n", __FILE__, __LINE__, #cond);		\
	} else {								\
		printf("ok - " __VA_ARGS__);					\
		printf("\n");							\
	}									\
} while (0)

static void sh(const char *cmd)
{
	if (system(cmd) != 0) {
		fprintf(stderr, "abi_import: failed: %s\n", cmd);
		exit(1);
	}
}

static unsigned int old_progress_calls;
static bool old_progress_ok = true;

static void old_progress(void *ud, unsigned int i, unsigned int n, const struct rootasm_import_layer *l, bool done)
{
	/* an old program reads the layer through its own, shorter declaration */
	const struct old_layer *ol = (const struct old_layer *)l;

	(void)ud;
	old_progress_calls++;
	if (i >= n || n != 2 || strncmp(ol->digest, "sha256:", 7) || !ol->image || (done && ol->seconds < 0))
		old_progress_ok = false;
}

static bool zero(const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		if (c[i])
			return false;
	return true;
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/rootasm-abi-XXXXXX", cmd[4096], ref[512], store[600];
	struct rootasm_import_opts o = { .size = sizeof(o) };
	struct rootasm_error e = { 0 };
	struct {
		struct old_result r;
		unsigned char guard[256];
	} old;
	struct rootasm_import_result cur;
	struct stat st;
	char *mkoci;
	int r;

	if (argc != 2) {
		fprintf(stderr, "usage: abi_import MKOCI.PY\n");
		return 2;
	}
	if (geteuid() != 0) {
		printf("1..0 # SKIP an import needs root\n");
		return 77;
	}
	if (!mkdtemp(dir) || !(mkoci = realpath(argv[1], NULL)))
		return 1;
	snprintf(cmd, sizeof(cmd),
		 "set -e; cd %s; mkdir -p l0/etc l1/srv; echo zero > l0/etc/zero; echo one > l1/srv/one;"
		 "tar -C l0 -cf l0.tar .; tar -C l1 -cf l1.tar .;"
		 "python3 %s layout img --tag t l0.tar:gzip l1.tar:gzip >/dev/null", dir, mkoci);
	sh(cmd);
	snprintf(ref, sizeof(ref), "oci:%s/img:t", dir);

	/* the program of 0.3: its struct, a guard right after it */
	memset(&old, 0xa5, sizeof(old));
	o.progress = old_progress;
	snprintf(store, sizeof(store), "%s/store-old", dir);
	o.store = store;
	r = old_import(NULL, ref, &o, &old.r, &e);
	CHECK(r == 0, "0.2 ABI: the import succeeds (%d %s)", r, e.msg);
	CHECK(old.guard[0] == 0xa5 && old.guard[255] == 0xa5 && !memchr(old.guard, 0, sizeof(old.guard)),
	      "0.2 ABI: nothing written past the old struct");
	CHECK(old.r.nlayers == 2 && old.r.layers, "0.2 ABI: two layers");
	if (old.r.nlayers == 2 && old.r.layers) {
		CHECK(!strncmp(old.r.layers[0].digest, "sha256:", 7) && !strncmp(old.r.layers[1].digest, "sha256:", 7) &&
		      strcmp(old.r.layers[0].digest, old.r.layers[1].digest),
		      "0.2 ABI: the layer array at the old stride (two digests)");
		CHECK(old.r.layers[1].image && stat(old.r.layers[1].image, &st) == 0 && S_ISREG(st.st_mode),
		      "0.2 ABI: the second layer's image path is a file (%s)", old.r.layers[1].image);
	}
	CHECK(old.r.layout && stat(old.r.layout, &st) == 0, "0.2 ABI: the layout exists");
	CHECK(!strncmp(old.r.manifest, "sha256:", 7) && old.r.wrote, "0.2 ABI: manifest digest, wrote");
	CHECK(old_progress_calls == 4 && old_progress_ok, "0.2 ABI: the progress callback reads its layer (%u calls)",
	      old_progress_calls);
	old_result_free(&old.r);
	CHECK(zero(&old.r, sizeof(old.r)) && old.guard[0] == 0xa5 && old.guard[255] == 0xa5,
	      "0.2 ABI: the free clears only the old struct");

	/* a program built now */
	memset(&cur, 0xa5, sizeof(cur));
	o.progress = NULL;
	o.tag = "abi/test:1";
	snprintf(store, sizeof(store), "%s/store-new", dir);
	r = rootasm_import(NULL, ref, &o, &cur, &e);
	CHECK(r == 0, "0.4 ABI: the import succeeds (%d %s)", r, e.msg);
	CHECK(cur.name && !strcmp(cur.name, "abi/test:1"), "0.4 ABI: the result names the image (%s)",
	      cur.name ? cur.name : "(null)");
	CHECK(zero(cur.reserved, sizeof(cur.reserved)), "0.4 ABI: the result's reserved space is zeroed");
	CHECK(cur.nlayers == 2 && zero(cur.layers[0].reserved, sizeof(cur.layers[0].reserved)) &&
	      zero(cur.layers[1].reserved, sizeof(cur.layers[1].reserved)), "0.4 ABI: each layer's reserved space is zeroed");
	CHECK(cur.nlayers == 2 && cur.layers[1].image && stat(cur.layers[1].image, &st) == 0,
	      "0.4 ABI: the second layer's image path is a file");
	rootasm_import_result_free(&cur);
	CHECK(zero(&cur, sizeof(cur)), "0.4 ABI: the free clears the struct");
	/* imported again without a tag: no name */
	o.tag = NULL;
	r = rootasm_import(NULL, ref, &o, &cur, &e);
	CHECK(r == 0 && !cur.name && !cur.wrote, "0.4 ABI: no tag, no name (and nothing written again)");
	rootasm_import_result_free(&cur);

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	sh(cmd);
	free(mkoci);
	printf("%d passed, %d failed\n", checks - failed, failed);
	return failed ? 1 : 0;
}
