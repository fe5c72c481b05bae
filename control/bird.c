// SPDX-License-Identifier: MIT
/*
 * BIRD's control socket (what birdc speaks): connect, read the greeting,
 * send one command line, read the reply.  A reply is lines of
 * "DDDD-text" (more follows), " text" (the same code continues) and one
 * final "DDDD text"; codes 0xxx are successes, 1xxx/2xxx table rows and
 * headers, 8xxx/9xxx errors.  xlbd asks for three things: `configure`
 * (reload the config, which includes the file of VIP routes announce.c
 * writes), `show protocols` (the BGP sessions) and `show bfd sessions`.
 *
 * Every exchange has a 2 s deadline, so a stuck BIRD never holds xlbd.
 */
#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "xlbd.h"

#define BIRD_TIMEOUT_MS 2000
#define BIRD_MAX_REPLY (1u << 20)

struct reply {
	char *text; /* the lines without their codes, '\n'-separated */
	size_t len;
	int code;     /* of the final line */
	int err_code; /* the first 8xxx/9xxx line, or 0 */
	char err_line[160];
};

static int append(struct reply *r, const char *s, size_t n)
{
	char *t;

	if (r->len + n + 2 > BIRD_MAX_REPLY)
		return -E2BIG;
	t = realloc(r->text, r->len + n + 2);
	if (!t)
		return -ENOMEM;
	memcpy(t + r->len, s, n);
	r->len += n;
	t[r->len++] = '\n';
	t[r->len] = 0;
	r->text = t;
	return 0;
}

/* One line of a reply: returns 1 when it was the final line, 0 if more follows. */
static int take_line(struct reply *r, const char *line, size_t n, bool keep)
{
	bool coded = n >= 5 && line[0] >= '0' && line[0] <= '9' && line[1] >= '0' &&
		     line[1] <= '9' && line[2] >= '0' && line[2] <= '9' && line[3] >= '0' &&
		     line[3] <= '9' && (line[4] == ' ' || line[4] == '-');
	int code = coded ? atoi((char[5]){ line[0], line[1], line[2], line[3], 0 }) : 0;

	if (coded && code >= 8000 && !r->err_code) {
		r->err_code = code;
		snprintf(r->err_line, sizeof(r->err_line), "%.*s", (int)(n - 5), line + 5);
	}
	if (keep) {
		if (coded)
			append(r, line + 5, n - 5);
		else if (n && line[0] == ' ')
			append(r, line + 1, n - 1);
	}
	if (coded && line[4] == ' ') {
		r->code = code;
		return 1;
	}
	return 0;
}

/* Read lines until a final one; keep: collect the text. */
static int read_reply(int fd, struct reply *r, bool keep, char *err, size_t errlen)
{
	char buf[8192];
	size_t have = 0;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char *nl;
		ssize_t n;

		while ((nl = memchr(buf, '\n', have))) {
			size_t ln = (size_t)(nl - buf);
			int fin = take_line(r, buf, ln, keep);

			memmove(buf, nl + 1, have - ln - 1);
			have -= ln + 1;
			if (fin)
				return 0;
		}
		if (have == sizeof(buf)) {
			snprintf(err, errlen, "BIRD sent a line longer than %zu bytes", sizeof(buf));
			return -EPROTO;
		}
		if (poll(&p, 1, BIRD_TIMEOUT_MS) <= 0) {
			snprintf(err, errlen, "BIRD did not answer within %d ms", BIRD_TIMEOUT_MS);
			return -ETIMEDOUT;
		}
		n = read(fd, buf + have, sizeof(buf) - have);
		if (n <= 0) {
			snprintf(err, errlen, "BIRD closed its control socket");
			return -EPIPE;
		}
		have += (size_t)n;
	}
}

/*
 * Run one command.  Returns 0 with the reply's text (caller frees; may be
 * NULL) or -errno with why in err (BIRD's own error line for 8xxx/9xxx).
 */
static int bird_cmd(const char *sock, const char *cmd, char **ret_text, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct reply greet = { 0 }, r = { 0 };
	char line[256];
	int fd, ret;

	if (strlen(sock) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "BIRD socket path too long");
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, sock);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		ret = -errno;
		snprintf(err, errlen, "cannot reach BIRD at %s: %s", sock, strerror(-ret));
		if (fd >= 0)
			close(fd);
		return ret;
	}
	ret = read_reply(fd, &greet, false, err, errlen);
	free(greet.text);
	snprintf(line, sizeof(line), "%s\n", cmd);
	if (!ret && send(fd, line, strlen(line), MSG_NOSIGNAL) != (ssize_t)strlen(line)) {
		ret = -errno;
		snprintf(err, errlen, "writing to BIRD: %s", strerror(-ret));
	}
	ret = ret ?: read_reply(fd, &r, ret_text != NULL, err, errlen);
	close(fd);
	if (!ret && r.err_code) {
		snprintf(err, errlen, "BIRD: %s (%d)", r.err_line, r.err_code);
		ret = -EIO;
	}
	if (ret) {
		free(r.text);
		return ret;
	}
	if (ret_text)
		*ret_text = r.text;
	else
		free(r.text);
	return 0;
}

int xlbd_bird_configure(const char *sock, char *err, size_t errlen)
{
	return bird_cmd(sock, "configure", NULL, err, errlen);
}

/*
 * `show protocols`: the BGP rows, as [{"name", "state", "info"}].
 *   Name       Proto      Table      State  Since         Info
 *   rtr        BGP        ---        up     13:41:23.012  Established
 */
static json_t *parse_protocols(const char *text)
{
	json_t *out = json_array();
	const char *l = text;

	while (l && *l) {
		char name[64], proto[32], table[32], state[16], since[32], info[128] = "";
		const char *nl = strchr(l, '\n');

		size_t il;

		if (sscanf(l, "%63s %31s %31s %15s %31s %127[^\n]", name, proto, table, state, since,
			   info) >= 5 &&
		    !strcmp(proto, "BGP")) {
			for (il = strlen(info); il && info[il - 1] == ' '; il--)
				info[il - 1] = 0;
			json_array_append_new(out, json_pack("{s:s, s:s, s:s}", "name", name, "state",
							     state, "info", info));
		}
		l = nl ? nl + 1 : NULL;
	}
	return out;
}

/*
 * `show bfd sessions`: [{"peer", "interface", "state", "interval_s", "timeout_s"}].
 *   IP address                Interface  State      Since         Interval  Timeout
 *   10.21.1.1                 l0         Up         13:41:22.000    0.050    0.150
 */
static json_t *parse_bfd(const char *text)
{
	json_t *out = json_array();
	const char *l = text;

	while (l && *l) {
		char peer[64], ifname[32], state[16], since[32];
		double ivl = 0, tmo = 0;
		const char *nl = strchr(l, '\n');
		struct xlb_ip a;

		if (sscanf(l, "%63s %31s %15s %31s %lf %lf", peer, ifname, state, since, &ivl, &tmo) >=
			    4 &&
		    !xlb_addr_parse(peer, &a))
			json_array_append_new(out, json_pack("{s:s, s:s, s:s, s:f, s:f}", "peer", peer,
							     "interface", ifname, "state", state,
							     "interval_s", ivl, "timeout_s", tmo));
		l = nl ? nl + 1 : NULL;
	}
	return out;
}

json_t *xlbd_bird_sessions(const char *sock, char *err, size_t errlen)
{
	char *protos = NULL, *bfd = NULL;
	json_t *j;
	int r;

	r = bird_cmd(sock, "show protocols", &protos, err, errlen);
	if (r)
		return NULL;
	/* No BFD protocol configured is an answer too: no sessions. */
	if (bird_cmd(sock, "show bfd sessions", &bfd, err, errlen))
		bfd = NULL;
	j = json_pack("{s:o, s:o}", "bgp", parse_protocols(protos ? protos : ""), "bfd",
		      parse_bfd(bfd ? bfd : ""));
	free(protos);
	free(bfd);
	return j;
}
