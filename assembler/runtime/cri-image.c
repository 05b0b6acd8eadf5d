// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A Kubernetes container without an annotation of rootasm's runs on rootasm's
 * tree of its own image (runtime.conf `unannotated = image`, the default):
 *
 *   the image containerd resolved for it     io.kubernetes.cri.image-name, in
 *                                            the CRI plugin's namespace k8s.io,
 *                                            of the containerd whose shim runs
 *                                            us (runtime.conf's containerd=,
 *                                            else $TTRPC_ADDRESS, which the
 *                                            shim sets, without its ".ttrpc")
 *   -> its manifest digest, containerd's     Images.List of containerd's API
 *                                            (containerd.c; an index: this
 *                                            machine's platform's entry,
 *                                            Content.Read)
 *   -> the engine's store's image of that   rootasm_store_lookup() in
 *      digest                                STORE/engine
 *   -> else imported first, from containerd's own content store: ctr images
 *      export (no download), rootasm_import() of that archive (every blob's
 *      digest checked against the manifest, as for any image), named NAME
 *
 *   -> checked to be what containerd mounted: the container's snapshot's
 *      parent (Containers.Get, Snapshots.Stat) is the image's chain id
 *
 * and then it is chosen as org.rootasm.image=sha256:HEX would choose it in
 * that store (rt_choose() with own: the store's directories the
 * administrator's). A store of its own: org.rootasm.image looks in the
 * administrator's, so that a pod's annotation does not name an image another
 * pod's engine pulled (with credentials, or past an admission rule that
 * makes each pod pull its images). Concurrent creates of one image import it
 * once, those of different images at once (import_slot()). After an import, what
 * containerd no longer has goes from that store (engine_prune()): kubelet's
 * image garbage collection frees rootasm's copies too.
 * Without those annotations and a containerd to ask (podman, ctr run, CRI-O)
 * nothing changes: the bundle goes to the delegate as it came.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <unistd.h>

#include "oci/oci.h"
#include "open.h"
#include "runtime.h"
#include "util.h"

#define CTR_OUT_MAX	(1u << 20)

/* A formatted string (caller frees), or NULL when memory ran out. */
static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, f);
	n = vasprintf(&s, f, ap);
	va_end(ap);
	return n < 0 ? NULL : s;
}

#define CRI_NAMESPACE	"k8s.io"		/* containerd's CRI plugin keeps everything there */

/* containerd's socket: runtime.conf's containerd=, else the shim's $TTRPC_ADDRESS without ".ttrpc" (NULL: none). */
static const char *containerd_address(const struct rt_conf *c)
{
	static char addr[4096];
	const char *t = getenv("TTRPC_ADDRESS");
	size_t n = t ? strlen(t) : 0;

	if (c->containerd)
		return c->containerd;
	if (n <= 6 || n - 6 >= sizeof(addr) || strcmp(t + n - 6, ".ttrpc"))
		return NULL;
	snprintf(addr, sizeof(addr), "%.*s", (int)(n - 6), t);
	return addr;
}

/*
 * Run @argv (found on PATH), its stdout in *out (caller frees): 0, or -1 said
 * (with the last line of its stderr).
 */
static int run_tool(const char *what, const char *const *argv, char **out)
{
	_cleanup_close_ int ofd = memfd_create("tool-out", MFD_CLOEXEC), efd = memfd_create("tool-err", MFD_CLOEXEC);
	_cleanup_free_ char *err = NULL;
	size_t len = 0;
	pid_t pid, self = getpid();
	int st;

	*out = NULL;
	if (ofd < 0 || efd < 0)
		return rt_error("%s: memfd: %s", what, strerror(errno));
	rt_log_flush();
	pid = fork();
	if (pid < 0)
		return rt_error("%s: fork: %s", what, strerror(errno));
	if (pid == 0) {
		/* it dies with us: a create killed midway leaves no export running */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != self)
			_exit(127);
		int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (nul < 0 || dup2(nul, 0) < 0 || dup2(ofd, 1) < 0 || dup2(efd, 2) < 0)
			_exit(127);
		execvp(argv[0], (char **)argv);
		dprintf(2, "execute %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return rt_error("%s: wait for %s: %s", what, argv[0], strerror(errno));
	if (lseek(ofd, 0, SEEK_SET) < 0 || ra_read_all(ofd, CTR_OUT_MAX, NULL, NULL, out, &len) < 0) {
		*out = NULL;
		return rt_error("%s: %s's output: %s", what, argv[0], strerror(errno));
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	free(*out);
	*out = NULL;
	if (lseek(efd, 0, SEEK_SET) == 0 && ra_read_all(efd, 64u << 10, NULL, NULL, &err, &len) == 0 && len) {
		char *last;
		size_t tl = strlen(argv[0]);

		while (len && err[len - 1] == '\n')
			err[--len] = '\0';
		last = strrchr(err, '\n');
		last = last ? last + 1 : err;
		/* (a tool that names itself, as ctr does: once) */
		if (!strncmp(last, argv[0], tl) && last[tl] == ':' && last[tl + 1] == ' ')
			last += tl + 2;
		return rt_error("%s: %s: %s", what, argv[0], last);
	}
	return rt_error("%s: %s exited with status %d", what, argv[0],
			WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
}

/* ctr with @args after "-a ADDRESS --connect-timeout 2s -n k8s.io" (run_tool()). */
static int ctr(const struct rt_conf *c, const char *what, char **out, const char *const *args)
{
	/* (without a connect timeout ctr waits 10 s for a containerd that is not there) */
	const char *argv[16] = { "ctr", "-a", containerd_address(c), "--connect-timeout", "2s", "-n", CRI_NAMESPACE };
	size_t n = 7;

	for (; *args && n < ARRAY_SIZE(argv) - 1; args++)
		argv[n++] = *args;
	return run_tool(what, argv, out);
}

static bool is_digest(const char *s)
{
	return !strncmp(s, "sha256:", 7) && strlen(s) == 71 && strspn(s + 7, "0123456789abcdef") == 64;
}

/*
 * The manifest digest containerd keeps for @name, this platform's when it is
 * an index: into @out (72 bytes). 0; 1: containerd has no image of that name;
 * 2: it has one, an index without a manifest of this platform, why in @why;
 * -1: containerd did not answer, or not as it should (an index it gave no
 * answer for), why in @why.
 */
static int resolve(const char *addr, const char *name, char out[72], char *why, size_t size)
{
	_cleanup_free_ char *idx = NULL;
	char mt[256], top[128];
	json_t *j, *m;
	size_t i, n = 0;
	int r;

	/* containerd's own answer, through its API (containerd.c): no ctr process per create */
	r = rt_containerd_image(addr, name, mt, sizeof(mt), top, sizeof(top));
	if (r > 0)
		return 1;
	if (r < 0)
		return snprintf(why, size, "ask containerd at %s: %s", addr, strerror(-r)), -1;
	if (!is_digest(top))
		return snprintf(why, size, "containerd's target '%.80s' is not a sha256 digest", top), -1;
	snprintf(out, 72, "%s", top);
	if (!strstr(mt, "index") && !strstr(mt, "manifest.list"))
		return 0;
	/* (no answer: not in its content store, or an error of containerd's, which its answer does not tell apart) */
	r = rt_containerd_content(addr, top, &idx, &n);
	if (r != 0)
		return snprintf(why, size, "its index %s: %s", top, r > 0 ? "containerd gave no answer (not in its content "
				"store?)" : strerror(-r)), -1;
	j = json_loadb(idx, n, JSON_REJECT_DUPLICATES, NULL);
	json_array_foreach(json_object_get(j, "manifests"), i, m) {
		json_t *p = json_object_get(m, "platform");
		const char *d = json_string_value(json_object_get(m, "digest"));

		if (d && is_digest(d) && !strcmp(json_string_value(json_object_get(p, "os")) ?: "", "linux") &&
		    !strcmp(json_string_value(json_object_get(p, "architecture")) ?: "", RA_OCI_HOST_ARCH)) {
			snprintf(out, 72, "%s", d);
			json_decref(j);
			return 0;
		}
	}
	json_decref(j);
	return snprintf(why, size, "its index %s has no manifest for linux/" RA_OCI_HOST_ARCH, top), 2;
}

static int engine_manifest(const struct rt_conf *c, const char *name, char out[72])
{
	char why[512];
	int r = resolve(containerd_address(c), name, out, why, sizeof(why));

	if (r == 1)
		return rt_error("the engine's image %s: containerd (%s, namespace " CRI_NAMESPACE ") has no such image",
				name, containerd_address(c));
	return r != 0 ? rt_error("the engine's image %s: %s", name, why) : 0;
}

/*
 * Whether the store's image @manifest is the one containerd made container
 * @id's rootfs of: the parent of the container's snapshot is the chain id of
 * the layers of the image CRI resolved at CreateContainer. The name is
 * looked up again at create, and its tag may have moved since to an image
 * another pod's author chose (containerd 1.6 names an image by the first of
 * the references of its ID). 0, or -1 said.
 */
static int is_the_mounted(const struct rt_conf *c, const char *name, const char *id, const char *manifest)
{
	struct rootasm_import_opts o = { .size = sizeof(o), .store = c->engine_store };
	struct rootasm_error e = { 0 };
	_cleanup_free_ char *doc = NULL;
	char parent[256], line[1024];
	const char *chain;
	json_t *ins;
	int r;

	r = rt_containerd_snapshot_parent(containerd_address(c), id, parent, sizeof(parent));
	if (r != 0)
		return rt_error("the engine's image %s: container %s's snapshot in containerd: %s", name, id,
				r > 0 ? "none" : strerror(-r));
	if (rootasm_inspect(NULL, manifest, &o, 0, &doc, &e) < 0)
		return rt_error("the engine's image %s: %s", name, rootasm_error_format(&e, line, sizeof(line)));
	ins = json_loads(doc, 0, NULL);
	chain = json_string_value(json_object_get(ins, "ChainID"));
	r = chain && !strcmp(chain, parent) ? 0 :
	    rt_error("the engine's image %s: containerd made container %s's rootfs of the layers %s, not of %s's "
		     "(%s), the image of that name now: refused", name, id, parent, manifest, chain ? chain : "none");
	json_decref(ins);
	return r;
}

/* rm -rf of @a and @b (NULL: none), on this file system only. */
static int remove_trees(const char *a, const char *b)
{
	const char *rm[] = { "rm", "-rf", "--one-file-system", a, b, NULL };
	_cleanup_free_ char *out = NULL;

	return run_tool("the engine's image export", rm, &out);
}

/*
 * An import's slot: one image's import at a time, different images' at once.
 * The import of @manifest holds the slot its digest falls in, one of
 * IMPORT_SLOTS directories STORE/engine/.engine-export/NN (flock()ed on its
 * fd), and unpacks the export there. The slot's fd, locked, its path in
 * *ret_dir (caller frees); or -1 said.
 */
#define IMPORT_SLOTS 64

/* The first byte of the digest @manifest ("sha256:HEX"): what spreads imports over slots and tokens. */
static unsigned int digest_byte(const char *manifest)
{
	return (unsigned int)strtoul((char[3]){ manifest[7], manifest[8], 0 }, NULL, 16);
}

static int import_slot(const struct rt_conf *c, const char *manifest, char **ret_dir)
{
	_cleanup_free_ char *top = fmt("%s/.engine-export", c->engine_store);
	unsigned int slot = digest_byte(manifest) % IMPORT_SLOTS;
	int fd;

	*ret_dir = top ? fmt("%s/%02x", top, slot) : NULL;
	if (!*ret_dir)
		return rt_error("out of memory");
	if ((mkdir(top, 0700) < 0 && errno != EEXIST) || (mkdir(*ret_dir, 0700) < 0 && errno != EEXIST))
		return rt_error("the store %s: %s: %s", c->engine_store, *ret_dir, strerror(errno));
	fd = open(*ret_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || flock(fd, LOCK_EX) < 0) {
		int err = errno;

		if (fd >= 0)
			close(fd);
		return rt_error("the store %s: %s: %s", c->engine_store, *ret_dir, strerror(err));
	}
	return fd;
}

int rt_layer_max(const char *v, uint64_t *ret)
{
	unsigned long long n, mul = 1;
	struct sysinfo si;
	char *end;

	if (!v)
		v = RT_LAYER_MAX_DEFAULT;
	if (*v < '0' || *v > '9')
		return -1;	/* (strtoull would take a sign or a space) */
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno)
		return -1;
	if (!strcmp(end, "%")) {
		if (n < 1 || n > 100 || sysinfo(&si) < 0)
			return -1;
		*ret = (uint64_t)si.totalram * si.mem_unit / 100 * n;
		return 0;
	}
	if (*end && !end[1] && strchr("kKmMgGtT", *end))
		mul = 1ull << (10 * ((strchr("kKmMgGtT", *end) - "kKmMgGtT") / 2 + 1));
	else if (*end)
		return -1;
	if (n > UINT64_MAX / mul)
		return -1;
	*ret = n * mul;
	return 0;
}

int rt_imports(const char *v)
{
	char *end;
	long n;

	if (!v)
		return 2;
	errno = 0;
	n = strtol(v, &end, 10);
	return errno || *end || end == v || n < 1 || n > 64 ? -1 : (int)n;
}

/*
 * One of the node's runtime.conf `imports` tokens, each a file
 * STORE/engine/.engine-imports/N flock()ed: an import of a pod's image (its
 * layers staged in memory, up to import_layer_max each) holds one, so that
 * pods of many images at once stage no more than that many layers. A free
 * token, else the one @manifest falls on, waited for. Its fd, or -1 said.
 */
static int import_token(const struct rt_conf *c, const char *manifest)
{
	_cleanup_free_ char *top = fmt("%s/.engine-imports", c->engine_store);
	_cleanup_close_ int dfd = -EBADF;
	int n = rt_imports(c->imports), fd;
	char name[16];

	if (!top)
		return rt_error("out of memory");
	if (mkdir(top, 0700) < 0 && errno != EEXIST)
		return rt_error("the store %s: %s: %s", c->engine_store, top, strerror(errno));
	dfd = open(top, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return rt_error("the store %s: %s: %s", c->engine_store, top, strerror(errno));
	for (int i = 0; i <= n; i++) {
		/* (i == n: none free; the digest's, waited for) */
		unsigned int t = i < n ? (unsigned int)i : digest_byte(manifest) % (unsigned int)n;
		struct stat st;

		snprintf(name, sizeof(name), "%u", t);
		fd = openat(dfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0600);
		if (fd < 0)
			return rt_error("the store %s: %s/%s: %s", c->engine_store, top, name, strerror(errno));
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			close(fd);
			return rt_error("the store %s: %s/%s: not a regular file", c->engine_store, top, name);
		}
		if (flock(fd, i < n ? LOCK_EX | LOCK_NB : LOCK_EX) == 0)
			return fd;
		if (errno != EWOULDBLOCK) {
			int err = errno;

			close(fd);
			return rt_error("the store %s: %s/%s: %s", c->engine_store, top, name, strerror(err));
		}
		close(fd);
	}
	return rt_error("the store %s: %s: no token", c->engine_store, top);
}

/*
 * ctr images export of @name into @dir, its import's slot (import_slot(),
 * held: what is there is what a create killed midway left), as an OCI layout
 * in a tar (its manifest the very blob containerd keeps), unpacked there, then
 * rootasm_import() of that layout. *@engine_failed: the export failed.
 */
static int import_from_engine(const struct rt_conf *c, const char *name, const char *manifest, const char *dir,
			      bool *engine_failed)
{
	struct rootasm_import_opts o = { .size = sizeof(o), .store = c->engine_store };
	struct rootasm_import_result res = { 0 };
	struct rootasm_error e = { 0 };
	_cleanup_free_ char *tar = NULL, *oci = NULL, *ref = NULL, *out = NULL;
	char tag[512];
	int r;

	if (rt_layer_max(c->import_layer_max, &o.max_layer_bytes) < 0)
		return rt_error("import_layer_max '%s': not a size", c->import_layer_max);
	tar = fmt("%s/image.tar", dir);
	oci = fmt("%s/oci", dir);
	ref = oci ? fmt("oci:%s", oci) : NULL;
	if (!tar || !ref)
		return rt_error("out of memory");
	if (remove_trees(tar, oci) < 0)
		return -1;
	{
		/* (the platform the import chooses from an index: the same manifest) */
		const char *ex[] = { "images", "export", "--platform", "linux/" RA_OCI_HOST_ARCH, tar, name, NULL };
		const char *untar[] = { "tar", "--no-same-owner", "--no-same-permissions", "--one-top-level=oci", "-C", dir,
					"-xf", tar, NULL };

		r = ctr(c, "the engine's image export", &out, ex);
		free(out);
		out = NULL;
		if (r == 0)
			r = run_tool("the engine's image export", untar, &out);
		/* (containerd did not give the image: not a time to judge by its answers what it has) */
		if (r < 0)
			*engine_failed = true;
	}
	if (r == 0) {
		if (rootasm_store_name_normalize(name, tag, sizeof(tag)) == 0)
			o.tag = name;
		if (rootasm_import(NULL, ref, &o, &res, &e) < 0) {
			char line[1024];

			r = rt_error("the engine's image %s: import: %s", name, rootasm_error_format(&e, line, sizeof(line)));
		} else if (strcmp(res.manifest, manifest)) {
			r = rt_error("the engine's image %s: containerd names manifest %s, its export is %s", name, manifest,
				     res.manifest);
		}
		rootasm_import_result_free(&res);
	}
	if (remove_trees(tar, oci) < 0)
		r = -1;
	return r;
}

/*
 * Whether containerd still has the engine's store's image @im: CRI's name of
 * its ID (the config's digest: CRI names every image it pulls so; asked
 * first, no content read for it), or one of the names it was imported by
 * still gives its manifest. 1: yes; 0: no; -1: containerd did not answer.
 */
static int engine_has(const char *addr, const struct rootasm_store_image *im)
{
	char got[72], why[512], mt[256], top[128];
	int r;

	r = rt_containerd_image(addr, im->config, mt, sizeof(mt), top, sizeof(top));
	if (r <= 0)
		return r < 0 ? -1 : 1;
	for (size_t i = 0; i < im->nnames; i++) {
		r = resolve(addr, im->names[i], got, why, sizeof(why));
		if (r == 0 && !strcmp(got, im->manifest))
			return 1;
		if (r < 0)
			return -1;
	}
	return 0;
}

/*
 * What imports killed midway left in the slots no import holds now, and what
 * is not a slot (an older runtime's export): removed. One sweep at a time
 * (flock on .engine-export, not waited for: another sweep does it).
 */
static void sweep_exports(const struct rt_conf *c)
{
	_cleanup_free_ char *top = fmt("%s/.engine-export", c->engine_store);
	_cleanup_close_ int tfd = -EBADF;
	struct dirent *de;
	DIR *d;

	tfd = top ? open(top, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -EBADF;
	if (tfd < 0 || flock(tfd, LOCK_EX | LOCK_NB) < 0)
		return;
	{
		int dfd = dup(tfd);

		d = dfd >= 0 ? fdopendir(dfd) : NULL;
		if (!d && dfd >= 0)
			close(dfd);
	}
	while (d && (de = readdir(d))) {
		const char *n = de->d_name;
		_cleanup_free_ char *path = NULL, *tar = NULL, *oci = NULL;
		bool slot = strlen(n) == 2 && strspn(n, "0123456789abcdef") == 2 &&
			    (de->d_type == DT_DIR || de->d_type == DT_UNKNOWN);
		int fd;

		if (!strcmp(n, ".") || !strcmp(n, ".."))
			continue;
		path = fmt("%s/%s", top, n);
		if (!path)
			break;
		if (!slot) {
			remove_trees(path, NULL);
			continue;
		}
		fd = openat(tfd, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			if (errno == ENOTDIR || errno == ELOOP)
				remove_trees(path, NULL);	/* (no directory, where d_type could not tell) */
			continue;
		}
		/* held by an import: its own; an empty one: nothing to remove, no rm run */
		if (flock(fd, LOCK_EX | LOCK_NB) == 0 && (faccessat(fd, "image.tar", F_OK, AT_SYMLINK_NOFOLLOW) == 0 ||
							  faccessat(fd, "oci", F_OK, AT_SYMLINK_NOFOLLOW) == 0)) {
			tar = fmt("%s/image.tar", path);
			oci = fmt("%s/oci", path);
			if (tar && oci)
				remove_trees(tar, oci);
		}
		close(fd);
	}
	if (d)
		closedir(d);
}

/*
 * The engine's store follows containerd's, after each import into it (the
 * only time it grows; the caller holds its flock), and after one that
 * failed: an image containerd no longer has (engine_has(): kubelet's image
 * garbage collection removed it, or `crictl rmi`) is removed, then the
 * layer images no image names
 * (rootasm_store_gc(): not those a live tree holds open). A
 * container of it that runs keeps its tree; one created later imports it
 * again, if containerd has it again. What fails is said, and kept.
 */
static void engine_prune(const struct rt_conf *c, const char *keep)
{
	struct rootasm_store_gc_result g = { .size = sizeof(g) };
	struct rootasm_store_image *v = NULL;
	struct rootasm_error e = { 0 };
	size_t n = 0, removed = 0;
	char line[1024];

	if (rootasm_store_images(c->engine_store, &v, &n, &e) < 0) {
		rt_warn("the engine's store %s: %s", c->engine_store, rootasm_error_format(&e, line, sizeof(line)));
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(v[i].manifest, keep) || engine_has(containerd_address(c), &v[i]) != 0)
			continue;
		memset(&e, 0, sizeof(e));
		if (rootasm_store_remove(c->engine_store, v[i].manifest, &e) < 0)
			rt_warn("the engine's store %s: remove %s: %s", c->engine_store, v[i].manifest,
				rootasm_error_format(&e, line, sizeof(line)));
		else
			removed++;
	}
	rootasm_store_images_free(v, n);
	sweep_exports(c);
	memset(&e, 0, sizeof(e));
	if (removed && rootasm_store_gc(c->engine_store, 0, &g, &e) < 0)
		rt_warn("the engine's store %s: gc: %s", c->engine_store, rootasm_error_format(&e, line, sizeof(line)));
}

/* The image name containerd's CRI plugin gave a container of a pod (not its sandbox), or NULL. */
static const char *cri_image_name(json_t *cfg)
{
	json_t *ann = json_object_get(cfg, "annotations");
	const char *type = json_string_value(json_object_get(ann, "io.kubernetes.cri.container-type"));
	const char *name = json_string_value(json_object_get(ann, "io.kubernetes.cri.image-name"));

	return type && !strcmp(type, "container") && name && *name ? name : NULL;
}

bool rt_cri_container(json_t *cfg)
{
	return cri_image_name(cfg) != NULL;
}

int rt_cri_image(const struct rt_conf *c, json_t *cfg, const char *id, char **ret_image)
{
	const char *name = cri_image_name(cfg);
	char manifest[72], line[1024];
	_cleanup_close_ int dfd = -EBADF, sfd = -EBADF;
	_cleanup_free_ char *slot = NULL;
	struct rootasm_error e = { 0 };
	int r;

	*ret_image = NULL;
	if (!name || !containerd_address(c) || strcmp(c->unannotated, "image"))
		return 1;
	/* a reference as containerd keeps it, never something ctr could take for an option */
	if (!((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= '0' && name[0] <= '9')) || strlen(name) > 255 ||
	    strpbrk(name, " \t\n,\"'\\"))
		return rt_error("the engine's image '%.64s': not an image reference", name);
	{
		struct stat st;
		int sr = stat(containerd_address(c), &st);

		if (sr < 0 || !S_ISSOCK(st.st_mode))
			return rt_error("the engine's image %s: containerd's socket %s: %s", name, containerd_address(c),
					sr < 0 ? strerror(errno) : "not a socket");
	}
	if (engine_manifest(c, name, manifest) < 0)
		return -1;
	r = rootasm_store_lookup(c->engine_store, manifest, NULL, NULL, &e);
	if (r < 0 && e.err == ENOENT) {
		/*
		 * The static runtime hands an import to rootasm-runtime-full before
		 * it has changed anything (containerd and the store only asked): it
		 * loads libarchive, and hashes what it reads with libcrypto. The
		 * chain of an imported image's layers (is_the_mounted()) it hashes
		 * with its own SHA-256 (static.c).
		 */
		if (rt_static)
			return RT_NEEDS_FULL;
		/* one import of it at a time: the others find it there once it is done */
		if ((mkdir(c->store, 0755) < 0 && errno != EEXIST) || (mkdir(c->engine_store, 0755) < 0 && errno != EEXIST))
			return rt_error("the store %s: %s", c->engine_store, strerror(errno));
		/*
		 * The store directory's flock, shared: a runtime before the slots
		 * (0.4) took it exclusive for its import and removed the whole
		 * .engine-export; imports of different images at once still.
		 */
		dfd = open(c->engine_store, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0 || flock(dfd, LOCK_SH) < 0)
			return rt_error("the store %s: %s", c->engine_store, strerror(errno));
		sfd = import_slot(c, manifest, &slot);
		if (sfd < 0)
			return -1;
		memset(&e, 0, sizeof(e));
		r = rootasm_store_lookup(c->engine_store, manifest, NULL, NULL, &e);
		if (r < 0 && e.err == ENOENT) {
			_cleanup_close_ int tfd = import_token(c, manifest);

			if (tfd < 0)
				return -1;
			bool engine_failed = false;

			r = import_from_engine(c, name, manifest, slot, &engine_failed);
			close_fdp(&tfd);
			/* (after an import that failed too, but not for containerd: what it frees may be what it lacked) */
			if (!engine_failed)
				engine_prune(c, manifest);
			if (r < 0)
				return -1;
		}
	}
	if (r < 0)
		return rt_error("the engine's image %s (%s): %s", name, manifest, rootasm_error_format(&e, line, sizeof(line)));
	if (is_the_mounted(c, name, id, manifest) < 0)
		return -1;
	*ret_image = strdup(manifest);
	return *ret_image ? 0 : rt_error("out of memory");
}
