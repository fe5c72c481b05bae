/* SPDX-License-Identifier: MIT */
/*
 * test_jit_vmfuzz.c - the JIT as the product runs it: random XDP programs
 * (progen) opened as raw objects with two array maps, verified by our
 * verifier, run through xbpf_vm (runtime core maps, helpers and contexts)
 * by the interpreter and the JIT, and with --kernel also loaded into the
 * kernel; return value, output packet and both maps must agree.
 *
 * usage: test-jit-vmfuzz [--kernel] [N] [first-seed]   (default 100 programs)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testbed.h"
#include "progen.h"

enum { E_INTERP, E_JIT, E_KERNEL, E_CNT };
static const enum testbed_engine_kind kinds[E_CNT] = { TESTBED_ENGINE_INTERP, TESTBED_ENGINE_JIT, TESTBED_ENGINE_KERNEL };

static const struct xbpf_map_spec maps[2] = {
	{ .name = "map0", .type = XBPF_MAP_ARRAY, .key_size = 4, .value_size = PROGEN_DATA_VALUE,
	  .max_entries = PROGEN_DATA_ENTRIES },
	{ .name = "map1", .type = XBPF_MAP_ARRAY, .key_size = 4, .value_size = PROGEN_RESULT_VALUE,
	  .max_entries = 1 },
};

struct outcome {
	uint32_t retval;
	uint8_t pkt[256];
	uint32_t pkt_len;
	uint8_t data_vals[PROGEN_DATA_ENTRIES][PROGEN_DATA_VALUE];
	uint8_t result[PROGEN_RESULT_VALUE];
};

static int verifier_rejects, jit_fallbacks, kernel_rejects, kernel_log_full;
static uint64_t first_seed;
static bool kernel_loaded;

static int run_engine(struct testbed_engine *e, const uint8_t *pkt, uint32_t len,
		      const uint8_t data_vals[PROGEN_DATA_ENTRIES][PROGEN_DATA_VALUE], struct outcome *out)
{
	static const uint8_t zero[PROGEN_RESULT_VALUE];
	uint32_t key;
	int err;

	for (key = 0; key < PROGEN_DATA_ENTRIES; key++)
		if ((err = testbed_engine__map_update(e, "map0", &key, data_vals[key])))
			return err;
	key = 0;
	if ((err = testbed_engine__map_update(e, "map1", &key, zero)))
		return err;
	{
		XBPF_OPTS(xbpf_test_run_opts, opts, .data_in = pkt, .data_size_in = len, .data_out = out->pkt,
			  .data_size_out = sizeof(out->pkt), .repeat = 1);

		if ((err = testbed_engine__test_run(e, &opts)))
			return err;
		out->retval = opts.retval;
		out->pkt_len = opts.data_size_out;
	}
	for (key = 0; key < PROGEN_DATA_ENTRIES; key++)
		if ((err = testbed_engine__map_lookup(e, "map0", &key, out->data_vals[key])))
			return err;
	key = 0;
	return testbed_engine__map_lookup(e, "map1", &key, out->result);
}

static bool same(uint64_t seed, const char *a_name, const struct outcome *a, const char *b_name,
		 const struct outcome *b)
{
	const char *what = NULL;

	if (a->retval != b->retval)
		what = "return value";
	else if (a->pkt_len != b->pkt_len || memcmp(a->pkt, b->pkt, a->pkt_len))
		what = "output packet";
	else if (memcmp(a->data_vals, b->data_vals, sizeof(a->data_vals)))
		what = "data map";
	else if (memcmp(a->result, b->result, sizeof(a->result)))
		what = "registers/stack (result map)";
	if (what)
		fprintf(stderr, "seed %llu: %s differs between %s and %s\n", (unsigned long long)seed, what, a_name,
			b_name);
	return !what;
}

static int one(const char *dir, uint64_t seed, bool kernel)
{
	struct progen_opts o = {
		.mode = PROGEN_XDP,
		.seed = seed,
		.max_funcs = 1 + (int)(seed % 6),
		.body_blocks = 12 + (int)(seed % 5) * 6,
		.long_padding = seed % 4 == 0,
	};
	static struct outcome out[E_CNT];
	uint8_t data_vals[PROGEN_DATA_ENTRIES][PROGEN_DATA_VALUE], pkt[128];
	struct testbed_engine *eng[E_CNT] = { 0 };
	char path[4096];
	struct tprog p;
	uint32_t len;
	bool skip_verify = false;
	FILE *f;
	int err = 0;

	progen_generate(&p, &o);
	snprintf(path, sizeof(path), "%s/prog-%llu.bin", dir, (unsigned long long)seed);
	f = fopen(path, "wb");
	if (!f || fwrite(p.insns, sizeof(*p.insns), p.cnt, f) != p.cnt) {
		fprintf(stderr, "cannot write %s\n", path);
		if (f)
			fclose(f);
		tprog_free(&p);
		return -EIO;
	}
	fclose(f);
	tprog_free(&p);

	t_srand(seed * 104729 + 7);
	len = 64 + (uint32_t)(t_rand() % 65);
	for (uint32_t i = 0; i < len; i++)
		pkt[i] = (uint8_t)t_rand();
	for (int k = 0; k < PROGEN_DATA_ENTRIES; k++)
		for (int i = 0; i < PROGEN_DATA_VALUE; i++)
			data_vals[k][i] = (uint8_t)t_rand();

	for (int e = 0; e < E_CNT; e++) {
		struct testbed_prog_src src = { .path = path, .raw_type = XBPF_PROG_XDP, .maps = maps, .map_cnt = 2 };
		struct testbed_engine_opts eo = { .skip_verify = skip_verify };

		if (e == E_KERNEL && !kernel)
			continue;
		err = testbed_engine__open(kinds[e], &src, &eo, &eng[e]);
		if (e == E_INTERP && (err == -EACCES || err == -EINVAL)) {
			/* our verifier refused what the kernel takes: still compare the engines */
			if (verifier_rejects++ == 0)
				fprintf(stderr, "note: our verifier rejects seed %llu (%s); comparing unverified\n",
					(unsigned long long)seed, strerror(-err));
			skip_verify = eo.skip_verify = true;
			err = testbed_engine__open(kinds[e], &src, &eo, &eng[e]);
		}
		if (e == E_KERNEL && (err == -EPERM || err == -EACCES) && seed == first_seed && !kernel_loaded) {
			printf("SKIP: the kernel refuses to load programs here (%s): needs root / CAP_BPF\n",
			       strerror(-err));
			for (int k = 0; k < e; k++)
				testbed_engine__close(eng[k]);
			unlink(path);
			rmdir(dir);
			exit(77);
		}
		if (e == E_KERNEL && !err)
			kernel_loaded = true;
		if (e == E_KERNEL && err == -ENOSPC) {
			/* testbed/kernel.c loads with a bounded verifier log that overflowed */
			kernel_log_full++;
			eng[e] = NULL;
			err = 0;
			continue;
		}
		if (e == E_KERNEL && err) {
			if (kernel_rejects == 0) {
				const char *log = testbed_kobj_last_log();
				size_t l = strlen(log);

				fprintf(stderr, "note: the kernel refuses seed %llu (%s):\n%s\n", (unsigned long long)seed,
					strerror(-err), log + (l > 1200 ? l - 1200 : 0));
			}
			kernel_rejects++;
			eng[e] = NULL;
			err = 0;
			continue;
		}
		if (err) {
			fprintf(stderr, "seed %llu: %s engine: %s\n", (unsigned long long)seed,
				testbed_engine_kind_name(kinds[e]), strerror(-err));
			goto out;
		}
	}
	if (xbpf_vm__engine(testbed_engine__vm(eng[E_JIT])) != XBPF_ENGINE_JIT) {
		fprintf(stderr, "seed %llu: the JIT fell back to the interpreter\n", (unsigned long long)seed);
		jit_fallbacks++;
		err = -ENOTSUP;
		goto out;
	}
	for (int e = 0; e < E_CNT; e++) {
		if (!eng[e])
			continue;
		memset(&out[e], 0, sizeof(out[e]));
		err = run_engine(eng[e], pkt, len, data_vals, &out[e]);
		if (err) {
			fprintf(stderr, "seed %llu: %s run: %s\n", (unsigned long long)seed,
				testbed_engine_kind_name(kinds[e]), strerror(-err));
			goto out;
		}
	}
	if (!same(seed, "jit", &out[E_JIT], "interp", &out[E_INTERP]))
		err = -EDOM;
	if (eng[E_KERNEL] && !same(seed, "jit", &out[E_JIT], "kernel", &out[E_KERNEL]))
		err = -EDOM;
out:
	for (int e = 0; e < E_CNT; e++)
		testbed_engine__close(eng[e]);
	if (!err)
		unlink(path); /* failing programs stay for `xbpf disasm` */
	return err;
}

int main(int argc, char **argv)
{
	bool kernel = argc > 1 && !strcmp(argv[1], "--kernel");
	int argi = kernel ? 2 : 1;
	long n = argc > argi ? strtol(argv[argi], NULL, 0) : 100;
	uint64_t first = argc > argi + 1 ? strtoull(argv[argi + 1], NULL, 0) : 1;
	char dir[] = "/tmp/xlbt-j4-vm-XXXXXX";
	int failed = 0;

	if (!__xbpf_jit_host_arch) {
		printf("SKIP: no JIT back end for this host architecture\n");
		return 77;
	}
	if (kernel && !testbed_kernel_available()) {
		printf("SKIP: no kernel engine in this build\n");
		return 77;
	}
	first_seed = first;
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	for (long i = 0; i < n; i++)
		if (one(dir, first + (uint64_t)i, kernel))
			failed++;
	printf("%ld programs through xbpf_vm: %d failed, %d unverified (our verifier refused), %d JIT fallbacks%s",
	       n, failed, verifier_rejects, jit_fallbacks, kernel ? "" : "\n");
	if (kernel)
		printf(", %d refused by the kernel, %d not loaded (kernel engine's verifier log full)\n",
		       kernel_rejects, kernel_log_full);
	if (!failed)
		rmdir(dir);
	else
		fprintf(stderr, "failing programs kept in %s\n", dir);
	return failed || (kernel && kernel_rejects * 10 > n) ? 1 : 0;
}
