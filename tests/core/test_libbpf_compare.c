// SPDX-License-Identifier: MIT
/*
 * test_libbpf_compare.c - our loader against libbpf on the same objects
 * (suite 'kernel': libbpf links while loading into the kernel).
 *
 * For every program: same instruction count, same instructions byte for
 * byte (subprograms appended in the same order, call offsets equal), map
 * references naming the same map (libbpf writes fds, we write object map
 * indexes), global data offsets equal.  For every map: same order, name,
 * type, key/value sizes, max_entries and flags.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdbool.h>
#include <unistd.h>

#include "xbpf.h"
#include "testutil.h"

static int silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

static const char *libbpf_map_name_by_fd(struct bpf_object *lobj, int fd)
{
	struct bpf_map *m;

	bpf_object__for_each_map(m, lobj)
		if (bpf_map__fd(m) == fd)
			return bpf_map__name(m);
	return "?";
}

/*
 * libbpf 1.1 names data maps "<object>.<section>" cut at the section's
 * second dot ("calls.rodata" for .rodata.str1.1); we keep the section name.
 */
static bool same_map_name(const char *lname, const char *ours)
{
	const char *dot = strchr(lname, '.'), *second;
	size_t n;

	if (!strcmp(lname, ours))
		return true;
	if (!dot || ours[0] != '.')
		return false;
	second = strchr(ours + 1, '.');
	n = second ? (size_t)(second - ours) : strlen(ours);
	return strlen(dot) == n && !strncmp(dot, ours, n);
}

static int compare_object(const char *path)
{
	struct bpf_object *lobj;
	struct xbpf_object *obj;
	struct bpf_program *lp;
	struct bpf_map *lm;
	size_t idx = 0, i;
	int err, progs = 0;

	lobj = bpf_object__open_file(path, NULL);
	if (!lobj) {
		fprintf(stderr, "%s: libbpf cannot open it\n", path);
		return -1;
	}
	err = bpf_object__load(lobj);
	if (err) {
		bpf_object__close(lobj);
		if (err == -EPERM) {
			printf("SKIP: cannot load BPF objects here\n");
			return 77;
		}
		fprintf(stderr, "%s: libbpf load failed: %d\n", path, err);
		return -1;
	}
	obj = xbpf_object__open_file(path, NULL);
	CHECK(obj);
	if (!obj) {
		bpf_object__close(lobj);
		return -1;
	}

	bpf_object__for_each_map(lm, lobj) {
		struct xbpf_map *m = xbpf_object__map(obj, idx++);
		const struct xbpf_map_spec *sp = xbpf_map__spec(m);

		CHECK(m);
		if (!m)
			continue;
		if (!same_map_name(bpf_map__name(lm), sp->name) || (int)bpf_map__type(lm) != (int)sp->type ||
		    bpf_map__key_size(lm) != sp->key_size || bpf_map__value_size(lm) != sp->value_size ||
		    bpf_map__max_entries(lm) != sp->max_entries ||
		    bpf_map__map_flags(lm) != sp->map_flags) {
			fprintf(stderr,
				"%s: map %zu: libbpf '%s' type %d key %u value %u max %u flags %#x / "
				"ours '%s' type %d key %u value %u max %u flags %#x\n",
				path, idx - 1, bpf_map__name(lm), bpf_map__type(lm), bpf_map__key_size(lm),
				bpf_map__value_size(lm), bpf_map__max_entries(lm), bpf_map__map_flags(lm),
				sp->name, sp->type, sp->key_size, sp->value_size, sp->max_entries,
				sp->map_flags);
			test_failures++;
		}
	}
	CHECK_EQ(idx, xbpf_object__map_cnt(obj));

	bpf_object__for_each_program(lp, lobj) {
		const struct bpf_insn *li = bpf_program__insns(lp);
		size_t lcnt = bpf_program__insn_cnt(lp);
		struct xbpf_prog *p = xbpf_object__find_prog(obj, bpf_program__name(lp));
		const struct xbpf_insn *oi;
		size_t ocnt;

		progs++;
		CHECK(p);
		if (!p)
			continue;
		oi = xbpf_prog__insns(p);
		ocnt = xbpf_prog__insn_cnt(p);
		if (lcnt != ocnt) {
			fprintf(stderr, "%s: prog %s: libbpf %zu insns, ours %zu\n", path,
				bpf_program__name(lp), lcnt, ocnt);
			test_failures++;
			continue;
		}
		CHECK(!strcmp(bpf_program__section_name(lp), xbpf_prog__section(p)));
		for (i = 0; i < lcnt; i++) {
			if (li[i].code == (BPF_LD | BPF_DW | BPF_IMM) &&
			    (li[i].src_reg == BPF_PSEUDO_MAP_FD || li[i].src_reg == BPF_PSEUDO_MAP_VALUE)) {
				const char *lname = libbpf_map_name_by_fd(lobj, li[i].imm);
				struct xbpf_map *m = xbpf_object__map(obj, (size_t)oi[i].imm);

				if (oi[i].src_reg != li[i].src_reg || !m || !same_map_name(lname, xbpf_map__name(m)) ||
				    (li[i].src_reg == BPF_PSEUDO_MAP_VALUE && li[i + 1].imm != oi[i + 1].imm)) {
					fprintf(stderr, "%s: prog %s insn %zu: libbpf map '%s'+%d, ours '%s'+%d\n",
						path, bpf_program__name(lp), i, lname, li[i + 1].imm,
						m ? xbpf_map__name(m) : "?", oi[i + 1].imm);
					test_failures++;
				}
				i++;
				continue;
			}
			if (memcmp(&li[i], &oi[i], sizeof(li[i]))) {
				fprintf(stderr, "%s: prog %s insn %zu differs: libbpf %02x %d %d %d %d, ours %02x %d %d %d %d\n",
					path, bpf_program__name(lp), i, li[i].code, li[i].dst_reg,
					li[i].src_reg, li[i].off, li[i].imm, oi[i].code, oi[i].dst_reg,
					oi[i].src_reg, oi[i].off, oi[i].imm);
				test_failures++;
				break;
			}
		}
	}
	CHECK(progs > 0);
	printf("%s: %d programs, %zu maps compared\n", path, progs, idx);
	xbpf_object__close(obj);
	bpf_object__close(lobj);
	return 0;
}

int main(int argc, char **argv)
{
	int i, ret;

	libbpf_set_print(silent);
	for (i = 1; i < argc; i++) {
		ret = compare_object(argv[i]);
		if (ret == 77)
			return 77;
		if (ret)
			test_failures++;
	}
	TEST_DONE();
}
