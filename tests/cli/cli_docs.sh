#!/bin/bash
# One table, three views: for a program built on cli/ (xbpf, lbctl, xlbd),
# every option and command that --help lists is in the man page and is
# offered by bash completion; the man page renders without groff warnings
# and the completion script parses.  A view that drifts from the table fails.
# Usage: cli_docs.sh PROGRAM
set -u
prog=$1
name=$(basename "$prog")
tmp=$(mktemp -d /tmp/xlbt-cli-docs.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL ($name): $*"; exit 1; }

"$prog" --help > "$tmp/help" || fail "--help exits $?"
"$prog" --man > "$tmp/man" || fail "--man exits $?"
"$prog" --bash-completion > "$tmp/comp" || fail "--bash-completion exits $?"
bash -n "$tmp/comp" || fail "completion script does not parse"
warn=$(groff -ww -z -man "$tmp/man" 2>&1) || fail "groff: $warn"
[ -z "$warn" ] || fail "groff warnings: $warn"
man=$(sed 's/\\-/-/g; s/\\f[BIR]//g' "$tmp/man")

# complete WORDS...: what completion offers after them (the last one is the cursor's)
complete() {
	bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1));
		_'"$name"'; echo " ${COMPREPLY[*]} "' _ "$tmp/comp" "$name" "$@"
}

# Global options: --help lines before "Commands:".
opts=$(sed '/^Commands:/q' "$tmp/help" | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)
[ "$(echo "$opts" | wc -l)" -ge 3 ] || fail "help lists too few options: $opts"
got=$(complete --)
for o in $opts; do
	grep -qF -- "$o" <<< "$man" || fail "man page lacks option $o"
	[[ "$got" == *" $o "* || "$got" == *" $o= "* ]] || fail "completion lacks option $o: $got"
done
n=$(echo "$opts" | wc -l)

# Commands: the "  NAME word [word]" lines; each is in the man page and completes word by word.
cmds=$(sed -n '/^Commands:/,$p' "$tmp/help" | sed -n "s/^  $name \([a-z][a-z-]*\)\( [a-z][a-z-]*\)\?\( .*\)\?$/\1\2/p")
while read -r w1 w2; do
	[ -n "$w1" ] || continue
	grep -qF "$name $w1${w2:+ $w2}" <<< "$man" || fail "man page lacks command $w1 $w2"
	got=$(complete "")
	[[ "$got" == *" $w1 "* ]] || fail "completion lacks $w1: $got"
	if [ -n "$w2" ]; then
		got=$(complete "$w1" "")
		[[ "$got" == *" $w2 "* ]] || fail "completion of '$w1' lacks $w2: $got"
	fi
	# The command's own options complete after it.
	awk -v c="  $name $w1${w2:+ $w2}" 'index($0, c " ") == 1 || $0 == c {on = 1; next}
		/^  [a-z]/ {on = 0} on' "$tmp/help" | grep -E '^        [-a-z]' > "$tmp/cmdopts"
	cmdopts=$(sed -E 's/^ +(-[a-z], )?//; s/[ =[].*//' "$tmp/cmdopts") || fail "sed"
	[ "$(echo "$cmdopts" | grep -c .)" = "$(grep -c . "$tmp/cmdopts")" ] || fail "option lines of $w1 $w2"
	for o in $cmdopts; do
		if [[ $o == --* ]]; then
			got=$(complete $w1 $w2 --)
		else
			got=$(complete $w1 $w2 "")
		fi
		[[ "$got" == *" $o "* || "$got" == *" $o= "* ]] || fail "completion of '$w1 $w2' lacks $o: $got"
		grep -qE -- "(^|[ [])$o( |$|\\])" <<< "$man" || fail "man page lacks $o of $w1 $w2"
		n=$((n + 1))
	done
	n=$((n + 1))
done <<< "$cmds"

# Bad usage is exit 2 in every program.
"$prog" --no-such-option >/dev/null 2>&1
[ $? = 2 ] || fail "unknown option does not exit 2"
echo "PASS: $name: $n options and commands in help, man page and completion"
