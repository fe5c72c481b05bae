// SPDX-License-Identifier: MIT
/*
 * fuzz_verifier.c - libFuzzer target: random programs through
 * xbpf_verify(); whatever it accepts then runs in the interpreter on a
 * packet taken from the input, so that an unsound acceptance shows up as an
 * AddressSanitizer report.  Never a crash, never a hang (the verifier stops
 * at 1M processed instructions).
 *
 * Input: byte 0 selects the program type and log level, byte 1 the log
 * buffer size (small sizes exercise truncation), bytes 2-3 the packet
 * length; then the packet bytes are the input's tail and the instructions
 * the 8-byte words before it.  Two maps are present: a hash (8/8) as map 0
 * and a one-element array (4/48) as map 1.
 *
 * Built with meson -Dfuzz=true (CC=clang) and run by scripts/fuzz.sh.  The
 * same file linked with tests/lib/fuzz_replay.c is a plain test that replays the
 * committed corpus (tests/verifier/corpus/).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xbpf_engine.h"
#include "xbpf_verifier.h"

#define MAX_INSNS 512

static const enum xbpf_prog_type types[] = {
	XBPF_PROG_XDP, XBPF_PROG_SCHED_CLS, XBPF_PROG_SOCKET_FILTER, XBPF_PROG_TRACEPOINT,
};

static const struct xbpf_map_spec maps[] = {
	{ .name = "h", .type = XBPF_MAP_HASH, .key_size = 8, .value_size = 8, .max_entries = 4 },
	{ .name = "a", .type = XBPF_MAP_ARRAY, .key_size = 4, .value_size = 48, .max_entries = 1 },
};

static int quiet(enum xbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

static void run_accepted(struct xbpf_prog *prog, enum xbpf_prog_type type, const uint8_t *pkt,
			 size_t pkt_len)
{
	struct xbpf_vm_opts vo = { .sz = sizeof(vo), .engine = XBPF_ENGINE_INTERP };
	struct xbpf_test_run_opts ro = { .sz = sizeof(ro) };
	static uint8_t out[XBPF_FRAME_MAX_DATA + 512];
	struct xbpf_vm *vm;

	if (type == XBPF_PROG_TRACEPOINT)
		return; /* no test_run context for tracepoints */
	vm = xbpf_vm__new(prog, &vo);
	if (!vm)
		return;
	{
		static uint8_t buf[XBPF_FRAME_MAX_DATA];

		if (pkt_len > sizeof(buf))
			pkt_len = sizeof(buf);
		memset(buf, 0, sizeof(buf));
		if (pkt_len)
			memcpy(buf, pkt, pkt_len);
		ro.data_in = buf;
		ro.data_size_in = pkt_len < 14 ? 14 : (uint32_t)pkt_len;
		ro.data_out = out;
		ro.data_size_out = sizeof(out);
		ro.repeat = 1;
		xbpf_vm__test_run(vm, &ro);
	}
	xbpf_vm__free(vm);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char log[1 << 16];
	struct xbpf_insn insns[MAX_INSNS];
	struct xbpf_verify_opts opts = { .sz = sizeof(opts) };
	struct xbpf_verify_info info;
	struct xbpf_object *obj;
	struct xbpf_prog *prog;
	enum xbpf_prog_type type;
	size_t pkt_len, cnt, body;
	const uint8_t *pkt;

	xbpf_set_print(quiet);
	if (size < 4 + XBPF_INSN_SIZE)
		return 0;
	type = types[data[0] & 3];
	opts.log_level = (data[0] >> 2) % 3;
	opts.log_size = data[1] ? (size_t)data[1] * 64 : 0;
	opts.log_buf = opts.log_size ? log : NULL;
	pkt_len = ((size_t)data[2] | (size_t)data[3] << 8) % 1500;
	body = size - 4;
	if (pkt_len > body)
		pkt_len = body;
	cnt = (body - pkt_len) / XBPF_INSN_SIZE;
	if (!cnt)
		return 0;
	if (cnt > MAX_INSNS)
		cnt = MAX_INSNS;
	memcpy(insns, data + 4, cnt * XBPF_INSN_SIZE);
	pkt = data + 4 + cnt * XBPF_INSN_SIZE;
	pkt_len = size - 4 - cnt * XBPF_INSN_SIZE;

	obj = xbpf_object__open_raw(insns, cnt, type, maps, 2, NULL);
	if (!obj)
		return 0;
	prog = xbpf_object__next_prog(obj, NULL);
	if (prog && !xbpf_verify(prog, &opts, &info)) {
		if (!info.accepted)
			abort(); /* 0 must mean accepted */
		run_accepted(prog, type, pkt, pkt_len);
	}
	if (opts.log_buf && strlen(log) >= opts.log_size)
		abort(); /* the log overflowed its buffer */
	xbpf_object__close(obj);
	return 0;
}
