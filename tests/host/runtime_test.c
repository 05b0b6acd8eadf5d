// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rootasm-runtime with crun as its delegate, as root, each test in its own
 * private mount namespace (harness.c): pass-through untouched, trees chosen
 * by annotation (a layout of the layout directory, an image of the store),
 * annotations that try to leave those refused, a create killed midway, 20
 * containers at once. The image is a busybox layer made by mkoci.py and
 * imported by rootasm; what is mounted is read from /proc/self/mountinfo.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static const char *rt, *cli, *mkoci, *daemon_bin, *deploy_dir;
static char layout[4096], manifest[80];
static pid_t main_pid;

/* Each test starts without the state of the earlier ones, and with crun_env(). */
static void fresh(void)
{
	sh("rm -rf %s/root %s/run", fix, fix);
	crun_env();
}

/*
 * The bundle @name for crun: crun spec, the command @cmd, a bind volume, the
 * annotations @ann (a Python dict literal) and, with @rootfs, a rootfs of its
 * own (the busybox tree) so that crun alone can run it. A copy of its
 * config.json is kept as @name.orig.
 */
static void mkbundle(const char *name, const char *ann, const char *cmd, bool rootfs)
{
	sh("cd %s && rm -rf %s && mkdir -p %s vol && echo volume-data > vol/v && cd %s && crun spec && "
	   "python3 - <<'EOF'\n"
	   "import json\n"
	   "c = json.load(open('config.json'))\n"
	   "c['process']['terminal'] = False\n"
	   "c['process']['args'] = ['/bin/sh', '-c', \"\"\"%s\"\"\"]\n"
	   "c['root']['readonly'] = False\n"
	   "c['mounts'].append({'destination': '/vol', 'type': 'bind', 'source': '../vol', 'options': ['rbind', 'ro']})\n"
	   "c['annotations'] = %s\n"
	   "json.dump(c, open('config.json', 'w'), indent=1)\n"
	   "EOF\ncp config.json ../%s.orig", fix, name, name, name, cmd, ann, name);
	if (rootfs)
		sh("cp -a %s/tree %s/%s/rootfs", fix, fix, name);
}

/*
 * A tmpfs of the test's own mount namespace over @dir (made when missing), for
 * what an engine keeps in /run whatever its options say; gone with the test.
 * The directories it made are removed by cleanup(), at the end, which lets an
 * rmdir fail: not here, where a failure fails the test, since ci/test runs two
 * host suites at once and another one may be using the same host directory
 * meanwhile (host-oci's crun keeps its state in /run/crun, host-registry writes
 * /run/containers/0): the rmdir would fail, ENOTEMPTY. (host-cri's tmpfs over
 * /run/containerd, which an rmdir would detach, is kept apart by RESOURCE_LOCK.)
 */
static void private_run(const char *dir)
{
	sh("mkdir -p %s && mount -t tmpfs -o mode=0700 rootasm-test %s", dir, dir);
}

static void private_run_done(const char *dir)
{
	sh("umount %s", dir);
}

/* Write the file @p (mode @mode) from a format. */
static void put(const char *p, mode_t mode, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void put(const char *p, mode_t mode, const char *fmt, ...)
{
	va_list ap;
	FILE *f = fopen(p, "we");

	if (!f)
		FAILF("create %s: %s", p, strerror(errno));
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	if (fclose(f) != 0 || chmod(p, mode) < 0)
		FAILF("write %s: %s", p, strerror(errno));
}

/* rootasm-runtime with crun, its state under @fix/root. */
#define RT "%s --root %s/root --cgroup-manager=disabled"
#define RTARGS rt, fix

/* Nothing of rootasm-runtime's left: no mount under the fixture, no state, no record. */
static void nothing_left(void)
{
	char *out;

	/*
	 * crun's own: its copy of its binary (runc's cloned_binary.c) is a bind
	 * mount on a scratch file in _LIBCONTAINER_STATEDIR (crun_env()), made in
	 * the namespace crun runs in and removed by crun a moment later; a crun
	 * killed in between leaves it, with or without rootasm (these tests kill
	 * creates on purpose, and the delegate dies with the runtime): said, then
	 * detached, not counted as rootasm's
	 */
	if (run_sh(&out, "awk '$5 ~ \"^%s/crun-scratch/\" { print $5 }' /proc/self/mountinfo", fix) == 0 && *out) {
		fprintf(stderr, "  (crun's scratch mount left by a killed crun: %s)\n", out);
		sh("awk '$5 ~ \"^%s/crun-scratch/\" { print $5 }' /proc/self/mountinfo | xargs -r -n1 umount -l", fix);
	}
	if (count_mounts_under(fix))
		FAILF("mounts left: %s", run_sh(&out, "grep %s /proc/self/mountinfo", fix) >= 0 ? out : "");
	ASSERT_EQ(run_sh(&out, "ls -A %s/root/.rootasm %s/run/bundles 2>/dev/null | grep -v ':$' | grep .", fix, fix), 1);
}

TEST(no_annotation_is_passed_through_untouched)
{
	char *out, want[128];
	int pid = 0;

	fresh();
	mkbundle("B", "{}", "cat /etc/msg /vol/v", true);
	ASSERT_EQ(run_sh(&out, "cd %s/B && " RT " run c-plain", fix, RTARGS), 0);
	ASSERT_STR(out, "hello-from-the-bundle\nvolume-data\n");
	ASSERT_EQ(run_sh(NULL, "cmp %s/B/config.json %s/B.orig", fix, fix), 0);
	ASSERT_EQ(run_sh(NULL, "test ! -e %s/root/.rootasm/c-plain", fix), 0);
	/* a pod's sandbox gets the pod's annotations too, and runs its own image */
	mkbundle("B", "{'org.rootasm.layout': 'small.json', 'io.kubernetes.cri.container-type': 'sandbox'}",
		 "cat /etc/msg", true);
	ASSERT_EQ(run_sh(&out, "cd %s/B && " RT " run c-pause", fix, RTARGS), 0);
	ASSERT_STR(out, "hello-from-the-bundle\n");
	ASSERT_EQ(run_sh(NULL, "cmp %s/B/config.json %s/B.orig", fix, fix), 0);
	/* the delegate is executed, not forked: the same process, the same arguments */
	sh("printf '#!/bin/sh\\necho $$ \"$@\"\\n' >%s/showpid && chmod +x %s/showpid", fix, fix);
	ASSERT_EQ(run_sh(&out, "sh -c 'echo $$; exec %s --delegate %s/showpid --root %s/root --debug state x'", rt, fix,
			 fix), 0);
	ASSERT_EQ(sscanf(out, "%d", &pid), 1);
	snprintf(want, sizeof(want), "%d\n%d --root %s/root --debug state x\n", pid, pid, fix);
	ASSERT_STR(out, want);
	nothing_left();
}

TEST(layout_annotation_runs_in_the_assembled_tree)
{
	char *out, ann[4200];

	fresh();
	/* no rootfs of its own: the container can only run in rootasm's tree */
	mkbundle("B", "{'org.rootasm.layout': 'small.json'}",
		 "cat /etc/msg /vol/v; echo x > /w && cat /w; grep -c ' /scratch ' /proc/self/mountinfo", false);
	ASSERT_EQ(run_sh(&out, RT " run -b %s/B c-layout", RTARGS, fix), 0);
	/* the layout's tree, the config's bind volume, the layout's own tmpfs volume */
	ASSERT_STR(out, "hello-from-rootasm\nvolume-data\nx\n1\n");
	/* the engine's bundle as it was, its rootfs never made */
	ASSERT_EQ(run_sh(NULL, "cmp %s/B/config.json %s/B.orig && test ! -e %s/B/rootfs && test ! -e %s/B/.rootasm", fix,
			 fix, fix, fix), 0);
	nothing_left();
	/* absolute, inside the directory; create, start, delete as an engine does */
	snprintf(ann, sizeof(ann), "{'org.rootasm.layout': '%s/layouts/small.json'}", fix);
	mkbundle("B", ann, "cat /etc/msg", false);
	/* (the container's stdio is create's: a file, not run_sh()'s pipe, which it would hold open) */
	ASSERT_EQ(run_sh(&out, "cd %s/B && " RT " create c-abs >%s/c.out 2>&1", fix, RTARGS, fix), 0);
	/* the tree and the layout's /scratch (the config's /vol comes after /proc: crun's, in its order) */
	ASSERT_TRUE(count_mounts_under(path("root/.rootasm/c-abs/bundle/rootfs")) >= 2);
	ASSERT_EQ(count_mounts_under(fix), count_mounts_under(path("root/.rootasm/c-abs/bundle/rootfs")));
	ASSERT_EQ(run_sh(&out, RT " start c-abs && sleep 0.2 && " RT " delete c-abs", RTARGS, RTARGS), 0);
	ASSERT_STR(slurp(path("c.out")), "hello-from-rootasm\n");
	nothing_left();
}

/* run of bundle B, container @id, by the copy of rootasm-runtime in fix/lone: its exit status, its output in *out */
static int lone_run(char **out, const char *id)
{
	return run_sh(out, "%s/lone/rootasm-runtime --root %s/root --cgroup-manager=disabled run -b %s/B %s", fix, fix, fix,
		      id);
}

/*
 * The runtime an engine runs is static (no dynamic loader: it runs at every
 * call of every container); a create that needs the user database (a user's
 * bundle) or a library loaded (an import) goes to rootasm-runtime-full beside
 * it before it has changed anything: alone in a directory, it runs root's
 * bundle and refuses a user's naming its missing twin, nothing left; a twin
 * that is the static one again, or that anyone could write, is refused; with
 * the twin there the user's bundle runs, and ROOTASM_RUNTIME_TIMES says the
 * stages of one process (the twin's), not the static one's too.
 */
TEST(the_static_runtime_hands_a_users_bundle_to_its_twin)
{
	char *out;

	fresh();
	ASSERT_EQ(run_sh(&out, "readelf -lW %s | grep -c 'program interpreter'", rt), 1);
	ASSERT_STR(out, "0\n");
	ASSERT_EQ(run_sh(&out, "readelf -lW %s-full | grep -c 'program interpreter'", rt), 0);
	ASSERT_STR(out, "1\n");
	sh("rm -rf %s/lone && mkdir -m 0755 %s/lone && cp %s %s/lone/", fix, fix, rt, fix);
	mkbundle("B", "{'org.rootasm.layout': 'small.json'}", "cat /etc/msg /vol/v", false);
	sh("sed -i 's|\"\\.\\./vol\"|\"%s/vol\"|' %s/B/config.json", fix, fix);
	ASSERT_EQ(lone_run(&out, "c-root"), 0);
	ASSERT_STR(out, "hello-from-rootasm\nvolume-data\n");
	nothing_left();
	sh("chown 1000:1000 %s/B", fix);
	ASSERT_EQ(lone_run(&out, "c-user"), 1);
	ASSERT_CONTAINS(out, "/lone/rootasm-runtime-full: not found (ENOENT)");
	nothing_left();
	/* a twin that is the static one again: refused by that one, not handed over forever */
	sh("cp %s %s/lone/rootasm-runtime-full", rt, fix);
	ASSERT_EQ(lone_run(&out, "c-user"), 1);
	ASSERT_CONTAINS(out, "/lone/rootasm-runtime-full: this very rootasm-runtime");
	nothing_left();
	/* one that anybody could have written: refused */
	sh("cp %s-full %s/lone/ && chmod 0777 %s/lone/rootasm-runtime-full", rt, fix, fix);
	ASSERT_EQ(lone_run(&out, "c-user"), 1);
	ASSERT_CONTAINS(out, "/lone/rootasm-runtime-full: not a file of root's");
	nothing_left();
	sh("chmod 0755 %s/lone/rootasm-runtime-full", fix);
	ASSERT_EQ(lone_run(&out, "c-user"), 0);
	ASSERT_STR(out, "hello-from-rootasm\nvolume-data\n");
	nothing_left();
	ASSERT_EQ(run_sh(&out, "ROOTASM_RUNTIME_TIMES=1 %s/lone/rootasm-runtime --root %s/root --cgroup-manager=disabled "
			 "run -b %s/B c-user 2>&1 >/dev/null | grep -c ': time start '", fix, fix, fix), 0);
	ASSERT_STR(out, "1\n");
	nothing_left();
	sh("rm -rf %s/lone", fix);
}

/*
 * ROOTASM_RUNTIME_TIMES=1: a run's stages on stderr, in order, their times
 * never going back (ci/bench/run reads them); without it not one line more,
 * the container's output as it was.
 */
TEST(stage_times_are_said_when_asked)
{
	static const char *const stages[] = { "start", "configured", "bundle-read", "chosen", "tree-begun",
					      "rootfs-judged", "locked", "prepared", "delegate-started",
					      "delegate-exited", "cleaned", "done" };
	char *out, *p, name[64];
	double last = 0, t;
	size_t i = 0;

	fresh();
	mkbundle("B", "{'org.rootasm.layout': 'small.json'}", "cat /etc/msg", false);
	ASSERT_EQ(run_sh(&out, RT " run -b %s/B c-t", RTARGS, fix), 0);
	ASSERT_STR(out, "hello-from-rootasm\n");
	ASSERT_EQ(run_sh(&out, "ROOTASM_RUNTIME_TIMES=1 " RT " run -b %s/B c-t", RTARGS, fix), 0);
	ASSERT_CONTAINS(out, "hello-from-rootasm\n");
	for (p = out; (p = strstr(p, "rootasm-runtime: time ")); p++) {
		ASSERT_EQ(sscanf(p, "rootasm-runtime: time %63s %lf", name, &t), 2);
		ASSERT_TRUE(i < sizeof(stages) / sizeof(stages[0]));
		ASSERT_STR(name, stages[i]);
		ASSERT_TRUE(t >= last);
		last = t;
		i++;
	}
	ASSERT_EQ(i, sizeof(stages) / sizeof(stages[0]));
	/* another command says nothing of it: its standard error may be a container's (exec) */
	run_sh(&out, "ROOTASM_RUNTIME_TIMES=1 " RT " state c-t-none; ROOTASM_RUNTIME_TIMES=1 " RT " list", RTARGS, RTARGS);
	ASSERT_TRUE(!strstr(out, "rootasm-runtime: time"));
	nothing_left();
}

/*
 * A foreground run whose id is deleted and created again before the run
 * takes its lock back (stopped here meanwhile; an engine reuses an id as
 * soon as its delete returns): the run's cleanup leaves the new container's
 * state alone.
 */
TEST(run_leaves_the_next_container_of_its_id_alone)
{
	char *out, cmd[8192];
	pid_t pid;
	int st, i;

	fresh();
	mkbundle("B", "{'org.rootasm.layout': 'small.json'}", "sleep 30", false);
	snprintf(cmd, sizeof(cmd), "exec " RT " run -b %s/B c-re >/dev/null 2>&1", RTARGS, fix);
	pid = fork();
	ASSERT_TRUE(pid >= 0);
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 200; i++) {
		if (run_sh(&out, RT " state c-re", RTARGS) == 0 && strstr(out, "\"running\""))
			break;
		usleep(50000);
	}
	ASSERT_TRUE(i < 200);
	ASSERT_EQ(kill(pid, SIGSTOP), 0);
	ASSERT_EQ(waitpid(pid, &st, WUNTRACED), pid);
	ASSERT_TRUE(WIFSTOPPED(st));
	/*
	 * the run's delegate (crun run, not stopped) deletes its container itself
	 * once the container is killed: racing it, crun's delete -f can find the
	 * state going and fail (the likeliest reading of one failure in a full
	 * run). Either way the id is then free: crun knows it no more
	 */
	if (run_sh(&out, RT " delete -f c-re", RTARGS) != 0) {
		fprintf(stderr, "  (delete -f raced crun run's own delete: %s)\n", out);
		for (i = 0; i < 100 && run_sh(NULL, RT " state c-re", RTARGS) == 0; i++)
			usleep(20000);
		ASSERT_TRUE(run_sh(NULL, RT " state c-re", RTARGS) != 0);
	}
	/* (its output to a file: the created container holds what it was given until its start) */
	ASSERT_EQ(run_sh(&out, RT " create -b %s/B c-re >%s/c.out 2>&1", RTARGS, fix, fix), 0);
	ASSERT_EQ(kill(pid, SIGCONT), 0);
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	/* the new container is there, created, with its state */
	ASSERT_EQ(run_sh(&out, RT " state c-re", RTARGS), 0);
	ASSERT_CONTAINS(out, "\"created\"");
	ASSERT_EQ(run_sh(NULL, "test -d %s/root/.rootasm/c-re", fix), 0);
	ASSERT_EQ(run_sh(&out, RT " delete -f c-re", RTARGS), 0);
	nothing_left();
}

TEST(image_annotation_runs_an_image_of_the_store)
{
	char *out, ann[4200];

	fresh();
	snprintf(ann, sizeof(ann), "{'org.rootasm.image': '%s'}", manifest);
	mkbundle("B", ann, "cat /etc/msg", false);
	ASSERT_EQ(run_sh(&out, RT " run -b %s/B c-image", RTARGS, fix), 0);
	ASSERT_STR(out, "hello-from-rootasm\n");
	/* its name in the store (import --tag) */
	mkbundle("B", "{'org.rootasm.image': 'rt-test/img:v1'}", "cat /etc/msg", false);
	ASSERT_EQ(run_sh(&out, RT " run -b %s/B c-image", RTARGS, fix), 0);
	ASSERT_STR(out, "hello-from-rootasm\n");
	/* the layout path import printed */
	snprintf(ann, sizeof(ann), "{'org.rootasm.image': '%s'}", layout);
	mkbundle("B", ann, "cat /etc/msg", false);
	ASSERT_EQ(run_sh(&out, RT " run -b %s/B c-image", RTARGS, fix), 0);
	ASSERT_STR(out, "hello-from-rootasm\n");
	nothing_left();
}

/* @ann refused with one line containing @why, in --log as JSON too; nothing made, nothing run. */
static void refused(const char *ann, const char *why)
{
	char *out, *log;

	mkbundle("B", ann, "echo ran", true);
	sh("rm -f %s/log.json", fix);
	ASSERT_EQ(run_sh(&out, RT " --log %s/log.json --log-format json run -b %s/B c-bad", RTARGS, fix, fix), 1);
	ASSERT_CONTAINS(out, why);
	ASSERT_TRUE(!strncmp(out, "rootasm-runtime: run c-bad: annotation", 38));
	ASSERT_TRUE(strchr(out, '\n') == out + strlen(out) - 1);
	log = slurp(path("log.json"));
	ASSERT_CONTAINS(log, "{\"level\":\"error\",\"msg\":\"rootasm-runtime: run c-bad: annotation");
	ASSERT_CONTAINS(log, why);
	ASSERT_EQ(run_sh(NULL, "cmp %s/B/config.json %s/B.orig", fix, fix), 0);
	nothing_left();
}

TEST(annotations_that_leave_the_administrators_directories_are_refused)
{
	char ann[4200];

	fresh();
	/* a layout anywhere else (the very same file, copied), by absolute path, by "..", by a symlink */
	sh("cp %s/layouts/small.json %s/outside.json && ln -sf %s/outside.json %s/layouts/link.json", fix, fix, fix, fix);
	snprintf(ann, sizeof(ann), "{'org.rootasm.layout': '%s/outside.json'}", fix);
	refused(ann, "in none of the layout directories allowed to administrator (");
	refused("{'org.rootasm.layout': '../outside.json'}", "outside the layout directory");
	refused("{'org.rootasm.layout': 'link.json'}", "a symbolic link on the way beneath the layout directory");
	/* ... nor is a path outside them looked up: no answer tells whether a file is there */
	refused("{'org.rootasm.layout': '/root/no/such/file'}", "in none of the layout directories allowed to");
	/* images: not a name of the store, a path out of it */
	refused("{'org.rootasm.image': 'debian:12'}", "no image of that name or digest in the store");
	refused("{'org.rootasm.image': '../../etc/x'}", "org.rootasm.image '../../etc/x'");
	snprintf(ann, sizeof(ann), "{'org.rootasm.image': '%s/st/images/sha256/../../../outside.json'}", fix);
	refused(ann, "not a layout of the store");
	/* a file in the store's image directory that is no image's layout (the store's file names are the library's) */
	sh("cp %s/layouts/small.json %s/st/images/sha256/%064d.erofs.layout.json", fix, fix, 0);
	snprintf(ann, sizeof(ann), "{'org.rootasm.image': '%s/st/images/sha256/%064d.erofs.layout.json'}", fix, 0);
	refused(ann, "not a layout of an image of the store");
	sh("rm %s/st/images/sha256/%064d.erofs.layout.json", fix, 0);
	/* rootasmd: only the configured socket */
	refused("{'org.rootasm.layout': 'small.json', 'org.rootasm.via': '/tmp/elsewhere.sock'}",
		"not the configured rootasmd socket");
	/* a layout directory someone else may write is nobody's to trust */
	sh("chmod 0777 %s/layouts", fix);
	refused("{'org.rootasm.layout': 'small.json'}", "not an administrator's layout (the directory ");
	sh("chmod 0755 %s/layouts", fix);
	/* nor a layout file in it that another user owns or may write, nor one below a directory a user owns */
	sh("cp %s/layouts/small.json %s/layouts/users.json && chown 4242 %s/layouts/users.json", fix, fix, fix);
	refused("{'org.rootasm.layout': 'users.json'}", "not an administrator's layout (");
	sh("chown 0 %s/layouts/users.json && chmod 0666 %s/layouts/users.json", fix, fix);
	refused("{'org.rootasm.layout': 'users.json'}", "writable by group or others");
	sh("mkdir -p %s/layouts/sub && cp %s/layouts/small.json %s/layouts/sub/small.json && chown 4242 %s/layouts/sub",
	   fix, fix, fix, fix);
	refused("{'org.rootasm.layout': 'sub/small.json'}", "/layouts/sub above it is not root's");
	sh("rm -rf %s/layouts/users.json %s/layouts/sub", fix, fix);
}

/* "rootasm-runtime --root FIX/root" and the delegate: crun without cgroups (RT), or runc. */
static const char *rt_with(bool runc)
{
	static char pre[1024];

	if (runc)
		snprintf(pre, sizeof(pre), "%s --delegate runc --root %s/root", rt, fix);
	else
		snprintf(pre, sizeof(pre), RT, RTARGS);
	return pre;
}

static void need_runc(void)
{
	if (system("command -v runc >/dev/null") != 0)
		FAILF("runc is not installed (ci/deps installs it)");
}

/*
 * The runtime spec's cases where the delegate mounts on the tree in a namespace
 * rootasm-runtime does not see: no mount namespace of the container's own
 * (/proc, /dev, /sys then stack on the tree in the host's), and a mount
 * namespace joined by path. delete frees the id either way, and nothing stays
 * mounted; the delegate alone on the same bundle (no annotation) agrees.
 * With crun and with runc.
 */
static void delete_frees(bool runc, bool over)
{
	const char *pre = rt_with(runc);
	char *out;
	int rc;

	fresh();
	for (int ann = 0; ann < 2; ann++) {
		mkbundle("B", ann ? "{'org.rootasm.layout': 'small.json'}" : "{}", "cat /etc/msg", !ann || over);
		if (over)
			sh("mount --bind %s/B/rootfs %s/B/rootfs", fix, fix);
		/* (runc refuses masked and read-only paths without a mount namespace: none for it) */
		sh("cd %s/B && python3 -c \"import json; c = json.load(open('config.json')); "
		   "c['linux']['namespaces'] = [n for n in c['linux']['namespaces'] if n['type'] != 'mount']; "
		   "[c['linux'].pop(k, None) for k in ('maskedPaths', 'readonlyPaths') if %d]; "
		   "json.dump(c, open('config.json', 'w'))\"", fix, runc);
		if (run_sh(&out, "%s run -b %s/B c-nomnt", pre, fix) != 0)
			FAILF("%s, annotated %d, no mount namespace: %s", runc ? "runc" : "crun", ann, out);
		ASSERT_STR(out, ann ? "hello-from-rootasm\n" : "hello-from-the-bundle\n");
		/*
		 * the delegate alone leaves its /proc, /dev, /sys on the bundle's
		 * rootfs in our namespace (runc its bind too); over the engine's
		 * rootfs they were in the delegate's namespace, gone with it
		 */
		if (!ann) {
			ASSERT_TRUE(count_mounts_under(path("B/rootfs")) > over);
			sh("awk '$5 ~ \"^%s/B/rootfs(/|$)\" { print $5 }' /proc/self/mountinfo | sort -r | xargs -r -n1 umount -l",
			   fix);
		} else if (over) {
			ASSERT_EQ(count_mounts_under(path("B/rootfs")), 1);
			sh("umount %s/B/rootfs", fix);
		}
		nothing_left();
	}
	/*
	 * create, start, delete: the same; over the engine's rootfs with the
	 * state in a shared mount (as /run is on a systemd host): what the
	 * delegate mounts on the tree in its namespace does not show in ours
	 */
	if (over)
		sh("mount --bind %s/B/rootfs %s/B/rootfs && mkdir -p %s/root && mount --bind %s/root %s/root && "
		   "mount --make-shared %s/root", fix, fix, fix, fix, fix, fix);
	ASSERT_EQ(run_sh(&out, "%s create -b %s/B c-nomnt >%s/c.out 2>&1", pre, fix, fix), 0);
	ASSERT_EQ(run_sh(&out, "grep -c ' %s/root/.rootasm/c-nomnt/bundle/rootfs/proc ' /proc/self/mountinfo", fix),
		  over ? 1 : 0);
	if (over) {
		/*
		 * the layout's tree assembled here, detached, for the delegate's
		 * namespace alone: no private bundle in the state, no mount of it in
		 * ours (the state's own bind mount the only one there)
		 */
		ASSERT_EQ(access(path("root/.rootasm/c-nomnt/bundle"), F_OK), -1);
		ASSERT_EQ(count_mounts_under(path("root")), 1);
	}
	ASSERT_EQ(run_sh(&out, "%s start c-nomnt && sleep 0.3 && %s delete c-nomnt", pre, pre), 0);
	ASSERT_CONTAINS(slurp(path("c.out")), "hello-from-rootasm\n");
	if (over)
		sh("umount %s/B/rootfs %s/root", fix, fix);
	nothing_left();
	/*
	 * A mount namespace joined by path: the delegate would look the rootfs up
	 * there, where the tree is not, and pivot_root would take it over: refused
	 * at once, one line, nothing made (it ran on an empty rootfs, failing, and
	 * left an id that no delete could free)
	 */
	mkbundle("B", "{'org.rootasm.layout': 'small.json'}", "cat /etc/msg", false);
	sh("cd %s/B && python3 -c \"import json; c = json.load(open('config.json')); "
	   "c['linux']['namespaces'] = [n if n['type'] != 'mount' else {'type': 'mount', 'path': '/proc/1/ns/mnt'} "
	   "for n in c['linux']['namespaces']]; json.dump(c, open('config.json', 'w'))\"", fix);
	rc = run_sh(&out, "%s run -b %s/B c-join", pre, fix);
	ASSERT_EQ(rc, 1);
	ASSERT_CONTAINS(out, "rootasm-runtime: run c-join: linux.namespaces joins the mount namespace /proc/1/ns/mnt: ");
	ASSERT_TRUE(strchr(out, '\n') == out + strlen(out) - 1);
	nothing_left();
}

TEST(delete_frees_the_id_whatever_namespaces_the_container_has)
{
	delete_frees(false, false);
}

TEST(delete_frees_the_id_whatever_namespaces_the_container_has_with_runc)
{
	need_runc();
	delete_frees(true, false);
}

TEST(delete_frees_the_id_over_the_engines_rootfs)
{
	delete_frees(false, true);
}

TEST(delete_frees_the_id_over_the_engines_rootfs_with_runc)
{
	need_runc();
	delete_frees(true, true);
}

/*
 * A container in a user namespace of its own (root mapped to 100000): the
 * delegate sets its rootfs up as that user, who must reach the private
 * bundle through the state directories as it reaches the engine's bundle.
 * With crun and with runc, each against itself without the annotation.
 */
static void user_namespace(bool runc, bool over)
{
	const char *pre = rt_with(runc);
	char *out;

	fresh();
	for (int ann = 0; ann < 2; ann++) {
		mkbundle("B", ann ? "{'org.rootasm.layout': 'small.json'}" : "{}", "cat /etc/msg; id -u", !ann || over);
		sh("cd %s/B && python3 -c \"import json; c = json.load(open('config.json')); "
		   "c['linux']['namespaces'].append({'type': 'user'}); "
		   "c['linux']['uidMappings'] = [{'containerID': 0, 'hostID': 100000, 'size': 65536}]; "
		   "c['linux']['gidMappings'] = [{'containerID': 0, 'hostID': 100000, 'size': 65536}]; "
		   "c['mounts'] = [m for m in c['mounts'] if m['destination'] != '/vol' and not m['destination'].startswith(('/sys', '/dev/mqueue'))]; "
		   "json.dump(c, open('config.json', 'w'))\"", fix);
		if (over) {
			/* the engine's rootfs a mount: the delegate's namespace has the tree there, --root 0700 as crun makes it */
			sh("mkdir -p %s/root && chmod 0700 %s/root && mount --bind %s/B/rootfs %s/B/rootfs", fix, fix, fix, fix);
		} else if (ann) {
			/* a --root its root cannot search (0700, as crun makes it): refused, one line, nothing made */
			sh("mkdir -p %s/root && chmod 0700 %s/root", fix, fix);
			ASSERT_EQ(run_sh(&out, "%s run -b %s/B c-userns", pre, fix), 1);
			ASSERT_CONTAINS(out, "rootasm-runtime: run c-userns: linux.namespaces has a user namespace, whose "
					"root (uid 100000 of the host) must reach the rootfs under --root, which others "
					"cannot search (mode 0700)");
			ASSERT_TRUE(strchr(out, '\n') == out + strlen(out) - 1);
			nothing_left();
			sh("chmod 0711 %s/root", fix);
		}
		if (run_sh(&out, "%s run -b %s/B c-userns", pre, fix) != 0)
			FAILF("%s, annotated %d, in a user namespace: %s", runc ? "runc" : "crun", ann, out);
		ASSERT_STR(out, ann ? "hello-from-rootasm\n0\n" : "hello-from-the-bundle\n0\n");
		if (over)
			sh("umount %s/B/rootfs", fix);
		nothing_left();
	}
	/*
	 * what the user namespace's root may pass is search only: nobody lists the
	 * ids; over the engine's rootfs it passes nothing of ours: --root as it was
	 */
	ASSERT_EQ(run_sh(&out, "stat -c %%a %s/root/.rootasm %s/root", fix, fix), 0);
	ASSERT_STR(out, over ? "700\n700\n" : "711\n711\n");
}

TEST(a_user_namespace_reaches_the_private_rootfs)
{
	user_namespace(false, false);
}

TEST(a_user_namespace_reaches_the_private_rootfs_with_runc)
{
	need_runc();
	user_namespace(true, false);
}

TEST(a_user_namespace_over_the_engines_rootfs)
{
	user_namespace(false, true);
}

TEST(a_user_namespace_over_the_engines_rootfs_with_runc)
{
	need_runc();
	user_namespace(true, true);
}

/*
 * The runtime spec's state as the delegate alone gives it: `state` and every
 * hook see the engine's bundle and the engine's annotations, with a rootasm
 * annotation as without one. crun runs the engine's bundle with rootasm's
 * config: every hook, createContainer and startContainer (which run in the
 * container's namespaces) too. runc runs the private bundle: the state is
 * given back as the engine's, and the hooks are run through `rootasm-runtime
 * hook`, createContainer too (in the container's namespaces, before
 * pivot_root: its path resolves in ours); startContainer alone, run inside
 * the container after pivot_root where no wrapper of ours can be, sees the
 * private bundle (rootasm-runtime(1)). With @over, an engine's bundle (its
 * rootfs a mount): the delegate runs it as it came, and every hook's state
 * is its own, with runc startContainer's too.
 */
static void state_and_hooks(bool runc, bool over)
{
	const char *pre = rt_with(runc);
	char *out;

	fresh();
	for (int ann = 0; ann < 2; ann++) {
		mkbundle("B", ann ? "{'org.rootasm.layout': 'small.json', 'x.test': 'y'}" : "{'x.test': 'y'}", "sleep 0.5",
			 !ann || over);
		/* an engine's rootfs is a mount of its own (its overlay) */
		if (over)
			sh("mount --bind %s/B/rootfs %s/B/rootfs", fix, fix);
		/*
		 * every kind of hook; startContainer's path is the container's and it
		 * runs there: it writes to a bind mount of the host's hooks/
		 */
		sh("mkdir -p %s/hooks && cd %s/B && python3 -c \"import json; c = json.load(open('config.json')); "
		   "c['hooks'] = {k: [{'path': '/bin/sh', 'args': ['sh', '-c', 'cat > %s/hooks/hook-' + k + '.json']}] "
		   "for k in ('prestart', 'createRuntime', 'createContainer', 'poststart', 'poststop')}; "
		   "c['hooks']['startContainer'] = [{'path': '/bin/sh', 'args': ['sh', '-c', "
		   "'cat > /hooks/hook-startContainer.json']}]; "
		   "c['mounts'].append({'destination': '/hooks', 'type': 'bind', 'source': '%s/hooks', 'options': ['rbind']}); "
		   "json.dump(c, open('config.json', 'w'))\"", fix, fix, fix, fix);
		sh("rm -f %s/hooks/hook-*.json %s/state.json", fix, fix);
		if (run_sh(&out, "%s create -b %s/B c-st >/dev/null && %s state c-st >%s/state.json && %s start c-st && "
			   "sleep 1 && %s delete c-st", pre, fix, pre, fix, pre, pre) != 0)
			FAILF("%s, annotated %d: %s", runc ? "runc" : "crun", ann, out);
		/*
		 * the bundle is the engine's for all of them (crun alone gives
		 * startContainer's "/": what it gives without rootasm, rootasm's
		 * container gets), the annotations the engine's alone
		 */
		if (run_sh(&out, "cd %s && python3 -c \"import json, os\n"
			   "for f in ['state', 'hooks/hook-prestart', 'hooks/hook-createRuntime', 'hooks/hook-createContainer',\n"
			   "          'hooks/hook-startContainer', 'hooks/hook-poststart', 'hooks/hook-poststop']:\n"
			   "    s = json.load(open(f + '.json'))\n"
			   "    a = s.get('annotations', {})\n"
			   "    alone = json.load(open(f + '.alone')) if %d else s\n"
			   "    os.rename(f + '.json', f + '.alone')\n"
			   "    if %d and %d and not %d and f == 'hooks/hook-startContainer':\n"
			   "        assert s['bundle'] == '%s/root/.rootasm/c-st/bundle', (f, s['bundle'])\n"
			   "        continue\n"
			   "    assert s['bundle'] == alone['bundle'], (f, s['bundle'], alone['bundle'])\n"
			   "    assert s['bundle'] == '%s/B' or f == 'hooks/hook-startContainer', (f, s['bundle'])\n"
			   "    assert a.get('x.test') == 'y' and 'org.rootasm.prepared' not in a, (f, a)\n"
			   "    assert s['id'] == 'c-st', (f, s['id'])\n\"", fix, ann, runc, ann, over, fix, fix) != 0)
			FAILF("%s, annotated %d: %s", runc ? "runc" : "crun", ann, out);
		if (over)
			sh("umount %s/B/rootfs", fix);
		nothing_left();
	}
}

TEST(state_and_hooks_show_the_engines_bundle)
{
	state_and_hooks(false, false);
}

TEST(state_and_hooks_show_the_engines_bundle_with_runc)
{
	need_runc();
	state_and_hooks(true, false);
}

/* An engine's bundle (its rootfs a mount): every hook's state is the delegate's own, startContainer's too. */
TEST(state_and_hooks_over_the_engines_rootfs)
{
	state_and_hooks(false, true);
}

TEST(state_and_hooks_over_the_engines_rootfs_with_runc)
{
	need_runc();
	state_and_hooks(true, true);
}

/*
 * An engine's bundle, root's, whose rootfs is a mount (its overlay): the
 * delegate runs it as it came, in a mount namespace of its own where the
 * tree covers that rootfs. A hook that edits the rootfs the config names (a
 * device plugin's, before the container starts) edits the tree the
 * container runs on, as it edits the engine's rootfs without rootasm; the
 * engine's rootfs, shared with our namespace, gets nothing: neither the
 * hook's file nor the tree on it. With crun and with runc, each against
 * itself without the annotation.
 */
static void hook_edits_the_tree(bool runc)
{
	const char *pre = rt_with(runc);
	char *out;

	fresh();
	put(path("edit-rootfs"), 0755, "#!/usr/bin/python3\n"
	    "import json, os, sys\n"
	    "s = json.load(sys.stdin)\n"
	    "c = json.load(open(os.path.join(s['bundle'], 'config.json')))\n"
	    "root = os.path.join(s['bundle'], c['root']['path'])\n"
	    "open(os.path.join(root, 'scratch', 'hooked'), 'w').write('from-the-hook\\n')\n");
	for (int ann = 0; ann < 2; ann++) {
		mkbundle("B", ann ? "{'org.rootasm.layout': 'small.json'}" : "{}", "cat /etc/msg /scratch/hooked", true);
		sh("cd %s/B && python3 -c \"import json; c = json.load(open('config.json')); "
		   "c['hooks'] = {'createRuntime': [{'path': '%s/edit-rootfs'}]}; json.dump(c, open('config.json', 'w'))\" && "
		   "mount --bind rootfs rootfs && mount --make-shared rootfs", fix, fix);
		if (run_sh(&out, "%s run -b %s/B c-hook", pre, fix) != 0)
			FAILF("%s, annotated %d: %s", runc ? "runc" : "crun", ann, out);
		ASSERT_STR(out, ann ? "hello-from-rootasm\nfrom-the-hook\n" : "hello-from-the-bundle\nfrom-the-hook\n");
		ASSERT_EQ(access(path("B/rootfs/scratch/hooked"), F_OK) == 0, !ann);
		/* a created container's tree is on the engine's rootfs in the delegate's namespace alone */
		ASSERT_EQ(run_sh(&out, "%s create -b %s/B c-hook >/dev/null", pre, fix), 0);
		ASSERT_EQ(count_mounts_under(path("B/rootfs")), 1);
		ASSERT_EQ(run_sh(&out, "%s delete -f c-hook", pre), 0);
		sh("umount %s/B/rootfs", fix);
		nothing_left();
	}
}

/*
 * A root.path that holds what the delegate reads (here the bundle itself,
 * ".", a mount): the tree never covers it in the delegate's namespace, or
 * the delegate would read its config.json from the tree, which an image's
 * author wrote. The container runs on the tree all the same, rootasm's
 * config given to the delegate (crun), or the private bundle (runc).
 */
static void rootfs_holding_the_bundle(bool runc)
{
	const char *pre = rt_with(runc);
	char *out;

	fresh();
	mkbundle("B", "{'org.rootasm.layout': 'small.json'}", "cat /etc/msg", false);
	sh("cd %s/B && python3 -c \"import json; c = json.load(open('config.json')); c['root']['path'] = '.'; "
	   "json.dump(c, open('config.json', 'w'))\" && mount --bind . .", fix);
	if (run_sh(&out, "%s run -b %s/B c-dot", pre, fix) != 0)
		FAILF("%s: %s", runc ? "runc" : "crun", out);
	ASSERT_STR(out, "hello-from-rootasm\n");
	sh("umount %s/B", fix);
	nothing_left();
}

/*
 * A file the engine names for the delegate to write (--pid-file) beneath the
 * engine's rootfs: the tree does not cover that rootfs in the delegate's
 * namespace, so the file is where the engine reads it, in ours.
 */
TEST(a_file_the_engine_names_beneath_its_rootfs_is_not_covered)
{
	char *out;

	fresh();
	mkbundle("B", "{'org.rootasm.layout': 'small.json'}", "cat /etc/msg", true);
	sh("mount --bind %s/B/rootfs %s/B/rootfs", fix, fix);
	if (run_sh(&out, RT " create --pid-file %s/B/rootfs/ctr.pid -b %s/B c-pid >%s/c.out 2>&1", RTARGS, fix, fix,
		   fix) != 0)
		FAILF("create: %s", slurp(path("c.out")));
	ASSERT_EQ(access(path("B/rootfs/ctr.pid"), F_OK), 0);
	ASSERT_EQ(run_sh(&out, RT " delete -f c-pid", RTARGS), 0);
	/* named through a symlink of the engine's rootfs that leads out of it (which the tree has not) */
	sh("mkdir -p %s/pids && ln -s ../../pids %s/B/rootfs/pids", fix, fix);
	if (run_sh(&out, RT " create --pid-file %s/B/rootfs/pids/ctr.pid -b %s/B c-pid >%s/c.out 2>&1", RTARGS, fix,
		   fix, fix) != 0)
		FAILF("create, through a symlink: %s", slurp(path("c.out")));
	ASSERT_EQ(access(path("pids/ctr.pid"), F_OK), 0);
	ASSERT_EQ(run_sh(&out, RT " delete -f c-pid", RTARGS), 0);
	sh("umount %s/B/rootfs", fix);
	nothing_left();
}

/*
 * Paths the config gives the delegate beneath the engine's rootfs, besides
 * the bundle's own files: an overlay mount's lowerdir= (its second part), a
 * seccomp listener's socket, a file crun writes a hook's output to
 * (run.oci.hooks.stdout). The tree does not cover that rootfs in the
 * delegate's namespace, so the delegate finds each where the engine put it.
 */
static void config_path_beneath_the_rootfs(const char *what, const char *edit, const char *cmd, const char *expect)
{
	char *out;

	fresh();
	mkbundle("B", "{'org.rootasm.layout': 'small.json'}", cmd, true);
	sh("cd %s/B && mkdir -p rootfs/low %s/lowA && echo from-the-engine >rootfs/low/x && echo a >%s/lowA/a && "
	   "python3 -c \"import json; fix = '%s'; c = json.load(open('config.json')); %s; "
	   "json.dump(c, open('config.json', 'w'))\" && mount --bind rootfs rootfs", fix, fix, fix, fix, edit);
	if (run_sh(&out, RT " run -b %s/B c-path 2>&1", RTARGS, fix) != 0)
		FAILF("%s: %s", what, out);
	ASSERT_STR(out, expect);
	sh("umount %s/B/rootfs", fix);
	nothing_left();
}

TEST(an_overlay_lowerdir_beneath_the_rootfs_is_not_covered)
{
	config_path_beneath_the_rootfs("lowerdir=",
				       "c['mounts'].append({'destination': '/low', 'type': 'overlay', 'source': 'overlay', "
				       "'options': ['ro', 'lowerdir=' + fix + '/lowA:' + fix + '/B/rootfs/low']})",
				       "cat /etc/msg /low/x", "hello-from-rootasm\nfrom-the-engine\n");
}

/*
 * A seccomp listener's socket beneath the engine's rootfs, named by the
 * config's listenerPath or, with @env, by crun's RUN_OCI_SECCOMP_RECEIVER in
 * the delegate's environment (every path in it is judged).
 */
static void seccomp_listener_beneath_the_rootfs(bool env)
{
	char *out;
	pid_t pid;

	fresh();
	mkbundle("B", "{'org.rootasm.layout': 'small.json'}", "cat /etc/msg", true);
	/* the listener: takes one connection (crun sends the notify fd) and says so */
	sh("rm -f %s/listening %s/listened", fix, fix);
	pid = fork();
	if (pid == 0) {
		execlp("python3", "python3", "-c",
		       "import socket, sys\n"
		       "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
		       "s.bind(sys.argv[1] + '/B/rootfs/listener.sock'); s.listen(1); s.settimeout(60)\n"
		       "open(sys.argv[1] + '/listening', 'w').close()\n"
		       "c, _ = s.accept(); c.recvmsg(4096, 64)\n"
		       "open(sys.argv[1] + '/listened', 'w').write('got the notify fd\\n')\n",
		       fix, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 500 && access(path("listening"), F_OK) < 0; i++)
		usleep(10000);
	sh("cd %s/B && python3 -c \"import json; c = json.load(open('config.json')); "
	   "c['linux']['seccomp'] = {'defaultAction': 'SCMP_ACT_ALLOW', 'architectures': ['SCMP_ARCH_X86_64'], "
	   "'syscalls': [{'names': ['acct'], 'action': 'SCMP_ACT_NOTIFY'}]}; "
	   "c['linux']['seccomp']['listenerPath'] = '%s/B/rootfs/listener.sock' if %d else None; "
	   "c['linux']['seccomp'] = {k: v for k, v in c['linux']['seccomp'].items() if v}; "
	   "json.dump(c, open('config.json', 'w'))\" && mount --bind rootfs rootfs", fix, fix, !env);
	if (run_sh(&out, "%s%s " RT " run -b %s/B c-path 2>&1", env ? "RUN_OCI_SECCOMP_RECEIVER=" : "",
		   env ? path("B/rootfs/listener.sock") : "", RTARGS, fix) != 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		FAILF("%s: %s", env ? "RUN_OCI_SECCOMP_RECEIVER" : "listenerPath", out);
	}
	ASSERT_STR(out, "hello-from-rootasm\n");
	waitpid(pid, NULL, 0);
	ASSERT_STR(slurp(path("listened")), "got the notify fd\n");
	sh("umount %s/B/rootfs", fix);
	nothing_left();
}

TEST(a_seccomp_listener_beneath_the_rootfs_is_not_covered)
{
	seccomp_listener_beneath_the_rootfs(false);
}

TEST(a_path_in_the_delegates_environment_beneath_the_rootfs_is_not_covered)
{
	seccomp_listener_beneath_the_rootfs(true);
}

/*
 * The dynamic loader's variables take relative paths from the working
 * directory: LD_LIBRARY_PATH=B/rootfs/lib from the fixture names the
 * engine's rootfs, so the delegate does not run over it (crun then gets
 * rootasm's config: its state has delegate.json); an absolute library
 * directory elsewhere leaves the engine's bundle as it came.
 */
TEST(a_relative_library_path_of_the_delegate_beneath_the_rootfs_is_not_covered)
{
	static const char *const dirs[] = { "B/rootfs/lib", "/usr/lib/x86_64-linux-gnu" };
	char *out;

	fresh();
	mkbundle("B", "{'org.rootasm.layout': 'small.json'}", "cat /etc/msg", true);
	sh("mount --bind %s/B/rootfs %s/B/rootfs", fix, fix);
	for (size_t i = 0; i < 2; i++) {
		if (run_sh(&out, "cd %s && LD_LIBRARY_PATH=%s " RT " create -b %s/B c-ld >%s/c.out 2>&1", fix, dirs[i],
			   RTARGS, fix, fix) != 0)
			FAILF("create, LD_LIBRARY_PATH=%s: %s", dirs[i], slurp(path("c.out")));
		ASSERT_EQ(access(path("root/.rootasm/c-ld/delegate.json"), F_OK) == 0, i == 0);
		ASSERT_EQ(run_sh(&out, RT " delete -f c-ld", RTARGS), 0);
	}
	sh("umount %s/B/rootfs", fix);
	nothing_left();
}

TEST(a_hook_output_file_beneath_the_rootfs_is_not_covered)
{
	config_path_beneath_the_rootfs("run.oci.hooks.stdout",
				       "c['annotations']['run.oci.hooks.stdout'] = fix + '/B/rootfs/hook.out'; "
				       "c['hooks'] = {'prestart': [{'path': '/bin/echo', 'args': ['echo', 'from-the-hook']}]}",
				       "cat /etc/msg", "hello-from-rootasm\n");
	ASSERT_STR(slurp(path("B/rootfs/hook.out")), "from-the-hook\n");
}

/*
 * A hook named through /proc/self/root (a magic link, which resolves): judged
 * as it resolves, beneath the engine's rootfs, so not covered; the hook the
 * engine put there runs. (A namespace's file in /proc, which does not
 * resolve, is the one path of /proc judged as written: host-cri.)
 */
TEST(a_hook_named_through_proc_self_root_is_not_covered)
{
	char *out;

	fresh();
	mkbundle("B", "{'org.rootasm.layout': 'small.json'}", "cat /etc/msg", true);
	put(path("B/rootfs/hook.sh"), 0755, "#!/bin/sh\necho from-the-engines-rootfs >%s/hooked\n", fix);
	sh("cd %s/B && python3 -c \"import json; c = json.load(open('config.json')); "
	   "c['hooks'] = {'prestart': [{'path': '/proc/self/root%s/B/rootfs/hook.sh'}]}; "
	   "json.dump(c, open('config.json', 'w'))\" && mount --bind rootfs rootfs", fix, fix);
	if (run_sh(&out, RT " run -b %s/B c-path 2>&1", RTARGS, fix) != 0)
		FAILF("a hook through /proc/self/root: %s", out);
	ASSERT_STR(out, "hello-from-rootasm\n");
	ASSERT_STR(slurp(path("hooked")), "from-the-engines-rootfs\n");
	sh("umount %s/B/rootfs", fix);
	nothing_left();
}

/*
 * An image whose author planted, where the delegate might be sent beneath
 * the engine's rootfs, symlinks to files of the host and a config.json of
 * its own (whose hook says it ran); layouts/planted.json chooses it. Made
 * once for the tests that use it.
 */
static void planted_layout(void)
{
	char *out, lay[4096];

	if (access(path("layouts/planted.json"), F_OK) == 0)
		return;
	sh("cd %s && rm -rf ptree && cp -a tree ptree && echo hello-from-the-image-author >ptree/etc/msg && "
	   "ln -s %s/victim-hookout ptree/hook.out && ln -s %s/hostsecret ptree/low && mkdir -p ptree/hk ptree/eb && "
	   "printf '#!/bin/sh\\necho the-image-authors-hook >%s/pwned\\n' >ptree/hk/run && chmod 755 ptree/hk/run && "
	   "crun spec && python3 -c \"import json; c = json.load(open('config.json')); c['root']['path'] = 'rootfs'; "
	   "c['process']['args'] = ['true']; c['hooks'] = {'createRuntime': [{'path': '/bin/sh', 'args': ['sh', '-c', "
	   "'echo the-image-authors-config >%s/pwned']}]}; json.dump(c, open('ptree/eb/config.json', 'w'))\" && "
	   "rm config.json && tar -C ptree --numeric-owner -cf p.tar . && %s layout pimg-planted p.tar:gzip >/dev/null",
	   fix, fix, fix, fix, fix, mkoci);
	if (run_sh(&out, "cd %s && %s import --json --tag rt-test/planted:v1 --store %s/st oci:pimg-planted", fix, cli,
		   fix) != 0)
		FAILF("import: %s", out);
	if (sscanf(strstr(out, "\"layout\"") ? strstr(out, "\"layout\"") : "", "\"layout\": \"%4095[^\"]", lay) != 1 &&
	    sscanf(strstr(out, "\"layout\"") ? strstr(out, "\"layout\"") : "", "\"layout\":\"%4095[^\"]", lay) != 1)
		FAILF("import printed no layout: %s", out);
	sh("cp %s %s/layouts/planted.json", lay, fix);
}

/*
 * The engine's bundle E, annotated with the planted image's layout, whose
 * rootfs is B/rootfs (the busybox tree, a mount); @edit: Python on its
 * config c (fix, the fixture). Returns after the mount.
 */
static void planted_bundle(const char *cmd, const char *edit)
{
	fresh();
	planted_layout();
	sh("rm -rf %s/victim-* %s/pwned %s/hostsecret && mkdir -p %s/hostsecret && echo host-secret >%s/hostsecret/secret",
	   fix, fix, fix, fix, fix);
	mkbundle("B", "{}", cmd, true);
	mkbundle("E", "{'org.rootasm.layout': 'planted.json'}", cmd, false);
	sh("cd %s/E && python3 -c \"import json; fix = '%s'; c = json.load(open('config.json')); "
	   "c['root']['path'] = fix + '/B/rootfs'; %s; json.dump(c, open('config.json', 'w'))\" && "
	   "mount --bind %s/B/rootfs %s/B/rootfs", fix, fix, edit, fix, fix);
}

static void planted_done(void)
{
	ASSERT_EQ(access(path("pwned"), F_OK), -1);
	ASSERT_EQ(access(path("victim-hookout"), F_OK), -1);
	sh("umount %s/B/rootfs", fix);
	nothing_left();
}

/*
 * A hook named through a symlink of the host's that leads into the engine's
 * rootfs, where a symlink of the rootfs leads out again: judged at every
 * step, not only as written and as resolved; the engine's hook runs.
 */
static void hook_through_a_symlink_chain(bool runc)
{
	char *out;

	planted_bundle("cat /etc/msg", "c['hooks'] = {'createRuntime': [{'path': fix + '/hk/run'}]}");
	sh("mkdir -p %s/hooks && printf '#!/bin/sh\\necho the-engines-hook >%s/engine-hook\\n' >%s/hooks/run && "
	   "chmod 755 %s/hooks/run && ln -s ../../hooks %s/B/rootfs/hk && ln -sfn %s/B/rootfs/hk %s/hk && rm -f %s/engine-hook",
	   fix, fix, fix, fix, fix, fix, fix, fix);
	if (run_sh(&out, "%s run -b %s/E c-chain", rt_with(runc), fix) != 0)
		FAILF("%s: %s", runc ? "runc" : "crun", out);
	ASSERT_STR(out, "hello-from-the-image-author\n");
	ASSERT_STR(slurp(path("engine-hook")) ?: "", "the-engines-hook\n");
	planted_done();
}

TEST(a_hook_through_a_symlink_chain_is_not_covered)
{
	hook_through_a_symlink_chain(false);
}

TEST(a_hook_through_a_symlink_chain_is_not_covered_with_runc)
{
	need_runc();
	hook_through_a_symlink_chain(true);
}

/* --bundle through a symlink of the engine's rootfs: judged as given too (the delegate resolves it so) */
TEST(a_bundle_given_through_the_rootfs_is_not_covered)
{
	char *out;

	planted_bundle("cat /etc/msg", "pass");
	sh("ln -s %s/E %s/B/rootfs/eb", fix, fix);
	if (run_sh(&out, RT " run -b %s/B/rootfs/eb c-eb", RTARGS, fix) != 0)
		FAILF("run: %s", out);
	ASSERT_STR(out, "hello-from-the-image-author\n");
	planted_done();
}

/*
 * Option words the delegate reads otherwise than rootasm-runtime would
 * (crun's abbreviations, -fFILE): refused for a create rootasm acts on,
 * passed on as they came for one it does not.
 */
TEST(options_the_delegate_reads_otherwise_are_refused)
{
	static const char *const words[][2] = { { "--pid=", "/B/rootfs/ctr.pid" }, { "-f", "/B/rootfs/eb/config.json" },
						{ "--bund=", "/E" }, { "-db", "/E" }, { "-bundle=", "/E" },
						{ "--detach=false --bundle=", "/E" }, { "-b ", "/E" } };
	char *out, word[4200];

	planted_bundle("cat /etc/msg", "pass");
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		snprintf(word, sizeof(word), "%s%s%s", words[i][0], fix, words[i][1]);
		ASSERT_EQ(run_sh(&out, RT " create %s -b %s/E c-opt", RTARGS, word, fix), 1);
		ASSERT_CONTAINS(out, "not one rootasm-runtime reads as the delegate would");
		ASSERT_CONTAINS(out, strtok(word, " "));
		ASSERT_TRUE(strchr(out, '\n') == out + strlen(out) - 1);
	}
	/* an engine's bundle without rootasm's annotation: crun takes them as they are */
	ASSERT_EQ(run_sh(&out, RT " create --pid=%s/c.pid -b %s/B c-opt && " RT " start c-opt && sleep 0.2 && "
			 RT " delete c-opt", RTARGS, fix, fix, RTARGS, RTARGS), 0);
	ASSERT_STR(out, "hello-from-the-bundle\n");
	ASSERT_TRUE(*slurp(path("c.pid")));
	planted_done();
}

/* Mount options: a value holding several keys, a relative lowerdir (the bundle's), an escaped one */
TEST(every_lowerdir_of_a_mount_option_is_judged)
{
	static const char *const opts[] = { "'redirect_dir=off,lowerdir=' + fix + '/B/rootfs/low:' + fix + '/lowA'",
					    "'lowerdir=../B/rootfs/low:' + fix + '/lowA'",
					    /* (overlayfs unescapes: B/root\fs is B/rootfs, with runc: mount(2)) */
					    "'lowerdir=' + fix + '/B/root\\\\\\\\fs/low:' + fix + '/lowA'" };
	char *out, edit[1024];

	need_runc();
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		snprintf(edit, sizeof(edit), "c['mounts'].append({'destination': '/lowmnt', 'type': 'overlay', "
			 "'source': 'overlay', 'options': ['ro', %s]})", opts[i]);
		planted_bundle("cat /etc/msg /lowmnt/secret", edit);
		sh("mkdir -p %s/lowA %s/B/rootfs/low && echo from-the-engine >%s/B/rootfs/low/secret", fix, fix, fix);
		if (run_sh(&out, "%s run -b %s/E c-low", i == 2 ? rt_with(true) : rt_with(false), fix) != 0)
			FAILF("%s: %s", opts[i], out);
		ASSERT_STR(out, "hello-from-the-image-author\nfrom-the-engine\n");
		planted_done();
	}
}

/*
 * Whether a create of the engine's bundle E (planted_bundle(), @edit on its
 * config, @env before the command, run from the fixture) runs over the
 * engine's rootfs: crun then gets no config of rootasm's.
 */
static bool runs_over(const char *env, const char *edit, bool alias)
{
	char *out;
	bool over;

	planted_bundle("cat /etc/msg", edit);
	/* (with @alias, the engine's rootfs mounted at alias/ too) */
	if (alias)
		sh("mkdir -p %s/alias && mount --bind %s/B/rootfs %s/alias", fix, fix, fix);
	if (run_sh(&out, "cd %s && %s " RT " create -b %s/E c-over >%s/c.out 2>&1", fix, env, RTARGS, fix, fix) != 0)
		FAILF("create (%s; %s): %s", env, edit, slurp(path("c.out")));
	over = access(path("root/.rootasm/c-over/delegate.json"), F_OK) < 0;
	ASSERT_EQ(run_sh(&out, RT " delete -f c-over", RTARGS), 0);
	if (alias)
		sh("umount %s/alias", fix);
	planted_done();
	return over;
}

/*
 * What a hook's arguments and environment name (it runs in the delegate's
 * namespace), the loader's $ORIGIN and ';', a judged key spelt otherwise
 * (runc's decoder takes "Hooks" for "hooks"), a step that is the rootfs by
 * another name (a bind mount of it here; a case-folding directory alike):
 * each keeps the tree off the engine's rootfs.
 */
TEST(what_hooks_loader_and_keys_name_is_judged)
{
	static const char *const cases[][2] = {
		{ "", "c['hooks'] = {'prestart': [{'path': '/bin/true', 'env': ['LD_LIBRARY_PATH=' + fix + '/B/rootfs/lib']}]}" },
		{ "", "c['hooks'] = {'prestart': [{'path': '/bin/true', 'args': ['true', '--conf=' + fix + '/B/rootfs/c']}]}" },
		{ "LD_PRELOAD='$ORIGIN/x.so'", "pass" },
		{ "LD_LIBRARY_PATH='/usr/lib;B/rootfs/lib'", "pass" },
		{ "", "c['Hooks'] = {'prestart': [{'path': fix + '/B/rootfs/hk/run'}]}" },
		{ "", "c['hooks'] = {'prestart': [{'path': fix + '/alias/bin/sh', 'args': ['sh', '-c', 'true']}]}" },
	};

	ASSERT_TRUE(runs_over("", "pass", true));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (runs_over(cases[i][0], cases[i][1], i == 5))
			FAILF("the tree over the engine's rootfs with %s; %s", cases[i][0], cases[i][1]);
}

/* crun's run.oci.hooks.stdout, relative: the bundle's file (judged as joined to it) */
TEST(a_relative_hook_output_file_is_the_bundles)
{
	char *out;

	planted_bundle("cat /etc/msg", "c['annotations']['run.oci.hooks.stdout'] = '../B/rootfs/hook.out'; "
		       "c['hooks'] = {'prestart': [{'path': '/bin/echo', 'args': ['echo', 'from-the-hook']}]}");
	if (run_sh(&out, RT " run -b %s/E c-hout", RTARGS, fix) != 0)
		FAILF("run: %s", out);
	ASSERT_STR(out, "hello-from-the-image-author\n");
	ASSERT_STR(slurp(path("B/rootfs/hook.out")) ?: "", "from-the-hook\n");
	planted_done();
}

TEST(a_rootfs_that_holds_the_bundle_is_not_covered)
{
	rootfs_holding_the_bundle(false);
}

TEST(a_rootfs_that_holds_the_bundle_is_not_covered_with_runc)
{
	need_runc();
	rootfs_holding_the_bundle(true);
}

TEST(a_hook_that_edits_the_rootfs_edits_the_tree)
{
	hook_edits_the_tree(false);
}

TEST(a_hook_that_edits_the_rootfs_edits_the_tree_with_runc)
{
	need_runc();
	hook_edits_the_tree(true);
}

/*
 * runtime.conf's delegate_config: a delegate under another name (a wrapper
 * that executes crun) gets --config and the engine's bundle when it says yes,
 * the private bundle by default (auto: by the name) and with no; a value it
 * does not know is refused in one line naming the file and line.
 */
TEST(delegate_config_says_whether_the_delegate_takes_config)
{
	static const char *const says[] = { NULL, "yes", "no", "auto" };
	char *out;

	fresh();
	sh("mkdir -p %s/bin && printf '#!/bin/sh\\necho \"$*\" >>%s/wrap.log\\nexec crun \"$@\"\\n' >%s/bin/oci-wrap && "
	   "chmod 0755 %s/bin/oci-wrap", fix, fix, fix, fix);
	mkbundle("B", "{'org.rootasm.layout': 'small.json'}", "cat /etc/msg", false);
	setenv("ROOTASM_RUNTIME_CONFIG", path("rt.conf"), 1);
	for (size_t i = 0; i < sizeof(says) / sizeof(says[0]); i++) {
		put(path("rt.conf"), 0644, "layouts = %s/layouts\n%s%s%s", fix, says[i] ? "delegate_config = " : "",
		    says[i] ? says[i] : "", says[i] ? "\n" : "");
		sh("rm -f %s/wrap.log", fix);
		if (run_sh(&out, "%s --delegate %s/bin/oci-wrap --root %s/root --cgroup-manager=disabled run -b %s/B c-dc",
			   rt, fix, fix, fix) != 0)
			FAILF("delegate_config %s: %s", says[i] ? says[i] : "(none)", out);
		ASSERT_STR(out, "hello-from-rootasm\n");
		out = slurp(path("wrap.log"));
		if (says[i] && !strcmp(says[i], "yes")) {
			ASSERT_CONTAINS(out, "--config ");
			ASSERT_CONTAINS(out, "/root/.rootasm/c-dc/delegate.json");
		} else {
			ASSERT_TRUE(!strstr(out, "--config"));
			ASSERT_CONTAINS(out, "/root/.rootasm/c-dc/bundle");
		}
		nothing_left();
	}
	put(path("rt.conf"), 0644, "# the delegate\ndelegate_config = maybe\n");
	ASSERT_EQ(run_sh(&out, "%s --delegate %s/bin/oci-wrap --root %s/root run -b %s/B c-dc", rt, fix, fix, fix), 1);
	ASSERT_CONTAINS(out, "rt.conf:2: delegate_config is 'auto', 'yes' or 'no', not 'maybe'");
	ASSERT_TRUE(strchr(out, '\n') == out + strlen(out) - 1);
	unsetenv("ROOTASM_RUNTIME_CONFIG");
	nothing_left();
}

/*
 * rootasm-runtime create of B as @id, with the delegate slow (a script of
 * the caller's that writes slow.pid and hangs), killed with SIGKILL once the
 * tree is attached; the delegate dies with it, and is killed as well.
 */
static void create_killed(const char *id)
{
	char mnt[256];
	pid_t pid;
	int st;

	sh("rm -f %s/slow.pid", fix);
	snprintf(mnt, sizeof(mnt), "root/.rootasm/%s/bundle/rootfs", id);
	pid = fork();
	ASSERT_TRUE(pid >= 0);
	if (pid == 0) {
		execl(rt, rt, "--delegate", path("slow"), "--root", path("root"), "--cgroup-manager=disabled", "create",
		      "-b", path("B"), id, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 500 && access(path("slow.pid"), F_OK) < 0; i++)
		usleep(10000);
	ASSERT_EQ(access(path("slow.pid"), F_OK), 0);
	ASSERT_TRUE(count_mounts_under(path(mnt)) > 0);
	ASSERT_EQ(kill(pid, SIGKILL), 0);
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	/* (the delegate dies with it: PR_SET_PDEATHSIG; what it forked does not) */
	sh("kill -KILL $(cat %s/slow.pid) 2>/dev/null; true", fix);
	ASSERT_TRUE(count_mounts_under(path(mnt)) > 0);
}

/*
 * No process of root's runs with the environment rootasm-runtime gave the
 * delegate of @id's create (RT_ENV_STATE): what the delegate forked or
 * executed before the container's own process; FAILF with them otherwise.
 */
static void no_process_of_the_create(const char *id, const char *when)
{
	char want[4200], found[1024] = "";
	size_t n = 0;
	DIR *d = opendir("/proc");
	struct dirent *e;

	/* (read here, not by a shell per process: that cost 1.9 s a look, 24 looks a case) */
	snprintf(want, sizeof(want), "ROOTASM_RUNTIME_STATE=%s/root/.rootasm/%s", fix, id);
	ASSERT_TRUE(d != NULL);
	while ((e = readdir(d))) {
		char p[300], env[65536];
		struct stat st;
		ssize_t len;

		snprintf(p, sizeof(p), "/proc/%s", e->d_name);
		if (stat(p, &st) < 0 || st.st_uid != 0)
			continue;
		len = harness_proc_read(e->d_name, "environ", env, sizeof(env));
		for (char *v = env; v < env + len; v += strlen(v) + 1)
			if (!strcmp(v, want) && n < sizeof(found) - 16)
				n += snprintf(found + n, sizeof(found) - n, "/proc/%s\n", e->d_name);
	}
	closedir(d);
	if (*found)
		FAILF("%s: a process of the create outlived its delete: %s", when, found);
}

TEST(create_killed_midway_is_cleaned_up_by_delete_and_by_the_next_create)
{
	char *out;

	fresh();
	mkbundle("B", "{'org.rootasm.layout': 'small.json'}", "cat /etc/msg", false);
	/*
	 * a delegate whose create hangs: rootasm-runtime is killed once the tree
	 * is attached; the delegate dies with it, what it started (as crun its
	 * container's process) does not
	 */
	sh("printf '#!/bin/sh\\ncase \" $* \" in *\" create \"*) echo $$ >%s/slow.pid; sleep 60 & exec sleep 60;; esac\\n"
	   "exec crun \"$@\"\\n' >%s/slow && chmod +x %s/slow", fix, fix, fix);
	/*
	 * anyone can claim to be of the create (the variable): another user's
	 * processes are not looked at (nor killed), and however many of root's
	 * claim it, more than the fds delete may open, the real one is killed
	 */
	sh("for i in $(seq 80); do setpriv --reuid=65534 --regid=65534 --clear-groups "
	   "env ROOTASM_RUNTIME_STATE=%s/root/.rootasm/c-kill sleep 100 >/dev/null 2>&1 & done; "
	   "for i in $(seq 40); do env ROOTASM_RUNTIME_STATE=%s/root/.rootasm/c-kill sleep 100 >/dev/null 2>&1 & done",
	   fix, fix);
	for (int round = 0; round < 2; round++) {
		create_killed("c-kill");
		if (round == 0) {
			/* a write that was killed midway left its temporary file: nothing the id's delete cannot free */
			sh("touch %s/root/.rootasm/c-kill/bundle/.config.json.0123456789abcdef", fix);
			/* crun never heard of it: delete says so, and detaches rootasm's tree all the same */
			run_sh(&out, "ulimit -n 24 && " RT " delete c-kill", RTARGS);
			nothing_left();
			no_process_of_the_create("c-kill", "delete");
			/* (alive: not killed and left a zombie of the harness's) */
			ASSERT_EQ(run_sh(&out, "pgrep -c -r S -u 65534 -x sleep"), 0);
			ASSERT_STR(out, "80\n");
			sh("pkill -u 65534 -x sleep; true");
		} else {
			/* the next create of the id finds the leftover, cleans it up, and runs */
			ASSERT_EQ(run_sh(&out, RT " create -b %s/B c-kill >%s/c.out 2>&1", RTARGS, fix, fix), 0);
			ASSERT_EQ(run_sh(&out, RT " start c-kill && sleep 0.2 && " RT " delete c-kill", RTARGS, RTARGS), 0);
			ASSERT_STR(slurp(path("c.out")), "hello-from-rootasm\n");
			nothing_left();
			no_process_of_the_create("c-kill", "the next create");
		}
	}
}

/*
 * delete of a killed create in a pid namespace of its own whose /proc is
 * still ours (the parent's): a process here claims the create, and in that
 * namespace another has its pid. Refused in one line before anything is
 * done, so the other is not killed for the pid /proc showed; from here,
 * the same delete frees the id.
 */
TEST(delete_in_a_pid_namespace_without_its_proc_kills_nothing)
{
	char *out;
	pid_t marked;

	fresh();
	mkbundle("B", "{'org.rootasm.layout': 'small.json'}", "cat /etc/msg", false);
	sh("printf '#!/bin/sh\\ncase \" $* \" in *\" create \"*) echo $$ >%s/slow.pid; exec sleep 60;; esac\\n"
	   "exec crun \"$@\"\\n' >%s/slow && chmod +x %s/slow", fix, fix, fix);
	create_killed("c-pns");
	marked = fork();
	ASSERT_TRUE(marked >= 0);
	if (marked == 0) {
		char env[4200];

		snprintf(env, sizeof(env), "ROOTASM_RUNTIME_STATE=%s/root/.rootasm/c-pns", fix);
		execle("/bin/sleep", "sleep", "100", (char *)NULL, (char *[]){ env, NULL });
		_exit(127);
	}
	/* in the new namespace: a process with the marked one's pid, then the delete */
	ASSERT_EQ(run_sh(&out, "unshare -p -f --kill-child=SIGKILL sh -c 'echo %d >/proc/sys/kernel/ns_last_pid && "
			 "{ sleep 100 & v=$!; } && [ $v = %d ] && " RT " delete c-pns; echo \"delete $?\"; "
			 "kill -0 $v && echo alive'", (int)marked - 1, (int)marked, RTARGS), 0);
	ASSERT_CONTAINS(out, "/proc is not of this process's pid namespace");
	ASSERT_CONTAINS(out, "delete 1\nalive\n");
	kill(marked, SIGKILL);
	waitpid(marked, NULL, 0);
	/* (crun never heard of it: delete says so, and detaches rootasm's tree all the same) */
	run_sh(&out, RT " delete c-pns", RTARGS);
	nothing_left();
}

/*
 * SIGKILL of create at any point (the delays span a whole create): the id is
 * freed by the engine's delete -f, with nothing left (no state, no mount, no
 * loop device), and no delegate outlives the create it was started by. With
 * @over, an engine's bundle whose rootfs is a mount, which the delegate runs
 * in a mount namespace of its own (one that holds the tree): no process of
 * the create is left after the delete either.
 */
static pid_t start_rootasmd(void);
static void stop_rootasmd(pid_t pid);

static void create_killed_anywhere(bool over, bool via)
{
	char *out, ann[4200];
	int caught_delegate = 0;
	pid_t daemon = -1;

	fresh();
	/* (through rootasmd: over the engine's rootfs, its tree is attached only in the delegate's namespace) */
	if (via)
		daemon = start_rootasmd();
	snprintf(ann, sizeof(ann), "{'org.rootasm.layout': 'small.json'%s%s%s}", via ? ", 'org.rootasm.via': '" : "",
		 via ? fix : "", via ? "/rootasmd.sock'" : "");
	mkbundle("B", ann, "sleep 30", over);
	if (over)
		sh("mount --bind %s/B/rootfs %s/B/rootfs", fix, fix);
	/* the delegate says its pid, then is crun */
	sh("printf '#!/bin/sh\ncase \" $* \" in *\" create \"*) echo $$ >>%s/deleg.pids;; esac\nexec crun \"$@\"\n' "
	   ">%s/deleg && chmod +x %s/deleg", fix, fix, fix);
	for (int round = 0; round < 24; round++) {
		pid_t pid;
		int st;

		sh("rm -f %s/deleg.pids", fix);
		pid = fork();
		ASSERT_TRUE(pid >= 0);
		if (pid == 0) {
			int null = open("/dev/null", O_RDWR | O_CLOEXEC);

			dup2(null, 1);
			dup2(null, 2);
			execl(rt, rt, "--delegate", path("deleg"), "--root", path("root"), "--cgroup-manager=disabled",
			      "create", "-b", path("B"), "c-any", (char *)NULL);
			_exit(127);
		}
		usleep(round * 2500);
		kill(pid, SIGKILL);
		ASSERT_EQ(waitpid(pid, &st, 0), pid);
		/* the delegate it had started is gone with it, or had finished (dead: a zombie of the harness's, at most) */
		if (access(path("deleg.pids"), F_OK) == 0) {
			for (int i = 0; i < 20; i++) {
				/* (its status is the last pid's grep: an empty answer is the one that counts) */
				run_sh(&out, "for p in $(cat %s/deleg.pids); do ps -o stat= -p $p | grep -qv Z && echo $p; done; true",
				       fix);
				if (!*out)
					break;
				usleep(10000);
			}
			if (*out) {
				char *ps;

				*strchrnul(out, '\n') = '\0';
				run_sh(&ps, "ps -o pid,ppid,sid,stat,wchan:20,args -p %s; grep -E 'PPid|State' /proc/%s/status; "
				       "ps -eo pid,ppid,sid,stat,args | grep -E 'crun|deleg' | grep -v grep", out, out);
				FAILF("round %d (killed after %d ms): the delegate outlived the create: %s", round,
				      round * 5 / 2, ps);
			}
			caught_delegate++;
		}
		if (run_sh(&out, RT " delete -f c-any", RTARGS) != 0)
			FAILF("round %d (killed after %d ms): delete -f: %s", round, round * 5 / 2, out);
		if (over)
			sh("umount %s/B/rootfs", fix);
		nothing_left();
		ASSERT_EQ(run_sh(&out, "crun --root %s/root list -q | grep -c c-any", fix), 1);
		no_process_of_the_create("c-any", "delete -f");
		if (over)
			sh("mount --bind %s/B/rootfs %s/B/rootfs", fix, fix);
	}
	if (over)
		sh("umount %s/B/rootfs", fix);
	if (via)
		stop_rootasmd(daemon);
	/* the delays reached the delegate's part of create */
	ASSERT_TRUE(caught_delegate > 0);
}

TEST(create_killed_anywhere_is_freed_by_delete)
{
	create_killed_anywhere(false, false);
}

TEST(create_killed_anywhere_over_the_engines_rootfs_is_freed_by_delete)
{
	create_killed_anywhere(true, false);
}

TEST(create_killed_anywhere_over_the_engines_rootfs_through_rootasmd_is_freed_by_delete)
{
	create_killed_anywhere(true, true);
}

TEST(twenty_containers_at_once)
{
	char *out;

	fresh();
	mkbundle("B", "{'org.rootasm.layout': 'small.json'}", "cat /etc/msg", false);
	/* one bundle for all: each gets a private copy */
	sh("cd %s && rm -f rc && for i in $(seq 1 20); do (" RT " run -b %s/B c-many-$i >out.$i 2>&1; echo $? >>rc) & "
	   "done; wait", fix, RTARGS, fix);
	ASSERT_EQ(run_sh(&out, "cd %s && sort rc | uniq -c | tr -s ' '", fix), 0);
	ASSERT_STR(out, " 20 0\n");
	ASSERT_EQ(run_sh(&out, "cd %s && cat out.* | sort | uniq -c | tr -s ' '", fix), 0);
	ASSERT_STR(out, " 20 hello-from-rootasm\n");
	nothing_left();
}

/*
 * org.rootasm.via: rootasmd (started here; no rule in its policy: root is
 * served as an administrator) assembles the layout the other annotation
 * chose; the tree is attached in the private bundle (over an engine's rootfs
 * that is a mount, only in the delegate's namespace), the config's own bind
 * stays crun's. A bundle that is not root's is refused: the daemon would
 * judge rootasm-runtime, not the bundle's owner.
 */
/*
 * rootasmd on the fixture's rootasmd.sock, its log in rootasmd.log (no rule
 * in its policy: root is served as an administrator), serving when this
 * returns; rootasm-runtime's configured socket (ROOTASM_RUNTIME_SOCKET).
 */
static pid_t start_rootasmd(void)
{
	pid_t pid;
	int st;

	put(path("policy.json"), 0644, "{\"rootasmd-policy\": 1, \"rules\": []}\n");
	pid = fork();
	if (pid < 0)
		FAILF("fork: %s", strerror(errno));
	if (pid == 0) {
		int log = open(path("rootasmd.log"), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (log < 0 || dup2(log, 2) < 0)
			_exit(127);
		execl(daemon_bin, daemon_bin, "--socket", path("rootasmd.sock"), "--policy", path("policy.json"),
		      (char *)NULL);
		_exit(127);
	}
	for (int i = 0; !strstr(slurp(path("rootasmd.log")) ?: "", "serving on"); i++) {
		if (i == 500 || waitpid(pid, &st, WNOHANG) == pid)
			FAILF("rootasmd did not start: %s", slurp(path("rootasmd.log")) ?: "");
		usleep(10000);
	}
	setenv("ROOTASM_RUNTIME_SOCKET", path("rootasmd.sock"), 1);
	return pid;
}

static void stop_rootasmd(pid_t pid)
{
	int st;

	ASSERT_EQ(kill(pid, SIGTERM), 0);
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	unsetenv("ROOTASM_RUNTIME_SOCKET");
}

TEST(via_annotation_assembles_through_rootasmd)
{
	char *out, ann[4200];
	pid_t pid;

	fresh();
	pid = start_rootasmd();
	snprintf(ann, sizeof(ann), "{'org.rootasm.layout': 'small.json', 'org.rootasm.via': '%s/rootasmd.sock'}", fix);
	mkbundle("B", ann, "cat /etc/msg /vol/v; grep -c ' /scratch ' /proc/self/mountinfo", false);
	ASSERT_EQ(run_sh(&out, RT " run -b %s/B c-via", RTARGS, fix), 0);
	ASSERT_STR(out, "hello-from-rootasm\nvolume-data\n1\n");
	nothing_left();
	ASSERT_EQ(run_sh(&out, RT " create -b %s/B c-via >%s/c.out 2>&1", RTARGS, fix, fix), 0);
	ASSERT_EQ(access(path("root/.rootasm/c-via/via.mnt"), F_OK), 0);
	ASSERT_TRUE(count_mounts_under(path("root/.rootasm/c-via/bundle/rootfs")) >= 2);
	ASSERT_EQ(run_sh(&out, RT " start c-via && sleep 0.2 && " RT " delete c-via", RTARGS, RTARGS), 0);
	ASSERT_CONTAINS(slurp(path("c.out")), "hello-from-rootasm\n");
	nothing_left();
	/*
	 * runc, for a container without a mount namespace, binds the rootfs onto
	 * itself in ours, on rootasmd's tree: delete detaches that first, then
	 * the tree (it failed 'Device or resource busy' and kept the id)
	 */
	need_runc();
	sh("cd %s/B && python3 -c \"import json; c = json.load(open('config.json')); "
	   "c['linux']['namespaces'] = [n for n in c['linux']['namespaces'] if n['type'] != 'mount']; "
	   "[c['linux'].pop(k, None) for k in ('maskedPaths', 'readonlyPaths')]; "
	   "json.dump(c, open('config.json', 'w'))\"", fix);
	if (run_sh(&out, "%s run -b %s/B c-via-runc", rt_with(true), fix) != 0)
		FAILF("runc, via, no mount namespace: %s", out);
	ASSERT_CONTAINS(out, "hello-from-rootasm\nvolume-data\n");
	nothing_left();
	/*
	 * A user's bundle through rootasmd: the request says whom the tree is
	 * for ("as": uid 1000, limited to the layout directory) and the daemon
	 * judges it as that user's: nosuid,nodev, as the same bundle gets
	 * without rootasmd; root's bundle gets neither. (Refused before, by a
	 * rule of the runtime's own.)
	 */
	snprintf(ann, sizeof(ann), "{'org.rootasm.layout': 'small.json', 'org.rootasm.via': '%s/rootasmd.sock'}", fix);
	for (int user = 0; user < 2; user++) {
		for (int via = 1; via >= 0; via--) {
			mkbundle("U", via ? ann : "{'org.rootasm.layout': 'small.json'}",
				 "cat /etc/msg; grep -o ' / / [^ ]*' /proc/self/mountinfo", false);
			/* (its volume by absolute path: U/.. would be reached through the user's directory) */
			if (user)
				sh("sed -i 's|\"\\.\\./vol\"|\"%s/vol\"|' %s/U/config.json && chown 1000:1000 %s/U", fix, fix,
				   fix);
			if (run_sh(&out, RT " run -b %s/U c-u", RTARGS, fix) != 0)
				FAILF("user %d via %d: %s", user, via, out);
			ASSERT_CONTAINS(out, "hello-from-rootasm\n / / ");
			if (user) {
				ASSERT_CONTAINS(out, ",nosuid,nodev");
			} else {
				ASSERT_TRUE(!strstr(out, "nosuid"));
			}
			nothing_left();
		}
	}
	/* what a user's bundle chooses outside the layout directory is refused as before, through rootasmd too */
	snprintf(ann, sizeof(ann), "{'org.rootasm.layout': '../outside.json', 'org.rootasm.via': '%s/rootasmd.sock'}",
		 fix);
	sh("cp %s/layouts/small.json %s/outside.json", fix, fix);
	mkbundle("U", ann, "true", false);
	sh("chown 1000:1000 %s/U", fix);
	ASSERT_EQ(run_sh(&out, RT " run -b %s/U c-u", RTARGS, fix), 1);
	ASSERT_CONTAINS(out, "annotation org.rootasm.layout '../outside.json': ");
	ASSERT_CONTAINS(out, "must be a clean absolute path");
	nothing_left();
	for (int user = 0; user < 2; user++) {
		snprintf(ann, sizeof(ann), "{'org.rootasm.layout': '%s/outside.json', 'org.rootasm.via': "
			 "'%s/rootasmd.sock'}", fix, fix);
		mkbundle("U", ann, "true", false);
		if (user)
			sh("chown 1000:1000 %s/U", fix);
		ASSERT_EQ(run_sh(&out, RT " run -b %s/U c-u", RTARGS, fix), 1);
		ASSERT_CONTAINS(out, user ? "in none of the layout directories allowed to uid 1000 gid 1000" :
					    "in none of the layout directories allowed to administrator");
		nothing_left();
	}
	/*
	 * Over the engine's rootfs (a mount, as an engine's is): rootasmd's tree
	 * goes to the delegate's namespace as it came, attached nowhere in ours
	 * (no private bundle, no record of it in the state); delete leaves nothing
	 */
	snprintf(ann, sizeof(ann), "{'org.rootasm.layout': 'small.json', 'org.rootasm.via': '%s/rootasmd.sock'}", fix);
	mkbundle("B", "{}", "cat /etc/msg /vol/v", true);
	mkbundle("E", ann, "cat /etc/msg /vol/v", false);
	sh("cd %s/E && python3 -c \"import json; c = json.load(open('config.json')); c['root']['path'] = '%s/B/rootfs'; "
	   "json.dump(c, open('config.json', 'w'))\" && mount --bind %s/B/rootfs %s/B/rootfs", fix, fix, fix, fix);
	ASSERT_EQ(run_sh(&out, RT " create -b %s/E c-over >%s/c.out 2>&1", RTARGS, fix, fix), 0);
	ASSERT_EQ(run_sh(&out, "ls %s/root/.rootasm/c-over", fix), 0);
	ASSERT_STR(out, "created\n");
	ASSERT_EQ(count_mounts_under(path("root")), 0);
	ASSERT_EQ(run_sh(&out, RT " start c-over && sleep 0.2 && " RT " delete c-over", RTARGS, RTARGS), 0);
	ASSERT_STR(slurp(path("c.out")), "hello-from-rootasm\nvolume-data\n");
	sh("umount %s/B/rootfs", fix);
	nothing_left();
	stop_rootasmd(pid);
}

/*
 * podman, rootful, its storage and run directories the fixture's (the
 * machine's podman storage is not touched), cgroups off (the sandbox this
 * runs in may not raise RLIMIT_MEMLOCK for crun's device filter): podman's
 * own image without the annotation, rootasm's tree with it, a refused
 * annotation in podman's error. podman 4.3 gives the runtime's delete neither
 * the environment nor --runtime-flag options: the runtime is configured by
 * its config file, named here by a wrapper (an administrator's is
 * /etc/rootasm/runtime.conf), and keeps its state in root= of it.
 */
/*
 * podman's fixture: a fresh one, /run/crun (crun's default --root: podman
 * gives none) and /run/containers (podman's network directory) the test's,
 * rootasm-runtime behind a wrapper naming the fixture's runtime.conf
 * (podman 4.3 gives the runtime's delete neither its environment nor
 * --runtime-flag options), and a containers.conf that lets it run crun's way.
 */
static void podman_setup(void)
{
	fresh();
	private_run("/run/crun");
	private_run("/run/containers");
	if (system("command -v podman >/dev/null") != 0)
		FAILF("podman is not installed (ci/deps installs it)");
	sh("mkdir -p %s/bin && printf '#!/bin/sh\\nunset ROOTASM_RUNTIME_LAYOUTS ROOTASM_STORE\\n"
	   "export ROOTASM_RUN_DIR=%s/run ROOTASM_RUNTIME_CONFIG=%s/runtime.conf\\nexec %s \"$@\"\\n' "
	   ">%s/bin/rootasm-runtime && chmod +x %s/bin/rootasm-runtime", fix, fix, fix, rt, fix, fix);
	sh("printf 'delegate = crun\\nlayouts = %s/layouts\\nstore = %s/st\\nroot = %s/root\\n' >%s/runtime.conf", fix, fix,
	   fix, fix);
	sh("printf '[engine]\\nruntime_supports_json = [\"crun\", \"rootasm-runtime\"]\\n"
	   "runtime_supports_nocgroup = [\"crun\", \"rootasm-runtime\"]\\n' >%s/containers.conf", fix);
	setenv("CONTAINERS_CONF", path("containers.conf"), 1);
}

TEST(podman_runs_its_image_and_rootasms_tree)
{
	char *out;
	int rc;

	podman_setup();
#define PODMAN "podman --root %s/pstore --runroot %s/prun --tmpdir %s/ptmp --storage-driver vfs " \
	"--cgroup-manager cgroupfs --events-backend none --runtime %s/bin/rootasm-runtime "
#define PODMAN_ARGS fix, fix, fix, fix
#define RUN "run --pull never --rm --network none --cgroups disabled --ulimit nofile=1024:1024 " \
	"--ulimit nproc=1024:1024 "
	/* into podman's storage, as podman pull would (pull names it after the directory) */
	ASSERT_EQ(run_sh(&out, "skopeo copy -q oci:%s/pimg:v1 containers-storage:[vfs@%s/pstore+%s/prun]localhost/rtimg:v1",
			 fix, fix, fix), 0);
	ASSERT_EQ(run_sh(&out, PODMAN RUN "localhost/rtimg:v1 cat /etc/msg", PODMAN_ARGS), 0);
	ASSERT_STR(out, "hello-from-the-bundle\n");
	ASSERT_EQ(run_sh(&out, PODMAN RUN "--annotation org.rootasm.layout=small.json localhost/rtimg:v1 "
			 "sh -c 'cat /etc/msg; grep -c \" /scratch \" /proc/self/mountinfo'", PODMAN_ARGS), 0);
	ASSERT_STR(out, "hello-from-rootasm\n1\n");
	nothing_left();
	rc = run_sh(&out, PODMAN RUN "--annotation org.rootasm.layout=/etc/passwd localhost/rtimg:v1 true", PODMAN_ARGS);
	ASSERT_TRUE(rc != 0);
	ASSERT_CONTAINS(out, "rootasm-runtime: create ");
	ASSERT_CONTAINS(out, "annotation org.rootasm.layout '/etc/passwd': open layout /etc/passwd: Operation not permitted (the layout file lies in /etc, in none of the layout directories allowed to administrator (");
	nothing_left();
	/* a layout that is not there is the runtime's error, not "a command that was not found" (podman 4.3 exits 127 for both) */
	rc = run_sh(&out, PODMAN RUN "--annotation org.rootasm.layout=missing.json localhost/rtimg:v1 true", PODMAN_ARGS);
	fprintf(stderr, "  podman's exit status for a missing layout: %d\n", rc);
	ASSERT_TRUE(rc != 0);
	ASSERT_CONTAINS(out, "OCI runtime error: ");
	ASSERT_CONTAINS(out, "annotation org.rootasm.layout 'missing.json': open ");
	ASSERT_CONTAINS(out, ": not found (ENOENT)");
	ASSERT_TRUE(!strstr(out, "command that was not found"));
	nothing_left();
	ASSERT_EQ(run_sh(&out, PODMAN "ps -aq", PODMAN_ARGS), 0);
	ASSERT_STR(out, "");
	private_run_done("/run/crun");
	private_run_done("/run/containers");
}

/*
 * podman's overlay driver, an annotation naming the store's copy of podman's
 * own image (the same layers by diff-id, as containers/storage's layers.json
 * says of the container's layer): the container's writes go to podman's
 * writable layer of it, so podman diff, export and commit see them. Another
 * image's tree: podman sees none of them, and its log says so.
 */
TEST(podman_sees_what_its_own_image_on_rootasms_tree_wrote)
{
	char *out;

	podman_setup();
#define PODMAN_OV "podman --root %s/postore --runroot %s/porun --tmpdir %s/ptmp --storage-driver overlay " \
	"--cgroup-manager cgroupfs --events-backend none --runtime %s/bin/rootasm-runtime "
#define RUN_KEEP "run --pull never --network none --cgroups disabled --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 "
	ASSERT_EQ(run_sh(&out, "skopeo copy -q oci:%s/pimg:v1 containers-storage:[overlay@%s/postore+%s/porun]localhost/rtimg:v1",
			 fix, fix, fix), 0);
	/* the same image in rootasm's store */
	ASSERT_EQ(run_sh(&out, "%s import --tag rt-test/pimg:v1 --store %s/st oci:%s/pimg:v1", cli, fix, fix), 0);
	ASSERT_EQ(run_sh(&out, PODMAN_OV RUN_KEEP "--name own "
			 "--annotation org.rootasm.image=rt-test/pimg:v1 localhost/rtimg:v1 sh -c "
			 "'grep \" / / \" /proc/self/mountinfo | grep -c lowerdir+=; echo new >/etc/written; rm /etc/msg'",
			 PODMAN_ARGS) == 0 ? 0 : (fprintf(stderr, "%s\n", out), 1), 0);
	ASSERT_STR(out, "1\n");
	ASSERT_EQ(run_sh(&out, PODMAN_OV "diff own", PODMAN_ARGS), 0);
	ASSERT_CONTAINS(out, "A /etc/written\n");
	ASSERT_CONTAINS(out, "D /etc/msg\n");
	ASSERT_EQ(run_sh(&out, PODMAN_OV "export own | tar -xOf - etc/written; " PODMAN_OV "export own | tar -tf - | "
			 "grep -c etc/msg", PODMAN_ARGS, PODMAN_ARGS), 1);
	ASSERT_STR(out, "new\n0\n");
	ASSERT_EQ(run_sh(&out, PODMAN_OV "commit -q own localhost/committed:v1 >/dev/null && " PODMAN_OV RUN
			 "localhost/committed:v1 sh -c 'cat /etc/written; "
			 "test -e /etc/msg || echo gone'", PODMAN_ARGS, PODMAN_ARGS), 0);
	ASSERT_STR(out, "new\ngone\n");
	ASSERT_EQ(run_sh(&out, PODMAN_OV "rm own", PODMAN_ARGS), 0);
	/* another image (the layout's): podman's layer gets nothing, and its log a warning */
	ASSERT_EQ(run_sh(&out, PODMAN_OV RUN_KEEP "--name other "
			 "--annotation org.rootasm.image=rt-test/img:v1 localhost/rtimg:v1 sh -c "
			 "'cat /etc/msg; echo new >/etc/written'", PODMAN_ARGS), 0);
	ASSERT_STR(out, "hello-from-rootasm\n");
	ASSERT_EQ(run_sh(&out, PODMAN_OV "diff other", PODMAN_ARGS), 0);
	ASSERT_TRUE(!strstr(out, "/etc/written"));
	ASSERT_EQ(run_sh(&out, PODMAN_OV "rm other && " PODMAN_OV "rmi -a -f >/dev/null", PODMAN_ARGS, PODMAN_ARGS), 0);
	nothing_left();
	private_run_done("/run/crun");
	private_run_done("/run/containers");
}

/*
 * containerd 1.6, started here on its own config and socket (its root and
 * state the fixture's, /run/containerd a tmpfs of the test's), the image
 * imported by containerd itself (ctr images import of the OCI layout's tar,
 * the native snapshotter: no mount of containerd's), run with
 * `ctr run --runc-binary` through the runc v2 shim, without cgroups (--cgroup
 * "", the delegate crun --cgroup-manager=disabled: the sandbox this runs in
 * may not raise RLIMIT_MEMLOCK for crun's device filter).
 */
TEST(containerd_runs_its_image_and_rootasms_tree)
{
	char *out;
	pid_t pid;
	int rc, st;

	fresh();
	if (system("command -v containerd >/dev/null && command -v ctr >/dev/null") != 0)
		FAILF("containerd is not installed (ci/deps installs it)");
	private_run("/run/containerd");
	/* deploy/'s runtime handler is one containerd takes as it is */
	sh("cd %s && (echo 'version = 2'; cat %s/containerd-rootasm.toml) >ctd-handler.toml", fix, deploy_dir);
	ASSERT_EQ(run_sh(&out, "containerd --config %s/ctd-handler.toml config dump", fix), 0);
	ASSERT_CONTAINS(out, "pod_annotations = [\"org.rootasm.*\"]");
	ASSERT_CONTAINS(out, "BinaryName = \"/usr/bin/rootasm-runtime\"");
	sh("mkdir -p %s/ctd %s/bin", fix, fix);
	put(path("ctd/config.toml"), 0644,
	    "version = 2\nroot = \"%s/ctd/root\"\nstate = \"%s/ctd/state\"\n"
	    "disabled_plugins = [\"io.containerd.grpc.v1.cri\"]\n"
	    "[grpc]\n  address = \"%s/ctd/ctd.sock\"\n[ttrpc]\n  address = \"%s/ctd/ttrpc.sock\"\n", fix, fix, fix, fix);
	put(path("bin/crun-nocg"), 0755, "#!/bin/sh\nexec crun --cgroup-manager=disabled \"$@\"\n");
	put(path("bin/rootasm-runtime-ctd"), 0755,
	    "#!/bin/sh\nexport ROOTASM_RUN_DIR=%s/run ROOTASM_RUNTIME_CONFIG=%s/ctd/runtime.conf\nexec %s \"$@\"\n", fix,
	    fix, rt);
	put(path("ctd/runtime.conf"), 0644, "delegate = %s/bin/crun-nocg\nlayouts = %s/layouts\nstore = %s/st\n", fix, fix,
	    fix);
	pid = fork();
	ASSERT_TRUE(pid >= 0);
	if (pid == 0) {
		int fd = open(path("ctd/containerd.log"), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(127);
		execlp("containerd", "containerd", "--config", path("ctd/config.toml"), (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 300 && access(path("ctd/ctd.sock"), F_OK) < 0; i++)
		usleep(10000);
#define CTR "ctr -a %s/ctd/ctd.sock -n rootasmtest "
#define CTR_RUN CTR "run --rm --snapshotter native --cgroup '' --runc-binary %s/bin/rootasm-runtime-ctd "
	rc = run_sh(&out, "cd %s && tar -C pimg -cf pimg.tar . && " CTR "images import --snapshotter native "
		    "--base-name localhost/rtimg pimg.tar", fix, fix);
	if (rc == 0)
		rc = run_sh(&out, CTR_RUN "localhost/rtimg:v1 c-plain cat /etc/msg", fix, fix);
	if (rc == 0 && strcmp(out, "hello-from-the-bundle\n"))
		rc = -1;
	if (rc == 0)
		rc = run_sh(&out, CTR_RUN "--annotation org.rootasm.layout=small.json localhost/rtimg:v1 c-layout "
			    "sh -c 'cat /etc/msg; grep -c \" /scratch \" /proc/self/mountinfo'", fix, fix);
	if (rc == 0 && strcmp(out, "hello-from-rootasm\n1\n"))
		rc = -1;
	if (rc == 0 && run_sh(&out, CTR_RUN "--annotation org.rootasm.layout=/etc/passwd localhost/rtimg:v1 c-bad true",
			      fix, fix) != 0 &&
	    strstr(out, "annotation org.rootasm.layout '/etc/passwd': open layout /etc/passwd: Operation not permitted (the layout file lies in /etc, in none of the layout directories allowed to administrator ("))
		rc = 0;
	else if (rc == 0)
		rc = -2;
	kill(pid, SIGTERM);
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	if (rc)
		FAILF("containerd (status %d): %s\n%s", rc, out, slurp(path("ctd/containerd.log")));
	nothing_left();
	private_run_done("/run/containerd");
}

/* The /run directories private_run() may make; those made are removed at the end even when a test failed. */
static const char *const run_dirs[] = { "/run/crun", "/run/containers", "/run/containerd" };
static bool run_dir_was[3];

static void cleanup(void)
{
	if (getpid() != main_pid)
		return;
	sh("rm -rf %s", fix);
	for (size_t i = 0; i < 3; i++)
		if (!run_dir_was[i])
			rmdir(run_dirs[i]);	/* empty: the tmpfs went with the test's namespace */
}

int main(int argc, char **argv)
{
	char *out;

	if (argc < 6) {
		fprintf(stderr, "usage: %s ROOTASM_RUNTIME ROOTASM MKOCI ROOTASMD DEPLOY-DIR\n", argv[0]);
		return 2;
	}
	rt = realpath(argv[1], NULL);
	cli = realpath(argv[2], NULL);
	mkoci = realpath(argv[3], NULL);
	daemon_bin = realpath(argv[4], NULL);
	deploy_dir = realpath(argv[5], NULL);
	if (!rt || !cli || !mkoci || !daemon_bin || !deploy_dir)
		return 2;
	if (geteuid() != 0)
		return harness_main(argc, argv);
	snprintf(fix, sizeof(fix), "%s/rootasm-runtime-XXXXXX",
		 getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(fix))
		return 2;
	main_pid = getpid();
	for (size_t i = 0; i < 3; i++)
		run_dir_was[i] = access(run_dirs[i], F_OK) == 0;
	atexit(cleanup);
	/* bundle records and the runtime's configuration: the fixture's, not the machine's */
	setenv("ROOTASM_RUN_DIR", path("run"), 1);
	setenv("ROOTASM_RUNTIME_LAYOUTS", path("layouts"), 1);
	setenv("ROOTASM_STORE", path("st"), 1);
	setenv("ROOTASM_RUNTIME_CONFIG", path("no-runtime.conf"), 1);
	unsetenv("ROOTASM_RUNTIME_DELEGATE");
	unsetenv("ROOTASM_RUNTIME_SOCKET");
	/* a busybox tree; as a layer image of the store, and as a bundle's own rootfs */
	sh("cd %s && chmod 0755 . && mkdir -p tree/bin tree/etc tree/proc tree/dev tree/sys tree/vol tree/scratch && "
	   "cp /bin/busybox tree/bin/ && for x in sh cat echo grep sleep id; do ln -s busybox tree/bin/$x; done", fix);
	sh("cd %s && echo hello-from-rootasm >tree/etc/msg && tar -C tree --numeric-owner -cf l.tar . && "
	   "%s layout img l.tar:gzip >/dev/null", fix, mkoci);
	if (run_sh(&out, "cd %s && %s import --json --tag rt-test/img:v1 --store %s/st oci:img", fix, cli, fix) != 0)
		FAILF("import: %s", out);
	if (sscanf(strstr(out, "\"layout\"") ? strstr(out, "\"layout\"") : "", "\"layout\": \"%4095[^\"]", layout) != 1 &&
	    sscanf(strstr(out, "\"layout\"") ? strstr(out, "\"layout\"") : "", "\"layout\":\"%4095[^\"]", layout) != 1)
		FAILF("import printed no layout: %s", out);
	if (sscanf(strstr(out, "\"manifest\"") ? strstr(out, "\"manifest\"") : "", "\"manifest\":\"%79[^\"]", manifest) != 1 &&
	    sscanf(strstr(out, "\"manifest\"") ? strstr(out, "\"manifest\"") : "", "\"manifest\": \"%79[^\"]", manifest) != 1)
		FAILF("import printed no manifest: %s", out);
	/* the administrator's layout directory: the image, with a tmpfs volume of the layout's own */
	sh("cd %s && mkdir -p layouts && python3 -c \"import json; l = json.load(open('%s')); "
	   "l['mounts'] = [{'tmpfs': '/scratch', 'options': ['size=8m']}]; json.dump(l, open('layouts/small.json', 'w'))\"",
	   fix, layout);
	/* the bundle's own rootfs says so (the pass-through runs it), and so does podman's image of it */
	sh("cd %s && echo hello-from-the-bundle >tree/etc/msg && tar -C tree --numeric-owner -cf p.tar . && "
	   "%s layout pimg --tag v1 p.tar:gzip >/dev/null", fix, mkoci);
	if (chdir(fix) < 0)
		return 2;
	return harness_main(argc, argv);
}
