// SPDX-License-Identifier: LGPL-2.1-or-later
/* rootasm exec [OPTION...] LAYOUT [OPTION...] [--] [CMD [ARG...]] */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <termios.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <jansson.h>

#include "cli.h"
#include "exec.h"

static const char help[] =
	"Usage: rootasm exec [OPTION...] LAYOUT [OPTION...] [--] [CMD [ARG...]]\n"
	"Assemble LAYOUT, then run CMD with the tree as its root, sandboxed as `crun run`\n"
	"runs the configuration `crun spec` writes: new pid, mount, ipc, uts and cgroup\n"
	"namespaces; every fd >= 3 closed; the capabilities of the layout's exec: section\n"
	"or the OCI default set (CAP_AUDIT_WRITE, CAP_KILL, CAP_NET_BIND_SERVICE), the\n"
	"bounding set reduced to them, no_new_privs; a seccomp profile on every ABI\n"
	"(rootasm(1) lists it); /proc with the OCI masked and read-only paths; a minimal\n"
	"/dev of its own, every mount of the tree nodev; a session of its own (the\n"
	"caller's terminal is not its controlling terminal). The container dies with\n"
	"rootasm.\n"
	"Options go before CMD (the first operand after LAYOUT, or what follows '--').\n"
	"LAYOUT that is no file is an image of the store (--store, else $ROOTASM_STORE,\n"
	"else /var/lib/rootasm/store) by NAME[:TAG] or digest (rootasm images).\n"
	"The layout's exec: section (an imported image's config) gives the user, the\n"
	"environment, the working directory and the command: its entrypoint, then CMD\n"
	"[ARG...] if given, else its cmd (as `podman run IMAGE [CMD]`).\n"
	"\n"
	"  --store DIR          the store an image's NAME or digest is looked up in\n"
	"  --network none|host  a new network namespace with only loopback (default), or\n"
	"                       the host's (where the command, uid 0 of the host, is root\n"
	"                       to the host's abstract unix sockets)\n"
	"  --preserve-fds N     pass fds 3 .. 3+N-1 to CMD (they must be open)\n"
	"  -e, --env KEY=VALUE  add to CMD's environment (repeatable; after the layout's)\n"
	"  --hostname NAME      the container's hostname (default: the layout's, or rootasm)\n"
	"  -t, --tty            a terminal of its own: a pty of the container's devpts is\n"
	"                       CMD's stdin, stdout, stderr and controlling terminal;\n"
	"                       rootasm relays it to its own stdin and stdout (the\n"
	"                       caller's terminal raw meanwhile, when stdin is one)\n"
	"  -i, --interactive    (podman's; CMD's stdin is always rootasm's)\n"
	"  --privileged         NO capability drop, NO seccomp profile, NO /proc masks,\n"
	"                       NO nodev, NO no_new_privs: CMD can do what rootasm can\n"
	"                       (as root: all)\n"
	"  --via SOCKET         have rootasmd at SOCKET assemble LAYOUT (with its image\n"
	"                       cache); LAYOUT is read here too, offline, for its exec\n"
	"                       settings\n"
	"  --report             print CMD's status and cgroup id as the kernel kept them\n"
	"                       (PIDFD_INFO_EXIT), on stderr (with --json: on stdout)\n"
	"  --json[=pretty]      errors (and --report) as JSON\n"
	"  -q, --quiet          no --report line (its JSON stays)\n"
	"  --debug              trace every operation\n"
	"  -h, --help           this text\n"
	"\n"
	"Exit status: CMD's (128+N when it dies of signal N); 125 when rootasm itself\n"
	"fails (bad usage, bad layout, assembly, setup); 126 when CMD cannot be run,\n"
	"127 when it is not found.\n";

/* rootasm's own failure, whatever kind: 125 */
static int failed(int status)
{
	return status ? EXIT_EXEC_FAILED : 0;
}

/*
 * Pass a signal sent to us on to the container: the terminal's too (the
 * container has a session of its own, none of our terminal's signals reach
 * it). With --tty a SIGWINCH resizes its terminal (which signals it) instead.
 */
static void signalled(int pidfd, int sfd, int master)
{
	struct signalfd_siginfo ssi;
	struct winsize ws;

	if (read(sfd, &ssi, sizeof(ssi)) != sizeof(ssi))
		return;
	if (master >= 0 && ssi.ssi_signo == SIGWINCH) {
		if (ioctl(0, TIOCGWINSZ, &ws) == 0)
			ioctl(master, TIOCSWINSZ, &ws);
		return;
	}
	syscall(SYS_pidfd_send_signal, pidfd, ssi.ssi_signo, NULL, 0);
}

/* Pass the signals sent to us on to the container until it ends. */
static void forward(int pidfd, int sfd)
{
	for (;;) {
		struct pollfd p[2] = { { pidfd, POLLIN, 0 }, { sfd, POLLIN, 0 } };

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return;
		if (p[1].revents & POLLIN)
			signalled(pidfd, sfd, -EBADF);
		if (p[0].revents & (POLLIN | POLLHUP))
			return;
	}
}

/* --tty: the caller's terminal while it is raw, for the handlers below. */
static struct termios saved_tio;
static bool raw_tio;

static void restore_tio(void)
{
	if (raw_tio)
		tcsetattr(0, TCSANOW, &saved_tio);
}

/* A signal that would end rootasm while the caller's terminal is raw: restore it, then end. */
static void restore_and_die(int sig)
{
	restore_tio();
	signal(sig, SIG_DFL);
	raise(sig);
}

static bool write_all(int fd, const char *buf, size_t n)
{
	while (n) {
		ssize_t w = write(fd, buf, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		buf += w;
		n -= w;
	}
	return true;
}

/*
 * --tty: relay our stdin to the pty's @master and its output to our stdout, pass
 * signals on, until the terminal is closed (every process that had it is gone)
 * or the container ends (then what it wrote is drained). Returns whether the
 * container ended. The end of a stdin that is no terminal is the terminal's
 * end-of-file (VEOF, when the command reads lines).
 */
static bool relay(int master, int pidfd, int sfd)
{
	char in[4096], out[16384], last = '\n';
	size_t inl = 0, inoff = 0;
	bool in_open = true, out_ok = true, stdin_tty = isatty(0);

	if (fcntl(master, F_SETFL, O_NONBLOCK) < 0)
		return false;
	for (;;) {
		struct pollfd p[4] = {
			{ master, POLLIN | (inoff < inl ? POLLOUT : 0), 0 },
			{ in_open && inoff == inl ? 0 : -1, POLLIN, 0 },
			{ pidfd, POLLIN, 0 },
			{ sfd, POLLIN, 0 },
		};
		bool ended;
		ssize_t n;

		if (poll(p, 4, -1) < 0) {
			if (errno == EINTR)
				continue;
			return false;
		}
		ended = p[2].revents & (POLLIN | POLLHUP);
		if (p[3].revents & POLLIN)
			signalled(pidfd, sfd, master);
		/* output first: once the container ended, what is left of it (read gives EIO at the end) */
		if ((p[0].revents & (POLLIN | POLLHUP | POLLERR)) || ended) {
			while ((n = read(master, out, sizeof(out))) > 0 || (n < 0 && errno == EINTR))
				if (n > 0 && out_ok)
					out_ok = write_all(1, out, n);
			if (n == 0 || errno != EAGAIN)
				return ended;	/* the terminal is closed */
		}
		if (ended)
			return true;
		if (p[1].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)) {
			n = read(0, in, sizeof(in));
			if (n > 0) {
				inl = n;
				inoff = 0;
				last = in[n - 1];
			} else if (n == 0 || errno != EINTR) {
				struct termios t;

				in_open = false;
				/* a pipe or file ended: end-of-file for a command that reads lines (twice after a partial one) */
				if (!stdin_tty && tcgetattr(master, &t) == 0 && (t.c_lflag & ICANON)) {
					in[0] = in[1] = (char)t.c_cc[VEOF];
					inoff = last == '\n' ? 1 : 0;
					inl = 2;
				}
			}
		}
		if (inoff < inl && ((p[0].revents & POLLOUT) || p[1].revents)) {
			n = write(master, in + inoff, inl - inoff);
			if (n > 0)
				inoff += n;
			else if (n < 0 && errno != EAGAIN && errno != EINTR)
				inoff = inl;
		}
	}
}

/* --tty: relay @master with the caller's terminal raw (when stdin is one); restored on every way out. */
static void run_tty(int master, int pidfd, int sfd)
{
	static const int fatal[] = { SIGALRM, SIGPIPE, SIGVTALRM, SIGPROF, SIGXCPU, SIGXFSZ, SIGIO, SIGPWR,
				     SIGSTKFLT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS };
	struct termios t;
	bool ended;

	if (tcgetattr(0, &saved_tio) == 0) {
		for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
			signal(fatal[i], restore_and_die);
		for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
			signal(sig, restore_and_die);
		t = saved_tio;
		cfmakeraw(&t);
		raw_tio = tcsetattr(0, TCSANOW, &t) == 0;
	}
	ended = relay(master, pidfd, sfd);
	restore_tio();
	raw_tio = false;
	if (!ended && sfd >= 0)
		forward(pidfd, sfd);
}

int cmd_exec(int argc, char **argv)
{
	static const struct option opts[] = {
		CLI_COMMON_LONGOPTS, CLI_FLAG("report", 'r'), CLI_FLAG("privileged", 'P'),
		CLI_ARG("network", 'n'), CLI_ARG("preserve-fds", 'f'), CLI_ARG("env", 'e'),
		CLI_ARG("hostname", 'H'), CLI_FLAG("tty", 't'), CLI_ARG("via", 'v'), CLI_ARG("store", 's'),
		CLI_FLAG("interactive", 'i'), { 0 },
	};
	struct rootasm_error e = { 0 };
	struct rootasm_exec_result res = { 0 };
	struct rootasm_exec_opts o = { .size = sizeof(o) };
	struct rootasm_exec_pending *pending = NULL;
	struct rootasm_layout *l;
	const char *path = NULL, **env = NULL, *via = NULL, *what, *store = NULL;
	char *image = NULL;
	struct stat st;		/* the layout of an image of the store: lives as long as the process */
	size_t nenv = 0;
	bool report = false;
	sigset_t fwd;
	int c, fd, r, pidfd, sfd, master = -EBADF;
	unsigned long long v;

	/*
	 * A closed stdin, stdout or stderr becomes /dev/null: otherwise an fd of
	 * ours (the signalfd, a pty's master) would take its number and be taken
	 * for it. Not close-on-exec: they are stdio, for CMD.
	 */
	for (fd = open("/dev/null", O_RDWR); fd >= 0 && fd < 3; fd = open("/dev/null", O_RDWR))
		;
	if (fd >= 3)
		close(fd);
	/* options, LAYOUT, options, then CMD: getopt stops at each operand ("+") */
	for (int pass = 0; pass < 2; pass++) {
		while ((c = cli_getopt(argc, argv, "+" CLI_COMMON_SHORTOPTS "e:ti", opts, help, &r)) >= 0) {
			switch (c) {
			case 'r':
				report = true;
				break;
			case 'P':
				o.flags |= ROOTASM_EXEC_PRIVILEGED;
				break;
			case 'n':
				o.flags &= ~(ROOTASM_EXEC_NETWORK_NONE | ROOTASM_EXEC_NETWORK_HOST);
				if (!strcmp(optarg, "none"))
					o.flags |= ROOTASM_EXEC_NETWORK_NONE;
				else if (!strcmp(optarg, "host"))
					o.flags |= ROOTASM_EXEC_NETWORK_HOST;
				else
					return failed(cli_usage("--network takes none or host, not '%s'", optarg));
				break;
			case 'f':
				if (cli_number(optarg, 0, 65536, &v) < 0)
					return failed(cli_usage("--preserve-fds takes a number of fds, not '%s'", optarg));
				o.preserve_fds = (unsigned int)v;
				/* they must be open now: otherwise rootasm's own fds could take those numbers */
				for (unsigned int i = 3; i < 3 + o.preserve_fds; i++)
					if (fcntl(i, F_GETFD) < 0)
						return failed(cli_usage("--preserve-fds %u: fd %u is not open", o.preserve_fds, i));
				break;
			case 'e': {
				const char **grown;

				if (!strchr(optarg, '=') || optarg[0] == '=')
					return failed(cli_usage("--env takes KEY=VALUE, not '%s'", optarg));
				grown = realloc(env, (nenv + 2) * sizeof(*env));
				if (!grown)
					return failed(EXIT_RUNTIME);
				env = grown;
				env[nenv++] = optarg;
				env[nenv] = NULL;
				break;
			}
			case 'H':
				/* the rule of the layout's exec.hostname */
				if (!rootasm_hostname_ok(optarg))
					return failed(cli_usage("--hostname takes a hostname (1-64 of letters, digits, '.', "
								"'-', not first '-' or '.'), not '%s'", optarg));
				o.hostname = optarg;
				break;
			case 't':
				o.flags |= ROOTASM_EXEC_TTY;
				o.tty_master = &master;
				break;
			case 'i':
				break;	/* (stdin is CMD's: there is nothing -i would add) */
			case 's':
				store = optarg;
				break;
			case 'v':
				via = optarg;
				break;
			}
		}
		if (c == CLI_OPTS_EXIT)
			return failed(r);
		if (pass == 0) {
			if (optind >= argc)
				return failed(cli_usage("missing LAYOUT"));
			path = argv[optind++];
		}
	}
	if (via && !strcmp(path, "-"))
		return failed(cli_usage("--via takes a layout file, not '-'"));
	o.env = env;
	/* no file (or a directory): an image of the store by name or digest ($ROOTASM_STORE, else the default) */
	if (strcmp(path, "-") && (stat(path, &st) < 0 || S_ISDIR(st.st_mode))) {
		bool missing = errno == ENOENT;
		const char *dot = strrchr(path, '.');

		r = rootasm_store_lookup(store, path, &image, NULL, &e);
		if (r < 0 && !(rootasm_error_is_usage(&e) && e.err == ENOENT)) {
			free(env);
			return failed(cli_fail(&e));
		}
		/*
		 * A name (localhost/app:1 too), not a path: the store's "no such image" is
		 * the answer, not "open layout"
		 */
		if (r < 0 && missing && path[0] != '/' && strncmp(path, "./", 2) && strncmp(path, "../", 3) &&
		    !(dot && (!strcmp(dot, ".yaml") || !strcmp(dot, ".yml") || !strcmp(dot, ".json")))) {
			size_t len = strlen(e.msg);

			snprintf(e.msg + len, sizeof(e.msg) - len, ", nor a layout file of that name");
			free(env);
			return failed(cli_fail(&e));
		}
		/* no such image either: loading the layout says what is missing */
		if (r == 0)
			path = image;
		e = (struct rootasm_error){ 0 };
	}
	/* with --via the layout is read here only for its exec settings: rootasmd opens what it names */
	r = cli_load(path, via ? ROOTASM_LOAD_OFFLINE : 0, &l);
	if (r)
		return failed(r);
	/* the sandbox is set up (its init started in its namespaces) while the tree is assembled */
	r = rootasm_exec_prepare(cli_context(), l, argv + optind, &o, &pending, &e);
	if (r < 0 && e.err == EPERM && geteuid() != 0) {
		/* what it needs, not which call said no */
		char was[sizeof(e.op)];

		snprintf(was, sizeof(was), "%s", e.op);
		snprintf(e.msg, sizeof(e.msg), "rootasm exec needs root: its sandbox is new namespaces and mounts "
			 "(CAP_SYS_ADMIN; the kernel refused %s)", was);
		snprintf(e.op, sizeof(e.op), "exec");
		snprintf(e.path, sizeof(e.path), "%s", path);
		e.kind = ROOTASM_ERROR_PERMISSION;
	}
	if (r < 0) {
		rootasm_layout_free(l);
		free(env);
		return failed(cli_fail(&e));
	}
	fd = via ? cli_via_assemble(via, path, NULL, 0, &e) : rootasm_assemble(cli_context(), l, &e);
	if (fd < 0) {
		rootasm_layout_free(l);
		free(env);
		rootasm_exec_pending_free(pending);
		return failed(cli_fail(&e));
	}
	/* from here on the signals sent to us go to the container */
	ra_exec_fwd_sigset(&fwd);
	sigprocmask(SIG_BLOCK, &fwd, NULL);
	sfd = signalfd(-1, &fwd, SFD_CLOEXEC | SFD_NONBLOCK);
	pidfd = rootasm_exec_join(pending, fd, &e);
	/* the tree is the init's now: what the layout held goes while the sandbox finishes */
	close(fd);
	rootasm_layout_free(l);
	free(env);
	if (pidfd < 0)
		return failed(cli_fail(&e));
	if (master >= 0)
		run_tty(master, pidfd, sfd);
	else if (sfd >= 0)
		forward(pidfd, sfd);
	if (master >= 0)
		close(master);
	r = rootasm_exec_wait(pidfd, &res, &e);
	close(pidfd);
	if (r < 0)
		return failed(cli_fail(&e));
	what = optind < argc ? argv[optind] : "the image's command";
	if (report && cli.json) {
		cli_json_out(json_pack("{s:s, s:i, s:I, s:s}", "command", what, "status", res.status, "cgroup_id",
				       (json_int_t)res.cgroupid, "source", res.from_pidfd_info ? "pidfd-info-exit" : "waitid"));
	} else if (report && !cli.quiet) {
		fprintf(stderr, "rootasm: exec: %s exited with status %d, cgroup id %llu, read %s\n", what,
			res.status, res.cgroupid,
			res.from_pidfd_info ? "through PIDFD_INFO_EXIT after reaping" : "from waitid (no PIDFD_INFO_EXIT)");
	}
	return res.status;
}
