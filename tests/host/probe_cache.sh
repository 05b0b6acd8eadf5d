#!/bin/bash
# The probe's answers kept once per boot (assembler/lib/probecache.c): taken from
# the file only while every input of its key is the same; each input changed
# here, and the answer must follow the kernel, not the file. Root.
#   probe_cache.sh ROOTASM
set -uo pipefail
bin=$1
[ "$(id -u)" = 0 ] || { echo "FAIL: needs root"; exit 1; }
tmp=$(mktemp -d /tmp/rootasm-probe-cache.XXXXXX)
chmod 0755 "$tmp"
restore_sysctl=
cleanup() {
	[ -n "$restore_sysctl" ] && echo "$restore_sysctl" > /proc/sys/user/max_user_namespaces
	rm -rf "$tmp"
}
trap cleanup EXIT
export ROOTASM_PROBE_CACHE=$tmp/probe.cache
cache=$ROOTASM_PROBE_CACHE
fail=0 n=0
check() { n=$((n + 1)); if eval "$2"; then echo "ok - $1"; else echo "FAIL: $1"; fail=$((fail + 1)); fi; }
state() { "$bin" probe | awk -v f="$1" '$1 == f { print $2 }'; }
# a forged answer with the right key: "mount-api" absent, detail "forged"
forge() { sed -i 's/^mount-api 1 .*/mount-api -1 forged/' "$cache"; }
forged() { "$bin" probe | grep -q '^mount-api .*absent.*\[forged\]'; }

truth=$(ROOTASM_PROBE_CACHE= "$bin" probe --json)
"$bin" probe >/dev/null
check "the first probe writes the file" '[ -f "$cache" ] && [ "$(stat -c %a:%u "$cache")" = 644:0 ]'
check "every feature is in it" '[ "$(grep -c "^[a-z0-9-]* -\?[12] " "$cache")" = "$(ROOTASM_PROBE_CACHE= "$bin" probe | wc -l)" ]'
check "its answers are the kernel's" '[ "$("$bin" probe --json)" = "$truth" ]'
forge
check "a matching key: the answers come from the file" 'forged'

# each input of the key changed: the forged answer is not taken, and the file is rewritten
for field in boot_id kernel modules sysctl caller; do
	forge
	sed -i "s/^$field .*/$field changed/" "$cache"
	check "$field changed: probed again" '[ "$(state mount-api)" = present ] && ! grep -q forged "$cache"'
	check "$field changed: the file is whole again" '! grep -q "^$field changed" "$cache" && [ "$("$bin" probe --json)" = "$truth" ]'
done

# the real inputs, changed for real
forge
old=$(cat /proc/sys/user/max_user_namespaces)
if echo "$old" > /proc/sys/user/max_user_namespaces 2>/dev/null; then
	restore_sysctl=$old
	echo $((old - 1)) > /proc/sys/user/max_user_namespaces
	check "user.max_user_namespaces changed: probed again" '[ "$(state mount-api)" = present ]'
	echo "$old" > /proc/sys/user/max_user_namespaces
	restore_sysctl=
else
	# (a read-only /proc/sys here; the sysctl line of the key was changed above)
	echo "# user.max_user_namespaces cannot be written here: not counted"
fi
forge
check "another mount namespace, the same root and loop control: the same answers" \
	'unshare -m "$bin" probe | grep -q "^mount-api .*\[forged\]"'
check "without CAP_SYS_ADMIN: its own answer, not root's" \
	'[ "$(capsh --drop=cap_sys_admin -- -c "\"$bin\" probe" | awk "\$1 == \"mount-api\" { print \$2 }")" = not-permitted ]'
check "... and --json says it cannot tell: present null, not false" \
	'capsh --drop=cap_sys_admin -- -c "\"$bin\" --json probe" | python3 -c "import json, sys
f = {x[\"feature\"]: x for x in json.load(sys.stdin)}[\"mount-api\"]
sys.exit(not (f[\"state\"] == \"not-permitted\" and f[\"present\"] is None))"'
check "another user namespace: its own answers" '! unshare -U -r "$bin" probe | grep -q forged'
check "... nobody but root in the initial user namespace with CAP_SYS_ADMIN rewrote the file" 'grep -q forged "$cache"'
check "loop control hidden in a mount namespace: probed again" \
	'unshare -m --propagation private sh -c "mount --bind /dev/null /dev/loop-control && \"\$0\" probe" "$bin" |
	 grep -q "^mount-api .*present"'

# a file or directory others may write is not believed
chmod 0666 "$cache"
check "a file others may write: not believed" '[ "$(state mount-api)" = present ]'
forge; chmod 0644 "$cache"; chown 1771 "$cache"
check "a file another uid owns: not believed" '[ "$(state mount-api)" = present ]'
rm -f "$cache"; "$bin" probe >/dev/null; forge
mv "$cache" "$tmp/real"; ln -s "$tmp/real" "$cache"
check "a symlink: not followed" '[ "$(state mount-api)" = present ]'
rm -f "$cache"; "$bin" probe >/dev/null; forge
chmod 0777 "$tmp"
check "a directory others may write: not believed" '[ "$(state mount-api)" = present ]'
chmod 0755 "$tmp"

# --refresh: every answer from the kernel again, and written back
forge
check "probe --refresh asks the kernel" '"$bin" probe --refresh | grep -q "^mount-api .*present"'
check "... and rewrites the file" '! grep -q forged "$cache" && [ "$("$bin" probe --json)" = "$truth" ]'
# no file at all
check "ROOTASM_PROBE_CACHE empty: no file" 'rm -f "$cache"; ROOTASM_PROBE_CACHE= "$bin" probe >/dev/null; [ ! -e "$cache" ]'

# start-up (issue 20): the command carries the library (no librootasm.so to load and
# relocate), and libyaml is loaded by the first layout parse, not at every start
loaded() { { LD_DEBUG=files "$bin" "$@" 2>&1 >/dev/null || true; } | grep -o "file=[^ ]*" | sort -u | xargs; }
check "probe loads neither librootasm.so nor libyaml" '! loaded probe | grep -qE "librootasm|libyaml"'
check "version loads neither librootasm.so nor libyaml" '! loaded version | grep -qE "librootasm|libyaml"'
printf 'layers: [\n' >"$tmp/bad.yaml"
check "a layout parse loads libyaml" 'loaded check "$tmp/bad.yaml" | grep -q "file=libyaml-0.so.2"'
# libyaml missing: the parse says so in one line, naming the library; the probe does not need it
noyaml() { unshare -m --propagation private sh -c 'mount --bind /dev/null "$(ldconfig -p | awk "/libyaml-0.so.2 .*x86-64/ { print \$NF; exit }")" && exec "$@"' sh "$@"; }
out=$(noyaml "$bin" check "$tmp/bad.yaml" 2>&1); rc=$?
check "no libyaml: check fails (exit 1) with one line naming libyaml-0.so.2" \
	'[ $rc = 1 ] && [ "$(printf "%s\n" "$out" | wc -l)" = 1 ] && grep -q "^rootasm: load libyaml libyaml-0.so.2: .*libyaml-0-2 package" <<<"$out"'
check "no libyaml: probe still answers" 'noyaml "$bin" probe | grep -q "^mount-api .*present"'
echo "$((n - fail)) passed, $fail failed"
[ $fail = 0 ]
