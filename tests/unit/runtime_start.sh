#!/bin/bash
# rootasm-runtime's start, as the engines pay for it on every call. The installed one is
# static-pie: no dynamic loader, and no library or NSS module opened, whatever the command
# (a pass-through, create of a root's bundle). rootasm-runtime-full, to which it hands what
# needs libraries (an import, a user's bundle), is linked as the rootasm command is: a command
# it only passes to its delegate (start, kill, state of a container not rootasm's, ...) loads no
# library but libc (the library's objects are in the binary, libjansson is loaded by the first
# JSON call: jansson-lazy.c), and a command that reads JSON loads libjansson before it does
# anything, so a libjansson that cannot be loaded is one clear line, not a failure halfway.
set -u
static=$1 rt=$2
fail=0 n=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
libs() { LD_DEBUG=libs "$@" 2>&1 >/dev/null | grep -o 'calling init: .*' | sed 's#.*/##' | sort -u | xargs; }
check() { # what got want
	n=$((n + 1))
	[ "$2" = "$3" ] || { echo "FAIL: $1: got '$2', want '$3'"; fail=$((fail + 1)); }
}
# the static one: no interpreter; opens no shared object, pass-through or create
# (what the runtime's process opens until it executes the delegate, its second execve)
opened() {
	strace -e trace=open,openat,execve -o "$tmp/st" "$@" >/dev/null 2>&1
	awk '/^execve\(/ && ++x == 2 { exit } { print }' "$tmp/st" | grep -oE '"[^"]*\.so[.0-9]*"' | sort -u | xargs
}
check "the static one: its program headers name an interpreter" "$(readelf -lW "$static" | grep -c 'program interpreter')" 0
check "the static one: start (passed through) opens" "$(opened "$static" --delegate /bin/true start x)" ""
mkdir -p "$tmp/b"
echo '{"ociVersion": "1.0.2", "root": {"path": "rootfs"}, "process": {"args": ["true"]}}' >"$tmp/b/config.json"
check "the static one: create opens" "$(opened "$static" --delegate /bin/true --root "$tmp" create -b "$tmp/b" c0)" ""
check "start (passed through) loads" "$(libs "$rt" --delegate /bin/true start x)" "ld-linux-x86-64.so.2 libc.so.6"
check "kill (passed through) loads" "$(libs "$rt" --delegate /bin/true kill x KILL)" "ld-linux-x86-64.so.2 libc.so.6"
check "state of a container not rootasm's loads" "$(libs "$rt" --delegate /bin/true --root "$tmp" state x)" "ld-linux-x86-64.so.2 libc.so.6"
check "delete of a container not rootasm's loads" "$(libs "$rt" --delegate /bin/true --root "$tmp" delete x)" "ld-linux-x86-64.so.2 libc.so.6"
# create reads config.json: libjansson first
case "$(libs "$rt" --delegate /bin/true --root "$tmp" create -b "$tmp/b" c1)" in
*libjansson*) n=$((n + 1)) ;;
*) n=$((n + 1)); echo "FAIL: create does not load libjansson"; fail=$((fail + 1)) ;;
esac
# a libjansson that cannot be loaded: one line, exit status 1, the delegate not run
: >"$tmp/libjansson.so.4"
out=$(LD_LIBRARY_PATH=$tmp "$rt" --delegate /bin/echo --root "$tmp" create -b "$tmp/b" c2 2>&1); rc=$?
check "create without libjansson: exit status" "$rc" 1
check "create without libjansson: lines" "$(printf '%s\n' "$out" | wc -l)" 1
case "$out" in
"rootasm-runtime: "*"libjansson"*) n=$((n + 1)) ;;
*) n=$((n + 1)); echo "FAIL: create without libjansson said: $out"; fail=$((fail + 1)) ;;
esac
# a delegate that cannot be executed (its interpreter is missing): run as a child of ours (vfork),
# it says so in one line of its own, and the status is 127, as a shell's
mkdir -p -m 0700 "$tmp/.rootasm/d1"
printf '#!/nonexistent/sh\n' >"$tmp/dl" && chmod 0755 "$tmp/dl"
out=$("$rt" --delegate "$tmp/dl" --root "$tmp" delete d1 2>&1); rc=$?
check "delete with a delegate that cannot be executed: exit status" "$rc" 127
check "delete with a delegate that cannot be executed: says" "$out" \
	"rootasm-runtime: execute $tmp/dl: not found (ENOENT)"
# a hook it wrapped (runc's): executed in its place, the state as the engine's on its stdin, so
# that the runtime's timeout and kill reach the hook itself (a forked hook outlived its killed wrapper)
out=$(printf '%s' '{"ociVersion":"1.0.2","id":"x","bundle":"/private","annotations":{"org.rootasm.prepared":"1","a":"b"}}' |
	sh -c 'echo $$; exec "$0" hook /engine /bin/sh -- sh -c "echo \$\$; cat"' "$rt" 2>&1); rc=$?
check "hook: exit status" "$rc" 0
check "hook: the hook is the wrapper's process" "$(printf '%s\n' "$out" | sed -n 2p)" "$(printf '%s\n' "$out" | sed -n 1p)"
check "hook: its state" "$(printf '%s\n' "$out" | sed -n 3p)" '{"ociVersion":"1.0.2","id":"x","bundle":"/engine","annotations":{"a":"b"}}'
out=$(echo '{}' | "$rt" hook /engine /nonexistent/hook -- x 2>&1); rc=$?
check "hook that cannot be executed: exit status" "$rc" 127
check "hook that cannot be executed: says" "$out" "rootasm-runtime: hook: execute /nonexistent/hook: not found (ENOENT)"
echo "runtime_start: $((n - fail))/$n passed"
[ "$fail" = 0 ]
