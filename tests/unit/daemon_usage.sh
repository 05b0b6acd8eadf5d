#!/bin/sh
# rootasmd without privileges: usage errors exit 2 with one line on stderr,
# --help and --version work, and the systemd units agree with the daemon.
set -u
bin=$1 src=$2
fail=0 n=0
t() { # expected-exit expected-substring args...
	want=$1 sub=$2; shift 2
	n=$((n + 1))
	err=$("$bin" "$@" 2>&1 >/dev/null); rc=$?
	lines=$(printf '%s\n' "$err" | wc -l)
	if [ "$rc" -ne "$want" ] || ! printf '%s' "$err" | grep -qF -- "$sub" || [ "$lines" -ne 1 ]; then
		echo "FAIL: rootasmd $* -> rc=$rc (want $want), stderr: $err"; fail=$((fail + 1))
	fi
}
t 2 "unknown option '--frobnicate'" --frobnicate
t 2 "option '--socket' needs a value" --socket
t 2 "--max-clients takes a number" --max-clients 0
t 2 "--max-clients takes a number" --max-clients 12x
t 2 "--cache-bytes takes a size" --cache-bytes -5
t 2 "--idle-timeout takes seconds" --idle-timeout 99999999
t 2 "no operands" extra
t 1 "policy.json: policy: cannot open it: No such file or directory" --policy /nonexistent/policy.json
n=$((n + 1)); "$bin" --help | grep -q -- "--cache-entries" || { echo "FAIL: --help"; fail=$((fail + 1)); }
n=$((n + 1)); "$bin" --version | grep -q "^rootasmd " || { echo "FAIL: --version"; fail=$((fail + 1)); }
# the socket unit listens where the daemon's default is, with the type it takes
n=$((n + 1))
path=$(sed -n 's/^ListenSequentialPacket=//p' "$src/assembler/daemon/rootasmd.socket")
"$bin" --help | grep -qF "(default $path;" || { echo "FAIL: rootasmd.socket listens at '$path', not the default"; fail=$((fail + 1)); }
n=$((n + 1))
grep -q '^ExecStart=@ROOTASM_SBINDIR@/rootasmd$' "$src/assembler/daemon/rootasmd.service.in" &&
	grep -q '^Requires=rootasmd.socket$' "$src/assembler/daemon/rootasmd.service.in" ||
	{ echo "FAIL: rootasmd.service.in"; fail=$((fail + 1)); }
# PROTOCOL.md's table of requests is what the daemon's dispatch table says (rootasmd --protocol)
n=$((n + 1))
want=$("$bin" --protocol | python3 "$src/tests/unit/protocol_table.py")
have=$(sed -n '/^<!-- rootasmd --protocol -->$/,/^<!-- end -->$/p' "$src/assembler/daemon/PROTOCOL.md" | sed '1d;$d')
[ -n "$want" ] && [ "$want" = "$have" ] || {
	echo "FAIL: PROTOCOL.md's table of requests is not rootasmd --protocol's; it should read:"
	printf '%s\n' "$want"
	fail=$((fail + 1))
}
echo "$((n - fail)) of $n passed"
[ "$fail" = 0 ]
