// SPDX-License-Identifier: MIT
/*
 * Parsing a command line (or a config file's keys) against option tables.
 *
 * One hand-written pass rather than getopt_long: the same loop has to accept
 * iproute2-style keywords ("weight 5") next to "--weight=5" and "-w 5", look
 * options up in several tables (a command's and the globals), and say which
 * option a bad value belongs to.  The syntax is getopt_long's (see
 * xlb_cli.h) minus prefix abbreviations, which let a typo select another
 * option.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "xlb_cli.h"

static int fail(char *err, size_t len, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t len, int code, const char *fmt, ...)
{
	va_list ap;

	if (err && len) {
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return code;
}

int xlb_cli_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *ret)
{
	uint64_t v = 0;

	if (!s || !*s)
		return -EINVAL;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (v < min || v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

static uint64_t size_max(size_t size)
{
	return size >= 8 ? UINT64_MAX : (1ull << (size * 8)) - 1;
}

static void store_uint(void *field, size_t size, uint64_t v)
{
	switch (size) {
	case 1:
		*(uint8_t *)field = (uint8_t)v;
		break;
	case 2:
		*(uint16_t *)field = (uint16_t)v;
		break;
	case 4:
		*(uint32_t *)field = (uint32_t)v;
		break;
	default:
		*(uint64_t *)field = v;
		break;
	}
}

static int choices_text(const struct xlb_cli_opt *o, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (const char *const *c = o->choices; c && *c && n + 1 < len; c++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", c == o->choices ? "" : ", ", *c);
	return 0;
}

int xlb_cli_opt__set(const struct xlb_cli_opt *o, void *base, const char *val, bool first,
		     char *err, size_t errlen)
{
	void *field = (char *)base + o->offset;
	uint64_t max, v;
	char list[200];
	int r;

	switch (o->type) {
	case XLB_CLI_FLAG:
		if (!val || !strcasecmp(val, "true") || !strcasecmp(val, "yes") || !strcmp(val, "1"))
			*(bool *)field = true;
		else if (!strcasecmp(val, "false") || !strcasecmp(val, "no") || !strcmp(val, "0"))
			*(bool *)field = false;
		else
			return fail(err, errlen, -EINVAL, "'%.64s' is not true or false", val);
		return 0;
	case XLB_CLI_STRING:
		if (!val)
			return fail(err, errlen, -EINVAL, "needs a value");
		if (!*val)
			return fail(err, errlen, -EINVAL, "must not be empty");
		*(const char **)field = val;
		return 0;
	case XLB_CLI_UINT:
		max = o->max ? o->max : size_max(o->size);
		if (max > size_max(o->size))
			max = size_max(o->size);
		r = xlb_cli_parse_u64(val, o->min, max, &v);
		if (r == -ERANGE)
			return fail(err, errlen, r, "%.32s is out of range %llu..%llu", val,
				    (unsigned long long)o->min, (unsigned long long)max);
		if (r)
			return fail(err, errlen, r, "'%.32s' is not a number", val ? val : "");
		store_uint(field, o->size, v);
		return 0;
	case XLB_CLI_ENUM:
		for (int i = 0; val && o->choices && o->choices[i]; i++)
			if (!strcasecmp(val, o->choices[i])) {
				*(int *)field = i;
				return 0;
			}
		choices_text(o, list, sizeof(list));
		return fail(err, errlen, -EINVAL, "'%.32s' is not one of %s", val ? val : "", list);
	case XLB_CLI_CUSTOM:
		if (!o->parse)
			return fail(err, errlen, -EINVAL, "no parser");
		return o->parse(o, field, val, first, err, errlen);
	}
	return fail(err, errlen, -EINVAL, "bad option type");
}

const char *xlb_cli_opt__key(const struct xlb_cli_opt *o, char *buf, size_t len)
{
	snprintf(buf, len, "%s", o->key ? o->key : o->name);
	for (char *p = buf; *p; p++)
		if (*p == '-')
			*p = '_';
	return buf;
}

const struct xlb_cli_opt *xlb_cli_opt__find(const struct xlb_cli_opt *opts, const char *name,
					    bool key_form)
{
	char key[64];

	for (const struct xlb_cli_opt *o = opts; o && o->name; o++) {
		if (key_form ? !strcmp(xlb_cli_opt__key(o, key, sizeof(key)), name) :
			       !strcmp(o->name, name))
			return o;
	}
	return NULL;
}

/* Where a row was found: set index and row index. */
struct hit {
	const struct xlb_cli_optset *set;
	const struct xlb_cli_opt *o;
	size_t row;
};

enum lookup { BY_LONG, BY_SHORT, BY_KEYWORD };

static bool lookup(const struct xlb_cli_optset *sets, size_t nsets, enum lookup how,
		   const char *name, size_t len, char c, struct hit *ret)
{
	for (size_t s = 0; s < nsets; s++)
		for (size_t i = 0; sets[s].opts && sets[s].opts[i].name; i++) {
			const struct xlb_cli_opt *o = &sets[s].opts[i];
			bool match;

			if (o->flags & XLB_CLI_F_NO_CLI)
				continue;
			if (how == BY_SHORT)
				match = o->short_name && o->short_name == c;
			else
				match = strlen(o->name) == len && !strncmp(o->name, name, len) &&
					(how == BY_LONG || (o->flags & XLB_CLI_F_KEYWORD));
			if (match) {
				*ret = (struct hit){ .set = &sets[s], .o = o, .row = i };
				return true;
			}
		}
	return false;
}

static bool takes_value(const struct xlb_cli_opt *o)
{
	return o->type != XLB_CLI_FLAG && !(o->flags & XLB_CLI_F_OPTIONAL);
}

/* The value of an option that takes one and has none yet: the next word. */
static int next_value(const struct xlb_cli_opt *o, int argc, char **argv, int *i, const char *as,
		      const char **val, char *err, size_t errlen)
{
	if (!takes_value(o) || *val)
		return 0;
	if (*i + 1 >= argc)
		return fail(err, errlen, -EINVAL, "%s needs %s", as, o->metavar ? o->metavar : "a value");
	*val = argv[++*i];
	return 0;
}

/* Rows given in this pass, per set (first occurrence resets REPEAT lists). */
struct pass {
	unsigned char *seen[8];
};

static int apply(const struct hit *h, struct pass *p, size_t set_idx, const char *as,
		 const char *val, char *err, size_t errlen)
{
	char msg[256];
	bool first = !p->seen[set_idx][h->row]; /* else: the last one wins, as with getopt */
	int r;

	r = xlb_cli_opt__set(h->o, h->set->base, val, first, msg, sizeof(msg));
	if (r)
		return fail(err, errlen, -EINVAL, "%s: %s", as, msg);
	if (p->seen[set_idx][h->row] < 255)
		p->seen[set_idx][h->row]++;
	if (h->set->given && h->set->given[h->row] < 255)
		h->set->given[h->row]++;
	return 0;
}

static size_t rows(const struct xlb_cli_optset *set)
{
	size_t n = 0;

	while (set->opts && set->opts[n].name)
		n++;
	return n;
}

int xlb_cli_parse(const struct xlb_cli_optset *sets, size_t nsets, int argc, char **argv,
		  unsigned int flags, char **ret_args, int *ret_argc, int *ret_used, char *err,
		  size_t errlen)
{
	struct pass pass = { { 0 } };
	int nargs = 0, i, r = 0;
	char as[80];

	if (nsets > sizeof(pass.seen) / sizeof(pass.seen[0]))
		return fail(err, errlen, -E2BIG, "too many option tables");
	for (size_t s = 0; s < nsets; s++) {
		pass.seen[s] = calloc(rows(&sets[s]) + 1, 1);
		if (!pass.seen[s]) {
			r = fail(err, errlen, -ENOMEM, "out of memory");
			goto out;
		}
	}
	if (ret_used)
		*ret_used = argc;
	for (i = 0; i < argc && !r; i++) {
		const char *a = argv[i];
		struct hit h;

		if (!strcmp(a, "--")) {
			while (++i < argc)
				ret_args[nargs++] = argv[i];
			break;
		}
		if (a[0] == '-' && a[1] == '-') {
			const char *name = a + 2, *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);
			const char *val = eq ? eq + 1 : NULL;

			if (!lookup(sets, nsets, BY_LONG, name, len, 0, &h)) {
				r = fail(err, errlen, -EINVAL, "unknown option --%.*s", (int)len, name);
				break;
			}
			snprintf(as, sizeof(as), "--%s", h.o->name);
			if (h.o->type == XLB_CLI_FLAG && eq) {
				r = fail(err, errlen, -EINVAL, "%s takes no value", as);
				break;
			}
			r = next_value(h.o, argc, argv, &i, as, &val, err, errlen) ?:
			    apply(&h, &pass, (size_t)(h.set - sets), as, val, err, errlen);
		} else if (a[0] == '-' && a[1]) {
			/* A cluster of short options; the first that takes a value ends it. */
			for (size_t j = 1; a[j] && !r; j++) {
				const char *val = NULL;

				if (!lookup(sets, nsets, BY_SHORT, NULL, 0, a[j], &h)) {
					r = fail(err, errlen, -EINVAL, "unknown option -%c", a[j]);
					break;
				}
				snprintf(as, sizeof(as), "-%c", a[j]);
				if (takes_value(h.o) && a[j + 1])
					val = a + j + 1; /* -sPATH */
				r = next_value(h.o, argc, argv, &i, as, &val, err, errlen) ?:
				    apply(&h, &pass, (size_t)(h.set - sets), as, val, err, errlen);
				if (val)
					break;
			}
		} else if (lookup(sets, nsets, BY_KEYWORD, a, strlen(a), 0, &h)) {
			const char *val = NULL;

			snprintf(as, sizeof(as), "%s", h.o->name);
			r = next_value(h.o, argc, argv, &i, as, &val, err, errlen) ?:
			    apply(&h, &pass, (size_t)(h.set - sets), as, val, err, errlen);
		} else if (flags & XLB_CLI_STOP_AT_ARG) {
			if (ret_used)
				*ret_used = i;
			break;
		} else {
			ret_args[nargs++] = argv[i];
		}
	}
	if (ret_argc)
		*ret_argc = nargs;
out:
	for (size_t s = 0; s < nsets; s++)
		free(pass.seen[s]);
	return r;
}

const struct xlb_cli_cmd *xlb_cli_cmd__find(const struct xlb_cli_prog *p, int argc, char **argv,
					    int *ret_words)
{
	const struct xlb_cli_cmd *best = NULL;
	int best_words = 0, partial = 0;

	for (const struct xlb_cli_cmd *c = p->cmds; c && c->name; c++) {
		const char *n = c->name;
		int w = 0;

		/* Match the name word by word against argv. */
		while (*n && w < argc) {
			size_t len = strcspn(n, " ");

			if (strlen(argv[w]) != len || strncmp(argv[w], n, len))
				break;
			w++;
			n += len;
			while (*n == ' ')
				n++;
		}
		if (!*n && w > best_words) {
			best = c;
			best_words = w;
		} else if (*n && w > partial) {
			partial = w;
		}
	}
	if (ret_words)
		*ret_words = best ? best_words : partial;
	return best;
}
