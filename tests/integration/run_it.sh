#!/bin/bash
# run_it.sh TEST XLBD LBCTL XLB_DECAP BALANCER_OBJ DECAP_OBJ [MORE...]: skip (77) when
# the dataplane objects are not built; XLB_TEST_BALANCER_OBJ and
# XLB_TEST_DECAP_OBJ override them.
t=$1 bal=${XLB_TEST_BALANCER_OBJ:-$5} decap=${XLB_TEST_DECAP_OBJ:-$6}
if [ -z "$bal" ] || [ ! -f "$bal" ] || [ -z "$decap" ] || [ ! -f "$decap" ]; then
	echo "SKIP: dataplane objects (balancer.bpf.o, decap.bpf.o) not built"
	exit 77
fi
exec bash "$t" "$2" "$3" "$4" "$bal" "$decap" "${@:7}"
