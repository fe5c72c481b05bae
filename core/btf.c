// SPDX-License-Identifier: MIT
/*
 * btf.c - just enough BTF to read BTF-defined maps (libbpf's __uint,
 * __type and __array conventions in SEC(".maps")) and .BTF.ext line info.
 *
 * Every offset, length, count and type id comes from the file and is
 * checked before use; a type graph may be cyclic, so walks are bounded.
 */
#include <linux/btf.h>
#include <stdio.h>
#include <stdlib.h>

#include "core_impl.h"

#define BTF_MAGIC_LE 0xeB9F
#define MAX_RESOLVE_DEPTH 32

static size_t type_extra(const struct btf_type *t, size_t avail, int *err)
{
	uint32_t vlen = BTF_INFO_VLEN(t->info);

	*err = 0;
	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT:
		return 4;
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
		return 0;
	case BTF_KIND_ARRAY:
		return sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return (size_t)vlen * sizeof(struct btf_member);
	case BTF_KIND_ENUM:
		return (size_t)vlen * sizeof(struct btf_enum);
	case BTF_KIND_FUNC_PROTO:
		return (size_t)vlen * sizeof(struct btf_param);
	case BTF_KIND_VAR:
		return sizeof(struct btf_var);
	case BTF_KIND_DATASEC:
		return (size_t)vlen * sizeof(struct btf_var_secinfo);
	case BTF_KIND_DECL_TAG:
		return sizeof(struct btf_decl_tag);
	case BTF_KIND_ENUM64:
		return (size_t)vlen * sizeof(struct btf_enum64);
	default:
		*err = -EINVAL;
		return avail;
	}
}

int __xbpf_btf_parse(const void *data, size_t size, struct xbpf_btf *btf)
{
	const struct btf_header *hdr = data;
	const uint8_t *types, *p;
	size_t cap = 0;
	uint64_t type_end, str_end;
	int err;

	memset(btf, 0, sizeof(*btf));
	if (size < sizeof(*hdr) || ((uintptr_t)data & 3)) {
		pr_warn("btf: section too small (%zu bytes)\n", size);
		return -EINVAL;
	}
	if (hdr->magic != BTF_MAGIC_LE || hdr->version != 1 || hdr->hdr_len < sizeof(*hdr) ||
	    hdr->hdr_len > size || (hdr->hdr_len & 3)) {
		pr_warn("btf: bad header (magic %#x, version %u, hdr_len %u)\n", hdr->magic,
			hdr->version, hdr->hdr_len);
		return -EINVAL;
	}
	type_end = (uint64_t)hdr->hdr_len + hdr->type_off + hdr->type_len;
	str_end = (uint64_t)hdr->hdr_len + hdr->str_off + hdr->str_len;
	if (type_end > size || str_end > size || (hdr->type_off & 3) || (hdr->type_len & 3) ||
	    !hdr->str_len) {
		pr_warn("btf: type or string section out of bounds\n");
		return -EINVAL;
	}
	btf->strs = (const char *)data + hdr->hdr_len + hdr->str_off;
	btf->str_len = hdr->str_len;
	if (btf->strs[btf->str_len - 1] != '\0') {
		pr_warn("btf: string section not NUL-terminated\n");
		return -EINVAL;
	}
	types = (const uint8_t *)data + hdr->hdr_len + hdr->type_off;
	p = types;
	while (p < types + hdr->type_len) {
		const struct btf_type *t = (const struct btf_type *)p;
		size_t avail = (size_t)(types + hdr->type_len - p), extra;

		if (avail < sizeof(*t)) {
			err = -EINVAL;
			goto err_trunc;
		}
		extra = type_extra(t, avail, &err);
		if (err) {
			pr_warn("btf: type [%u]: unknown kind %u\n", btf->nr_types + 1,
				BTF_INFO_KIND(t->info));
			goto err_free;
		}
		if (extra > avail - sizeof(*t)) {
			err = -EINVAL;
			goto err_trunc;
		}
		if (btf->nr_types + 2 > cap) {
			const struct btf_type **n;

			cap = cap ? cap * 2 : 64;
			n = realloc(btf->types, cap * sizeof(*n));
			if (!n) {
				err = -ENOMEM;
				goto err_free;
			}
			btf->types = n;
		}
		btf->types[++btf->nr_types] = t;
		p += sizeof(*t) + extra;
	}
	if (!btf->types) {
		btf->types = calloc(1, sizeof(*btf->types));
		if (!btf->types)
			return -ENOMEM;
	}
	btf->types[0] = NULL;
	return 0;
err_trunc:
	pr_warn("btf: type [%u] truncated\n", btf->nr_types + 1);
err_free:
	__xbpf_btf_free(btf);
	return err;
}

void __xbpf_btf_free(struct xbpf_btf *btf)
{
	free(btf->types);
	memset(btf, 0, sizeof(*btf));
}

const struct btf_type *__xbpf_btf_type(const struct xbpf_btf *btf, uint32_t id)
{
	if (!id || id > btf->nr_types)
		return NULL;
	return btf->types[id];
}

const char *__xbpf_btf_str(const struct xbpf_btf *btf, uint32_t off)
{
	/* the section ends with NUL, so any in-range offset starts a valid string */
	if (off >= btf->str_len)
		return NULL;
	return btf->strs + off;
}

uint32_t __xbpf_btf_find_datasec(const struct xbpf_btf *btf, const char *name)
{
	uint32_t id;

	for (id = 1; id <= btf->nr_types; id++) {
		const struct btf_type *t = btf->types[id];
		const char *n;

		if (BTF_INFO_KIND(t->info) != BTF_KIND_DATASEC)
			continue;
		n = __xbpf_btf_str(btf, t->name_off);
		if (n && !strcmp(n, name))
			return id;
	}
	return 0;
}

bool __xbpf_btf_datasec_has_global(const struct xbpf_btf *btf, const char *name)
{
	uint32_t id = __xbpf_btf_find_datasec(btf, name), i;
	const struct btf_type *sec = __xbpf_btf_type(btf, id);
	const struct btf_var_secinfo *vs;

	if (!sec)
		return false;
	vs = (const struct btf_var_secinfo *)(sec + 1);
	for (i = 0; i < BTF_INFO_VLEN(sec->info); i++) {
		const struct btf_type *var = __xbpf_btf_type(btf, vs[i].type);

		if (var && BTF_INFO_KIND(var->info) == BTF_KIND_VAR &&
		    ((const struct btf_var *)(var + 1))->linkage != BTF_VAR_STATIC)
			return true;
	}
	return false;
}

int __xbpf_btf_find_var(const struct xbpf_btf *btf, const char *name, const char **ret_sec,
			uint32_t *ret_off, uint32_t *ret_size)
{
	uint32_t id, i;

	for (id = 1; id <= btf->nr_types; id++) {
		const struct btf_type *sec = btf->types[id];
		const struct btf_var_secinfo *vs;

		if (BTF_INFO_KIND(sec->info) != BTF_KIND_DATASEC)
			continue;
		vs = (const struct btf_var_secinfo *)(sec + 1);
		for (i = 0; i < BTF_INFO_VLEN(sec->info); i++) {
			const struct btf_type *var = __xbpf_btf_type(btf, vs[i].type);
			const char *n;

			if (!var || BTF_INFO_KIND(var->info) != BTF_KIND_VAR)
				continue;
			n = __xbpf_btf_str(btf, var->name_off);
			if (!n || strcmp(n, name))
				continue;
			*ret_sec = __xbpf_btf_str(btf, sec->name_off);
			*ret_off = vs[i].offset;
			*ret_size = vs[i].size;
			return *ret_sec ? 0 : -ENOENT;
		}
	}
	return -ENOENT;
}

const struct btf_type *__xbpf_btf_skip_mods(const struct xbpf_btf *btf, uint32_t id, uint32_t *ret_id)
{
	const struct btf_type *t = NULL;

	for (int depth = 0; depth < MAX_RESOLVE_DEPTH; depth++) {
		t = __xbpf_btf_type(btf, id);
		if (!t)
			break;
		switch (BTF_INFO_KIND(t->info)) {
		case BTF_KIND_TYPEDEF:
		case BTF_KIND_VOLATILE:
		case BTF_KIND_CONST:
		case BTF_KIND_RESTRICT:
		case BTF_KIND_TYPE_TAG:
			id = t->type;
			t = NULL; /* a chain longer than MAX_RESOLVE_DEPTH resolves to nothing */
			continue;
		}
		break;
	}
	if (ret_id)
		*ret_id = id;
	return t;
}

/* btf__resolve_size(): bytes of a type. */
static int resolve_size(const struct xbpf_btf *btf, uint32_t id, uint64_t *ret_size)
{
	uint64_t nelems = 1, size;
	int depth;

	for (depth = 0; depth < MAX_RESOLVE_DEPTH; depth++) {
		const struct btf_type *t = __xbpf_btf_type(btf, id);

		if (!t)
			return -EINVAL;
		switch (BTF_INFO_KIND(t->info)) {
		case BTF_KIND_INT:
		case BTF_KIND_STRUCT:
		case BTF_KIND_UNION:
		case BTF_KIND_ENUM:
		case BTF_KIND_ENUM64:
		case BTF_KIND_DATASEC:
		case BTF_KIND_FLOAT:
			size = t->size;
			goto done;
		case BTF_KIND_PTR:
			size = 8;
			goto done;
		case BTF_KIND_TYPEDEF:
		case BTF_KIND_VOLATILE:
		case BTF_KIND_CONST:
		case BTF_KIND_RESTRICT:
		case BTF_KIND_VAR:
		case BTF_KIND_TYPE_TAG:
			id = t->type;
			break;
		case BTF_KIND_ARRAY: {
			const struct btf_array *a = (const struct btf_array *)(t + 1);

			if (__builtin_mul_overflow(nelems, (uint64_t)a->nelems, &nelems) ||
			    nelems > UINT32_MAX)
				return -E2BIG;
			id = a->type;
			break;
		}
		default:
			return -EINVAL;
		}
	}
	return -ELOOP;
done:
	if (__builtin_mul_overflow(nelems, size, &size) || size > UINT32_MAX)
		return -E2BIG;
	*ret_size = size;
	return 0;
}

/* __uint(name, val) is `int (*name)[val]`: read val. */
static int map_field_int(const struct xbpf_btf *btf, const char *map, const char *field,
			 uint32_t type, uint32_t *ret_val)
{
	const struct btf_type *t = __xbpf_btf_skip_mods(btf, type, NULL), *arr;

	if (!t || BTF_INFO_KIND(t->info) != BTF_KIND_PTR) {
		pr_warn("btf: map '%s': attr '%s': expected PTR\n", map, field);
		return -EINVAL;
	}
	arr = __xbpf_btf_skip_mods(btf, t->type, NULL);
	if (!arr || BTF_INFO_KIND(arr->info) != BTF_KIND_ARRAY) {
		pr_warn("btf: map '%s': attr '%s': expected ARRAY\n", map, field);
		return -EINVAL;
	}
	*ret_val = ((const struct btf_array *)(arr + 1))->nelems;
	return 0;
}

/* The struct bpf_spin_lock member of a map's value type T (`T *value`), if any. */
static int value_spin_lock(const struct xbpf_btf *btf, const char *map, uint32_t type,
			   struct xbpf_map_spec *spec)
{
	const struct btf_type *t = __xbpf_btf_skip_mods(btf, type, NULL), *v;
	const struct btf_member *m;

	spec->value_btf = true;
	v = t && BTF_INFO_KIND(t->info) == BTF_KIND_PTR ? __xbpf_btf_skip_mods(btf, t->type, NULL) : NULL;
	if (!v || BTF_INFO_KIND(v->info) != BTF_KIND_STRUCT)
		return 0;
	m = (const struct btf_member *)(v + 1);
	for (uint32_t i = 0; i < BTF_INFO_VLEN(v->info); i++) {
		const struct btf_type *mt = __xbpf_btf_skip_mods(btf, m[i].type, NULL);
		const char *name = mt ? __xbpf_btf_str(btf, mt->name_off) : NULL;
		uint32_t off = BTF_INFO_KFLAG(v->info) ? BTF_MEMBER_BIT_OFFSET(m[i].offset) : m[i].offset;

		if (!mt || BTF_INFO_KIND(mt->info) != BTF_KIND_STRUCT || !name ||
		    strcmp(name, "bpf_spin_lock"))
			continue;
		if (spec->has_spin_lock || off % 32) {
			pr_warn("btf: map '%s': more than one or a misaligned bpf_spin_lock\n", map);
			return -EINVAL;
		}
		spec->has_spin_lock = true;
		spec->spin_lock_off = off / 8;
	}
	return 0;
}

/* __type(name, T) is `T *name`: size of T. */
static int map_field_size(const struct xbpf_btf *btf, const char *map, const char *field,
			  uint32_t type, uint32_t *ret_size)
{
	const struct btf_type *t = __xbpf_btf_skip_mods(btf, type, NULL);
	uint64_t size;
	int err;

	if (!t || BTF_INFO_KIND(t->info) != BTF_KIND_PTR) {
		pr_warn("btf: map '%s': attr '%s': expected PTR\n", map, field);
		return -EINVAL;
	}
	err = resolve_size(btf, t->type, &size);
	if (err) {
		pr_warn("btf: map '%s': can't size type of '%s'\n", map, field);
		return err;
	}
	*ret_size = (uint32_t)size;
	return 0;
}

static int parse_map_def(const struct xbpf_btf *btf, const char *map_name,
			 const struct btf_type *def, struct xbpf_map_spec *spec,
			 struct xbpf_btf_map_def *outer, bool is_inner)
{
	const struct btf_member *m = (const struct btf_member *)(def + 1);
	uint32_t i, vlen = BTF_INFO_VLEN(def->info), key_size = 0, value_size = 0;
	bool has_key_size = false, has_value_size = false;
	int err;

	for (i = 0; i < vlen; i++) {
		const char *name = __xbpf_btf_str(btf, m[i].name_off);
		uint32_t val;

		if (!name || !*name) {
			pr_warn("btf: map '%s': member %u has no name\n", map_name, i);
			return -EINVAL;
		}
		if (!strcmp(name, "type")) {
			err = map_field_int(btf, map_name, name, m[i].type, &val);
			if (err)
				return err;
			spec->type = (enum xbpf_map_type)val;
		} else if (!strcmp(name, "max_entries")) {
			err = map_field_int(btf, map_name, name, m[i].type, &spec->max_entries);
			if (err)
				return err;
		} else if (!strcmp(name, "map_flags")) {
			err = map_field_int(btf, map_name, name, m[i].type, &spec->map_flags);
			if (err)
				return err;
		} else if (!strcmp(name, "key_size") || !strcmp(name, "value_size") ||
			   !strcmp(name, "key") || !strcmp(name, "value")) {
			/* __uint(key_size, N) and __type(key, T) may both appear, if they agree. */
			bool is_key = name[0] == 'k';
			uint32_t *size = is_key ? &key_size : &value_size;
			bool *has_size = is_key ? &has_key_size : &has_value_size;

			if (strstr(name, "_size"))
				err = map_field_int(btf, map_name, name, m[i].type, &val);
			else
				err = map_field_size(btf, map_name, name, m[i].type, &val);
			if (err)
				return err;
			if (*has_size && *size != val)
				goto err_conflict;
			if (!strcmp(name, "value") && (err = value_spin_lock(btf, map_name, m[i].type, spec)))
				return err;
			*size = val;
			*has_size = true;
		} else if (!strcmp(name, "values")) {
			const struct btf_type *arr = __xbpf_btf_skip_mods(btf, m[i].type, NULL), *ptr, *inner;

			if (is_inner || !outer) {
				pr_warn("btf: map '%s': multi-level map-in-map\n", map_name);
				return -EINVAL;
			}
			if (i != vlen - 1 || !arr || BTF_INFO_KIND(arr->info) != BTF_KIND_ARRAY) {
				pr_warn("btf: map '%s': 'values' must be the last member, an array\n",
					map_name);
				return -EINVAL;
			}
			ptr = __xbpf_btf_skip_mods(btf, ((const struct btf_array *)(arr + 1))->type, NULL);
			if (!ptr || BTF_INFO_KIND(ptr->info) != BTF_KIND_PTR) {
				pr_warn("btf: map '%s': 'values' must hold pointers\n", map_name);
				return -EINVAL;
			}
			inner = __xbpf_btf_skip_mods(btf, ptr->type, NULL);
			if (!inner || BTF_INFO_KIND(inner->info) != BTF_KIND_STRUCT) {
				pr_warn("btf: map '%s': inner map definition is not a struct\n", map_name);
				return -EINVAL;
			}
			if (m[i].offset % 64) {
				pr_warn("btf: map '%s': 'values' not 8-byte aligned\n", map_name);
				return -EINVAL;
			}
			memset(&outer->inner, 0, sizeof(outer->inner));
			snprintf(outer->inner.name, sizeof(outer->inner.name), "%.*s.inner",
				 XBPF_MAP_NAME_LEN - 8, map_name);
			err = parse_map_def(btf, map_name, inner, &outer->inner, NULL, true);
			if (err)
				return err;
			outer->has_inner = true;
			outer->values_off = m[i].offset / 8;
			/* the slots hold map references: 4-byte ids as in bpf(2) */
			value_size = 4;
			has_value_size = true;
		} else if (!strcmp(name, "pinning") || !strcmp(name, "numa_node") ||
			   !strcmp(name, "map_extra")) {
			/* meaningless in userspace */
		} else {
			pr_warn("btf: map '%s': unknown field '%s', ignoring\n", map_name, name);
		}
	}
	spec->key_size = key_size;
	spec->value_size = value_size;
	return 0;
err_conflict:
	pr_warn("btf: map '%s': conflicting key/value sizes\n", map_name);
	return -EINVAL;
}

int __xbpf_btf_map_defs(const struct xbpf_btf *btf, struct xbpf_btf_map_def **ret_defs,
			size_t *ret_cnt)
{
	const struct btf_var_secinfo *vs;
	const struct btf_type *sec;
	struct xbpf_btf_map_def *defs;
	uint32_t i, vlen, sec_id;
	int err;

	*ret_defs = NULL;
	*ret_cnt = 0;
	sec_id = __xbpf_btf_find_datasec(btf, ".maps");
	if (!sec_id) {
		pr_warn("btf: no DATASEC '.maps' for the .maps section\n");
		return -EINVAL;
	}
	sec = __xbpf_btf_type(btf, sec_id);
	vlen = BTF_INFO_VLEN(sec->info);
	if (!vlen)
		return 0;
	defs = calloc(vlen, sizeof(*defs));
	if (!defs)
		return -ENOMEM;
	vs = (const struct btf_var_secinfo *)(sec + 1);
	for (i = 0; i < vlen; i++) {
		const struct btf_type *var = __xbpf_btf_type(btf, vs[i].type), *def;
		const char *name;

		if (!var || BTF_INFO_KIND(var->info) != BTF_KIND_VAR) {
			pr_warn("btf: .maps entry %u is not a variable\n", i);
			err = -EINVAL;
			goto err_free;
		}
		name = __xbpf_btf_str(btf, var->name_off);
		if (!name || !*name || strlen(name) >= XBPF_MAP_NAME_LEN) {
			pr_warn("btf: .maps entry %u: bad or too long name\n", i);
			err = -EINVAL;
			goto err_free;
		}
		def = __xbpf_btf_skip_mods(btf, var->type, NULL);
		if (!def || BTF_INFO_KIND(def->info) != BTF_KIND_STRUCT) {
			pr_warn("btf: map '%s': definition is not a struct\n", name);
			err = -EINVAL;
			goto err_free;
		}
		if (vs[i].size < def->size) {
			pr_warn("btf: map '%s': variable smaller than its type\n", name);
			err = -EINVAL;
			goto err_free;
		}
		snprintf(defs[i].name, sizeof(defs[i].name), "%s", name);
		snprintf(defs[i].spec.name, sizeof(defs[i].spec.name), "%s", name);
		defs[i].sec_off = vs[i].offset;
		defs[i].sec_size = vs[i].size;
		err = parse_map_def(btf, name, def, &defs[i].spec, &defs[i], false);
		if (err)
			goto err_free;
	}
	*ret_defs = defs;
	*ret_cnt = vlen;
	return 0;
err_free:
	free(defs);
	return err;
}

/* .BTF.ext: header, then line_info = rec_size, { sec_name_off, num_info, records }... */
struct btf_ext_hdr {
	uint16_t magic;
	uint8_t version;
	uint8_t flags;
	uint32_t hdr_len;
	uint32_t func_info_off;
	uint32_t func_info_len;
	uint32_t line_info_off;
	uint32_t line_info_len;
};

struct btf_line_rec {
	uint32_t insn_off; /* bytes */
	uint32_t file_name_off;
	uint32_t line_off;
	uint32_t line_col;
};

int __xbpf_btf_ext_lines(const struct xbpf_btf *btf, const void *ext, size_t ext_size,
			 const char *sec_name, struct xbpf_btf_line **ret_lines, size_t *ret_cnt)
{
	struct btf_ext_hdr hdr_copy, *hdr = &hdr_copy;
	const uint8_t *p, *end;
	uint32_t rec_size;
	uint64_t start;

	*ret_lines = NULL;
	*ret_cnt = 0;
	/* the section may sit at any offset of the image: copy, never cast */
	if (ext_size >= sizeof(hdr_copy))
		memcpy(&hdr_copy, ext, sizeof(hdr_copy));
	if (ext_size < sizeof(*hdr) || hdr->magic != BTF_MAGIC_LE || hdr->version != 1 ||
	    hdr->hdr_len < sizeof(*hdr) || hdr->hdr_len > ext_size) {
		pr_warn("btf.ext: bad header\n");
		return -EINVAL;
	}
	start = (uint64_t)hdr->hdr_len + hdr->line_info_off;
	if (!hdr->line_info_len)
		return 0;
	if (start + hdr->line_info_len > ext_size || hdr->line_info_len < 4 || (start & 3)) {
		pr_warn("btf.ext: line info out of bounds\n");
		return -EINVAL;
	}
	p = (const uint8_t *)ext + start;
	end = p + hdr->line_info_len;
	memcpy(&rec_size, p, 4);
	p += 4;
	if (rec_size < sizeof(struct btf_line_rec) || rec_size > 256 || (rec_size & 3)) {
		pr_warn("btf.ext: line info record size %u\n", rec_size);
		return -EINVAL;
	}
	while (p < end) {
		uint32_t name_off, num, i;
		const char *name;

		if ((size_t)(end - p) < 8)
			goto err_trunc;
		memcpy(&name_off, p, 4);
		memcpy(&num, p + 4, 4);
		p += 8;
		if (num > (size_t)(end - p) / rec_size)
			goto err_trunc;
		name = __xbpf_btf_str(btf, name_off);
		if (!name) {
			pr_warn("btf.ext: section name offset %u out of bounds\n", name_off);
			free(*ret_lines);
			*ret_lines = NULL;
			*ret_cnt = 0;
			return -EINVAL;
		}
		if (strcmp(name, sec_name) || *ret_lines) {
			p += (size_t)num * rec_size;
			continue;
		}
		*ret_lines = calloc(num ? num : 1, sizeof(**ret_lines));
		if (!*ret_lines)
			return -ENOMEM;
		for (i = 0; i < num; i++) {
			struct btf_line_rec r;

			memcpy(&r, p + (size_t)i * rec_size, sizeof(r));
			if (r.insn_off % XBPF_INSN_SIZE) {
				pr_warn("btf.ext: line info insn offset %u unaligned\n", r.insn_off);
				free(*ret_lines);
				*ret_lines = NULL;
				*ret_cnt = 0;
				return -EINVAL;
			}
			(*ret_lines)[i] = (struct xbpf_btf_line){
				.insn = r.insn_off / XBPF_INSN_SIZE,
				.line = r.line_col >> 10,
				.col = r.line_col & 0x3ff,
				.file = __xbpf_btf_str(btf, r.file_name_off),
				.text = __xbpf_btf_str(btf, r.line_off),
			};
		}
		*ret_cnt = num;
		p += (size_t)num * rec_size;
	}
	return 0;
err_trunc:
	pr_warn("btf.ext: line info truncated\n");
	free(*ret_lines);
	*ret_lines = NULL;
	*ret_cnt = 0;
	return -EINVAL;
}
