/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rootasm-runtime: a runc-compatible OCI runtime front that delegates to the
 * real runtime (crun or runc) and, when a bundle's config.json asks for it by
 * annotation, gives the container a tree rootasm assembled.
 *
 *   main.c     the command line: global options, the delegate, pass-through
 *              (execv: nothing else done), create/run/delete
 *   choose.c   what an annotation may choose: a layout in the administrator's
 *              layout directory, an image of the store, a rootasmd socket
 *   state.c    the per-container state under ROOT/.rootasm/ID: the private
 *              bundle the delegate gets, its lock, its cleanup
 */
#ifndef ROOTASM_RUNTIME_H
#define ROOTASM_RUNTIME_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include <jansson.h>

#include "rootasm.h"

#define RT_NAME			"rootasm-runtime"
#define RT_CONFIG		"/etc/rootasm/runtime.conf"
#define RT_LAYOUTS		"/etc/rootasm/layouts"
#define RT_STORE		"/var/lib/rootasm/store"
#define RT_ENGINE_STORE		"engine"	/* under the store: cri-image.c */
#define RT_SOCKET		"/run/rootasmd.sock"
#define RT_DEFAULT_ROOT		"/run/rootasm-runtime"
#define RT_STATE_SUBDIR		".rootasm"

#define ANN_LAYOUT		"org.rootasm.layout"
#define ANN_IMAGE		"org.rootasm.image"
#define ANN_VIA			"org.rootasm.via"

/* The configuration: option, then environment, then the config file, then the default. */
struct rt_conf {
	char *delegate;		/* --delegate, $ROOTASM_RUNTIME_DELEGATE, delegate= */
	char *layouts;		/* $ROOTASM_RUNTIME_LAYOUTS, layouts= */
	char *store;		/* $ROOTASM_STORE, store= */
	char *engine_store;	/* STORE/engine: the engine's images its containers run on (cri-image.c), a store
				   of their own: no annotation names what a pod did not ask for */
	char *socket;		/* $ROOTASM_RUNTIME_SOCKET, socket=: the rootasmd an annotation may name */
	char *root;		/* $ROOTASM_RUNTIME_ROOT, root=: the state's ROOT when the engine gives no --root */
	char *unannotated;	/* unannotated=: "image" (a CRI container's own image, rootasm's tree) or "pass" */
	char *containerd;	/* containerd=: its socket (else the shim's $TTRPC_ADDRESS without ".ttrpc") */
	char *delegate_config;	/* delegate_config=: "yes", "no" or "auto" (a delegate named crun* takes --config) */
	/* for the imports of pods' images (cri-image.c), whose authors chose them: */
	char *import_layer_max;	/* import_layer_max=: a layer's tree staged in memory, at most (rt_layer_max()) */
	char *imports;		/* imports=: how many at once on the node (1-64; 2) */
};

/* Where errors go: stderr, and --log (in --log-format) when the engine gave one. */
void rt_log_open(const char *path, const char *format);
/* What the messages name from now on: the command, the container id (NULL: unchanged). */
void rt_log_for(const char *cmd, const char *id);
void rt_log_flush(void);
int rt_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));	/* returns -1 */
/* A warning: to --log at level warning; without one, to stderr if it is a terminal (else it may be the container's). */
void rt_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * With ROOTASM_RUNTIME_TIMES=1, "rootasm-runtime: time STAGE MS" on stderr:
 * milliseconds since the first call (main()'s "start"), once rt_time_say()
 * has been called (create and run; the first stages kept until then); else
 * nothing.
 */
void rt_time(const char *stage);
void rt_time_say(void);

/* The absolute path of @fd (readlink of its /proc/self/fd link); NULL when it has none. Caller frees. */
char *rt_fd_path(int fd);

/* Read the config file (RT_CONFIG, or $ROOTASM_RUNTIME_CONFIG) into the fields still NULL. */
int rt_conf_load(struct rt_conf *c);

/*
 * What the config's annotations choose: the layout's path, the directory it
 * must lie in (a limit of the bundle's principal, judged by the library), the
 * socket for via (or NULL); the annotation and its value, for messages.
 */
struct rt_choice {
	char *layout;
	char *dir;
	char *via;
	const char *ann;
	char *value;
	bool own;		/* the engine's own image (a CRI container's, cri-image.c) */
};

/*
 * 0 and *ret filled; 1: no annotation of rootasm's; -1: refused (said with
 * rt_error()). @image is looked up in the store, or with @own (a CRI
 * container's own image, rt_cri_image()) in the engine's store.
 */
int rt_choose(const struct rt_conf *c, const char *layout, const char *image, bool own, const char *via,
	      struct rt_choice *ret);
void rt_choice_done(struct rt_choice *ch);

/*
 * A Kubernetes container of containerd's without an annotation of rootasm's
 * (cri-image.c): the manifest digest "sha256:HEX" of its own image in the
 * engine's store (c->engine_store, which annotations do not reach), imported
 * from containerd's content store when it was not there, and the image
 * containerd made container @id's rootfs of, in
 * *ret_image (caller frees): 0; 1: not such a container (or unannotated =
 * pass); RT_NEEDS_FULL: the static runtime leaves it to rootasm-runtime-full
 * (the image is not in the store: the import, libarchive and libcrypto;
 * containerd and the store asked, nothing changed); -1: refused or failed
 * (said).
 */
int rt_cri_image(const struct rt_conf *c, json_t *cfg, const char *id, char **ret_image);
#define RT_NEEDS_FULL 2

/*
 * The installed rootasm-runtime is static (static.c: linked -static-pie with
 * libjansson and libyaml, no dynamic loader, no library loaded at its
 * start); rootasm-runtime-full, beside it, is the same runtime linked as the
 * rootasm command is (full.c), which loads libraries and the user database's
 * modules (NSS). The static one hands it, before it has changed anything,
 * the creates that need them: a bundle of a user's (its principal: the user
 * database) and a Kubernetes container on its pod's own image while that is
 * not in the store (the import: libarchive, libcrypto). The SHA-256 of the
 * image's chain IDs it computes itself (static.c, sha256.c).
 */
extern const bool rt_static;
#define RT_FULL			RT_NAME "-full"
/* exec RT_FULL of this executable's directory with this process's arguments: returns only on failure (said) */
int rt_exec_full(void);
/*
 * containerd's API at @addr, namespace k8s.io (containerd.c): the target of
 * the image @name (its media type and digest): 0; 1: containerd has no such
 * image; -errno (-EPROTO: containerd answered with an error). The bytes of
 * the blob @digest in *ret (NUL-terminated, caller frees; at most 1 MiB):
 * 0; 1: containerd gave no answer (no such blob, or an error); -errno.
 */
int rt_containerd_image(const char *addr, const char *name, char *media_type, size_t mt_size, char *digest,
			size_t d_size);
int rt_containerd_content(const char *addr, const char *digest, char **ret, size_t *ret_n);
/*
 * The parent of the snapshot containerd keeps as container @id's rootfs (the
 * chain id of the image it was made of) into @parent: 0; 1: containerd gave
 * no answer (no such container or snapshot); -errno.
 */
int rt_containerd_snapshot_parent(const char *addr, const char *id, char *parent, size_t p_size);

/* Whether @cfg is a CRI container of containerd's (before the configuration is read). */
bool rt_cri_container(json_t *cfg);
/*
 * runtime.conf's import_layer_max (NULL: RT_LAYER_MAX_DEFAULT) in bytes:
 * SIZE with k, m, g or t (binary), N% of the node's memory, or 0 (no cap but
 * the expansion's). 0, or -1 when @v is none of those.
 */
#define RT_LAYER_MAX_DEFAULT "12%"
int rt_layer_max(const char *v, uint64_t *ret);
/* runtime.conf's imports (NULL: 2): 1-64, or -1 */
int rt_imports(const char *v);

/*
 * The state of container @id under @root (ROOT/.rootasm/ID, a directory of
 * root's, 0700), locked with flock while the caller holds it.
 */
struct rt_state {
	int dir;		/* ROOT/.rootasm, O_PATH */
	int fd;			/* ROOT/.rootasm/ID, O_RDONLY: the lock */
	char *id;
	char *path;		/* ROOT/.rootasm/ID */
	char *bundle;		/* ROOT/.rootasm/ID/bundle: the private bundle */
	char *config;		/* ROOT/.rootasm/ID/RT_DELEGATE_CONFIG: what a delegate that takes --config runs */
	bool existed;		/* it was there before this call (a create that failed or was killed) */
	bool ran;		/* a foreground run's delegate exited (not killed): nothing of it is left to kill */
};

/* Open (@create: make) and lock the state of @id; 1 when there is none (without @create). */
int rt_state_lock(const char *root, const char *id, bool create, struct rt_state *s);
/*
 * The lock of @s taken again after it was released (flock(s->fd, LOCK_UN):
 * a foreground run's delegate), on the directory it had locked: 1 when that
 * was removed meanwhile (a delete; what a create of the same id made since
 * is another container's).
 */
int rt_state_relock(struct rt_state *s);
void rt_state_unlock(struct rt_state *s);
/*
 * Detach what rootasm attached for the container and remove its state (under
 * the lock). A create that did not finish (no rt_state_created() mark) may
 * have left delegate processes that outlived it: every process whose
 * arguments name the private bundle (or ID/RT_DELEGATE_CONFIG), or whose
 * environment has RT_ENV_STATE=ID's path, is killed first (their mount
 * namespaces, which hold the tree, go with them).
 */
int rt_state_cleanup(struct rt_state *s);
/* ID/engine-bundle: the engine's bundle directory, as the state shows it (spec.c): RT_RUN_PRIVATE only */
#define RT_ENGINE_BUNDLE	"engine-bundle"
/* ID/delegate.json: the config a delegate that takes --config runs the engine's bundle with */
#define RT_DELEGATE_CONFIG	"delegate.json"
/* bundle prepare's own annotation (lib/bundle.h), which the engine never sees */
#define RT_ANN_PREPARED		"org.rootasm.prepared"

/*
 * spec.c: the engine's view of an annotated container. rt_hooks_wrap():
 * @cfg's runtime-namespace hooks run through `rootasm-runtime hook`;
 * rt_cmd_hook(): that command (argv[0] "hook"); rt_state_view(): the
 * delegate's state (@argv its command line) shown with @engine_bundle.
 */
int rt_hooks_wrap(json_t *cfg, const char *engine_bundle);
int rt_cmd_hook(int argc, char **argv);
int rt_state_view(char **argv, const char *engine_bundle);

/*
 * The engine's writable layer of the container (layer.c): the upperdir and
 * workdir of the overlay at @cfg's root.path (relative to @bundle), 1 with
 * them in *ret_upper and *ret_work (caller frees); 0 when there is none that
 * can be used, why in @why; nothing fails.
 */
int rt_engine_layer(const char *bundle, json_t *cfg, char **ret_upper, char **ret_work, char *why, size_t whylen);
/*
 * Whether the engine's rootfs of @cfg (relative to @bundle) is a layer over
 * exactly the layers of the store's image @ref, bottom to top by diff-id, as
 * the engine's storage says (containers/storage's overlay driver: podman):
 * then an annotation's image is the engine's own.
 */
int rt_engine_has_image(const char *bundle, json_t *cfg, const struct rt_conf *c, const char *ref);

/* The delegate's create of the id succeeded: its processes are the delegate's to delete from now on. */
void rt_state_created(struct rt_state *s);

/*
 * How the delegate runs an annotated container:
 *   RT_RUN_OVER     the engine's own bundle and config, untouched, in a mount
 *                   namespace of the delegate's own where rootasm's tree covers
 *                   the engine's rootfs (struct rt_over): its state and every
 *                   hook are the delegate's own, and a hook that edits the rootfs
 *                   edits the tree. For an engine's bundle, root's, whose
 *                   root.path is a mount (the engine's rootfs) on a path only
 *                   root can change (rt_over_find()).
 *   RT_RUN_CONFIG   the engine's bundle with rootasm's config (--config: crun):
 *                   ID/RT_DELEGATE_CONFIG, no hook wrapped
 *   RT_RUN_PRIVATE  the private bundle (runc): its state shown as the engine's and
 *                   its hooks wrapped (spec.c); ID/RT_ENGINE_BUNDLE says so
 */
enum rt_run { RT_RUN_PRIVATE, RT_RUN_CONFIG, RT_RUN_OVER };

/*
 * The tree @ch chose, begun before the state is locked and prepared: its
 * upper (the engine's writable layer, for the engine's image in root's
 * bundle; the engine is told where the container's writes go otherwise)
 * and, through rootasmd, the request sent, so that the daemon assembles
 * while this process prepares. 0, or -1 said; rt_tree_done() in any case.
 */
struct rootasm_client;
struct rt_tree {
	char *upper, *work;
	struct rootasm_client *via;	/* the request sent, its reply not yet read */
	int fd;				/* RT_RUN_OVER: the tree, detached (-EBADF: none) */
};
#define RT_TREE_INIT { .fd = -EBADF }
int rt_tree_begin(struct rt_tree *t, const char *bundle, json_t *cfg, uid_t uid, const struct rt_choice *ch);
void rt_tree_done(struct rt_tree *t);

/*
 * Make the private bundle from @cfg (the engine's config.json, changed here;
 * @bundle its absolute directory), owned by @uid:@gid like the engine's, with
 * the tree @ch chose (@t begun) attached at its rootfs (the record cleanup
 * reads), and what @mode needs besides. RT_RUN_OVER (but for a container
 * with a user namespace of its own): no private bundle, the tree received
 * from rootasmd or assembled here into @t->fd, and nothing of it attached in
 * our namespace (rt_over_clone()).
 */
int rt_state_prepare(struct rt_state *s, const char *bundle, json_t *cfg, uid_t uid, gid_t gid,
		     const struct rt_choice *ch, struct rt_tree *t, enum rt_run mode);

/*
 * RT_RUN_OVER: the engine's rootfs, as the delegate resolves it, and the
 * tree to cover it with.
 */
struct rt_over {
	int tree;		/* the tree as assembled, or a recursive clone of the private bundle's rootfs */
	dev_t dev;		/* the engine's rootfs when it was judged */
	ino_t ino;
	char target[PATH_MAX];	/* its absolute path, symlinks resolved */
};
/*
 * Whether the container of @cfg (the engine's config, @bundle its absolute
 * directory, @uid the bundle's principal) can run RT_RUN_OVER: 1 with @o's
 * target filled, 0 when not (the principal is not root, root.path is not a
 * mount root, some directory on its path is not root's alone, it is in a
 * directory of the system's, /usr, /etc, /proc..., or the delegate would
 * reach beneath it one of the @n_reads paths @reads (the bundle, its
 * program, its state) or a path @cfg or its environment names), -1 said.
 */
int rt_over_find(json_t *cfg, const char *bundle, uid_t uid, const char *const *reads, size_t n_reads,
		 struct rt_over *o);
/*
 * After rt_state_prepare(): @o->tree, the detached tree (taken from @t),
 * else a clone of the tree at the private bundle's rootfs.
 */
int rt_over_clone(struct rt_state *s, struct rt_over *o, struct rt_tree *t);
/*
 * In the delegate's child before it executes (vfork: no allocation, no
 * stdio): a mount namespace of its own, the engine's rootfs in it no longer
 * shared with ours (nothing attached on it shows in ours), the tree's root
 * made private there and the tree attached on it. 0, or -1 with why in @msg.
 */
int rt_over_enter(const struct rt_over *o, char *msg, size_t size);

/* The environment variable a delegate of a create runs with: which state its processes belong to (cleanup). */
#define RT_ENV_STATE		"ROOTASM_RUNTIME_STATE"

#endif
