// SPDX-License-Identifier: MIT
/*
 * cli/ (xlb_cli.h): the parser accepts what getopt_long accepts (long
 * options with a separate or "=" value, short options with a separate or
 * attached value, combined short flags, "--"), plus keywords; it refuses
 * unknown options, missing values, loose numbers and out-of-range values
 * with a message naming the option; REPEAT rows replace an earlier pass's
 * list on their first occurrence; the last of repeated scalars wins.
 */
#include <errno.h>
#include <string.h>

#include "test_check.h"
#include "xlb_cli.h"

struct cfg {
	bool json, pretty, dry;
	const char *sock;
	uint16_t port;
	uint32_t weight;
	uint64_t big;
	int mode;
	char list[4][8];
	size_t list_cnt;
	const char *opt_val;
	bool opt_seen;
};

static int parse_item(const struct xlb_cli_opt *o, void *field, const char *val, bool first,
		      char *err, size_t errlen)
{
	struct cfg *c = (struct cfg *)((char *)field - offsetof(struct cfg, list));

	if (first)
		c->list_cnt = 0;
	if (c->list_cnt >= 4 || strlen(val) >= 8) {
		snprintf(err, errlen, "too many or too long");
		return -E2BIG;
	}
	strcpy(c->list[c->list_cnt++], val);
	return 0;
}

static int parse_optional(const struct xlb_cli_opt *o, void *field, const char *val, bool first,
			  char *err, size_t errlen)
{
	struct cfg *c = (struct cfg *)((char *)field - offsetof(struct cfg, opt_val));

	c->opt_seen = true;
	c->opt_val = val;
	return 0;
}

static const char *const modes[] = { "auto", "single", "dispatcher", NULL };

#define F(X) XLB_CLI_FIELD(struct cfg, X)
static const struct xlb_cli_opt opts[] = {
	{ "json", 'j', XLB_CLI_FLAG, 0, F(json), NULL, "json" },
	{ "pretty", 'p', XLB_CLI_FLAG, 0, F(pretty), NULL, "pretty" },
	{ "dry-run", 'n', XLB_CLI_FLAG, XLB_CLI_F_KEYWORD, F(dry), NULL, "dry" },
	{ "socket", 's', XLB_CLI_STRING, 0, F(sock), "PATH", "socket" },
	{ "port", 'm', XLB_CLI_UINT, 0, F(port), "PORT", "port", .max = 65535 },
	{ "weight", 0, XLB_CLI_UINT, XLB_CLI_F_KEYWORD, F(weight), "N", "weight", .min = 1,
	  .max = 1000000 },
	{ "big", 0, XLB_CLI_UINT, 0, F(big), "N", "big" },
	{ "mode", 0, XLB_CLI_ENUM, XLB_CLI_F_CONFIG, F(mode), NULL, "mode", .choices = modes },
	{ "item", 'i', XLB_CLI_CUSTOM, XLB_CLI_F_REPEAT | XLB_CLI_F_CONFIG, F(list), "X", "item",
	  .parse = parse_item, .key = "items" },
	{ "watch", 'w', XLB_CLI_CUSTOM, XLB_CLI_F_OPTIONAL, F(opt_val), "S", "watch",
	  .parse = parse_optional },
	{ 0 },
};

/* Parse a NULL-terminated list of words into c; returns 0 or -errno with err. */
static int parse(struct cfg *c, char *err, char **ret_args, int *ret_n, const char **words)
{
	char *argv[32];
	int argc = 0;
	struct xlb_cli_optset set = { opts, c, NULL };

	while (words[argc])
		argv[argc] = (char *)words[argc], argc++;
	err[0] = 0;
	return xlb_cli_parse(&set, 1, argc, argv, 0, ret_args, ret_n, NULL, err, 256);
}

#define PARSE(c, ...) parse(c, err, args, &nargs, (const char *[]){ __VA_ARGS__, NULL })

int main(void)
{
	char err[256], *args[32];
	int nargs = 0, r;
	struct cfg c;

	/* Long forms, "=" values, combined short flags, attached short values. */
	memset(&c, 0, sizeof(c));
	r = PARSE(&c, "--socket", "/a", "--port=80", "-jp", "-s/b", "pos1", "-m", "81", "pos2");
	CHECK(!r && c.json && c.pretty && !strcmp(c.sock, "/b") && c.port == 81, "basic: %d %s", r,
	      err);
	CHECK(nargs == 2 && !strcmp(args[0], "pos1") && !strcmp(args[1], "pos2"), "positionals %d",
	      nargs);
	memset(&c, 0, sizeof(c));
	r = PARSE(&c, "-jps", "/c");
	CHECK(!r && c.json && c.pretty && !strcmp(c.sock, "/c"), "-jps PATH: %s", err);
	memset(&c, 0, sizeof(c));
	r = PARSE(&c, "-jm80");
	CHECK(!r && c.json && c.port == 80, "-jm80: %s", err);

	/* Keywords (iproute2 style), and "--" ending the options. */
	memset(&c, 0, sizeof(c));
	r = PARSE(&c, "weight", "7", "dry-run", "--", "--json", "weight");
	CHECK(!r && c.weight == 7 && c.dry && !c.json && nargs == 2 && !strcmp(args[0], "--json"),
	      "keywords and --: %d %s", r, err);
	/* "json" is no keyword: a positional. */
	memset(&c, 0, sizeof(c));
	r = PARSE(&c, "json");
	CHECK(!r && !c.json && nargs == 1, "non-keyword word is an argument");

	/* Strict numbers and ranges, with the option named. */
	memset(&c, 0, sizeof(c));
	r = PARSE(&c, "-m", "70000");
	CHECK(r == -EINVAL && strstr(err, "-m") && strstr(err, "0..65535"), "range: %s", err);
	{
		const char *bad[] = { "abc", "", "-1", "+5", " 5", "5x", "0x10", "1e3", "8.0" };

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			memset(&c, 0, sizeof(c));
			c.port = 9;
			r = PARSE(&c, "--port", bad[i]);
			CHECK(r == -EINVAL && c.port == 9 && strstr(err, "--port"), "'%s' accepted (%s)",
			      bad[i], err);
		}
	}
	memset(&c, 0, sizeof(c));
	r = PARSE(&c, "weight", "0");
	CHECK(r && strstr(err, "1..1000000"), "min bound: %s", err);
	memset(&c, 0, sizeof(c));
	r = PARSE(&c, "--big", "18446744073709551615");
	CHECK(!r && c.big == UINT64_MAX, "u64 max: %s", err);
	r = PARSE(&c, "--big", "18446744073709551616");
	CHECK(r && strstr(err, "out of range"), "u64 overflow: %s", err);

	/* Errors: unknown options, missing values, values to flags. */
	memset(&c, 0, sizeof(c));
	CHECK(PARSE(&c, "--nope") && strstr(err, "unknown option --nope"), "unknown long: %s", err);
	CHECK(PARSE(&c, "-jx") && strstr(err, "unknown option -x"), "unknown short: %s", err);
	CHECK(PARSE(&c, "--socket") && strstr(err, "needs PATH"), "missing value: %s", err);
	CHECK(PARSE(&c, "weight") && strstr(err, "needs N"), "missing keyword value: %s", err);
	CHECK(PARSE(&c, "--json=1") && strstr(err, "takes no value"), "flag value: %s", err);
	CHECK(PARSE(&c, "--sock", "/x"), "prefix abbreviations are refused");
	CHECK(PARSE(&c, "--socket="), "empty string value refused");

	/* Enums: case-insensitive, refused with the choices listed. */
	memset(&c, 0, sizeof(c));
	CHECK(!PARSE(&c, "--mode=SINGLE") && c.mode == 1, "enum: %s", err);
	CHECK(PARSE(&c, "--mode", "multi") && strstr(err, "auto, single, dispatcher"), "enum error: %s",
	      err);

	/* The last scalar wins (getopt's rule); REPEAT rows replace an earlier pass's list. */
	memset(&c, 0, sizeof(c));
	CHECK(!PARSE(&c, "-m", "1", "--port=2") && c.port == 2, "last wins");
	memset(&c, 0, sizeof(c));
	{
		const struct xlb_cli_opt *o = xlb_cli_opt__find(opts, "items", true);

		CHECK(o && !xlb_cli_opt__set(o, &c, "cfg1", true, err, sizeof(err)) &&
			      !xlb_cli_opt__set(o, &c, "cfg2", false, err, sizeof(err)) &&
			      c.list_cnt == 2,
		      "config pass: %s", err);
		CHECK(!PARSE(&c, "-i", "a", "--item=b") && c.list_cnt == 2 &&
			      !strcmp(c.list[0], "a") && !strcmp(c.list[1], "b"),
		      "command line replaces the config's list (%zu)", c.list_cnt);
		CHECK(!xlb_cli_opt__find(opts, "item", true) && xlb_cli_opt__find(opts, "item", false),
		      "config key differs from the long name");
		o = xlb_cli_opt__find(opts, "mode", true);
		CHECK(o && xlb_cli_opt__set(o, &c, "bogus", true, err, sizeof(err)) == -EINVAL,
		      "config value through the row");
	}

	/* Optional values only with "=". */
	memset(&c, 0, sizeof(c));
	CHECK(!PARSE(&c, "--watch", "5") && c.opt_seen && !c.opt_val && nargs == 1,
	      "--watch VALUE: the value is an argument");
	memset(&c, 0, sizeof(c));
	CHECK(!PARSE(&c, "--watch=5") && c.opt_val && !strcmp(c.opt_val, "5"), "--watch=5");

	/* Stop at the first argument (global options before a command). */
	{
		char *argv[] = { "-j", "vip", "add", "-p" };
		struct xlb_cli_optset set = { opts, &c, NULL };
		int used = -1;

		memset(&c, 0, sizeof(c));
		r = xlb_cli_parse(&set, 1, 4, argv, XLB_CLI_STOP_AT_ARG, args, NULL, &used, err,
				  sizeof(err));
		CHECK(!r && c.json && !c.pretty && used == 1, "stop at arg: used %d", used);
	}

	/* Given counts, per row. */
	{
		unsigned char given[16] = { 0 };
		struct xlb_cli_optset set = { opts, &c, given };
		char *argv[] = { "-j", "weight", "3", "-j" };

		memset(&c, 0, sizeof(c));
		r = xlb_cli_parse(&set, 1, 4, argv, 0, args, &nargs, NULL, err, sizeof(err));
		CHECK(!r && given[0] == 2 && given[5] == 1 && given[4] == 0, "given counts");
	}
	TEST_DONE("test_cli");
}
