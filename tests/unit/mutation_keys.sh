#!/bin/bash
# kernel/mutation-check keeps CAUGHT verdicts under a key of everything a verdict depends
# on. A wrong hit would pass a mutation nobody ran: each input is changed here and the keys
# must follow it (and only it), a kept verdict must be used without a build or a boot, and
# --recheck must ignore it. No kernel, no QEMU: a copy of kernel/, tests/qemu/ and the
# scripts' prologue over a fake ROOTASM_CACHE.
set -u
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 n=0
ok() { n=$((n + 1)); }
bad() { n=$((n + 1)); fail=$((fail + 1)); echo "FAIL: $*"; }

repo=$tmp/repo
mkdir -p "$repo/tests" "$repo/ci"
cp -a "$src/ci/prologue.sh" "$repo/ci/"
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

# every key changes when a common input changes; none when it is put back. Every mutation's
# key is key_of() of the same common inputs and its own part (the last checks below change one
# mutation and see only its key move, over all of them): the common inputs are checked on
# three mutations (the first, a middle and the last patched one), each call of the script
# costs forks per mutation
sample=$(printf '%s\n' "$base" | awk '{ print $1 }' | sed -n "1p;$(( (nmut + 1) / 2 ))p;\$p" | xargs)
# shellcheck disable=SC2086 # the names, one argument each
skeys() { "$repo/kernel/mutation-check" --keys $sample 2>&1; }
sbase=$(skeys)
[ "$(printf '%s\n' "$sbase" | wc -l)" = 3 ] && [ -z "$(comm -13 <(printf '%s\n' "$base" | sort) \
	<(printf '%s\n' "$sbase" | sort))" ] && ok || bad "the sample's keys are not the same as all of them give: $sbase"
every() { # what; then the change has been made
	local now
	now=$(skeys)
	if [ -n "$(comm -12 <(printf '%s\n' "$sbase" | sort) <(printf '%s\n' "$now" | sort))" ]; then
		bad "$1: some keys did not change"
	else ok; fi
}
same() {
	[ "$(skeys)" = "$sbase" ] && ok || bad "$1: keys changed"
}
# the pristine copy is kept outside the hashed trees (a new file there would change the keys)
edit() { cp -a "$1" "$tmp/orig"; printf '%s\n' "$2" >>"$1"; }
undo() { mv "$tmp/orig" "$1"; }
for f in "$K/src-patched/.rootasm-key" "$K/build-patched/.config" "$K/selftests-patched/permissions_test" \
	"$K/selftests-patched/m32/notify_test_32" "$repo/kernel/mutation-check" "$repo/tests/qemu/suite" \
	"$repo/tests/qemu/run" "$repo/tests/qemu/selinux/policy.conf" "$repo/ci/prologue.sh"; do
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
# no key follows the docs, nor what only makes the inputs above: the series (the patched
# tree's key is its diffs, kernel/build), the lists of selftests and the config fragments (the
# binaries and .config are hashed), the comparison of stock and patched
for f in kernel/README.md kernel/patches/series kernel/selftests.list kernel/build tests/qemu/compare \
	"$(cd "$repo" && ls kernel/config/*.config | head -1)"; do
	edit "$repo/$f" "# more words"; same "$f"; undo "$repo/$f"
done
m=$(ls "$repo"/kernel/mutations/*.patch | head -1)
mname=$(basename "$m" .patch)
edit "$m" " "
now=$(keys)
changed=$(comm -13 <(printf '%s\n' "$base" | sort) <(printf '%s\n' "$now" | sort) | awk '{ print $1 }' | xargs)
[ "$changed" = "$mname" ] && ok || bad "$mname changed: keys of '$changed' changed"
undo "$m"
# ... and not what judges its run: Cases:, Why:, Oops:
cp -a "$m" "$tmp/orig"
sed -i -e 's/^Why: .*/Why: * changed reason/' -e 's/^Cases: \(.*\)/Cases: \1 x.y.z/' "$m"
[ "$(keys)" = "$base" ] && ok || bad "a mutation's Cases:/Why: changed keys"
undo "$m"

# a kept run is used: no build, no boot (there is no kernel to build or boot here), and
# judged again: each named case must have failed for the reason its Why: names
key=$(printf '%s\n' "$base" | awk -v m="$mname" '$1 == m { print $2 }')
cases=$(sed -n 's/^Cases: //p' "$m")
printf '%s\tpass\n' $cases kernel-log-clean >"$tmp/baseline.tsv"
out=$ROOTASM_CACHE/mutation-check/caught
mkdir -p "$out"
printf '%s\tfail\n' $cases >"$out/$key.tsv"
for c in $cases; do
	printf 'not ok - %s\n#   # t.c:1:%s:Expected the reason\n' "$c" "${c##*.}"
done >"$out/$key.log"
echo "$cases" >"$out/$key.row"
cp -a "$m" "$tmp/m.orig"
sed -i '/^Why: /d; s/^Cases: .*/&\nWhy: * :Expected the reason$/' "$m"
run=$("$repo/kernel/mutation-check" --baseline "$tmp/baseline.tsv" "$mname" 2>&1); rc=$?
if [ $rc = 0 ] && grep -q "^$mname .* cached .*CAUGHT .*(cached run of" <<<"$run" &&
	[ ! -e "$ROOTASM_CACHE/mutation-check/$mname.build.log" ] &&
	cmp -s "$out/$key.tsv" "$ROOTASM_CACHE/mutation-check/$mname.tsv"; then ok
else bad "kept verdict not used (rc $rc): $run"; fi
# another reason: the same kept run is not caught (and nothing is built or booted)
sed -i 's/^Why: .*/Why: * :Expected another reason$/' "$m"
run=$("$repo/kernel/mutation-check" --baseline "$tmp/baseline.tsv" "$mname" 2>&1); rc=$?
if [ $rc = 1 ] && grep -q "^$mname .* cached .*WRONGWHY .*not /:Expected another reason\$/ but 't.c:1:" <<<"$run" &&
	[ ! -e "$ROOTASM_CACHE/mutation-check/$mname.build.log" ]; then ok
else bad "a kept run was not judged again by the new Why: (rc $rc): $run"; fi
# a named case without a reason is refused before anything runs
sed -i '/^Why: /d' "$m"
run=$("$repo/kernel/mutation-check" --baseline "$tmp/baseline.tsv" "$mname" 2>&1); rc=$?
if [ $rc = 2 ] && grep -q "no Why: for" <<<"$run"; then ok
else bad "a case without Why: was accepted (rc $rc): $run"; fi
cp -a "$tmp/m.orig" "$m"
sed -i '/^Why: /d; s/^Cases: .*/&\nWhy: * :Expected the reason$/' "$m"
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

# --prebuild: nothing for a mutation with a kept verdict; a mutant that does not build here
# (there is no tree) leaves no kernel behind; a prebuilt kernel of the very key is booted by
# the check instead of a build (tests/qemu/run a stub here that fails the named cases for
# their reason), once: it is gone after
pre=$ROOTASM_CACHE/mutation-check/prebuilt
run=$("$repo/kernel/mutation-check" --prebuild "$mname" 2>&1); rc=$?
if [ $rc = 0 ] && grep -q ": 0 mutants built" <<<"$run" && [ -z "$(ls "$pre")" ]; then ok
else bad "--prebuild built a mutation with a kept verdict (rc $rc): $run"; fi
run=$("$repo/kernel/mutation-check" --prebuild --recheck "$mname" 2>&1); rc=$?
if [ $rc = 0 ] && grep -q "$mname: not built here" <<<"$run" && [ -z "$(ls "$pre")" ]; then ok
else bad "--prebuild of a mutant that does not build (rc $rc, left: $(ls "$pre")): $run"; fi
cp -a "$repo/tests/qemu/run" "$tmp/run.orig"
cat >"$repo/tests/qemu/run" <<EOS
#!/bin/bash
while [ \$# -gt 0 ]; do
	case "\$1" in
	--kernel) echo "\$2" >"$tmp/booted"; shift 2 ;;
	--results) for c in $cases; do printf '%s\tfail\n' "\$c"; done >"\$2"; shift 2 ;;
	*) shift ;;
	esac
done
for c in $cases; do printf 'not ok - %s\n#   # t.c:1:x:Expected the reason\n' "\$c"; done
EOS
key=$("$repo/kernel/mutation-check" --keys "$mname" | awk '{ print $2 }')
echo image >"$pre/$key.bzImage" && echo 7 >"$pre/$key.secs"
run=$("$repo/kernel/mutation-check" --recheck --baseline "$tmp/baseline.tsv" "$mname" 2>&1); rc=$?
if [ $rc = 0 ] && grep -q "^$mname .* pre7s .*CAUGHT" <<<"$run" && [ "$(cat "$tmp/booted")" = "$pre/$key.bzImage" ] &&
	[ -z "$(ls "$pre")" ] && [ ! -e "$ROOTASM_CACHE/mutation-check/$mname.build.log" ]; then ok
else bad "a prebuilt kernel was not booted, or not once (rc $rc, booted $(cat "$tmp/booted" 2>/dev/null), left: $(ls "$pre")): $run"; fi
# a prebuilt kernel of other inputs is not: the mutant is built (and does not build here)
echo image >"$pre/0123.bzImage" && echo 7 >"$pre/0123.secs" && rm -f "$tmp/booted"
run=$("$repo/kernel/mutation-check" --recheck --baseline "$tmp/baseline.tsv" "$mname" 2>&1); rc=$?
if [ $rc = 1 ] && grep -qE "^$mname .*(NOAPPLY|NOBUILD)" <<<"$run" && [ ! -e "$tmp/booted" ]; then ok
else bad "a prebuilt kernel of another key was used (rc $rc): $run"; fi
# two prebuilt kernels boot at once (two guests leave the cores less idle than one): the stub
# notes how many of it run at the same time
m2=$(printf '%s\n' "$base" | awk 'NR == 2 { print $1 }')
cat >"$repo/tests/qemu/run" <<EOS
#!/bin/bash
mkdir -p "$tmp/guests" && : >"$tmp/guests/\$\$"
ls "$tmp/guests" | wc -l >>"$tmp/concurrent"
sleep 1
rm -f "$tmp/guests/\$\$"
EOS
rm -f "$tmp/concurrent" "$pre"/0123.*
for k in $("$repo/kernel/mutation-check" --keys "$mname" "$m2" | awk '{ print $2 }'); do
	echo image >"$pre/$k.bzImage" && echo 7 >"$pre/$k.secs"
done
run=$("$repo/kernel/mutation-check" --recheck --baseline "$tmp/baseline.tsv" "$mname" "$m2" 2>&1); rc=$?
if [ "$(sort -n "$tmp/concurrent" | tail -1)" = 2 ] && [ -z "$(ls "$pre")" ] &&
	grep -q "^$mname .* pre7s " <<<"$run" && grep -q "^$m2 .* pre7s " <<<"$run"; then ok
else bad "two prebuilt kernels were not booted at once (guests at once: $(xargs <"$tmp/concurrent"), left: $(ls "$pre")): $run"; fi
mv "$tmp/run.orig" "$repo/tests/qemu/run"
# --stop-prebuild: a running --prebuild builds no mutant after the one it is at (here the
# first one's git apply asks for the stop, through a git on PATH)
printf '#!/bin/sh\n"%s/kernel/mutation-check" --stop-prebuild; exit 1\n' "$repo" >"$tmp/bin/git"
chmod +x "$tmp/bin/git"
run=$(PATH=$tmp/bin:$PATH "$repo/kernel/mutation-check" --prebuild --recheck "$mname" "$m2" 2>&1); rc=$?
if [ $rc = 0 ] && grep -q "$mname: not built here" <<<"$run" && grep -q "stopped (--stop-prebuild)" <<<"$run" &&
	! grep -q "$m2" <<<"$run"; then ok
else bad "--stop-prebuild did not stop a running --prebuild (rc $rc): $run"; fi
rm -f "$tmp/bin/git"

echo "mutation_keys: $((n - fail))/$n passed"
[ $fail = 0 ]
