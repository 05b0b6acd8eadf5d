// SPDX-License-Identifier: LGPL-2.1-or-later
/* rootasm exec [OPTION...] LAYOUT [OPTION...] [--] CMD [ARG...] */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <jansson.h>

#include "cli.h"

static const char help[] =
	"Usage: rootasm exec [OPTION...] LAYOUT [OPTION...] [--] CMD [ARG...]\n"
	"Assemble LAYOUT, then run CMD with the tree as its root, sandboxed as `crun run`\n"
	"runs the configuration `crun spec` writes: new pid, mount, ipc, uts and cgroup\n"
	"namespaces; every fd >= 3 closed; the capabilities of the layout's exec: section\n"
	"or the OCI default set (CAP_AUDIT_WRITE, CAP_KILL, CAP_NET_BIND_SERVICE), the\n"
	"bounding set reduced to them, no_new_privs; a seccomp profile on every ABI\n"
	"(rootasm(1) lists it); /proc with the OCI masked and read-only paths; a minimal\n"
	"/dev when the tree has no usable one. The container dies with rootasm.\n"
	"Options go before CMD (the first operand after LAYOUT, or what follows '--').\n"
	"\n"
	"  --network host|none  the host's network namespace (default), or a new one\n"
	"                       with only loopback\n"
	"  --preserve-fds N     pass fds 3 .. 3+N-1 to CMD (they must be open)\n"
	"  --env KEY=VALUE      add to CMD's environment (repeatable; after the layout's)\n"
	"  --hostname NAME      the container's hostname (default: the layout's, or rootasm)\n"
	"  --privileged         NO capability drop, NO seccomp profile, NO /proc masks,\n"
	"                       NO no_new_privs: CMD can do what rootasm can (as root: all)\n"
	"  --via SOCKET         have rootasmd at SOCKET assemble LAYOUT (with its image\n"
	"                       cache); LAYOUT is read here too, offline, for its exec\n"
	"                       settings\n"
	"  --report             print CMD's status and cgroup id as the kernel kept them\n"
	"                       (PIDFD_INFO_EXIT), on stderr (with --json: on stdout)\n"
	"  --json[=pretty]      errors (and --report) as JSON\n"
	"  --debug              trace every operation\n"
	"  -h, --help           this text\n"
	"\n"
	"Exit status: CMD's (128+N when it dies of signal N); 125 when rootasm itself\n"
	"fails (bad usage, bad layout, assembly, setup); 126 when CMD cannot be run,\n"
	"127 when it is not found.\n";

static const int fwd_signals[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT };

/* rootasm's own failure, whatever kind: 125 */
static int failed(int status)
{
	return status ? EXIT_EXEC_FAILED : 0;
}

/* Pass the signals sent to us on to the container until it ends. */
static void forward(int pidfd, int sfd)
{
	for (;;) {
		struct pollfd p[2] = { { pidfd, POLLIN, 0 }, { sfd, POLLIN, 0 } };
		struct signalfd_siginfo ssi;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return;
		/* the terminal's too: the container has a session of its own, they do not reach it */
		if ((p[1].revents & POLLIN) && read(sfd, &ssi, sizeof(ssi)) == sizeof(ssi))
			syscall(SYS_pidfd_send_signal, pidfd, ssi.ssi_signo, NULL, 0);
		if (p[0].revents & (POLLIN | POLLHUP))
			return;
	}
}

int cmd_exec(int argc, char **argv)
{
	static const struct option opts[] = {
		CLI_COMMON_LONGOPTS,
		{ "report", no_argument, NULL, 'r' },
		{ "privileged", no_argument, NULL, 'P' },
		{ "network", required_argument, NULL, 'n' },
		{ "preserve-fds", required_argument, NULL, 'f' },
		{ "env", required_argument, NULL, 'e' },
		{ "hostname", required_argument, NULL, 'H' },
		{ "via", required_argument, NULL, 'v' },
		{ 0 },
	};
	struct rootasm_error e = { 0 };
	struct rootasm_exec_result res = { 0 };
	struct rootasm_exec_opts o = { .size = sizeof(o) };
	struct rootasm_layout *l;
	const char *path = NULL, **env = NULL, *via = NULL;
	size_t nenv = 0;
	bool report = false;
	sigset_t fwd;
	int c, fd, r, pidfd, sfd;
	char *end;

	/* options, LAYOUT, options, then CMD: getopt stops at each operand ("+") */
	for (int pass = 0; pass < 2; pass++) {
		while ((c = getopt_long(argc, argv, "+:h", opts, NULL)) >= 0) {
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
					return failed(cli_usage("--network takes host or none, not '%s'", optarg));
				break;
			case 'f':
				errno = 0;
				o.preserve_fds = strtoul(optarg, &end, 10);
				if (*optarg < '0' || *optarg > '9' || *end || errno || o.preserve_fds > 65536)
					return failed(cli_usage("--preserve-fds takes a number of fds, not '%s'", optarg));
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
			case 'v':
				via = optarg;
				break;
			default:
				if ((r = cli_common(c, argc, argv, help)) != CLI_GO_ON)
					return failed(r);
			}
		}
		if (pass == 0) {
			if (optind >= argc)
				return failed(cli_usage("missing LAYOUT"));
			path = argv[optind++];
		}
	}
	if (optind >= argc)
		return failed(cli_usage("missing CMD"));
	if (via && !strcmp(path, "-"))
		return failed(cli_usage("--via takes a layout file, not '-'"));
	o.env = env;
	/* with --via the layout is read here only for its exec settings: rootasmd opens what it names */
	r = cli_load(path, via ? ROOTASM_LOAD_OFFLINE : 0, &l);
	if (r)
		return failed(r);
	fd = via ? cli_via_assemble(via, path, &e) : rootasm_assemble(cli_context(), l, &e);
	if (fd < 0) {
		rootasm_layout_free(l);
		return failed(cli_fail(&e));
	}
	/* from here on the signals sent to us go to the container */
	sigemptyset(&fwd);
	for (size_t i = 0; i < sizeof(fwd_signals) / sizeof(fwd_signals[0]); i++)
		sigaddset(&fwd, fwd_signals[i]);
	sigprocmask(SIG_BLOCK, &fwd, NULL);
	sfd = signalfd(-1, &fwd, SFD_CLOEXEC | SFD_NONBLOCK);
	pidfd = rootasm_exec_start(cli_context(), l, fd, argv + optind, &o, &e);
	close(fd);
	rootasm_layout_free(l);
	free(env);
	if (pidfd < 0)
		return failed(cli_fail(&e));
	if (sfd >= 0)
		forward(pidfd, sfd);
	r = rootasm_exec_wait(pidfd, &res, &e);
	close(pidfd);
	if (r < 0)
		return failed(cli_fail(&e));
	if (report && cli.json) {
		cli_json_out(json_pack("{s:s, s:i, s:I, s:s}", "command", argv[optind], "status", res.status, "cgroup_id",
				       (json_int_t)res.cgroupid, "source", res.from_pidfd_info ? "pidfd-info-exit" : "waitid"));
	} else if (report) {
		fprintf(stderr, "rootasm: exec: %s exited with status %d, cgroup id %llu, read %s\n", argv[optind],
			res.status, res.cgroupid,
			res.from_pidfd_info ? "through PIDFD_INFO_EXIT after reaping" : "from waitid (no PIDFD_INFO_EXIT)");
	}
	return res.status;
}
