// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rootasm-runtime [GLOBAL OPTION...] COMMAND [OPTION...] [ID]
 *
 * A runc-compatible OCI runtime front (the nvidia-container-runtime pattern):
 * every command line goes to the real runtime, the delegate (--delegate,
 * $ROOTASM_RUNTIME_DELEGATE, delegate= in the config file, else crun, then
 * runc, on PATH), with the same global options (--root, --log, --log-format,
 * --systemd-cgroup, --debug, ...) and arguments:
 *
 *   anything but create, run, delete    execv of the delegate: nothing done
 *   create/run, no rootasm annotation   the same: the bundle reaches the
 *   (or a Kubernetes pod's sandbox)     delegate exactly as it came
 *   create/run with org.rootasm.layout, org.rootasm.image (and
 *   org.rootasm.via)                    the choice checked (choose.c), the
 *                                       tree assembled for the bundle's owner
 *                                       into a private bundle (state.c), the
 *                                       delegate run (forked: a failure is
 *                                       cleaned up at once) on the engine's
 *                                       bundle with the tree over its rootfs
 *                                       in a mount namespace of its own, or
 *                                       with rootasm's config, or on the
 *                                       private bundle (enum rt_run)
 *   delete                              the delegate's delete, then what
 *                                       rootasm attached for the id detached
 *                                       (also after a create that failed or
 *                                       was killed)
 *   state of an annotated container     the delegate's, as the engine's
 *   hook (from a hook's args)           the state to a wrapped hook (spec.c)
 *
 * Errors of rootasm-runtime's own are one line on stderr and, when the engine
 * gave --log, in its log in --log-format (text or json), where podman and
 * containerd read a runtime's error from; exit status 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dl.h"
#include "open.h"
#include "runtime.h"
#include "uapi.h"
#include "util.h"

#define CONFIG_MAX	(4u << 20)	/* config.json, as bundle prepare reads it */

static const char help[] =
	"Usage: " RT_NAME " [GLOBAL OPTION...] COMMAND [OPTION...] [ID]\n"
	"An OCI runtime with the command line of runc and crun (create, start, state, kill,\n"
	"delete, run, exec, ps, pause, resume, features, ...) that delegates every command\n"
	"to the real runtime, and gives a container a tree rootasm assembled when its\n"
	"bundle's config.json asks for one by annotation:\n"
	"\n"
	"  org.rootasm.layout=PATH   a layout in the layout directory (layouts=, default\n"
	"                            " RT_LAYOUTS "): relative to it, or absolute inside it\n"
	"  org.rootasm.image=REF     an image of the store (store=, $ROOTASM_STORE, default\n"
	"                            " RT_STORE "): its name NAME[:TAG], its manifest digest\n"
	"                            sha256:HEX or the layout path `rootasm import` printed\n"
	"  org.rootasm.via=SOCKET    assembled by rootasmd at SOCKET (the configured socket=,\n"
	"                            default " RT_SOCKET "), for the bundle's owner\n"
	"\n"
	"The tree is assembled for the bundle's owner and attached in a private bundle under\n"
	"ROOT/" RT_STATE_SUBDIR "/ID (ROOT: --root, else root=, default " RT_DEFAULT_ROOT ");\n"
	"the engine's bundle and rootfs are left untouched; delete detaches it. state and\n"
	"the hooks show the engine's bundle, as without rootasm: an engine's bundle (root's,\n"
	"its rootfs a mount) is run as it came, in a mount namespace of the delegate's own\n"
	"where the tree covers that rootfs; otherwise crun runs the engine's bundle with\n"
	"rootasm's config (--config; delegate_config = yes|no|auto: by the name), another\n"
	"delegate runs the private one, and the hooks but startContainer go through\n"
	"`" RT_NAME " hook`. A Kubernetes container of containerd's without\n"
	"such an annotation runs on rootasm's tree of its own image (unannotated = image,\n"
	"the default): containerd's manifest of it, from the engine's store STORE/engine\n"
	"(which org.rootasm.image does not reach), imported from containerd's content\n"
	"store when not there.\n"
	"Without an annotation otherwise (unannotated = pass, podman, ctr run), and for a\n"
	"Kubernetes pod's sandbox (pause) container, the delegate is executed with the\n"
	"same arguments.\n"
	"\n"
	"Global options of rootasm-runtime's own (before COMMAND):\n"
	"  --delegate PATH   the real runtime (else $ROOTASM_RUNTIME_DELEGATE, delegate= in\n"
	"                    the config file, crun, runc on PATH)\n"
	"  -h, --help        this text (COMMAND --help: the delegate's)\n"
	"  -v, --version     the version, then the delegate's\n"
	"Every other option is the delegate's and is passed on (--root, --log, --log-format,\n"
	"--systemd-cgroup, --cgroup-manager, --debug, ...).\n"
	"\n"
	"Config file: " RT_CONFIG " ($ROOTASM_RUNTIME_CONFIG), lines KEY = VALUE (delegate,\n"
	"delegate_config, layouts, store, socket, root, unannotated, containerd); the\n"
	"environment wins:\n"
	"ROOTASM_RUNTIME_DELEGATE, ROOTASM_RUNTIME_LAYOUTS, ROOTASM_STORE, ROOTASM_RUNTIME_SOCKET,\n"
	"ROOTASM_RUNTIME_ROOT.\n"
	"ROOTASM_RUNTIME_TIMES=1: create and run say each stage's time on stderr.\n"
	"Exit status: the delegate's; 1 when rootasm-runtime fails or refuses.\n";

/* The engine's command line, split. */
struct cmdline {
	char **argv;		/* for the delegate: [0] the delegate, globals, command, its arguments */
	int argc;
	int cmd;		/* index of the command in argv, or -1 */
	const char *root, *log, *log_format;
	bool help, version;
};

/* ------------------------------------------------------------------ config */

static int set_once(char **field, const char *v)
{
	if (*field || !v || !*v)
		return 0;
	*field = strdup(v);
	return *field ? 0 : rt_error("out of memory");
}

int rt_conf_load(struct rt_conf *c)
{
	static int loaded;		/* 1: read (or missing); -1: refused, said once */
	const char *path = secure_getenv("ROOTASM_RUNTIME_CONFIG");
	_cleanup_close_ int fd = -EBADF;
	_cleanup_free_ char *buf = NULL;
	unsigned int lineno = 0;
	struct stat st;
	char why[512];
	size_t len = 0;
	char *line, *next;
	int r;

	if (loaded)
		return loaded < 0 ? -1 : 0;
	loaded = -1;
	if (!path || !*path)
		path = RT_CONFIG;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 && errno == ENOENT) {
		loaded = 1;
		return 0;
	}
	if (fd < 0)
		return rt_error("%s: %s", path, strerror(errno));
	/* it names the runtime that runs as root: the administrator's alone */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022))
		return rt_error("%s: not a regular file of root's that nobody else can write", path);
	if (ra_admin_trusted_path(fd, AT_FDCWD, path, 0, why, sizeof(why)) < 0)
		return rt_error("%s: %s", path, why);
	r = ra_read_all(fd, 64u << 10, NULL, NULL, &buf, &len);
	if (r < 0)
		return rt_error("%s: %s", path, r == -EFBIG ? "larger than 64 KiB" : strerror(-r));
	for (line = buf; line; line = next) {
		char *eq, *k, *v, *end;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		line += strspn(line, " \t");
		if (!*line || *line == '#')
			continue;
		eq = strchr(line, '=');
		if (!eq)
			return rt_error("%s:%u: not KEY = VALUE", path, lineno);
		for (end = eq; end > line && (end[-1] == ' ' || end[-1] == '\t'); end--)
			;
		*end = '\0';
		k = line;
		v = eq + 1 + strspn(eq + 1, " \t");
		for (end = v + strlen(v); end > v && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'); end--)
			;
		*end = '\0';
		if (!strcmp(k, "delegate"))
			r = set_once(&c->delegate, v);
		else if (!strcmp(k, "layouts"))
			r = set_once(&c->layouts, v);
		else if (!strcmp(k, "store"))
			r = set_once(&c->store, v);
		else if (!strcmp(k, "socket"))
			r = set_once(&c->socket, v);
		else if (!strcmp(k, "root"))
			r = set_once(&c->root, v);
		else if (!strcmp(k, "containerd"))
			r = set_once(&c->containerd, v);
		else if (!strcmp(k, "unannotated") && (!strcmp(v, "image") || !strcmp(v, "pass")))
			r = set_once(&c->unannotated, v);
		else if (!strcmp(k, "unannotated"))
			return rt_error("%s:%u: unannotated is 'image' or 'pass', not '%s'", path, lineno, v);
		else if (!strcmp(k, "delegate_config") && (!strcmp(v, "auto") || !strcmp(v, "yes") || !strcmp(v, "no")))
			r = set_once(&c->delegate_config, v);
		else if (!strcmp(k, "delegate_config"))
			return rt_error("%s:%u: delegate_config is 'auto', 'yes' or 'no', not '%s'", path, lineno, v);
		else if (!strcmp(k, "import_layer_max") && rt_layer_max(v, &(uint64_t){ 0 }) == 0)
			r = set_once(&c->import_layer_max, v);
		else if (!strcmp(k, "import_layer_max"))
			return rt_error("%s:%u: import_layer_max is a size (k, m, g, t), a percentage of memory (1-100%%) "
					"or 0, not '%s'", path, lineno, v);
		else if (!strcmp(k, "imports") && rt_imports(v) > 0)
			r = set_once(&c->imports, v);
		else if (!strcmp(k, "imports"))
			return rt_error("%s:%u: imports is a number 1-64, not '%s'", path, lineno, v);
		else
			return rt_error("%s:%u: unknown key '%s' (delegate, delegate_config, layouts, store, socket, root, "
					"unannotated, containerd, import_layer_max, imports)", path, lineno, k);
		if (r < 0)
			return r;
	}
	loaded = 1;
	return 0;
}

/* The configuration's fields still unset from the environment, the file and the defaults. */
static int conf_fill(struct rt_conf *c)
{
	if (set_once(&c->delegate, secure_getenv("ROOTASM_RUNTIME_DELEGATE")) < 0 ||
	    set_once(&c->layouts, secure_getenv("ROOTASM_RUNTIME_LAYOUTS")) < 0 ||
	    set_once(&c->store, secure_getenv("ROOTASM_STORE")) < 0 ||
	    set_once(&c->socket, secure_getenv("ROOTASM_RUNTIME_SOCKET")) < 0 ||
	    set_once(&c->root, secure_getenv("ROOTASM_RUNTIME_ROOT")) < 0 || rt_conf_load(c) < 0 ||
	    set_once(&c->layouts, RT_LAYOUTS) < 0 || set_once(&c->store, RT_STORE) < 0 ||
	    set_once(&c->socket, RT_SOCKET) < 0 || set_once(&c->root, RT_DEFAULT_ROOT) < 0 ||
	    set_once(&c->unannotated, "image") < 0)
		return -1;
	if (!c->engine_store && asprintf(&c->engine_store, "%s/" RT_ENGINE_STORE, c->store) < 0) {
		c->engine_store = NULL;
		return rt_error("out of memory");
	}
	return 0;
}

/* ---------------------------------------------------------------- delegate */

/* @name as execv() takes it: as it is with a '/', else found on PATH. Caller frees; NULL: not found. */
static char *find_program(const char *name)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save = NULL, *found = NULL;

	if (strchr(name, '/'))
		return access(name, X_OK) == 0 ? strdup(name) : NULL;
	copy = strdup(path && *path ? path : "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
	for (dir = copy ? strtok_r(copy, ":", &save) : NULL; dir && !found; dir = strtok_r(NULL, ":", &save)) {
		if (asprintf(&found, "%s/%s", *dir ? dir : ".", name) < 0)
			found = NULL;
		else if (access(found, X_OK) < 0) {
			free(found);
			found = NULL;
		}
	}
	free(copy);
	return found;
}

/* The delegate's path into cl->argv[0]; never this program itself. */
static int delegate_find(struct cmdline *cl, struct rt_conf *c)
{
	static const char *const fallback[] = { "crun", "runc" };
	struct stat self, st;
	char *p = NULL;

	if (set_once(&c->delegate, secure_getenv("ROOTASM_RUNTIME_DELEGATE")) < 0)
		return -1;
	if (!c->delegate && (rt_conf_load(c) < 0))
		return -1;
	if (c->delegate) {
		p = find_program(c->delegate);
		if (!p)
			return rt_error("the delegate runtime %s: not found or not executable", c->delegate);
	}
	for (size_t i = 0; !p && i < ARRAY_SIZE(fallback); i++)
		p = find_program(fallback[i]);
	if (!p)
		return rt_error("no delegate runtime: neither crun nor runc on PATH (give --delegate, "
				"ROOTASM_RUNTIME_DELEGATE or delegate= in " RT_CONFIG ")");
	if (stat("/proc/self/exe", &self) == 0 && stat(p, &st) == 0 && self.st_dev == st.st_dev &&
	    self.st_ino == st.st_ino) {
		rt_error("the delegate runtime %s is rootasm-runtime itself", p);
		free(p);
		return -1;
	}
	cl->argv[0] = p;
	return 0;
}

static char **rt_argv;	/* main()'s, for rt_exec_full() */

int rt_exec_full(void)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	_cleanup_close_ int dfd = -EBADF, fd = -EBADF;
	struct stat me, st;
	char *slash;

	if (n <= 0 || n >= (ssize_t)sizeof(self) - 1 || stat("/proc/self/exe", &me) < 0)
		return rt_error("/proc/self/exe: %s", n < 0 ? strerror(errno) : "not a path of this executable");
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (!slash)
		return rt_error("/proc/self/exe: %s: not a path", self);
	*slash = '\0';
	/* beside this executable (no symlink), of root's or its owner's, that nobody else can write, not itself */
	dfd = open(*self ? self : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0)
		fd = openat(dfd, RT_FULL, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		return rt_error("%s/" RT_FULL ": %s", self, strerror(errno));
	if (!S_ISREG(st.st_mode) || (st.st_uid != 0 && st.st_uid != me.st_uid) || (st.st_mode & 022))
		return rt_error("%s/" RT_FULL ": not a file of root's (or of " RT_NAME "'s owner) that only its owner can "
				"write", self);
	if (st.st_dev == me.st_dev && st.st_ino == me.st_ino)
		return rt_error("%s/" RT_FULL ": this very " RT_NAME " (static: it cannot do what it hands over)", self);
	rt_log_flush();
	fflush(stdout);
	execveat(fd, "", rt_argv, environ, AT_EMPTY_PATH);
	return rt_error("execute %s/" RT_FULL ": %s", self, strerror(errno));
}

static int exec_delegate(struct cmdline *cl)
{
	rt_log_flush();
	fflush(stdout);
	execv(cl->argv[0], cl->argv);
	return rt_error("execute %s: %s", cl->argv[0], strerror(errno));
}

/*
 * Run the delegate with @argv and wait for it, passing on the signals an
 * engine sends its runtime. Returns its exit status (128 + N for signal N),
 * or -1 (said). @quiet: its stdout and stderr go to /dev/null.
 */
static bool delegate_exited;	/* run_delegate()'s delegate exited (was not killed by a signal) */

/*
 * @envp: the delegate's environment (NULL: ours); @over: run it in a mount
 * namespace of its own with the tree over the engine's rootfs (NULL: in
 * ours).
 */
static int run_delegate(char **argv, bool quiet, char **envp, const struct rt_over *over)
{
	static const int fwd[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH };
	sigset_t set, old;
	pid_t pid, self;
	int st;

	sigemptyset(&set);
	for (size_t i = 0; i < ARRAY_SIZE(fwd); i++)
		sigaddset(&set, fwd[i]);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, &old);
	rt_log_flush();
	fflush(stdout);
	self = getpid();
	/*
	 * vfork(): no copy of our page tables for a child that only execs (we
	 * wait until it has). The child touches no memory of ours but its stack
	 * frame and writes no stdio buffer; no signal handler of ours exists to
	 * run in it.
	 */
	pid = vfork();
	if (pid < 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		return rt_error("fork: %s", strerror(errno));
	}
	if (pid == 0) {
		char msg[PATH_MAX + 128];
		int fd, n;

		/*
		 * The delegate dies with us: a create killed midway must not leave a
		 * delegate that goes on creating the container after the engine's
		 * delete -f found nothing to delete (and so holds the tree's mounts).
		 */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != self)
			_exit(127);
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (quiet) {
			fd = open("/dev/null", O_RDWR | O_CLOEXEC);
			if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
				_exit(127);
		}
		if (over && rt_over_enter(over, msg, sizeof(msg) - 1) < 0) {
			n = (int)strlen(msg);
			msg[n++] = '\n';
			(void)!write(2, msg, (size_t)n);
			_exit(127);
		}
		execve(argv[0], argv, envp ? envp : environ);
		/* (said with one write(), not stdio: its buffers are our memory; ENOENT as log.c says it) */
		/* (strerrordesc_np(): a static string, where strerror() may allocate for an unknown errno) */
		n = snprintf(msg, sizeof(msg), RT_NAME ": execute %s: %s\n", argv[0],
			     errno == ENOENT ? "not found (ENOENT)" : strerrordesc_np(errno) ?: "unknown error");
		if (n > 0)
			(void)!write(2, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
		_exit(127);
	}
	rt_time("delegate-started");
	for (;;) {
		siginfo_t si;
		pid_t w = waitpid(pid, &st, WNOHANG);

		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			sigprocmask(SIG_SETMASK, &old, NULL);
			return rt_error("wait for %s: %s", argv[0], strerror(errno));
		}
		if (sigwaitinfo(&set, &si) > 0 && si.si_signo != SIGCHLD)
			kill(pid, si.si_signo);
	}
	rt_time("delegate-exited");
	sigprocmask(SIG_SETMASK, &old, NULL);
	delegate_exited = WIFEXITED(st);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static bool opt_is(const char *arg, const char *const *names, const char **val);

/*
 * The delegate's "state ID", silenced and without --log (the engine reads
 * that file for the error of the command it ran, not of this question):
 * whether it knows the container.
 */
static bool delegate_knows(struct cmdline *cl, const char *id)
{
	static const char *const logs[] = { "log", "log-format", "log-level", NULL };
	char **argv = calloc((size_t)cl->cmd + 3, sizeof(*argv));
	const char *v;
	int n = 0, st;

	if (!argv)
		return true;	/* in doubt, it does: nothing is cleaned up */
	for (int i = 0; i < cl->cmd; i++) {
		if (i > 0 && opt_is(cl->argv[i], logs, &v)) {
			i += !v;	/* and its value */
			continue;
		}
		argv[n++] = cl->argv[i];
	}
	argv[n++] = (char *)"state";
	argv[n] = (char *)id;
	st = run_delegate(argv, true, NULL, NULL);
	free(argv);
	return st != 1 && st != 0 ? true : st == 0;
}

/* ------------------------------------------------------------ command line */

/* The option's name without its dashes, the value after '=' in *val. */
static bool opt_is(const char *arg, const char *const *names, const char **val)
{
	const char *a = arg + strspn(arg, "-");
	size_t n = strcspn(a, "=");

	for (; *names; names++) {
		if (strlen(*names) == n && !strncmp(a, *names, n)) {
			*val = a[n] == '=' ? a + n + 1 : NULL;
			return true;
		}
	}
	return false;
}

static const char *const g_with_value[] = { "root", "log", "log-format", "log-level", "criu", "rootless",
					    "cgroup-manager", NULL };

/* The global options before the command: ours taken out, the rest passed on. */
static int parse_globals(int argc, char **argv, struct cmdline *cl, struct rt_conf *c)
{
	static const char *const delegate[] = { "delegate", NULL }, *const hlp[] = { "help", "h", NULL },
				 *const ver[] = { "version", "v", NULL }, *const root[] = { "root", NULL },
				 *const logn[] = { "log", NULL }, *const logf[] = { "log-format", NULL };
	int i;

	cl->argv = calloc((size_t)argc + 4, sizeof(*cl->argv));
	if (!cl->argv)
		return rt_error("out of memory");
	cl->argc = 1;
	cl->cmd = -1;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = NULL;

		if (a[0] != '-' || !a[1])
			break;
		if (!strcmp(a, "--")) {
			cl->argv[cl->argc++] = argv[i++];
			break;
		}
		if (opt_is(a, delegate, &v)) {
			if (!v && i + 1 >= argc)
				return rt_error("--delegate: needs a path");
			free(c->delegate);
			c->delegate = strdup(v ? v : argv[++i]);
			if (!c->delegate)
				return rt_error("out of memory");
			continue;
		}
		if (opt_is(a, hlp, &v))
			cl->help = true;
		if (opt_is(a, ver, &v))
			cl->version = true;
		cl->argv[cl->argc++] = argv[i];
		if (opt_is(a, g_with_value, &v) && !v && i + 1 < argc)
			cl->argv[cl->argc++] = argv[++i];
		if (opt_is(a, root, &v))
			cl->root = v ? v : cl->argv[cl->argc - 1];
		if (opt_is(a, logn, &v))
			cl->log = v ? v : cl->argv[cl->argc - 1];
		if (opt_is(a, logf, &v))
			cl->log_format = v ? v : cl->argv[cl->argc - 1];
	}
	if (i < argc)
		cl->cmd = cl->argc;
	for (; i < argc; i++)
		cl->argv[cl->argc++] = argv[i];
	return 0;
}

/* create and run: the bundle, the config file, the id, and where the bundle option sits. */
struct create_args {
	const char *bundle, *config, *id;
	const char *unsure;		/* the first option word not in a form this parse reads as the delegate does */
	int bundle_at, bundle_n;	/* argv index of --bundle and how many words (1 or 2); 0: none */
	int config_at, config_n;
	bool detach, keep;
};

static int parse_create(struct cmdline *cl, struct create_args *ca)
{
	static const char *const bundle[] = { "bundle", "b", NULL }, *const config[] = { "config", "f", NULL },
				 *const with_value[] = { "console-socket", "pid-file", "preserve-fds", NULL },
				 *const detach[] = { "detach", "d", NULL }, *const keep[] = { "keep", NULL },
				 /*
				  * every other option of runc's and crun's create and run; anything
				  * else (crun's abbreviations, -bDIR, -db) is read otherwise by the
				  * delegate than here
				  */
				 *const flags[] = { "no-pivot", "no-new-keyring", "no-subreaper", NULL };
	bool opts = true, odd;

	memset(ca, 0, sizeof(*ca));
	for (int i = cl->cmd + 1; i < cl->argc; i++) {
		const char *a = cl->argv[i], *v = NULL;

		if (opts && !strcmp(a, "--")) {
			opts = false;
			continue;
		}
		if (!opts || a[0] != '-' || !a[1]) {
			if (!ca->id)
				ca->id = a;
			continue;
		}
		/* (runc takes -bundle as --bundle, crun as -b undle; -b=DIR as -b DIR, crun as -b =DIR) */
		odd = a[1] != '-' && a[2];
		if (opt_is(a, bundle, &v) || opt_is(a, config, &v)) {
			bool is_bundle = opt_is(a, bundle, &v);
			int at = i;

			/* given twice: which one the delegate takes is not this parse's to say */
			odd |= (is_bundle ? ca->bundle_at : ca->config_at) != 0;
			if (!v && ++i >= cl->argc)
				return rt_error("%s: needs a value", a);
			if (is_bundle) {
				ca->bundle = v ? v : cl->argv[i];
				ca->bundle_at = at;
				ca->bundle_n = i - at + 1;
			} else {
				ca->config = v ? v : cl->argv[i];
				ca->config_at = at;
				ca->config_n = i - at + 1;
			}
		} else if (opt_is(a, with_value, &v)) {
			if (!v)
				i++;
		} else if (opt_is(a, detach, &v) || opt_is(a, keep, &v) || opt_is(a, flags, &v)) {
			ca->detach |= opt_is(a, detach, &v);
			ca->keep |= opt_is(a, keep, &v);
			/* a flag with a value (--detach=false: runc's): taken as set here */
			odd |= v != NULL;
		} else {
			odd = true;
		}
		if (odd && !ca->unsure)
			ca->unsure = a;
	}
	return 0;
}

/* An id that is one file name of the state directory: what runc accepts, not ".", "..", the state's own. */
static bool id_ok(const char *id)
{
	size_t n = id ? strlen(id) : 0;

	return n && n <= 1024 &&
	       strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+-.") == n &&
	       strcmp(id, ".") && strcmp(id, "..") && strcmp(id, RT_STATE_SUBDIR);
}

/*
 * Where the state of rootasm's lives: the engine's --root; without one
 * root= ($ROOTASM_RUNTIME_ROOT, default /run/rootasm-runtime). (podman 4.3
 * gives delete neither its --runtime-flag options nor its environment: only
 * the config file reaches every command.)
 */
static const char *state_root(const struct cmdline *cl, const struct rt_conf *c)
{
	return cl->root && *cl->root ? cl->root : c->root;
}

/*
 * The engine's config.json (or --config), read beneath the bundle through no
 * symlink; *ret NULL when it cannot be read or parsed: the delegate says why.
 */
/* config.json (or --config's file) as JSON in *ret (NULL: none), its owner in *ret_uid, *ret_gid. */
static int read_config(const struct create_args *ca, int bfd, json_t **ret, uid_t *ret_uid, gid_t *ret_gid)
{
	struct open_how how = { .flags = O_RDONLY | O_CLOEXEC | O_NOCTTY,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	_cleanup_close_ int fd = -EBADF;
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t len = 0;

	*ret = NULL;
	if (ca->config)
		fd = open(ca->config, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	else
		fd = sys_openat2(bfd, "config.json", &how);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || ra_read_all(fd, CONFIG_MAX, NULL, NULL, &buf, &len) < 0)
		return 0;
	*ret_uid = st.st_uid;
	*ret_gid = st.st_gid;
	*ret = json_loadb(buf, len, JSON_REJECT_DUPLICATES, NULL);
	return 0;
}

static const char *annotation(json_t *cfg, const char *key)
{
	return json_string_value(json_object_get(json_object_get(cfg, "annotations"), key));
}

/*
 * A pod's sandbox (its pause container): Kubernetes' pod annotations reach
 * it too (containerd's pod_annotations, CRI-O's allowed_annotations), and it
 * runs its own image, whatever the pod's containers get.
 */
static bool is_sandbox(json_t *cfg)
{
	const char *t = annotation(cfg, "io.kubernetes.cri.container-type");	/* containerd */
	const char *o = annotation(cfg, "io.kubernetes.cri-o.ContainerType");	/* CRI-O */

	return (t && !strcmp(t, "sandbox")) || (o && !strcmp(o, "sandbox"));
}

/*
 * Whether the delegate takes --config FILE (crun does, runc does not): then
 * it runs the engine's own bundle with the private config, and its state and
 * all its hooks name that bundle (state.c: delegate_config()). runtime.conf's
 * delegate_config says so (yes, no); by default (auto) a delegate whose name
 * begins with "crun" does.
 */
static bool takes_config(const struct rt_conf *c, const char *delegate)
{
	const char *b = strrchr(delegate, '/');

	if (c->delegate_config && strcmp(c->delegate_config, "auto"))
		return !strcmp(c->delegate_config, "yes");
	return !strncmp(b ? b + 1 : delegate, "crun", 4);
}

/*
 * The delegate's argv: --bundle and --config of the engine's replaced, right
 * after the command, by "--bundle PRIVATE", or with @config by "--bundle
 * ENGINE --config CONFIG"; without @bundle, the engine's as it came.
 */
static char **private_argv(const struct cmdline *cl, const struct create_args *ca, const char *bundle,
			   const char *config)
{
	char **v = calloc((size_t)cl->argc + 5, sizeof(*v));
	int n = 0;

	if (!v)
		return NULL;
	for (int i = 0; i < cl->argc; i++) {
		if (bundle && ((ca->bundle_n && i >= ca->bundle_at && i < ca->bundle_at + ca->bundle_n) ||
			       (ca->config_n && i >= ca->config_at && i < ca->config_at + ca->config_n)))
			continue;
		v[n++] = cl->argv[i];
		if (bundle && i == cl->cmd) {
			v[n++] = (char *)"--bundle";
			v[n++] = (char *)bundle;
			if (config) {
				v[n++] = (char *)"--config";
				v[n++] = (char *)config;
			}
		}
	}
	return v;
}

/*
 * The commands that read JSON load libjansson first (the binary is linked
 * without it: jansson-lazy.c), so that a library that cannot be loaded is one
 * clear error before anything is done, not a failure halfway.
 */
static int need_json(void)
{
	struct rootasm_error e = { 0 };
	char line[1024];

	if (ra_jansson_load(&e) < 0)
		return rt_error("%s", rootasm_error_format(&e, line, sizeof(line)));
	return 0;
}

/*
 * A container that joins a mount namespace by path: the delegate looks its
 * rootfs up there, where the tree rootasm attaches in ours is not (and the
 * container's pivot_root takes that namespace over). Refused, with why (-1),
 * rather than run on an empty rootfs.
 */
static int joins_mntns(json_t *cfg)
{
	json_t *n;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(cfg, "linux"), "namespaces"), i, n) {
		const char *type = json_string_value(json_object_get(n, "type"));
		const char *path = json_string_value(json_object_get(n, "path"));

		if (type && !strcmp(type, "mount") && path)
			return rt_error("linux.namespaces joins the mount namespace %s: rootasm's tree is attached in "
					"rootasm-runtime's own, the container would not see it (give the container a mount "
					"namespace of its own, or no rootasm annotation)", path);
	}
	return 0;
}

/*
 * Our environment with RT_ENV_STATE=@path first, instead of any it had
 * (kill_strays() in state.c finds the delegate's processes by it; the hooks
 * the delegate runs with no env of their own inherit it too).
 */
static char **state_environ(const char *path)
{
	size_t n = 0, k = 1;
	char **v;

	while (environ[n])
		n++;
	v = calloc(n + 2, sizeof(*v));
	if (!v || asprintf(&v[0], RT_ENV_STATE "=%s", path) < 0) {
		free(v);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], RT_ENV_STATE "=", strlen(RT_ENV_STATE) + 1))
			v[k++] = environ[i];
	return v;
}

/*
 * rt_over_find() with what the delegate reads and writes, which the tree
 * must not cover: the bundle (as given, and as resolved here), its program,
 * its state (rootasm-runtime's, and the delegate's own when the engine gave
 * no --root), the files and sockets the engine's options name.
 */
static int over_find(const struct cmdline *cl, const struct rt_conf *c, const struct create_args *ca, json_t *cfg,
		     const char *babs, uid_t uid, struct rt_over *o)
{
	static const char *const paths[] = { "root", "log", "pid-file", "console-socket", "config", "f", NULL };
	_cleanup_free_ const char **reads = calloc((size_t)cl->argc + 16, sizeof(*reads));
	_cleanup_free_ char *given = NULL;
	const char *v;
	size_t n = 0;

	if (!reads)
		return rt_error("out of memory");
	reads[n++] = babs;
	/* (--bundle as the delegate takes it: a symlink there may lead elsewhere than here) */
	if (ca->bundle && ca->bundle[0] == '/')
		reads[n++] = ca->bundle;
	else if (ca->bundle) {
		_cleanup_free_ char *cwd = getcwd(NULL, 0);

		if (!cwd || asprintf(&given, "%s/%s", cwd, ca->bundle) < 0)
			return rt_error("out of memory");
		reads[n++] = given;
	}
	reads[n++] = cl->argv[0];
	reads[n++] = state_root(cl, c);
	reads[n++] = "/run/runc";
	reads[n++] = "/run/crun";
	for (int i = 1; i < cl->argc; i++)
		if (cl->argv[i][0] == '-' && opt_is(cl->argv[i], paths, &v) && (v || ++i < cl->argc))
			reads[n++] = v ? v : cl->argv[i];
	return rt_over_find(cfg, babs, uid, reads, n, o);
}

static int cmd_create(struct cmdline *cl, struct rt_conf *c, bool run)
{
	struct rt_choice ch = { 0 };
	struct rt_state s;
	struct create_args ca;
	_cleanup_close_ int bfd = -EBADF;
	_cleanup_free_ char *babs = NULL;
	_cleanup_free_ char **argv = NULL;
	json_t *cfg = NULL;
	struct stat st;
	uid_t author = 0;
	gid_t author_gid = 0;
	_cleanup_free_ char *own_image = NULL;
	_cleanup_free_ char **envp = NULL;
	struct rt_over over = { .tree = -EBADF };
	struct rt_tree tree = RT_TREE_INIT;
	enum rt_run mode;
	bool unannotated;
	int r, status;

	if (parse_create(cl, &ca) < 0)
		return 1;
	bfd = open(ca.bundle ? ca.bundle : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	r = 1;
	if (bfd >= 0 && read_config(&ca, bfd, &cfg, &author, &author_gid) == 0 && cfg && !is_sandbox(cfg)) {
		unannotated = !annotation(cfg, ANN_LAYOUT) && !annotation(cfg, ANN_IMAGE);
		r = unannotated && !annotation(cfg, ANN_VIA);
		if (unannotated && rt_cri_container(cfg)) {
			/* a Kubernetes container of containerd's: its own image (cri-image.c), by rootasmd with via */
			rt_log_for(NULL, ca.id);
			r = conf_fill(c) < 0 ? -1 : rt_cri_image(c, cfg, ca.id, &own_image);
			if (r == RT_NEEDS_FULL) {
				json_decref(cfg);
				return rt_exec_full() < 0 ? 1 : 0;
			}
			if (r > 0 && annotation(cfg, ANN_VIA))
				r = 0;	/* unannotated = pass: via alone is refused by rt_choose() */
		}
	}
	if (r != 0) {
		json_decref(cfg);
		/* refused; or no change: the bundle as it came */
		return r < 0 || exec_delegate(cl) < 0 ? 1 : 0;
	}
	rt_time("bundle-read");
	rt_log_for(NULL, ca.id);
	/* (what rootasm does rests on the bundle and config this parse found: the delegate's must be the same) */
	if (ca.unsure) {
		json_decref(cfg);
		rt_error("option '%s': not one rootasm-runtime reads as the delegate would: give one of runc's options by "
			 "its whole name, its value apart or after '='", ca.unsure);
		return 1;
	}
	if (!id_ok(ca.id)) {
		json_decref(cfg);
		rt_error("container id '%s': not of [A-Za-z0-9_+-.], or '" RT_STATE_SUBDIR "'", ca.id ? ca.id : "");
		return 1;
	}
	if (fstat(bfd, &st) < 0) {
		json_decref(cfg);
		rt_error("the bundle directory: %s", strerror(errno));
		return 1;
	}
	/* who wrote what the annotations ask: the bundle's owner, or in root's bundle config.json's owner */
	if ((st.st_mode & 022) && !(st.st_mode & S_ISVTX)) {
		json_decref(cfg);
		rt_error("the bundle directory is writable by others (mode %04o): anyone could have written its "
			 "config.json", (unsigned)(st.st_mode & 07777));
		return 1;
	}
	if (st.st_uid == 0 && author != 0) {
		st.st_uid = author;
		st.st_gid = author_gid;
	}
	/* a user's principal comes from the user database: rootasm-runtime-full's (runtime.h) */
	if (rt_static && st.st_uid != 0) {
		json_decref(cfg);
		return rt_exec_full() < 0 ? 1 : 0;
	}
	rt_time_say();
	if (conf_fill(c) < 0 || joins_mntns(cfg) ||
	    rt_choose(c, annotation(cfg, ANN_LAYOUT), own_image ? own_image : annotation(cfg, ANN_IMAGE), own_image,
		      annotation(cfg, ANN_VIA), &ch) < 0) {
		json_decref(cfg);
		return 1;
	}
	rt_time("chosen");
	babs = rt_fd_path(bfd);
	if (!babs) {
		r = rt_error("the bundle's absolute path");
		goto out_choice;
	}
	/* the engine's own image: a CRI container's, or the annotation's when the engine's layers are its */
	ch.own = own_image || (st.st_uid == 0 && !annotation(cfg, ANN_LAYOUT) &&
			       rt_engine_has_image(babs, cfg, c, ch.value));
	/* (rootasmd assembles while the rest is judged and the state prepared) */
	r = rt_tree_begin(&tree, babs, cfg, st.st_uid, &ch);
	rt_time("tree-begun");
	if (r == 0)
		r = over_find(cl, c, &ca, cfg, babs, st.st_uid, &over);
	if (r < 0)
		goto out_choice;
	rt_time("rootfs-judged");
	mode = r > 0 ? RT_RUN_OVER : takes_config(c, cl->argv[0]) ? RT_RUN_CONFIG : RT_RUN_PRIVATE;
	r = rt_state_lock(state_root(cl, c), ca.id, true, &s);
	if (r < 0)
		goto out_choice;
	rt_time("locked");
	if (s.existed) {
		/* a create of this id that failed or was killed, or a container that exists */
		if (delegate_knows(cl, ca.id)) {
			r = rt_error("a container with this id exists already");
			goto out;
		}
		r = rt_state_cleanup(&s);
		rt_state_unlock(&s);
		if (r >= 0)
			r = rt_state_lock(state_root(cl, c), ca.id, true, &s);
		if (r < 0)
			goto out_choice;
	}
	r = rt_state_prepare(&s, babs, cfg, st.st_uid, st.st_gid, &ch, &tree, mode);
	if (r == 0 && mode == RT_RUN_OVER)
		r = rt_over_clone(&s, &over, &tree);
	if (r < 0) {
		rt_state_cleanup(&s);
		goto out;
	}
	rt_time("prepared");
	/* over the engine's rootfs, the engine's command line as it came */
	argv = mode == RT_RUN_OVER ? private_argv(cl, &ca, NULL, NULL) :
	       mode == RT_RUN_CONFIG ? private_argv(cl, &ca, babs, s.config) : private_argv(cl, &ca, s.bundle, NULL);
	envp = argv ? state_environ(s.path) : NULL;
	if (!envp) {
		r = rt_error("out of memory");
		rt_state_cleanup(&s);
		goto out;
	}
	if (run && !ca.detach) {
		/* the container's whole life: a delete of the id meanwhile must not wait for it */
		flock(s.fd, LOCK_UN);
		status = run_delegate(argv, false, envp, mode == RT_RUN_OVER ? &over : NULL);
		if (!ca.keep && rt_state_relock(&s) == 0) {
			/* crun run waited for its container: with it exited, no process of it is left to kill */
			s.ran = delegate_exited;
			rt_state_cleanup(&s);
			rt_time("cleaned");
		}
		r = status;
		goto out;
	}
	status = run_delegate(argv, false, envp, mode == RT_RUN_OVER ? &over : NULL);
	if (status != 0)
		rt_state_cleanup(&s);
	else
		rt_state_created(&s);
	r = status;
out:
	rt_state_unlock(&s);
out_choice:
	if (envp)
		free(envp[0]);
	close_fdp(&over.tree);
	rt_tree_done(&tree);
	rt_choice_done(&ch);
	json_decref(cfg);
	return r < 0 ? 1 : r;
}

/* The container id of a delete or state: the command's last operand. */
static const char *cmd_id(const struct cmdline *cl)
{
	const char *id = NULL;

	for (int i = cl->cmd + 1; i < cl->argc; i++)
		if (cl->argv[i][0] != '-' || !strcmp(cl->argv[i], "-"))
			id = cl->argv[i];
	return id;
}

/* ROOT/.rootasm/ID, and /@name in it when given (NULL: out of memory, said). */
static char *state_path(const struct cmdline *cl, const struct rt_conf *c, const char *id, const char *name)
{
	char *p;

	if (asprintf(&p, "%s/" RT_STATE_SUBDIR "/%s%s%s", state_root(cl, c), id, name ? "/" : "", name ? name : "") < 0) {
		rt_error("out of memory");
		return NULL;
	}
	return p;
}

static int cmd_delete(struct cmdline *cl, struct rt_conf *c)
{
	const char *id = cmd_id(cl);
	struct rt_state s;
	int status, r;

	if (!id_ok(id) || conf_fill(c) < 0)
		return exec_delegate(cl) < 0 ? 1 : 0;
	/* nothing of rootasm's for this id: the delegate alone, at no cost */
	{
		char *p = state_path(cl, c, id, NULL);
		struct stat st;

		if (!p)
			return 1;
		r = lstat(p, &st);
		free(p);
		if (r < 0 && errno == ENOENT)
			return exec_delegate(cl) < 0 ? 1 : 0;
	}
	if (need_json() < 0)
		return 1;
	rt_log_for(NULL, id);
	status = run_delegate(cl->argv, false, NULL, NULL);
	if (status < 0)
		return 1;
	r = rt_state_lock(state_root(cl, c), id, false, &s);
	if (r != 0)
		return r < 0 ? 1 : status;
	/* deleted, or never created (a create that failed or was killed): what rootasm attached goes */
	if (status == 0 || !delegate_knows(cl, id)) {
		if (rt_state_cleanup(&s) < 0)
			status = status ? status : 1;
	}
	rt_state_unlock(&s);
	return status;
}

/*
 * state ID of an annotated container run through the private bundle
 * (RT_RUN_PRIVATE: its state holds RT_ENGINE_BUNDLE): the delegate's answer
 * as the engine's (spec.c). Anything else is the delegate's alone: a
 * container run over the engine's rootfs or with --config already shows the
 * engine's bundle and annotations, and is passed through like one not
 * rootasm's.
 */
static int cmd_state(struct cmdline *cl, struct rt_conf *c)
{
	_cleanup_free_ char *eb = NULL;
	_cleanup_close_ int fd = -EBADF;
	const char *id = cmd_id(cl);
	char *p = NULL;
	size_t len = 0;

	if (id_ok(id) && conf_fill(c) == 0 && (p = state_path(cl, c, id, NULL))) {
		_cleanup_close_ int dfd = open(p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		free(p);
		if (dfd >= 0)
			fd = openat(dfd, RT_ENGINE_BUNDLE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0 || ra_read_all(fd, PATH_MAX, NULL, NULL, &eb, &len) < 0 || !len)
		return exec_delegate(cl) < 0 ? 1 : 0;
	if (need_json() < 0)
		return 1;
	{
		int r = rt_state_view(cl->argv, eb);	/* the delegate's status, or -1 (ours, said) */

		return r < 0 ? 1 : r;
	}
}

int main(int argc, char **argv)
{
	struct rt_conf c = { 0 };
	struct cmdline cl = { 0 };
	const char *cmd;

	rt_time("start");
	rt_argv = argv;

	/* a hook of a container's that rootasm-runtime wrapped (spec.c) */
	if (argc > 1 && !strcmp(argv[1], "hook"))
		return need_json() < 0 ? 1 : rt_cmd_hook(argc - 1, argv + 1);
	if (parse_globals(argc, argv, &cl, &c) < 0)
		return 1;
	rt_log_open(cl.log, cl.log_format);
	if (cl.help && cl.cmd < 0) {
		fputs(help, stdout);
		return 0;
	}
	if (delegate_find(&cl, &c) < 0)
		return 1;
	if (cl.version && cl.cmd < 0) {
		printf(RT_NAME " version %s (librootasm %s)\ndelegate: %s\n", ROOTASM_VERSION_STRING,
		       rootasm_version(), cl.argv[0]);
		return exec_delegate(&cl) < 0 ? 1 : 0;
	}
	rt_time("configured");
	cmd = cl.cmd >= 0 ? cl.argv[cl.cmd] : "";
	rt_log_for(cmd, NULL);
	if ((!strcmp(cmd, "create") || !strcmp(cmd, "run")) && need_json() < 0)
		return 1;
	if (!strcmp(cmd, "create") || !strcmp(cmd, "run")) {
		int r;

		/* (the static runtime's after its last hand-over, in cmd_create(): the stages of one process) */
		if (!rt_static)
			rt_time_say();
		r = cmd_create(&cl, &c, !strcmp(cmd, "run"));

		rt_time("done");
		return r;
	}
	if (!strcmp(cmd, "delete"))
		return cmd_delete(&cl, &c);
	if (!strcmp(cmd, "state"))
		return cmd_state(&cl, &c);
	return exec_delegate(&cl) < 0 ? 1 : 0;
}
