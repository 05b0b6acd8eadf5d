#!/bin/bash
# The C example of README.md ("Use from a runtime"), built against the build
# tree and run as root, as a runtime would run it: it assembles a layout with
# an image layer, a directory layer, a tmpfs upper and two volumes and
# attaches it; the kernel's mountinfo must show exactly that tree at the
# target, the layers' files must be there, and unmounting it must give back
# the mount table and the loop device. A bad layout: status 2, one line with
# file:line:column. Runs in a private mount namespace of its own.
# Usage: readme_example.sh SOURCE-DIR BUILD-DIR CC
set -euo pipefail
src=$1 build=$2 cc=$3
if [ "$(id -u)" != 0 ]; then
	echo "FAIL: host-readme-example needs root (it mounts); CI runs it as root"
	exit 1
fi
if [ "${ROOTASM_README_NS:-}" != 1 ]; then
	ROOTASM_README_NS=1 exec unshare -m --propagation private "$0" "$@"
fi
t=$(mktemp -d)
trap 'umount -R "$t/rootfs" 2>/dev/null || true; rm -rf "$t"' EXIT
fail=0 n=0
check() { n=$((n + 1)); if eval "$2"; then :; else echo "FAIL: $1"; fail=$((fail + 1)); fi; }

awk '/^## Use from a runtime/ { on = 1 } on && /^```c$/ { c = 1; next } c && /^```$/ { exit } c { print }' \
	"$src/README.md" >"$t/runtime.c"
"$cc" -Wall -Wextra -Werror -o "$t/runtime" "$t/runtime.c" -I"$src/assembler/include" -L"$build" -lrootasm \
	-Wl,-rpath,"$build"

mkdir -p "$t/img/etc" "$t/app/opt" "$t/data" "$t/rootfs"
echo "from the image layer" >"$t/img/etc/issue"
echo "from the dir layer" >"$t/app/opt/app"
echo "host data" >"$t/data/README"
mksquashfs "$t/img" "$t/base.sqfs" -quiet -noappend -no-progress >/dev/null
cat >"$t/layout.yaml" <<'YAML'
version: 1
layers:
  - image: base.sqfs
  - dir: app
upper:
  tmpfs: { size: 16M }
mounts:
  - { tmpfs: /tmp, options: [nosuid, nodev, size=4M] }
  - { bind: data, target: /srv/data, options: [ro] }
YAML
loops() { grep -lF "$t/base.sqfs" /sys/block/loop*/loop/backing_file 2>/dev/null || true; }
mi0=$(cat /proc/self/mountinfo)

"$t/runtime" "$t/layout.yaml" "$t/rootfs"
check "the example exits 0" 'true'
mounts=$(awk -v d="$t/rootfs" '$5 == d || index($5, d "/") == 1 { print $5, $(NF - 2) }' /proc/self/mountinfo)
check "mountinfo: the overlay at the target, the tmpfs at /tmp, the bind at /srv/data, nothing else ($mounts)" \
	'[ "$(sed -n 1p <<<"$mounts")" = "$t/rootfs overlay" ] && [ "$(sed -n 2p <<<"$mounts")" = "$t/rootfs/tmp tmpfs" ] &&
	 [[ $(sed -n 3p <<<"$mounts") == "$t/rootfs/srv/data "* ]] && [ "$(wc -l <<<"$mounts")" = 3 ]'
check "the image layer's file" '[ "$(cat "$t/rootfs/etc/issue")" = "from the image layer" ]'
check "the dir layer's file" '[ "$(cat "$t/rootfs/opt/app")" = "from the dir layer" ]'
check "the bind volume, read-only" '[ "$(cat "$t/rootfs/srv/data/README")" = "host data" ] && ! touch "$t/rootfs/srv/data/x" 2>/dev/null'
check "writes go to the upper" 'echo w >"$t/rootfs/etc/written" && [ ! -e "$t/app/etc/written" ]'
check "a loop device holds the image" '[ -n "$(loops)" ]'
umount -R "$t/rootfs"
check "unmounting gives back the mount table" '[ "$(cat /proc/self/mountinfo)" = "$mi0" ]'
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -z "$(loops)" ] && break; sleep 0.1; done
check "and the loop device (autoclear)" '[ -z "$(loops)" ]'

printf 'version: 1\nlayers:\n  - dir: app\n    mode: 1\n' >"$t/bad.yaml"
err=$("$t/runtime" "$t/bad.yaml" "$t/rootfs" 2>&1) && rc=0 || rc=$?
check "a bad layout: status 2 ($rc)" '[ "$rc" = 2 ]'
check "one line naming file:line:column and the key ($err)" \
	'[ "$(echo "$err" | wc -l)" = 1 ] && [[ $err == "$t/bad.yaml:4:5: layers[0]: unknown key '"'"'mode'"'"'"* ]]'
check "nothing mounted by the failure" '[ "$(cat /proc/self/mountinfo)" = "$mi0" ]'
echo "readme-example: $((n - fail))/$n checks passed"
[ "$fail" = 0 ]
