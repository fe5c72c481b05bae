// SPDX-License-Identifier: MIT
/*
 * What the option tables say to people: --help, the man page (troff) and
 * the bash completion script.  All three walk the same rows, so an option
 * or command cannot be documented in one and missing from another
 * (tests/cli checks the three against each other for every program).
 */
#include <stdio.h>
#include <string.h>

#include "xlb_cli.h"

/* ---- shared pieces -------------------------------------------------------- */

static bool has_value(const struct xlb_cli_opt *o)
{
	return o->type != XLB_CLI_FLAG;
}

/* "ipip|gue" for ENUM rows, else the metavar. */
static const char *value_text(const struct xlb_cli_opt *o, char *buf, size_t len)
{
	size_t n = 0;

	if (o->type == XLB_CLI_ENUM && o->choices && !o->metavar) {
		buf[0] = 0;
		for (const char *const *c = o->choices; *c && n + 1 < len; c++)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", c == o->choices ? "" : "|", *c);
		return buf;
	}
	return o->metavar ? o->metavar : "VALUE";
}

/* How the row is written: "-s, --socket PATH", "encap ipip|gue", "--watch[=SECONDS]". */
static const char *opt_form(const struct xlb_cli_opt *o, bool keyword_first, char *buf, size_t len)
{
	char val[160], lhs[80];
	const char *v = has_value(o) ? value_text(o, val, sizeof(val)) : NULL;

	if ((o->flags & XLB_CLI_F_NO_CLI) || (keyword_first && (o->flags & XLB_CLI_F_KEYWORD)))
		snprintf(lhs, sizeof(lhs), "%s", o->name);
	else if (o->short_name)
		snprintf(lhs, sizeof(lhs), "-%c, --%s", o->short_name, o->name);
	else
		snprintf(lhs, sizeof(lhs), "--%s", o->name);
	if (!v)
		snprintf(buf, len, "%s", lhs);
	else if (o->flags & XLB_CLI_F_OPTIONAL)
		snprintf(buf, len, "%s[=%s]", lhs, v);
	else
		snprintf(buf, len, "%s %s", lhs, v);
	return buf;
}

/* A command's synopsis: name, positionals, then its options in brackets. */
static void cmd_synopsis(FILE *f, const struct xlb_cli_prog *p, const struct xlb_cli_cmd *c)
{
	char form[200], val[160];

	fprintf(f, "%s %s%s%s", p->name, c->name, c->args && *c->args ? " " : "",
		c->args ? c->args : "");
	for (const struct xlb_cli_opt *o = c->opts; o && o->name; o++) {
		if (o->flags & XLB_CLI_F_KEYWORD)
			snprintf(form, sizeof(form), "%s%s%s", o->name, has_value(o) ? " " : "",
				 has_value(o) ? value_text(o, val, sizeof(val)) : "");
		else
			snprintf(form, sizeof(form), "--%s%s%s", o->name, has_value(o) ? " " : "",
				 has_value(o) ? value_text(o, val, sizeof(val)) : "");
		fprintf(f, " [%s]", form);
	}
}

static void opt_help(FILE *f, const struct xlb_cli_opt *o, const char *indent, bool keyword_first)
{
	char form[200];

	if (o->flags & XLB_CLI_F_NO_CLI)
		return;
	opt_form(o, keyword_first, form, sizeof(form));
	if (strlen(form) > 30)
		fprintf(f, "%s%s\n%s%-30s %s", indent, form, indent, "", o->doc ? o->doc : "");
	else
		fprintf(f, "%s%-30s %s", indent, form, o->doc ? o->doc : "");
	if (o->def)
		fprintf(f, " (default %s)", o->def);
	fputc('\n', f);
}

/* ---- help ----------------------------------------------------------------- */

void xlb_cli_cmd_help(FILE *f, const struct xlb_cli_prog *p, const struct xlb_cli_cmd *c)
{
	fprintf(f, "  ");
	cmd_synopsis(f, p, c);
	fprintf(f, "\n      %s\n", c->doc ? c->doc : "");
	for (const struct xlb_cli_opt *o = c->opts; o && o->name; o++)
		opt_help(f, o, "        ", true);
}

void xlb_cli_help(FILE *f, const struct xlb_cli_prog *p, const char *only)
{
	size_t olen = only ? strlen(only) : 0;

	if (!only) {
		fprintf(f, "Usage: %s [OPTIONS]%s\n", p->name, p->cmds ? " COMMAND [ARGS]" : "");
		if (p->summary)
			fprintf(f, "%s: %s.\n", p->name, p->summary);
		fprintf(f, "\nOptions:\n");
		for (const struct xlb_cli_opt *o = p->opts; o && o->name; o++)
			opt_help(f, o, "  ", false);
	}
	if (!p->cmds)
		return;
	fprintf(f, "%sCommands:\n", only ? "" : "\n");
	for (const struct xlb_cli_cmd *c = p->cmds; c->name; c++) {
		if (only && (strncmp(c->name, only, olen) || (c->name[olen] && c->name[olen] != ' ')))
			continue;
		xlb_cli_cmd_help(f, p, c);
	}
}

/* ---- man page ------------------------------------------------------------- */

/* Text for troff: escape backslashes and dashes, protect a leading dot. */
static void roff(FILE *f, const char *s)
{
	bool bol = true;

	for (; s && *s; s++) {
		if (bol && (*s == '.' || *s == '\''))
			fputs("\\&", f);
		if (*s == '\\')
			fputs("\\e", f);
		else if (*s == '-')
			fputs("\\-", f);
		else
			fputc(*s, f);
		bol = *s == '\n';
	}
}

/* Paragraphs separated by blank lines; lines indented by two blanks stay verbatim. */
static void roff_text(FILE *f, const char *s)
{
	while (s && *s) {
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);
		char line[1024];

		snprintf(line, sizeof(line), "%.*s", (int)len, s);
		if (!len)
			fputs(".PP\n", f);
		else if (!strncmp(line, "  ", 2)) {
			fputs(".nf\n", f);
			roff(f, line + 2);
			fputs("\n.fi\n", f);
		} else {
			roff(f, line);
			fputc('\n', f);
		}
		s += len + (nl ? 1 : 0);
	}
}

static void man_opt(FILE *f, const struct xlb_cli_opt *o, bool keyword_first, bool config_key)
{
	char form[200], key[64], val[160];

	if (config_key) {
		snprintf(form, sizeof(form), "%s: %s", xlb_cli_opt__key(o, key, sizeof(key)),
			 o->type == XLB_CLI_FLAG ? "true|false" : value_text(o, val, sizeof(val)));
		if (o->flags & XLB_CLI_F_REPEAT)
			snprintf(form, sizeof(form), "%s: [%s, ...]", key, value_text(o, val, sizeof(val)));
	} else {
		opt_form(o, keyword_first, form, sizeof(form));
	}
	fputs(".TP\n\\fB", f);
	roff(f, form);
	fputs("\\fR\n", f);
	roff(f, o->doc);
	if (o->def) {
		fputs(" (default ", f);
		roff(f, o->def);
		fputc(')', f);
	}
	fputs(".\n", f);
}

void xlb_cli_man(FILE *f, const struct xlb_cli_prog *p)
{
	char name[64];

	snprintf(name, sizeof(name), "%s", p->name);
	for (char *c = name; *c; c++)
		if (*c >= 'a' && *c <= 'z')
			*c = (char)(*c - 'a' + 'A');
	fprintf(f, ".TH %s %d \"\" \"xlb %s\" \"xlb\"\n.SH NAME\n", name, p->man_section,
		p->version ? p->version : "");
	roff(f, p->name);
	fputs(" \\- ", f);
	roff(f, p->summary);
	fprintf(f, "\n.SH SYNOPSIS\n.B %s\n[\\fIOPTIONS\\fR]%s\n", p->name,
		p->cmds ? " \\fICOMMAND\\fR [\\fIARGS\\fR]" : "");
	if (p->description) {
		fputs(".SH DESCRIPTION\n", f);
		roff_text(f, p->description);
	}
	fputs(".SH OPTIONS\n", f);
	for (const struct xlb_cli_opt *o = p->opts; o && o->name; o++)
		if (!(o->flags & XLB_CLI_F_NO_CLI))
			man_opt(f, o, false, false);
	if (p->cmds) {
		fputs(".SH COMMANDS\n", f);
		for (const struct xlb_cli_cmd *c = p->cmds; c->name; c++) {
			char syn[2048];
			FILE *m = fmemopen(syn, sizeof(syn), "w");

			if (!m)
				continue;
			cmd_synopsis(m, p, c);
			fclose(m);
			syn[sizeof(syn) - 1] = 0;
			fputs(".TP\n\\fB", f);
			roff(f, syn);
			fputs("\\fR\n", f);
			roff(f, c->doc);
			fputc('\n', f);
			if (c->opts && c->opts->name) {
				fputs(".RS\n", f);
				for (const struct xlb_cli_opt *o = c->opts; o->name; o++)
					man_opt(f, o, true, false);
				fputs(".RE\n", f);
			}
		}
	}
	if (p->config_file) {
		fputs(".SH CONFIGURATION\n", f);
		roff(f, p->config_file);
		fputs(" (YAML or JSON) takes these keys; an option given on the command line "
		      "overrides the key of the same name.\n",
		      f);
		for (const struct xlb_cli_opt *o = p->opts; o && o->name; o++)
			if (o->flags & XLB_CLI_F_CONFIG)
				man_opt(f, o, false, true);
	}
	for (const struct xlb_cli_section *s = p->sections; s && s->title; s++) {
		fputs(".SH ", f);
		roff(f, s->title);
		fputc('\n', f);
		roff_text(f, s->text);
	}
}

/* ---- bash completion ------------------------------------------------------ */

/* COMPREPLY= (or +=, append) what `how` offers for $cur. */
static void compgen_for(FILE *f, enum xlb_cli_complete how, const char *const *words,
			const char *indent, bool append)
{
	const char *op = append ? "+=" : "=";

	switch (how) {
	case XLB_CLI_COMPLETE_FILE:
		fprintf(f, "%sCOMPREPLY%s($(compgen -f -- \"$cur\"))\n", indent, op);
		break;
	case XLB_CLI_COMPLETE_DIR:
		fprintf(f, "%sCOMPREPLY%s($(compgen -d -- \"$cur\"))\n", indent, op);
		break;
	case XLB_CLI_COMPLETE_IFACE:
		fprintf(f, "%sCOMPREPLY%s($(compgen -W \"$(ls /sys/class/net 2>/dev/null)\" -- \"$cur\"))\n",
			indent, op);
		break;
	case XLB_CLI_COMPLETE_WORDS:
		fprintf(f, "%sCOMPREPLY%s($(compgen -W \"", indent, op);
		for (const char *const *w = words; w && *w; w++)
			fprintf(f, "%s%s", w == words ? "" : " ", *w);
		fprintf(f, "\" -- \"$cur\"))\n");
		break;
	case XLB_CLI_COMPLETE_NONE:
		if (!append)
			fprintf(f, "%sCOMPREPLY=()\n", indent);
		break;
	}
}

static enum xlb_cli_complete opt_complete(const struct xlb_cli_opt *o)
{
	return o->type == XLB_CLI_ENUM ? XLB_CLI_COMPLETE_WORDS : o->complete;
}

/* The case arms completing the values of the rows of a table. */
static void value_cases(FILE *f, const struct xlb_cli_opt *opts, const char *indent)
{
	char in2[32];

	snprintf(in2, sizeof(in2), "%s\t", indent);
	for (const struct xlb_cli_opt *o = opts; o && o->name; o++) {
		if (!has_value(o) || (o->flags & (XLB_CLI_F_NO_CLI | XLB_CLI_F_OPTIONAL)))
			continue;
		fprintf(f, "%s", indent);
		if (o->short_name)
			fprintf(f, "-%c|", o->short_name);
		fprintf(f, "--%s", o->name);
		if (o->flags & XLB_CLI_F_KEYWORD)
			fprintf(f, "|%s", o->name);
		fprintf(f, ")\n");
		compgen_for(f, opt_complete(o), o->choices, in2, false);
		fprintf(f, "%s\treturn ;;\n", indent);
	}
}

/* Words that take the next word as their value, for skipping while scanning:
 * appended to buf as "|word", each once. */
static void value_words(char *buf, size_t len, const struct xlb_cli_opt *opts)
{
	for (const struct xlb_cli_opt *o = opts; o && o->name; o++) {
		char w[3][72];
		int n = 0;

		if (!has_value(o) || (o->flags & (XLB_CLI_F_NO_CLI | XLB_CLI_F_OPTIONAL)))
			continue;
		if (o->short_name)
			snprintf(w[n++], sizeof(w[0]), "|-%c|", o->short_name);
		snprintf(w[n++], sizeof(w[0]), "|--%s|", o->name);
		if (o->flags & XLB_CLI_F_KEYWORD)
			snprintf(w[n++], sizeof(w[0]), "|%s|", o->name);
		for (int i = 0; i < n; i++) {
			size_t used = strlen(buf);

			if (strstr(buf, w[i]) || used + strlen(w[i]) + 1 >= len)
				continue;
			/* buf always ends in '|': append without the leading one */
			snprintf(buf + used, len - used, "%s", w[i] + 1);
		}
	}
}

static void option_words(FILE *f, const struct xlb_cli_opt *opts, bool keywords)
{
	for (const struct xlb_cli_opt *o = opts; o && o->name; o++) {
		if (o->flags & XLB_CLI_F_NO_CLI)
			continue;
		if (keywords) {
			if (o->flags & XLB_CLI_F_KEYWORD)
				fprintf(f, " %s", o->name);
			continue;
		}
		if (o->short_name)
			fprintf(f, " -%c", o->short_name);
		fprintf(f, " --%s%s", o->name, (o->flags & XLB_CLI_F_OPTIONAL) ? "=" : "");
	}
}

static size_t words_in(const char *s)
{
	size_t n = 1;

	for (; *s; s++)
		n += *s == ' ';
	return n;
}

void xlb_cli_bash_completion(FILE *f, const struct xlb_cli_prog *p)
{
	const struct xlb_cli_cmd *c;
	char skip[8192] = "|";

	fprintf(f, "# bash completion for %s, generated by %s --bash-completion\n", p->name, p->name);
	fprintf(f, "_%s()\n{\n", p->name);
	fprintf(f, "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n");
	fprintf(f, "\tlocal i w words=\"\" skip=0 cmd=\"\" nargs=0\n");
	/* 1. Scan the words before the cursor: options (and values) are skipped. */
	fprintf(f, "\tfor ((i = 1; i < COMP_CWORD; i++)); do\n\t\tw=${COMP_WORDS[i]}\n");
	fprintf(f, "\t\tif ((skip)); then skip=0; continue; fi\n\t\tcase $w in\n\t\t");
	value_words(skip, sizeof(skip), p->opts);
	for (c = p->cmds; c && c->name; c++)
		value_words(skip, sizeof(skip), c->opts);
	/* "|a|b|" -> "a|b)"; "--" never names an option, so an empty list still parses */
	skip[strlen(skip) - 1] = 0;
	fprintf(f, "%s)", skip[1] ? skip + 1 : "--");
	fprintf(f, " skip=1 ;;\n\t\t-*) ;;\n\t\t*) words=\"$words $w\" ;;\n\t\tesac\n\tdone\n");
	/* 2. Which command the words name (longest names first), and how many arguments follow. */
	if (p->cmds) {
		fprintf(f, "\tcase \"$words \" in\n");
		for (size_t want = 4; want >= 1; want--)
			for (c = p->cmds; c->name; c++)
				if (words_in(c->name) == want)
					fprintf(f, "\t\" %s \"*) cmd=\"%s\"; nargs=$(( $(echo $words | wc -w) - %zu )) ;;\n",
						c->name, c->name, want);
		fprintf(f, "\tesac\n");
	}
	/* 3. The value of the option before the cursor. */
	fprintf(f, "\tcase $prev in\n");
	value_cases(f, p->opts, "\t");
	fprintf(f, "\tesac\n");
	if (p->cmds) {
		fprintf(f, "\tcase $cmd in\n");
		for (c = p->cmds; c->name; c++) {
			if (!c->opts || !c->opts->name)
				continue;
			fprintf(f, "\t\"%s\")\n\t\tcase $prev in\n", c->name);
			value_cases(f, c->opts, "\t\t");
			fprintf(f, "\t\tesac ;;\n");
		}
		fprintf(f, "\tesac\n");
	}
	/* 4. Options, command names, or a command's options and arguments. */
	fprintf(f, "\tif [[ $cur == -* ]]; then\n\t\tCOMPREPLY=($(compgen -W \"");
	option_words(f, p->opts, false);
	fprintf(f, "\" -- \"$cur\"))\n");
	if (p->cmds) {
		fprintf(f, "\t\tcase $cmd in\n");
		for (c = p->cmds; c->name; c++) {
			if (!c->opts || !c->opts->name)
				continue;
			fprintf(f, "\t\t\"%s\") COMPREPLY+=($(compgen -W \"", c->name);
			option_words(f, c->opts, false);
			fprintf(f, "\" -- \"$cur\")) ;;\n");
		}
		fprintf(f, "\t\tesac\n");
	}
	fprintf(f, "\t\treturn\n\tfi\n");
	if (p->cmds) {
		/* No command yet: the next word of the names that start with the words given. */
		fprintf(f, "\tif [ -z \"$cmd\" ]; then\n\t\tcase \"$words\" in\n");
		/* Level 0: first words. */
		fprintf(f, "\t\t\"\") COMPREPLY=($(compgen -W \"");
		for (c = p->cmds; c->name; c++) {
			const struct xlb_cli_cmd *e;
			size_t len = strcspn(c->name, " ");

			for (e = p->cmds; e < c; e++)
				if (strcspn(e->name, " ") == len && !strncmp(e->name, c->name, len))
					break;
			if (e == c)
				fprintf(f, " %.*s", (int)len, c->name);
		}
		fprintf(f, "\" -- \"$cur\")) ;;\n");
		/* Level 1: the verbs of an object. */
		for (c = p->cmds; c->name; c++) {
			const struct xlb_cli_cmd *e;
			size_t len = strcspn(c->name, " ");

			if (!c->name[len])
				continue;
			for (e = p->cmds; e < c; e++)
				if (strcspn(e->name, " ") == len && !strncmp(e->name, c->name, len) &&
				    e->name[len])
					break;
			if (e != c)
				continue;
			fprintf(f, "\t\t\" %.*s\") COMPREPLY=($(compgen -W \"", (int)len, c->name);
			for (e = c; e->name; e++)
				if (strcspn(e->name, " ") == len && !strncmp(e->name, c->name, len) &&
				    e->name[len])
					fprintf(f, " %s", e->name + len + 1);
			fprintf(f, " help\" -- \"$cur\")) ;;\n");
		}
		fprintf(f, "\t\tesac\n\t\treturn\n\tfi\n");
		/* A command: its keywords, and its positional arguments. */
		fprintf(f, "\tcase $cmd in\n");
		for (c = p->cmds; c->name; c++) {
			fprintf(f, "\t\"%s\")\n\t\tCOMPREPLY=($(compgen -W \"", c->name);
			option_words(f, c->opts, true);
			fprintf(f, "\" -- \"$cur\"))\n");
			if (c->complete_args != XLB_CLI_COMPLETE_NONE) {
				fprintf(f, "\t\tif ((nargs < %d)); then\n", c->max_args < 0 ? 1000 : c->max_args);
				compgen_for(f, c->complete_args, c->arg_words, "\t\t\t", true);
				fprintf(f, "\t\tfi\n");
			}
			fprintf(f, "\t\t;;\n");
		}
		fprintf(f, "\tesac\n");
	}
	fprintf(f, "}\ncomplete -F _%s %s\n", p->name, p->name);
}
