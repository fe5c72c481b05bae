// SPDX-License-Identifier: MIT
/*
 * test_elf_malformed.c - hostile ELF objects, generated from a valid clang
 * object: truncated at every length, every section header field, symbol,
 * relocation, BTF and BTF.ext word overwritten with bad values, random byte
 * flips.  Each must give a clean error (NULL, errno set, a WARN message)
 * or, when the damage is harmless, a consistent object; never a crash.
 * Built a second time with AddressSanitizer (native), so out-of-bounds
 * reads count as failures too.  Extra arguments: files or directories of
 * regression inputs (tests/core/corpus/regress), each opened the same way.
 */
#include <dirent.h>
#include <elf.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xbpf.h"
#include "testutil.h"

static unsigned long opened, refused, unexplained;
static int warned;

static int count_warn(enum xbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == XBPF_WARN)
		warned++;
	return 0;
}

/* Open buf; a success must hold together, a failure must say why. */
static struct xbpf_object *try_open(const uint8_t *buf, size_t size)
{
	struct xbpf_object *obj;
	struct xbpf_prog *p = NULL;
	uint8_t *copy = malloc(size ? size : 1);

	/* an exact-size heap copy: ASan sees any read past the end */
	memcpy(copy, buf, size);
	warned = 0;
	errno = 0;
	obj = xbpf_object__open_mem(copy, size, NULL);
	if (!obj) {
		refused++;
		if (!errno || (!warned && size))
			unexplained++;
		free(copy);
		return NULL;
	}
	opened++;
	while ((p = xbpf_object__next_prog(obj, p))) {
		struct xbpf_insn *res;
		struct xbpf_line_desc line;
		struct xbpf_func_desc f;
		size_t cnt, i;

		if (!xbpf_prog__resolve_maps(p, &res, &cnt))
			free(res);
		for (i = 0; i < xbpf_prog__insn_cnt(p); i++)
			if (!xbpf_prog__line(p, (uint32_t)i, &line))
				CHECK(line.line < (1u << 22) && (!line.file || strlen(line.file) < (1u << 20)));
		for (i = 0; i < xbpf_prog__func_cnt(p); i++) {
			CHECK_EQ(xbpf_prog__func(p, i, &f), 0);
			CHECK(f.start + f.len <= xbpf_prog__insn_cnt(p));
		}
	}
	free(copy);
	return obj;
}

static void try_close(const uint8_t *buf, size_t size)
{
	xbpf_object__close(try_open(buf, size));
}

struct elf_view {
	Elf64_Ehdr eh;
	Elf64_Shdr *sh;
	const char *shstr;
};

static void view(const uint8_t *buf, struct elf_view *v)
{
	memcpy(&v->eh, buf, sizeof(v->eh));
	v->sh = (Elf64_Shdr *)(buf + v->eh.e_shoff);
	v->shstr = (const char *)buf + v->sh[v->eh.e_shstrndx].sh_offset;
}

static int find_sec(const uint8_t *buf, const char *name)
{
	struct elf_view v;
	int i;

	view(buf, &v);
	for (i = 0; i < v.eh.e_shnum; i++)
		if (!strcmp(v.shstr + v.sh[i].sh_name, name))
			return i;
	return -1;
}

static const uint64_t bad64[] = { 0, 1, 3, 7, 8, 0x7f, 0xff, 0xffff, 0x7fffffff, 0x80000000,
				  0xffffffff, 0x100000000ull, 0x7fffffffffffffffull,
				  0xffffffffffffffffull, 0xfffffffffffffff8ull };

/* Overwrite `width` bytes at off with each bad value (and neighbours of the original). */
static void corrupt_field(uint8_t *img, size_t size, size_t off, int width)
{
	uint64_t orig = 0, v;
	size_t i;

	if (off + (size_t)width > size)
		return;
	memcpy(&orig, img + off, (size_t)width);
	for (i = 0; i < sizeof(bad64) / sizeof(bad64[0]) + 4; i++) {
		if (i < sizeof(bad64) / sizeof(bad64[0]))
			v = bad64[i];
		else
			v = i == sizeof(bad64) / sizeof(bad64[0]) ? orig + 1 :
			    i == sizeof(bad64) / sizeof(bad64[0]) + 1 ? orig - 1 :
			    i == sizeof(bad64) / sizeof(bad64[0]) + 2 ? size : size - 1;
		memcpy(img + off, &v, (size_t)width);
		try_close(img, size);
	}
	memcpy(img + off, &orig, (size_t)width);
}

static void test_truncation(const uint8_t *buf, size_t size)
{
	unsigned long before = opened;
	size_t n;

	for (n = 0; n < size; n++)
		try_close(buf, n);
	/* clang puts the section headers last: no prefix is a valid object */
	CHECK_EQ(opened, before);
}

static void test_section_headers(uint8_t *img, size_t size)
{
	struct elf_view v;
	int i;

	view(img, &v);
	for (i = 0; i < v.eh.e_shnum; i++) {
		size_t base = v.eh.e_shoff + (size_t)i * sizeof(Elf64_Shdr);

		corrupt_field(img, size, base + offsetof(Elf64_Shdr, sh_name), 4);
		corrupt_field(img, size, base + offsetof(Elf64_Shdr, sh_type), 4);
		corrupt_field(img, size, base + offsetof(Elf64_Shdr, sh_flags), 8);
		corrupt_field(img, size, base + offsetof(Elf64_Shdr, sh_offset), 8);
		corrupt_field(img, size, base + offsetof(Elf64_Shdr, sh_size), 8);
		corrupt_field(img, size, base + offsetof(Elf64_Shdr, sh_link), 4);
		corrupt_field(img, size, base + offsetof(Elf64_Shdr, sh_info), 4);
		corrupt_field(img, size, base + offsetof(Elf64_Shdr, sh_entsize), 8);
	}
	/* a section pointing past the file is refused, and the message says where */
	{
		int sec = find_sec(img, ".text");
		uint64_t orig = v.sh[sec].sh_offset, bad = size;
		size_t off = v.eh.e_shoff + (size_t)sec * sizeof(Elf64_Shdr) + offsetof(Elf64_Shdr, sh_offset);

		memcpy(img + off, &bad, 8);
		CHECK(!try_open(img, size));
		memcpy(img + off, &orig, 8);
	}
}

static void test_elf_header(uint8_t *img, size_t size)
{
	size_t off;

	for (off = 0; off < sizeof(Elf64_Ehdr); off += 2)
		corrupt_field(img, size, off, 2);
	corrupt_field(img, size, offsetof(Elf64_Ehdr, e_shoff), 8);
}

static void test_section_entries(uint8_t *img, size_t size, const char *name, size_t limit)
{
	struct elf_view v;
	int sec = find_sec(img, name);
	size_t off, end;

	CHECK(sec >= 0);
	if (sec < 0)
		return;
	view(img, &v);
	off = v.sh[sec].sh_offset;
	end = off + v.sh[sec].sh_size;
	if (end > off + limit)
		end = off + limit;
	for (; off + 4 <= end; off += 4)
		corrupt_field(img, size, off, 4);
}

static void test_random_flips(uint8_t *img, size_t size, int rounds)
{
	uint8_t *work = malloc(size);
	uint32_t seed = 0xc0ffee;
	int r, k;

	for (r = 0; r < rounds; r++) {
		memcpy(work, img, size);
		for (k = 0; k < 1 + r % 4; k++) {
			seed = seed * 1103515245 + 12345;
			work[(seed >> 8) % size] ^= (uint8_t)(1u << ((seed >> 3) % 8));
		}
		try_close(work, size);
	}
	free(work);
}

static int read_all(const char *path, uint8_t **ret, size_t *ret_size)
{
	FILE *f = fopen(path, "rb");
	long n;

	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	*ret = malloc(n > 0 ? (size_t)n : 1);
	*ret_size = fread(*ret, 1, n > 0 ? (size_t)n : 0, f);
	fclose(f);
	return 0;
}

static void run_regress(const char *path)
{
	struct stat st;
	uint8_t *buf;
	size_t size;

	if (stat(path, &st))
		return;
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		struct dirent *e;
		char p[4096];

		while (d && (e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
			run_regress(p);
		}
		if (d)
			closedir(d);
		return;
	}
	if (read_all(path, &buf, &size))
		return;
	if (size)
		try_close(buf, size);
	free(buf);
}

int main(int argc, char **argv)
{
	uint8_t *buf, *img;
	size_t size;
	int i;

	if (argc < 2 || read_all(argv[1], &buf, &size)) {
		fprintf(stderr, "usage: %s valid.bpf.o [regress files or dirs...]\n", argv[0]);
		return 2;
	}
	xbpf_set_print(count_warn);
	{
		struct xbpf_object *valid = try_open(buf, size);

		CHECK(valid != NULL);
		xbpf_object__close(valid);
	}
	img = malloc(size);
	memcpy(img, buf, size);

	test_truncation(buf, size);
	test_elf_header(img, size);
	test_section_headers(img, size);
	test_section_entries(img, size, ".symtab", 1 << 16);
	test_section_entries(img, size, ".rel.text", 1 << 16);
	test_section_entries(img, size, ".relxdp", 1 << 16);
	test_section_entries(img, size, ".rel.maps", 1 << 16);
	test_section_entries(img, size, ".BTF", 2048);
	test_section_entries(img, size, ".BTF.ext", 2048);
	test_section_entries(img, size, "xdp", 1 << 16);
	test_section_entries(img, size, ".text", 1 << 16);
	test_section_entries(img, size, ".strtab", 1 << 16);
	test_random_flips(img, size, 2000);
	CHECK(!memcmp(img, buf, size));
	for (i = 2; i < argc; i++)
		run_regress(argv[i]);
	printf("%lu inputs refused, %lu opened (harmless damage), %lu refused without a reason\n",
	       refused, opened, unexplained);
	CHECK_EQ(unexplained, 0);
	CHECK(refused > size);
	free(img);
	free(buf);
	TEST_DONE();
}
