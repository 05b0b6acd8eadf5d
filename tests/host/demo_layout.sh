#!/bin/bash
# layouts/demo.yaml, as ci/demo runs it, with assertions (root; own mount namespace).
set -euo pipefail
src=$1 bin=$2
cd "$src"
ci/demo-layers build/demo
fail=0 n=0
check() { n=$((n + 1)); if eval "$2"; then :; else echo "FAIL: $1"; fail=$((fail + 1)); fi; }
out=$(unshare -m --propagation private "$bin" exec layouts/demo.yaml -- /bin/sh -c '
	cat /etc/motd; PATH=/usr/local/bin:$PATH hello; cat /srv/data/README
	echo w > /etc/written && echo WRITE-OK
	mknod /dev/n c 1 3 2>/dev/null || echo MKNOD-DENIED
	exit 5' 2>&1) && rc=0 || rc=$?
check "exit status passed through" '[ "$rc" = 5 ]'
check "app layer hides base motd" 'grep -q "^Welcome to a rootfs" <<<"$out" && ! grep -q "busybox base layer" <<<"$out"'
check "dir layer visible" 'grep -q "hello from the app layer, on rootasm-demo" <<<"$out"'
check "bind volume" 'grep -q "bind-mounted read-only" <<<"$out"'
check "upper takes writes" 'grep -q WRITE-OK <<<"$out"'
check "override_creds without CAP_MKNOD" 'grep -q MKNOD-DENIED <<<"$out"'
check "nothing leaked into this namespace" '! grep -q "/build/demo" /proc/self/mountinfo'
check "no loop device left on the demo images" '! grep -qs "build/demo" /sys/block/loop*/loop/backing_file'
echo "$((n - fail)) passed, $fail failed"
[ "$fail" = 0 ] || { echo "$out"; exit 1; }
