// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What the engine sees of an annotated container is what the delegate alone
 * would show it (the runtime spec's state). Over an engine's rootfs
 * (RT_RUN_OVER) the delegate runs the engine's bundle as it came, and crun
 * runs the engine's bundle with rootasm's config (--config: state.c): their
 * state and hooks are the engine's already. Otherwise (RT_RUN_PRIVATE) a
 * delegate runs the private bundle, so its state
 * names that bundle and carries the annotation bundle prepare adds
 * (org.rootasm.prepared). Here the state is given back as the engine's:
 *
 *   state ID     the delegate's answer with "bundle" the engine's bundle (kept
 *                in ID/engine-bundle at create) and without rootasm's own
 *                annotation
 *   hooks        those the runtime runs in its own namespace (prestart,
 *                createRuntime, poststart, poststop), and createContainer,
 *                which runs in the container's namespaces but before
 *                pivot_root (its path resolves in the runtime's: the spec's
 *                rule, runc's way), are run through `rootasm-runtime hook`,
 *                which gives them that state on stdin; startContainer runs in
 *                the container after pivot_root, where this binary is not,
 *                and sees the delegate's
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "open.h"
#include "runtime.h"
#include "util.h"

#define STATE_MAX	(1u << 20)

/* The delegate's state @st as the engine's: its bundle, the annotations it gave. */
static int engine_state(json_t *st, const char *engine_bundle)
{
	json_t *ann = json_object_get(st, "annotations");

	if (json_is_object(ann))
		json_object_del(ann, RT_ANN_PREPARED);
	return json_object_set_new(st, "bundle", json_string(engine_bundle));
}

static const char *const wrapped[] = { "prestart", "createRuntime", "createContainer", "poststart", "poststop" };

int rt_hooks_wrap(json_t *cfg, const char *engine_bundle)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	json_t *hooks = json_object_get(cfg, "hooks");

	if (!json_is_object(hooks))
		return 0;
	if (n <= 0 || (size_t)n >= sizeof(self) - 1)
		return rt_error("readlink /proc/self/exe: %s", n < 0 ? strerror(errno) : "too long");
	self[n] = '\0';
	for (size_t k = 0; k < ARRAY_SIZE(wrapped); k++) {
		json_t *list = json_object_get(hooks, wrapped[k]), *h;
		size_t i;

		json_array_foreach(list, i, h) {
			const char *path = json_string_value(json_object_get(h, "path"));
			json_t *args = json_object_get(h, "args"), *a = json_array(), *v;
			size_t j;

			if (!path || !a)
				continue;	/* the delegate refuses it as it would */
			/* rootasm-runtime hook ENGINE-BUNDLE PATH -- ARGS... (no ARGS: argv is PATH alone) */
			json_array_append_new(a, json_string(RT_NAME));
			json_array_append_new(a, json_string("hook"));
			json_array_append_new(a, json_string(engine_bundle));
			json_array_append_new(a, json_string(path));
			json_array_append_new(a, json_string("--"));
			json_array_foreach(args, j, v)
				json_array_append(a, v);
			if (json_object_set_new(h, "args", a) < 0 || json_object_set_new(h, "path", json_string(self)) < 0)
				return rt_error("out of memory");
		}
	}
	return 0;
}

/* Read all of @fd (at most STATE_MAX). */
static char *read_all(int fd, size_t *len)
{
	char *buf = NULL;

	if (ra_read_all(fd, STATE_MAX, NULL, NULL, &buf, len) < 0)
		return NULL;
	return buf;
}

int rt_cmd_hook(int argc, char **argv)
{
	_cleanup_free_ char *in = NULL, *out = NULL;
	const char *bundle, *path, *b;
	char **hargv, *none[2];
	size_t len = 0;
	json_t *st;
	int fd;

	/* hook ENGINE-BUNDLE PATH -- ARGS... */
	if (argc < 4 || strcmp(argv[3], "--"))
		return rt_error("hook: ENGINE-BUNDLE PATH -- ARGS... (a hook rootasm-runtime wrapped)"), 1;
	bundle = argv[1];
	path = argv[2];
	hargv = argc > 4 ? argv + 4 : none;
	none[0] = (char *)path;
	none[1] = NULL;
	in = read_all(STDIN_FILENO, &len);
	st = in ? json_loadb(in, len, 0, NULL) : NULL;
	/* the state as the engine's; anything else as it came */
	if (st && json_is_object(st) && engine_state(st, bundle) == 0)
		out = json_dumps(st, JSON_COMPACT);
	json_decref(st);
	if (out)
		len = strlen(out);
	b = out ? out : in ? in : "";
	/*
	 * The hook is executed in our place, the state on its standard input
	 * from a memfd: no process of ours waits in between, so the runtime's
	 * timeout and kill reach the hook itself (a child of ours outlived a
	 * killed wrapper, and runc waited for its pipes), and nothing of ours
	 * stays in the container's namespaces (createContainer's).
	 */
	fd = memfd_create("rootasm-hook-state", MFD_CLOEXEC);
	if (fd < 0)
		return rt_error("hook: memfd: %s", strerror(errno)), 1;
	for (size_t off = 0; off < len;) {
		ssize_t w = write(fd, b + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return rt_error("hook: write its state: %s", w < 0 ? strerror(errno) : "short write"), 1;
		off += (size_t)w;
	}
	if (lseek(fd, 0, SEEK_SET) < 0 || dup2(fd, STDIN_FILENO) < 0)
		return rt_error("hook: its standard input: %s", strerror(errno)), 1;
	close(fd);
	rt_log_flush();
	execv(path, hargv);
	return rt_error("hook: execute %s: %s", path, strerror(errno)), 127;
}

int rt_state_view(char **argv, const char *engine_bundle)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	json_t *st;
	int p[2], status;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return rt_error("state: pipe: %s", strerror(errno));
	rt_log_flush();
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return rt_error("state: fork: %s", strerror(errno));
	if (pid == 0) {
		if (dup2(p[1], STDOUT_FILENO) < 0)
			_exit(127);
		execv(argv[0], argv);
		fprintf(stderr, RT_NAME ": execute %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(p[1]);
	buf = read_all(p[0], &len);
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return rt_error("state: wait: %s", strerror(errno));
	status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	st = status == 0 && buf ? json_loadb(buf, len, 0, NULL) : NULL;
	if (st && json_is_object(st) && engine_state(st, engine_bundle) == 0) {
		json_dumpf(st, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
	} else if (buf) {
		fwrite(buf, 1, len, stdout);
	}
	json_decref(st);
	return fflush(stdout) == 0 ? status : 1;
}
