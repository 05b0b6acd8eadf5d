#!/bin/bash
# The bash completion (assembler/completion/rootasm.bash): sourced into bash,
# called as bash calls it (COMP_WORDS, COMP_CWORD), and its commands and
# options compared with what `rootasm --help` and `rootasm COMMAND --help` say.
# Usage: completion.sh COMPLETION-SCRIPT ROOTASM
set -u
script=$1 bin=$2
fail=0 n=0
# shellcheck source=/dev/null
. "$script" || { echo "FAIL: sourcing $script"; exit 1; }
[ "$(complete -p rootasm)" = "complete -F _rootasm rootasm" ] || { echo "FAIL: complete -p rootasm"; fail=1; }

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
mkdir sub rootfs
: >a.yaml; : >b.json; : >c.yml; : >notes.txt; : >sock

# comp WORD... : the completions of the last word (sorted, one line)
comp() {
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMP_LINE="$*"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	_rootasm
	printf '%s\n' "${COMPREPLY[@]}" | LC_ALL=C sort -u | paste -sd' '
}
# t EXPECTED WORD... : exactly these completions
t() {
	local want=$1 got
	shift
	n=$((n + 1))
	got=$(comp "$@")
	if [ "$got" != "$want" ]; then
		echo "FAIL: [$*] -> '$got', want '$want'"
		fail=$((fail + 1))
	fi
}
# has WORD WORD... : WORD is among the completions (and, with !, is not)
has() {
	local w=$1 got
	shift
	n=$((n + 1))
	got=" $(comp "$@") "
	case $w in
	!*) [[ $got != *" ${w#!} "* ]] ;;
	*) [[ $got == *" $w "* ]] ;;
	esac || { echo "FAIL: [$*] -> '$got', want $w"; fail=$((fail + 1)); }
}

t "assemble bundle check exec help images import inspect login logout probe rmi store version watch" rootasm ""
t "check" rootasm ch
t "exec" rootasm --debug ex
t "exec" rootasm --json = pretty ex
t "--debug --help --json --json=pretty --version" rootasm -
t "--debug --help --json --json=pretty --quiet" rootasm version -
t "--quiet" rootasm probe --q
t "--offline" rootasm check --o
t "--attach --audit" rootasm assemble a.yaml --a
t "host none" rootasm exec --network ""
t "none" rootasm exec a.yaml --network = n
t "" rootasm exec --env ""
has true rootasm exec --env A=1 --network none a.yaml tru
has true rootasm exec --env = A = 1 a.yaml tru
has --privileged rootasm exec --p
has --tty rootasm exec --t
has true rootasm exec --tty a.yaml tru
t "" rootasm assemble a.yaml --send-fd-fd ""
t "a.yaml b.json c.yml rootfs sub" rootasm check ""
t "a.yaml" rootasm assemble --attach rootfs a
t "rootfs sub" rootasm check --live ""
t "rootfs sub" rootasm assemble a.yaml --attach ""
t "rootfs" rootasm assemble a.yaml --attach r
t "sock" rootasm assemble a.yaml --send-fd so
t "" rootasm watch --count ""
t "" rootasm check a.yaml ""
t "pretty" rootasm --json =
t "pretty" rootasm check --json = p
has true rootasm exec a.yaml tru
has true rootasm exec --report a.yaml -- tru
has --report rootasm exec a.yaml --r
has '!--report' rootasm exec a.yaml -- ls --r
has '!--report' rootasm exec a.yaml ls --r
has notes.txt rootasm exec a.yaml ls no
t "erofs squashfs" rootasm import --fs ""
t "oci:" rootasm import --store rootfs o
t "docker-archive: docker:// oci:" rootasm import --quiet ""
t "docker-archive: docker://" rootasm import --tls-verify = false d
t "docker-archive: docker://" rootasm import --tls-verify false d
t "docker-archive: docker://" rootasm import docker
# docker-archive:FILE: the files after the ':'
has notes.txt rootasm import docker-archive :
has notes.txt rootasm inspect docker-archive : ""
t "docker-archive:notes.txt" rootasm import docker-archive:no
t "false true" rootasm import --tls-verify = ""
t "false" rootasm import --tls-verify = f
# oci:DIR as bash splits it at ':' (COMP_WORDBREAKS): the directories after the ':'
t "rootfs sub" rootasm import oci :
t "rootfs sub" rootasm import oci : ""
t "sub" rootasm import --fs erofs oci : s
t "" rootasm import oci : rootfs ""
# and with ':' not a word break: the whole word
t "oci:rootfs/ oci:sub/" rootasm import oci:
t "oci:sub/" rootasm import oci:s
t "cleanup create prepare" rootasm bundle ""
t "gc verify" rootasm store ""
t "rootfs sub" rootasm bundle prepare ""
t "a.yaml" rootasm bundle prepare --layout a
# each bundle subcommand's own options only (--store is create's, --layout and --upper prepare's)
t "--debug --help --json --json=pretty --quiet --store" rootasm bundle create -
t "--debug --help --json --json=pretty --layout --quiet --upper" rootasm bundle prepare -
t "--debug --help --json --json=pretty --quiet" rootasm bundle --json cleanup -
t "--upper" rootasm bundle prepare --layout a.yaml --u
# the store's images, as `rootasm images` lists them (here a stand-in), of the --store on the line
mkdir stub
cat >stub/rootasm <<'STUB'
#!/bin/sh
[ "$1" = images ] || exit 1
echo "NAME  DIGEST  LAYERS  SIZE  LAST USE"
if [ "${2:-}" = --store ] && [ "${3:-}" = other ]; then echo "other.example/x:1  sha256:aa  1  1MB  -"; exit 0; fi
echo "127.0.0.1:5000/test/img:v1  sha256:abc  4  14MB  -"
echo "<none>  sha256:def  1  1MB  -"
STUB
chmod +x stub/rootasm
PATH=$dir/stub:$PATH
t "127.0.0.1:5000/test/img:v1" rootasm rmi ""
t "other.example/x:1" rootasm rmi --store other ""
t "127.0.0.1:5000/test/img:v1" rootasm exec 1
t "127.0.0.1:5000/test/img:v1" rootasm bundle create 1
has 127.0.0.1:5000/test/img:v1 rootasm inspect ""
has docker:// rootasm inspect ""
has '!127.0.0.1:5000/test/img:v1' rootasm import ""
PATH=${PATH#"$dir/stub:"}

# the same commands and options as the binary's --help
n=$((n + 1))
cmds=$("$bin" --help | awk '/^Commands:/ { on = 1; next } on && /^$/ { exit } on && /^  [a-z]/ { print $1 }' | LC_ALL=C sort)
want=$(printf '%s\n' $cmds help | LC_ALL=C sort -u | paste -sd' ')
have=$(printf '%s\n' $_rootasm_commands | LC_ALL=C sort -u | paste -sd' ')
[ -n "$cmds" ] && [ "$want" = "$have" ] || { echo "FAIL: commands: completion '$have', --help '$want'"; fail=$((fail + 1)); }
for c in $cmds; do
	n=$((n + 1))
	want=$("$bin" "$c" --help | grep -o -- '--[a-z][a-z-]*' | LC_ALL=C sort -u | paste -sd' ')
	have=$(printf '%s\n' $(_rootasm_options "$c") | sed 's/=.*//' | LC_ALL=C sort -u | paste -sd' ')
	[ -n "$want" ] && [ "$want" = "$have" ] || { echo "FAIL: $c options: completion '$have', --help '$want'"; fail=$((fail + 1)); }
done
echo "completion: $((n - fail))/$n checks passed"
[ "$fail" -eq 0 ]
