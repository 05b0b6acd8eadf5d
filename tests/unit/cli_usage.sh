#!/bin/sh
# CLI usage errors: exit 2 and one line on stderr naming the problem.
set -u
bin=$1
fail=0 n=0
t() { # expected-exit expected-substring args...
	want=$1 sub=$2; shift 2
	n=$((n + 1))
	err=$("$bin" "$@" 2>&1 >/dev/null); rc=$?
	lines=$(printf '%s\n' "$err" | wc -l)
	if [ "$rc" -ne "$want" ] || ! printf '%s' "$err" | grep -qF -- "$sub" || [ "$lines" -ne 1 ]; then
		echo "FAIL: rootasm $* -> rc=$rc (want $want), stderr: $err"; fail=$((fail + 1))
	fi
}
t 2 "missing command"
t 2 "unknown command 'frobnicate'" frobnicate
t 2 "missing LAYOUT" check
t 2 "unknown option '--yaml'" check --yaml x
t 2 "exactly one of --attach" assemble /nonexistent.yaml
t 2 "missing LAYOUT" exec
t 2 "open layout /nonexistent.yaml: No such file or directory" check /nonexistent.yaml
t 2 "unknown argument" probe --xml
"$bin" --help | grep -q "rootasm check LAYOUT" || { echo "FAIL: --help"; fail=$((fail + 1)); }
n=$((n + 1))
echo "$((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
