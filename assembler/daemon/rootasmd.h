/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rootasmd: one per node, holding one detached mount per image (the
 * library's image cache) and handing finished trees to the clients its
 * policy allows. One file per concern:
 *
 *   main.c    options, the listening socket (bound, or from systemd's socket
 *             activation), signals, a pool of threads that each accept and serve
 *             one connection at a time, shutdown
 *   policy.c  the policy file: who may assemble what ("Policy" in PROTOCOL.md)
 *   serve.c   one connection: requests in, trees or errors out
 *   log.c     log lines, with journal priorities under systemd
 *
 * The daemon never attaches a mount: it holds detached mounts (the cache) and
 * sends detached trees. It never resolves a path against its own working
 * directory on a client's behalf (it runs in /).
 */
#ifndef ROOTASMD_H
#define ROOTASMD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "rootasm.h"

#define RD_MAX_PREFIXES	64
#define RD_MAX_IDS	256
#define RD_MAX_RULES	256
#define RD_POLICY_MAX	(1u << 20)

/* One rule of the policy: whom it is for, and what they may do. */
struct rd_rule {
	uid_t uids[RD_MAX_IDS];
	size_t nuids;
	gid_t gids[RD_MAX_IDS];
	size_t ngids;
	char *layouts[RD_MAX_PREFIXES];		/* directories whose layout files they may name */
	size_t nlayouts;
	char *sources[RD_MAX_PREFIXES];		/* directories an inline layout's host objects must lie in */
	size_t nsources;
	bool inline_ok;				/* may send layouts inline */
	bool userns;				/* may ask for trees idmapped into their user namespace */
	bool status;				/* may ask for status (the cache's contents) */
	unsigned int max_connections;		/* at once, per uid */
};

struct rd_policy {
	struct rd_rule *rules;
	size_t n;
};

/* Parse the policy file at @path; fills @e (file:line:column where jansson says). */
int rd_policy_load(const char *path, struct rd_policy **ret, struct rootasm_error *e);
void rd_policy_free(struct rd_policy *p);
/* The rule for a peer (first match by uid, then by gid or supplementary group), or NULL. */
const struct rd_rule *rd_policy_match(const struct rd_policy *p, uid_t uid, gid_t gid, const gid_t *groups,
				      size_t ngroups);
/* Whether @path (absolute, no "..", no "//") is @prefix itself or below it. */
bool rd_path_below(const char *path, const char *prefix);

struct rd_counters {
	atomic_ulong requests, assembled, failed, refused, protocol_errors, busy, connections;
	atomic_uint clients_now, clients_peak;
};

struct rd_daemon {
	struct rootasm_ctx *ctx;		/* with the image cache */
	const char *policy_path;		/* NULL: only root is served */
	pthread_rwlock_t policy_lock;
	struct rd_policy *policy;
	unsigned int max_clients;		/* threads at once */
	unsigned int idle_timeout_s;		/* a connection without a request for this long is closed */
	struct rd_counters n;
	pthread_mutex_t lock;			/* guards the client list below */
	pthread_cond_t drained;
	struct rd_client *clients;
	bool stopping;
	bool debug;
	uint64_t started_ns;
};

struct rd_client {
	struct rd_client *next;
	struct rd_daemon *d;
	int sock;
	pid_t pid;
	uid_t uid;
	gid_t gid;
	gid_t groups[RD_MAX_IDS];
	size_t ngroups;
	int pidfd;				/* SO_PEERPIDFD where the kernel has it, else pidfd_open() of its pid */
	bool admin;				/* judged at connect (rootasm_principal_of_pidfd()) */
};

/* Serve one connection in the calling thread, until it ends (the caller then closes and frees @c). */
void *rd_serve(void *c);
/* {"rootasm": 1, "error": {...}} for @e (NULL when out of memory). */
struct json_t;
struct json_t *rd_error_reply(const struct rootasm_error *e);
/* The protocol's requests as serve.c's table has them (rootasmd --protocol). */
struct json_t *rd_protocol_json(void);

/*
 * Log a message of syslog priority @prio (LOG_ERR ... LOG_DEBUG) on stderr, one
 * write for all its lines (log.c). On a terminal or a pipe the first line starts
 * with "rootasmd: "; when stderr is the journal (JOURNAL_STREAM names it) every
 * line starts with the priority as sd-daemon(3) has it ("<3>", SD_ERR) and without
 * the name, which the journal records.
 */
void rd_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Decide once, at start, whether stderr is the journal; true if it is. */
bool rd_log_init(void);

#endif
