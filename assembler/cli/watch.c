// SPDX-License-Identifier: LGPL-2.1-or-later
/* rootasm watch [--mntns PATH|PID] [--json] [--count N] [--timeout SECONDS] */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static const char help[] =
	"Usage: rootasm watch [OPTION...]\n"
	"Print the mount attach and detach events of a mount namespace (fanotify\n"
	"FAN_MNT_ATTACH/FAN_MNT_DETACH, Linux 6.15), one line each: attach, detach, or\n"
	"move (both), with the mount id, mount point, fs type, source and id maps.\n"
	"\n"
	"  --mntns PATH|PID  the namespace: an nsfs file, or a pid (default: our own)\n"
	"  --count N         stop after N events\n"
	"  --timeout S       stop after S seconds\n"
	"  --json[=pretty]   one JSON object per event\n"
	"  -q, --quiet       no line saying the watch is in place (without --json)\n"
	"  --debug           trace what the library does\n"
	"  -h, --help        this text\n";

int cmd_watch(int argc, char **argv)
{
	static const struct option opts[] = {
		CLI_COMMON_LONGOPTS, CLI_ARG("mntns", 'm'), CLI_ARG("count", 'c'), CLI_ARG("timeout", 't'),
		{ 0 },
	};
	struct rootasm_error e = { 0 };
	const char *ns = "/proc/self/ns/mnt";
	char nsbuf[64], line[8192];
	long count = -1, timeout = -1, seen = 0;
	unsigned long long v;
	struct timespec t0, now;
	int nsfd, fd, c, r;

	while ((c = cli_getopt(argc, argv, NULL, opts, help, &r)) >= 0) {
		switch (c) {
		case 'm':
			ns = optarg;
			if (strspn(ns, "0123456789") == strlen(ns)) {
				snprintf(nsbuf, sizeof(nsbuf), "/proc/%s/ns/mnt", ns);
				ns = nsbuf;
			}
			break;
		case 'c':
			if (cli_number(optarg, 1, 1000000000, &v) < 0)
				return cli_usage("--count takes a positive number, not '%s'", optarg);
			count = (long)v;
			break;
		case 't':
			if (cli_number(optarg, 1, 1000000000, &v) < 0)
				return cli_usage("--timeout takes a positive number of seconds, not '%s'", optarg);
			timeout = (long)v;
			break;
		}
	}
	if (c == CLI_OPTS_EXIT)
		return r;
	if ((r = cli_no_operand(argc, argv)) != CLI_GO_ON)
		return r;
	nsfd = open(ns, O_RDONLY | O_CLOEXEC);
	if (nsfd < 0) {
		e = (struct rootasm_error){ .err = errno, .kind = ROOTASM_ERROR_USAGE };
		snprintf(e.op, sizeof(e.op), "open mount namespace");
		snprintf(e.path, sizeof(e.path), "%s", ns);
		return cli_fail(&e);
	}
	fd = rootasm_watch_open(nsfd, &e);
	if (fd < 0) {
		close(nsfd);
		return cli_fail(&e);
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/* Tell a caller that waits for us that the mark is in place. */
	if (!cli.json && !cli.quiet)
		fprintf(stderr, "rootasm: watching mount namespace %s\n", ns);
	else if (cli.json)
		fprintf(stderr, "{\"watching\":true}\n");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!stop && (count < 0 || seen < count)) {
		struct rootasm_mount_event ev[64];
		int n = rootasm_watch_read(fd, ev, 64, 200);

		for (int i = 0; i < n && (count < 0 || seen < count); i++, seen++) {
			const char *what = ev[i].attach && ev[i].detach ? "move" : ev[i].attach ? "attach" : "detach";

			rootasm_mount_describe(ev[i].mnt_id, nsfd, cli.json, line, sizeof(line));
			if (cli.json)
				printf("{\"event\":\"%s\",\"mount\":%s}\n", what, line);
			else
				printf("%-6s %s\n", what, line);
		}
		fflush(stdout);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (timeout > 0 && now.tv_sec - t0.tv_sec >= timeout)
			break;
	}
	close(fd);
	close(nsfd);
	return 0;
}
