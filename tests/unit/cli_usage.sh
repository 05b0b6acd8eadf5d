#!/bin/sh
# The command line without privileges: usage errors exit 2 (exec: 125) with one
# line on stderr naming the problem; --help, --version and --json forms work.
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
# out: expected-exit expected-stdout-substring args...
out() {
	want=$1 sub=$2; shift 2
	n=$((n + 1))
	o=$("$bin" "$@" 2>/dev/null); rc=$?
	if [ "$rc" -ne "$want" ] || ! printf '%s' "$o" | grep -qF -- "$sub"; then
		echo "FAIL: rootasm $* -> rc=$rc (want $want), stdout: $o"; fail=$((fail + 1))
	fi
}
t 2 "missing command"
t 2 "unknown command 'frobnicate'" frobnicate
t 2 "check: missing LAYOUT" check
t 2 "unknown option '--yaml'" check --yaml x
t 2 "exactly one of --attach" assemble /nonexistent.yaml
t 2 "more than one LAYOUT" assemble a.yaml b.yaml --attach /x
t 2 "--audit goes with --attach" assemble a.yaml --send-fd /s --audit
t 2 "option '--attach' needs a value" assemble a.yaml --attach
t 125 "exec: missing LAYOUT" exec
t 125 "open layout l.yaml: No such file or directory" exec l.yaml --report
t 125 "unknown option '--bogus'" exec --bogus l.yaml -- /bin/true
t 2 "open layout /nonexistent.yaml: No such file or directory" check /nonexistent.yaml
t 2 "open layout /nonexistent.yaml: No such file or directory" assemble /nonexistent.yaml --via /nonexistent.sock --attach /x
t 1 "connect /nonexistent.sock: No such file or directory" assemble /dev/null --via /nonexistent.sock --attach /x
t 125 "--via takes a layout file, not '-'" exec --via /nonexistent.sock - -- /bin/true
t 2 "unknown option '--xml'" probe --xml
t 2 "--json takes no value or 'pretty'" --json=yaml probe
t 2 "--count takes a positive number" watch --count -3
t 2 "--count takes a positive number" watch --count 1x
t 2 "import: missing oci:DIR[:TAG]" import
t 2 "not an image reference rootasm reads" import /srv/image
t 2 "--fs takes erofs or squashfs" import --fs ext4 oci:x
t 2 "more than one image" import oci:a oci:b
t 2 "bundle: missing create, prepare or cleanup" bundle
t 2 "unknown bundle command 'run'" bundle run /b
t 2 "bundle: missing BUNDLE" bundle prepare
t 2 "--layout and --upper go with prepare" bundle cleanup --upper /u /b
# options in any order around the operand
t 2 "open layout /nonexistent.yaml" check /nonexistent.yaml --offline
t 2 "open layout /nonexistent.yaml" check --offline /nonexistent.yaml
# JSON errors: one object on stderr with the documented fields
n=$((n + 1))
e=$("$bin" --json check /nonexistent.yaml 2>&1 >/dev/null)
case $e in
'{"error":{"message":"open layout /nonexistent.yaml: No such file or directory","kind":"usage","errno":2,"errname":"ENOENT","op":"open layout","path":"/nonexistent.yaml",'*) ;;
*) echo "FAIL: --json error: $e"; fail=$((fail + 1)) ;;
esac
# help and version, each form
for c in check assemble exec probe watch import bundle; do
	out 0 "Usage: rootasm $c" $c --help
	out 0 "Usage: rootasm $c" $c -h
done
out 0 "Commands:" --help
out 0 "Commands:" help
for v in --version -v -V version; do out 0 "rootasm 0." $v; done
# --json is in effect for its own usage error (it is set before its value is checked)
t 2 '{"error":{"message":"usage: --json takes no value or '"'"'pretty'"'"', not '"'"'bad'"'"'' --json=bad version
out 0 '"version":' --json version
out 0 '  "version":' --json=pretty version
# libjansson is loaded by the first JSON call (jansson-lazy.c), not at every start: not
# by a check without --json, by one with it (LD_DEBUG=libs: the loader's "calling init")
lay=$(mktemp)
printf 'version: 1\nlayers:\n  - dir: /usr\n' >"$lay"
libs() { LD_DEBUG=libs "$bin" "$@" 2>&1 >/dev/null | grep -o 'calling init: .*' | sed 's#.*/##' | sort | xargs; }
n=$((n + 1))
case "$(libs check --offline "$lay")" in
*libyaml*) case "$(libs check --offline "$lay")" in *jansson*) echo "FAIL: check loads libjansson"; fail=$((fail + 1)) ;; esac ;;
*) echo "FAIL: check: LD_DEBUG shows no libyaml: $(libs check --offline "$lay")"; fail=$((fail + 1)) ;;
esac
n=$((n + 1))
case "$(libs check --offline --json "$lay")" in
*libjansson*) ;;
*) echo "FAIL: check --json does not load libjansson: $(libs check --offline --json "$lay")"; fail=$((fail + 1)) ;;
esac
out 0 '"ops":[{"op":"layer"' check --offline --json "$lay"
# a transport rootasm does not read, a registry's image without docker://: what to do instead
t 2 "the transport oci-archive is not one rootasm reads: skopeo copy oci-archive:x.tar oci:DIR, then import oci:DIR" import --store /nonexistent-x oci-archive:x.tar
t 2 "the transport containers-storage is not one rootasm reads" inspect --store /nonexistent-x containers-storage:alpine
t 2 "a registry's image is named with its transport: docker://127.0.0.1:5000/team/x:1" import --store /nonexistent-x 127.0.0.1:5000/team/x:1
# logout: podman's -a and a URL's host
auth=$(mktemp)
echo '{"auths":{"127.0.0.1:1":{"auth":"eDp5"},"127.0.0.1:2":{"auth":"eDp5"}}}' >"$auth"
out 0 "Removed login credentials for 127.0.0.1:1" logout --authfile "$auth" https://127.0.0.1:1/
out 0 "Removed login credentials for all registries" logout -a --authfile "$auth"
rm -f "$auth"
# help COMMAND is that command's --help; help of no command says so
out 0 "Usage: rootasm images [OPTION...]" help images
t 2 "help: no command 'nope'" help nope
# exec of a name that is neither a file nor a stored image: the store's word, not "open layout"
st=$(mktemp -d)
ROOTASM_STORE=$st t 125 "image no-such-image: " exec no-such-image -- /bin/true
ROOTASM_STORE=$st t 125 "nor a layout file of that name" exec no-such-image -- /bin/true
# (a name with a registry or namespace too: localhost/app:1 is a name, not a path)
ROOTASM_STORE=$st t 125 "image localhost/no-such:1: " exec localhost/no-such:1 -- /bin/true
ROOTASM_STORE=$st t 125 "nor a layout file of that name" exec localhost/no-such:1 -- /bin/true
rmdir "$st"
# a bare --tls-verify is true, as skopeo's and podman's (no usage error); a bad value is one
n=$((n + 1))
err=$("$bin" import --tls-verify --store "$st.none" docker://127.0.0.1:1/x:1 2>&1); rc=$?
case "$rc:$err" in
2:*|*tls-verify*) echo "FAIL: import --tls-verify (bare) -> rc=$rc: $err"; fail=$((fail + 1)) ;;
esac
t 2 "--tls-verify takes true or false (1, t, TRUE; 0, f, FALSE), not 'maybe'" import --tls-verify=maybe docker://127.0.0.1:1/x:1
# pflag's other spellings (Go's ParseBool) are no usage error
for v in 0 f F FALSE False 1 t T TRUE True; do
	n=$((n + 1))
	err=$("$bin" import --tls-verify=$v --store "$st.none" docker://127.0.0.1:1/x:1 2>&1); rc=$?
	case "$rc:$err" in
	2:*|*tls-verify*) echo "FAIL: import --tls-verify=$v -> rc=$rc: $err"; fail=$((fail + 1)) ;;
	esac
done
# exec without root: what it needs, not only which call said no (as nobody when we are root)
n=$((n + 1))
if [ "$(id -u)" = 0 ]; then
	chmod a+r "$lay"
	err=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$bin" exec "$lay" -- /bin/true 2>&1); rc=$?
else
	err=$("$bin" exec "$lay" -- /bin/true 2>&1); rc=$?
fi
case "$rc:$err" in
"125:rootasm: exec $lay: Operation not permitted (rootasm exec needs root:"*) ;;
*) echo "FAIL: exec without root -> rc=$rc: $err"; fail=$((fail + 1)) ;;
esac
rm -f "$lay"
echo "$((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
