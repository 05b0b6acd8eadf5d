// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rootasmd: options, the listening socket, signals, the accept loop.
 *
 *   socket    systemd socket activation (sd_listen_fds(): exactly one fd, checked to be
 *             a listening AF_UNIX SOCK_SEQPACKET socket); otherwise bind(--socket) + listen
 *   systemd   sd_notify(): READY=1 once it serves, RELOADING=1 ... READY=1 around a
 *             reload, STOPPING=1, and STATUS= with what it does (nothing without
 *             NOTIFY_SOCKET: the same daemon runs in the foreground); log lines with
 *             journal priorities when stderr is the journal (log.c)
 *   signals   SIGTERM/SIGINT: stop accepting, wake every connection (shutdown(2)),
 *             wait for them, free the context (which dissolves the image cache), exit 0;
 *             SIGHUP: read the policy again (a bad file keeps the old one; the result
 *             is logged and is the STATUS=)
 *   accept    a pool of threads, each accepting and serving its own connection (acceptor());
 *             SO_PEERCRED (uid, gid, pid), SO_PEERGROUPS, SO_PEERPIDFD where the kernel
 *             has it; a peer no rule names, or one over --max-clients or its rule's
 *             max_connections, gets one error reply and is closed
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libgen.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <systemd/sd-daemon.h>

#include "proto.h"
#include "rootasmd.h"
#include "util.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

#define DEFAULT_SOCKET	"/run/rootasmd.sock"
#define DEFAULT_POLICY	"/etc/rootasm/rootasmd.policy"

static const char help[] =
	"Usage: rootasmd [OPTION...]\n"
	"The rootasm service: one detached mount per image for the whole node, and\n"
	"finished trees handed to the clients the policy allows, over an AF_UNIX\n"
	"SOCK_SEQPACKET socket (protocol and policy: PROTOCOL.md). Runs in the\n"
	"foreground; with systemd it takes its socket from rootasmd.socket, tells\n"
	"systemd when it is ready (Type=notify) and logs with journal priorities.\n"
	"\n"
	"  --socket PATH        listen at PATH (default " DEFAULT_SOCKET "; ignored when\n"
	"                       systemd passes a socket)\n"
	"  --policy FILE        who may assemble what (default " DEFAULT_POLICY ";\n"
	"                       without it only uid 0 is served; a regular file owned\n"
	"                       by root, writable by nobody else); SIGHUP reads it again\n"
	"  --max-clients N      connections served at once (default 256; an eighth of them\n"
	"                       kept for administrators)\n"
	"  --idle-timeout S     close a connection idle for S seconds (default 60)\n"
	"  --cache-entries N    images kept mounted (default 256)\n"
	"  --cache-bytes N      their total size in bytes, k/m/g suffix (default 64g)\n"
	"  --debug              one line per request, and the library's trace\n"
	"  -h, --help           this text\n"
	"  -V, --version        the version\n"
	"  --protocol           the requests it takes, their keys and types, as JSON\n"
	"                       (what PROTOCOL.md describes), and exit\n"
	"\n"
	"Signals: SIGTERM, SIGINT stop it (the image cache is dissolved); SIGHUP reads\n"
	"the policy again.\n"
	"Exit status: 0 after SIGTERM/SIGINT, 1 when it cannot start, 2 bad usage.\n"
	"See rootasmd(8).\n";

static struct rd_daemon D;

static int usage_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_err(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rd_log(LOG_ERR, "%s (see rootasmd --help)", msg);
	return 2;
}

static int number(const char *s, unsigned long long max, unsigned long long *ret)
{
	char *end;
	unsigned long long v, mul = 1;

	errno = 0;
	if (!s || !*s || *s == '-')
		return -EINVAL;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': mul = 1ULL << 10; end++; break;
	case 'm': case 'M': mul = 1ULL << 20; end++; break;
	case 'g': case 'G': mul = 1ULL << 30; end++; break;
	case 't': case 'T': mul = 1ULL << 40; end++; break;
	}
	if (*end || v == 0 || v > max / mul)
		return -EINVAL;
	*ret = v * mul;
	return 0;
}

/* The socket systemd passed (rootasmd.socket): exactly one, a listening AF_UNIX SOCK_SEQPACKET one. */
static int activated_socket(void)
{
	int n = sd_listen_fds(1);	/* 1: LISTEN_* out of the environment */

	if (n == 0)
		return -ENOENT;
	if (n < 0) {
		rd_log(LOG_ERR, "sockets from systemd: %s", strerror(-n));
		return n;
	}
	if (n != 1) {
		rd_log(LOG_ERR, "systemd passed %d sockets; rootasmd.socket has exactly one", n);
		return -EINVAL;
	}
	if (sd_is_socket_unix(SD_LISTEN_FDS_START, SOCK_SEQPACKET, 1, NULL, 0) <= 0) {
		rd_log(LOG_ERR, "fd %d from systemd is not a listening AF_UNIX SOCK_SEQPACKET socket "
		       "(ListenSequentialPacket= in rootasmd.socket)", SD_LISTEN_FDS_START);
		return -EINVAL;
	}
	if (fcntl(SD_LISTEN_FDS_START, F_SETFD, FD_CLOEXEC) < 0)
		return -errno;
	return SD_LISTEN_FDS_START;
}

/* The socket file we bound (its device and inode): at the stop we remove it only if it is still ours. */
static struct stat bound_st;

/*
 * Whether a daemon listens at @sa: a connect() that succeeds, or finds a full
 * backlog, reaches a live listener; ECONNREFUSED is a socket file nobody
 * listens on any more (a daemon that was killed). Returns the listener's pid
 * (0 if unknown), -1 if none.
 */
static pid_t live_listener(const struct sockaddr_un *sa)
{
	struct timeval tv = { 1, 0 };
	struct ucred cr = { 0 };
	socklen_t len = sizeof(cr);
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	pid_t pid = -1;

	if (s < 0)
		return 0;	/* cannot tell: do not take it over */
	setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(s, (const struct sockaddr *)sa, sizeof(*sa)) == 0)
		pid = getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0 ? cr.pid : 0;
	else if (errno != ECONNREFUSED && errno != ENOENT)
		pid = 0;	/* EAGAIN (a full backlog), EPROTOTYPE (a stream listener): someone is there */
	close(s);
	return pid;
}

static int bound_socket(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_free_ char *dir = NULL;
	_cleanup_close_ int dfd = -EBADF;
	struct stat st;
	int fd;
	pid_t live;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		rd_log(LOG_ERR, "--socket %s: path too long", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	/* two daemons starting at once: one looks and binds, then the other (the directory's lock) */
	dir = strdup(path);
	if (dir)
		dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0)
		flock(dfd, LOCK_EX);
	/* a socket left by a daemon that was killed: replace it; a live daemon's, or anything else, stays */
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode)) {
		live = live_listener(&sa);
		if (live >= 0) {
			if (live > 0)
				rd_log(LOG_ERR, "--socket %s: a live rootasmd (pid %d) listens there; stop it first, or "
				       "give another --socket", path, (int)live);
			else
				rd_log(LOG_ERR, "--socket %s: something listens there; stop it first, or give another "
				       "--socket", path);
			return -EADDRINUSE;
		}
		unlink(path);
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(path, 0666) < 0 || lstat(path, &bound_st) < 0 || listen(fd, 128) < 0) {
		int r = -errno;

		rd_log(LOG_ERR, "listen at %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return r;
	}
	return fd;
}

/*
 * Read the policy at @path into D.policy. A missing file is no policy (only uid 0
 * is served) unless @must_exist; a bad one is refused and the old policy stays.
 * @reload: a SIGHUP's, logged as such. One log line either way, and @status, a
 * line for systemd's STATUS=.
 */
static int policy_load(const char *path, bool must_exist, bool reload, char *status, size_t size)
{
	const char *what = reload ? "reload: " : "";
	struct rootasm_error e = { 0 };
	struct rd_policy *p = NULL, *old;
	char line[8192];

	/* a dangling symlink is no "no policy": rd_policy_load() refuses it */
	if (!must_exist && faccessat(AT_FDCWD, path, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT) {
		rd_log(LOG_NOTICE, "%sno policy at %s: only uid 0 is served", what, path);
		snprintf(status, size, "no policy at %s: only uid 0 is served", path);
	} else if (rd_policy_load(path, &p, &e) < 0) {
		rootasm_error_format(&e, line, sizeof(line));
		rd_log(LOG_ERR, "%spolicy: %s%s", what, line, reload ? " (the previous policy stays)" : "");
		snprintf(status, size, "%s: %s%s", reload ? "reload failed" : "policy", line,
			 reload ? " (the previous policy stays)" : "");
		return -EINVAL;
	} else {
		rd_log(LOG_INFO, "%spolicy %s: %zu rule%s", what, path, p->n, p->n == 1 ? "" : "s");
		snprintf(status, size, "policy %s%s: %zu rule%s", path, reload ? " (reloaded)" : "", p->n,
			 p->n == 1 ? "" : "s");
	}
	pthread_rwlock_wrlock(&D.policy_lock);
	old = D.policy;
	D.policy = p;
	pthread_rwlock_unlock(&D.policy_lock);
	rd_policy_free(old);
	return 0;
}

static void library_log(void *userdata, const char *line)
{
	rd_log(LOG_DEBUG, "debug: %s", line);
}

/* CLOCK_MONOTONIC in microseconds, for RELOADING=1's MONOTONIC_USEC= (Type=notify-reload) */
static unsigned long long monotonic_usec(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (unsigned long long)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

/* The connection is over: out of the list, closed, freed. */
static void client_done(struct rd_client *c)
{
	pthread_mutex_lock(&D.lock);
	for (struct rd_client **p = &D.clients; *p; p = &(*p)->next) {
		if (*p == c) {
			*p = c->next;
			break;
		}
	}
	atomic_fetch_sub(&D.n.clients_now, 1);
	if (!D.clients)
		pthread_cond_broadcast(&D.drained);
	pthread_mutex_unlock(&D.lock);
	close_fdp(&c->sock);
	close_fdp(&c->pidfd);
	free(c);
}

/* One error reply to a peer we will not serve, then close. */
static void refuse(int sock, int err, enum rootasm_error_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void refuse(int sock, int err, enum rootasm_error_kind kind, const char *fmt, ...)
{
	struct rootasm_error e = { .err = err, .kind = kind };
	va_list ap;

	snprintf(e.op, sizeof(e.op), "connect");
	va_start(ap, fmt);
	vsnprintf(e.msg, sizeof(e.msg), fmt, ap);
	va_end(ap);
	ra_msg_send(sock, rd_error_reply(&e), -EBADF, MSG_DONTWAIT);
	if (err == EBUSY)
		atomic_fetch_add(&D.n.busy, 1);
	close(sock);
}

/* Admit the peer of @sock (taken): its client, or NULL when it was refused (and closed). */
static struct rd_client *new_client(int sock)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct timeval tv = { .tv_sec = D.idle_timeout_s };
	struct rd_client *c;
	unsigned int mine = 0, limit = 4096, cap;

	atomic_fetch_add(&D.n.connections, 1);
	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		close(sock);
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		refuse(sock, ENOMEM, ROOTASM_ERROR_RUNTIME, "out of memory");
		return NULL;
	}
	c->d = &D;
	c->sock = sock;
	c->pid = cred.pid;
	c->uid = cred.uid;
	c->gid = cred.gid;
	len = sizeof(c->groups);
	if (getsockopt(sock, SOL_SOCKET, SO_PEERGROUPS, c->groups, &len) == 0)
		c->ngroups = len / sizeof(gid_t);
	len = sizeof(int);
	if (getsockopt(sock, SOL_SOCKET, SO_PEERPIDFD, &c->pidfd, &len) < 0)
		c->pidfd = -EBADF;
	/* before Linux 6.5: the pid, pinned now (then judged on that pidfd, which must still be alive) */
	if (c->pidfd < 0 && cred.pid > 0)
		c->pidfd = syscall(SYS_pidfd_open, cred.pid, 0);
	/* an administrator is judged on the process, never on its uid alone (rootasm.h) */
	if (c->uid == 0) {
		struct rootasm_principal *p = NULL;

		if (rootasm_principal_of_pidfd(c->pidfd, c->uid, c->gid, c->groups, c->ngroups, &p, NULL) == 0)
			c->admin = rootasm_principal_is_admin(p);
		rootasm_principal_free(p);
	}
	(void)setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));

	pthread_rwlock_rdlock(&D.policy_lock);
	if (!c->admin) {
		const struct rd_rule *r = rd_policy_match(D.policy, c->uid, c->gid, c->groups, c->ngroups);

		limit = r ? r->max_connections : 0;
	}
	pthread_rwlock_unlock(&D.policy_lock);
	if (!limit) {
		/* nobody the policy names holds a connection (or a thread) of ours */
		close_fdp(&c->pidfd);
		free(c);
		atomic_fetch_add(&D.n.refused, 1);
		refuse(sock, EPERM, ROOTASM_ERROR_PERMISSION, "no rule of the policy names uid %u or its groups%s",
		       cred.uid, cred.uid == 0 ? " (uid 0 without CAP_SYS_ADMIN in the initial user namespace, the "
		       "daemon's mount namespace and root directory is an ordinary user)" : "");
		return NULL;
	}
	/*
	 * an eighth of the connections is kept for administrators (rootasm-runtime
	 * on the node): the users together, each within its rule's
	 * max_connections, cannot take them all
	 */
	cap = c->admin ? D.max_clients : D.max_clients - D.max_clients / 8;
	pthread_mutex_lock(&D.lock);
	for (struct rd_client *o = D.clients; o; o = o->next)
		mine += o->uid == c->uid;
	if (D.stopping || atomic_load(&D.n.clients_now) >= cap || mine >= limit) {
		unsigned int now = atomic_load(&D.n.clients_now);

		pthread_mutex_unlock(&D.lock);
		close_fdp(&c->pidfd);
		free(c);
		if (mine >= limit)
			refuse(sock, EBUSY, ROOTASM_ERROR_RUNTIME, "uid %u has %u connections open: the policy's max_connections",
			       cred.uid, mine);
		else
			refuse(sock, EBUSY, ROOTASM_ERROR_RUNTIME, "%u connections are served already (--max-clients %u%s)",
			       now, D.max_clients, cap < D.max_clients ? ", an eighth of them kept for administrators" : "");
		return NULL;
	}
	c->next = D.clients;
	D.clients = c;
	{
		unsigned int now = atomic_fetch_add(&D.n.clients_now, 1) + 1, peak = atomic_load(&D.n.clients_peak);

		while (now > peak && !atomic_compare_exchange_weak(&D.n.clients_peak, &peak, now))
			;
	}
	pthread_mutex_unlock(&D.lock);
	return c;
}

/*
 * The threads: a pool of acceptors. An idle thread waits in epoll on the
 * listening socket (non-blocking; EPOLLEXCLUSIVE: a connection wakes one
 * idle thread, not all of them, each of which would take the CPU of the
 * client that is waiting for its reply) and the stop eventfd (which wakes
 * every one); poll() where epoll cannot be set up. The one that accepts
 * a connection serves it itself (no hand-over to another thread: a new
 * connection costs one wake-up, as a request on a kept one does). When it
 * takes the last idle thread's place, it first starts another, up to
 * --max-clients + 1 threads (the one beyond the limit accepts only to say
 * "busy"); after its connection it waits again, or ends when SPARE others
 * are waiting already.
 */
#define SPARE 2

static int lfd = -EBADF, stopfd = -EBADF;
static unsigned int threads, idle;

static void *acceptor(void *arg);

/* Start one more acceptor; the daemon's lock is held. */
static void spawn_locked(void)
{
	pthread_attr_t attr;
	pthread_t t;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 1u << 20);
	if (pthread_create(&t, &attr, acceptor, NULL) == 0)
		threads++;
	pthread_attr_destroy(&attr);
}

/* This thread's epoll of the listening socket (exclusive) and the stop eventfd; -1: none (poll() then). */
static int acceptor_epoll(void)
{
	struct epoll_event l = { .events = EPOLLIN | EPOLLEXCLUSIVE, .data.fd = lfd };
	struct epoll_event e = { .events = EPOLLIN, .data.fd = stopfd };
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (ep >= 0 && (epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &l) < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, stopfd, &e) < 0)) {
		close(ep);
		ep = -1;
	}
	return ep;
}

/* Until the listening socket is readable (true) or the daemon stops (false). */
static bool acceptor_wait(int ep)
{
	struct pollfd p[2] = { { lfd, POLLIN, 0 }, { stopfd, POLLIN, 0 } };
	struct epoll_event ev[2];
	int n;

	if (ep < 0)
		return poll(p, 2, -1) > 0 && (p[0].revents & POLLIN);
	n = epoll_wait(ep, ev, 2, -1);
	for (int i = 0; i < n; i++)
		if (ev[i].data.fd == lfd)
			return true;
	return false;
}

static void *acceptor(void *arg)
{
	int ep = acceptor_epoll();

	pthread_mutex_lock(&D.lock);
	while (!D.stopping) {
		struct rd_client *c;
		int s;

		idle++;
		pthread_mutex_unlock(&D.lock);
		s = acceptor_wait(ep) ? accept4(lfd, NULL, NULL, SOCK_CLOEXEC) : -1;
		pthread_mutex_lock(&D.lock);
		idle--;
		if (s < 0)
			continue;	/* another thread took it, or we are stopping */
		if (!idle && !D.stopping && threads < D.max_clients + 1)
			spawn_locked();
		pthread_mutex_unlock(&D.lock);
		c = new_client(s);
		if (c) {
			rd_serve(c);
			client_done(c);
		}
		pthread_mutex_lock(&D.lock);
		if (idle >= SPARE)
			break;
	}
	threads--;
	pthread_cond_broadcast(&D.drained);
	pthread_mutex_unlock(&D.lock);
	if (ep >= 0)
		close(ep);
	return NULL;
}

static void stop(void)
{
	uint64_t one = 1;

	pthread_mutex_lock(&D.lock);
	D.stopping = true;
	(void)!write(stopfd, &one, sizeof(one));	/* wakes every idle acceptor */
	for (struct rd_client *c = D.clients; c; c = c->next)
		shutdown(c->sock, SHUT_RDWR);		/* wakes its recv(); its thread ends */
	while (threads)
		pthread_cond_wait(&D.drained, &D.lock);
	pthread_mutex_unlock(&D.lock);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },		{ "policy", required_argument, NULL, 'p' },
		{ "max-clients", required_argument, NULL, 'm' },	{ "idle-timeout", required_argument, NULL, 'i' },
		{ "cache-entries", required_argument, NULL, 'E' },	{ "cache-bytes", required_argument, NULL, 'B' },
		{ "debug", no_argument, NULL, 'd' },			{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },			{ "protocol", no_argument, NULL, 'P' },
		{ 0 },
	};
	struct rootasm_cache_opts co = { .size = sizeof(co) };
	const char *sock_path = DEFAULT_SOCKET, *policy = NULL;
	unsigned long long v;
	char status[8192 + 256];
	int c, sfd, r;
	bool bound = false;
	sigset_t mask;
	struct rlimit rl;
	struct stat st;

	rd_log_init();
	D.max_clients = 256;
	D.idle_timeout_s = 60;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hV", opts, NULL)) >= 0) {
		switch (c) {
		case 's':
			sock_path = optarg;
			break;
		case 'p':
			policy = optarg;
			break;
		case 'm':
			if (number(optarg, 65536, &v) < 0)
				return usage_err("--max-clients takes a number 1-65536, not '%s'", optarg);
			D.max_clients = v;
			break;
		case 'i':
			if (number(optarg, 86400, &v) < 0)
				return usage_err("--idle-timeout takes seconds 1-86400, not '%s'", optarg);
			D.idle_timeout_s = v;
			break;
		case 'E':
			if (number(optarg, 1u << 20, &v) < 0)
				return usage_err("--cache-entries takes a number 1-1048576, not '%s'", optarg);
			co.max_entries = v;
			break;
		case 'B':
			if (number(optarg, ~0ULL, &v) < 0)
				return usage_err("--cache-bytes takes a size (k/m/g/t), not '%s'", optarg);
			co.max_bytes = v;
			break;
		case 'd':
			D.debug = true;
			break;
		case 'h':
			fputs(help, stdout);
			return 0;
		case 'V':
			printf("rootasmd %s (library %s)\n", ROOTASM_VERSION_STRING, rootasm_version());
			return 0;
		case 'P': {
			json_t *j = rd_protocol_json();
			char *s = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;

			json_decref(j);
			if (!s)
				return 1;
			puts(s);
			free(s);
			return 0;
		}
		case ':':
			return usage_err("option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_err("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_err("no operands ('%s')", argv[optind]);
	/* every client's tree and the cache hold fds: take what the hard limit allows */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	/* nothing is ever resolved against our working directory */
	if (chdir("/") < 0)
		return 1;
	pthread_rwlock_init(&D.policy_lock, NULL);
	pthread_mutex_init(&D.lock, NULL);
	pthread_cond_init(&D.drained, NULL);
	D.policy_path = policy ? policy : DEFAULT_POLICY;
	if (policy_load(D.policy_path, policy != NULL, false, status, sizeof(status)) < 0) {
		sd_notifyf(0, "STATUS=%s", status);
		return 1;
	}
	if (rootasm_ctx_new(D.debug ? ROOTASM_CTX_DEBUG : 0, &D.ctx) < 0 || rootasm_ctx_set_cache(D.ctx, &co) < 0) {
		rd_log(LOG_ERR, "cannot make the library context");
		return 1;
	}
	/* the library's trace (--debug) is ours too: same stream, priority debug */
	rootasm_ctx_set_log(D.ctx, library_log, NULL);
	/* signals only through the signalfd; a peer gone mid-send is an error return (MSG_NOSIGNAL), not SIGPIPE */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	sigdelset(&mask, SIGPIPE);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	lfd = activated_socket();
	if (lfd == -ENOENT) {
		lfd = bound_socket(sock_path);
		bound = lfd >= 0;
	}
	if (lfd < 0 || sfd < 0) {
		sd_notify(0, "STATUS=no socket to listen on (see the log)");
		return 1;
	}
	/* several threads wait on it: only one gets a connection, the others EAGAIN */
	stopfd = eventfd(0, EFD_CLOEXEC);
	if (stopfd < 0 || fcntl(lfd, F_SETFL, fcntl(lfd, F_GETFL) | O_NONBLOCK) < 0)
		return 1;
	pthread_mutex_lock(&D.lock);
	for (int i = 0; i < SPARE; i++)
		spawn_locked();
	pthread_mutex_unlock(&D.lock);
	/* the test suite and ci/bench wait for this line: everything is in place when it comes */
	rd_log(LOG_INFO, "serving on %s (pid %d, cache: %u images, %llu bytes)",
	       bound ? sock_path : "the socket systemd passed", (int)getpid(),
	       co.max_entries ? co.max_entries : ROOTASM_CACHE_DEFAULT_ENTRIES,
	       (unsigned long long)(co.max_bytes ? co.max_bytes : ROOTASM_CACHE_DEFAULT_BYTES));
	sd_notifyf(0, "READY=1\nSTATUS=serving; %s", status);
	for (;;) {
		struct signalfd_siginfo si;

		if (read(sfd, &si, sizeof(si)) != sizeof(si))
			continue;
		if (si.ssi_signo == SIGHUP) {
			sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=reading %s again", monotonic_usec(),
				   D.policy_path);
			rd_log(LOG_INFO, "SIGHUP: reading %s again", D.policy_path);
			policy_load(D.policy_path, policy != NULL, true, status, sizeof(status));
			sd_notifyf(0, "READY=1\nSTATUS=serving; %s", status);
			continue;
		}
		rd_log(LOG_INFO, "%s: stopping", strsignal(si.ssi_signo));
		sd_notifyf(0, "STOPPING=1\nSTATUS=stopping (%s): waiting for %u connections", strsignal(si.ssi_signo),
			   atomic_load(&D.n.clients_now));
		break;
	}
	r = 0;
	stop();
	/* only our own socket file: another daemon's that took its place (after we were stopped) stays */
	if (bound && lstat(sock_path, &st) == 0 && st.st_dev == bound_st.st_dev && st.st_ino == bound_st.st_ino)
		unlink(sock_path);
	close(lfd);
	rootasm_ctx_free(D.ctx);	/* dissolves every cached image mount */
	pthread_rwlock_wrlock(&D.policy_lock);
	rd_policy_free(D.policy);
	pthread_rwlock_unlock(&D.policy_lock);
	return r;
}
