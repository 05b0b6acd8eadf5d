// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rootasm-runtime's messages: to stderr, and to the engine's --log file in
 * its --log-format (text or json), each naming the command and container.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "runtime.h"
#include "util.h"


static FILE *log_file;
static bool log_json;
static const char *log_cmd = "", *log_id;

void rt_log_open(const char *path, const char *format)
{
	int fd;

	log_json = format && !strcmp(format, "json");
	if (!path)
		return;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
	if (fd >= 0 && !(log_file = fdopen(fd, "a")))
		close(fd);
}

/* (its buffers, 50 KiB of stack, are touched only when a line is written) */
static __attribute__((noinline)) void say_out(const char *level, bool error, const char *fmt, va_list ap)
{
	char msg[8192], line[8400], esc[8400 * 4];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	/*
	 * Engines read a runtime's error as text: podman takes "no such file or
	 * directory" for the container's command not found (exit 127) whatever
	 * was missing. Said otherwise, a missing layout is the runtime's error.
	 */
	for (char *p; (p = strcasestr(msg, "No such file or directory"));) {
		static const char said[] = "not found (ENOENT)";
		size_t from = strlen("No such file or directory");

		memmove(p + strlen(said), p + from, strlen(p + from) + 1);
		memcpy(p, said, strlen(said));
	}
	if (log_id)
		snprintf(line, sizeof(line), RT_NAME ": %s %s: %s%s", log_cmd, log_id, error ? "" : "warning: ", msg);
	else
		snprintf(line, sizeof(line), RT_NAME ": %s%s", error ? "" : "warning: ", msg);
	ra_escape(line, esc, sizeof(esc));
	/* (a warning: to the log, or without one to the terminal say() found) */
	if (error || !log_file)
		fprintf(stderr, "%s\n", esc);
	if (log_file) {
		char ts[64];
		struct timespec now;
		struct tm tm;

		clock_gettime(CLOCK_REALTIME, &now);
		gmtime_r(&now.tv_sec, &tm);
		strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
		if (log_json) {
			json_t *o = json_pack("{s:s, s:s, s:s}", "level", level, "msg", line, "time", ts);
			char *s = o ? json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;

			if (s)
				fprintf(log_file, "%s\n", s);
			free(s);
			json_decref(o);
		} else {
			fprintf(log_file, "time=\"%s\" level=%s msg=\"%s\"\n", ts, level, esc);
		}
		fflush(log_file);
	}
}

static void say(const char *level, const char *fmt, va_list ap)
{
	bool error = !strcmp(level, "error");

	/*
	 * A warning is the engine's to read in its log: the runtime's standard
	 * error may be the container's (a shim's create), where it would be
	 * the container's output. Without a log, a terminal gets it; else
	 * nobody, and nothing is formatted.
	 */
	if (error || log_file || isatty(STDERR_FILENO))
		say_out(level, error, fmt, ap);
}

int rt_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("error", fmt, ap);
	va_end(ap);
	return -1;
}

void rt_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("warning", fmt, ap);
	va_end(ap);
}

void rt_log_for(const char *cmd, const char *id)
{
	if (cmd)
		log_cmd = cmd;
	if (id)
		log_id = id;
}

void rt_log_flush(void)
{
	if (log_file)
		fflush(log_file);
}

/*
 * ROOTASM_RUNTIME_TIMES=1: where a create's time goes, one line per stage on
 * standard error ("rootasm-runtime: time STAGE MS", milliseconds since
 * main()), for ci/bench/run and an operator's measurements; of create and run
 * only (rt_time_say()): another command's standard error may be a
 * container's (exec), where nothing of ours belongs. The stages before the
 * command is known are kept until then. Without it, one getenv() per process
 * and nothing else.
 */
static struct {
	int on;			/* -1: not asked yet */
	bool saying;
	struct timespec t0;
	struct {
		const char *stage;
		double ms;
	} early[4];
	size_t n_early;
} times = { .on = -1 };

void rt_time(const char *stage)
{
	struct timespec t;
	double ms;

	if (times.on < 0) {
		const char *v = secure_getenv("ROOTASM_RUNTIME_TIMES");

		times.on = v && !strcmp(v, "1");
		clock_gettime(CLOCK_MONOTONIC, &times.t0);
	}
	if (!times.on)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t);
	ms = (double)(t.tv_sec - times.t0.tv_sec) * 1e3 + (double)(t.tv_nsec - times.t0.tv_nsec) / 1e6;
	if (times.saying)
		fprintf(stderr, RT_NAME ": time %s %.3f\n", stage, ms);
	else if (times.n_early < ARRAY_SIZE(times.early))
		times.early[times.n_early++] = (typeof(times.early[0])){ stage, ms };
}

void rt_time_say(void)
{
	if (times.on <= 0 || times.saying)
		return;
	times.saying = true;
	for (size_t i = 0; i < times.n_early; i++)
		fprintf(stderr, RT_NAME ": time %s %.3f\n", times.early[i].stage, times.early[i].ms);
}
