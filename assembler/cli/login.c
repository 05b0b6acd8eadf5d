// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rootasm login [OPTION...] REGISTRY and rootasm logout [OPTION...] [REGISTRY]:
 * the credentials podman login keeps, in the file it keeps them in.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"

static const char login_help[] =
	"Usage: rootasm login [OPTION...] REGISTRY\n"
	"Log in to REGISTRY (HOST[:PORT]) as podman login does: the password checked\n"
	"with the registry as an import would send it (its /v2/ answered with it: HTTP\n"
	"Basic, or a token from the registry's realm), then kept in the auth file podman\n"
	"login writes, which import and inspect read: --authfile FILE, else\n"
	"$REGISTRY_AUTH_FILE, else $XDG_RUNTIME_DIR/containers/auth.json, else\n"
	"/run/containers/UID/auth.json (\"auths\": {REGISTRY: {\"auth\": base64 of\n"
	"USER:PASSWORD}}; the file 0600, its other entries kept). Nothing is written when\n"
	"the registry refuses them.\n"
	"\n"
	"  -u, --username USER  the user (default: asked on the terminal)\n"
	"  --password-stdin     the password is standard input's first line (default:\n"
	"                       asked on the terminal, not echoed)\n"
	"  --authfile FILE      the auth file to write\n"
	"  --tls-verify[=BOOL]  check the registry's TLS certificate (default true);\n"
	"                       false also allows plain HTTP (a local registry)\n"
	"  --cert-dir DIR       the registry's certificates (default: as import)\n"
	"  -q, --quiet          no \"Login Succeeded!\"\n"
	"  --json[=pretty]      errors as JSON\n"
	"  --debug              trace each step\n"
	"  -h, --help           this text\n";

static const char logout_help[] =
	"Usage: rootasm logout [OPTION...] REGISTRY | --all\n"
	"Remove REGISTRY's credentials (HOST[:PORT]) from the auth file rootasm login and\n"
	"podman login write (the same file as login: --authfile FILE, else\n"
	"$REGISTRY_AUTH_FILE, else $XDG_RUNTIME_DIR/containers/auth.json, else\n"
	"/run/containers/UID/auth.json); with --all, every registry's. Its other keys\n"
	"stay. Exit status 1 when it has none for REGISTRY.\n"
	"\n"
	"  -a, --all            every registry's credentials\n"
	"  --authfile FILE      the auth file\n"
	"  -q, --quiet          no \"Removed login credentials\" line\n"
	"  --json[=pretty]      errors as JSON\n"
	"  --debug              trace each step\n"
	"  -h, --help           this text\n";

/* The auth file podman login writes: @given, else $REGISTRY_AUTH_FILE, else the runtime directory's. */
static void auth_path(const char *given, char *out, size_t size)
{
	const char *env = getenv("REGISTRY_AUTH_FILE"), *xdg = getenv("XDG_RUNTIME_DIR");

	if (given)
		snprintf(out, size, "%s", given);
	else if (env && *env)
		snprintf(out, size, "%s", env);
	else if (xdg && *xdg)
		snprintf(out, size, "%s/containers/auth.json", xdg);
	else
		snprintf(out, size, "/run/containers/%u/auth.json", (unsigned int)getuid());
}

/* REGISTRY as the auth file names it: docker:// and a final '/' dropped. */
static int registry_operand(const char *arg, char *out, size_t size)
{
	size_t n;

	/* (podman takes a URL's host too: https://HOST/ is HOST) */
	if (!strncmp(arg, "docker://", 9))
		arg += 9;
	else if (!strncmp(arg, "https://", 8) || !strncmp(arg, "http://", 7))
		arg = strstr(arg, "://") + 3;
	snprintf(out, size, "%s", arg);
	n = strlen(out);
	while (n && out[n - 1] == '/')
		out[--n] = '\0';
	if (!n || strchr(out, '/'))
		return cli_usage("'%s': give the registry as HOST[:PORT]", arg);
	return CLI_GO_ON;
}

/* A failure of @op on @path, printed as the library's are (one line, or JSON): the exit status. */
static int fail(enum rootasm_error_kind kind, int err, const char *op, const char *path, const char *msg)
{
	struct rootasm_error e = { .err = err, .kind = kind };

	snprintf(e.op, sizeof(e.op), "%s", op);
	snprintf(e.path, sizeof(e.path), "%s", path);
	snprintf(e.msg, sizeof(e.msg), "%s", msg ? msg : strerror(err));
	return cli_fail(&e);
}

/* The auth file's document in *ret: a new one when it is not there; else the exit status (said). */
static int auth_read(const char *path, json_t **ret, bool *existed)
{
	char buf[1 << 20];
	json_error_t je;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);

	*ret = NULL;
	*existed = fd >= 0;
	if (fd < 0 && errno == ENOENT) {
		*ret = json_object();
		return *ret ? 0 : cli_errno(ENOMEM, "read auth file");
	}
	if (fd < 0)
		return fail(ROOTASM_ERROR_RUNTIME, errno, "read auth file", path, NULL);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0 || (size_t)n == sizeof(buf))
		return fail(ROOTASM_ERROR_RUNTIME, n < 0 ? errno : EFBIG, "read auth file", path, NULL);
	*ret = json_loadb(buf, (size_t)n, JSON_REJECT_DUPLICATES, &je);
	explicit_bzero(buf, sizeof(buf));
	if (!json_is_object(*ret)) {
		json_decref(*ret);
		*ret = NULL;
		return fail(ROOTASM_ERROR_USAGE, EINVAL, "read auth file", path, "not a JSON object");
	}
	return 0;
}

/* mkdir -p of @path's directory, the last one 0700 as podman makes it. */
static int make_parent(const char *path)
{
	char dir[4096];

	snprintf(dir, sizeof(dir), "%s", path);
	for (char *s = dir + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		if (mkdir(dir, strchr(s + 1, '/') ? 0755 : 0700) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	return 0;
}

/* @j replaces the auth file @path whole: a temporary file of mode 0600 beside it, synced, renamed. */
static int auth_write(const char *path, json_t *j)
{
	char tmp[4200], *text = json_dumps(j, JSON_INDENT(1));
	size_t len = text ? strlen(text) : 0;
	int fd = -1, r = 0;

	if (!text)
		return cli_errno(ENOMEM, "write auth file");
	errno = 0;
	if (make_parent(path) < 0 ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s.rootasm-XXXXXX", path) >= sizeof(tmp) || (fd = mkstemp(tmp)) < 0) {
		r = errno ? errno : ENAMETOOLONG;
	} else if (fchmod(fd, 0600) < 0 || write(fd, text, len) != (ssize_t)len || write(fd, "\n", 1) != 1 ||
		   fsync(fd) < 0 || close(fd) < 0 || (fd = -1, rename(tmp, path) < 0)) {
		r = errno ? errno : EIO;
		if (fd >= 0)
			close(fd);
		unlink(tmp);
	}
	explicit_bzero(text, len);
	free(text);
	return r ? fail(ROOTASM_ERROR_RUNTIME, r, "write auth file", path, NULL) : 0;
}

int cmd_login(int argc, char **argv)
{
	static const struct option opts[] = {
		CLI_COMMON_LONGOPTS, CLI_ARG("username", 'u'), CLI_FLAG("password-stdin", 'P'),
		CLI_ARG("authfile", 'A'), { "tls-verify", optional_argument, NULL, 'V' }, CLI_ARG("cert-dir", 'D'),
		CLI_ARG("password", 'p'), { 0 },
	};
	struct rootasm_import_opts o = { .size = sizeof(o) };
	struct rootasm_error e = { 0 };
	char user[256] = "", pw[1024] = "", reg[256], path[4096], *creds = NULL, *auth = NULL;
	const char *arg, *authfile = NULL;
	bool from_stdin = false, existed;
	json_t *j, *auths;
	int c, r;

	while ((c = cli_getopt_registry(argc, argv, ":hqu:p:", opts, login_help, &o, &creds, &r)) >= 0) {
		switch (c) {
		case 'p':
			/* podman's -p: not taken (and never echoed): every process of the machine reads a command line */
			return cli_usage("-p/--password: a password on the command line is every process's to read: give it "
					 "on standard input (--password-stdin), or at the prompt");
		case 'u':
			if (!*optarg || strchr(optarg, ':') || strlen(optarg) >= sizeof(user))
				return cli_usage("--username '%s': a user name without ':'", optarg);
			snprintf(user, sizeof(user), "%s", optarg);
			break;
		case 'P':
			from_stdin = true;
			break;
		}
	}
	if (c == CLI_OPTS_EXIT)
		return r;
	/* --authfile: the file login writes, not one to read credentials from */
	authfile = o.authfile;
	o.authfile = NULL;
	if ((r = cli_last_operand(argc, argv, "registry", "REGISTRY (HOST[:PORT])", &arg)) != CLI_GO_ON)
		return r;
	if ((r = registry_operand(arg, reg, sizeof(reg))) != CLI_GO_ON)
		return r;
	if (!*user && (cli_ask("Username: ", true, user, sizeof(user)) < 0 || !*user))
		return cli_usage("no --username given, and no terminal to ask on");
	if (from_stdin) {
		size_t n = fread(pw, 1, sizeof(pw) - 1, stdin);

		pw[n] = '\0';
		pw[strcspn(pw, "\r\n")] = '\0';
	} else if (cli_ask("Password: ", false, pw, sizeof(pw)) < 0) {
		return cli_usage("no --password-stdin, and no terminal to ask for the password on");
	}
	if (!*pw)
		return cli_usage("an empty password");
	r = asprintf(&creds, "%s:%s", user, pw);
	explicit_bzero(pw, sizeof(pw));
	if (r < 0)
		return cli_errno(ENOMEM, "login");
	o.creds = creds;
	r = rootasm_registry_login(reg, &o, &auth, &e);
	cli_registry_done(creds);
	if (r < 0)
		return cli_fail(&e);
	auth_path(authfile, path, sizeof(path));
	r = auth_read(path, &j, &existed);
	if (r) {
		explicit_bzero(auth, strlen(auth));
		free(auth);
		return r;
	}
	auths = json_object_get(j, "auths");
	if (!json_is_object(auths)) {
		auths = json_object();
		json_object_set_new(j, "auths", auths);
	}
	json_object_set_new(auths, reg, json_pack("{s:s}", "auth", auth));
	explicit_bzero(auth, strlen(auth));
	free(auth);
	r = auth_write(path, j);
	json_decref(j);
	if (r == 0 && !cli.quiet)
		printf("Login Succeeded!\n");
	return r;
}

int cmd_logout(int argc, char **argv)
{
	static const struct option opts[] = {
		CLI_COMMON_LONGOPTS, CLI_FLAG("all", 'a'), CLI_ARG("authfile", 'A'), { 0 },
	};
	char reg[256] = "", path[4096];
	const char *arg, *authfile = NULL;
	bool all = false, existed;
	json_t *j, *auths;
	int c, r;

	while ((c = cli_getopt(argc, argv, ":hqa", opts, logout_help, &r)) >= 0) {
		if (c == 'a')
			all = true;
		else if (c == 'A')
			authfile = optarg;
	}
	if (c == CLI_OPTS_EXIT)
		return r;
	if (all) {
		if ((r = cli_no_operand(argc, argv)) != CLI_GO_ON)
			return r;
	} else if ((r = cli_last_operand(argc, argv, "registry", "REGISTRY (HOST[:PORT]) or --all", &arg)) !=
			   CLI_GO_ON ||
		   (r = registry_operand(arg, reg, sizeof(reg))) != CLI_GO_ON) {
		return r;
	}
	auth_path(authfile, path, sizeof(path));
	r = auth_read(path, &j, &existed);
	if (r)
		return r;
	auths = json_object_get(j, "auths");
	if (!all && (!json_is_object(auths) || json_object_del(auths, reg) < 0)) {
		char msg[400];

		snprintf(msg, sizeof(msg), "not logged in to %s", reg);
		json_decref(j);
		return fail(ROOTASM_ERROR_RUNTIME, ENOENT, "logout", path, msg);
	}
	if (all && !existed) {
		json_decref(j);
		return 0;
	}
	if (all)
		json_object_del(j, "auths");
	r = auth_write(path, j);
	json_decref(j);
	if (r == 0 && !cli.quiet)
		printf(all ? "Removed login credentials for all registries\n" : "Removed login credentials for %s\n",
		       reg);
	return r;
}
