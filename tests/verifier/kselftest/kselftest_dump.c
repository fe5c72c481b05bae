// SPDX-License-Identifier: MIT
/*
 * kselftest_dump.c - the back half of the kernel verifier-selftest extractor.
 *
 * kselftest.py never copies the kernel's tests: at test time it pulls
 * tools/testing/selftests/bpf/test_verifier.c and verifier/*.c out of
 * Debian's linux-source tarball, keeps test_verifier.c up to the end of its
 * tests[] table (the table, its struct and the fill helpers that generate
 * the big programs) and appends `#include "kselftest_dump.c"`.  This file
 * then walks tests[] and writes every case in a plain text form that
 * kselftest_run (xlb's own code, built by meson) reads:
 *
 *   case IDX DESCR
 *   type N flags N attach N result N
 *   errstr TEXT          (tab-separated expectations of the 6.1 suite)
 *   kfunc NAME           (tracing/LSM attach target)
 *   fixup NAME I I ...   (instructions whose imm is a map of that kind)
 *   kfunc_fixup NAME I
 *   func_info OFF:TYPE ...
 *   btf TYPES_HEX STRINGS_HEX
 *   insns N HEX16 HEX16 ...
 *   end
 */
#include <ctype.h>

static void dump_escaped(const char *s)
{
	for (; *s; s++) {
		if (*s == '\n')
			fputs("\\n", stdout);
		else if (*s == '\t')
			fputs("\\t", stdout);
		else if (*s == '\\')
			fputs("\\\\", stdout);
		else
			putchar(*s);
	}
	putchar('\n');
}

static void dump_str(const char *key, const char *s)
{
	if (!s || !*s)
		return;
	printf("%s ", key);
	dump_escaped(s);
}

/* test_verifier's own rule: the program ends at its last non-zero insn. */
static int table_prog_len(const struct bpf_insn *fp)
{
	int len;

	for (len = MAX_INSNS - 1; len > 0; --len)
		if (fp[len].code != 0 || fp[len].imm != 0)
			break;
	return len + 1;
}

static void dump_fixup(const char *name, const int *f)
{
	if (!f[0])
		return;
	printf("fixup %s", name);
	for (int i = 0; i < MAX_FIXUPS && f[i]; i++)
		printf(" %d", f[i]);
	putchar('\n');
}

static void dump_insns(const struct bpf_insn *insns, int n)
{
	printf("insns %d", n);
	for (int i = 0; i < n; i++) {
		const unsigned char *b = (const unsigned char *)&insns[i];

		putchar(' ');
		for (int j = 0; j < 8; j++)
			printf("%02x", b[j]);
	}
	putchar('\n');
}

static void dump_btf(struct bpf_test *t)
{
	int n = 0;

	while (n < MAX_BTF_TYPES && t->btf_types[n] != BTF_END_RAW)
		n++;
	printf("btf ");
	for (int i = 0; i < n; i++)
		printf("%08x", t->btf_types[i]);
	printf(" ");
	for (size_t i = 0; i < sizeof(t->btf_strings); i++)
		printf("%02x", (unsigned char)t->btf_strings[i]);
	putchar('\n');
}

#define FIXUP(name) dump_fixup(#name, t->fixup_##name)

int main(void)
{
	size_t cnt = sizeof(tests) / sizeof(tests[0]);

	for (size_t i = 0; i < cnt; i++) {
		struct bpf_test *t = &tests[i];
		struct bpf_insn *prog = t->insns;
		int len;

		printf("case %zu ", i);
		dump_escaped(t->descr ? t->descr : "?");
		printf("type %d flags %u attach %d result %d\n", t->prog_type, t->flags,
		       t->expected_attach_type, t->result);
		dump_str("errstr", t->errstr);
		dump_str("kfunc", t->kfunc);
		FIXUP(map_hash_8b);
		FIXUP(map_hash_48b);
		FIXUP(map_hash_16b);
		FIXUP(map_array_48b);
		FIXUP(map_sockmap);
		FIXUP(map_sockhash);
		FIXUP(map_xskmap);
		FIXUP(map_stacktrace);
		FIXUP(prog1);
		FIXUP(prog2);
		FIXUP(map_in_map);
		FIXUP(cgroup_storage);
		FIXUP(percpu_cgroup_storage);
		FIXUP(map_spin_lock);
		FIXUP(map_array_ro);
		FIXUP(map_array_wo);
		FIXUP(map_array_small);
		FIXUP(sk_storage_map);
		FIXUP(map_event_output);
		FIXUP(map_reuseport_array);
		FIXUP(map_ringbuf);
		FIXUP(map_timer);
		FIXUP(map_kptr);
		for (int k = 0; k < MAX_FIXUPS && t->fixup_kfunc_btf_id[k].kfunc; k++)
			printf("kfunc_fixup %s %d\n", t->fixup_kfunc_btf_id[k].kfunc,
			       t->fixup_kfunc_btf_id[k].insn_idx);
		if (t->func_info_cnt) {
			printf("func_info");
			for (int k = 0; k < t->func_info_cnt; k++)
				printf(" %u:%u", t->func_info[k].insn_off, t->func_info[k].type_id);
			putchar('\n');
		}
		if (t->btf_types[0])
			dump_btf(t);
		if (t->fill_helper) {
			t->fill_insns = calloc(MAX_TEST_INSNS, sizeof(struct bpf_insn));
			if (!t->fill_insns)
				return 1;
			t->fill_helper(t);
			prog = t->fill_insns;
			len = t->prog_len;
		} else {
			len = table_prog_len(prog);
		}
		dump_insns(prog, len);
		free(t->fill_insns);
		t->fill_insns = NULL;
		printf("end\n");
	}
	return 0;
}
