// SPDX-License-Identifier: MIT
/*
 * elf.c - reading `clang -target bpf` objects: a hand-written ELF64
 * little-endian parser, map creation from BTF-defined .maps and global
 * data sections, and the hand-off to the linker (link.c).
 *
 * Nothing in the file is trusted: every offset, size, index and string is
 * checked against the image before it is used, and any inconsistency ends
 * the load with -EINVAL (or -ENOTSUP for valid but unsupported features)
 * and a WARN naming the section.  The object is built completely or not at
 * all.
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>

#include "core_impl.h"
#include "elf_impl.h"

static const char *sec_name(const struct xbpf_elf *elf, uint32_t idx)
{
	return idx < elf->shnum ? elf->secs[idx].name : "?";
}

/* A NUL-terminated string at off inside section strtab, or NULL. */
static const char *elf_str(const struct xbpf_elf *elf, uint32_t strtab, uint64_t off)
{
	const struct xbpf_elf_sec *s = &elf->secs[strtab];
	const char *p;

	if (off >= s->size)
		return NULL;
	p = (const char *)s->data + off;
	if (!memchr(p, '\0', s->size - off))
		return NULL;
	return p;
}

static int parse_headers(struct xbpf_elf *elf)
{
	const Elf64_Ehdr *eh;
	Elf64_Ehdr ehdr;
	uint64_t sh_end;
	uint32_t i;

	if (elf->size < sizeof(ehdr)) {
		pr_warn("elf: %zu bytes is too small for an ELF header\n", elf->size);
		return -EINVAL;
	}
	memcpy(&ehdr, elf->buf, sizeof(ehdr));
	eh = &ehdr;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG)) {
		pr_warn("elf: bad magic\n");
		return -EINVAL;
	}
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB) {
		pr_warn("elf: not a 64-bit little-endian object\n");
		return -ENOTSUP;
	}
	if (eh->e_type != ET_REL || eh->e_machine != EM_BPF) {
		pr_warn("elf: not a BPF relocatable object (type %u, machine %u)\n", eh->e_type,
			eh->e_machine);
		return -EINVAL;
	}
	if (eh->e_shentsize != sizeof(Elf64_Shdr) || !eh->e_shnum || eh->e_shstrndx >= eh->e_shnum) {
		pr_warn("elf: bad section header table (entsize %u, count %u, strndx %u)\n",
			eh->e_shentsize, eh->e_shnum, eh->e_shstrndx);
		return -EINVAL;
	}
	sh_end = eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr);
	if (eh->e_shoff > elf->size || sh_end > elf->size) {
		pr_warn("elf: section headers out of bounds\n");
		return -EINVAL;
	}
	elf->shnum = eh->e_shnum;
	elf->secs = calloc(elf->shnum, sizeof(*elf->secs));
	if (!elf->secs)
		return -ENOMEM;
	for (i = 0; i < elf->shnum; i++) {
		struct xbpf_elf_sec *s = &elf->secs[i];

		memcpy(&s->shdr, elf->buf + eh->e_shoff + (size_t)i * sizeof(Elf64_Shdr),
		       sizeof(Elf64_Shdr));
		s->size = s->shdr.sh_size;
		if (s->shdr.sh_type != SHT_NOBITS && s->shdr.sh_type != SHT_NULL) {
			if (s->shdr.sh_offset > elf->size || s->size > elf->size - s->shdr.sh_offset) {
				pr_warn("elf: section %u offset out of bounds\n", i);
				return -EINVAL;
			}
			s->data = elf->buf + s->shdr.sh_offset;
		}
	}
	/* names need the section-name string table */
	if (elf->secs[eh->e_shstrndx].shdr.sh_type != SHT_STRTAB || !elf->secs[eh->e_shstrndx].size) {
		pr_warn("elf: section %u is not a string table\n", eh->e_shstrndx);
		return -EINVAL;
	}
	for (i = 0; i < elf->shnum; i++) {
		elf->secs[i].name = elf_str(elf, eh->e_shstrndx, elf->secs[i].shdr.sh_name);
		if (!elf->secs[i].name) {
			pr_warn("elf: section %u name out of bounds\n", i);
			return -EINVAL;
		}
	}
	return 0;
}

static int parse_symtab(struct xbpf_elf *elf)
{
	const struct xbpf_elf_sec *s = NULL, *strs;
	uint32_t i;

	for (i = 0; i < elf->shnum; i++) {
		if (elf->secs[i].shdr.sh_type != SHT_SYMTAB)
			continue;
		if (s) {
			pr_warn("elf: more than one symbol table\n");
			return -EINVAL;
		}
		s = &elf->secs[i];
		elf->symtab_idx = i;
	}
	if (!s) {
		pr_warn("elf: no symbol table\n");
		return -EINVAL;
	}
	if (s->shdr.sh_entsize != sizeof(Elf64_Sym) || s->size % sizeof(Elf64_Sym) ||
	    s->shdr.sh_link >= elf->shnum || s->shdr.sh_link == 0) {
		pr_warn("elf: section %u: bad symbol table\n", elf->symtab_idx);
		return -EINVAL;
	}
	strs = &elf->secs[s->shdr.sh_link];
	if (strs->shdr.sh_type != SHT_STRTAB || !strs->size) {
		pr_warn("elf: section %u: symbol names are not in a string table\n",
			(uint32_t)s->shdr.sh_link);
		return -EINVAL;
	}
	elf->nsyms = s->size / sizeof(Elf64_Sym);
	if (elf->nsyms > (1u << 24)) {
		pr_warn("elf: too many symbols\n");
		return -EINVAL;
	}
	elf->syms = calloc(elf->nsyms ? elf->nsyms : 1, sizeof(*elf->syms));
	if (!elf->syms)
		return -ENOMEM;
	for (i = 0; i < elf->nsyms; i++) {
		struct xbpf_elf_sym *sym = &elf->syms[i];

		memcpy(&sym->sym, s->data + (size_t)i * sizeof(Elf64_Sym), sizeof(Elf64_Sym));
		sym->name = elf_str(elf, s->shdr.sh_link, sym->sym.st_name);
		if (!sym->name) {
			pr_warn("elf: symbol %u name out of bounds\n", i);
			return -EINVAL;
		}
		/* special indices (ABS, COMMON, XINDEX) are only allowed unused */
		if (sym->sym.st_shndx >= elf->shnum && sym->sym.st_shndx < SHN_LORESERVE) {
			pr_warn("elf: symbol %u '%s' in section %u out of range\n", i, sym->name,
				sym->sym.st_shndx);
			return -EINVAL;
		}
	}
	return 0;
}

/* Sort key for relocations (by offset) and functions (by section, offset). */
static int cmp_rel(const void *a, const void *b)
{
	const struct xbpf_elf_rel *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

static int parse_relocs(struct xbpf_elf *elf)
{
	uint32_t i, j;

	for (i = 0; i < elf->shnum; i++) {
		const struct xbpf_elf_sec *s = &elf->secs[i];
		struct xbpf_elf_sec *target;
		size_t n;

		if (s->shdr.sh_type == SHT_RELA) {
			pr_warn("elf: section %u: RELA relocations are not used by BPF\n", i);
			return -ENOTSUP;
		}
		if (s->shdr.sh_type != SHT_REL)
			continue;
		if (s->shdr.sh_entsize != sizeof(Elf64_Rel) || s->size % sizeof(Elf64_Rel) ||
		    s->shdr.sh_info >= elf->shnum || s->shdr.sh_link != elf->symtab_idx) {
			pr_warn("elf: section %u: bad relocation section\n", i);
			return -EINVAL;
		}
		target = &elf->secs[s->shdr.sh_info];
		/* relocations of debug info are the DWARF consumer's business */
		if (!strncmp(target->name, ".debug", 6) || !strcmp(target->name, ".BTF") ||
		    !strcmp(target->name, ".BTF.ext"))
			continue;
		if (target->rels) {
			pr_warn("elf: section %u has two relocation sections\n", s->shdr.sh_info);
			return -EINVAL;
		}
		n = s->size / sizeof(Elf64_Rel);
		target->rels = calloc(n ? n : 1, sizeof(*target->rels));
		if (!target->rels)
			return -ENOMEM;
		target->nrels = n;
		for (j = 0; j < n; j++) {
			Elf64_Rel r;
			uint64_t sym;

			memcpy(&r, s->data + (size_t)j * sizeof(r), sizeof(r));
			sym = ELF64_R_SYM(r.r_info);
			if (sym >= elf->nsyms || sym == 0) {
				pr_warn("elf: section %u: relocation %u: symbol %llu out of range\n", i, j,
					(unsigned long long)sym);
				return -EINVAL;
			}
			if (r.r_offset >= target->size) {
				pr_warn("elf: section %u: relocation %u: offset out of bounds\n", i, j);
				return -EINVAL;
			}
			target->rels[j] = (struct xbpf_elf_rel){ .off = r.r_offset, .sym = (uint32_t)sym,
							    .type = (uint32_t)ELF64_R_TYPE(r.r_info) };
		}
		qsort(target->rels, n, sizeof(*target->rels), cmp_rel);
	}
	return 0;
}

static bool is_data_sec(const struct xbpf_elf_sec *s)
{
	const char *n = s->name;

	if (s->shdr.sh_type != SHT_PROGBITS && s->shdr.sh_type != SHT_NOBITS)
		return false;
	if (s->shdr.sh_flags & SHF_EXECINSTR)
		return false;
	return !strcmp(n, ".data") || !strcmp(n, ".rodata") || !strcmp(n, ".bss") ||
	       !strncmp(n, ".data.", 6) || !strncmp(n, ".rodata.", 8);
}

static int load_license(struct xbpf_object *obj, struct xbpf_elf *elf)
{
	uint32_t i;

	for (i = 0; i < elf->shnum; i++) {
		const struct xbpf_elf_sec *s = &elf->secs[i];
		size_t n;

		if (strcmp(s->name, "license"))
			continue;
		if (!s->data) {
			pr_warn("elf: license section has no data\n");
			return -EINVAL;
		}
		n = strnlen((const char *)s->data, s->size);
		if (n >= sizeof(obj->license))
			n = sizeof(obj->license) - 1;
		memcpy(obj->license, s->data, n);
		obj->license[n] = '\0';
	}
	return 0;
}

/* pin_root: the directory of shared maps, or NULL for a private map. */
static int add_map(struct xbpf_object *obj, const struct xbpf_map_spec *spec, int nr_cpus,
		   const char *pin_root)
{
	struct xbpf_map *map;
	char path[4096];
	int err;

	if (pin_root) {
		if (snprintf(path, sizeof(path), "%s/%s", pin_root, spec->name) >= (int)sizeof(path))
			return -ENAMETOOLONG;
		map = xbpf_map__open_shared(path, spec, nr_cpus);
		if (!map) {
			err = -errno;
			pr_warn("elf: map '%s': cannot open shared map %s: %s\n", spec->name, path,
				strerror(-err));
			return err;
		}
		if (xbpf_map__reattached(map))
			pr_debug("elf: map '%s': re-attached %s\n", spec->name, path);
		goto add;
	}
	map = xbpf_map__create(spec, nr_cpus);
	if (!map) {
		err = -errno;
		pr_warn("elf: map '%s' (%s, key %u, value %u, max %u): invalid spec: %s\n", spec->name,
			xbpf_map_type_name(spec->type) ?: "unknown type", spec->key_size,
			spec->value_size, spec->max_entries, strerror(-err));
		return err;
	}
add:
	err = __xbpf_object_add_map(obj, map);
	if (err)
		xbpf_map__free(map);
	return err;
}

/*
 * The caller's max_entries (opts->map_sizes) into the BTF-defined maps'
 * specs, before any map exists: a name that is no map of the object, or a
 * size 0, fails the open.
 */
static int apply_map_sizes(struct xbpf_elf *elf, const struct xbpf_elf_load_opts *lopts)
{
	for (size_t i = 0; i < lopts->map_size_cnt; i++) {
		const struct xbpf_map_size *ms = &lopts->map_sizes[i];
		size_t j;

		for (j = 0; ms->name && j < elf->nmap_defs; j++)
			if (!strcmp(ms->name, elf->map_defs[j].name))
				break;
		if (!ms->name || j == elf->nmap_defs) {
			pr_warn("elf: no map '%s' to size\n", ms->name ?: "(null)");
			return -ENOENT;
		}
		if (!ms->max_entries) {
			pr_warn("elf: map '%s': max_entries 0\n", ms->name);
			return -EINVAL;
		}
		elf->map_defs[j].spec.max_entries = ms->max_entries;
	}
	return 0;
}

/* Global variables' initial values (opts->globals), after the sections' own. */
static int init_globals(struct xbpf_object *obj, struct xbpf_elf *elf,
			const struct xbpf_elf_load_opts *lopts)
{
	for (size_t i = 0; i < lopts->global_cnt; i++) {
		const struct xbpf_global_value *g = &lopts->globals[i];
		const char *sec = NULL;
		uint32_t off, size, zero = 0;
		struct xbpf_map *map;
		uint8_t *value;

		uint32_t si;

		if (!g->name || !g->value || !elf->has_btf ||
		    __xbpf_btf_find_var(&elf->btf, g->name, &sec, &off, &size)) {
			pr_warn("elf: no global variable '%s' to set\n", g->name ?: "(null)");
			return -ENOENT;
		}
		/* clang leaves DATASEC offsets zero: the symbol knows (as libbpf fixes up). */
		for (si = 0; si < elf->nsyms; si++) {
			const struct xbpf_elf_sym *sym = &elf->syms[si];

			if (sym->name && !strcmp(sym->name, g->name) && sym->sym.st_shndx < elf->shnum &&
			    !strcmp(elf->secs[sym->sym.st_shndx].name, sec))
				break;
		}
		if (si == elf->nsyms || elf->syms[si].sym.st_value > UINT32_MAX) {
			pr_warn("elf: global '%s' has no symbol in %s\n", g->name, sec);
			return -ENOENT;
		}
		off = (uint32_t)elf->syms[si].sym.st_value;
		if (g->size != size) {
			pr_warn("elf: global '%s' is %u bytes, given %zu\n", g->name, size, g->size);
			return -EINVAL;
		}
		map = xbpf_object__find_map(obj, sec);
		value = map ? xbpf_map__lookup_elem(map, &zero) : NULL;
		if (!value || (uint64_t)off + size > xbpf_map__spec(map)->value_size) {
			pr_warn("elf: global '%s' lies outside its section %s\n", g->name, sec);
			return -EINVAL;
		}
		memcpy(value + off, g->value, size);
	}
	return 0;
}

/*
 * .rodata sections are final once their load-time values are in: freeze
 * them (libbpf's bpf_object__populate_internal_map() does the same).
 */
static int freeze_rodata(struct xbpf_object *obj, const struct xbpf_elf *elf)
{
	for (uint32_t i = 0; i < elf->shnum; i++) {
		int idx = elf->sec_map ? elf->sec_map[i] : -1;
		int err;

		if (idx < 0 || !(obj->maps[idx]->spec.map_flags & BPF_F_RDONLY_PROG))
			continue;
		err = xbpf_map__freeze(obj->maps[idx]);
		if (err)
			return err;
	}
	return 0;
}

static int load_maps(struct xbpf_object *obj, struct xbpf_elf *elf,
		     const struct xbpf_elf_load_opts *lopts)
{
	int nr_cpus = lopts->nr_cpus;
	const char *pin_root = lopts->pin_root;
	uint32_t i;
	size_t j;
	int err;

	elf->sec_map = calloc(elf->shnum, sizeof(*elf->sec_map));
	if (!elf->sec_map)
		return -ENOMEM;
	for (i = 0; i < elf->shnum; i++)
		elf->sec_map[i] = -1;

	/* BTF-defined maps first, in DATASEC order (libbpf's order) */
	for (i = 0; i < elf->shnum; i++) {
		if (strcmp(elf->secs[i].name, ".maps"))
			continue;
		if (elf->maps_idx) {
			pr_warn("elf: two .maps sections\n");
			return -EINVAL;
		}
		elf->maps_idx = i;
	}
	if (elf->maps_idx) {
		if (!elf->has_btf) {
			pr_warn("elf: .maps needs BTF, and the object has none\n");
			return -EINVAL;
		}
		err = __xbpf_btf_map_defs(&elf->btf, &elf->map_defs, &elf->nmap_defs);
		if (err)
			return err;
	}
	err = apply_map_sizes(elf, lopts);
	if (err)
		return err;
	if (elf->maps_idx) {
		for (j = 0; j < elf->nmap_defs; j++) {
			struct xbpf_btf_map_def *d = &elf->map_defs[j];
			uint32_t si;

			/* clang leaves DATASEC offsets zero; the symbols know (libbpf fixes up too) */
			for (si = 0; si < elf->nsyms; si++) {
				const struct xbpf_elf_sym *sym = &elf->syms[si];

				if (sym->sym.st_shndx == elf->maps_idx &&
				    ELF64_ST_TYPE(sym->sym.st_info) == STT_OBJECT &&
				    !strcmp(sym->name, d->name))
					break;
			}
			if (si == elf->nsyms) {
				pr_warn("elf: map '%s' has no symbol in .maps\n", d->name);
				return -EINVAL;
			}
			if (elf->syms[si].sym.st_value > UINT32_MAX || elf->syms[si].sym.st_size > UINT32_MAX) {
				pr_warn("elf: map '%s': symbol out of range\n", d->name);
				return -EINVAL;
			}
			d->sec_off = (uint32_t)elf->syms[si].sym.st_value;
			if (elf->syms[si].sym.st_size)
				d->sec_size = (uint32_t)elf->syms[si].sym.st_size;
			if ((uint64_t)d->sec_off + d->sec_size > elf->secs[elf->maps_idx].size) {
				pr_warn("elf: map '%s' lies outside .maps\n", d->name);
				return -EINVAL;
			}
			d->spec.inner = d->has_inner ? &d->inner : NULL;
			err = add_map(obj, &d->spec, nr_cpus, pin_root);
			if (err)
				return err;
		}
	}

	/* global data: one single-entry array per section, named after it */
	for (i = 0; i < elf->shnum; i++) {
		const struct xbpf_elf_sec *s = &elf->secs[i];
		struct xbpf_map_spec spec = { .type = XBPF_MAP_ARRAY, .key_size = 4, .max_entries = 1 };

		if (!is_data_sec(s) || !s->size)
			continue;
		if (s->size > UINT32_MAX / 2) {
			pr_warn("elf: section %u (%s) too large\n", i, s->name);
			return -E2BIG;
		}
		snprintf(spec.name, sizeof(spec.name), "%s", s->name);
		spec.value_size = (uint32_t)s->size;
		/* libbpf's flags: read-only for programs, mmapable when BTF has globals in it */
		if (!strncmp(s->name, ".rodata", 7))
			spec.map_flags = BPF_F_RDONLY_PROG;
		if (elf->has_btf && __xbpf_btf_datasec_has_global(&elf->btf, s->name))
			spec.map_flags |= BPF_F_MMAPABLE;
		err = add_map(obj, &spec, nr_cpus, NULL);
		if (err)
			return err;
		elf->sec_map[i] = (int)obj->map_cnt - 1;
		if (s->shdr.sh_type != SHT_NOBITS) {
			err = __xbpf_map_init_value(obj->maps[obj->map_cnt - 1], s->data, s->size);
			if (err)
				return err;
		}
	}
	return 0;
}

/* map-in-map initial values: relocations in .maps against other maps. */
static int init_map_slots(struct xbpf_object *obj, struct xbpf_elf *elf)
{
	const struct xbpf_elf_sec *s;
	size_t i, j;

	if (!elf->maps_idx)
		return 0;
	s = &elf->secs[elf->maps_idx];
	for (i = 0; i < s->nrels; i++) {
		const struct xbpf_elf_rel *r = &s->rels[i];
		const struct xbpf_elf_sym *sym = &elf->syms[r->sym];
		struct xbpf_btf_map_def *outer = NULL;
		size_t outer_idx = 0, inner_idx = elf->nmap_defs;
		uint32_t slot, id;
		int err;

		for (j = 0; j < elf->nmap_defs; j++) {
			struct xbpf_btf_map_def *d = &elf->map_defs[j];

			if (r->off >= d->sec_off && r->off < (uint64_t)d->sec_off + d->sec_size) {
				outer = d;
				outer_idx = j;
			}
			if (sym->sym.st_shndx == elf->maps_idx && sym->sym.st_value == d->sec_off)
				inner_idx = j;
		}
		if (!outer || !outer->has_inner || r->off < (uint64_t)outer->sec_off + outer->values_off ||
		    (r->off - outer->sec_off - outer->values_off) % 8 || r->type != R_BPF_64_ABS64) {
			/* R_BPF_64_ABS64 (2) is what clang emits for these pointers */
			pr_warn("elf: .maps relocation %zu at %llu: not a map-in-map slot\n", i,
				(unsigned long long)r->off);
			return -EINVAL;
		}
		if (inner_idx == elf->nmap_defs) {
			pr_warn("elf: map '%s': slot points at unknown symbol '%s'\n", outer->name,
				sym->name);
			return -EINVAL;
		}
		slot = (uint32_t)((r->off - outer->sec_off - outer->values_off) / 8);
		id = (uint32_t)inner_idx;
		if (outer->spec.key_size != 4) {
			pr_warn("elf: map '%s': initial values need 4-byte keys\n", outer->name);
			return -EINVAL;
		}
		err = xbpf_map__set_inner(obj->maps[outer_idx], id, obj->maps[inner_idx]);
		err = err ?: xbpf_map__update(obj->maps[outer_idx], &slot, &id, XBPF_ANY);
		if (err) {
			pr_warn("elf: map '%s': cannot set slot %u to '%s': %s\n", outer->name, slot,
				elf->map_defs[inner_idx].name, strerror(-err));
			return err;
		}
	}
	return 0;
}

static void elf_free(struct xbpf_elf *elf)
{
	uint32_t i;

	if (elf->secs)
		for (i = 0; i < elf->shnum; i++)
			free(elf->secs[i].rels);
	free(elf->secs);
	free(elf->syms);
	free(elf->sec_map);
	free(elf->map_defs);
	__xbpf_btf_free(&elf->btf);
	free(elf->btf_copy);
	free(elf->funcs);
}

static int load_btf(struct xbpf_object *obj, struct xbpf_elf *elf)
{
	uint32_t i;
	int err;

	for (i = 0; i < elf->shnum; i++) {
		const struct xbpf_elf_sec *s = &elf->secs[i];

		if (!strcmp(s->name, ".BTF.ext") && s->data) {
			elf->btf_ext = s->data;
			elf->btf_ext_size = s->size;
		}
		if (strcmp(s->name, ".BTF") || !s->data)
			continue;
		if (elf->btf_copy) {
			pr_warn("elf: section %u: a second .BTF section\n", i);
			return -EINVAL;
		}
		/* a private, aligned copy: strings in it outlive the load */
		elf->btf_copy = malloc(s->size ? s->size : 1);
		if (!elf->btf_copy)
			return -ENOMEM;
		memcpy(elf->btf_copy, s->data, s->size);
		err = __xbpf_btf_parse(elf->btf_copy, s->size, &elf->btf);
		if (err)
			return err;
		elf->has_btf = true;
	}
	(void)obj;
	return 0;
}

int __xbpf_elf_load(struct xbpf_object *obj, const void *buf, size_t size,
		    const struct xbpf_elf_load_opts *lopts)
{
	struct xbpf_elf elf = { .buf = buf, .size = size };
	int err;

	err = parse_headers(&elf);
	err = err ?: parse_symtab(&elf);
	err = err ?: parse_relocs(&elf);
	err = err ?: load_license(obj, &elf);
	err = err ?: load_btf(obj, &elf);
	err = err ?: load_maps(obj, &elf, lopts);
	err = err ?: init_globals(obj, &elf, lopts);
	err = err ?: freeze_rodata(obj, &elf);
	err = err ?: init_map_slots(obj, &elf);
	err = err ?: __xbpf_elf_link(obj, &elf);
	if (!err && elf.btf_copy) {
		/* keep BTF strings (line info text, file names) alive with the object */
		char **strs = realloc(obj->strs, (obj->str_cnt + 1) * sizeof(*strs));

		if (!strs) {
			err = -ENOMEM;
		} else {
			obj->strs = strs;
			obj->strs[obj->str_cnt++] = elf.btf_copy;
			elf.btf_copy = NULL;
		}
	}
	if (err)
		pr_warn("elf: %s: load failed: %s\n", obj->name, strerror(err < 0 ? -err : err));
	elf_free(&elf);
	return err;
}

const char *__xbpf_elf_sec_name(const struct xbpf_elf *elf, uint32_t idx)
{
	return sec_name(elf, idx);
}
