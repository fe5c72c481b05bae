/* SPDX-License-Identifier: MIT */
/*
 * test_spin_locks.c - bpf_spin_lock() at run time (progs/spin_counter.bpf.c):
 * runs of the program give the counters the kernel's BPF_PROG_TEST_RUN
 * gives (natively), on the interpreter and the JIT; threads running it at
 * once lose no update; two processes running it on one shared map (its
 * lock in shared memory) lose none either; the lock reads as zero from the
 * control plane and an update there leaves it alone.
 *
 *   test_spin_locks OBJ
 */
#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_check.h"
#include "xbpf_engine.h"

#ifdef WITH_KERNEL
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#endif

#define PKT_LEN 60
#define RUNS 200
#define THREADS 4
#define THREAD_RUNS 200000

struct counter {
	uint64_t packets;
	uint32_t lock;
	uint32_t bytes;
	uint64_t sum;
};

static unsigned char pkt[PKT_LEN];

static int run(struct xbpf_vm *vm, int repeat)
{
	unsigned char out[PKT_LEN + 256];
	struct xbpf_test_run_opts t = { .sz = sizeof(t), .data_in = pkt, .data_size_in = PKT_LEN,
					.data_out = out, .data_size_out = sizeof(out),
					.repeat = repeat };
	int err = xbpf_vm__test_run(vm, &t);

	return err ? err : t.retval == 2 /* XDP_PASS */ ? 0 : -EPROTO;
}

static int read_counter(struct xbpf_map *map, struct counter *c)
{
	uint32_t zero = 0;

	return xbpf_map__lookup(map, &zero, c);
}

/* RUNS runs on a fresh object: the counter they leave. */
static int xlb_runs(const char *path, enum xbpf_engine_kind kind, struct counter *c)
{
	struct xbpf_object *obj = xbpf_object__open_file(path, NULL);
	XBPF_OPTS(xbpf_vm_opts, o, .engine = kind);
	struct xbpf_vm *vm = obj ? xbpf_vm__new(xbpf_object__find_prog(obj, "count"), &o) : NULL;
	int err = vm ? run(vm, RUNS) : -errno;

	err = err ?: read_counter(xbpf_object__find_map(obj, "counters"), c);
	xbpf_vm__free(vm);
	xbpf_object__close(obj);
	return err;
}

#ifdef WITH_KERNEL
static int kernel_runs(const char *path, struct counter *c)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	unsigned char out[PKT_LEN + 256];
	uint32_t zero = 0;
	int err = -1;
	LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = pkt, .data_size_in = PKT_LEN, .data_out = out,
		    .data_size_out = sizeof(out), .repeat = RUNS);

	if (!obj || bpf_object__load(obj))
		goto out;
	if (bpf_prog_test_run_opts(bpf_program__fd(bpf_object__find_program_by_name(obj, "count")), &t))
		goto out;
	err = bpf_map_lookup_elem(bpf_object__find_map_fd_by_name(obj, "counters"), &zero, c);
out:
	bpf_object__close(obj);
	return err;
}
#endif

static void *thread_main(void *vm)
{
	return (void *)(intptr_t)run(vm, THREAD_RUNS);
}

/* Threads at once on one vm and map: every update counted. */
static void check_threads(const char *path, enum xbpf_engine_kind kind)
{
	struct xbpf_object *obj = xbpf_object__open_file(path, NULL);
	XBPF_OPTS(xbpf_vm_opts, o, .engine = kind);
	struct xbpf_vm *vm = obj ? xbpf_vm__new(xbpf_object__find_prog(obj, "count"), &o) : NULL;
	pthread_t th[THREADS];
	struct counter c = { 0 };

	CHECK(vm, "load: %s", strerror(errno));
	if (!vm)
		goto out;
	for (int i = 0; i < THREADS; i++)
		CHECK(!pthread_create(&th[i], NULL, thread_main, vm), "thread %d", i);
	for (int i = 0; i < THREADS; i++) {
		void *ret;

		pthread_join(th[i], &ret);
		CHECK(!ret, "thread %d runs: %d", i, (int)(intptr_t)ret);
	}
	CHECK(!read_counter(xbpf_object__find_map(obj, "counters"), &c), "lookup");
	CHECK(c.packets == THREADS * THREAD_RUNS && c.bytes == THREADS * THREAD_RUNS * PKT_LEN,
	      "%s, %d threads: packets %llu bytes %u, want %d and %d", xbpf_engine_name(kind), THREADS,
	      (unsigned long long)c.packets, c.bytes, THREADS * THREAD_RUNS,
	      THREADS * THREAD_RUNS * PKT_LEN);
	CHECK(c.lock == 0, "the lock reads as zero");
out:
	xbpf_vm__free(vm);
	xbpf_object__close(obj);
}

/* Two processes on one shared map (pin_root_path): the lock holds across them. */
static void check_processes(const char *path)
{
	char dir[] = "/tmp/xlb-spin-XXXXXX", file[64];
	XBPF_OPTS(xbpf_object_open_opts, oo, .pin_root_path = dir);
	struct xbpf_object *obj;
	struct xbpf_vm *vm;
	struct counter c = { 0 };
	int status = -1, ready[2] = { -1, -1 };
	pid_t child;
	char go;

	CHECK(mkdtemp(dir), "mkdtemp");
	obj = xbpf_object__open_file(path, &oo);
	vm = obj ? xbpf_vm__new(xbpf_object__find_prog(obj, "count"), NULL) : NULL;
	CHECK(vm, "shared load: %s", strerror(errno));
	if (!vm)
		goto out;
	CHECK(!pipe(ready), "pipe");
	child = fork();
	if (child == 0) {
		/* Its own open: the map file re-attached, the same lock word. */
		struct xbpf_object *o2 = xbpf_object__open_file(path, &oo);
		struct xbpf_vm *v2 = o2 ? xbpf_vm__new(xbpf_object__find_prog(o2, "count"), NULL) : NULL;
		bool ok = v2 && xbpf_map__reattached(xbpf_object__find_map(o2, "counters"));

		/* Both start together, so their runs overlap. */
		ok = write(ready[1], "g", 1) == 1 && ok;
		_exit(ok && !run(v2, THREAD_RUNS) ? 0 : 1);
	}
	CHECK(read(ready[0], &go, 1) == 1, "child ready");
	CHECK(!run(vm, THREAD_RUNS), "parent runs");
	CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status) && !WEXITSTATUS(status),
	      "child runs (status %d)", status);
	CHECK(!read_counter(xbpf_object__find_map(obj, "counters"), &c), "lookup");
	CHECK(c.packets == 2 * THREAD_RUNS, "two processes: packets %llu, want %d",
	      (unsigned long long)c.packets, 2 * THREAD_RUNS);
	{
		/* A control-plane update writes the data and leaves the lock word alone. */
		struct counter w = { .packets = 7, .lock = 0xdead, .bytes = 9 }, r;
		uint32_t zero = 0;
		const uint32_t *lock = (const uint32_t *)((const char *)xbpf_map__lookup_elem(
						      xbpf_object__find_map(obj, "counters"), &zero) + 8);

		CHECK(!xbpf_map__update(xbpf_object__find_map(obj, "counters"), &zero, &w, 0), "update");
		CHECK(*lock == 0, "update left the lock word (%#x)", *lock);
		CHECK(!read_counter(xbpf_object__find_map(obj, "counters"), &r) && r.packets == 7 &&
			      r.bytes == 9 && r.lock == 0,
		      "read back");
	}
out:
	if (ready[0] >= 0) {
		close(ready[0]);
		close(ready[1]);
	}
	xbpf_vm__free(vm);
	xbpf_object__close(obj);
	snprintf(file, sizeof(file), "%s/counters", dir);
	unlink(file);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	struct counter interp = { 0 }, jit = { 0 };

	if (argc != 2) {
		fprintf(stderr, "usage: test_spin_locks OBJ\n");
		return 2;
	}
	for (int i = 0; i < PKT_LEN; i++)
		pkt[i] = (unsigned char)(i * 13 + 5);
	CHECK(!xlb_runs(argv[1], XBPF_ENGINE_INTERP, &interp), "interpreter runs");
	CHECK(!xlb_runs(argv[1], XBPF_ENGINE_JIT, &jit), "JIT runs");
	CHECK(!memcmp(&interp, &jit, sizeof(interp)), "interpreter and JIT counters differ");
#ifdef WITH_KERNEL
	{
		struct counter kern = { 0 };

		if (kernel_runs(argv[1], &kern)) {
			printf("note: the kernel cannot run BPF here: no kernel comparison\n");
		} else {
			CHECK(!memcmp(&kern, &interp, sizeof(kern)),
			      "kernel: packets %llu bytes %u sum %llu lock %u; xlb: %llu %u %llu %u",
			      (unsigned long long)kern.packets, kern.bytes, (unsigned long long)kern.sum,
			      kern.lock, (unsigned long long)interp.packets, interp.bytes,
			      (unsigned long long)interp.sum, interp.lock);
			printf("compared with the kernel's BPF_PROG_TEST_RUN\n");
		}
	}
#endif
	printf("%d runs: packets %llu, bytes %u, sum %llu\n", RUNS, (unsigned long long)interp.packets,
	       interp.bytes, (unsigned long long)interp.sum);
	check_threads(argv[1], XBPF_ENGINE_INTERP);
	check_threads(argv[1], XBPF_ENGINE_JIT);
	check_processes(argv[1]);
	TEST_DONE("spin locks");
}
