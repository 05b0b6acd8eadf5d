// SPDX-License-Identifier: LGPL-2.1-or-later
/* rootasm import [--store DIR] [--fs erofs|squashfs] [--tag NAME[:TAG]] [--tls-verify[=BOOL]] [--creds USER[:PASS]] [--authfile FILE] [--max-expansion N] [--quiet] oci:DIR[:TAG]|docker-archive:FILE[:NAME]|docker://REF */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"

static const char help[] =
	"Usage: rootasm import [OPTION...] oci:DIR[:TAG] | docker-archive:FILE[:NAME]\n"
	"       rootasm import [OPTION...] docker://REGISTRY/REPO[:TAG|@DIGEST]\n"
	"Import an OCI image layout (skopeo copy ... oci:DIR, umoci, buildah push oci:;\n"
	"Docker's schema 2 media types too), or an image from a registry, into a\n"
	"content-addressed store: each layer\n"
	"(tar, tar+gzip, tar+zstd) becomes a read-only layer image keyed by its diff-id\n"
	"(its chain id when made with the layers below) and shared by every image that has it;\n"
	"then a layout for the image is written (its layers bottom first, a tmpfs upper)\n"
	"and its path printed. Every blob's size and sha256 are checked against its\n"
	"descriptor before it is used; nothing is published before both the blob's\n"
	"digest and its diff-id matched. A second import of the same image writes nothing.\n"
	"OCI whiteouts become overlayfs whiteouts, opaque markers opaque directories.\n"
	"Needs root (owners, device nodes, trusted.* xattrs).\n"
	"\n"
	"  --store DIR     the store (default: $ROOTASM_STORE, else /var/lib/rootasm/store)\n"
	"  --tag NAME[:TAG]  name the image in the store (TAG: latest when none); `rootasm\n"
	"                  images` lists it, `rootasm exec`/`bundle create` take the name\n"
	"  --fs FS         erofs (default: uncompressed, 4 KiB chunks: sparse files stay\n"
	"                  sparse) or squashfs (zstd)\n"
	"  --tls-verify[=BOOL]  docker://: check the registry's TLS certificate (default\n"
	"                  true; bare: true); false also allows plain HTTP (a local registry)\n"
	"  --creds USER[:PASSWORD]  docker://: these credentials (without PASSWORD: asked\n"
	"                  on the terminal); other users see a command line\n"
	"  --authfile FILE docker://: credentials from FILE only (default: $REGISTRY_AUTH_FILE,\n"
	"                  else as podman and skopeo: $XDG_RUNTIME_DIR/containers/auth.json\n"
	"                  or /run/containers/UID/auth.json, ~/.config/containers/auth.json,\n"
	"                  ~/.docker/config.json, ~/.dockercfg: the first with an entry)\n"
	"  --cert-dir DIR  docker://: *.crt in DIR are trusted roots besides the system's, a\n"
	"                  *.cert and its *.key the client certificate (default: as podman,\n"
	"                  /etc/containers/certs.d/HOST:PORT, /etc/docker/certs.d/HOST:PORT)\n"
	"  --max-expansion N  a layer may unpack to N times its blob's size, at least\n"
	"                  64 MiB (default 64): a compression bomb fills no store (files,\n"
	"                  links' data and targets, xattrs, 1 KiB an inode; from a\n"
	"                  registry, also 256 MiB more than N times what has arrived)\n"
	"  --quiet         no progress on stderr (without it: a line per layer, and for\n"
	"                  docker:// a progress bar on a terminal)\n"
	"  --json[=pretty] the result (layout, store, digests, each layer) as JSON; progress\n"
	"                  as one JSON object per layer and line on stderr (docker://: and\n"
	"                  per download step, {\"event\":\"download\",...})\n"
	"  --debug         trace what is read and converted\n"
	"  -h, --help      this text\n"
	"\n"
	"docker-archive:FILE is what `docker save` and `podman save` write (a tar, plain,\n"
	"gzip or zstd): NAME picks the image among its RepoTags (without it the archive\n"
	"must hold one), which names the image in the store unless --tag does.\n"
	"TAG selects the manifest by its org.opencontainers.image.ref.name annotation;\n"
	"without it the index must list one manifest. A nested index is followed to the\n"
	"manifest for linux and this machine's architecture.\n"
	"docker:// pulls with the OCI distribution API (libcurl): a bearer token from the\n"
	"registry's challenge, anonymous or with credentials found as skopeo and podman\n"
	"find them (see --authfile); each layer is streamed into its layer image as it downloads, its\n"
	"digest checked as the bytes arrive; a dropped download resumes (HTTP Range).\n"
	"Short names (no REGISTRY), mirrors and blocked registries as registries.conf(5)\n"
	"says (aliases, unqualified-search-registries; else docker.io); TAG defaults to latest.\n"
	"Exit status: 0, 1 failure, 2 bad usage or a bad image (a digest that does not match).\n";

/* With --json: one JSON object per layer and line, {"event": "layer", ...}. */
static void progress_json(unsigned int i, unsigned int n, const struct rootasm_import_layer *l)
{
	json_t *o = json_pack("{s:s, s:I, s:I, s:s, s:s, s:s, s:I, s:I, s:b, s:f}", "event", "layer", "index",
			      (json_int_t)i + 1, "count", (json_int_t)n, "digest", l->digest, "diff_id", l->diff_id,
			      "media_type", l->media_type, "size", (json_int_t)l->size, "tar_bytes",
			      (json_int_t)l->tar_bytes, "cached", l->cached, "seconds", l->seconds);
	char *s = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;

	if (s)
		fprintf(stderr, "%s\n", s);
	free(s);
	json_decref(o);
}

/*
 * docker://: the downloads (from their threads). On a terminal one bar line,
 * redrawn: the bytes of every layer seen so far, the rate, the layer being
 * converted; with --json one object per call ({"event": "download", ...}).
 */
#define BAR_LAYERS 64

static struct {
	pthread_mutex_t lock;
	bool tty, drawn;
	unsigned int layer, count;		/* the layer being converted (1-based) of count */
	struct {
		char digest[80];
		unsigned long long done, size;
	} l[BAR_LAYERS];
	size_t n;
	struct timespec t0;
} bar = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Take the bar line away (before another line is written on stderr). */
static void bar_clear(void)
{
	if (bar.drawn)
		fputs("\r\033[K", stderr);
	bar.drawn = false;
}

/* The terminal's width now (a window may be resized while a pull runs), 80 when it does not say. */
static unsigned int columns(void)
{
	struct winsize ws;

	return ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col ? ws.ws_col : 80;
}

/* The columns @s takes on a terminal: UTF-8 continuation bytes take none ("…" is one). */
static size_t display_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

/* @s cut to @cols columns, at a character's start. */
static void cut_to(char *s, size_t cols)
{
	size_t w = 0;

	for (char *p = s; *p; p++) {
		if (((unsigned char)*p & 0xc0) != 0x80 && w++ == cols) {
			*p = '\0';
			return;
		}
	}
}

/*
 * The bar line, as wide as the terminal allows and never wider (a line that
 * wraps cannot be redrawn with \r): the parts that do not fit are left out,
 * least useful first (the "rootasm: import: " prefix, the rate, the layer),
 * the bar itself shrinks from 20 cells to none, podman's way.
 */
static void bar_draw(unsigned long long got, unsigned long long all, double secs)
{
	unsigned int cols = columns(), room = cols > 1 ? cols - 1 : 0;	/* the last column would wrap */
	char prefix[] = "rootasm: import: ", layer[32], amount[64], rate[32], cells[24], out[256];
	const char *pre = prefix;
	size_t fixed, w;

	snprintf(layer, sizeof(layer), " layer %u/%u,", bar.layer, bar.count);
	/* the amount as wide as the total: the bar keeps its width while the count grows */
	snprintf(amount, sizeof(amount), "%.1f", all / 1e6);
	snprintf(amount, sizeof(amount), " %*.1f of %.1f MB downloaded", (int)strlen(amount), got / 1e6, all / 1e6);
	snprintf(rate, sizeof(rate), ", %.1f MB/s", secs > 0 ? got / 1e6 / secs : 0.0);
	/* what must fit besides the bar: drop parts until it does, with at least a 5-cell bar */
	for (int drop = 0;; drop++) {
		if (drop >= 1)
			pre = "";
		if (drop >= 2)
			rate[0] = '\0';
		if (drop >= 3)
			layer[0] = '\0';
		if (drop >= 4)
			snprintf(amount, sizeof(amount), " %.0f/%.0f MB", got / 1e6, all / 1e6);
		fixed = strlen(pre) + 2 + strlen(layer) + strlen(amount) + strlen(rate);
		if (fixed + 5 <= room || drop >= 4)
			break;
	}
	w = room > fixed ? room - fixed : 0;
	if (w > 20)
		w = 20;
	if (w) {
		size_t f = all ? (size_t)((double)w * got / all) : 0;

		memset(cells, '#', f);
		memset(cells + f, '.', w - f);
		cells[w] = '\0';
	}
	snprintf(out, sizeof(out), "%s%s%s%s%s%s%s", pre, w ? "[" : "", w ? cells : "", w ? "]" : "", layer, amount, rate);
	/* and if even that is too wide, cut it: one line, whatever the width */
	cut_to(out, room);
	fprintf(stderr, "\r\033[K%s", out + (w ? 0 : (out[0] == ' ')));
	bar.drawn = true;
}

static void download(void *userdata, const char *digest, unsigned long long done, unsigned long long size)
{
	unsigned long long all = 0, got = 0;
	struct timespec now;
	double secs;
	size_t i;

	pthread_mutex_lock(&bar.lock);
	if (cli.json) {
		json_t *o = json_pack("{s:s, s:s, s:I, s:I}", "event", "download", "digest", digest, "bytes",
				      (json_int_t)done, "size", (json_int_t)size);
		char *j = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;

		if (j)
			fprintf(stderr, "%s\n", j);
		free(j);
		json_decref(o);
		pthread_mutex_unlock(&bar.lock);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (bar.n == 0)
		bar.t0 = now;
	for (i = 0; i < bar.n && strcmp(bar.l[i].digest, digest); i++)
		;
	if (i == bar.n && bar.n < BAR_LAYERS) {
		snprintf(bar.l[bar.n].digest, sizeof(bar.l[0].digest), "%s", digest);
		bar.n++;
	}
	if (i < bar.n) {
		bar.l[i].done = done;
		bar.l[i].size = size;
	}
	for (i = 0; i < bar.n; i++) {
		got += bar.l[i].done;
		all += bar.l[i].size;
	}
	secs = now.tv_sec - bar.t0.tv_sec + (now.tv_nsec - bar.t0.tv_nsec) / 1e9;
	if (bar.tty)
		bar_draw(got, all, secs);
	pthread_mutex_unlock(&bar.lock);
}

static void progress(void *userdata, unsigned int i, unsigned int n, const struct rootasm_import_layer *l, bool done)
{
	const char *mt = strrchr(l->media_type, '.');

	/* the download threads draw the bar: a line of ours goes in between, under the same lock */
	pthread_mutex_lock(&bar.lock);
	bar.layer = i + 1;
	bar.count = n;
	if (done)
		bar_clear();
	if (!done) {
	} else if (cli.json) {
		progress_json(i, n, l);
	} else {
		/* the whole line; on a terminal too narrow for it, the compact one, cut at its width at worst */
		char line[256];
		unsigned int room = bar.tty ? columns() - 1 : sizeof(line) - 1;

		if (l->cached)
			snprintf(line, sizeof(line), "rootasm: import: layer %u/%u %.19s… in the store", i + 1, n, l->digest);
		else
			snprintf(line, sizeof(line), "rootasm: import: layer %u/%u %.19s… %s %.1f MB -> %.1f MB tar in "
				 "%.2f s (%.0f MB/s)", i + 1, n, l->digest, mt ? mt + 1 : l->media_type, l->size / 1e6,
				 l->tar_bytes / 1e6, l->seconds, l->seconds > 0 ? l->tar_bytes / 1e6 / l->seconds : 0.0);
		if (display_width(line) > room) {
			if (l->cached)
				snprintf(line, sizeof(line), "layer %u/%u %.19s… stored", i + 1, n, l->digest);
			else
				snprintf(line, sizeof(line), "layer %u/%u %.19s… %.1f MB %.1f s", i + 1, n, l->digest,
					 l->size / 1e6, l->seconds);
			cut_to(line, room);
		}
		fprintf(stderr, "%s\n", line);
	}
	pthread_mutex_unlock(&bar.lock);
}

int cli_ask(const char *prompt, bool echo, char *pw, size_t size)
{
	struct termios old, quiet;
	int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	size_t n = 0;
	bool restore;
	char c;

	if (fd < 0)
		return -errno;
	dprintf(fd, "%s", prompt);
	restore = !echo && tcgetattr(fd, &old) == 0;
	quiet = old;
	quiet.c_lflag &= ~(ECHO | ECHONL);
	if (restore)
		tcsetattr(fd, TCSAFLUSH, &quiet);
	while (n + 1 < size && read(fd, &c, 1) == 1 && c != '\n')
		pw[n++] = c;
	pw[n] = '\0';
	if (restore) {
		tcsetattr(fd, TCSAFLUSH, &old);
		(void)!write(fd, "\n", 1);
	}
	close(fd);
	return 0;
}

/* docker://'s options: --tls-verify[=BOOL] ('V'), --creds ('C'), --authfile ('A'), --cert-dir ('D'). */
static int registry_opt(int c, int argc, char **argv, struct rootasm_import_opts *o, char **creds)
{
	int r;

	switch (c) {
	case 'V': {
		/* pflag's booleans (Go's strconv.ParseBool), as skopeo and podman take them */
		static const char *const yes[] = { "true", "1", "t", "T", "TRUE", "True" },
					 *const no[] = { "false", "0", "f", "F", "FALSE", "False" };
		int v = -1;

		/* bare is true; the value after '=' (or, as before, the next word when it is true or false) */
		if (!optarg && optind < argc && (!strcmp(argv[optind], "true") || !strcmp(argv[optind], "false")))
			optarg = argv[optind++];
		if (!optarg)
			optarg = (char *)"true";
		for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]) && v < 0; i++)
			v = !strcmp(optarg, yes[i]) ? 1 : !strcmp(optarg, no[i]) ? 0 : -1;
		if (v < 0)
			return cli_usage("--tls-verify takes true or false (1, t, TRUE; 0, f, FALSE), not '%s'", optarg);
		if (v)
			o->flags &= ~ROOTASM_IMPORT_TLS_NO_VERIFY;
		else
			o->flags |= ROOTASM_IMPORT_TLS_NO_VERIFY;
		return 0;
	}
	case 'A':
		o->authfile = optarg;
		return 0;
	case 'D':
		o->cert_dir = optarg;
		return 0;
	case 'C':
		free(*creds);
		*creds = NULL;
		if (!strchr(optarg, ':')) {
			/* as skopeo: the password from the terminal, never echoed */
			char pw[1024], prompt[300];

			if (!*optarg)
				return cli_usage("--creds takes USER[:PASSWORD]");
			snprintf(prompt, sizeof(prompt), "Password for %.256s: ", optarg);
			if (cli_ask(prompt, false, pw, sizeof(pw)) < 0)
				return cli_usage("--creds %s: no password given, and no terminal to ask on", optarg);
			r = asprintf(creds, "%s:%s", optarg, pw);
			explicit_bzero(pw, sizeof(pw));
			if (r < 0) {
				*creds = NULL;
				return cli_errno(ENOMEM, "--creds");
			}
		} else if (!(*creds = strdup(optarg))) {
			return cli_errno(ENOMEM, "--creds");
		}
		o->creds = *creds;
		return 0;
	}
	return 0;
}

int cli_getopt_registry(int argc, char **argv, const char *shortopts, const struct option *opts, const char *helptext,
			struct rootasm_import_opts *o, char **creds, int *status)
{
	int c;

	while ((c = cli_getopt(argc, argv, shortopts, opts, helptext, status)) >= 0) {
		if (c != 'V' && c != 'C' && c != 'A' && c != 'D')
			return c;
		*status = registry_opt(c, argc, argv, o, creds);
		if (*status)
			return CLI_OPTS_EXIT;
	}
	return c;
}

/* The credentials given, wiped once used. */
void cli_registry_done(char *creds)
{
	if (creds) {
		explicit_bzero(creds, strlen(creds));
		free(creds);
	}
}

int cmd_import(int argc, char **argv)
{
	static const struct option opts[] = {
		CLI_COMMON_LONGOPTS, CLI_ARG("store", 's'), CLI_ARG("fs", 'f'), { "tls-verify", optional_argument, NULL, 'V' },
		CLI_FLAG("quiet", 'q'), CLI_ARG("tag", 't'), CLI_ARG("max-expansion", 'x'), CLI_ARG("creds", 'C'),
		CLI_ARG("authfile", 'A'), CLI_ARG("cert-dir", 'D'), { 0 },
	};
	char *creds = NULL;	/* the process ends soon after an early return: freed (and wiped) once used */
	struct rootasm_import_opts o = { .size = sizeof(o), .progress = progress, .download = download };
	struct rootasm_import_result res;
	struct rootasm_error e = { 0 };
	const char *ref;
	int c, r;

	while ((c = cli_getopt_registry(argc, argv, ":hq", opts, help, &o, &creds, &r)) >= 0) {
		switch (c) {
		case 's':
			o.store = optarg;
			break;
		case 'f':
			if (!strcmp(optarg, "erofs"))
				o.fs = ROOTASM_LAYER_EROFS;
			else if (!strcmp(optarg, "squashfs"))
				o.fs = ROOTASM_LAYER_SQUASHFS;
			else
				return cli_usage("--fs takes erofs or squashfs, not '%s'", optarg);
			break;
		case 'q':
			o.progress = NULL;
			o.download = NULL;
			break;
		case 't':
			o.tag = optarg;
			break;
		case 'x': {
			unsigned long long v;

			if (cli_number(optarg, 1, 1000000, &v) < 0)
				return cli_usage("--max-expansion takes a factor (1-1000000), not '%s'", optarg);
			o.max_expansion = (unsigned int)v;
			break;
		}
		}
	}
	if (c == CLI_OPTS_EXIT)
		return r;
	r = cli_last_operand(argc, argv, "image",
			     "oci:DIR[:TAG], docker-archive:FILE[:NAME] or docker://REGISTRY/REPO[:TAG|@DIGEST]", &ref);
	if (r != CLI_GO_ON)
		return r;
	if (o.store && !*o.store)
		return cli_usage("--store needs a directory");
	bar.tty = isatty(STDERR_FILENO) && !cli.json;
	r = rootasm_import(cli_context(), ref, &o, &res, &e);
	cli_registry_done(creds);
	pthread_mutex_lock(&bar.lock);
	bar_clear();
	pthread_mutex_unlock(&bar.lock);
	if (r < 0)
		return cli_fail(&e);
	if (cli.json) {
		json_t *ls = json_array(), *out;

		for (size_t i = 0; ls && i < res.nlayers; i++) {
			const struct rootasm_import_layer *l = &res.layers[i];

			if (json_array_append_new(ls, json_pack("{s:s, s:s, s:s, s:I, s:I, s:s, s:b, s:f}", "digest", l->digest,
								"diff_id", l->diff_id, "media_type", l->media_type, "size",
								(json_int_t)l->size, "tar_bytes", (json_int_t)l->tar_bytes,
								"image", l->image, "cached", l->cached, "seconds",
								l->seconds)) < 0) {
				json_decref(ls);
				ls = NULL;
			}
		}
		out = ls ? json_pack("{s:s, s:s, s:s, s:s, s:o, s:b, s:s?, s:s?, s:s?, s:s?}", "layout", res.layout,
				     "store", res.store, "manifest", res.manifest, "config", res.config, "layers", ls,
				     "wrote", res.wrote, "name", res.name, "source", res.source, "source_why",
				     res.source_why, "stored_as", res.stored_as) : NULL;
		rootasm_import_result_free(&res);
		return cli_json_out(out) < 0 ? EXIT_RUNTIME : 0;
	}
	/* a short name resolved: what was pulled, and why that (podman's "Resolved ... as an alias") */
	if (res.source)
		fprintf(stderr, "rootasm: import: %s resolved to %s (%s)\n", ref, res.source, res.source_why);
	/* one image, one record: its config is stored already, under another manifest (said on a terminal) */
	if (res.stored_as && bar.tty)
		fprintf(stderr, "rootasm: import: %s is image %.19s (the same config, stored from another manifest); %s names it too\n",
			res.manifest, res.stored_as, res.manifest);
	printf("%s\n", res.layout);
	rootasm_import_result_free(&res);
	return fflush(stdout) == 0 ? 0 : EXIT_RUNTIME;
}
