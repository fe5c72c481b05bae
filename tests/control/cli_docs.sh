#!/bin/bash
# lbctl's help, man page and bash completion come from one command table:
# every command the help lists is in the man page and completes, the
# completion script parses, and bad usage exits 2.
# Usage: cli_docs.sh LBCTL MAN COMPLETION
set -u
lbctl=$1 man=$2 comp=$3
fail() { echo "FAIL: $*"; exit 1; }
bash -n "$comp" || fail "completion script does not parse"
cmds=$("$lbctl" help | sed -n 's/^  lbctl \([a-z-]*\)\( [a-z][a-z-]*\)\?.*/\1\2/p' | sed 's/ [A-Z[].*//')
[ "$(echo "$cmds" | wc -l)" -ge 15 ] || fail "help lists too few commands: $cmds"
while read -r obj verb; do
	sed 's/\\-/-/g' "$man" | grep -q "lbctl $obj${verb:+ $verb}" || fail "man page lacks: $obj $verb"
	if [ -n "$verb" ]; then
		got=$(bash -c "source '$comp'; COMP_WORDS=(lbctl $obj ''); COMP_CWORD=2; _lbctl; echo \" \${COMPREPLY[*]} \"")
		[[ "$got" == *" $verb "* ]] || fail "completion of '$obj' lacks $verb: $got"
	fi
	"$lbctl" "$obj" ${verb:+$verb} help >/dev/null 2>&1 || true
done <<< "$(echo "$cmds" | awk '{print $1, $2}')"
"$lbctl" frobnicate >/dev/null 2>&1; [ $? = 2 ] || fail "unknown object exit code"
"$lbctl" vip add >/dev/null 2>&1; [ $? = 2 ] || fail "missing argument exit code"
"$lbctl" vip add 10.0.0.1 >/dev/null 2>&1; [ $? = 2 ] || fail "VIP without port accepted"
"$lbctl" real set-weight 10.0.0.1:80 10.1.1.1 heavy >/dev/null 2>&1; [ $? = 2 ] || fail "bad weight accepted"
"$lbctl" --bogus >/dev/null 2>&1; [ $? = 2 ] || fail "unknown option exit code"
# VIP syntax: well-formed ones get as far as the (absent) daemon: exit 3.
for v in 10.0.0.1:80 10.0.0.1:80/udp "[2001:db8::1]:443/tcp" "[::ffff:10.0.0.1]:0"; do
	"$lbctl" -s /nonexistent/xlbd.sock vip add "$v" >/dev/null 2>&1
	[ $? = 3 ] || fail "VIP $v refused"
done
for v in 10.0.0.1 10.0.0.1:99999 10.0.0.1:80/sctp "[2001:db8::1:443" 2001:db8::1:443 10.0.0.300:1 ":80"; do
	"$lbctl" -s /nonexistent/xlbd.sock vip add "$v" >/dev/null 2>&1
	[ $? = 2 ] || fail "bad VIP $v accepted"
done
"$lbctl" -s /nonexistent/xlbd.sock real add 10.0.0.1:80 not-an-ip >/dev/null 2>&1; [ $? = 2 ] || fail "bad real accepted"
"$lbctl" -s /nonexistent/xlbd.sock vip add 10.0.0.1:80 hc-rise 500 >/dev/null 2>&1; [ $? = 2 ] || fail "hc-rise 500 accepted"
# Both option forms, combined short flags, case-insensitive protocols: well-formed, so exit 3.
for args in "vip add 10.0.0.1:80/TCP --encap=gue" "vip add 10.0.0.1:80/Udp encap gue hc-rise 3" \
	"-jp vip list" "vip list -jp" "real add 10.0.0.1:80 10.1.1.1 --weight=5 --state draining" \
	"stats -w --interval=0.5" "--socket=/nonexistent/xlbd.sock status"; do
	"$lbctl" -s /nonexistent/xlbd.sock $args >/dev/null 2>&1
	[ $? = 3 ] || fail "'$args' not accepted"
done
for args in "vip add 10.0.0.1:80 --encap=bogus" "vip add 10.0.0.1:80 encap" "vip add 10.0.0.1:80 flags bogus" \
	"real add 10.0.0.1:80 10.1.1.1 --weight=-1" "stats --interval=0" "vip list extra" "-x vip list"; do
	"$lbctl" -s /nonexistent/xlbd.sock $args >/dev/null 2>&1
	[ $? = 2 ] || fail "'$args' not a usage error"
done
# Values complete from the same tables.
got=$(bash -c "source '$comp'; COMP_WORDS=(lbctl vip add 10.0.0.1:80 encap ''); COMP_CWORD=5; _lbctl; echo \" \${COMPREPLY[*]} \"")
[[ "$got" == *" gue "* && "$got" == *" ipip "* ]] || fail "encap values: $got"
got=$(bash -c "source '$comp'; COMP_WORDS=(lbctl real add 10.0.0.1:80 10.1.1.1 --state ''); COMP_CWORD=6; _lbctl; echo \" \${COMPREPLY[*]} \"")
[[ "$got" == *" draining "* ]] || fail "state values: $got"
echo "PASS: $(echo "$cmds" | wc -l) commands documented, completed and in the man page"
