#!/bin/sh
# subprogs.sh OBJDUMP OBJ MIN: the object's programs call at least MIN
# static subprograms (FUNC symbols in .text) and has at least MIN
# bpf-to-bpf call sites (call with src_reg = 1, opcode 0x85, regs 0x10).
objdump=$1 obj=$2 min=$3
n=$("$objdump" -t "$obj" | awk '$3 == "F" && $4 == ".text"' | wc -l)
echo "$obj: $n subprograms in .text"
"$objdump" -t "$obj" | awk '$3 == "F" && $4 == ".text" {print "  " $NF}'
calls=$("$objdump" -d "$obj" | grep -c '	85 10 ')
echo "$calls bpf-to-bpf call sites"
[ "$n" -ge "$min" ] && [ "$calls" -ge "$min" ]
