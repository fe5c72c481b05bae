/* SPDX-License-Identifier: MIT */
/*
 * test_helper_runs.c - programs whose helpers keep state between calls (ring
 * buffer records reserved, written, submitted or discarded) run on the
 * interpreter and the JIT and, natively, under the kernel's
 * BPF_PROG_TEST_RUN.  The return value, the output packet and every ring
 * buffer record, in order, must be the same everywhere; the records are
 * also checked against what the program was asked to write (the packet's
 * bytes).  Several runs in a row make the ring wrap around its end.
 *
 * Then the programs of an object (progs/callback_runs.bpf.c: callbacks of
 * bpf_loop and bpf_for_each_map_elem, some writing records or map values)
 * run the same way, each on freshly filled maps; the maps' values after the
 * run are compared too.
 *
 * usage: test-helper-runs [-v] [OBJECT]
 */
#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef WITH_KERNEL
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#endif

#include "insn.h"
#include "test_check.h"
#include "xbpf_engine.h"

enum { R0, R1, R2, R3, R4, R5, R6, R7, R8, R9, FP };

#define RING_SIZE 4096
#define MAX_RECORDS 512
#define PKT_LEN 64
/* Largest record kept for comparison (bigger ones would be dropped by add_record). */
#define REC_MAX 2048

struct records {
	int cnt;
	uint32_t len[MAX_RECORDS];
	uint8_t data[MAX_RECORDS][REC_MAX];
};

struct outcome {
	uint32_t retval;
	uint8_t pkt[PKT_LEN];
	struct records rec;
};

struct run_case {
	const char *name;
	struct xbpf_insn insns[128];
	int repeat; /* test runs in a row (records consumed after each) */
	/* Record i of every run holds packet bytes [pkt_off[i], + len) (0 len: not checked). */
	uint32_t rec_pkt_len[4];
};

static bool verbose;

/* r6 = ctx, r7 = data, r8 = data_end with 32 bytes checked (8 insns; the unchecked path returns 0). */
#define PKT_32 MOV64X(R6, R1), LDX(W, R7, R6, XDP_MD(data)), LDX(W, R8, R6, XDP_MD(data_end)), \
	MOV64X(R2, R7), A64K(ADD, R2, 32), JX(JLE, R2, R8, 2), MOV64K(R0, 0), EXIT()
/* r0 = bpf_ringbuf_reserve(ringbuf, SIZE, 0) */
#define RESERVE(SIZE) LD_MAP(R1, 0), MOV64K(R2, SIZE), MOV64K(R3, 0), \
	CALL_HELPER(BPF_FUNC_ringbuf_reserve)
/* Copy 8 bytes from R7+OFF to DST+OFF. */
#define COPY8(DST, OFF) LDX(DW, R1, R7, OFF), STX(DW, DST, R1, OFF)

/*
 * Reserve a 2000-byte record, write all of it (u64 at offset i = i + R8),
 * submit it and count it in R7; skipped when the reservation fails.
 */
#define RECORD_2000 RESERVE(2000), JK(JEQ, R0, 0, 13), MOV64X(R9, R0), MOV64K(R6, 0), \
	MOV64X(R1, R9), A64X(ADD, R1, R6), MOV64X(R2, R6), A64X(ADD, R2, R8), STX(DW, R1, R2, 0), \
	A64K(ADD, R6, 8), JK(JLT, R6, 2000, -7), MOV64X(R1, R9), MOV64K(R2, 0), \
	CALL_HELPER(BPF_FUNC_ringbuf_submit), A64K(ADD, R7, 1)

static const struct run_case cases[] = {
	{ "reserve 16, copy, submit", {
		PKT_32, RESERVE(16), JK(JNE, R0, 0, 2), MOV64K(R0, 1), EXIT(), MOV64X(R9, R0),
		COPY8(R9, 0), COPY8(R9, 8), MOV64X(R1, R9), MOV64K(R2, 0),
		CALL_HELPER(BPF_FUNC_ringbuf_submit), MOV64K(R0, 2), EXIT() }, 1, { 16 } },
	{ "reserve two, discard the first, submit the second", {
		PKT_32, RESERVE(8), JK(JNE, R0, 0, 2), MOV64K(R0, 1), EXIT(), MOV64X(R9, R0),
		COPY8(R9, 0), RESERVE(24), JK(JNE, R0, 0, 5), MOV64X(R1, R9), MOV64K(R2, 0),
		CALL_HELPER(BPF_FUNC_ringbuf_discard), MOV64K(R0, 3), EXIT(), MOV64X(R6, R0),
		COPY8(R6, 0), COPY8(R6, 8), COPY8(R6, 16), MOV64X(R1, R9), MOV64K(R2, 0),
		CALL_HELPER(BPF_FUNC_ringbuf_discard), MOV64X(R1, R6), MOV64K(R2, 0),
		CALL_HELPER(BPF_FUNC_ringbuf_submit), MOV64K(R0, 2), EXIT() }, 1, { 24 } },
	{ "ringbuf_output, then a reserved record; query what is queued", {
		PKT_32, LDX(DW, R1, R7, 0), STX(DW, FP, R1, -16), LDX(DW, R1, R7, 8), STX(DW, FP, R1, -8), LD_MAP(R1, 0),
		MOV64X(R2, FP), A64K(ADD, R2, -16), MOV64K(R3, 12), MOV64K(R4, 0),
		CALL_HELPER(BPF_FUNC_ringbuf_output), MOV64X(R9, R0), RESERVE(20),
		JK(JNE, R0, 0, 2), MOV64K(R0, 1), EXIT(), MOV64X(R6, R0), COPY8(R6, 0), COPY8(R6, 8),
		LDX(W, R1, R7, 16), STX(W, R6, R1, 16), MOV64X(R1, R6), MOV64K(R2, BPF_RB_NO_WAKEUP),
		CALL_HELPER(BPF_FUNC_ringbuf_submit), LD_MAP(R1, 0), MOV64K(R2, BPF_RB_AVAIL_DATA),
		CALL_HELPER(BPF_FUNC_ringbuf_query), A64X(ADD, R0, R9), EXIT() }, 1, { 12, 20 } },
	{ "reserve until the ring is full (submitting each)", {
		MOV64K(R6, 0), RESERVE(100), JK(JEQ, R0, 0, 6), ST(DW, R0, 0, 0x55), MOV64X(R1, R0),
		MOV64K(R2, 0), CALL_HELPER(BPF_FUNC_ringbuf_submit), A64K(ADD, R6, 1),
		JK(JLT, R6, 50, -12), MOV64X(R0, R6), EXIT() }, 1, { 0 } },
	{ "ring size and positions", {
		LD_MAP(R1, 0), MOV64K(R2, BPF_RB_RING_SIZE), CALL_HELPER(BPF_FUNC_ringbuf_query),
		MOV64X(R6, R0), LD_MAP(R1, 0), MOV64K(R2, 99), CALL_HELPER(BPF_FUNC_ringbuf_query),
		A64X(ADD, R0, R6), EXIT() }, 1, { 0 } },
	{ "a reserve with flags is NULL", {
		LD_MAP(R1, 0), MOV64K(R2, 8), MOV64K(R3, 1), CALL_HELPER(BPF_FUNC_ringbuf_reserve),
		JK(JEQ, R0, 0, 4), MOV64X(R1, R0), MOV64K(R2, 0), CALL_HELPER(BPF_FUNC_ringbuf_submit),
		MOV64K(R0, 5), A64K(ADD, R0, 1), EXIT() }, 1, { 0 } },
	{ "records of 16 bytes (24 in the ring) across its end, 200 runs", {
		PKT_32, RESERVE(16), JK(JNE, R0, 0, 2), MOV64K(R0, 1), EXIT(), MOV64X(R9, R0),
		COPY8(R9, 0), COPY8(R9, 8), MOV64X(R1, R9), MOV64K(R2, 0),
		CALL_HELPER(BPF_FUNC_ringbuf_submit), MOV64K(R0, 2), EXIT() }, 200, { 16 } },
	/*
	 * Two records of 2008 ring bytes per run in a 4096-byte ring.  The
	 * second run's first record crosses the ring's end and its second
	 * then brings the producer 4016 bytes ahead of the consumer: the
	 * kernel takes both (it maps the ring twice, so a record is one piece
	 * across the end), and so must xlb (no padding record to skip the end).
	 */
	{ "two 2000-byte records per run, the ring nearly full, one across its end", {
		LDX(W, R2, R1, XDP_MD(data)), LDX(W, R3, R1, XDP_MD(data_end)), MOV64X(R4, R2),
		A64K(ADD, R4, 8), JX(JLE, R4, R3, 2), MOV64K(R0, 0), EXIT(), LDX(DW, R8, R2, 0),
		MOV64K(R7, 0), RECORD_2000, RECORD_2000, MOV64X(R0, R7), EXIT() }, 3, { 0 } },
};

static size_t insn_cnt(const struct run_case *c)
{
	size_t n = 0;

	for (size_t i = 0; i < sizeof(c->insns) / sizeof(c->insns[0]); i++) {
		const struct xbpf_insn *in = &c->insns[i];

		if (in->code || in->dst_reg || in->src_reg || in->off || in->imm)
			n = i + 1;
	}
	return n;
}

static void make_pkt(uint8_t *pkt, int seed)
{
	for (int i = 0; i < PKT_LEN; i++)
		pkt[i] = (uint8_t)(i * 37 + seed * 11 + 1);
}

static void add_record(struct records *r, const void *data, uint32_t len)
{
	if (r->cnt >= MAX_RECORDS || len > sizeof(r->data[0]))
		return;
	r->len[r->cnt] = len;
	memcpy(r->data[r->cnt], data, len);
	r->cnt++;
}

/* ---- xlb's engines ------------------------------------------------------- */

static int run_xlb(const struct run_case *c, enum xbpf_engine_kind kind, struct outcome *out)
{
	struct xbpf_map_spec ring = { .name = "ring", .type = XBPF_MAP_RINGBUF, .max_entries = RING_SIZE };
	struct xbpf_object *obj = xbpf_object__open_raw(c->insns, insn_cnt(c), XBPF_PROG_XDP, &ring, 1, NULL);
	struct xbpf_prog *prog = obj ? xbpf_object__next_prog(obj, NULL) : NULL;
	struct xbpf_vm_opts vo = { .sz = sizeof(vo), .engine = kind };
	static char log[1 << 16];
	struct xbpf_vm *vm;
	static uint8_t buf[REC_MAX];
	int n, err = 0;

	vo.log_buf = log;
	vo.log_size = sizeof(log);
	vm = prog ? xbpf_vm__new(prog, &vo) : NULL;
	if (!vm) {
		CHECK(0, "%s: xlb (%s) refused: %s\n%s", c->name, xbpf_engine_name(kind), strerror(errno),
		      log);
		xbpf_object__close(obj);
		return -1;
	}
	if (kind == XBPF_ENGINE_JIT)
		CHECK(xbpf_vm__engine(vm) == XBPF_ENGINE_JIT, "%s: the JIT fell back to the interpreter",
		      c->name);
	memset(out, 0, sizeof(*out));
	for (int r = 0; r < c->repeat && !err; r++) {
		uint8_t pkt[PKT_LEN];
		struct xbpf_test_run_opts t = { .sz = sizeof(t), .data_in = pkt, .data_size_in = PKT_LEN,
						.data_out = out->pkt, .data_size_out = PKT_LEN };

		make_pkt(pkt, r);
		err = xbpf_vm__test_run(vm, &t);
		out->retval = t.retval;
		while ((n = xbpf_map__ringbuf_consume(xbpf_object__map(obj, 0), buf, sizeof(buf))) >= 0)
			add_record(&out->rec, buf, (uint32_t)n);
		CHECK(n == -EAGAIN, "%s: consume: %d", c->name, n);
	}
	CHECK(!err, "%s: xlb (%s) test run: %s", c->name, xbpf_engine_name(kind), strerror(-err));
	xbpf_vm__free(vm);
	xbpf_object__close(obj);
	return err ? -1 : 0;
}

/* ---- the kernel ------------------------------------------------------------ */

#ifdef WITH_KERNEL
static int kernel_record(void *ctx, void *data, size_t len)
{
	add_record(ctx, data, (uint32_t)len);
	return 0;
}

/* 0 ran, 1 the kernel refuses BPF here (skipped), -1 failed. */
static int run_kernel(const struct run_case *c, struct outcome *out)
{
	size_t n = insn_cnt(c);
	struct bpf_insn insns[128];
	static char log[1 << 16];
	LIBBPF_OPTS(bpf_prog_load_opts, lo, .log_buf = log, .log_size = sizeof(log), .log_level = 1);
	struct ring_buffer *rb = NULL;
	int map_fd, prog_fd = -1, err = 0;

	map_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, NULL, 0, 0, RING_SIZE, NULL);
	if (map_fd < 0)
		return 1;
	memcpy(insns, c->insns, n * sizeof(insns[0]));
	for (size_t i = 0; i < n; i++)
		if (insns[i].code == (BPF_LD | BPF_DW | BPF_IMM) && insns[i].src_reg == BPF_PSEUDO_MAP_FD)
			insns[i].imm = map_fd;
	log[0] = '\0';
	/* Without a log first: a program with a loop logs more than the buffer holds (ENOSPC). */
	prog_fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "xlbt_rb", "GPL", insns, n, NULL);
	if (prog_fd < 0) {
		int load_err = errno;

		bpf_prog_load(BPF_PROG_TYPE_XDP, "xlbt_rb", "GPL", insns, n, &lo);
		CHECK(0, "%s: the kernel refused: %s\n%s", c->name, strerror(load_err), log);
		close(map_fd);
		return -1;
	}
	memset(out, 0, sizeof(*out));
	rb = ring_buffer__new(map_fd, kernel_record, &out->rec, NULL);
	CHECK(rb, "%s: ring_buffer__new: %s", c->name, strerror(errno));
	for (int r = 0; rb && r < c->repeat && !err; r++) {
		uint8_t pkt[PKT_LEN];
		LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = pkt, .data_size_in = PKT_LEN,
			    .data_out = out->pkt, .data_size_out = PKT_LEN);

		make_pkt(pkt, r);
		err = bpf_prog_test_run_opts(prog_fd, &t);
		out->retval = t.retval;
		CHECK(ring_buffer__consume(rb) >= 0, "%s: ring_buffer__consume", c->name);
	}
	CHECK(!err, "%s: kernel test run: %s", c->name, strerror(errno));
	ring_buffer__free(rb);
	close(prog_fd);
	close(map_fd);
	return err || !rb ? -1 : 0;
}
#endif

/* ---- comparing ------------------------------------------------------------- */

static void compare(const struct run_case *c, const char *what, const struct outcome *ref,
		    const struct outcome *o)
{
	CHECK(o->retval == ref->retval, "%s: %s returned %u, the reference %u", c->name, what, o->retval,
	      ref->retval);
	CHECK(!memcmp(o->pkt, ref->pkt, PKT_LEN), "%s: %s output packet differs", c->name, what);
	CHECK(o->rec.cnt == ref->rec.cnt, "%s: %s has %d records, the reference %d", c->name, what,
	      o->rec.cnt, ref->rec.cnt);
	for (int i = 0; i < o->rec.cnt && i < ref->rec.cnt; i++)
		CHECK(o->rec.len[i] == ref->rec.len[i] &&
		      !memcmp(o->rec.data[i], ref->rec.data[i], o->rec.len[i]),
		      "%s: %s record %d differs (%u bytes, the reference %u)", c->name, what, i,
		      o->rec.len[i], ref->rec.len[i]);
}

/* Records holding packet bytes hold the bytes of the run's packet. */
static void check_records(const struct run_case *c, const struct outcome *o)
{
	int per_run = 0;

	while (per_run < 4 && c->rec_pkt_len[per_run])
		per_run++;
	if (!per_run)
		return;
	CHECK(o->rec.cnt == per_run * c->repeat, "%s: %d records, %d asked for", c->name, o->rec.cnt,
	      per_run * c->repeat);
	for (int i = 0; i < o->rec.cnt; i++) {
		uint8_t pkt[PKT_LEN];
		uint32_t want = c->rec_pkt_len[i % per_run];

		make_pkt(pkt, i / per_run);
		CHECK(o->rec.len[i] == want && !memcmp(o->rec.data[i], pkt, want),
		      "%s: record %d is not the packet's first %u bytes", c->name, i, want);
	}
}

/* ---- an object's programs --------------------------------------------------- */

#define OBJ_VALUES 8
#define OBJ_TABLE 5

struct obj_outcome {
	struct outcome o;
	uint64_t values[OBJ_VALUES];
};

static void table_entry(int k, uint32_t *key, uint64_t *value)
{
	*key = (uint32_t)k * 3;
	*value = (uint64_t)k + 100;
}

static int fill_xlb(struct xbpf_object *obj)
{
	int err = 0;

	for (uint32_t k = 0; k < OBJ_VALUES; k++) {
		uint64_t v = 7 * k + 1;

		err = err ?: xbpf_map__update(xbpf_object__find_map(obj, "values"), &k, &v, 0);
	}
	for (int k = 0; k < OBJ_TABLE; k++) {
		uint32_t key;
		uint64_t v;

		table_entry(k, &key, &v);
		err = err ?: xbpf_map__update(xbpf_object__find_map(obj, "table"), &key, &v, 0);
	}
	return err;
}

static int run_obj_xlb(const char *path, const char *name, enum xbpf_engine_kind kind,
		       struct obj_outcome *out)
{
	struct xbpf_object *obj = xbpf_object__open_file(path, NULL);
	struct xbpf_prog *prog = obj ? xbpf_object__find_prog(obj, name) : NULL;
	struct xbpf_vm_opts vo = { .sz = sizeof(vo), .engine = kind };
	uint8_t pkt[PKT_LEN];
	static uint8_t buf[REC_MAX];
	struct xbpf_test_run_opts t = { .sz = sizeof(t), .data_in = pkt, .data_size_in = PKT_LEN,
					.data_out = out->o.pkt, .data_size_out = PKT_LEN };
	struct xbpf_vm *vm = NULL;
	int err = -1, n;

	memset(out, 0, sizeof(*out));
	make_pkt(pkt, 3);
	if (!prog || fill_xlb(obj) || !(vm = xbpf_vm__new(prog, &vo))) {
		CHECK(0, "%s: xlb (%s) cannot load it: %s", name, xbpf_engine_name(kind), strerror(errno));
		goto out;
	}
	if (kind == XBPF_ENGINE_JIT)
		CHECK(xbpf_vm__engine(vm) == XBPF_ENGINE_JIT, "%s: the JIT fell back", name);
	err = xbpf_vm__test_run(vm, &t);
	CHECK(!err, "%s: xlb (%s) test run: %s", name, xbpf_engine_name(kind), strerror(-err));
	out->o.retval = t.retval;
	while ((n = xbpf_map__ringbuf_consume(xbpf_object__find_map(obj, "ring"), buf, sizeof(buf))) >= 0)
		add_record(&out->o.rec, buf, (uint32_t)n);
	for (uint32_t k = 0; k < OBJ_VALUES; k++)
		xbpf_map__lookup(xbpf_object__find_map(obj, "values"), &k, &out->values[k]);
out:
	xbpf_vm__free(vm);
	xbpf_object__close(obj);
	return err ? -1 : 0;
}

#ifdef WITH_KERNEL
static int run_obj_kernel(const char *path, const char *name, struct obj_outcome *out)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	struct bpf_program *prog;
	struct ring_buffer *rb = NULL;
	uint8_t pkt[PKT_LEN];
	LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = pkt, .data_size_in = PKT_LEN,
		    .data_out = out->o.pkt, .data_size_out = PKT_LEN);
	int err = -1, vfd, tfd;

	memset(out, 0, sizeof(*out));
	make_pkt(pkt, 3);
	if (!obj)
		return 1;
	/* Only the program under test is loaded. */
	bpf_object__for_each_program(prog, obj)
		bpf_program__set_autoload(prog, !strcmp(bpf_program__name(prog), name));
	if (bpf_object__load(obj)) {
		CHECK(0, "%s: the kernel refused it: %s", name, strerror(errno));
		goto out;
	}
	vfd = bpf_map__fd(bpf_object__find_map_by_name(obj, "values"));
	tfd = bpf_map__fd(bpf_object__find_map_by_name(obj, "table"));
	for (uint32_t k = 0; k < OBJ_VALUES; k++) {
		uint64_t v = 7 * k + 1;

		bpf_map_update_elem(vfd, &k, &v, 0);
	}
	for (int k = 0; k < OBJ_TABLE; k++) {
		uint32_t key;
		uint64_t v;

		table_entry(k, &key, &v);
		bpf_map_update_elem(tfd, &key, &v, 0);
	}
	rb = ring_buffer__new(bpf_map__fd(bpf_object__find_map_by_name(obj, "ring")), kernel_record,
			      &out->o.rec, NULL);
	err = bpf_prog_test_run_opts(bpf_program__fd(bpf_object__find_program_by_name(obj, name)), &t);
	CHECK(!err && rb, "%s: kernel test run: %s", name, strerror(errno));
	out->o.retval = t.retval;
	if (rb)
		ring_buffer__consume(rb);
	for (uint32_t k = 0; k < OBJ_VALUES; k++)
		bpf_map_lookup_elem(vfd, &k, &out->values[k]);
out:
	ring_buffer__free(rb);
	bpf_object__close(obj);
	return err ? -1 : 0;
}
#endif

static void compare_obj(const char *name, const char *what, const struct obj_outcome *ref,
			const struct obj_outcome *o)
{
	struct run_case c = { .name = name };

	compare(&c, what, &ref->o, &o->o);
	CHECK(!memcmp(ref->values, o->values, sizeof(o->values)), "%s: %s left other map values",
	      name, what);
}

/* Every program of the object; returns how many ran against the kernel. */
static int run_object(const char *path)
{
	struct xbpf_object *obj = xbpf_object__open_file(path, NULL);
	int kernel_runs = 0, progs = 0;

	CHECK(obj, "%s: %s", path, strerror(errno));
	for (struct xbpf_prog *p = obj ? xbpf_object__next_prog(obj, NULL) : NULL; p;
	     p = xbpf_object__next_prog(obj, p)) {
		const char *name = xbpf_prog__name(p);
		static struct obj_outcome interp, jit;

		progs++;
		if (run_obj_xlb(path, name, XBPF_ENGINE_INTERP, &interp) ||
		    run_obj_xlb(path, name, XBPF_ENGINE_JIT, &jit))
			continue;
		compare_obj(name, "the JIT", &interp, &jit);
#ifdef WITH_KERNEL
		{
			static struct obj_outcome kern;

			if (!run_obj_kernel(path, name, &kern)) {
				compare_obj(name, "the interpreter (vs the kernel)", &kern, &interp);
				kernel_runs++;
			}
		}
#endif
		if (verbose)
			printf("%s: R0 %u, %d records\n", name, interp.o.retval, interp.o.rec.cnt);
	}
	xbpf_object__close(obj);
	printf("%s: %d programs, %d compared with the kernel\n", path, progs, kernel_runs);
	return kernel_runs;
}

int main(int argc, char **argv)
{
	int kernel_runs = 0;

	for (int i = 1; i < argc; i++)
		verbose |= !strcmp(argv[i], "-v");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct run_case *c = &cases[i];
		static struct outcome interp, jit;

		if (run_xlb(c, XBPF_ENGINE_INTERP, &interp) || run_xlb(c, XBPF_ENGINE_JIT, &jit))
			continue;
		compare(c, "the JIT", &interp, &jit);
		check_records(c, &interp);
#ifdef WITH_KERNEL
		{
			static struct outcome kern;
			int k = run_kernel(c, &kern);

			if (k == 0) {
				compare(c, "the interpreter (vs the kernel)", &kern, &interp);
				kernel_runs++;
			}
		}
#endif
		if (verbose)
			printf("%s: R0 %u, %d records\n", c->name, interp.retval, interp.rec.cnt);
	}
	printf("%zu programs, %d compared with the kernel\n", sizeof(cases) / sizeof(cases[0]),
	       kernel_runs);
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "-v"))
			run_object(argv[i]);
	TEST_DONE("helper-runs");
}
