#!/bin/bash
# kernel/mutation-check keeps CAUGHT verdicts under a key of everything a verdict depends
# on. A wrong hit would pass a mutation nobody ran: each input is changed here and the keys
# must follow it (and only it), a kept verdict must be used without a build or a boot, and
# --recheck must ignore it. No kernel, no QEMU: a copy of kernel/ and tests/qemu/ over a
# fake ROOTASM_CACHE.
set -u
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 n=0
ok() { n=$((n + 1)); }
bad() { n=$((n + 1)); fail=$((fail + 1)); echo "FAIL: $*"; }

repo=$tmp/repo
mkdir -p "$repo/tests"
cp -a "$src/kernel" "$repo/kernel"
cp -a "$src/tests/qemu" "$repo/tests/qemu"
export ROOTASM_CACHE=$tmp/cache ROOTASM_MUTATION_RECHECK=0
K=$ROOTASM_CACHE/kernel
mkdir -p "$K/src-patched" "$K/build-patched/arch/x86/boot" "$K/build-patched-debug/arch/x86/boot" \
	"$K/selftests-patched/m32"
echo 0123456789abcdef >"$K/src-patched/.rootasm-key"
echo "CONFIG_X=y" >"$K/build-patched/.config"
echo "CONFIG_X=y" >"$K/build-patched-debug/.config"
: >"$K/build-patched/arch/x86/boot/bzImage"
: >"$K/build-patched-debug/arch/x86/boot/bzImage"
echo a >"$K/selftests-patched/permissions_test"
echo b >"$K/selftests-patched/m32/notify_test_32"

keys() { "$repo/kernel/mutation-check" "$@" --keys 2>&1; }
base=$(keys) || { echo "FAIL: --keys: $base"; exit 1; }
nmut=$(printf '%s\n' "$base" | wc -l)
[ "$nmut" -ge 2 ] && ok || bad "--keys printed $nmut lines: $base"
[ "$(printf '%s\n' "$base" | awk '{ print $2 }' | sort -u | wc -l)" = "$nmut" ] && ok ||
	bad "two mutations share a key"
[ "$(keys)" = "$base" ] && ok || bad "the keys are not stable"

# every key changes when a common input changes; none when it is put back
every() { # what; then the change has been made
	local now
	now=$(keys)
	if [ -n "$(comm -12 <(printf '%s\n' "$base" | sort) <(printf '%s\n' "$now" | sort))" ]; then
		bad "$1: some keys did not change"
	else ok; fi
}
same() {
	[ "$(keys)" = "$base" ] && ok || bad "$1: keys changed"
}
# the pristine copy is kept outside the hashed trees (a new file there would change the keys)
edit() { cp -a "$1" "$tmp/orig"; printf '%s\n' "$2" >>"$1"; }
undo() { mv "$tmp/orig" "$1"; }
for f in "$K/src-patched/.rootasm-key" "$K/build-patched/.config" "$K/selftests-patched/permissions_test" \
	"$K/selftests-patched/m32/notify_test_32" "$repo/kernel/mutation-check" "$repo/tests/qemu/suite" \
	"$repo/tests/qemu/run" "$repo/tests/qemu/selinux/policy.conf" "$repo/kernel/patches/series" \
	"$repo/kernel/selftests.list"; do
	edit "$f" "# changed"
	every "${f#$tmp/}"
	undo "$f"
	same "${f#$tmp/} put back"
done
echo c >"$K/selftests-patched/new_test"; every "a selftest added"; rm "$K/selftests-patched/new_test"
# the packages of the host, by a dpkg-query that prints one more
mkdir -p "$tmp/bin"
printf '#!/bin/sh\n/usr/bin/dpkg-query "$@"; echo "qemu-system-x86 1:99 amd64"\n' >"$tmp/bin/dpkg-query"
chmod +x "$tmp/bin/dpkg-query"
PATH=$tmp/bin:$PATH every "a host package"
# the kernel: the debug kernel's keys differ from the patched kernel's and follow its .config
dbase=$(keys --kernel debug)
[ -z "$(comm -12 <(printf '%s\n' "$base" | sort) <(printf '%s\n' "$dbase" | sort))" ] && ok ||
	bad "a debug key equals a patched one"
edit "$K/build-patched-debug/.config" "CONFIG_KASAN=y"
[ -z "$(comm -12 <(printf '%s\n' "$dbase" | sort) <(keys --kernel debug | sort))" ] && ok ||
	bad "debug .config: some keys did not change"
undo "$K/build-patched-debug/.config"
# no key follows the docs; one mutation's key follows that mutation only
edit "$repo/kernel/README.md" "more words"; same "kernel/README.md"; undo "$repo/kernel/README.md"
m=$(ls "$repo"/kernel/mutations/*.patch | head -1)
mname=$(basename "$m" .patch)
edit "$m" " "
now=$(keys)
changed=$(comm -13 <(printf '%s\n' "$base" | sort) <(printf '%s\n' "$now" | sort) | awk '{ print $1 }' | xargs)
[ "$changed" = "$mname" ] && ok || bad "$mname changed: keys of '$changed' changed"
undo "$m"

# a kept verdict is used: no build, no boot (there is no kernel to build or boot here)
key=$(printf '%s\n' "$base" | awk -v m="$mname" '$1 == m { print $2 }')
cases=$(sed -n 's/^Cases: //p' "$m")
printf '%s\tpass\n' $cases kernel-log-clean >"$tmp/baseline.tsv"
out=$ROOTASM_CACHE/mutation-check/caught
mkdir -p "$out"
printf '%s\tfail\n' $cases >"$out/$key.tsv"
echo "the log" >"$out/$key.log"
echo "$cases" >"$out/$key.row"
run=$("$repo/kernel/mutation-check" --baseline "$tmp/baseline.tsv" "$mname" 2>&1); rc=$?
if [ $rc = 0 ] && grep -q "^$mname .* cached .*CAUGHT .*(cached: caught" <<<"$run" &&
	! grep -q "restore.build" <<<"$run" && [ ! -e "$ROOTASM_CACHE/mutation-check/restore.build.log" ] &&
	cmp -s "$out/$key.tsv" "$ROOTASM_CACHE/mutation-check/$mname.tsv"; then ok
else bad "kept verdict not used (rc $rc): $run"; fi
# --recheck ignores it: the mutation is applied and built (and fails here: there is no tree)
run=$("$repo/kernel/mutation-check" --recheck --baseline "$tmp/baseline.tsv" "$mname" 2>&1); rc=$?
if [ $rc = 1 ] && ! grep -q "cached" <<<"$run" && grep -qE "^$mname .*(NOAPPLY|NOBUILD)" <<<"$run"; then ok
else bad "--recheck used the kept verdict (rc $rc): $run"; fi
# so does a changed input: the same kept files, another key
edit "$repo/tests/qemu/suite" "# changed"
run=$("$repo/kernel/mutation-check" --baseline "$tmp/baseline.tsv" "$mname" 2>&1); rc=$?
if [ $rc = 1 ] && ! grep -q "cached" <<<"$run"; then ok
else bad "a kept verdict of other inputs was used (rc $rc): $run"; fi
undo "$repo/tests/qemu/suite"
# a verdict that is not CAUGHT is never kept
if [ -z "$(ls "$out" | grep -v "^$key\.")" ]; then ok
else bad "a failed verdict was kept: $(ls "$out")"; fi

echo "mutation_keys: $((n - fail))/$n passed"
[ $fail = 0 ]
