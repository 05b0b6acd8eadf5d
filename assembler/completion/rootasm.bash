# bash completion for rootasm(1)                       -*- shell-script -*-
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Commands, the options of each (tests/unit/completion.sh checks them against
# `rootasm COMMAND --help`), layout files (*.yaml, *.yml, *.json) for LAYOUT,
# directories for --attach and check --live, host|none for --network, commands
# for exec's CMD, the transports (oci: and then a directory, docker://,
# docker-archive: and then a file) for import's and inspect's image, the names
# of the store's images (`rootasm images`, the --store on the line) where an
# image is taken (exec, inspect, rmi, bundle create), gc|verify for store,
# create|prepare|cleanup for bundle, and only the options of the one given.
# Needs nothing from the bash-completion package.

_rootasm_commands="check assemble exec probe watch import inspect login logout images rmi store bundle version help"
_rootasm_common="--help --json --json=pretty --quiet --debug"

# The options of command $1 (of its subcommand $2: bundle's; without one, all of them).
_rootasm_options()
{
	case $1${2:+ $2} in
	check) echo "--offline --live --as --layout-dir --source-dir $_rootasm_common" ;;
	assemble) echo "--attach --send-fd --send-fd-fd --peer-uid --timeout --audit --via $_rootasm_common" ;;
	exec) echo "--store --network --preserve-fds --env --hostname --tty --interactive --privileged --report --via $_rootasm_common" ;;
	probe) echo "--refresh --via $_rootasm_common" ;;
	watch) echo "--mntns --count --timeout $_rootasm_common" ;;
	import) echo "--store --fs --tag --tls-verify= --creds --authfile --cert-dir --max-expansion $_rootasm_common" ;;
	inspect) echo "--raw --store --tls-verify= --creds --authfile --cert-dir $_rootasm_common" ;;
	login) echo "--username --password-stdin --authfile --tls-verify= --cert-dir $_rootasm_common" ;;
	logout) echo "--all --authfile $_rootasm_common" ;;
	images) echo "--store $_rootasm_common" ;;
	rmi) echo "--store --force $_rootasm_common" ;;
	store) echo "--store --dry-run $_rootasm_common" ;;
	bundle) echo "--layout --upper --store $_rootasm_common" ;;
	"bundle create") echo "--store $_rootasm_common" ;;
	"bundle prepare") echo "--layout --upper $_rootasm_common" ;;
	"bundle cleanup") echo "$_rootasm_common" ;;
	version) echo "$_rootasm_common" ;;
	'') echo "--version --help --json --json=pretty --debug" ;;
	esac
}

# Add the layout files and directories that start with $1.
_rootasm_layouts()
{
	local f IFS=$'\n'
	for f in $(compgen -f -- "$1"); do
		[[ -d $f || $f == *.yaml || $f == *.yml || $f == *.json ]] && COMPREPLY+=("$f")
	done
	compopt -o filenames 2>/dev/null
}

# Add the paths that start with $2 of compgen's kind $1: -d directories, -f files.
_rootasm_paths()
{
	local IFS=$'\n'
	COMPREPLY+=($(compgen "$1" -- "$2"))
	compopt -o filenames 2>/dev/null
}

_rootasm_dirs() { _rootasm_paths -d "$1"; }
_rootasm_files() { _rootasm_paths -f "$1"; }

# import's and inspect's image: "oci:" then the directories, "docker-archive:" then the files, "docker://".
# Bash splits the word at ':' (COMP_WORDBREAKS) and replaces only what follows
# it: oci : DIR is completed with directories alone; with ':' not a word break,
# oci:DIR with "oci:" first.
_rootasm_oci()
{
	local cur=$1 prev=$2 prev2=$3 d IFS=$'\n'
	if [[ $cur == : && $prev == oci ]]; then
		_rootasm_dirs ""
	elif [[ $cur == : && $prev == docker-archive ]]; then
		_rootasm_files ""
	elif [[ $prev == : && $prev2 == oci ]]; then
		_rootasm_dirs "$cur"
	elif [[ $prev == : && $prev2 == docker-archive ]]; then
		_rootasm_files "$cur"
	elif [[ $cur == oci:* ]]; then
		for d in $(compgen -d -- "${cur#oci:}"); do
			COMPREPLY+=("oci:$d/")
		done
		compopt -o nospace 2>/dev/null
	elif [[ $cur == docker-archive:* ]]; then
		for d in $(compgen -f -- "${cur#docker-archive:}"); do
			COMPREPLY+=("docker-archive:$d")
		done
	else
		COMPREPLY=($(compgen -W $'oci:\ndocker://\ndocker-archive:' -- "$cur"))
		compopt -o nospace 2>/dev/null
	fi
}

# Add the names of the store's images that start with $1 (the --store given on the line, else the default).
_rootasm_images()
{
	local i store=() IFS=$'\n'
	for ((i = 1; i < COMP_CWORD; i++)); do
		[[ ${COMP_WORDS[i]} == --store ]] && store=(--store "${COMP_WORDS[i + 1]}")
	done
	COMPREPLY+=($(compgen -W "$("${COMP_WORDS[0]}" images "${store[@]}" 2>/dev/null |
		awk 'NR > 1 && $1 != "<none>" { print $1 }')" -- "$1"))
}

_rootasm()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local i w cmd= sub= operands=0 dashdash=0 skip=0
	COMPREPLY=()

	# --json=<TAB>, --network=<TAB>: bash splits the word at '=' (COMP_WORDBREAKS)
	if [[ $cur == = || $prev == = ]]; then
		local opt=${COMP_WORDS[COMP_CWORD - 2]}
		[[ $cur == = ]] && { cur=; opt=$prev; }
		case $opt in
		--json) COMPREPLY=($(compgen -W pretty -- "$cur")) ;;
		--network) COMPREPLY=($(compgen -W "host none" -- "$cur")) ;;
		--tls-verify) COMPREPLY=($(compgen -W "true false" -- "$cur")) ;;
		esac
		return 0
	fi

	# The command, and how many operands come after it (options taking a value skipped).
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if ((skip)); then
			skip=0
			continue
		fi
		if [[ -z $cmd ]]; then
			case $w in
			-* | =) ;;
			*) [[ ${COMP_WORDS[i - 1]} == = ]] || cmd=$w ;;
			esac
			continue
		fi
		case $w in
		--) ((dashdash)) || { dashdash=1; continue; } ;;
		--attach | --send-fd | --send-fd-fd | --peer-uid | --timeout | --mntns | --count | --via | \
			--network | --preserve-fds | --env | --hostname | --store | --fs | --layout | --tag | \
			--upper | --tls-verify | --max-expansion | --creds | --authfile | --cert-dir | --layout-dir | --source-dir | \
			--username | -u)
			((dashdash)) || { skip=1; continue; } ;;
		esac
		if ((dashdash)) || [[ $w != -* && $w != = && ${COMP_WORDS[i - 1]} != = ]]; then
			operands=$((operands + 1))
			((operands == 1)) && [[ $cmd == bundle ]] && sub=$w
		fi
	done

	if [[ -z $cmd ]]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$(_rootasm_options '')" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$_rootasm_commands" -- "$cur"))
		fi
		return 0
	fi

	# A value for the option before the cursor.
	case $prev in
	--attach) _rootasm_dirs "$cur"; return 0 ;;
	--send-fd | --mntns | --via | --authfile) _rootasm_files "$cur"; return 0 ;;
	--network) COMPREPLY=($(compgen -W "host none" -- "$cur")); return 0 ;;
	--store | --upper | --layout-dir | --source-dir | --cert-dir) _rootasm_dirs "$cur"; return 0 ;;
	--fs) COMPREPLY=($(compgen -W "erofs squashfs" -- "$cur")); return 0 ;;
	--tls-verify) COMPREPLY=($(compgen -W "true false" -- "$cur")); return 0 ;;
	--layout) _rootasm_layouts "$cur"; return 0 ;;
	--send-fd-fd | --peer-uid | --timeout | --count | --preserve-fds | --env | --hostname | --tag | --creds | \
		--username | -u) return 0 ;;
	esac

	if [[ $cur == -* ]] && ! ((dashdash)) && ! [[ $cmd == exec && $operands -ge 2 ]]; then
		COMPREPLY=($(compgen -W "$(_rootasm_options "$cmd" "$sub")" -- "$cur"))
		return 0
	fi

	case $cmd in
	check)
		local live=0
		for w in "${COMP_WORDS[@]:1:COMP_CWORD-1}"; do [[ $w == --live ]] && live=1; done
		if ((operands == 0)); then
			if ((live)); then _rootasm_dirs "$cur"; else _rootasm_layouts "$cur"; fi
		fi
		;;
	assemble)
		((operands == 0)) && _rootasm_layouts "$cur"
		;;
	import | inspect)
		# (oci : DIR counts as two operands, the ':' its own word)
		if ((operands == 0)) || [[ $cur == : && ($prev == oci || $prev == docker-archive) && $operands == 1 ]] ||
			[[ $prev == : && $operands == 2 ]]; then
			_rootasm_oci "$cur" "$prev" "${COMP_WORDS[COMP_CWORD - 2]}"
			[[ $cmd == inspect && $cur != *:* && $prev != : && $cur != : ]] && _rootasm_images "$cur"
		fi
		;;
	rmi)
		_rootasm_images "$cur"
		;;
	bundle)
		if ((operands == 0)); then
			COMPREPLY=($(compgen -W "create prepare cleanup" -- "$cur"))
		elif ((operands == 1)) && [[ ${COMP_WORDS[*]} == *" create "* ]]; then
			_rootasm_layouts "$cur"
			_rootasm_images "$cur"
		elif ((operands >= 1)); then
			((operands <= 2)) && _rootasm_dirs "$cur"
		fi
		;;
	store)
		((operands == 0)) && COMPREPLY=($(compgen -W "gc verify" -- "$cur"))
		;;
	exec)
		if ((operands == 0)); then
			_rootasm_layouts "$cur"
			_rootasm_images "$cur"
		elif ((operands == 1)); then
			COMPREPLY=($(compgen -c -- "$cur"))
		else
			_rootasm_files "$cur"
		fi
		;;
	esac
	return 0
}

complete -F _rootasm rootasm
