// SPDX-License-Identifier: MIT
/*
 * object.c - the object model: objects, programs and their accessors,
 * program types, and map resolution for the engines.  Opening objects is
 * in open.c, logging in log.c.
 */
#include <stdio.h>
#include <stdlib.h>

#include "core_impl.h"

/* ---- program types ------------------------------------------------------------ */

static const struct {
	enum xbpf_prog_type type;
	const char *name;
} prog_type_names[] = {
	{ XBPF_PROG_SOCKET_FILTER, "socket_filter" },
	{ XBPF_PROG_SCHED_CLS, "sched_cls" },
	{ XBPF_PROG_SCHED_ACT, "sched_act" },
	{ XBPF_PROG_XDP, "xdp" },
	{ XBPF_PROG_TRACEPOINT, "tracepoint" },
	{ XBPF_PROG_RAW_MEM, "raw_mem" },
};

int xbpf_prog_type_from_name(const char *name, enum xbpf_prog_type *ret_type)
{
	size_t i;

	if (!name || !ret_type)
		return xbpf_err(-EINVAL);
	for (i = 0; i < sizeof(prog_type_names) / sizeof(prog_type_names[0]); i++) {
		if (!strcmp(prog_type_names[i].name, name)) {
			*ret_type = prog_type_names[i].type;
			return 0;
		}
	}
	return xbpf_err(-EINVAL);
}

const char *xbpf_prog_type_name(enum xbpf_prog_type type)
{
	size_t i;

	for (i = 0; i < sizeof(prog_type_names) / sizeof(prog_type_names[0]); i++)
		if (prog_type_names[i].type == type)
			return prog_type_names[i].name;
	return NULL;
}

/*
 * Section names as libbpf reads them: an exact name or a name followed by
 * '/' (the rest names the attach point).
 */
static const struct {
	const char *sec;
	enum xbpf_prog_type type;
	bool prefix; /* also matches "sec/..." */
} sec_defs[] = {
	{ "xdp", XBPF_PROG_XDP, true },
	{ "xdp.frags", XBPF_PROG_XDP, true },
	{ "tc", XBPF_PROG_SCHED_CLS, true },
	{ "tcx/ingress", XBPF_PROG_SCHED_CLS, false },
	{ "tcx/egress", XBPF_PROG_SCHED_CLS, false },
	{ "classifier", XBPF_PROG_SCHED_CLS, true },
	{ "action", XBPF_PROG_SCHED_ACT, true },
	{ "socket", XBPF_PROG_SOCKET_FILTER, true },
	{ "tracepoint", XBPF_PROG_TRACEPOINT, true },
	{ "tp", XBPF_PROG_TRACEPOINT, true },
	{ "raw", XBPF_PROG_RAW_MEM, true },
};

int xbpf_prog_type_from_section(const char *sec, enum xbpf_prog_type *ret_type)
{
	size_t i;

	if (!sec || !ret_type)
		return xbpf_err(-EINVAL);
	for (i = 0; i < sizeof(sec_defs) / sizeof(sec_defs[0]); i++) {
		size_t n = strlen(sec_defs[i].sec);

		if (strncmp(sec, sec_defs[i].sec, n))
			continue;
		if (sec[n] == '\0' || (sec_defs[i].prefix && sec[n] == '/')) {
			*ret_type = sec_defs[i].type;
			return 0;
		}
	}
	return xbpf_err(-ENOENT);
}

/* ---- objects -------------------------------------------------------------------- */

struct xbpf_object *__xbpf_object_new(const char *name)
{
	struct xbpf_object *obj = calloc(1, sizeof(*obj));

	if (!obj)
		return NULL;
	obj->name = strdup(name ? name : "raw");
	if (!obj->name) {
		free(obj);
		return NULL;
	}
	return obj;
}

const char *__xbpf_object_strdup(struct xbpf_object *obj, const char *s, size_t len)
{
	char **strs, *copy;

	strs = realloc(obj->strs, (obj->str_cnt + 1) * sizeof(*strs));
	if (!strs)
		return NULL;
	obj->strs = strs;
	copy = malloc(len + 1);
	if (!copy)
		return NULL;
	memcpy(copy, s, len);
	copy[len] = '\0';
	obj->strs[obj->str_cnt++] = copy;
	return copy;
}

int __xbpf_object_add_map(struct xbpf_object *obj, struct xbpf_map *map)
{
	struct xbpf_map **maps = realloc(obj->maps, (obj->map_cnt + 1) * sizeof(*maps));

	if (!maps)
		return -ENOMEM;
	obj->maps = maps;
	obj->maps[obj->map_cnt++] = map;
	return 0;
}

struct xbpf_prog *__xbpf_object_add_prog(struct xbpf_object *obj)
{
	struct xbpf_prog *progs = realloc(obj->progs, (obj->prog_cnt + 1) * sizeof(*progs));

	if (!progs)
		return NULL;
	obj->progs = progs;
	memset(&progs[obj->prog_cnt], 0, sizeof(*progs));
	progs[obj->prog_cnt].obj = obj;
	return &progs[obj->prog_cnt++];
}

struct xbpf_object *xbpf_object__close(struct xbpf_object *obj)
{
	size_t i;

	if (!obj)
		return NULL;
	for (i = 0; i < obj->prog_cnt; i++) {
		free(obj->progs[i].name);
		free(obj->progs[i].section);
		free(obj->progs[i].insns);
		free(obj->progs[i].funcs);
		free(obj->progs[i].lines);
		free(obj->progs[i].sigs);
	}
	free(obj->progs);
	/* outer maps first would not matter: inner pointers are never followed on free */
	for (i = 0; i < obj->map_cnt; i++)
		xbpf_map__free(obj->maps[i]);
	free(obj->maps);
	for (i = 0; i < obj->str_cnt; i++)
		free(obj->strs[i]);
	free(obj->strs);
	free(obj->name);
	free(obj);
	return NULL;
}

const char *xbpf_object__name(const struct xbpf_object *obj)
{
	return obj ? obj->name : NULL;
}

const char *xbpf_object__license(const struct xbpf_object *obj)
{
	return obj ? obj->license : NULL;
}

struct xbpf_prog *xbpf_object__next_prog(const struct xbpf_object *obj, const struct xbpf_prog *prev)
{
	size_t idx;

	if (!obj)
		return NULL;
	if (!prev)
		return obj->prog_cnt ? &obj->progs[0] : NULL;
	if (prev < obj->progs || prev >= obj->progs + obj->prog_cnt)
		return NULL;
	idx = (size_t)(prev - obj->progs) + 1;
	return idx < obj->prog_cnt ? &obj->progs[idx] : NULL;
}

struct xbpf_prog *xbpf_object__find_prog(const struct xbpf_object *obj, const char *name)
{
	size_t i;

	if (!obj || !name)
		return xbpf_err_ptr(-EINVAL);
	for (i = 0; i < obj->prog_cnt; i++)
		if (!strcmp(obj->progs[i].name, name))
			return &obj->progs[i];
	return xbpf_err_ptr(-ENOENT);
}

size_t xbpf_object__map_cnt(const struct xbpf_object *obj)
{
	return obj ? obj->map_cnt : 0;
}

struct xbpf_map *xbpf_object__map(const struct xbpf_object *obj, size_t idx)
{
	if (!obj || idx >= obj->map_cnt)
		return xbpf_err_ptr(-ENOENT);
	return obj->maps[idx];
}

struct xbpf_map *xbpf_object__find_map(const struct xbpf_object *obj, const char *name)
{
	size_t i;

	if (!obj || !name)
		return xbpf_err_ptr(-EINVAL);
	for (i = 0; i < obj->map_cnt; i++)
		if (!strcmp(obj->maps[i]->spec.name, name))
			return obj->maps[i];
	return xbpf_err_ptr(-ENOENT);
}

/* ---- programs ------------------------------------------------------------------ */

const char *xbpf_prog__name(const struct xbpf_prog *prog)
{
	return prog ? prog->name : NULL;
}

const char *xbpf_prog__section(const struct xbpf_prog *prog)
{
	return prog ? prog->section : NULL;
}

enum xbpf_prog_type xbpf_prog__type(const struct xbpf_prog *prog)
{
	return prog ? prog->type : XBPF_PROG_UNSPEC;
}

struct xbpf_object *xbpf_prog__object(const struct xbpf_prog *prog)
{
	return prog ? prog->obj : NULL;
}

const struct xbpf_insn *xbpf_prog__insns(const struct xbpf_prog *prog)
{
	return prog ? prog->insns : NULL;
}

size_t xbpf_prog__insn_cnt(const struct xbpf_prog *prog)
{
	return prog ? prog->insn_cnt : 0;
}

size_t xbpf_prog__func_cnt(const struct xbpf_prog *prog)
{
	return prog ? prog->func_cnt : 0;
}

int xbpf_prog__func(const struct xbpf_prog *prog, size_t idx, struct xbpf_func_desc *ret_func)
{
	if (!prog || !ret_func)
		return xbpf_err(-EINVAL);
	if (idx >= prog->func_cnt)
		return xbpf_err(-ENOENT);
	*ret_func = prog->funcs[idx];
	return 0;
}

int xbpf_prog__line(const struct xbpf_prog *prog, uint32_t insn_idx, struct xbpf_line_desc *ret_line)
{
	size_t lo = 0, hi;

	if (!prog || !ret_line)
		return xbpf_err(-EINVAL);
	/* the last line record at or before insn_idx */
	hi = prog->line_cnt;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (prog->lines[mid].insn <= insn_idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || insn_idx >= prog->insn_cnt)
		return xbpf_err(-ENOENT);
	ret_line->file = prog->lines[lo - 1].file;
	ret_line->text = prog->lines[lo - 1].text;
	ret_line->line = prog->lines[lo - 1].line;
	ret_line->col = prog->lines[lo - 1].col;
	return 0;
}

/* ---- raw programs ------------------------------------------------------------------ */

int xbpf_prog__resolve_maps(const struct xbpf_prog *prog, struct xbpf_insn **ret_insns, size_t *ret_cnt)
{
	const struct xbpf_object *obj;
	struct xbpf_insn *insns;
	size_t i;

	if (!prog || !ret_insns || !ret_cnt)
		return xbpf_err(-EINVAL);
	obj = prog->obj;
	insns = malloc(prog->insn_cnt * sizeof(*insns));
	if (!insns)
		return xbpf_err(-ENOMEM);
	memcpy(insns, prog->insns, prog->insn_cnt * sizeof(*insns));
	for (i = 0; i < prog->insn_cnt; i++) {
		struct xbpf_insn *insn = &insns[i];
		uint64_t addr;
		uint32_t idx;

		if (insn->code != (XBPF_LD | XBPF_DW | XBPF_IMM))
			continue;
		if (i + 1 >= prog->insn_cnt) {
			pr_warn("prog '%s': insn %zu: ld_imm64 without its second half\n", prog->name, i);
			goto err_inval;
		}
		if (insn->src_reg == XBPF_PSEUDO_MAP_FD || insn->src_reg == XBPF_PSEUDO_MAP_VALUE) {
			idx = (uint32_t)insn->imm;
			if (idx >= obj->map_cnt) {
				pr_warn("prog '%s': insn %zu: map index %u out of range (%zu maps)\n",
					prog->name, i, idx, obj->map_cnt);
				goto err_inval;
			}
			if (insn->src_reg == XBPF_PSEUDO_MAP_FD) {
				addr = (uintptr_t)obj->maps[idx];
			} else {
				struct xbpf_map *map = obj->maps[idx];
				uint32_t off = (uint32_t)insns[i + 1].imm, zero = 0;
				void *value;

				if (map->spec.type != XBPF_MAP_ARRAY || off >= map->spec.value_size) {
					pr_warn("prog '%s': insn %zu: value offset %u invalid for map '%s'\n",
						prog->name, i, off, map->spec.name);
					goto err_inval;
				}
				value = xbpf_map__lookup_elem(map, &zero);
				addr = (uintptr_t)value + off;
			}
			insn->src_reg = 0;
			insn->imm = (int32_t)(uint32_t)addr;
			insns[i + 1].imm = (int32_t)(uint32_t)(addr >> 32);
		}
		i++; /* skip the second half */
	}
	*ret_insns = insns;
	*ret_cnt = prog->insn_cnt;
	return 0;
err_inval:
	free(insns);
	return xbpf_err(-EINVAL);
}
