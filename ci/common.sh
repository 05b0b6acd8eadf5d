# shellcheck shell=bash
# Sourced by ci/ scripts after they cd to the checkout's top: what they share.
#   cache        ${ROOTASM_CACHE:-$HOME/.cache/rootasm}: every cache of the tests, always rebuildable
#   c_launcher   cmake's -DCMAKE_C_COMPILER_LAUNCHER=ccache when ccache is there (rootasm's own C
#                build: objects shared between checkouts, whatever their directory: paths under it
#                are made relative, the working directory is not hashed), else nothing
cache=${ROOTASM_CACHE:-$HOME/.cache/rootasm}
c_launcher=()
if command -v ccache >/dev/null; then
	export CCACHE_DIR=$cache/ccache-rootasm CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
	c_launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
