# shellcheck shell=bash
# The prologue of the bash scripts of ci/, images/, kernel/ and tests/: each sources it
# first, by its own place in the checkout (`. "$(dirname "$0")/../ci/prologue.sh"`), and
# keeps only what is its own. It gives:
#   set -euo pipefail   (a script that judges exit statuses itself says `set +e` after it)
#   repo        the checkout's top, absolute
#   prog        the script's name in messages: its path from the top (kernel/build)
#   cache       ${ROOTASM_CACHE:-$HOME/.cache/rootasm}, absolute: every cache of the tests,
#               always rebuildable (CACHE: the same, for the scripts that spell it so)
#   die MSG     "PROG: error: MSG" on standard error, then exit $die_status (1 unless the
#               script sets it: 2 where 1 is a verdict)
#   log MSG     "PROG: MSG" on standard error
#   usage       the script's header comment (after the #! line, up to the first line that
#               is not a comment), without its "# ", on standard output
#   opt VAR "$@"   the value of an option that takes one, "--name V" or "--name=V", into
#               VAR; optn is what to shift: `--name|--name=*) opt var "$@"; shift "$optn" ;;`
#   rootasm_ccache   for rootasm's own C build (ci/build, ci/package; not the kernel's):
#               c_launcher, cmake's -DCMAKE_C_COMPILER_LAUNCHER=ccache when ccache is there
#               (objects shared between checkouts, whatever their directory: paths under
#               it are made relative, the working directory is not hashed), else nothing
#   kernel_ccache    for the kernel's builds (kernel/build, mutation-check, check-series):
#               CCACHE_DIR=$cache/ccache, shared by every variant, mutant and check; KCC, the
#               make's CC: $cache/kernel/ccache-gcc (a fixed path: it is in every object's
#               command line), which compiles through ccache but a source with .incbin alone
#   Both use ccache's depend mode (CCACHE_DEPEND): a miss runs the compiler alone, where
#   the default mode first runs the preprocessor over the source to hash its output.
#   Compiling fs/{ext4,overlayfs,erofs,squashfs,9p} of the test kernel (238 calls, -j2,
#   empty cache, 3 runs each): default mode 68-87 s wall, 118-153 s CPU; depend mode
#   42-52 s, 79-97 s CPU; gcc without ccache 44-58 s, 76-100 s CPU. A hit is the same:
#   the manifest of the direct mode, from the compiler's own dependency file (the kernel's
#   -Wp,-MMD, cmake's -MD), so entries made in the default mode stay hits. But a file pulled
#   in with the assembler's .incbin is in no dependency file, and depend mode does not make
#   the preprocessed output in which the default mode looks for .incbin to refuse caching:
#   ccache 4.7.5 gave back the object of an earlier blob (tests/unit/kernel_ccache.sh). The
#   kernel has them: arch/x86/boot/compressed/piggy.S takes in the compressed vmlinux and
#   says only its sizes, so a kernel of the same sizes as one before got that one's piggy.o
#   (a mutant booted another mutant's kernel). KCC compiles such sources without ccache;
#   rootasm has none.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prog=$(realpath -m --relative-to="$repo" "$0")
cache=${ROOTASM_CACHE:-$HOME/.cache/rootasm}
case "$cache" in /*) ;; *) cache=$PWD/$cache ;; esac
CACHE=$cache
die_status=1
die() { echo "$prog: error: $*" >&2; exit "$die_status"; }
log() { echo "$prog: $*" >&2; }
usage() { awk 'NR == 1 { next } !/^#/ { exit } { sub(/^# ?/, ""); print }' "$0"; }
opt() {
	local -n opt_var_=$1
	shift
	case "$1" in
	--*=*) opt_var_=${1#*=}; optn=1 ;;
	*) [ $# -ge 2 ] || die "$1 needs a value"; opt_var_=$2; optn=2 ;;
	esac
}
rootasm_ccache() {
	c_launcher=()
	if command -v ccache >/dev/null; then
		export CCACHE_DIR=$cache/ccache-rootasm CCACHE_BASEDIR=$repo CCACHE_NOHASHDIR=1 CCACHE_DEPEND=1
		c_launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache)
	fi
}
kernel_ccache() {
	export CCACHE_DIR=$cache/ccache CCACHE_DEPEND=1
	KCC=$cache/kernel/ccache-gcc
	local cc tmp
	cc='#!/bin/sh
# kernel_ccache (ci/prologue.sh): the CC of the kernel builds. gcc through ccache (depend
# mode), but gcc alone for a source with .incbin: the file it takes in is in no dependency
# file, so ccache would give back the object of an earlier one.
for a do
	case $a in
	*.c | *.S | *.s) if [ -f "$a" ] && grep -qF .incbin "$a"; then exec gcc "$@"; fi ;;
	esac
done
exec ccache gcc "$@"'
	if [ "$(cat "$KCC" 2>/dev/null)" != "$cc" ]; then
		mkdir -p "$cache/kernel"
		tmp=$(mktemp "$KCC.XXXXXX")
		printf '%s\n' "$cc" >"$tmp" && chmod 755 "$tmp" && mv "$tmp" "$KCC" || { rm -f "$tmp"; return 1; }
	fi
}
