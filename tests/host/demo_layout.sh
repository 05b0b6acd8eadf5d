#!/bin/bash
# layouts/demo.yaml, as ci/demo runs it, with assertions. Root; the whole script
# runs in a private mount namespace of its own, so "nothing leaked" is checked
# where rootasm ran, against that namespace's mountinfo before and after.
set -euo pipefail
src=$1 bin=$2
if [ "$(id -u)" != 0 ]; then
	echo "FAIL: host-demo-layout needs root (it mounts); CI runs it as root"
	exit 1
fi
if [ "${ROOTASM_DEMO_NS:-}" != 1 ]; then
	ROOTASM_DEMO_NS=1 exec unshare -m --propagation private "$0" "$@"
fi
cd "$src"
ci/demo-layers build/demo
loops() { for f in /sys/block/loop*/loop/backing_file; do [ -e "$f" ] && echo "$f=$(cat "$f")"; done 2>/dev/null | grep -F "$PWD/build/demo" || true; }
mi0=$(cat /proc/self/mountinfo) lo0=$(loops)
fail=0 n=0
check() { n=$((n + 1)); if eval "$2"; then :; else echo "FAIL: $1"; fail=$((fail + 1)); fi; }
out=$("$bin" exec layouts/demo.yaml -- /bin/sh -c '
	cat /etc/motd; PATH=/usr/local/bin:$PATH hello; cat /srv/data/README
	echo w > /etc/written && echo WRITE-OK
	mknod /etc/n c 1 3 2>/dev/null || echo MKNOD-DENIED
	grep -qx "CapEff:	000000002800042b" /proc/self/status && echo CAPS-OK
	exit 5' 2>&1) && rc=0 || rc=$?
check "exit status passed through" '[ "$rc" = 5 ]'
check "app layer hides base motd" 'grep -q "^Welcome to a rootfs" <<<"$out" && ! grep -q "busybox base layer" <<<"$out"'
check "dir layer visible" 'grep -q "hello from the app layer, on rootasm-demo" <<<"$out"'
check "bind volume" 'grep -q "bind-mounted read-only" <<<"$out"'
check "upper takes writes" 'grep -q WRITE-OK <<<"$out"'
check "override_creds without CAP_MKNOD" 'grep -q MKNOD-DENIED <<<"$out"'
check "the command has exactly the exec: capabilities (CAP_MKNOD among them)" 'grep -q CAPS-OK <<<"$out"'
check "nothing leaked into the namespace rootasm ran in" '[ "$(cat /proc/self/mountinfo)" = "$mi0" ]'
check "no loop device left on the demo images" '[ "$(loops)" = "$lo0" ] && [ -z "$lo0" ]'
# the attach: exactly the tree appears, and unmounting it restores mountinfo
mkdir -p build/demo/mnt
"$bin" assemble layouts/demo.yaml --attach build/demo/mnt
check "attach adds root + 2 volumes under the target" '[ "$(grep -c " $PWD/build/demo/mnt" /proc/self/mountinfo)" = 3 ]'
# the squashfs on a loop device, the erofs mounted on its file (a loop device too where the checkout is on tmpfs)
if [ "$(stat -f -c %T build/demo)" = tmpfs ]; then erofs_loops=1; else erofs_loops=0; fi
check "the squashfs image on a loop device while attached" '[ "$(loops | grep -c "/base.sqfs$")" = 1 ]'
check "the erofs image on its file (no loop device unless on tmpfs)" '[ "$(loops | grep -c "/app.erofs$")" = "$erofs_loops" ]'
umount -R build/demo/mnt
check "unmounting restores mountinfo exactly" '[ "$(cat /proc/self/mountinfo)" = "$mi0" ]'
check "and releases the loop devices" '[ -z "$(loops)" ]'
echo "$((n - fail)) passed, $fail failed"
[ "$fail" = 0 ] || { echo "$out"; exit 1; }
