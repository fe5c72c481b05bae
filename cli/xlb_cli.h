/* SPDX-License-Identifier: MIT */
/*
 * xlb_cli.h - one option table per program drives everything a person sees
 * of its command line: parsing, --help, the man page and bash completion.
 * Used by xbpf (tools/), lbctl and xlbd (control/); xlbd also reads its
 * config file's keys through the same rows (xlb_cli_opt__set()).
 *
 * A row names an option once: long name, short letter, type, the field it
 * fills (offsetof/sizeof into the caller's struct), range or choices,
 * default and doc.  Commands ("vip add", "dump") are rows too, each with
 * its own option table, positional synopsis and handler.
 *
 * Syntax accepted (getopt_long's, without prefix abbreviations):
 *   --name VALUE, --name=VALUE, -x VALUE, -xVALUE, combined flags -jp
 *   (-jps PATH), "--" ends the options, and for rows marked
 *   XLB_CLI_F_KEYWORD also the iproute2 form "name VALUE".
 * Numbers are decimal, strictly: no sign, no blanks, no trailing text, and
 * a value outside the row's range is an error that names the range.
 *
 * Depends on libc only (it is built in the arm64 cross build for xbpf).
 * Functions return 0 or -errno; messages go to a caller-provided buffer.
 */
#ifndef XLB_CLI_H
#define XLB_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

enum xlb_cli_type {
	XLB_CLI_FLAG = 0, /* bool, takes no value (a config file gives true/false) */
	XLB_CLI_STRING,	  /* const char *, points into argv (or the caller's copy) */
	XLB_CLI_UINT,	  /* unsigned integer of the field's size, within [min, max] */
	XLB_CLI_ENUM,	  /* int: index of the value in choices[] (case-insensitive) */
	XLB_CLI_CUSTOM,	  /* parse(): addresses, lists, durations, ... */
};

/* What bash completion offers for an option's value or a command's arguments. */
enum xlb_cli_complete {
	XLB_CLI_COMPLETE_NONE = 0,
	XLB_CLI_COMPLETE_FILE,
	XLB_CLI_COMPLETE_DIR,
	XLB_CLI_COMPLETE_IFACE, /* network interfaces */
	XLB_CLI_COMPLETE_WORDS, /* choices[] (implied for XLB_CLI_ENUM) */
};

enum {
	/* May be given several times; the first occurrence in a parse pass
	 * replaces what an earlier pass (the config file) set. */
	XLB_CLI_F_REPEAT = 1u << 0,
	/* Also accepted without dashes: "encap gue" (iproute2 style). */
	XLB_CLI_F_KEYWORD = 1u << 1,
	/* Also a config-file key: the long name with '-' written '_'. */
	XLB_CLI_F_CONFIG = 1u << 2,
	/* Config file only: not on the command line. */
	XLB_CLI_F_NO_CLI = 1u << 3,
	/* The value is optional and only given as --name=VALUE (FLAG-like otherwise;
	 * parse() gets NULL). */
	XLB_CLI_F_OPTIONAL = 1u << 4,
};

struct xlb_cli_opt;

/*
 * A CUSTOM row's parser: fill field from val (NULL for an XLB_CLI_F_OPTIONAL
 * option given without a value).  first is true for the first occurrence in
 * this parse pass (REPEAT rows reset their list then).  Returns 0 or -errno
 * with a message in err (without the option's name: the caller adds it).
 */
typedef int (*xlb_cli_parse_fn)(const struct xlb_cli_opt *o, void *field, const char *val,
				bool first, char *err, size_t errlen);

struct xlb_cli_opt {
	const char *name; /* long name; NULL ends a table */
	char short_name;  /* 0: none */
	enum xlb_cli_type type;
	unsigned int flags; /* XLB_CLI_F_* */
	size_t offset;	    /* the field in the caller's struct */
	size_t size;	    /* its size (UINT: 1, 2, 4 or 8) */
	const char *metavar;
	const char *doc;
	const char *def; /* default, as shown in help and the man page; NULL: none */
	uint64_t min, max; /* UINT */
	const char *const *choices; /* ENUM values, or completion words; NULL-terminated */
	xlb_cli_parse_fn parse;	    /* CUSTOM */
	enum xlb_cli_complete complete;
	unsigned int user; /* free for the program (xlbd: live-reloadable, stored, ...) */
	const char *key;   /* config-file key, when not the long name with '_' for '-' */
};

/* Row builders: the field is named once. */
#define XLB_CLI_FIELD(TYPE, FIELD) .offset = offsetof(TYPE, FIELD), .size = sizeof(((TYPE *)0)->FIELD)

/* A set of rows and the struct their offsets point into. */
struct xlb_cli_optset {
	const struct xlb_cli_opt *opts;
	void *base;
	/* Optional: times each row was given, indexed like opts (callers zero it). */
	unsigned char *given;
};

struct xlb_cli_cmd {
	const char *name; /* "dump", or "vip add" for OBJECT VERB programs; NULL ends */
	const char *args; /* positional synopsis, "VIP REAL" */
	const char *doc;
	const struct xlb_cli_opt *opts; /* this command's options; NULL: none */
	int min_args, max_args;		/* positional counts; max_args < 0: unbounded */
	enum xlb_cli_complete complete_args;
	const char *const *arg_words; /* with XLB_CLI_COMPLETE_WORDS */
	/* The program's handler, called with the program's own context (which
	 * holds the parsed options and arguments); the library never calls it. */
	int (*run)(void *ctx);
};

/* A man page section the tables cannot say (EXIT STATUS, FILES, EXAMPLES). */
struct xlb_cli_section {
	const char *title; /* NULL ends */
	const char *text;  /* troff-free text; lines starting with two spaces are kept verbatim */
};

struct xlb_cli_prog {
	const char *name;
	int man_section;
	const char *summary;	 /* the man page's NAME line */
	const char *version;
	const char *description; /* paragraphs separated by blank lines */
	const struct xlb_cli_opt *opts; /* global options */
	const struct xlb_cli_cmd *cmds; /* NULL: a program without commands */
	/* Non-NULL: the man page lists the XLB_CLI_F_CONFIG rows as the keys of
	 * this file. */
	const char *config_file;
	const struct xlb_cli_section *sections;
};

enum {
	/* Stop at the first positional argument (global options before a command). */
	XLB_CLI_STOP_AT_ARG = 1u << 0,
};

/*
 * Parse argv[0..argc) against the sets (searched in order: a command's own
 * options, then the globals).  Positional arguments are returned in order in
 * ret_args (room for argc entries), their count in *ret_argc; with
 * XLB_CLI_STOP_AT_ARG, *ret_used is the index of the first one (everything
 * from there on is left unparsed).  Returns 0, or -EINVAL with a message.
 */
int xlb_cli_parse(const struct xlb_cli_optset *sets, size_t nsets, int argc, char **argv,
		  unsigned int flags, char **ret_args, int *ret_argc, int *ret_used, char *err,
		  size_t errlen);

/*
 * Set one row from a text value, as the parser would (config files use it:
 * first as for xlb_cli_parse).  For FLAG rows val is "true" or "false".
 */
int xlb_cli_opt__set(const struct xlb_cli_opt *o, void *base, const char *val, bool first,
		     char *err, size_t errlen);

/* The row of a long name (or, if key_form, of a config key with '_'); NULL if none. */
const struct xlb_cli_opt *xlb_cli_opt__find(const struct xlb_cli_opt *opts, const char *name,
					    bool key_form);

/* "metrics-port" -> "metrics_port" into buf. */
const char *xlb_cli_opt__key(const struct xlb_cli_opt *o, char *buf, size_t len);

/*
 * The command that argv's leading words name; *ret_words is how many words
 * it took.  NULL if none; then *ret_words says how many words matched an
 * object ("vip frobnicate": 1, for a better message).
 */
const struct xlb_cli_cmd *xlb_cli_cmd__find(const struct xlb_cli_prog *p, int argc, char **argv,
					    int *ret_words);

/* Help: the whole program, or the commands whose name starts with `only` ("vip"). */
void xlb_cli_help(FILE *f, const struct xlb_cli_prog *p, const char *only);
/* One command's usage and options. */
void xlb_cli_cmd_help(FILE *f, const struct xlb_cli_prog *p, const struct xlb_cli_cmd *c);
/* The man page (troff). */
void xlb_cli_man(FILE *f, const struct xlb_cli_prog *p);
/* A bash completion script defining _<name> and `complete -F`. */
void xlb_cli_bash_completion(FILE *f, const struct xlb_cli_prog *p);

/* Strict decimal: digits only, within [min, max]; -EINVAL or -ERANGE. */
int xlb_cli_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *ret);

#ifdef __cplusplus
}
#endif

#endif /* XLB_CLI_H */
