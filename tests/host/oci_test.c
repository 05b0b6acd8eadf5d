// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rootasm import and rootasm bundle, on the running kernel as root: each
 * test in its own private mount namespace (harness.c). Images are made by
 * mkoci.py from tar files GNU tar writes (xattrs, sparse files, owners) or
 * from hostile tars it writes itself. What a tree holds is read from the
 * tree; what is mounted from /proc/self/mountinfo.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "harness.h"

static const char *bin, *mkoci;
static pid_t main_pid;

/* Every file of the store with inode, size and times: equal before and after means nothing was written. */
static char *store_state(const char *store)
{
	char *out;

	if (run_sh(&out, "cd %s && find . -printf '%%p %%i %%s %%T@ %%C@\\n' | sort", store) != 0)
		FAILF("find %s", store);
	return strdup(out);
}

/* Import @img (a directory under the fixture) into @store; returns the exit status, the layout in @layout. */
static int import(const char *img, const char *store, const char *extra, char **out)
{
	return run_sh(out, "cd %s && %s import --quiet --store %s %s oci:%s", fix, bin, store, extra ? extra : "", img);
}

static void mkimage(const char *name, const char *args)
{
	sh("cd %s && rm -rf %s && %s layout %s %s", fix, name, mkoci, name, args);
}

/* Assemble @layout at @fix/@mnt; fails the test if that fails. */
static void assemble(const char *layout, const char *mnt)
{
	char *out;

	sh("mkdir -p %s/%s", fix, mnt);
	if (run_sh(&out, "%s assemble %s --attach %s/%s", bin, layout, fix, mnt) != 0)
		FAILF("assemble %s: %s", layout, out);
}

static char *first_line(char *s)
{
	char *nl = strchr(s, '\n');

	if (nl)
		*nl = '\0';
	return s;
}

static char *P(const char *fmt, ...)
{
	static char buf[8][4096];
	static int i;
	char rel[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	i = (i + 1) % 8;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", fix, rel);
	return buf[i];
}

/* Each test starts without a store or a mount point of the earlier ones. */
static void fresh(void)
{
	sh("cd %s && rm -rf st m k realstore linkstore B up vol config.orig victim run", fix);
}

static char *oci_ref(const char *img)
{
	static char buf[4200];

	snprintf(buf, sizeof(buf), "oci:%s/%s", fix, img);
	return buf;
}

/* ------------------------------------------------------------------ import */

TEST(import_assembles_the_image_with_every_kind_of_entry)
{
	fresh();
	struct stat a, b, s;
	char *out, layout[4096], v[64];
	ssize_t n;

	ASSERT_EQ(import("img:v1", "st", NULL, &out), 0);
	snprintf(layout, sizeof(layout), "%s", first_line(out));
	ASSERT_CONTAINS(layout, "/st/images/sha256/");
	/* the layout passes check: absolute paths of the image files themselves */
	ASSERT_EQ(run_sh(&out, "%s check %s", bin, layout), 0);
	ASSERT_CONTAINS(out, "erofs");
	assemble(layout, "m");
	/* layer 2 replaced a file, whited one out, made a directory opaque */
	ASSERT_STR(slurp(P("m/etc/a")), "two\n");
	ASSERT_ERRNO(lstat(P("m/etc/gone"), &s), ENOENT);
	ASSERT_ERRNO(lstat(P("m/dir/sub"), &s), ENOENT);
	ASSERT_STR(slurp(P("m/dir/new")), "new\n");
	/* layer 1's hard link pair kept one inode (the pair in layer 1: keep and keep-link) */
	ASSERT_EQ(lstat(P("m/etc/keep"), &a), 0);
	ASSERT_EQ(lstat(P("m/etc/keep-link"), &b), 0);
	ASSERT_EQ(a.st_ino, b.st_ino);
	ASSERT_EQ(a.st_nlink, 2);
	/* owners, modes, setuid, file capabilities, user xattrs */
	ASSERT_EQ(lstat(P("m/bin/busybox"), &s), 0);
	ASSERT_EQ(s.st_mode & 07777, 04755);
	ASSERT_EQ(lstat(P("m/etc/owned"), &s), 0);
	ASSERT_EQ(s.st_uid, 1000);
	ASSERT_EQ(s.st_gid, 1001);
	ASSERT_EQ(s.st_mode & 07777, 0640);
	ASSERT_TRUE(getxattr(P("m/etc/keep"), "security.capability", v, sizeof(v)) > 0);
	n = getxattr(P("m/etc/owned"), "user.x", v, sizeof(v));
	ASSERT_EQ(n, 5);
	ASSERT_TRUE(!memcmp(v, "value", 5));
	/* FIFO, device node, symlink, a long name */
	ASSERT_EQ(lstat(P("m/fifo"), &s), 0);
	ASSERT_TRUE(S_ISFIFO(s.st_mode));
	ASSERT_EQ(lstat(P("m/null"), &s), 0);
	ASSERT_TRUE(S_ISCHR(s.st_mode) && s.st_rdev == makedev(1, 3));
	ASSERT_EQ(lstat(P("m/bin/sh"), &s), 0);
	ASSERT_TRUE(S_ISLNK(s.st_mode));
	ASSERT_EQ(lstat(P("m/%0200d/%0200d/deep", 0, 0), &s), 0);
	/* the sparse file: its size and its data, and its layer image is small (holes stayed holes) */
	ASSERT_EQ(lstat(P("m/sparse"), &s), 0);
	ASSERT_EQ(s.st_size, 50 << 20);
	{
		int fd = open(P("m/sparse"), O_RDONLY | O_CLOEXEC);
		char d[5] = "";

		ASSERT_EQ(pread(fd, d, 4, 1000000), 4);
		ASSERT_TRUE(!memcmp(d, "data", 4));
		ASSERT_EQ(pread(fd, d, 4, 0), 4);
		ASSERT_TRUE(!memcmp(d, "\0\0\0\0", 4));
		close(fd);
	}
	ASSERT_EQ(run_sh(&out, "du -k --apparent-size -c %s/st/layers/sha256/*.erofs | tail -1", fix), 0);
	ASSERT_TRUE(atoi(out) < 20 * 1024);
	/* the tree is an overlay over two erofs layers, with a tmpfs upper taking writes */
	sh("echo w > %s/m/written", fix);
	ASSERT_EQ(umount2(P("m"), MNT_DETACH), 0);
}

/*
 * mkfs.erofs copies the data of a chunked image (sparse files: holes kept)
 * through a tmpfile() in /tmp, and copy_file_range() fails across file
 * systems: a tmpfs /tmp (Debian 13's default) made every import fail. Only a
 * layer with sparse files is chunked, and its mkfs gets the store's layers
 * directory as /tmp.
 */
TEST(import_with_tmp_on_another_file_system_chunks_only_sparse_layers)
{
	char *out;

	fresh();
	sh("rm -rf /var/tmp/rootasm-oci-tmpfs && mkdir -p /var/tmp/rootasm-oci-tmpfs && cp -a %s/img /var/tmp/rootasm-oci-tmpfs/", fix);
	/* the binary through an fd opened before the tmpfs covers /tmp: the checkout may be under /tmp */
	ASSERT_EQ(run_sh(&out, "unshare -m --propagation private sh -c 'exec 9<%s && mount -t tmpfs tmp /tmp && "
			 "cd /var/tmp/rootasm-oci-tmpfs && /proc/self/fd/9 import --quiet --store st oci:img:v1 && "
			 "findmnt -n -o FSTYPE /tmp && ls -A /tmp | wc -l'", bin), 0);
	ASSERT_CONTAINS(out, "tmpfs\n0\n");	/* (its /tmp was the tmpfs, and nothing was left in it) */
	/* layer 1 has the sparse file: chunked; layer 2 has none: not */
	ASSERT_EQ(run_sh(&out, "cd /var/tmp/rootasm-oci-tmpfs/st/layers/sha256 && for f in $(ls -tr *.erofs); do "
			 "dump.erofs -s $f | grep -c chunked_file; done"), 1);
	ASSERT_STR(out, "1\n0\n");
	/* nothing of mkfs's temporary file stayed in the layers directory */
	ASSERT_EQ(run_sh(&out, "ls /var/tmp/rootasm-oci-tmpfs/st/layers/sha256 | grep -vc '\\.erofs\\(\\.json\\)\\?$'"), 1);
	ASSERT_STR(out, "0\n");
	sh("rm -rf /var/tmp/rootasm-oci-tmpfs");
}

TEST(import_takes_gzip_zstd_plain_layers_and_a_nested_index)
{
	fresh();
	char *out;

	mkimage("mix", "--nested l1.tar:zstd l2.tar:none");
	ASSERT_EQ(import("mix", "st", NULL, &out), 0);
	assemble(first_line(out), "m");
	ASSERT_STR(slurp(P("m/etc/a")), "two\n");
	/* the same layers as gzip blobs map to the same diff-ids: the store shares them */
	ASSERT_EQ(import("img:v1", "st", "--json", &out), 0);
	ASSERT_CONTAINS(out, "\"cached\":true");
	ASSERT_TRUE(!strstr(out, "\"cached\":false"));
}

TEST(import_squashfs_keeps_xattrs_and_whiteouts)
{
	fresh();
	char *out, v[64];
	struct stat s;

	ASSERT_EQ(import("img:v1", "st", "--fs squashfs", &out), 0);
	ASSERT_CONTAINS(out, ".squashfs.layout.json");
	assemble(first_line(out), "m");
	ASSERT_TRUE(getxattr(P("m/etc/keep"), "security.capability", v, sizeof(v)) > 0);
	ASSERT_ERRNO(lstat(P("m/etc/gone"), &s), ENOENT);
	ASSERT_ERRNO(lstat(P("m/dir/sub"), &s), ENOENT);
	ASSERT_EQ(lstat(P("m/sparse"), &s), 0);
	ASSERT_EQ(s.st_size, 50 << 20);
}

/* root's store below a directory another user may change: that user could put a store of its own in its place */
TEST(store_below_a_users_directory_is_refused)
{
	char *out;

	fresh();
	sh("mkdir -p %s/ustore && chown 1771 %s/ustore", fix, fix);
	ASSERT_EQ(import("img:v1", "ustore/st", NULL, &out), 1);
	ASSERT_CONTAINS(out, "/ustore above it is not root's");
	ASSERT_EQ(run_sh(&out, "%s images --store %s/ustore/st", bin, fix), 1);
	ASSERT_CONTAINS(out, "/ustore above it is not root's");
	/* root's again: fine */
	sh("chown 0 %s/ustore", fix);
	ASSERT_EQ(import("img:v1", "ustore/st", NULL, &out), 0);
}

TEST(second_import_writes_nothing)
{
	fresh();
	char *out, *before;

	ASSERT_EQ(import("img:v1", "st", NULL, &out), 0);
	before = store_state(P("st"));
	ASSERT_EQ(import("img:v1", "st", "--json", &out), 0);
	ASSERT_CONTAINS(out, "\"wrote\":false");
	ASSERT_STR(store_state(P("st")), before);
}

TEST(progress_is_json_lines_with_json_and_nothing_with_quiet)
{
	char *out;

	fresh();
	/* --json: stdout the result, stderr one JSON event per layer and line (converted, then cached) */
	for (int pass = 0; pass < 2; pass++) {
		ASSERT_EQ(run_sh(&out, "cd %s && %s import --json --store st oci:img:v1 2>err >res && python3 -c \""
			      "import json; ev = [json.loads(l) for l in open('err')]; r = json.load(open('res')); "
			      "assert len(ev) == 2, ev; "
			      "assert [e['event'] for e in ev] == ['layer'] * 2, ev; "
			      "assert [e['index'] for e in ev] == [1, 2] and ev[0]['count'] == 2, ev; "
			      "assert [e['diff_id'] for e in ev] == [l['diff_id'] for l in r['layers']], ev; "
			      "assert all(e['cached'] == %s for e in ev), ev\"", fix, bin, pass ? "True" : "False"),
			  0);
	}
	/* --quiet: nothing on stderr, the layout on stdout */
	fresh();
	ASSERT_EQ(run_sh(&out, "cd %s && %s import --quiet --store st oci:img:v1 2>err >res && test ! -s err && "
		      "grep -c layout.json res", fix, bin), 0);
	ASSERT_STR(out, "1\n");
	sh("rm -f %s/err %s/res", fix, fix);
}

TEST(concurrent_imports_of_one_image_publish_each_layer_once)
{
	fresh();
	char *out;
	int st1, st2;
	pid_t p1, p2;

	p1 = fork();
	if (p1 == 0)
		_exit(import("img:v1", "st", NULL, NULL));
	p2 = fork();
	if (p2 == 0)
		_exit(import("img:v1", "st", NULL, NULL));
	waitpid(p1, &st1, 0);
	waitpid(p2, &st2, 0);
	ASSERT_EQ(st1, 0);
	ASSERT_EQ(st2, 0);
	ASSERT_EQ(run_sh(&out, "ls %s/st/layers/sha256/*.erofs | wc -l", fix), 0);
	ASSERT_EQ(atoi(out), 2);
	ASSERT_EQ(run_sh(&out, "ls -A %s/st/tmp | wc -l", fix), 0);
	ASSERT_EQ(atoi(out), 0);
}

TEST(sigkill_during_import_leaves_no_partial_file)
{
	fresh();
	char *out, line[512];
	int pfd[2], st;
	pid_t pid;
	FILE *f;

	/* killed right after the first layer was published: the store holds complete files only */
	ASSERT_EQ(pipe(pfd), 0);
	pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 2);
		execl(bin, bin, "import", "--store", P("st"), oci_ref("big"), (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	f = fdopen(pfd[0], "r");
	ASSERT_TRUE(fgets(line, sizeof(line), f) != NULL);
	ASSERT_CONTAINS(line, "layer 1/");
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	fclose(f);
	ASSERT_TRUE(WIFSIGNALED(st));
	ASSERT_EQ(count_mounts_under(fix), 0);
	ASSERT_EQ(run_sh(&out, "ls -A %s/st/tmp | wc -l", fix), 0);
	ASSERT_EQ(atoi(out), 0);
	/* every published image is complete: each mounts, the unfinished one is absent */
	ASSERT_EQ(run_sh(&out, "ls %s/st/layers/sha256/*.erofs | wc -l", fix), 0);
	ASSERT_TRUE(atoi(out) < 3);
	ASSERT_EQ(run_sh(&out, "for i in %s/st/layers/sha256/*.erofs; do mkdir -p %s/k && mount -o loop,ro $i %s/k "
		      "&& umount %s/k || exit 1; done", fix, fix, fix, fix), 0);
	/* and importing again finishes the job */
	ASSERT_EQ(import("big", "st", NULL, &out), 0);
}

/* ------------------------------------------------------------ verification */

/* Flip one byte of the first blob of @img whose name is not @keep: same size, other digest. */
static void corrupt_blob(const char *img, const char *which)
{
	sh("cd %s/%s/blobs/sha256 && f=$(python3 -c \"import json,sys; m=json.load(open('%s')); print(%s)\") && "
	   "printf 'X' | dd of=$f bs=1 seek=20 conv=notrunc status=none", fix, img,
	   "../../index.json", which);
}

static void expect_refused(const char *img, const char *want1, const char *want2)
{
	char *out;

	ASSERT_EQ(import(img, "st", NULL, &out), 2);
	ASSERT_CONTAINS(out, want1);
	if (want2)
		ASSERT_CONTAINS(out, want2);
	/* one line */
	ASSERT_TRUE(strchr(out, '\n') == out + strlen(out) - 1);
	/* nothing half-imported: no layer image, no record, no mount */
	/* (the store's lock file is no part of an image) */
	ASSERT_EQ(run_sh(&out, "find %s/st -type f ! -path '*/st/lock' 2>/dev/null | wc -l", fix), 0);
	ASSERT_EQ(atoi(out), 0);
	ASSERT_EQ(count_mounts_under(fix), 0);
}

TEST(manifest_digest_mismatch_is_refused)
{
	fresh();
	mkimage("bad", "l1.tar:gzip");
	corrupt_blob("bad", "m['manifests'][0]['digest'][7:]");
	expect_refused("bad", "verify blob", "its sha256 is sha256:");
}

TEST(layer_digest_mismatch_is_refused_and_nothing_is_published)
{
	fresh();
	char *out, dg[128];

	mkimage("bad", "l2.tar:none");
	/* the layer: read the manifest for its digest */
	ASSERT_EQ(run_sh(&out, "cd %s/bad && python3 -c \"import json; m=json.load(open('index.json'))['manifests'][0]['digest'][7:]; "
		      "print(json.load(open('blobs/sha256/'+m))['layers'][0]['digest'][7:])\"", fix), 0);
	snprintf(dg, sizeof(dg), "%s", first_line(out));
	sh("cd %s/bad/blobs/sha256 && printf 'X' | dd of=%s bs=1 seek=600 conv=notrunc status=none", fix, dg);
	expect_refused("bad", "verify blob", dg);
	/* a corruption that breaks the tar itself (its first header's checksum) is still reported as what it is */
	mkimage("bad", "l2.tar:none");
	sh("cd %s/bad/blobs/sha256 && printf 'QQQQQQQQ' | dd of=%s bs=1 seek=148 conv=notrunc status=none", fix, dg);
	expect_refused("bad", "verify blob", "its sha256 is");
}

TEST(diff_id_mismatch_is_refused)
{
	fresh();
	mkimage("bad", "--bad-diffid l2.tar:gzip");
	expect_refused("bad", "uncompressed sha256", "diff_id says sha256:0000");
}

TEST(descriptor_size_mismatch_is_refused)
{
	fresh();
	mkimage("bad", "l2.tar:gzip");
	sh("cd %s/bad && python3 -c \"import json; i=json.load(open('index.json')); i['manifests'][0]['size'] += 1; "
	   "json.dump(i, open('index.json','w'))\"", fix);
	expect_refused("bad", "descriptor says", NULL);
}

TEST(duplicate_keys_and_bad_documents_are_refused)
{
	fresh();
	mkimage("bad", "l2.tar:gzip");
	sh("cd %s/bad && python3 -c \"import json; i=json.load(open('index.json')); "
	   "open('index.json','w').write(json.dumps(i)[:-1] + ', \\\"manifests\\\": []}')\"", fix);
	expect_refused("bad", "index.json", "duplicate object key");
	mkimage("bad", "l2.tar:gzip");
	sh("cd %s/bad && printf '{\"imageLayoutVersion\": \"2.0.0\"}' > oci-layout", fix);
	expect_refused("bad", "imageLayoutVersion", NULL);
	mkimage("bad", "l2.tar:gzip");
	sh("cd %s/bad && printf '{\"schemaVersion\": 2, \"manifests\": [], \"x\": \"\\\\u0000\"}' > index.json", fix);
	expect_refused("bad", "index.json", "NUL");
}

TEST(media_type_that_lies_about_compression_is_refused)
{
	fresh();
	mkimage("bad", "l2.tar:gzip");
	sh("cd %s/bad && python3 - <<'EOF'\n"
	   "import json, hashlib, os\n"
	   "i = json.load(open('index.json'))\n"
	   "mf = 'blobs/sha256/' + i['manifests'][0]['digest'][7:]\n"
	   "m = json.load(open(mf))\n"
	   "m['layers'][0]['mediaType'] = 'application/vnd.oci.image.layer.v1.tar+zstd'\n"
	   "d = json.dumps(m).encode(); h = hashlib.sha256(d).hexdigest()\n"
	   "open('blobs/sha256/' + h, 'wb').write(d)\n"
	   "i['manifests'][0].update(digest='sha256:' + h, size=len(d))\n"
	   "json.dump(i, open('index.json', 'w'))\n"
	   "EOF", fix);
	expect_refused("bad", "media type says otherwise", NULL);
}

TEST(blob_that_is_a_symlink_is_refused)
{
	fresh();
	char *out;

	mkimage("bad", "l2.tar:gzip");
	ASSERT_EQ(run_sh(&out, "cd %s/bad && python3 -c \"import json; print(json.load(open('index.json'))['manifests'][0]['digest'][7:])\"", fix), 0);
	first_line(out);
	sh("cd %s/bad/blobs/sha256 && mv %s ../../real && ln -s ../../real %s", fix, out, out);
	expect_refused("bad", "symbolic link", NULL);
}

TEST(tags_select_the_manifest)
{
	fresh();
	char *out;

	ASSERT_EQ(import("img:nope", "st", NULL, &out), 2);
	ASSERT_CONTAINS(out, "no manifest is tagged 'nope' (tags: v1)");
	ASSERT_EQ(import("img", "st", NULL, &out), 0);
	ASSERT_EQ(run_sh(&out, "%s import --store %s/st %s/img", bin, fix, fix), 2);
	ASSERT_CONTAINS(out, "oci:DIR[:TAG]");
}

TEST(store_writable_by_others_is_refused)
{
	char *out;

	fresh();
	sh("mkdir -p %s/st && chmod 0777 %s/st", fix, fix);
	ASSERT_EQ(import("img:v1", "st", NULL, &out), 1);
	ASSERT_CONTAINS(out, "writable by nobody else");
	sh("chmod 0755 %s/st && chown 1000 %s/st", fix, fix);
	ASSERT_EQ(import("img:v1", "st", NULL, &out), 1);
	ASSERT_CONTAINS(out, "owned by uid 1000");
	ASSERT_EQ(run_sh(&out, "find %s/st | wc -l", fix), 0);
	ASSERT_EQ(atoi(out), 1);
}

TEST(import_without_root_says_so_and_creates_nothing)
{
	char *out;

	fresh();
	ASSERT_EQ(run_sh(&out, "cd %s && setpriv --reuid 65534 --regid 65534 --clear-groups %s import --store %s/st oci:img:v1",
		      fix, bin, fix), 1);
	ASSERT_CONTAINS(out, "needs root");
	ASSERT_TRUE(access(P("st"), F_OK) < 0);
}

TEST(store_that_is_a_symlink_is_refused)
{
	fresh();
	char *out;

	sh("mkdir -p %s/realstore && ln -sfn realstore %s/linkstore", fix, fix);
	ASSERT_EQ(import("img:v1", "linkstore", NULL, &out), 2);
	ASSERT_CONTAINS(out, "symbolic link");
	ASSERT_EQ(run_sh(&out, "find %s/realstore | wc -l", fix), 0);
	ASSERT_EQ(atoi(out), 1);
}

/* ------------------------------------------------- images as tools make them */

/* Import @img, assemble it at m: layer 2's /etc/a over layer 1's, its whiteout and opaque directory. */
static void expect_img_tree(const char *img)
{
	char *out;
	struct stat s;

	if (import(img, "st", NULL, &out) != 0)
		FAILF("import %s: %s", img, out);
	assemble(first_line(out), "m");
	ASSERT_STR(slurp(P("m/etc/a")), "two\n");
	ASSERT_STR(slurp(P("m/etc/owned")), "owned\n");
	ASSERT_ERRNO(lstat(P("m/etc/gone"), &s), ENOENT);
	ASSERT_ERRNO(lstat(P("m/dir/sub"), &s), ENOENT);
	ASSERT_EQ(umount2(P("m"), MNT_DETACH), 0);
}

TEST(docker_schema2_manifests_and_manifest_lists_are_imported)
{
	char *out;

	fresh();
	/* a schema 2 manifest, Docker's config and layer types (tar.gzip, tar, tar.zstd) */
	mkimage("dk", "--docker l1.tar:gzip l2.tar:none");
	expect_img_tree("dk");
	mkimage("dk", "--docker l1.tar:zstd l2.tar:gzip");
	expect_img_tree("dk");
	/* a manifest list in front, with a foreign-architecture manifest beside ours */
	mkimage("dkl", "--docker --nested --tag latest l1.tar:gzip l2.tar:gzip");
	expect_img_tree("dkl:latest");
	/* the same layers as OCI's: one diff-id, one layer image */
	ASSERT_EQ(import("img:v1", "st", "--json", &out), 0);
	ASSERT_TRUE(!strstr(out, "\"cached\":false"));
	/* a Docker foreign layer is taken when its blob is in the layout (as nondistributable ones are) */
	mkimage("dkf", "--docker --layer-type 0=application/vnd.docker.image.rootfs.foreign.diff.tar.gzip "
		"l1.tar:gzip l2.tar:gzip");
	expect_img_tree("dkf");
}

TEST(skopeo_v2s2_copy_is_imported)
{
	char *out;

	fresh();
	if (system("command -v skopeo >/dev/null") != 0)
		FAILF("skopeo is not installed (ci/deps installs it)");
	/* Docker's schema 2 has no zstd layers: the image with both layers gzip'd */
	mkimage("gz", "--tag v1 l1.tar:gzip l2.tar:gzip");
	sh("cd %s && rm -rf sk && skopeo copy -q --format v2s2 oci:gz:v1 oci:sk:v1 >/dev/null", fix);
	ASSERT_EQ(run_sh(&out, "grep -l application/vnd.docker.distribution.manifest.v2+json %s/sk/index.json", fix), 0);
	expect_img_tree("sk:v1");
}

TEST(what_rootasm_cannot_read_is_a_bad_image)
{
	fresh();
	/* a layer media type it does not know: exit 2, one line, nothing stored */
	mkimage("bad", "--layer-type 1=application/vnd.oci.image.layer.v1.tar+lz4 l1.tar:gzip l2.tar:gzip");
	expect_refused("bad", "layers[1] has media type application/vnd.oci.image.layer.v1.tar+lz4", NULL);
	/* a foreign layer whose blob is not in the layout */
	mkimage("bad", "--docker --layer-type 0=application/vnd.docker.image.rootfs.foreign.diff.tar.gzip "
		"l1.tar:gzip l2.tar:gzip");
	sh("cd %s/bad && python3 -c \"import json; i=json.load(open('index.json')); "
	   "m=json.load(open('blobs/sha256/'+i['manifests'][0]['digest'][7:])); "
	   "print(m['layers'][0]['digest'][7:])\" | xargs -I@ rm blobs/sha256/@", fix);
	expect_refused("bad", "No such file", NULL);
	/* a digest other than sha256 (valid, but not one rootasm verifies) */
	mkimage("bad", "l2.tar:gzip");
	sh("cd %s/bad && python3 -c \"import json; i=json.load(open('index.json')); "
	   "i['manifests'][0]['digest'] = 'sha512:' + 'ab' * 64; json.dump(i, open('index.json','w'))\"", fix);
	expect_refused("bad", "rootasm verifies sha256 digests only", NULL);
	/* Docker's schema 1 */
	mkimage("bad", "l2.tar:gzip");
	sh("cd %s/bad && python3 -c \"import json; i=json.load(open('index.json')); "
	   "i['manifests'][0]['mediaType'] = 'application/vnd.docker.distribution.manifest.v1+prettyjws'; "
	   "json.dump(i, open('index.json','w'))\"", fix);
	expect_refused("bad", "schema 1", NULL);
}

TEST(symlinked_blobs_directory_is_refused_by_name)
{
	fresh();
	mkimage("bad", "l2.tar:gzip");
	sh("cd %s/bad && mv blobs ../elsewhere-blobs && ln -s ../elsewhere-blobs blobs", fix);
	expect_refused("bad", "blobs is a symbolic link", NULL);
	sh("rm -rf %s/elsewhere-blobs", fix);
	mkimage("bad", "l2.tar:gzip");
	sh("cd %s/bad/blobs && mv sha256 ../../elsewhere-blobs && ln -s ../../elsewhere-blobs sha256", fix);
	expect_refused("bad", "blobs/sha256 is a symbolic link", NULL);
	sh("rm -rf %s/elsewhere-blobs", fix);
}

/* Two-layer image @name of the case tars @lower and @upper (mkoci.py case), imported and assembled at m. */
static void case_image(const char *name, const char *lower, const char *upper)
{
	char *out, args[512];

	sh("cd %s && %s case %s %s.tar && %s case %s %s.tar", fix, mkoci, lower, lower, mkoci, upper, upper);
	snprintf(args, sizeof(args), "%s.tar:gzip %s.tar:gzip", lower, upper);
	mkimage(name, args);
	if (import(name, "st", NULL, &out) != 0)
		FAILF("import %s: %s", name, out);
	assemble(first_line(out), "m");
}

TEST(whiteouts_apply_to_lower_layers_only)
{
	struct stat s;

	fresh();
	/* d/a, then d/.wh.a in the same tar: a stays (umoci keeps it); d/.wh.low hides the lower d/low */
	case_image("wh", "own-whiteout-lower", "own-whiteout");
	ASSERT_STR(slurp(P("m/d/a")), "mine\n");
	ASSERT_ERRNO(lstat(P("m/d/low"), &s), ENOENT);
	ASSERT_EQ(umount2(P("m"), MNT_DETACH), 0);
	/* .wh.d, then a directory d: the new d hides the lower one's content (an opaque directory) */
	fresh();
	case_image("wh", "own-whiteout-lower", "whiteout-then-dir");
	ASSERT_STR(slurp(P("m/d/new")), "new\n");
	ASSERT_ERRNO(lstat(P("m/d/low"), &s), ENOENT);
	ASSERT_ERRNO(lstat(P("m/d/a"), &s), ENOENT);
	ASSERT_EQ(lstat(P("m/d"), &s), 0);
	ASSERT_EQ(s.st_mode & 07777, 0711);
	ASSERT_EQ(umount2(P("m"), MNT_DETACH), 0);
}

TEST(implied_directories_keep_what_the_layers_below_have)
{
	struct stat s;
	char v[64];

	fresh();
	/* layer 1: etc 0750 0:42 with user.lower, usr/lib 0700 7:8, the root 0751 0:5; layer 2: only etc/x, usr/lib/new/y */
	case_image("imp", "implied-lower", "implied");
	ASSERT_STR(slurp(P("m/etc/x")), "x\n");
	ASSERT_STR(slurp(P("m/etc/a")), "a\n");
	ASSERT_EQ(lstat(P("m/etc"), &s), 0);
	ASSERT_EQ(s.st_mode & 07777, 0750);
	ASSERT_EQ(s.st_uid, 0);
	ASSERT_EQ(s.st_gid, 42);
	ASSERT_EQ(getxattr(P("m/etc"), "user.lower", v, sizeof(v)), 4);
	ASSERT_TRUE(!memcmp(v, "kept", 4));
	ASSERT_EQ(lstat(P("m/usr/lib"), &s), 0);
	ASSERT_EQ(s.st_mode & 07777, 0700);
	ASSERT_EQ(s.st_uid, 7);
	ASSERT_EQ(s.st_gid, 8);
	/* a directory new in layer 2 is 0755 root:root */
	ASSERT_EQ(lstat(P("m/usr/lib/new"), &s), 0);
	ASSERT_EQ(s.st_mode & 07777, 0755);
	ASSERT_EQ(s.st_uid, 0);
	ASSERT_EQ(umount2(P("m"), MNT_DETACH), 0);
	/* layer 2 has no entry for the root: its root is layer 1's (seen without an upper, whose root is its own) */
	sh("cd %s && python3 -c \"import json, glob; l = json.load(open(glob.glob('st/images/sha256/*.layout.json')[0])); "
	   "del l['upper']; json.dump(l, open('ro.json', 'w'))\"", fix);
	assemble(P("ro.json"), "m");
	ASSERT_EQ(lstat(P("m"), &s), 0);
	ASSERT_EQ(s.st_mode & 07777, 0751);
	ASSERT_EQ(s.st_gid, 5);
	ASSERT_EQ(umount2(P("m"), MNT_DETACH), 0);
	/* layer 2 depends on layer 1: stored by its chain id, so another base gets its own */
	ASSERT_EQ(run_sh(NULL, "ls %s/st/layers/sha256/*.chain.erofs", fix), 0);
}

TEST(hard_link_to_a_lower_layers_file)
{
	struct stat a, b, c;
	char v[16];

	fresh();
	/* layer 1: bin/tool (04751 3:4, user.t); layer 2: bin/alias and other/alias2 hard links to it */
	case_image("hl", "hardlink-lower", "hardlink");
	ASSERT_STR(slurp(P("m/bin/alias")), "tool\n");
	ASSERT_STR(slurp(P("m/other/alias2")), "tool\n");
	ASSERT_EQ(lstat(P("m/bin/tool"), &a), 0);
	ASSERT_EQ(lstat(P("m/bin/alias"), &b), 0);
	ASSERT_EQ(lstat(P("m/other/alias2"), &c), 0);
	/* one inode, as in the one tree of both layers (umoci, containerd) */
	ASSERT_EQ(a.st_ino, b.st_ino);
	ASSERT_EQ(a.st_ino, c.st_ino);
	ASSERT_EQ(b.st_nlink, 3);
	ASSERT_EQ(b.st_mode & 07777, 04751);
	ASSERT_EQ(b.st_uid, 3);
	ASSERT_EQ(b.st_gid, 4);
	ASSERT_EQ(getxattr(P("m/bin/alias"), "user.t", v, sizeof(v)), 2);
	ASSERT_EQ(umount2(P("m"), MNT_DETACH), 0);
}

TEST(refused_layer_leaves_nothing_new_in_the_store)
{
	char *out, line[512], *before, layout[4096];
	int pfd[2], st;
	pid_t pid;
	FILE *f;

	fresh();
	/* layer 1 converted and published, layer 2 refused: layer 1 is taken back */
	sh("cd %s && %s hostile overlay-xattr h.tar", fix, mkoci);
	mkimage("bad", "l1.tar:gzip h.tar:gzip");
	expect_refused("bad", "trusted.overlay.redirect", NULL);
	/* what was there before stays: layer 1 of img:v1, found in the store, is not this import's */
	ASSERT_EQ(import("img:v1", "st", NULL, &out), 0);
	before = store_state(P("st"));
	ASSERT_EQ(import("bad", "st", NULL, &out), 2);
	ASSERT_STR(store_state(P("st")), before);
	/*
	 * A concurrent import that used layer 1 while the failing import had it
	 * published: it stays (that import's layout names it). The failing one
	 * is stopped right after layer 1, the other runs, then the first fails.
	 */
	fresh();
	mkimage("one", "l1.tar:gzip");
	ASSERT_EQ(pipe(pfd), 0);
	pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 2);
		execl(bin, bin, "import", "--store", P("st"), oci_ref("bad"), (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	f = fdopen(pfd[0], "r");
	ASSERT_TRUE(fgets(line, sizeof(line), f) != NULL);
	ASSERT_CONTAINS(line, "layer 1/2");
	kill(pid, SIGSTOP);
	ASSERT_EQ(import("one", "st", NULL, &out), 0);
	snprintf(layout, sizeof(layout), "%s", first_line(out));
	kill(pid, SIGCONT);
	ASSERT_TRUE(fgets(line, sizeof(line), f) != NULL);
	ASSERT_CONTAINS(line, "trusted.overlay.redirect");
	waitpid(pid, &st, 0);
	fclose(f);
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 2);
	/* the other import's layout, as it was written: its layer is there */
	assemble(layout, "m");
	ASSERT_STR(slurp(P("m/etc/a")), "one\n");
	ASSERT_EQ(umount2(P("m"), MNT_DETACH), 0);
	ASSERT_EQ(run_sh(&out, "ls %s/st/layers/sha256/ | grep -c erofs$", fix), 0);
	ASSERT_STR(out, "1\n");
}

/* ------------------------------------------------------------ hostile tars */

static void hostile_as(const char *kind, const char *comp, const char *want)
{
	char *out, layer[64];

	sh("cd %s && rm -rf h.tar && %s hostile %s h.tar", fix, mkoci, kind);
	snprintf(layer, sizeof(layer), "h.tar:%s", comp);
	mkimage("bad", layer);
	sh("rm -rf /tmp/escaped %s/escaped", fix);
	expect_refused("bad", want, NULL);
	(void)out;
	ASSERT_TRUE(access("/tmp/escaped", F_OK) < 0 && access(P("escaped"), F_OK) < 0);
	ASSERT_TRUE(access("/etc/escaped", F_OK) < 0);
}

static void hostile(const char *kind, const char *want)
{
	hostile_as(kind, "gzip", want);
}

TEST(hostile_dotdot)
{
	fresh();
	hostile("dotdot", "'..' in a name");
}

TEST(hostile_absolute_name)
{
	fresh();
	hostile("absolute", "an absolute name");
}

TEST(hostile_symlink_then_file_through_it)
{
	fresh();
	hostile("symlink-then-file", "goes through a symbolic link");
	hostile("symlink-dir-then-file", "goes through a symbolic link");
}

TEST(hostile_hardlinks)
{
	fresh();
	hostile("hardlink-outside", "'..' in a name");
	hostile("hardlink-absent", "neither in this layer nor below");
}

TEST(hostile_huge_sparse_file)
{
	fresh();
	hostile("huge-sparse", "would exceed");
}

/*
 * What a layer makes besides files' sizes counts toward its limit too (a gzip
 * of a few KB, 64 MiB at most): a hard link's data, xattrs (kernel memory of
 * the stage's tmpfs, which its size does not bound), link targets; and the tar
 * stream cannot hold more than its entries may, however little they make.
 */
TEST(hostile_what_a_layer_makes_counts)
{
	fresh();
	hostile("hardlink-data", "a hard link's data of 83886080 bytes: the layer would exceed");
	hostile("xattr-bomb", "an xattr of 64022 bytes: the layer would exceed");
	/* (zstd: its repeat offsets take a 4000-byte target to a few bytes, gzip to more than 64 times less) */
	hostile_as("symlink-bomb", "zstd", "the layer would exceed");
	/* a few KB of paths 400 directories deep: 80000 inodes, each of them counted */
	hostile("deep-dirs", "a directory its path implies of 1");
	hostile("skip-bomb", "the tar stream exceeds");
}

TEST(hostile_overlay_xattr)
{
	fresh();
	hostile("overlay-xattr", "trusted.overlay.redirect");
	/* overlayfs reads user.overlay.* under its userxattr option: refused as well */
	hostile("user-overlay-xattr", "user.overlay.redirect");
}

TEST(hostile_reserved_whiteout)
{
	fresh();
	hostile("reserved-whiteout", ".wh..wh. is reserved");
}


/* ----------------------------------------------------------------- bundles */

/* ------------------------------------------------------- the image config */

/* An entrypoint that says where, with what and as whom it runs, then its arguments. */
#define ENTRYPOINT "[\"/bin/sh\", \"-c\", \"echo \\\"$GREETING\\\" $(pwd) $(busybox id -u):$(busybox id -g) $(busybox id -G) $HOME: \\\"$@\\\"\", \"ep\"]"

/*
 * An image whose config's "config" is @config: layer 1 of img (busybox) and a
 * layer with /etc/passwd, /etc/group and a working directory; imported into
 * st, its layout returned.
 */
static const char *import_config(const char *name, const char *config)
{
	static char layout[4096];
	char *out, args[8192];

	sh("cd %s && rm -rf cu && mkdir -p cu/etc cu/srv/app cu/home/app && "
	   "printf 'root:x:0:0:root:/root:/bin/sh\\napp:x:1234:2345:App:/home/app:/bin/sh\\n' > cu/etc/passwd && "
	   "printf 'root:x:0:\\napp:x:2345:\\nextra:x:777:other,app\\nnot:x:778:other\\n' > cu/etc/group && "
	   "tar -C cu --numeric-owner -cf cu.tar .", fix);
	snprintf(args, sizeof(args), "--config '%s' l1.tar:gzip cu.tar", config);
	mkimage(name, args);
	if (import(name, "st", NULL, &out) != 0)
		FAILF("import %s: %s", name, out);
	snprintf(layout, sizeof(layout), "%s", first_line(out));
	return layout;
}

TEST(image_config_becomes_the_layouts_exec_section)
{
	const char *layout;
	char *out;

	fresh();
	layout = import_config("cfg", "{\"Env\": [\"PATH=/bin\", \"GREETING=hello world\", \"bad.name=x\"], "
				      "\"Entrypoint\": " ENTRYPOINT ", \"Cmd\": [\"default\", \"args\"], "
				      "\"WorkingDir\": \"srv//app/\", \"User\": \"app\", \"ExposedPorts\": {\"80/tcp\": {}}}");
	ASSERT_EQ(run_sh(&out, "python3 -c \"import json; x=json.load(open('%s'))['exec']; "
		      "print(x['env'], x['cmd'], x['workdir'], x['user'], x['entrypoint'][:2], sorted(x))\"", layout), 0);
	ASSERT_CONTAINS(out, "['PATH=/bin', 'GREETING=hello world'] ['default', 'args'] /srv/app app ['/bin/sh', '-c'] "
			     "['cmd', 'entrypoint', 'env', 'user', 'workdir']");
	/* what exec.env cannot take is left out, and said in the image record */
	ASSERT_EQ(run_sh(&out, "cat %s/st/images/sha256/*[0-9a-f].json | python3 -c \"import json, sys; "
		      "print(json.load(sys.stdin)['env_dropped'])\"", fix), 0);
	ASSERT_STR(out, "['bad.name=x']\n");
	ASSERT_EQ(run_sh(&out, "%s check --offline %s", bin, layout), 0);
}

TEST(exec_without_a_command_runs_the_images_in_its_env_dir_and_user)
{
	const char *layout;
	char *out;

	fresh();
	layout = import_config("cfg", "{\"Env\": [\"PATH=/bin\", \"GREETING=hello world\"], "
				      "\"Entrypoint\": " ENTRYPOINT ", \"Cmd\": [\"default\", \"args\"], "
				      "\"WorkingDir\": \"/srv/app\", \"User\": \"app\"}");
	/* the user by name: its uid and gid, the groups that list it, its home */
	ASSERT_EQ(run_sh(&out, "%s exec %s", bin, layout), 0);
	ASSERT_STR(out, "hello world /srv/app 1234:2345 2345 777 /home/app: default args\n");
	/* arguments replace Cmd and keep Entrypoint (podman run IMAGE CMD); --env still wins */
	ASSERT_EQ(run_sh(&out, "%s exec --env GREETING=hi %s -- one 'two three'", bin, layout), 0);
	ASSERT_STR(out, "hi /srv/app 1234:2345 2345 777 /home/app: one two three\n");
}

TEST(image_user_by_number_name_and_group)
{
	char *out;

	fresh();
	/* a uid in /etc/passwd takes its gid; one that is not gets 0 */
	ASSERT_EQ(run_sh(&out, "%s exec %s", bin, import_config("u1", "{\"Entrypoint\": " ENTRYPOINT ", \"User\": \"1234\"}")), 0);
	ASSERT_CONTAINS(out, " 1234:2345 2345 777 /home/app:\n");
	ASSERT_EQ(run_sh(&out, "%s exec %s", bin, import_config("u2", "{\"Entrypoint\": " ENTRYPOINT ", \"User\": \"4321\"}")), 0);
	ASSERT_CONTAINS(out, " 4321:0 0 /root:\n");
	/* a group given: that group only */
	ASSERT_EQ(run_sh(&out, "%s exec %s", bin, import_config("u3", "{\"Entrypoint\": " ENTRYPOINT ", \"User\": \"app:extra\"}")), 0);
	ASSERT_CONTAINS(out, " 1234:777 777 /home/app:\n");
	ASSERT_EQ(run_sh(&out, "%s exec %s", bin, import_config("u4", "{\"Entrypoint\": " ENTRYPOINT ", \"User\": \"0:42\"}")), 0);
	ASSERT_CONTAINS(out, " 0:42 42 /root:\n");
	/* a name the tree does not have: the command does not run (as root or otherwise) */
	ASSERT_EQ(run_sh(&out, "%s exec %s", bin, import_config("u5", "{\"Entrypoint\": " ENTRYPOINT ", \"User\": \"nobody\"}")), 125);
	ASSERT_CONTAINS(out, "no user 'nobody'");
	ASSERT_EQ(run_sh(&out, "%s exec %s", bin, import_config("u6", "{\"Entrypoint\": " ENTRYPOINT ", \"User\": \"app:nogroup\"}")), 125);
	ASSERT_CONTAINS(out, "no group 'nogroup'");
}

TEST(image_config_rootasm_cannot_take_is_refused_before_any_layer)
{
	char *out;

	fresh();
	mkimage("badu", "--config '{\"User\": \"../../x\"}' l1.tar:gzip");
	ASSERT_EQ(import("badu", "st", NULL, &out), 2);
	ASSERT_CONTAINS(out, "config.User");
	ASSERT_EQ(run_sh(&out, "test -z \"$(ls -A %s/st/layers/sha256 2>/dev/null)\"", fix), 0);
	mkimage("badc", "--config '{\"Cmd\": \"/bin/sh -c x\"}' l1.tar:gzip");
	ASSERT_EQ(import("badc", "st", NULL, &out), 2);
	ASSERT_CONTAINS(out, "config.Cmd is not an array");
	/* no command anywhere: exec says so */
	mkimage("nocmd", "--config '{}' l1.tar:gzip");
	ASSERT_EQ(import("nocmd", "st", NULL, &out), 0);
	ASSERT_EQ(run_sh(&out, "%s exec %s", bin, first_line(out)), 125);
	ASSERT_CONTAINS(out, "no command");
}

/*
 * A bundle B for the imported image: crun's default spec, @cmd, and before
 * its mounts (the runtime spec's order: rootasm takes only those before the
 * first it leaves to the runtime) a bind volume and a tmpfs.
 */
static void mkbundle(const char *layout, bool readonly, const char *extra_py, const char *cmd)
{
	sh("cd %s && rm -rf B up vol && mkdir -p B up vol && echo volume-data > vol/v && cd B && crun spec && "
	   "python3 - <<'EOF'\n"
	   "import json\n"
	   "c = json.load(open('config.json'))\n"
	   "c['process']['terminal'] = False\n"
	   "c['process']['args'] = ['/bin/sh', '-c', \"\"\"%s\"\"\"]\n"
	   "c['root'] = {'path': 'rootfs', 'readonly': %s}\n"
	   "c['mounts'][0:0] = [{'destination': '/vol', 'type': 'bind', 'source': '%s/vol', 'options': ['rbind', 'ro', 'nosuid']},\n"
	   "                    {'destination': '/scratch', 'type': 'tmpfs', 'source': 'tmpfs', 'options': ['nosuid', 'nodev', 'size=16m']}]\n"
	   "c['annotations'] = {'org.rootasm.layout': '%s'}\n"
	   "%s\n"
	   "json.dump(c, open('config.json', 'w'), indent=1)\n"
	   "EOF\ncp config.json ../config.orig", fix, cmd, readonly ? "True" : "False", fix, layout, extra_py ? extra_py : "");
}

static const char *import_small(void)
{
	static char layout[4096];
	char *out;

	if (import("img:v1", "st", NULL, &out) != 0)
		FAILF("import: %s", out);
	snprintf(layout, sizeof(layout), "%s", first_line(out));
	return layout;
}

TEST(bundle_crun_runs_an_imported_image)
{
	char *out;

	fresh();
	crun_env();
	mkbundle(import_small(), false, NULL, "cat /etc/a /vol/v; echo written > /w; cat /proc/self/mountinfo");
	ASSERT_EQ(run_sh(&out, "%s bundle prepare --upper %s/up --json %s/B", bin, fix, fix), 0);
	ASSERT_CONTAINS(out, "\"rootasm_mounts\":[\"/vol\",\"/scratch\"]");
	ASSERT_CONTAINS(out, "\"runtime_mounts\":[\"/proc\",\"/dev\",\"/dev/pts\",\"/dev/shm\",\"/dev/mqueue\",\"/sys\",\"/sys/fs/cgroup\"]");
	/* the tree is attached at root.path (overlay + its volumes), config.json lost what rootasm made */
	ASSERT_EQ(count_mounts_under(P("B/rootfs")), 3);
	ASSERT_EQ(run_sh(&out, "python3 -c \"import json; c=json.load(open('%s/B/config.json')); "
		      "print([m['destination'] for m in c['mounts']], c['annotations'])\"", fix), 0);
	ASSERT_CONTAINS(out, "['/proc', '/dev', '/dev/pts', '/dev/shm', '/dev/mqueue', '/sys', '/sys/fs/cgroup']");
	ASSERT_CONTAINS(out, "'org.rootasm.prepared'");
	ASSERT_EQ(run_sh(&out, "crun --cgroup-manager=disabled run -b %s/B oci-test-1", fix), 0);
	ASSERT_CONTAINS(out, "two\nvolume-data\n");
	/* crun's mounts landed on top of rootasm's: the volume is there once, as rootasm made it */
	ASSERT_CONTAINS(out, " /vol ro,nosuid");
	ASSERT_CONTAINS(out, " /proc ");
	ASSERT_STR(slurp(P("up/upper/w")), "written\n");
	ASSERT_EQ(run_sh(&out, "%s bundle cleanup %s/B", bin, fix), 0);
	ASSERT_CONTAINS(out, "detached");
	ASSERT_EQ(count_mounts_under(P("B/rootfs")), 0);
	ASSERT_EQ(run_sh(&out, "cmp %s/B/config.json %s/config.orig && test ! -e %s/B/.rootasm", fix, fix, fix), 0);
}

TEST(bundle_uid_mappings_make_idmapped_layers)
{
	struct stat st;
	char *out;

	fresh();
	crun_env();
	mkbundle(import_small(), false,
		 "c['linux']['namespaces'].append({'type': 'user'})\n"
		 "c['linux']['uidMappings'] = [{'containerID': 0, 'hostID': 100000, 'size': 65536}]\n"
		 "c['linux']['gidMappings'] = [{'containerID': 0, 'hostID': 200000, 'size': 65536}]\n"
		 "c['mounts'] = [m for m in c['mounts'] if not m['destination'].startswith('/sys')]\n",
		 "id -u; stat -c %u:%g /etc/owned; echo hi > /etc/w && echo wrote");
	ASSERT_EQ(run_sh(&out, "%s bundle prepare --upper %s/up %s/B", bin, fix, fix), 0);
	/* on the host the layers show the mapped ids; the runtime keeps the tmpfs mounts */
	ASSERT_EQ(stat(P("B/rootfs/etc/owned"), &st), 0);
	ASSERT_EQ(st.st_uid, 101000);
	ASSERT_EQ(st.st_gid, 201001);
	ASSERT_EQ(run_sh(&out, "python3 -c \"import json; print(json.load(open('%s/B/.rootasm/layout.json'))['layers'][0]['idmap'])\"", fix), 0);
	ASSERT_CONTAINS(out, "'uids': ['0:100000:65536'], 'gids': ['0:200000:65536']");
	ASSERT_EQ(run_sh(&out, "crun --cgroup-manager=disabled run -b %s/B oci-test-2", fix), 0);
	ASSERT_CONTAINS(out, "0\n1000:1001\nwrote\n");
	ASSERT_EQ(stat(P("up/upper/etc/w"), &st), 0);
	ASSERT_EQ(st.st_uid, 100000);
	ASSERT_EQ(run_sh(&out, "%s bundle cleanup %s/B", bin, fix), 0);
	ASSERT_EQ(count_mounts_under(P("B/rootfs")), 0);
}

TEST(bundle_readonly_root_is_the_runtimes_to_make)
{
	char *out;

	fresh();
	crun_env();
	mkbundle(import_small(), true, NULL, "cat /etc/a; echo x > /etc/a || echo refused");
	ASSERT_EQ(run_sh(&out, "%s bundle prepare %s/B", bin, fix), 0);
	/* root.readonly stays in config.json: crun remounts the root read-only */
	ASSERT_EQ(run_sh(&out, "grep -c '\"readonly\": true' %s/B/config.json", fix), 0);
	ASSERT_EQ(run_sh(&out, "crun --cgroup-manager=disabled run -b %s/B oci-test-3", fix), 0);
	ASSERT_CONTAINS(out, "two\n");
	ASSERT_CONTAINS(out, "refused");
	ASSERT_EQ(run_sh(&out, "%s bundle cleanup %s/B", bin, fix), 0);
}

TEST(bundle_prepare_twice_is_refused)
{
	char *out;

	fresh();
	mkbundle(import_small(), false, NULL, "true");
	ASSERT_EQ(run_sh(&out, "%s bundle prepare %s/B", bin, fix), 0);
	ASSERT_EQ(run_sh(&out, "%s bundle prepare %s/B", bin, fix), 2);
	ASSERT_CONTAINS(out, "already prepared");
	ASSERT_EQ(count_mounts_under(P("B/rootfs")), 3);
	ASSERT_EQ(run_sh(&out, "%s bundle cleanup %s/B", bin, fix), 0);
	ASSERT_EQ(run_sh(&out, "%s bundle cleanup %s/B", bin, fix), 2);
	ASSERT_CONTAINS(out, "not prepared by rootasm");
}

/*
 * A bundle's layout is read by the library's one reader of layout files, as
 * `rootasm check` reads one: /proc/kmsg is a "regular file" whose read blocks
 * (and takes messages off the kernel log); a FIFO is refused before it is
 * opened for reading. Neither leaves anything behind.
 */
TEST(bundle_layout_on_procfs_or_a_fifo_is_refused_without_reading_it)
{
	char *out;

	fresh();
	mkbundle("/proc/kmsg", false, NULL, "true");
	ASSERT_EQ(run_sh(&out, "timeout 5 %s bundle prepare %s/B", bin, fix), 2);
	ASSERT_CONTAINS(out, "open layout /proc/kmsg: is a file of procfs, a pseudo filesystem");
	ASSERT_EQ(run_sh(&out, "timeout 5 %s bundle prepare --layout /proc/kmsg %s/B", bin, fix), 2);
	ASSERT_CONTAINS(out, "open layout /proc/kmsg: is a file of procfs, a pseudo filesystem");
	sh("mkfifo %s/B/fifo.yaml", fix);
	ASSERT_EQ(run_sh(&out, "timeout 5 %s bundle prepare --layout fifo.yaml %s/B", bin, fix), 2);
	ASSERT_CONTAINS(out, "fifo.yaml: is a FIFO");
	ASSERT_EQ(count_mounts_under(P("B/rootfs")), 0);
	ASSERT_EQ(run_sh(&out, "test ! -e %s/B/.rootasm && cmp %s/B/config.json %s/config.orig", fix, fix, fix), 0);
}

TEST(bundle_prepare_killed_before_the_new_config_is_cleaned_up)
{
	char *out;

	fresh();
	mkbundle(import_small(), false, NULL, "true");
	ASSERT_EQ(run_sh(&out, "%s bundle prepare %s/B", bin, fix), 0);
	/* as if prepare died after the attach, before config.json was replaced */
	sh("cp %s/B/.rootasm/config.json %s/B/config.json", fix, fix);
	ASSERT_EQ(run_sh(&out, "%s bundle prepare %s/B", bin, fix), 2);
	ASSERT_CONTAINS(out, "did not finish");
	ASSERT_EQ(run_sh(&out, "%s bundle cleanup %s/B", bin, fix), 0);
	ASSERT_CONTAINS(out, "detached");
	ASSERT_EQ(count_mounts_under(P("B/rootfs")), 0);
	ASSERT_EQ(run_sh(&out, "cmp %s/B/config.json %s/config.orig && test ! -e %s/B/.rootasm", fix, fix, fix), 0);
}

TEST(bundle_cleanup_leaves_a_foreign_mount_alone)
{
	char *out;

	fresh();
	mkbundle(import_small(), false, NULL, "true");
	ASSERT_EQ(run_sh(&out, "%s bundle prepare %s/B", bin, fix), 0);
	/* someone replaced the tree: cleanup must not take theirs down */
	ASSERT_EQ(umount2(P("B/rootfs"), MNT_DETACH), 0);
	ASSERT_EQ(mount("none", P("B/rootfs"), "tmpfs", 0, NULL), 0);
	ASSERT_EQ(run_sh(&out, "%s bundle cleanup %s/B", bin, fix), 0);
	ASSERT_CONTAINS(out, "left alone");
	ASSERT_EQ(count_mounts_under(P("B/rootfs")), 1);
	ASSERT_EQ(run_sh(&out, "cmp %s/B/config.json %s/config.orig", fix, fix), 0);
}

TEST(bundle_mounts_rootasm_cannot_make_stay_with_the_runtime)
{
	char *out;

	fresh();
	/* after the bind and tmpfs volumes: one with an option rootasm has no word for, a bind, crun's list, one more */
	mkbundle(import_small(), false,
		 "c['mounts'].insert(2, {'destination': '/odd', 'type': 'tmpfs', 'source': 'tmpfs', 'options': ['uid=5']})\n"
		 "c['mounts'].insert(3, {'destination': '/later', 'type': 'bind', 'source': '/etc', 'options': ['rbind']})\n"
		 "c['mounts'].append({'destination': '/dev/shm/sub', 'type': 'bind', 'source': '/etc', 'options': ['rbind']})\n",
		 "true");
	ASSERT_EQ(run_sh(&out, "%s bundle prepare --json %s/B", bin, fix), 0);
	/*
	 * The runtime spec makes them in their listed order: rootasm takes those
	 * before the first it leaves (/odd), and leaves that one and every one
	 * after it, a bind it could make (/later) too
	 */
	ASSERT_CONTAINS(out, "\"rootasm_mounts\":[\"/vol\",\"/scratch\"]");
	ASSERT_CONTAINS(out, "\"runtime_mounts\":[\"/odd\",\"/later\",\"/proc\",");
	ASSERT_CONTAINS(out, "\"/dev/shm/sub\"]");
	ASSERT_EQ(run_sh(&out, "%s bundle cleanup %s/B", bin, fix), 0);
}

/* A user's bundle is that user's principal's: no more than the user could do itself (rootasm.h, "principals"). */
/*
 * A user's bundle is that user's directory: from a user and mount namespace
 * of its own, made before prepare attached the tree (there B/rootfs is no
 * mount point), the user renames B/rootfs, and the tree moves with it in
 * ours. cleanup finds it by its mount id and detaches it (it dropped the
 * record and left the tree mounted at B/kept, never to be freed).
 */
TEST(bundle_cleanup_finds_a_tree_its_owner_moved)
{
	char *out;

	fresh();
	sh("chmod 0755 %s", fix);
	mkbundle(import_small(), false, "", "true");
	sh("chown -R 1771:1771 %s/B", fix);
	sh("setpriv --reuid=1771 --regid=1771 --clear-groups unshare -Urm --propagation private sh -c "
	   "'while [ ! -e %s/go ]; do sleep 0.02; done; mv %s/B/rootfs %s/B/kept 2>%s/B/mv.err; touch %s/B/moved' >/dev/null 2>&1 &",
	   fix, fix, fix, fix, fix);
	ASSERT_EQ(run_sh(&out, "%s bundle prepare %s/B", bin, fix), 0);
	ASSERT_TRUE(count_mounts_under(P("B/rootfs")) > 0);
	sh("touch %s/go", fix);
	for (int i = 0; i < 500 && access(P("B/moved"), F_OK) < 0; i++)
		usleep(10000);
	ASSERT_EQ(access(P("B/moved"), F_OK), 0);
	ASSERT_STR(slurp(P("B/mv.err")), "");
	ASSERT_TRUE(count_mounts_under(P("B/kept")) > 0);
	ASSERT_EQ(run_sh(&out, "%s bundle cleanup %s/B", bin, fix), 0);
	ASSERT_EQ(count_mounts_under(P("B")), 0);
}

TEST(bundle_owned_by_a_user_gets_what_the_user_may_have)
{
	char *out, *mi, *line;

	fresh();
	sh("chmod 0755 %s && mkdir -p %s/rootdir && echo root > %s/rootdir/f", fix, fix, fix);
	mkbundle(import_small(), false,
		 "c['mounts'].insert(2, {'destination': '/rootrw', 'type': 'bind', 'source': '" "' + __import__('os').path.abspath('../rootdir') + '" "', 'options': ['rbind', 'rw']})\n",
		 "true");
	sh("chown -R 1771:1771 %s/B", fix);
	/* a host upper directory is an administrator's: copies-up there are made with root's rights */
	ASSERT_EQ(run_sh(&out, "%s bundle prepare --upper %s/up %s/B", bin, fix, fix), 1);
	ASSERT_CONTAINS(out, "an upper directory on the host is for administrators");
	ASSERT_EQ(count_mounts_under(P("B/rootfs")), 0);
	ASSERT_EQ(run_sh(&out, "%s bundle prepare %s/B", bin, fix), 0);
	/* root's directory, asked for rw: read-only, as uid 1771 could not write it; every mount nosuid,nodev */
	mi = slurp("/proc/self/mountinfo");
	line = strstr(mi, P("B/rootfs/rootrw"));
	ASSERT_TRUE(line != NULL);
	*strchrnul(line, '\n') = '\0';
	ASSERT_CONTAINS(line, " ro,");
	mi = slurp("/proc/self/mountinfo");
	for (line = strstr(mi, P("B/rootfs")); line; line = strstr(line + 1, P("B/rootfs"))) {
		char *end = strchrnul(line, '\n'), c = *end;

		*end = '\0';
		ASSERT_CONTAINS(line, "nosuid");
		ASSERT_CONTAINS(line, "nodev");
		*end = c;
	}
	ASSERT_EQ(access(P("B/rootfs/rootrw/new"), F_OK) < 0, 1);
	ASSERT_TRUE(open(P("B/rootfs/rootrw/new"), O_CREAT | O_WRONLY | O_CLOEXEC, 0644) < 0 && errno == EROFS);
	ASSERT_EQ(run_sh(&out, "%s bundle cleanup %s/B", bin, fix), 0);
	ASSERT_EQ(count_mounts_under(P("B/rootfs")), 0);
}

/* A YAML layout, as `rootasm check` takes it, is a bundle's layout too; its errors are check's. */
TEST(bundle_takes_a_yaml_layout_with_checks_errors)
{
	char *out, *chk;

	fresh();
	sh("python3 -c \"import json, sys, yaml; l = json.load(open('%s')); l['mounts'] = [{'tmpfs': '/yt'}]; "
	   "open('%s/l.yaml', 'w').write('# a comment: YAML, not JSON\\n' + yaml.safe_dump(l, default_flow_style=False))\"",
	   import_small(), fix);
	mkbundle(P("l.yaml"), false, NULL, "true");
	ASSERT_EQ(run_sh(&out, "%s bundle prepare %s/B", bin, fix), 0);
	ASSERT_TRUE(count_mounts_under(P("B/rootfs")) >= 2);	/* the tree and its /yt tmpfs */
	ASSERT_EQ(run_sh(&out, "findmnt -n -o FSTYPE %s/B/rootfs/yt", fix), 0);
	ASSERT_STR(out, "tmpfs\n");
	ASSERT_EQ(run_sh(&out, "%s bundle cleanup %s/B", bin, fix), 0);
	ASSERT_EQ(count_mounts_under(P("B/rootfs")), 0);
	/* a mistake in it: the file, line and column check gives */
	sh("printf 'version: 1\\nlayers:\\n  - image: x.sqfs\\n    bogus: 1\\n' >%s/bad.yaml", fix);
	mkbundle(P("bad.yaml"), false, NULL, "true");
	ASSERT_EQ(run_sh(&out, "%s bundle prepare %s/B", bin, fix), 2);
	ASSERT_EQ(run_sh(&chk, "%s check --offline %s/bad.yaml", bin, fix), 2);
	ASSERT_CONTAINS(out, "bad.yaml:4:");
	ASSERT_CONTAINS(chk, "bad.yaml:4:");
	ASSERT_CONTAINS(out, "bogus");
	ASSERT_EQ(count_mounts_under(P("B/rootfs")), 0);
}

/* A user's bundle's layout annotation is read with the user's rights; its config.json stays the user's. */
TEST(bundle_layout_annotation_is_read_with_the_owners_rights)
{
	char *out;
	struct stat st;

	fresh();
	sh("chmod 0755 %s && mkdir -p %s/rootonly && cp %s %s/rootonly/l.json && chmod 0700 %s/rootonly", fix, fix,
	   import_small(), fix, fix);
	/* root's 0600 file: an error (as `rootasm check` gives it: a usage error), and not one word of it */
	mkbundle("/etc/shadow", false, NULL, "true");
	sh("chown -R 1771:1771 %s/B", fix);
	ASSERT_EQ(run_sh(&out, "%s bundle prepare %s/B", bin, fix), 2);
	ASSERT_CONTAINS(out, "Permission denied");
	ASSERT_TRUE(strstr(out, "near") == NULL && strstr(out, "'root") == NULL && strstr(out, "root:") == NULL);
	ASSERT_EQ(count_mounts_under(P("B/rootfs")), 0);
	/* a valid layout in a directory only root may read: not the user's to use */
	mkbundle(P("rootonly/l.json"), false, NULL, "true");
	sh("chown -R 1771:1771 %s/B", fix);
	ASSERT_EQ(run_sh(&out, "%s bundle prepare %s/B", bin, fix), 2);
	ASSERT_CONTAINS(out, "Permission denied");
	ASSERT_EQ(count_mounts_under(P("B/rootfs")), 0);
	/* one it may read: prepared; after prepare and after cleanup config.json is still uid 1771's */
	mkbundle(import_small(), false, NULL, "true");
	sh("chown -R 1771:1771 %s/B", fix);
	ASSERT_EQ(run_sh(&out, "%s bundle prepare %s/B", bin, fix), 0);
	ASSERT_EQ(stat(P("B/config.json"), &st), 0);
	ASSERT_EQ(st.st_uid, 1771);
	ASSERT_EQ(st.st_gid, 1771);
	ASSERT_EQ(run_sh(&out, "%s bundle cleanup %s/B", bin, fix), 0);
	ASSERT_EQ(stat(P("B/config.json"), &st), 0);
	ASSERT_EQ(st.st_uid, 1771);
	ASSERT_EQ(st.st_gid, 1771);
	ASSERT_EQ(run_sh(NULL, "cmp %s/B/config.json %s/config.orig", fix, fix), 0);
	/* root may name a layout of its own with --layout: the caller's word, read with the caller's rights */
	ASSERT_EQ(run_sh(&out, "%s bundle prepare --layout %s/rootonly/l.json %s/B", bin, fix, fix), 0);
	ASSERT_EQ(run_sh(&out, "%s bundle cleanup %s/B", bin, fix), 0);
}

/* root's sticky bundle directory with a user's config.json: that user asked, that user gets */
TEST(bundle_config_written_by_a_user_in_roots_directory_is_that_users)
{
	char *out;

	fresh();
	sh("chmod 0755 %s && mkdir -p %s/secret && echo root > %s/secret/f && chmod 0700 %s/secret", fix, fix, fix, fix);
	mkbundle(import_small(), false,
		 "c['mounts'].insert(2, {'destination': '/secret', 'type': 'bind', 'source': '" "' + __import__('os').path.abspath('../secret') + '" "', 'options': ['rbind', 'ro']})\n",
		 "true");
	/* the directory stays root's, sticky and world-writable (as /tmp); config.json is uid 1771's */
	sh("chmod 1777 %s/B && chown 1771:1771 %s/B/config.json", fix, fix);
	ASSERT_EQ(run_sh(&out, "%s bundle prepare %s/B", bin, fix), 1);
	ASSERT_CONTAINS(out, "uid 1771");
	ASSERT_CONTAINS(out, "cannot read it");
	ASSERT_EQ(count_mounts_under(P("B/rootfs")), 0);
	/* without the sticky bit anyone could have written config.json: refused */
	sh("chmod 0777 %s/B && chown 0:0 %s/B/config.json", fix, fix);
	ASSERT_EQ(run_sh(&out, "%s bundle prepare %s/B", bin, fix), 2);
	ASSERT_CONTAINS(out, "writable by others");
	ASSERT_EQ(count_mounts_under(P("B/rootfs")), 0);
}

/* Bundles belong to their users; rootasm runs as root. What a bundle's owner controls must not reach further. */

TEST(bundle_create_from_an_image_runs_its_command_with_crun)
{
	const char *layout;
	char *out;

	fresh();
	crun_env();
	layout = import_config("cfg", "{\"Env\": [\"PATH=/bin\", \"GREETING=hello world\"], "
				      "\"Entrypoint\": " ENTRYPOINT ", \"Cmd\": [\"default\", \"args\"], "
				      "\"WorkingDir\": \"/srv/app\", \"User\": \"app\"}");
	ASSERT_EQ(run_sh(&out, "%s bundle create --json %s %s/B", bin, layout, fix), 0);
	ASSERT_CONTAINS(out, "\"root\":\"");
	/* config.json: crun spec's, with the image's process (the user resolved in the tree) */
	ASSERT_EQ(run_sh(&out, "python3 -c \"import json; c=json.load(open('%s/B/config.json')); p=c['process']; "
		      "print(p['args'][3:], p['cwd'], p['user'], [e for e in p['env'] if e.startswith(('GREETING', 'HOME', 'PATH'))], "
		      "c['root'], c['annotations']['org.rootasm.layout'] == '%s', [m['destination'] for m in c['mounts']][:3])\"",
		      fix, layout), 0);
	ASSERT_STR(out, "['ep', 'default', 'args'] /srv/app {'uid': 1234, 'gid': 2345, 'additionalGids': [777]} "
			"['PATH=/bin', 'GREETING=hello world', 'HOME=/home/app'] {'path': 'rootfs', 'readonly': False} True "
			"['/proc', '/dev', '/dev/pts']\n");
	/* a second create into it is refused: config.json is there */
	ASSERT_EQ(run_sh(&out, "%s bundle create %s %s/B", bin, layout, fix), 2);
	ASSERT_CONTAINS(out, "is there already");
	/* prepare + crun run: the image's command, in its directory, as its user */
	ASSERT_EQ(run_sh(&out, "%s bundle prepare --quiet %s/B", bin, fix), 0);
	ASSERT_EQ(run_sh(&out, "crun --cgroup-manager=disabled run -b %s/B oci-test-create", fix), 0);
	ASSERT_STR(out, "hello world /srv/app 1234:2345 2345 777 /home/app: default args\n");
	ASSERT_EQ(run_sh(&out, "%s bundle cleanup --quiet %s/B", bin, fix), 0);
	ASSERT_EQ(count_mounts_under(P("B/rootfs")), 0);
}

TEST(bundle_create_takes_an_image_by_name_and_refuses_what_has_no_command)
{
	char *out;

	fresh();
	mkimage("nocmd", "--config '{}' l1.tar:gzip");
	ASSERT_EQ(import("nocmd", "st", "--tag local/nocmd:1", &out), 0);
	ASSERT_EQ(run_sh(&out, "%s bundle create --store %s/st local/nocmd:1 %s/B", bin, fix, fix), 2);
	ASSERT_CONTAINS(out, "no entrypoint or cmd");
	ASSERT_EQ(run_sh(&out, "test ! -e %s/B", fix), 0);
	ASSERT_EQ(run_sh(&out, "%s bundle create --store %s/st local/nope %s/B", bin, fix, fix), 2);
	ASSERT_CONTAINS(out, "no image of that name or digest");
	ASSERT_EQ(import("img:v1", "st", "--tag img", &out), 0);
	ASSERT_EQ(run_sh(&out, "%s bundle create --store %s/st img %s/B", bin, fix, fix), 0);
	ASSERT_EQ(run_sh(&out, "python3 -c \"import json; c=json.load(open('%s/B/config.json')); "
		      "print(c['process']['args'], c['process']['user'], c['annotations']['org.rootasm.layout'])\"", fix), 0);
	ASSERT_CONTAINS(out, "['/bin/sh'] {'uid': 0, 'gid': 0} ");
	ASSERT_CONTAINS(out, "/st/images/sha256/");
}

/* ------------------------------------------------------- docker-archive */

TEST(docker_archive_is_imported_as_its_oci_image_and_named_by_its_repotag)
{
	char *out, layout[4096], *before;

	fresh();
	sh("cd %s && rm -f da.tar && %s docker-archive da.tar --image docker.io/library/da:1 "
	   "'{\"Env\": [\"GREETING=from the archive\"], \"Cmd\": [\"/bin/sh\", \"-c\", \"echo $GREETING\"]}' "
	   "l1.tar,l2.tar", fix, mkoci);
	ASSERT_EQ(run_sh(&out, "cd %s && %s import --quiet --store st docker-archive:da.tar", fix, bin), 0);
	snprintf(layout, sizeof(layout), "%s", first_line(out));
	/* the tree is the image's (layer 2 replaced /etc/a), its config used */
	ASSERT_EQ(run_sh(&out, "%s exec %s", bin, layout), 0);
	ASSERT_STR(out, "from the archive\n");
	ASSERT_EQ(run_sh(&out, "%s exec %s -- /bin/busybox cat /etc/a", bin, layout), 0);
	ASSERT_CONTAINS(out, "two");
	/* named as the archive names it; found by that name and by docker's short one */
	ASSERT_EQ(run_sh(&out, "%s images --store %s/st", bin, fix), 0);
	ASSERT_CONTAINS(out, "docker.io/library/da:1");
	/*
	 * nothing of the archive's unpacking stays; a second import writes
	 * nothing but that (the store directory's times tell of it)
	 */
	ASSERT_EQ(run_sh(&out, "ls -A %s/st | grep -c archive", fix), 1);
	before = store_state(P("st"));
	*strchr(before, '\n') = '\0';
	ASSERT_EQ(run_sh(&out, "cd %s && %s import --quiet --store st docker-archive:da.tar", fix, bin), 0);
	ASSERT_STR(first_line(out), layout);
	ASSERT_STR(strchr(store_state(P("st")), '\n') + 1, before + strlen(before) + 1);
	free(before);
}

TEST(docker_archive_with_several_images_shared_layers_and_gzip)
{
	char *out;

	fresh();
	/* two images sharing layer 1 (a symlink to its first copy, as Docker before 25), gzip'd */
	sh("cd %s && rm -f da2.tar && %s docker-archive da2.tar --image one:a,one:b '{\"Cmd\": [\"/bin/sh\"]}' l1.tar "
	   "--image two:latest '{\"Cmd\": [\"/bin/sh\"]}' l1.tar,l2.tar --gzip", fix, mkoci);
	ASSERT_EQ(run_sh(&out, "cd %s && %s import --quiet --store st docker-archive:da2.tar", fix, bin), 2);
	ASSERT_CONTAINS(out, "holds 2 images: name one");
	ASSERT_EQ(run_sh(&out, "cd %s && %s import --quiet --store st docker-archive:da2.tar:three", fix, bin), 2);
	ASSERT_CONTAINS(out, "no image tagged 'three'");
	ASSERT_EQ(run_sh(&out, "cd %s && %s import --quiet --store st docker-archive:da2.tar:docker.io/library/two", fix, bin), 0);
	ASSERT_EQ(run_sh(&out, "%s exec %s -- /bin/busybox cat /etc/a", bin, first_line(out)), 0);
	ASSERT_CONTAINS(out, "two");
	ASSERT_EQ(run_sh(&out, "cd %s && %s import --quiet --store st --tag mine docker-archive:da2.tar:one:b", fix, bin), 0);
	ASSERT_EQ(run_sh(&out, "%s exec %s -- /bin/busybox cat /etc/a", bin, first_line(out)), 0);
	ASSERT_CONTAINS(out, "one");
	ASSERT_EQ(run_sh(&out, "%s images --store %s/st --json | python3 -c \"import json, sys; "
		      "print(sorted(n for i in json.load(sys.stdin) for n in i['names']))\"", bin, fix), 0);
	ASSERT_STR(out, "['docker.io/library/two:latest', 'mine:latest']\n");
	/* named as podman load names it, however the image was picked: one:a is docker.io/library/one:a */
	ASSERT_EQ(run_sh(&out, "cd %s && %s import --quiet --store st docker-archive:da2.tar:one:a", fix, bin), 0);
	ASSERT_EQ(run_sh(&out, "%s images --store %s/st --json | python3 -c \"import json, sys; "
		      "print(sorted(n for i in json.load(sys.stdin) for n in i['names']))\"", bin, fix), 0);
	ASSERT_STR(out, "['docker.io/library/one:a', 'docker.io/library/two:latest', 'mine:latest']\n");
	ASSERT_EQ(run_sh(&out, "ROOTASM_STORE=%s/st %s exec one:a -- /bin/busybox cat /etc/a", fix, bin), 0);
	ASSERT_CONTAINS(out, "one");
	/*
	 * localhost's image is not docker.io's (a short name picks it, as podman
	 * finds one); docker.io/x is docker.io/library/x
	 */
	sh("cd %s && rm -f da3.tar && %s docker-archive da3.tar --image localhost/lx:1,docker.io/dx:1 '{\"Cmd\": [\"/bin/sh\"]}' "
	   "l1.tar", fix, mkoci);
	ASSERT_EQ(run_sh(&out, "cd %s && %s import --quiet --store st3 docker-archive:da3.tar:docker.io/library/lx:1 2>&1",
		      fix, bin), 2);
	ASSERT_CONTAINS(out, "no image tagged 'docker.io/library/lx:1'");
	ASSERT_EQ(run_sh(&out, "cd %s && %s import --quiet --store st3 docker-archive:da3.tar:lx:1 && %s import --quiet "
		      "--store st3 docker-archive:da3.tar:dx:1 && %s images --store st3 --json | python3 -c \"import json, "
		      "sys; print(sorted(n for i in json.load(sys.stdin) for n in i['names']))\"", fix, bin, bin, bin), 0);
	ASSERT_CONTAINS(out, "['docker.io/library/dx:1', 'localhost/lx:1']\n");
}

TEST(docker_archive_that_lies_is_refused_and_leaves_nothing)
{
	char *out;

	fresh();
	sh("cd %s && rm -f bad.tar && %s docker-archive bad.tar --image bad:1 '{}' l1.tar --bad-diffid", fix, mkoci);
	ASSERT_EQ(run_sh(&out, "cd %s && %s import --quiet --store st docker-archive:bad.tar", fix, bin), 2);
	ASSERT_CONTAINS(out, "diff_id");
	ASSERT_EQ(run_sh(&out, "find %s/st -mindepth 1 ! -name lock ! -type d | wc -l; ls -A %s/st | grep -c archive", fix, fix), 1);
	ASSERT_STR(out, "0\n0\n");
	/* not a docker archive: a plain layer tar, a missing file */
	ASSERT_EQ(run_sh(&out, "cd %s && %s import --quiet --store st docker-archive:l1.tar", fix, bin), 2);
	ASSERT_CONTAINS(out, "no manifest.json");
	ASSERT_EQ(run_sh(&out, "cd %s && %s import --quiet --store st docker-archive:nope.tar", fix, bin), 2);
	ASSERT_EQ(run_sh(&out, "ls -A %s/st | grep -c archive", fix), 1);
	/* manifest.json again and again (each kept in memory once read): refused at the second */
	sh("cd %s && python3 -c \"import tarfile, io\n"
	   "t = tarfile.open('twice.tar', 'w')\n"
	   "for i in range(3):\n"
	   "    ti = tarfile.TarInfo('manifest.json'); ti.size = 2; t.addfile(ti, io.BytesIO(b'[]'))\n"
	   "t.close()\"", fix);
	ASSERT_EQ(run_sh(&out, "cd %s && %s import --quiet --store st docker-archive:twice.tar", fix, bin), 2);
	ASSERT_CONTAINS(out, "manifest.json twice");
	ASSERT_EQ(run_sh(&out, "ls -A %s/st | grep -c archive", fix), 1);
	/* a gzip bomb: 512 MiB of zeros in a ~0.5 MiB archive; refused at 64 MiB, before the store's file system fills */
	sh("cd %s && python3 -c \"import tarfile, gzip\n"
	   "class Z:\n"
	   "    left = 1 << 29\n"
	   "    def read(self, n):\n"
	   "        n = min(n, self.left); self.left -= n; return bytes(n)\n"
	   "t = tarfile.open(fileobj=gzip.open('bomb.tar.gz', 'wb', 9), mode='w|')\n"
	   "ti = tarfile.TarInfo('zeros/layer.tar'); ti.size = 1 << 29; t.addfile(ti, Z())\n"
	   "t.close()\"", fix);
	ASSERT_EQ(run_sh(&out, "cd %s && %s import --quiet --store st docker-archive:bomb.tar.gz", fix, bin), 2);
	ASSERT_CONTAINS(out, "unpacks to more than 67108864 bytes (64 times its size, at least 64 MiB)");
	sh("rm -f %s/bomb.tar.gz", fix);
	ASSERT_EQ(run_sh(&out, "ls -A %s/st | grep -c archive", fix), 1);
}

TEST(docker_archive_skopeo_writes_is_imported)
{
	char *out;

	fresh();
	if (system("command -v skopeo >/dev/null") != 0)
		SKIP("skopeo is not installed");
	/* what podman save writes (the same library, containers/image) */
	/* (Docker's formats have no zstd layer) */
	mkimage("gzimg", "--tag v1 l1.tar:gzip l2.tar:gzip");
	ASSERT_EQ(run_sh(&out, "cd %s && rm -f sk.tar && skopeo copy --quiet oci:gzimg:v1 docker-archive:sk.tar:skopeo/img:v1",
		      fix), 0);
	ASSERT_EQ(run_sh(&out, "cd %s && %s import --quiet --store st docker-archive:sk.tar", fix, bin), 0);
	ASSERT_EQ(run_sh(&out, "%s exec %s -- /bin/busybox cat /etc/a /etc/keep", bin, first_line(out)), 0);
	ASSERT_STR(out, "two\nkeep\n");
	ASSERT_EQ(run_sh(&out, "%s images --store %s/st", bin, fix), 0);
	ASSERT_CONTAINS(out, "docker.io/skopeo/img:v1");
}

/* ------------------------------------------------------- the managed store */

TEST(store_names_images_and_lookup)
{
	char *out, layout[4096];

	fresh();
	ASSERT_EQ(import("img:v1", "st", "--tag example.com:5000/team/img:v1", &out), 0);
	snprintf(layout, sizeof(layout), "%s", first_line(out));
	/* a second name for the same image; a name without a tag is :latest */
	ASSERT_EQ(import("img:v1", "st", "--tag img", &out), 0);
	ASSERT_STR(first_line(out), layout);
	ASSERT_EQ(run_sh(&out, "%s images --store %s/st --json", bin, fix), 0);
	ASSERT_EQ(run_sh(&out, "%s images --store %s/st --json | python3 -c \"import json, sys; i=json.load(sys.stdin); "
		      "print(len(i), sorted(i[0]['names']), i[0]['layers'], i[0]['bytes'] > 0, i[0]['last_used'] > 0, "
		      "i[0]['layout'] == '%s')\"", bin, fix, layout), 0);
	ASSERT_STR(out, "1 ['example.com:5000/team/img:v1', 'img:latest'] 2 True True True\n");
	ASSERT_EQ(run_sh(&out, "%s images --store %s/st", bin, fix), 0);
	ASSERT_CONTAINS(out, "NAME");
	ASSERT_CONTAINS(out, "img:latest");
	/* the NAME column as wide as the longest name (one longer than 40 here), the size as podman prints it */
	ASSERT_EQ(import("img:v1", "st", "--tag some.registry.example:5000/a-team/a-rather-long-name:v1.2.3", &out), 0);
	ASSERT_EQ(run_sh(&out, "%s images --store %s/st | awk '{ print index($0, \"sha256:\") \" \" index($0, \"DIGEST\") }' "
		      "| tr ' ' '\\n' | grep -v '^0$' | sort -u | wc -l", bin, fix), 0);
	ASSERT_STR(out, "1\n");
	ASSERT_EQ(run_sh(&out, "%s rmi --store %s/st some.registry.example:5000/a-team/a-rather-long-name:v1.2.3", bin, fix),
		  0);
	ASSERT_EQ(run_sh(&out, "%s images --store %s/st | grep -cE ' [0-9.]{1,4} (B|kB|MB|GB) '", bin, fix), 0);
	ASSERT_STR(out, "2\n");
	/* ROOTASM_STORE as --store; exec takes the name */
	ASSERT_EQ(run_sh(&out, "ROOTASM_STORE=%s/st %s exec img:latest -- /bin/busybox cat /etc/a", fix, bin), 0);
	ASSERT_STR(out, "two\n");
	ASSERT_EQ(run_sh(&out, "ROOTASM_STORE=%s/st %s images -q", fix, bin), 0);
	ASSERT_CONTAINS(out, "sha256:");
	/*
	 * Short names as podman finds them in its storage: REGISTRY/NAME (a
	 * search registry's), localhost/NAME, docker.io/library/NAME; not a
	 * name that merely ends so (x/team/img), and two registries' the same
	 * short name is ambiguous.
	 */
	ASSERT_EQ(run_sh(&out, "%s inspect --store %s/st team/img:v1 >/dev/null", bin, fix), 0);
	ASSERT_EQ(import("img:v1", "st", "--tag localhost/app:2", &out), 0);
	ASSERT_EQ(import("img:v1", "st", "--tag docker.io/library/base:3", &out), 0);
	ASSERT_EQ(import("img:v1", "st", "--tag someone/deep/tool:4", &out), 0);
	ASSERT_EQ(run_sh(&out, "ROOTASM_STORE=%s/st %s exec app:2 -- /bin/busybox cat /etc/a && ROOTASM_STORE=%s/st %s exec "
		      "base:3 -- /bin/busybox cat /etc/a", fix, bin, fix, bin), 0);
	ASSERT_STR(out, "two\ntwo\n");
	ASSERT_TRUE(run_sh(&out, "ROOTASM_STORE=%s/st %s exec deep/tool:4 -- /bin/true 2>&1", fix, bin) != 0);
	ASSERT_CONTAINS(out, "no image of that name or digest");
	mkimage("img2", "--tag v1 l1.tar:gzip");
	ASSERT_EQ(import("img2:v1", "st", "--tag other.example/team/img:v1", &out), 0);
	ASSERT_TRUE(run_sh(&out, "ROOTASM_STORE=%s/st %s exec team/img:v1 -- /bin/true 2>&1", fix, bin) != 0);
	ASSERT_CONTAINS(out, "a short name of more than one image");
	/* a digest's first hex digits before a short name: REGISTRY/HEX of one image does not hide the image HEX begins */
	ASSERT_EQ(run_sh(&out, "cd %s && H=$(%s images --store st --json | python3 -c \"import json, sys; print([i['manifest'] "
		      "for i in json.load(sys.stdin) if 'other.example/team/img:v1' in i['names']][0][7:19])\") && "
		      "%s import --quiet --store st --tag quay.io/$H oci:img:v1 >/dev/null && "
		      "%s inspect --store st $H | grep -c \"Digest.*sha256:$H\"", fix, bin, bin, bin), 0);
	ASSERT_STR(out, "1\n");
	/* rmi by a short name removes the name it stands for, not the image's others */
	ASSERT_EQ(run_sh(&out, "%s rmi --store %s/st app:2", bin, fix), 0);
	ASSERT_CONTAINS(out, "app:2: name removed (the image has other names)");
	ASSERT_EQ(run_sh(&out, "%s images --store %s/st | grep -c 'img:latest\\|base:3\\|app:2'", bin, fix), 0);
	ASSERT_STR(out, "2\n");
}

TEST(store_names_that_could_escape_are_refused)
{
	static const char *const bad[] = { "../x", "a/../b", "/abs", "a//b", "UPPER", "a:", "a:b:c",
					   "a/b/", "x\\ty", ".hidden", "a..b", "a:-tag" };
	char *out;

	fresh();
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ASSERT_EQ(run_sh(&out, "%s import --quiet --store %s/st --tag '%s' oci:img:v1", bin, fix, bad[i]), 2);
		ASSERT_CONTAINS(out, "--tag: expected NAME[:TAG]");
	}
	/* nothing was imported for any of them */
	ASSERT_EQ(run_sh(&out, "test ! -e %s/st/images/sha256 || test -z \"$(ls -A %s/st/images/sha256)\"", fix, fix), 0);
	ASSERT_EQ(run_sh(&out, "test ! -e %s/st/names.json", fix), 0);
}

TEST(rmi_removes_a_name_then_the_image_and_gc_its_layers)
{
	char *out, manifest[128];

	fresh();
	ASSERT_EQ(import("img:v1", "st", "--tag a --json", &out), 0);
	ASSERT_EQ(run_sh(&out, "python3 -c \"import json,sys; print(json.load(open('%s/st/names.json'))['names']['a:latest'])\"",
		      fix), 0);
	snprintf(manifest, sizeof(manifest), "%s", first_line(out));
	ASSERT_EQ(import("img:v1", "st", "--tag b", &out), 0);
	/* gc with both names: nothing to remove */
	ASSERT_EQ(run_sh(&out, "%s store gc --store %s/st", bin, fix), 0);
	ASSERT_CONTAINS(out, "removed 0 layer images");
	ASSERT_EQ(run_sh(&out, "%s rmi --store %s/st a", bin, fix), 0);
	ASSERT_CONTAINS(out, "name removed");
	ASSERT_EQ(run_sh(&out, "%s rmi --store %s/st a", bin, fix), 2);
	ASSERT_EQ(run_sh(&out, "ls %s/st/images/sha256 | wc -l", fix), 0);
	ASSERT_STR(out, "2\n");
	ASSERT_EQ(run_sh(&out, "%s rmi --store %s/st --json b", bin, fix), 0);
	ASSERT_CONTAINS(out, "\"image_removed\":true");
	ASSERT_EQ(run_sh(&out, "ls %s/st/images/sha256 | wc -l", fix), 0);
	ASSERT_STR(out, "0\n");
	/* the layer images stay until gc; a dry run removes nothing */
	ASSERT_EQ(run_sh(&out, "%s store gc --dry-run --store %s/st", bin, fix), 0);
	ASSERT_CONTAINS(out, "would remove 2 layer images");
	ASSERT_EQ(run_sh(&out, "ls %s/st/layers/sha256/*.erofs | wc -l", fix), 0);
	ASSERT_STR(out, "2\n");
	ASSERT_EQ(run_sh(&out, "%s store gc --json --store %s/st", bin, fix), 0);
	ASSERT_CONTAINS(out, "\"removed\":2");
	ASSERT_EQ(run_sh(&out, "ls %s/st/layers/sha256 | wc -l", fix), 0);
	ASSERT_STR(out, "0\n");
	/* by digest: every name and the image, with --force when it has more than one (podman's rmi) */
	ASSERT_EQ(import("img:v1", "st", "--tag a", &out), 0);
	ASSERT_EQ(import("img:v1", "st", "--tag b", &out), 0);
	ASSERT_EQ(run_sh(&out, "%s rmi --store %s/st %s 2>&1", bin, fix, manifest), 2);
	ASSERT_CONTAINS(out, "the image has 2 names (a:latest, b:latest): remove each name, or all of them and the "
			"image with force (rmi --force)");
	ASSERT_EQ(run_sh(&out, "%s rmi --store %s/st %.12s 2>&1", bin, fix, manifest + 7), 2);
	ASSERT_CONTAINS(out, "(rmi --force)");
	/* by its layout's path too (a digest's way); and a refusal is no use of the image (its LAST USE stays) */
	ASSERT_EQ(run_sh(&out, "touch -a -d 2020-01-02 %s/st/images/sha256/%s.erofs.layout.json && "
		      "%s rmi --store %s/st %s/st/images/sha256/%s.erofs.layout.json 2>&1", fix, manifest + 7, bin, fix, fix,
		      manifest + 7), 2);
	ASSERT_CONTAINS(out, "(rmi --force)");
	ASSERT_EQ(run_sh(&out, "stat -c %%x %s/st/images/sha256/%s.erofs.layout.json | cut -c1-10", fix, manifest + 7), 0);
	ASSERT_STR(out, "2020-01-02\n");
	ASSERT_EQ(run_sh(&out, "%s rmi --store %s/st -f %.12s", bin, fix, manifest + 7), 0);
	ASSERT_CONTAINS(out, "removed");
	ASSERT_EQ(run_sh(&out, "%s images --store %s/st -q", bin, fix), 0);
	ASSERT_STR(out, "");
	ASSERT_EQ(run_sh(&out, "python3 -c \"import json; print(json.load(open('%s/st/names.json'))['names'])\"", fix), 0);
	ASSERT_STR(out, "{}\n");
}

TEST(gc_keeps_a_layer_image_a_live_tree_uses)
{
	char *out, layout[4096];

	fresh();
	ASSERT_EQ(import("img:v1", "st", "--tag a", &out), 0);
	snprintf(layout, sizeof(layout), "%s", first_line(out));
	/* a tree on the image's layers, then the image removed: its layers are unreferenced but in use */
	sh("cp %s %s/kept.json", layout, fix);
	assemble("kept.json", "m");
	ASSERT_EQ(run_sh(&out, "%s rmi --store %s/st a", bin, fix), 0);
	ASSERT_EQ(run_sh(&out, "%s store gc --json --store %s/st", bin, fix), 0);
	ASSERT_CONTAINS(out, "\"removed\":0");
	ASSERT_CONTAINS(out, "\"in_use\":2");
	ASSERT_EQ(umount2(P("m"), MNT_DETACH), 0);
	/* the loop devices go with the tree (autoclear), asynchronously */
	for (int i = 0; i < 50; i++) {
		ASSERT_EQ(run_sh(&out, "%s store gc --json --store %s/st", bin, fix), 0);
		if (strstr(out, "\"in_use\":0"))
			break;
		usleep(100000);
	}
	ASSERT_CONTAINS(out, "\"in_use\":0");
	ASSERT_EQ(run_sh(&out, "ls %s/st/layers/sha256 | wc -l", fix), 0);
	ASSERT_STR(out, "0\n");
}

TEST(store_verify_finds_a_changed_or_missing_layer_image)
{
	char *out;

	fresh();
	ASSERT_EQ(import("img:v1", "st", "--tag a", &out), 0);
	ASSERT_EQ(run_sh(&out, "%s store verify --store %s/st", bin, fix), 0);
	ASSERT_CONTAINS(out, "0 problems");
	/* a byte changed in a layer image: its sha256 is not the recorded one */
	sh("f=$(ls %s/st/layers/sha256/*.erofs | head -1) && printf X | dd of=$f bs=1 seek=2000 conv=notrunc status=none", fix);
	ASSERT_EQ(run_sh(&out, "%s store verify --store %s/st", bin, fix), 1);
	ASSERT_CONTAINS(out, "its sha256 is sha256:");
	ASSERT_CONTAINS(out, "1 problem\n");
	sh("rm %s/st/layers/sha256/*.erofs", fix);
	ASSERT_EQ(run_sh(&out, "%s store verify --json --store %s/st", bin, fix), 1);
	ASSERT_CONTAINS(out, "\"problems\":2");
	ASSERT_CONTAINS(out, "a layer image the image's layout names is missing");
	/* what assembly would refuse to mount for root: a layers directory or a layer image others may write */
	fresh();
	ASSERT_EQ(import("img:v1", "st", "--tag a", &out), 0);
	sh("chmod 0777 %s/st/layers/sha256 && chmod 0666 $(ls %s/st/layers/sha256/*.erofs | head -1)", fix, fix);
	ASSERT_EQ(run_sh(&out, "%s store verify --store %s/st", bin, fix), 1);
	ASSERT_CONTAINS(out, "layers/sha256: writable by group or others (mode 0777, owner uid 0)");
	ASSERT_CONTAINS(out, ".erofs: writable by group or others (mode 0666, owner uid 0)");
	ASSERT_CONTAINS(out, "2 problems");
	sh("chmod 0755 %s/st/layers/sha256 && chmod 0644 %s/st/layers/sha256/*.erofs && chown 1771 %s/st/images", fix, fix, fix);
	ASSERT_EQ(run_sh(&out, "%s store verify --store %s/st", bin, fix), 1);
	ASSERT_CONTAINS(out, "/st/images: not owned by root");
}

TEST(store_commands_are_serialised_by_the_lock)
{
	char *out;

	fresh();
	ASSERT_EQ(import("img:v1", "st", "--tag a", &out), 0);
	/* an import holding the lock shared (as while it runs): gc waits for it */
	ASSERT_EQ(run_sh(&out, "cd %s && (flock -s st/lock sleep 1 &) && sleep 0.2 && s=$(date +%%s%%N) && "
		      "%s store gc --quiet --store st && echo $(( ($(date +%%s%%N) - s) / 100000000 ))", fix, bin), 0);
	ASSERT_TRUE(atoi(out) >= 6);
	/* and rmi: an exclusive holder makes it wait */
	ASSERT_EQ(run_sh(&out, "cd %s && (flock -x st/lock sleep 1 &) && sleep 0.2 && s=$(date +%%s%%N) && "
		      "%s rmi --quiet --store st a && echo $(( ($(date +%%s%%N) - s) / 100000000 ))", fix, bin), 0);
	ASSERT_TRUE(atoi(out) >= 6);
}

/* The one-line refusal of a bundle command naming @want, exit status 2; then @victim still has @mounts mounts. */
static void expect_bundle_refused(const char *cmd, const char *want, const char *victim, int mounts)
{
	int st;
	char *out;

	st = run_sh(&out, "%s bundle %s %s/B", bin, cmd, fix);
	ASSERT_EQ(count_mounts_under(victim), mounts);
	ASSERT_EQ(st, 2);
	ASSERT_CONTAINS(out, want);
	ASSERT_TRUE(strchr(out, '\n') == out + strlen(out) - 1);
}

/* Set config.json's @key (a Python expression on c) to @val (a Python expression). */
static void config_set(const char *key, const char *val)
{
	sh("cd %s/B && python3 -c \"import json; c = json.load(open('config.json')); %s = %s; "
	   "json.dump(c, open('config.json', 'w'), indent=1)\"", fix, key, val);
}

TEST(bundle_root_path_outside_the_bundle_is_refused)
{
	const char *layout;
	char rp[4200];
	/* '@': the fixture directory */
	const char *const forms[] = { "@/victim", "../victim", "@/B/../victim", "../../../../../../../../..@/victim",
				      "link/sub", "link" };

	fresh();
	layout = import_small();
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		char val[4300];

		const char *at = strchr(forms[i], '@');

		if (at)
			snprintf(rp, sizeof(rp), "%.*s%s%s", (int)(at - forms[i]), forms[i], fix, at + 1);
		else
			snprintf(rp, sizeof(rp), "%s", forms[i]);
		sh("cd %s && rm -rf victim && mkdir -p victim/sub && echo mine > victim/f", fix);
		mkbundle(layout, false, NULL, "true");
		sh("ln -s ../victim %s/B/link", fix);
		snprintf(val, sizeof(val), "'%s'", rp);
		config_set("c['root']['path']", val);
		sh("cp %s/B/config.json %s/config.orig", fix, fix);
		/* nothing attached over the victim (nor anywhere), nothing written */
		expect_bundle_refused("prepare", rp, P("victim"), 0);
		ASSERT_EQ(count_mounts_under(fix), 0);
		ASSERT_STR(slurp(P("victim/f")), "mine\n");
		ASSERT_TRUE(access(P("B/.rootasm"), F_OK) < 0);
		ASSERT_EQ(run_sh(NULL, "cmp %s/B/config.json %s/config.orig && test -z \"$(ls -A %s/victim/sub)\"", fix,
			      fix, fix), 0);
	}
}

TEST(bundle_symlinks_in_the_bundle_are_refused)
{
	const char *layout;
	char *out;
	int st;

	fresh();
	layout = import_small();
	/* .rootasm a symlink to a directory of someone else's: its config.json must stay */
	mkbundle(layout, false, NULL, "true");
	sh("mkdir -p %s/victim && echo victim-config > %s/victim/config.json && ln -s ../victim %s/B/.rootasm",
	   fix, fix, fix);
	st = run_sh(&out, "%s bundle prepare %s/B", bin, fix);
	ASSERT_STR(slurp(P("victim/config.json")), "victim-config\n");
	ASSERT_EQ(st, 2);
	ASSERT_CONTAINS(out, "/B/.rootasm");
	ASSERT_TRUE(strchr(out, '\n') == out + strlen(out) - 1);
	ASSERT_EQ(run_sh(&out, "ls -A %s/victim", fix), 0);
	ASSERT_STR(out, "config.json\n");
	ASSERT_EQ(count_mounts_under(fix), 0);
	ASSERT_EQ(run_sh(NULL, "cmp %s/B/config.json %s/config.orig", fix, fix), 0);
	/* config.json a symlink: not read through it */
	sh("cd %s/B && rm .rootasm && mv config.json ../config.real && ln -s ../config.real config.json", fix);
	expect_bundle_refused("prepare", "/B/config.json", fix, 0);
	sh("cd %s/B && rm config.json && mv ../config.real config.json", fix);
	/* prepared, then .rootasm swapped for the symlink: cleanup must not take the victim's config.json */
	ASSERT_EQ(run_sh(&out, "%s bundle prepare %s/B", bin, fix), 0);
	sh("cd %s/B && mv .rootasm ../state.real && ln -s ../victim .rootasm", fix);
	st = run_sh(&out, "%s bundle cleanup %s/B", bin, fix);
	ASSERT_STR(slurp(P("victim/config.json")), "victim-config\n");
	ASSERT_EQ(st, 2);
	ASSERT_CONTAINS(out, "/B/.rootasm");
	ASSERT_TRUE(strchr(out, '\n') == out + strlen(out) - 1);
	ASSERT_EQ(count_mounts_under(P("B/rootfs")), 3);
	/* put back, cleanup finishes the job */
	sh("cd %s/B && rm .rootasm && mv ../state.real .rootasm", fix);
	ASSERT_EQ(run_sh(&out, "%s bundle cleanup %s/B", bin, fix), 0);
	ASSERT_CONTAINS(out, "detached");
	ASSERT_EQ(count_mounts_under(fix), 0);
	ASSERT_EQ(run_sh(NULL, "cmp %s/B/config.json %s/config.orig && test ! -e %s/B/.rootasm", fix, fix, fix), 0);
	ASSERT_STR(slurp(P("victim/config.json")), "victim-config\n");
}

#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE	0x00004000U
#endif

/* The unique mount id of the mount at @p: anyone may read it. */
static unsigned long long unique_mount_id(const char *p)
{
	struct statx sx;

	if (statx(AT_FDCWD, p, 0, STATX_MNT_ID_UNIQUE, &sx) < 0 || !(sx.stx_mask & STATX_MNT_ID_UNIQUE))
		FAILF("statx %s: %s", p, strerror(errno));
	return sx.stx_mnt_id;
}

TEST(bundle_cleanup_trusts_no_annotation)
{
	const char *layout;
	char val[4300], *out;

	fresh();
	layout = import_small();
	mkbundle(layout, false, NULL, "true");
	/* an unrelated mount, and a config that names it and forges its id: never prepared */
	sh("mkdir -p %s/victim", fix);
	ASSERT_EQ(mount("none", P("victim"), "tmpfs", 0, NULL), 0);
	snprintf(val, sizeof(val), "'%s/victim'", fix);
	config_set("c['root']['path']", val);
	snprintf(val, sizeof(val), "'%llu'", unique_mount_id(P("victim")));
	config_set("c['annotations']['org.rootasm.prepared']", val);
	expect_bundle_refused("cleanup", "not prepared by rootasm", P("victim"), 1);
	/* the same with the unrelated mount at the bundle's own root.path */
	sh("cp %s/config.orig %s/B/config.json && mkdir -p %s/B/rootfs", fix, fix, fix);
	ASSERT_EQ(mount("none", P("B/rootfs"), "tmpfs", 0, NULL), 0);
	snprintf(val, sizeof(val), "'%llu'", unique_mount_id(P("B/rootfs")));
	config_set("c['annotations']['org.rootasm.prepared']", val);
	expect_bundle_refused("cleanup", "not prepared by rootasm", P("B/rootfs"), 1);
	ASSERT_EQ(umount2(P("B/rootfs"), 0), 0);
	/* prepared; then root.path and the annotation turned to the victim: cleanup detaches its own tree only */
	sh("cp %s/config.orig %s/B/config.json", fix, fix);
	ASSERT_EQ(run_sh(&out, "%s bundle prepare %s/B", bin, fix), 0);
	snprintf(val, sizeof(val), "'%s/victim'", fix);
	config_set("c['root']['path']", val);
	snprintf(val, sizeof(val), "'%llu'", unique_mount_id(P("victim")));
	config_set("c['annotations']['org.rootasm.prepared']", val);
	ASSERT_EQ(run_sh(&out, "%s bundle cleanup %s/B", bin, fix), 0);
	ASSERT_CONTAINS(out, "detached");
	ASSERT_EQ(count_mounts_under(P("victim")), 1);
	ASSERT_EQ(count_mounts_under(P("B/rootfs")), 0);
	ASSERT_EQ(run_sh(NULL, "cmp %s/B/config.json %s/config.orig", fix, fix), 0);
}

TEST(bundle_records_only_root_can_write)
{
	const char *layout;
	char *out;

	fresh();
	layout = import_small();
	mkbundle(layout, false, NULL, "true");
	/* made on first use: root's, 0700 */
	ASSERT_EQ(run_sh(&out, "%s bundle prepare %s/B", bin, fix), 0);
	ASSERT_EQ(run_sh(&out, "stat -c '%%u %%a' %s/run/bundles && ls %s/run/bundles | wc -l", fix, fix), 0);
	ASSERT_STR(out, "0 700\n1\n");
	ASSERT_EQ(run_sh(&out, "%s bundle cleanup %s/B", bin, fix), 0);
	ASSERT_EQ(run_sh(&out, "ls -A %s/run/bundles | wc -l", fix), 0);
	ASSERT_EQ(atoi(out), 0);
	/* writable by others, another's, a symlink: refused before anything is mounted */
	sh("chmod 0733 %s/run/bundles", fix);
	ASSERT_EQ(run_sh(&out, "%s bundle prepare %s/B", bin, fix), 1);
	ASSERT_CONTAINS(out, "/run/bundles");
	ASSERT_CONTAINS(out, "nobody else can write");
	ASSERT_EQ(count_mounts_under(fix), 0);
	sh("chmod 0700 %s/run/bundles && chown 1000 %s/run/bundles", fix, fix);
	ASSERT_EQ(run_sh(&out, "%s bundle prepare %s/B", bin, fix), 1);
	ASSERT_CONTAINS(out, "owned by uid 1000");
	sh("mv %s/run/bundles %s/run/elsewhere && chown 0 %s/run/elsewhere && ln -s elsewhere %s/run/bundles", fix, fix,
	   fix, fix);
	ASSERT_EQ(run_sh(&out, "%s bundle prepare %s/B", bin, fix), 1);
	ASSERT_CONTAINS(out, "symbolic link");
	ASSERT_EQ(count_mounts_under(fix), 0);
	ASSERT_EQ(run_sh(NULL, "cmp %s/B/config.json %s/config.orig && test ! -e %s/B/.rootasm && "
		      "test -z \"$(ls -A %s/B/rootfs)\"", fix, fix, fix, fix), 0);
}

TEST(bundle_prepare_that_fails_leaves_nothing)
{
	const char *layout;
	char *out;

	fresh();
	layout = import_small();
	/* a bind volume whose source is missing: the assembly fails after root.path was made */
	mkbundle(layout, false,
		 "c['mounts'].insert(2, {'destination': '/gone', 'type': 'bind', 'source': '/nonexistent-rootasm', "
		 "'options': ['rbind']})\n", "true");
	ASSERT_TRUE(run_sh(&out, "%s bundle prepare %s/B", bin, fix) != 0);
	ASSERT_CONTAINS(out, "/nonexistent-rootasm");
	ASSERT_TRUE(strchr(out, '\n') == out + strlen(out) - 1);
	ASSERT_EQ(count_mounts_under(fix), 0);
	ASSERT_EQ(run_sh(NULL, "cmp %s/B/config.json %s/config.orig && test ! -e %s/B/.rootasm && test ! -e %s/B/rootfs "
		      "&& test -z \"$(ls -A %s/run/bundles)\"", fix, fix, fix, fix, fix), 0);
	/* and a .rootasm of the owner's that is in the way (a file): no record, no mount */
	sh("cd %s/B && python3 -c \"import json; c = json.load(open('config.json')); c['mounts'].pop(2); "
	   "json.dump(c, open('config.json', 'w'))\" && cp config.json ../config.orig && echo x > .rootasm", fix);
	ASSERT_EQ(run_sh(&out, "%s bundle prepare %s/B", bin, fix), 2);
	ASSERT_CONTAINS(out, "/B/.rootasm");
	ASSERT_EQ(count_mounts_under(fix), 0);
	ASSERT_EQ(run_sh(NULL, "cmp %s/B/config.json %s/config.orig && test ! -e %s/B/rootfs && "
		      "test -z \"$(ls -A %s/run/bundles)\"", fix, fix, fix, fix), 0);
}

TEST(tar_cut_in_its_last_padding_is_taken_cut_in_data_is_not)
{
	char *out;

	fresh();
	sh("cd %s && %s hostile cut-padding h.tar", fix, mkoci);
	mkimage("cut", "h.tar:gzip");
	ASSERT_EQ(import("cut", "st", NULL, &out), 0);
	assemble(first_line(out), "m");
	ASSERT_STR(slurp(P("m/ok")), "fine");
	ASSERT_EQ(umount2(P("m"), MNT_DETACH), 0);
	fresh();
	hostile("cut-data", "Truncated");
}

static void cleanup(void)
{
	if (getpid() == main_pid)
		sh("rm -rf %s", fix);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s ROOTASM_BIN MKOCI\n", argv[0]);
		return 2;
	}
	bin = realpath(argv[1], NULL);
	mkoci = realpath(argv[2], NULL);
	if (!bin || !mkoci)
		return 2;
	if (geteuid() != 0)
		return harness_main(argc, argv);
	snprintf(fix, sizeof(fix), "%s/rootasm-oci-XXXXXX",
		 getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(fix))
		return 2;
	main_pid = getpid();
	atexit(cleanup);
	/* bundle prepare's records: root's own directory, not the machine's /run/rootasm */
	{
		char run_dir[4200];

		snprintf(run_dir, sizeof(run_dir), "%s/run", fix);
		setenv("ROOTASM_RUN_DIR", run_dir, 1);
	}
	/* layer 1: every kind of entry; layer 2: a replaced file, a whiteout, an opaque directory */
	sh("cd %s && mkdir -p l1/etc l1/bin l1/dir/sub l1/%0200d/%0200d l2/etc l2/dir", fix, 0, 0);
	sh("cd %s && cp /bin/busybox l1/bin/ && ln -s busybox l1/bin/sh && chmod 4755 l1/bin/busybox", fix);
	sh("cd %s && echo one > l1/etc/a && echo keep > l1/etc/keep && ln l1/etc/keep l1/etc/keep-link && "
	   "setcap cap_net_raw+ep l1/etc/keep && echo gone > l1/etc/gone && echo hidden > l1/dir/sub/h", fix);
	sh("cd %s && echo owned > l1/etc/owned && chown 1000:1001 l1/etc/owned && chmod 0640 l1/etc/owned && "
	   "python3 -c \"import os; os.setxattr('l1/etc/owned', 'user.x', b'value')\"", fix);
	sh("cd %s && mkfifo l1/fifo && mknod l1/null c 1 3 && touch l1/%0200d/%0200d/deep", fix, 0, 0);
	sh("cd %s && truncate -s 50M l1/sparse && printf data | dd of=l1/sparse bs=1 seek=1000000 conv=notrunc status=none", fix);
	sh("cd %s && echo two > l2/etc/a && touch l2/etc/.wh.gone l2/dir/.wh..wh..opq && echo new > l2/dir/new", fix);
	sh("cd %s && tar -C l1 --xattrs --xattrs-include='*' --sparse --format=pax --numeric-owner -cf l1.tar . && "
	   "tar -C l2 --format=pax --numeric-owner -cf l2.tar .", fix);
	sh("cd %s && %s layout img --tag v1 l1.tar:gzip l2.tar:zstd", fix, mkoci);
	/* three layers of some size, for the SIGKILL test */
	sh("cd %s && mkdir -p b1 b2 b3 && head -c 30M /dev/urandom > b1/r && head -c 30M /dev/urandom > b2/r && "
	   "head -c 30M /dev/urandom > b3/r && for i in 1 2 3; do tar -C b$i -cf b$i.tar .; done && "
	   "%s layout big b1.tar:gzip b2.tar:gzip b3.tar:gzip", fix, mkoci);
	if (chdir(fix) < 0)
		return 2;
	return harness_main(argc, argv);
}
