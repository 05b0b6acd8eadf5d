#!/bin/bash
# `cmake --install` into a scratch DESTDIR with another prefix: exactly the
# files rootasm installs (GNUInstallDirs), the library's symlinks, no RPATH,
# a rootasm.pc that names the prefix installed to, and the README's example
# built with `pkg-config --cflags --libs rootasm` against what was installed;
# the header alone in strict C99 and in C++.
# Usage: install.sh BUILD-DIR SOURCE-DIR LIBDIR VERSION CC
set -u
build=$1 src=$2 libdir=$3 version=$4 cc=$5
prefix=/opt/rootasm-install-test
fail=0 n=0
ok() { # status (first: expanded before the message's command substitutions), message
	n=$((n + 1))
	[ "$1" = 0 ] || { echo "FAIL: $2"; fail=$((fail + 1)); }
}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
DESTDIR=$d cmake --install "$build" --prefix "$prefix" >"$d.log" 2>&1
ok $? "cmake --install failed: $(cat "$d.log")"
rm -f "$d.log"
root=$d$prefix
want="bin/rootasm
bin/rootasm-runtime
bin/rootasm-runtime-full
sbin/rootasmd
lib/systemd/system/rootasmd.service
lib/systemd/system/rootasmd.socket
share/doc/rootasm/PROTOCOL.md
share/doc/rootasm/rootasmd.policy.example
include/rootasm.h
$libdir/librootasm.so
$libdir/librootasm.so.0
$libdir/librootasm.so.$version
$libdir/pkgconfig/rootasm.pc
share/bash-completion/completions/rootasm
share/man/man1/rootasm.1.gz
share/man/man1/rootasm-runtime.1.gz
share/man/man1/rootasm-runtime-full.1.gz
share/man/man3/librootasm.3.gz
share/man/man5/rootasm.layout.5.gz
share/man/man8/rootasmd.8.gz
share/rootasm/layout.schema.json"
have=$(cd "$root" && find . ! -type d | sed 's,^\./,,' | LC_ALL=C sort)
[ "$have" = "$(printf '%s\n' "$want" | LC_ALL=C sort)" ]
ok $? "installed files differ: $(diff <(printf '%s\n' "$want" | LC_ALL=C sort) <(printf '%s\n' "$have") | grep '^[<>]' | tr '\n' ' ')"
[ "$(readlink "$root/$libdir/librootasm.so")" = librootasm.so.0 ] &&
	[ "$(readlink "$root/$libdir/librootasm.so.0")" = "librootasm.so.$version" ]
ok $? "librootasm.so -> .so.0 -> .so.$version"
[ "$(readlink "$root/share/man/man1/rootasm-runtime-full.1.gz")" = rootasm-runtime.1.gz ]
ok $? "rootasm-runtime-full.1.gz -> rootasm-runtime.1.gz"
# the runtime an engine runs at every call: static-pie, no interpreter, nothing NEEDED; its twin beside it
! readelf -lW "$root/bin/rootasm-runtime" | grep -q 'program interpreter' &&
	! readelf -dW "$root/bin/rootasm-runtime" | grep -q NEEDED && file "$root/bin/rootasm-runtime" | grep -q 'static-pie'
ok $? "bin/rootasm-runtime: not static-pie: $(file "$root/bin/rootasm-runtime")"
grep -qx "ExecStart=$prefix/sbin/rootasmd" "$root/lib/systemd/system/rootasmd.service"
ok $? "rootasmd.service: ExecStart is not $prefix/sbin/rootasmd"
for f in "$root/bin/rootasm" "$root/bin/rootasm-runtime" "$root/bin/rootasm-runtime-full" "$root/sbin/rootasmd" "$root/$libdir/librootasm.so.$version"; do
	! readelf -d "$f" | grep -qE 'RPATH|RUNPATH'; ok $? "$f has an RPATH"
done
# and in the build tree, no empty element in a RUNPATH: the loader reads it as the working directory
# (CMake ends the RUNPATH of a binary it changes at install with ':', so root running build/rootasmd
# from another user's directory would load that user's libjansson.so.4)
for f in "$build"/rootasm "$build"/rootasm-runtime "$build"/rootasm-runtime-full "$build"/rootasmd "$build"/librootasm.so.$version; do
	rp=$(readelf -d "$f" | sed -n 's/.*(R\(UN\)\{0,1\}PATH).*\[\(.*\)\]$/\2/p')
	case ":$rp:" in
	*::*) [ -z "$rp" ] ;;
	*) true ;;
	esac
	ok $? "$f: its RUNPATH '$rp' has an empty element (the working directory)"
done

export PKG_CONFIG_LIBDIR=$root/$libdir/pkgconfig PKG_CONFIG_PATH= PKG_CONFIG_SYSROOT_DIR=$d
[ "$(pkg-config --modversion rootasm)" = "$version" ]; ok $? "pkg-config --modversion rootasm"
grep -qx "prefix=$prefix" "$root/$libdir/pkgconfig/rootasm.pc"; ok $? "rootasm.pc: prefix is not $prefix"
flags=$(pkg-config --cflags --libs rootasm)
ok $? "pkg-config --cflags --libs rootasm"
awk '/^## Use from a runtime/ { on = 1 } on && /^```c$/ { c = 1; next } c && /^```$/ { exit } c { print }' \
	"$src/README.md" >"$d/runtime.c"
# shellcheck disable=SC2086 # the flags are words
"$cc" -Wall -Wextra -Werror -o "$d/runtime" "$d/runtime.c" $flags 2>"$d/cc.log"
ok $? "the README example does not build with '$flags': $(cat "$d/cc.log")"
# the installed header on its own: strict C99, and C++ (extern "C", no C-only constructs)
printf '#include <rootasm.h>\nint main(void) { return rootasm_version() == 0; }\n' >"$d/h.c"
cp "$d/h.c" "$d/h.cc"
# shellcheck disable=SC2086
"$cc" -std=c99 -pedantic -Wall -Wextra -Werror -o "$d/h" "$d/h.c" $flags 2>"$d/cc.log"
ok $? "rootasm.h in strict C99: $(cat "$d/cc.log")"
# shellcheck disable=SC2086
c++ -std=c++11 -pedantic -Wall -Wextra -Werror -o "$d/hxx" "$d/h.cc" $flags 2>"$d/cc.log"
ok $? "rootasm.h in C++11: $(cat "$d/cc.log")"
export LD_LIBRARY_PATH=$root/$libdir
if [ -x "$d/runtime" ]; then
	[ "$(ldd "$d/runtime" | awk '/librootasm/ { print $3 }')" = "$root/$libdir/librootasm.so.0" ]
	ok $? "the example does not load the installed librootasm.so.0"
	"$d/runtime" /nonexistent.yaml /x 2>/dev/null; [ $? = 2 ]; ok $? "the example against the installed library"
fi
"$root/bin/rootasm" --version | grep -qx "rootasm $version (library $version)"
ok $? "the installed rootasm --version"
for m in "$root"/share/man/man*/*.gz; do
	w=$(MANWIDTH=80 man --warnings -l "$m" 2>&1 >/dev/null)
	[ -z "$w" ] && MANWIDTH=80 man -l "$m" 2>/dev/null | grep -q NAME; ok $? "man -l $m: $w"
done
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$root/share/rootasm/layout.schema.json"
ok $? "the installed schema is not JSON"
echo "install: $((n - fail))/$n checks passed"
[ "$fail" = 0 ]
