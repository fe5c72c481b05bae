// SPDX-License-Identifier: MIT
/* elf.c - ELF loading lands in the next step. */
#include "core_impl.h"

int __xbpf_elf_load(struct xbpf_object *obj, const void *buf, size_t size, int nr_cpus)
{
	pr_warn("elf: %s: ELF loading is not built yet\n", obj->name);
	return -EOPNOTSUPP;
}
