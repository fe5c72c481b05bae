/* SPDX-License-Identifier: MIT */
/* elf_impl.h - the validated ELF view shared by elf.c and link.c (private). */
#ifndef XBPF_ELF_IMPL_H
#define XBPF_ELF_IMPL_H

#include <elf.h>

#include "core_impl.h"

#ifndef EM_BPF
#define EM_BPF 247
#endif
#ifndef R_BPF_64_64
#define R_BPF_64_64 1
#endif
#define R_BPF_64_ABS64 2
#define R_BPF_64_ABS32 3
#define R_BPF_64_NODYLD32 4
#ifndef R_BPF_64_32
#define R_BPF_64_32 10
#endif

struct xbpf_elf_rel {
	uint64_t off; /* byte offset in the target section, < its size */
	uint32_t sym; /* valid symbol index, not 0 */
	uint32_t type;
};

struct xbpf_elf_sec {
	Elf64_Shdr shdr;
	const char *name;    /* NUL-terminated inside the image */
	const uint8_t *data; /* NULL for NOBITS/NULL sections */
	uint64_t size;	     /* data..data+size is inside the image (if data) */
	struct xbpf_elf_rel *rels; /* sorted by offset */
	size_t nrels;
};

struct xbpf_elf_sym {
	Elf64_Sym sym; /* st_shndx < shnum or a reserved index */
	const char *name;
};

/* A function: a STT_FUNC symbol with a checked range in an exec section. */
struct xbpf_elf_func {
	const char *name;
	uint32_t sec;
	uint32_t start; /* in instructions, inside the section */
	uint32_t len;
	bool global;
};

struct xbpf_elf {
	const uint8_t *buf;
	size_t size;
	struct xbpf_elf_sec *secs;
	uint32_t shnum;
	uint32_t symtab_idx;
	struct xbpf_elf_sym *syms;
	uint32_t nsyms;
	uint32_t maps_idx; /* 0: no .maps */
	int *sec_map;	   /* [shnum]: object map index of a data section, or -1 */
	struct xbpf_btf_map_def *map_defs;
	size_t nmap_defs;
	bool has_btf;
	struct xbpf_btf btf;
	void *btf_copy;
	const void *btf_ext;
	size_t btf_ext_size;
	struct xbpf_elf_func *funcs; /* sorted by section, start */
	size_t nfuncs;
};

const struct xbpf_elf_rel *__xbpf_elf_find_rel(const struct xbpf_elf_sec *s, uint64_t off);
const char *__xbpf_elf_sec_name(const struct xbpf_elf *elf, uint32_t idx);
/* Build obj's programs: functions, relocations, subprogram linking, line info. */
int __xbpf_elf_link(struct xbpf_object *obj, struct xbpf_elf *elf);

#endif /* XBPF_ELF_IMPL_H */
