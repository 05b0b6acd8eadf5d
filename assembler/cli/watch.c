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

int cmd_watch(int argc, char **argv)
{
	struct rootasm_error e = { 0 };
	const char *ns = "/proc/self/ns/mnt";
	char nsbuf[64], line[8192];
	long count = -1, timeout = -1, seen = 0;
	bool json = false;
	struct timespec t0, now;
	int nsfd, fd;

	for (int i = 1; i < argc; i++) {
		char *end;

		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "--mntns") && i + 1 < argc) {
			ns = argv[++i];
			if (strspn(ns, "0123456789") == strlen(ns)) {
				snprintf(nsbuf, sizeof(nsbuf), "/proc/%s/ns/mnt", ns);
				ns = nsbuf;
			}
		} else if (!strcmp(argv[i], "--count") && i + 1 < argc) {
			count = strtol(argv[++i], &end, 10);
			if (*end || count <= 0)
				return cli_usage("watch: --count takes a positive number");
		} else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) {
			timeout = strtol(argv[++i], &end, 10);
			if (*end || timeout <= 0)
				return cli_usage("watch: --timeout takes a positive number of seconds");
		} else {
			return cli_usage("watch: unknown argument '%s'", argv[i]);
		}
	}
	nsfd = open(ns, O_RDONLY | O_CLOEXEC);
	if (nsfd < 0) {
		fprintf(stderr, "rootasm: watch: open %s: %s\n", ns, strerror(errno));
		return EXIT_RUNTIME;
	}
	fd = rootasm_watch_open(nsfd, &e);
	if (fd < 0) {
		close(nsfd);
		return cli_fail(&e);
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/* Tell a caller that waits for us that the mark is in place. */
	fprintf(stderr, "rootasm: watching mount namespace %s\n", ns);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!stop && (count < 0 || seen < count)) {
		struct rootasm_mount_event ev[64];
		int n = rootasm_watch_read(fd, ev, 64, 200);

		for (int i = 0; i < n && (count < 0 || seen < count); i++, seen++) {
			const char *what = ev[i].attach && ev[i].detach ? "move" : ev[i].attach ? "attach" : "detach";

			rootasm_mount_describe(ev[i].mnt_id, nsfd, json, line, sizeof(line));
			if (json)
				printf("{\"event\": \"%s\", \"mount\": %s}\n", what, line);
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
