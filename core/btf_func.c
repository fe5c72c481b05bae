// SPDX-License-Identifier: MIT
/*
 * btf_func.c - functions' BTF (.BTF.ext func_info): which BTF FUNC each
 * function of a program is, and the signature the verifier types a global
 * function with, after the kernel's btf_prepare_func_args(): int and enum
 * arguments are scalars, a pointer to the program type's context struct is
 * the context, any other pointer is memory of its target's size (or NULL),
 * and the function must return int or enum.  An argument's "arg:" decl
 * tags come first, as in the kernel: arg:ctx makes a pointer the context
 * (void * or the program type's own struct), arg:nonnull makes memory that
 * is never NULL.  What the kernel cannot type is kept as its errno and
 * message, reported only if a global function is verified.
 */
#include <linux/btf.h>
#include <stdio.h>
#include <stdlib.h>

#include "core_impl.h"

#define BTF_MAGIC_LE 0xeB9F
#define MAX_DEPTH 32

/* Offsets in struct btf_ext_header (linux/btf.h has no UAPI struct for it). */
#define EXT_HDR_LEN_OFF 4
#define EXT_FUNC_OFF 8
#define EXT_FUNC_LEN 12
#define EXT_MIN_HDR 24

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

int __xbpf_btf_ext_funcs(const struct xbpf_btf *btf, const void *ext, size_t ext_size,
			 const char *sec_name, struct xbpf_func_info **ret_recs, size_t *ret_cnt)
{
	const uint8_t *b = ext, *p, *end;
	uint32_t hdr_len, off, len, rec_size;

	*ret_recs = NULL;
	*ret_cnt = 0;
	if (ext_size < EXT_MIN_HDR || rd32(b) != (BTF_MAGIC_LE | 1u << 16))
		return -EINVAL;
	hdr_len = rd32(b + EXT_HDR_LEN_OFF);
	off = rd32(b + EXT_FUNC_OFF);
	len = rd32(b + EXT_FUNC_LEN);
	if (hdr_len < EXT_MIN_HDR || hdr_len > ext_size)
		return -EINVAL;
	if (!len)
		return 0;
	if ((uint64_t)hdr_len + off + len > ext_size || len < 4) {
		pr_warn("btf.ext: func info out of bounds\n");
		return -EINVAL;
	}
	p = b + hdr_len + off;
	end = p + len;
	rec_size = rd32(p);
	p += 4;
	if (rec_size < 8 || rec_size > 256 || (rec_size & 3)) {
		pr_warn("btf.ext: func info record size %u\n", rec_size);
		return -EINVAL;
	}
	while (p < end) {
		uint32_t name_off, num;
		const char *name;

		if ((size_t)(end - p) < 8)
			goto err_trunc;
		name_off = rd32(p);
		num = rd32(p + 4);
		p += 8;
		if (num > (size_t)(end - p) / rec_size)
			goto err_trunc;
		name = __xbpf_btf_str(btf, name_off);
		if (!name)
			goto err_trunc;
		if (strcmp(name, sec_name) || *ret_recs) {
			p += (size_t)num * rec_size;
			continue;
		}
		*ret_recs = calloc(num ? num : 1, sizeof(**ret_recs));
		if (!*ret_recs)
			return -ENOMEM;
		for (uint32_t i = 0; i < num; i++) {
			uint32_t insn_off = rd32(p + (size_t)i * rec_size);

			if (insn_off % XBPF_INSN_SIZE)
				goto err_trunc;
			(*ret_recs)[i].insn_off = insn_off / XBPF_INSN_SIZE;
			(*ret_recs)[i].type_id = rd32(p + (size_t)i * rec_size + 4);
		}
		*ret_cnt = num;
		p += (size_t)num * rec_size;
	}
	return 0;
err_trunc:
	pr_warn("btf.ext: func info malformed\n");
	free(*ret_recs);
	*ret_recs = NULL;
	*ret_cnt = 0;
	return -EINVAL;
}

/* The kernel's btf_type_str(): its name for a kind. */
static const char *kind_str(const struct btf_type *t)
{
	static const char *const names[] = {
		[BTF_KIND_UNKN] = "UNKNOWN",	[BTF_KIND_INT] = "INT",
		[BTF_KIND_PTR] = "PTR",		[BTF_KIND_ARRAY] = "ARRAY",
		[BTF_KIND_STRUCT] = "STRUCT",	[BTF_KIND_UNION] = "UNION",
		[BTF_KIND_ENUM] = "ENUM",	[BTF_KIND_FWD] = "FWD",
		[BTF_KIND_TYPEDEF] = "TYPEDEF", [BTF_KIND_VOLATILE] = "VOLATILE",
		[BTF_KIND_CONST] = "CONST",	[BTF_KIND_RESTRICT] = "RESTRICT",
		[BTF_KIND_FUNC] = "FUNC",	[BTF_KIND_FUNC_PROTO] = "FUNC_PROTO",
		[BTF_KIND_VAR] = "VAR",		[BTF_KIND_DATASEC] = "DATASEC",
		[BTF_KIND_FLOAT] = "FLOAT",	[BTF_KIND_DECL_TAG] = "DECL_TAG",
		[BTF_KIND_TYPE_TAG] = "TYPE_TAG", [BTF_KIND_ENUM64] = "ENUM64",
	};
	uint32_t k = t ? BTF_INFO_KIND(t->info) : BTF_KIND_UNKN;

	return k < sizeof(names) / sizeof(names[0]) && names[k] ? names[k] : "UNKNOWN";
}

static bool is_scalar(const struct btf_type *t)
{
	uint32_t k = t ? BTF_INFO_KIND(t->info) : BTF_KIND_UNKN;

	return k == BTF_KIND_INT || k == BTF_KIND_ENUM || k == BTF_KIND_ENUM64;
}

/* The context struct's names for a program type (btf_is_prog_ctx_type()). */
static bool is_ctx_struct(enum xbpf_prog_type type, const char *name)
{
	switch (type) {
	case XBPF_PROG_SOCKET_FILTER:
	case XBPF_PROG_SCHED_CLS:
	case XBPF_PROG_SCHED_ACT:
		return !strcmp(name, "__sk_buff") || !strcmp(name, "sk_buff");
	case XBPF_PROG_XDP:
		return !strcmp(name, "xdp_md") || !strcmp(name, "xdp_buff");
	default:
		return false; /* tracepoints' context is not a struct */
	}
}

/* The context struct btf_validate_prog_ctx_type() wants an arg:ctx pointer to name; NULL: void * only. */
static const char *canonical_ctx_struct(enum xbpf_prog_type type)
{
	switch (type) {
	case XBPF_PROG_SOCKET_FILTER:
	case XBPF_PROG_SCHED_CLS:
	case XBPF_PROG_SCHED_ACT:
		return "__sk_buff";
	case XBPF_PROG_XDP:
		return "xdp_md";
	default:
		return NULL;
	}
}

enum arg_tag {
	ARG_TAG_CTX = 1,
	ARG_TAG_NONNULL = 2,
};

/*
 * The "arg:" decl tags of argument arg of FUNC fn_id, as ARG_TAG_* bits;
 * a tag the kernel knows but xlb does not type (trusted, untrusted,
 * nullable, arena: kernel objects), or one nobody knows, fails.
 */
static int arg_tags(const struct xbpf_btf *btf, uint32_t fn_id, uint32_t arg, unsigned int *ret_tags,
		    char *msg, size_t msg_len)
{
	static const char *const kernel_only[] = { "trusted", "untrusted", "nullable", "arena" };

	*ret_tags = 0;
	for (uint32_t id = 1; id <= btf->nr_types; id++) {
		const struct btf_type *t = __xbpf_btf_type(btf, id);
		const struct btf_decl_tag *dt = (const struct btf_decl_tag *)(t + 1);
		const char *name;

		if (BTF_INFO_KIND(t->info) != BTF_KIND_DECL_TAG || t->type != fn_id ||
		    dt->component_idx != (int32_t)arg)
			continue;
		name = __xbpf_btf_str(btf, t->name_off);
		if (!name || strncmp(name, "arg:", 4))
			continue;
		name += 4;
		if (!strcmp(name, "ctx")) {
			*ret_tags |= ARG_TAG_CTX;
			continue;
		}
		if (!strcmp(name, "nonnull")) {
			*ret_tags |= ARG_TAG_NONNULL;
			continue;
		}
		for (size_t k = 0; k < sizeof(kernel_only) / sizeof(kernel_only[0]); k++)
			if (!strcmp(name, kernel_only[k])) {
				snprintf(msg, msg_len, "arg#%u tag 'arg:%s' (kernel objects) is not supported by xlb\n",
					 arg, name);
				return -EOPNOTSUPP;
			}
		snprintf(msg, msg_len, "arg#%u has unsupported set of tags\n", arg);
		return -EOPNOTSUPP;
	}
	return 0;
}

/* btf_validate_prog_ctx_type(): an arg:ctx pointer is void * or to the program type's own struct. */
static int check_ctx_tag(const struct xbpf_btf *btf, const struct btf_type *ptr, uint32_t arg,
			 enum xbpf_prog_type type, char *msg, size_t msg_len)
{
	const struct btf_type *t = __xbpf_btf_type(btf, ptr->type);
	const char *want = canonical_ctx_struct(type), *name;

	/* qualifiers, but not typedefs: no context type of these program types is one */
	for (int d = 0; t && d < MAX_DEPTH; d++) {
		uint32_t k = BTF_INFO_KIND(t->info);

		if (k != BTF_KIND_VOLATILE && k != BTF_KIND_CONST && k != BTF_KIND_RESTRICT &&
		    k != BTF_KIND_TYPE_TAG)
			break;
		t = __xbpf_btf_type(btf, t->type);
	}
	if (!t)
		return 0; /* void *ctx: always the context */
	name = __xbpf_btf_str(btf, t->name_off);
	if (!name || !*name) {
		snprintf(msg, msg_len, "arg#%u type doesn't have a name\n", arg);
		return -EINVAL;
	}
	if (!want) {
		snprintf(msg, msg_len, "arg#%u should be void pointer\n", arg);
		return -EINVAL;
	}
	if (BTF_INFO_KIND(t->info) != BTF_KIND_STRUCT || strcmp(name, want)) {
		snprintf(msg, msg_len, "arg#%u should be `struct %s *`\n", arg, want);
		return -EINVAL;
	}
	return 0;
}

/* btf_resolve_size(): bytes of the type at id (arrays multiplied out). */
static int resolve_size(const struct xbpf_btf *btf, uint32_t id, uint32_t *ret_size)
{
	uint64_t nelems = 1;

	for (int d = 0; d < MAX_DEPTH; d++) {
		const struct btf_type *t = __xbpf_btf_skip_mods(btf, id, &id);
		uint64_t size;

		if (!t)
			return -EINVAL;
		switch (BTF_INFO_KIND(t->info)) {
		case BTF_KIND_INT:
		case BTF_KIND_STRUCT:
		case BTF_KIND_UNION:
		case BTF_KIND_ENUM:
		case BTF_KIND_ENUM64:
		case BTF_KIND_FLOAT:
		case BTF_KIND_DATASEC:
			size = t->size;
			break;
		case BTF_KIND_PTR:
			size = 8;
			break;
		case BTF_KIND_ARRAY: {
			const struct btf_array *a = (const struct btf_array *)(t + 1);

			if (__builtin_mul_overflow(nelems, (uint64_t)a->nelems, &nelems) ||
			    nelems > UINT32_MAX)
				return -E2BIG;
			id = a->type;
			continue;
		}
		default:
			return -EINVAL;
		}
		if (__builtin_mul_overflow(nelems, size, &size) || size > UINT32_MAX)
			return -E2BIG;
		*ret_size = (uint32_t)size;
		return 0;
	}
	return -E2BIG;
}

int __xbpf_btf_func_sig(const struct xbpf_btf *btf, uint32_t type_id, enum xbpf_prog_type type,
			struct xbpf_func_sig *sig)
{
	const struct btf_type *fn = __xbpf_btf_type(btf, type_id), *proto, *t;
	const struct btf_param *params;
	uint32_t nargs;

	memset(sig, 0, sizeof(*sig));
	if (!fn || BTF_INFO_KIND(fn->info) != BTF_KIND_FUNC)
		return -EINVAL;
	proto = __xbpf_btf_type(btf, fn->type);
	if (!proto || BTF_INFO_KIND(proto->info) != BTF_KIND_FUNC_PROTO)
		return -EINVAL;
	sig->name = __xbpf_btf_str(btf, fn->name_off);
	if (!sig->name)
		return -EINVAL;
	sig->global = BTF_INFO_VLEN(fn->info) == BTF_FUNC_GLOBAL;
	params = (const struct btf_param *)(proto + 1);
	nargs = BTF_INFO_VLEN(proto->info);
	t = __xbpf_btf_skip_mods(btf, proto->type, NULL);
	sig->ret_scalar = is_scalar(t);
	if (nargs > XBPF_FUNC_MAX_ARGS) {
		sig->err = -EINVAL;
		snprintf(sig->err_msg, sizeof(sig->err_msg),
			 "Global function %s() with %u > %d args. Buggy compiler.\n", sig->name, nargs,
			 XBPF_FUNC_MAX_ARGS);
		return 0;
	}
	/* void too: this kernel's global functions hand back a scalar. */
	if (!sig->ret_scalar) {
		sig->err = -EINVAL;
		snprintf(sig->err_msg, sizeof(sig->err_msg),
			 "Global function %s() doesn't return scalar. Only those are supported.\n",
			 sig->name);
		return 0;
	}
	sig->arg_cnt = (int)nargs;
	for (uint32_t i = 0; i < nargs; i++) {
		uint32_t ref_id = 0;
		unsigned int tags;
		int err;

		err = arg_tags(btf, type_id, i, &tags, sig->err_msg, sizeof(sig->err_msg));
		if (err) {
			sig->err = err;
			return 0;
		}
		t = __xbpf_btf_skip_mods(btf, params[i].type, NULL);
		if (t && BTF_INFO_KIND(t->info) == BTF_KIND_PTR) {
			const struct btf_type *ref = __xbpf_btf_skip_mods(btf, t->type, &ref_id);
			const char *rname = ref ? __xbpf_btf_str(btf, ref->name_off) : "";

			if ((tags & ARG_TAG_CTX) ||
			    (ref && (BTF_INFO_KIND(ref->info) == BTF_KIND_STRUCT) && rname &&
			     is_ctx_struct(type, rname))) {
				if (tags & ~ARG_TAG_CTX) {
					sig->err = -EINVAL;
					snprintf(sig->err_msg, sizeof(sig->err_msg),
						 "arg#%u has invalid combination of tags\n", i);
					return 0;
				}
				if ((tags & ARG_TAG_CTX) &&
				    (err = check_ctx_tag(btf, t, i, type, sig->err_msg, sizeof(sig->err_msg)))) {
					sig->err = err;
					return 0;
				}
				sig->args[i] = XBPF_FUNC_ARG_CTX;
				continue;
			}
			err = resolve_size(btf, ref_id, &sig->mem_size[i]);
			if (err) {
				sig->err = -EINVAL;
				snprintf(sig->err_msg, sizeof(sig->err_msg),
					 "arg#%u reference type('%s %s') size cannot be determined: %d\n",
					 i, kind_str(ref), rname ? rname : "", err);
				return 0;
			}
			sig->args[i] = tags & ARG_TAG_NONNULL ? XBPF_FUNC_ARG_MEM_NONNULL : XBPF_FUNC_ARG_MEM;
			continue;
		}
		if (tags) {
			sig->err = -EINVAL;
			snprintf(sig->err_msg, sizeof(sig->err_msg),
				 "arg#%u has pointer tag, but is not a pointer type\n", i);
			return 0;
		}
		if (is_scalar(t)) {
			sig->args[i] = XBPF_FUNC_ARG_SCALAR;
			continue;
		}
		sig->err = -EINVAL;
		snprintf(sig->err_msg, sizeof(sig->err_msg), "Arg#%u type %s in %s() is not supported yet.\n",
			 i, kind_str(t), sig->name);
		return 0;
	}
	return 0;
}

int __xbpf_prog_set_func_info(struct xbpf_object *obj, struct xbpf_prog *prog,
			      const struct xbpf_btf *btf, const struct xbpf_func_info *recs,
			      size_t cnt)
{
	struct xbpf_func_sig *sigs;

	if (!cnt)
		return 0;
	sigs = calloc(cnt, sizeof(*sigs));
	if (!sigs)
		return -ENOMEM;
	for (size_t i = 0; i < cnt; i++) {
		int err = __xbpf_btf_func_sig(btf, recs[i].type_id, prog->type, &sigs[i]);

		if (!err && !(sigs[i].name = __xbpf_object_strdup(obj, sigs[i].name, strlen(sigs[i].name))))
			err = -ENOMEM;
		if (err) {
			if (err != -ENOMEM)
				pr_warn("btf: func_info %zu: type id %u is not a FUNC with a FUNC_PROTO\n",
					i, recs[i].type_id);
			free(sigs);
			return err;
		}
		sigs[i].insn = recs[i].insn_off;
	}
	prog->sigs = sigs;
	prog->sig_cnt = cnt;
	return 0;
}

const struct xbpf_func_sig *__xbpf_prog_func_sigs(const struct xbpf_prog *prog, size_t *ret_cnt)
{
	*ret_cnt = prog ? prog->sig_cnt : 0;
	return prog ? prog->sigs : NULL;
}
