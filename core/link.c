// SPDX-License-Identifier: MIT
/*
 * link.c - turning ELF functions into linked programs, as libbpf's
 * bpf_object__reloc_code() does:
 *
 * - every global function of an executable section other than .text is a
 *   program, typed by its section name;
 * - the program starts with its own instructions; each bpf-to-bpf call
 *   (call with src_reg BPF_PSEUDO_CALL) names a callee, which is appended
 *   once, the first time a call reaches it, and walked right away, before
 *   the caller's next instruction (libbpf's depth-first order);
 * - a call's target is, with an R_BPF_64_32 relocation, the symbol's
 *   offset plus imm + 1 (imm is -1 for global callees; for static ones the
 *   relocation names the section and imm holds the offset), without one,
 *   the call's own position plus imm + 1 in its section; imm is then
 *   rewritten relative to the linked layout;
 * - ld_imm64 with an R_BPF_64_64 relocation against code is a callback's
 *   address: src_reg XBPF_PSEUDO_FUNC, imm relative as a call's, the
 *   function appended and walked as a callee is;
 * - ld_imm64 with an R_BPF_64_64 relocation against a .maps symbol becomes
 *   src_reg XBPF_PSEUDO_MAP_FD, imm = object map index; against a global
 *   data section, XBPF_PSEUDO_MAP_VALUE with the offset (symbol value +
 *   existing imm) in the second half.
 */
#include <stdlib.h>

#include "elf_impl.h"

/* The relocation at byte `off` of section s (its relocations are sorted). */
const struct xbpf_elf_rel *__xbpf_elf_find_rel(const struct xbpf_elf_sec *s, uint64_t off)
{
	size_t lo = 0, hi = s->nrels;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->rels[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->nrels && s->rels[lo].off == off ? &s->rels[lo] : NULL;
}

#define MAX_PROG_INSNS (1u << 20)

static bool is_exec_sec(const struct xbpf_elf_sec *s)
{
	return s->shdr.sh_type == SHT_PROGBITS && (s->shdr.sh_flags & SHF_EXECINSTR) && s->data;
}

static int cmp_func(const void *a, const void *b)
{
	const struct xbpf_elf_func *x = a, *y = b;

	if (x->sec != y->sec)
		return x->sec < y->sec ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int collect_funcs(struct xbpf_elf *elf)
{
	uint32_t i;
	size_t n = 0;

	elf->funcs = calloc(elf->nsyms ? elf->nsyms : 1, sizeof(*elf->funcs));
	if (!elf->funcs)
		return -ENOMEM;
	for (i = 0; i < elf->nsyms; i++) {
		const struct xbpf_elf_sym *sym = &elf->syms[i];
		const struct xbpf_elf_sec *s;

		if (ELF64_ST_TYPE(sym->sym.st_info) != STT_FUNC)
			continue;
		if (sym->sym.st_shndx == SHN_UNDEF)
			continue; /* extern function: only an error if called */
		if (sym->sym.st_shndx >= elf->shnum || !is_exec_sec(&elf->secs[sym->sym.st_shndx])) {
			pr_warn("elf: function '%s' is not in an executable section\n", sym->name);
			return -EINVAL;
		}
		s = &elf->secs[sym->sym.st_shndx];
		if (s->size % XBPF_INSN_SIZE || sym->sym.st_value % XBPF_INSN_SIZE ||
		    sym->sym.st_size % XBPF_INSN_SIZE || !sym->sym.st_size ||
		    sym->sym.st_value > s->size || sym->sym.st_size > s->size - sym->sym.st_value) {
			pr_warn("elf: function '%s' has a bad range in section %s\n", sym->name, s->name);
			return -EINVAL;
		}
		elf->funcs[n++] = (struct xbpf_elf_func){
			.name = sym->name,
			.sec = sym->sym.st_shndx,
			.start = (uint32_t)(sym->sym.st_value / XBPF_INSN_SIZE),
			.len = (uint32_t)(sym->sym.st_size / XBPF_INSN_SIZE),
			.global = ELF64_ST_BIND(sym->sym.st_info) != STB_LOCAL,
		};
	}
	elf->nfuncs = n;
	qsort(elf->funcs, n, sizeof(*elf->funcs), cmp_func);
	for (i = 1; i < n; i++) {
		const struct xbpf_elf_func *a = &elf->funcs[i - 1], *b = &elf->funcs[i];

		if (a->sec == b->sec && a->start + a->len > b->start) {
			pr_warn("elf: functions '%s' and '%s' overlap\n", a->name, b->name);
			return -EINVAL;
		}
	}
	return 0;
}

static long find_func(const struct xbpf_elf *elf, uint32_t sec, uint32_t start)
{
	size_t lo = 0, hi = elf->nfuncs;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct xbpf_elf_func *f = &elf->funcs[mid];

		if (f->sec < sec || (f->sec == sec && f->start < start))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < elf->nfuncs && elf->funcs[lo].sec == sec && elf->funcs[lo].start == start)
		return (long)lo;
	return -1;
}

struct region {
	size_t func;
	uint32_t out_start;
};

struct linker {
	struct xbpf_elf *elf;
	struct xbpf_object *obj;
	const char *prog_name;
	struct xbpf_insn *out;
	uint32_t cnt, cap;
	struct region *regions;
	size_t nregions, region_cap;
	long *linked; /* [nfuncs]: out offset or -1 */
};

static int append_func(struct linker *l, size_t fi)
{
	const struct xbpf_elf_func *f = &l->elf->funcs[fi];
	const struct xbpf_elf_sec *s = &l->elf->secs[f->sec];

	if ((uint64_t)l->cnt + f->len > MAX_PROG_INSNS) {
		pr_warn("elf: prog '%s': linked program too large\n", l->prog_name);
		return -E2BIG;
	}
	if (l->cnt + f->len > l->cap) {
		uint32_t cap = l->cap ? l->cap : 256;
		struct xbpf_insn *n;

		while (cap < l->cnt + f->len)
			cap *= 2;
		n = realloc(l->out, (size_t)cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		l->out = n;
		l->cap = cap;
	}
	if (l->nregions == l->region_cap) {
		size_t cap = l->region_cap ? l->region_cap * 2 : 8;
		struct region *n = realloc(l->regions, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		l->regions = n;
		l->region_cap = cap;
	}
	memcpy(l->out + l->cnt, s->data + (size_t)f->start * XBPF_INSN_SIZE,
	       (size_t)f->len * XBPF_INSN_SIZE);
	l->regions[l->nregions++] = (struct region){ .func = fi, .out_start = l->cnt };
	l->linked[fi] = l->cnt;
	l->cnt += f->len;
	return 0;
}

static int reloc_ldimm64(struct linker *l, uint32_t i, const struct xbpf_elf_rel *rel)
{
	struct xbpf_elf *elf = l->elf;
	const struct xbpf_elf_sym *sym = &elf->syms[rel->sym];
	struct xbpf_insn *insn = &l->out[i];
	uint32_t shndx = sym->sym.st_shndx;
	size_t j;

	if (rel->type != R_BPF_64_64) {
		pr_warn("elf: prog '%s': insn %u: relocation type %u on ld_imm64\n", l->prog_name, i,
			rel->type);
		return -EINVAL;
	}
	if (shndx == SHN_UNDEF) {
		pr_warn("elf: prog '%s': extern '%s' is not supported\n", l->prog_name, sym->name);
		return -ENOTSUP;
	}
	if (shndx >= elf->shnum) {
		pr_warn("elf: prog '%s': insn %u: relocation against special section %u\n",
			l->prog_name, i, shndx);
		return -EINVAL;
	}
	if (elf->maps_idx && shndx == elf->maps_idx) {
		for (j = 0; j < elf->nmap_defs; j++) {
			if (elf->map_defs[j].sec_off == sym->sym.st_value) {
				insn->src_reg = XBPF_PSEUDO_MAP_FD;
				insn->imm = (int32_t)j; /* BTF maps are object maps 0..n-1 */
				l->out[i + 1].imm = 0;
				return 0;
			}
		}
		pr_warn("elf: prog '%s': insn %u: '%s' is not a map of .maps\n", l->prog_name, i,
			sym->name);
		return -EINVAL;
	}
	if (elf->sec_map[shndx] >= 0) {
		const struct xbpf_map *map = l->obj->maps[elf->sec_map[shndx]];
		uint64_t off = (uint64_t)(uint32_t)insn->imm + sym->sym.st_value;

		if (off >= map->spec.value_size) {
			pr_warn("elf: prog '%s': insn %u: offset %llu past section %s\n", l->prog_name, i,
				(unsigned long long)off, elf->secs[shndx].name);
			return -EINVAL;
		}
		insn->src_reg = XBPF_PSEUDO_MAP_VALUE;
		insn->imm = elf->sec_map[shndx];
		l->out[i + 1].imm = (int32_t)off;
		return 0;
	}
	if (is_exec_sec(&elf->secs[shndx])) {
		/* A callback's address: the symbol's offset plus imm, in bytes (libbpf's subprog addr). */
		uint64_t byte = sym->sym.st_value + (uint64_t)(uint32_t)insn->imm;
		long g = byte % XBPF_INSN_SIZE ? -1 : find_func(elf, shndx, (uint32_t)(byte / XBPF_INSN_SIZE));
		int err;

		if (g < 0) {
			pr_warn("elf: prog '%s': insn %u: '%s' + %d is not a function start\n",
				l->prog_name, i, sym->name, insn->imm);
			return -EINVAL;
		}
		if (l->linked[g] < 0) {
			err = append_func(l, (size_t)g);
			if (err)
				return err;
			insn = &l->out[i]; /* out may have moved */
		}
		insn->src_reg = XBPF_PSEUDO_FUNC;
		insn->imm = (int32_t)(l->linked[g] - (long)i - 1);
		l->out[i + 1].imm = 0;
		return 0;
	}
	pr_warn("elf: prog '%s': insn %u: relocation against section %s is not supported\n",
		l->prog_name, i, elf->secs[shndx].name);
	return -ENOTSUP;
}

static int reloc_call(struct linker *l, uint32_t i, const struct xbpf_elf_func *f, uint32_t sec_insn,
		      const struct xbpf_elf_rel *rel)
{
	struct xbpf_elf *elf = l->elf;
	struct xbpf_insn *insn = &l->out[i];
	uint32_t tsec;
	int64_t target;
	long g;
	int err;

	if (rel) {
		const struct xbpf_elf_sym *sym = &elf->syms[rel->sym];

		if (rel->type != R_BPF_64_32) {
			pr_warn("elf: prog '%s': insn %u: relocation type %u on a call\n", l->prog_name,
				i, rel->type);
			return -EINVAL;
		}
		if (sym->sym.st_shndx == SHN_UNDEF) {
			pr_warn("elf: prog '%s': call to extern '%s' is not supported\n", l->prog_name,
				sym->name);
			return -ENOTSUP;
		}
		tsec = sym->sym.st_shndx;
		if (tsec >= elf->shnum || !is_exec_sec(&elf->secs[tsec]) ||
		    sym->sym.st_value % XBPF_INSN_SIZE) {
			pr_warn("elf: prog '%s': insn %u: call to '%s', not code\n", l->prog_name, i,
				sym->name);
			return -EINVAL;
		}
		target = (int64_t)(sym->sym.st_value / XBPF_INSN_SIZE) + insn->imm + 1;
	} else {
		tsec = f->sec;
		target = (int64_t)sec_insn + insn->imm + 1;
	}
	g = target >= 0 && target <= UINT32_MAX ? find_func(elf, tsec, (uint32_t)target) : -1;
	if (g < 0) {
		pr_warn("elf: prog '%s': insn %u: call target %lld in %s is not a function start\n",
			l->prog_name, i, (long long)target, elf->secs[tsec].name);
		return -EINVAL;
	}
	if (l->linked[g] < 0) {
		err = append_func(l, (size_t)g);
		if (err)
			return err;
		insn = &l->out[i]; /* out may have moved */
	}
	insn->imm = (int32_t)(l->linked[g] - (long)i - 1);
	return 0;
}

/*
 * Walk the program depth-first like libbpf: a callee is appended and walked
 * as soon as the first call reaches it, before the caller's next
 * instruction.  An explicit stack keeps hostile call chains off the C stack.
 */
static int link_prog(struct linker *l, size_t main_fi)
{
	struct frame {
		size_t region;
		uint32_t pos;
	} *stack;
	size_t depth = 0;
	int err;

	stack = malloc((l->elf->nfuncs + 1) * sizeof(*stack));
	if (!stack)
		return -ENOMEM;
	err = append_func(l, main_fi);
	if (err)
		goto out;
	stack[depth++] = (struct frame){ .region = 0, .pos = 0 };
	while (depth) {
		struct frame *fr = &stack[depth - 1];
		const struct xbpf_elf_func *f = &l->elf->funcs[l->regions[fr->region].func];
		const struct xbpf_elf_sec *s = &l->elf->secs[f->sec];
		uint32_t base = l->regions[fr->region].out_start, i = base + fr->pos;
		const struct xbpf_elf_rel *rel;
		struct xbpf_insn insn;
		uint32_t sec_insn;

		if (fr->pos >= f->len) {
			depth--;
			continue;
		}
		sec_insn = f->start + fr->pos;
		rel = __xbpf_elf_find_rel(s, (uint64_t)sec_insn * XBPF_INSN_SIZE);
		insn = l->out[i];
		if (insn.code == (XBPF_LD | XBPF_DW | XBPF_IMM)) {
			if (fr->pos + 1 >= f->len) {
				pr_warn("elf: prog '%s': ld_imm64 cut at the end of '%s'\n", l->prog_name,
					f->name);
				err = -EINVAL;
				goto out;
			}
			if (rel) {
				size_t before = l->nregions;

				err = reloc_ldimm64(l, i, rel);
				if (err)
					goto out;
				fr->pos += 2;
				if (l->nregions > before) /* a callback: walk it first, like a callee */
					stack[depth++] = (struct frame){ .region = l->nregions - 1, .pos = 0 };
				continue;
			}
			fr->pos += 2;
			continue;
		}
		fr->pos++;
		if (insn.code == (XBPF_JMP | XBPF_CALL) && insn.src_reg == XBPF_PSEUDO_CALL) {
			size_t before = l->nregions;

			err = reloc_call(l, i, f, sec_insn, rel);
			if (err)
				goto out;
			if (l->nregions > before) /* walk the new callee first */
				stack[depth++] = (struct frame){ .region = l->nregions - 1, .pos = 0 };
		} else if (insn.code == (XBPF_JMP | XBPF_CALL) && insn.src_reg == XBPF_PSEUDO_KFUNC_CALL) {
			pr_warn("elf: prog '%s': kfunc calls are not supported\n", l->prog_name);
			err = -ENOTSUP;
			goto out;
		} else if (rel) {
			pr_warn("elf: prog '%s': insn %u: unexpected relocation (type %u) in %s\n",
				l->prog_name, i, rel->type, s->name);
			err = -EINVAL;
			goto out;
		}
	}
out:
	free(stack);
	return err;
}

static int cmp_line(const void *a, const void *b)
{
	const struct xbpf_line *x = a, *y = b;

	return x->insn < y->insn ? -1 : x->insn > y->insn;
}

static int add_lines(struct linker *l, struct xbpf_prog *prog)
{
	struct xbpf_elf *elf = l->elf;
	size_t r, k, n = 0, cap = 0;
	struct xbpf_line *lines = NULL;
	int err = 0;

	if (!elf->has_btf || !elf->btf_ext)
		return 0;
	for (r = 0; r < l->nregions; r++) {
		const struct xbpf_elf_func *f = &elf->funcs[l->regions[r].func];
		struct xbpf_btf_line *bl;
		size_t bn;

		err = __xbpf_btf_ext_lines(&elf->btf, elf->btf_ext, elf->btf_ext_size,
					   elf->secs[f->sec].name, &bl, &bn);
		if (err)
			goto out;
		for (k = 0; k < bn; k++) {
			if (bl[k].insn < f->start || bl[k].insn >= f->start + f->len)
				continue;
			if (n == cap) {
				struct xbpf_line *nl;

				cap = cap ? cap * 2 : 64;
				nl = realloc(lines, cap * sizeof(*nl));
				if (!nl) {
					free(bl);
					err = -ENOMEM;
					goto out;
				}
				lines = nl;
			}
			lines[n++] = (struct xbpf_line){
				.insn = l->regions[r].out_start + (bl[k].insn - f->start),
				.line = bl[k].line,
				.col = bl[k].col,
				.file = bl[k].file,
				.text = bl[k].text,
			};
		}
		free(bl);
	}
	if (n)
		qsort(lines, n, sizeof(*lines), cmp_line);
	prog->lines = lines;
	prog->line_cnt = n;
	lines = NULL;
out:
	free(lines);
	return err;
}

/*
 * func_info of the linked program, as libbpf passes it: each function's
 * record moved to where the function landed.  A program some function of
 * which has no record gets none (the kernel would refuse the mismatch).
 */
static int add_func_info(struct linker *l, struct xbpf_prog *prog)
{
	struct xbpf_elf *elf = l->elf;
	struct xbpf_func_info *out;
	size_t r, n = 0;
	int err = 0;

	if (!elf->has_btf || !elf->btf_ext)
		return 0;
	out = calloc(l->nregions ? l->nregions : 1, sizeof(*out));
	if (!out)
		return -ENOMEM;
	for (r = 0; r < l->nregions; r++) {
		const struct xbpf_elf_func *f = &elf->funcs[l->regions[r].func];
		struct xbpf_func_info *recs;
		size_t cnt, k;

		err = __xbpf_btf_ext_funcs(&elf->btf, elf->btf_ext, elf->btf_ext_size,
					   elf->secs[f->sec].name, &recs, &cnt);
		if (err)
			goto out;
		for (k = 0; k < cnt && recs[k].insn_off != f->start; k++)
			;
		if (k < cnt)
			out[n++] = (struct xbpf_func_info){ .insn_off = (uint32_t)l->regions[r].out_start,
							    .type_id = recs[k].type_id };
		free(recs);
		if (k == cnt) {
			pr_debug("elf: function '%s' has no func_info: program without BTF\n", f->name);
			goto out;
		}
	}
	err = __xbpf_prog_set_func_info(l->obj, prog, &elf->btf, out, n);
out:
	free(out);
	return err;
}

static int build_prog(struct xbpf_object *obj, struct xbpf_elf *elf, size_t fi,
		      enum xbpf_prog_type type)
{
	const struct xbpf_elf_func *f = &elf->funcs[fi];
	struct linker l = { .elf = elf, .obj = obj, .prog_name = f->name };
	struct xbpf_prog *prog;
	size_t k;
	int err;

	l.linked = malloc(elf->nfuncs * sizeof(*l.linked));
	if (!l.linked)
		return -ENOMEM;
	for (k = 0; k < elf->nfuncs; k++)
		l.linked[k] = -1;
	err = link_prog(&l, fi);
	if (err)
		goto out;
	err = -ENOMEM;
	prog = __xbpf_object_add_prog(obj);
	if (!prog)
		goto out;
	prog->name = strdup(f->name);
	prog->section = strdup(elf->secs[f->sec].name);
	prog->funcs = calloc(l.nregions, sizeof(*prog->funcs));
	if (!prog->name || !prog->section || !prog->funcs)
		goto out;
	prog->type = type;
	prog->insns = l.out;
	prog->insn_cnt = l.cnt;
	l.out = NULL;
	for (k = 0; k < l.nregions; k++) {
		const struct xbpf_elf_func *g = &elf->funcs[l.regions[k].func];
		const char *name = __xbpf_object_strdup(obj, g->name, strlen(g->name));

		if (!name)
			goto out;
		prog->funcs[k] = (struct xbpf_func_desc){ .name = name,
							  .start = l.regions[k].out_start,
							  .len = g->len };
	}
	prog->func_cnt = l.nregions;
	err = add_lines(&l, prog);
	err = err ?: add_func_info(&l, prog);
out:
	free(l.out);
	free(l.regions);
	free(l.linked);
	return err;
}

int __xbpf_elf_link(struct xbpf_object *obj, struct xbpf_elf *elf)
{
	size_t fi;
	int err;

	err = collect_funcs(elf);
	if (err)
		return err;
	for (fi = 0; fi < elf->nfuncs; fi++) {
		const struct xbpf_elf_func *f = &elf->funcs[fi];
		const char *sec = elf->secs[f->sec].name;
		enum xbpf_prog_type type;

		if (!strcmp(sec, ".text"))
			continue;
		if (!f->global) {
			pr_warn("elf: sec '%s': program '%s' is static and not supported\n", sec, f->name);
			return -ENOTSUP;
		}
		if (xbpf_prog_type_from_section(sec, &type)) {
			pr_warn("elf: sec '%s': unknown program type, skipping program '%s'\n", sec,
				f->name);
			continue;
		}
		err = build_prog(obj, elf, fi, type);
		if (err)
			return err;
	}
	return 0;
}
