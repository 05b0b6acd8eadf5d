/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An OCI image layout (image-spec v1, "oci:DIR[:TAG]"), read with jansson:
 * oci-layout, index.json -> (nested indexes) -> manifest -> config and
 * layers. Every document but index.json is a blob whose size and sha256 are
 * checked against its descriptor before it is parsed; index.json is the
 * root of trust (it is the caller's directory). Documents are parsed
 * strictly (JSON_REJECT_DUPLICATES, no NUL bytes) with a size cap each.
 *
 * Blobs are opened with openat2(blobs/sha256, HEX, RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS) as O_PATH, checked to be
 * regular files of the descriptor's size, and only then opened for reading.
 */
#ifndef ROOTASM_OCI_H
#define ROOTASM_OCI_H

#include <stdint.h>

#include "digest.h"
#include "rootasm.h"

/* The platform an index's manifest is chosen for: linux/RA_OCI_HOST_ARCH, as OCI names this build's architecture */
#if defined(__x86_64__)
#define RA_OCI_HOST_ARCH "amd64"
#elif defined(__aarch64__)
#define RA_OCI_HOST_ARCH "arm64"
#elif defined(__i386__)
#define RA_OCI_HOST_ARCH "386"
#elif defined(__arm__)
#define RA_OCI_HOST_ARCH "arm"
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define RA_OCI_HOST_ARCH "ppc64le"
#elif defined(__s390x__)
#define RA_OCI_HOST_ARCH "s390x"
#elif defined(__riscv) && __riscv_xlen == 64
#define RA_OCI_HOST_ARCH "riscv64"
#else
#define RA_OCI_HOST_ARCH "unknown"
#endif

#define RA_OCI_INDEX_MAX	(4u << 20)	/* index.json, nested indexes */
#define RA_OCI_MANIFEST_MAX	(4u << 20)	/* as the distribution spec caps manifests */
#define RA_OCI_CONFIG_MAX	(16u << 20)
#define RA_OCI_MAX_LAYERS	499		/* overlayfs' 500 lower layers, less one: room for nothing else */
#define RA_OCI_MAX_NESTING	4		/* index -> index -> ... -> manifest */

enum ra_oci_comp {
	RA_OCI_TAR,
	RA_OCI_GZIP,
	RA_OCI_ZSTD,
};

struct ra_oci_desc {
	char *media_type;
	char digest[RA_DIGEST_MAX];
	char hex[RA_DIGEST_HEX + 1];
	uint64_t size;
};

struct ra_oci_layer {
	struct ra_oci_desc d;
	enum ra_oci_comp comp;
	char diff_id[RA_DIGEST_MAX];		/* from the config's rootfs.diff_ids */
	char diff_hex[RA_DIGEST_HEX + 1];
};

struct ra_oci_image;

/*
 * How an image's blobs are read, by its source's kind (source.h): a layout's
 * files (oci.c), a registry's downloads (registry.c). Optional ops NULL.
 */
struct ra_oci_reader {
	const char *where;	/* a blob's name in messages, printf'd with the image's dir and the blob's hex */
	/* the blob as a readable fd: a file, or a socket a download fills */
	int (*open)(const struct ra_oci_image *img, const struct ra_oci_desc *d, struct rootasm_error *e);
	/* a document (a nested manifest, the config) into memory, its size and sha256 checked; NULL: read open()'s fd */
	int (*get)(const struct ra_oci_image *img, const struct ra_oci_desc *d, size_t max, char **ret, size_t *len,
		   struct rootasm_error *e);
	/* after the reader of open()'s @fd is done with result @r: @r, or what the source knows better (its error) */
	int (*done)(const struct ra_oci_image *img, int fd, int r, struct rootasm_error *e);
	/* start reading @d ahead (best effort), at most @ahead blobs past the one being read */
	void (*prefetch)(const struct ra_oci_image *img, const struct ra_oci_desc *d);
	unsigned int ahead;
	/* each blob's transfer reported to @fn */
	void (*progress)(const struct ra_oci_image *img, rootasm_import_download_fn fn, void *userdata);
	bool checked_as_read;	/* open()'s bytes are hashed as they come: a mismatch is the source's error */
};

struct ra_oci_image {
	const struct ra_oci_reader *reader;	/* its blobs' reader */
	char *dir;				/* the layout directory as given */
	char *tag;				/* NULL: the one manifest */
	int dirfd;				/* O_PATH of the layout directory */
	int blobs;				/* O_PATH of blobs/sha256 */
	struct ra_oci_desc manifest, config;
	struct ra_oci_layer *layers;		/* bottom first */
	size_t nlayers;
	struct ra_oci_remote *remote;		/* docker://: a registry's image (oci/registry.h); dir is its name */
	struct json_t *run;			/* the config's "config" (Env, Cmd, ...); NULL when none */
	struct json_t *config_doc;		/* the whole config (its digest checked): inspect's */
	char *manifest_raw;			/* the manifest's bytes, as read (digest checked): inspect --raw */
	size_t manifest_raw_len;
	unsigned int max_expansion;		/* what a layer may unpack to, times its blob's size (import's) */
	uint64_t max_layer_bytes;		/* and in bytes (0: no cap but that) */
};

/* A blob's name in messages: "DIR/blobs/sha256/HEX", "docker://HOST/REPO@sha256:HEX". Caller frees; NULL: no memory. */
char *ra_oci_blob_name(const struct ra_oci_image *img, const char *hex);

/* Parse "oci:DIR[:TAG]" (DIR ends at the first ':' after "oci:"). Caller frees *dir and *tag. */
int ra_oci_parse_ref(const char *ref, char **dir, char **tag, struct rootasm_error *e);

/* Read the layout @dir, pick the manifest (@tag, or the only one), read and verify manifest and config. */
int ra_oci_open(const char *dir, const char *tag, struct ra_oci_image **ret, struct rootasm_error *e);
void ra_oci_free(struct ra_oci_image *img);

struct ra_oci_remote;

/* "docker://...": the registry's image (oci/registry.h), its manifest fetched and walked. */
struct ra_registry_how;
int ra_oci_open_registry(const char *ref, const struct ra_registry_how *how, struct ra_oci_image **ret,
			 struct rootasm_error *e);

/*
 * A registry's image (oci/registry.h): @buf (@len bytes, sha256 @digest,
 * media type @mt or NULL: the document's own) is its manifest or index,
 * walked as a layout's; documents and blobs then come from @rem, which the
 * image owns from here on (freed on failure too). @name names it in errors.
 */
int ra_oci_open_remote(struct ra_oci_remote *rem, const char *name, const char *buf, size_t len, const char *mt,
		       const char *digest, struct ra_oci_image **ret, struct rootasm_error *e);

/*
 * Open the blob of @d for reading (a regular file of d->size bytes; from a
 * registry, a socket a download thread writes: ra_registry_stream_done()
 * after reading it); caller owns the fd.
 */
int ra_oci_blob_open(const struct ra_oci_image *img, const struct ra_oci_desc *d, struct rootasm_error *e);

/*
 * The exec: section of the image's layout from its config's Env, Entrypoint,
 * Cmd, WorkingDir and User (oci/config.c): *ret NULL when the config has none
 * of them; *ret_dropped the Env entries exec.env cannot take (NULL: none).
 * A config rootasm cannot take (a User it cannot express) is a usage error.
 */
int ra_oci_exec_section(const struct ra_oci_image *img, struct json_t **ret, struct json_t **ret_dropped,
			struct rootasm_error *e);

/*
 * "docker-archive:FILE[:TAG]" (docker save, podman save) as an OCI image
 * layout in a new directory PARENT/.archive-XXXXXX (oci/archive.c): its path
 * in *ret_dir (caller frees; removes it with ra_docker_archive_remove(@parent_fd,
 * its last component)), the image's name in the archive (TAG, else its first
 * RepoTag) in *ret_name (NULL: none).
 */
#define RA_ARCHIVE_PREFIX	".archive-"	/* the directory's name in @parent: this, then six characters */
int ra_docker_archive_unpack(const char *ref, int parent_fd, const char *parent, char **ret_dir, char **ret_name,
			     struct rootasm_error *e);
void ra_docker_archive_remove(int parent_fd, const char *name);

/* The compression a layer media type names; -EOPNOTSUPP for one rootasm does not take. */
int ra_oci_layer_comp(const char *media_type);

/*
 * Whether the image reference @ref ([HOST/]REPO...) begins with a registry,
 * as skopeo and podman read it: its first component, when more follow, has a
 * '.' or a ':' or is "localhost"; else it is a short name.
 */
bool ra_ref_has_host(const char *ref);
/*
 * @name normalized (":latest" added) and qualified as podman load and pull
 * name an image: "x:t", "docker.io/x:t" and "index.docker.io/library/x:t"
 * are docker.io/library/x:t; localhost/x:t stays. 0, or -1 (not a name).
 */
int ra_name_qualified(const char *name, char *out, size_t size);

#endif
