// SPDX-License-Identifier: MIT
/*
 * The API server: a UNIX stream socket, one JSON request per line and one
 * response line back, clients identified by SO_PEERCRED.  SIGTERM/SIGINT
 * stop it, SIGHUP reloads the live settings (reload.c).
 *
 * No client can stall it or lock others out:
 *  - one epoll loop, every socket non-blocking: the loop never waits on a
 *    client, and it feeds systemd's watchdog from a timerfd whatever the
 *    clients do;
 *  - bounded buffers: a request is at most api-max-request bytes (a longer
 *    line gets E2BIG, then the connection closes); a client gets no new
 *    request handled while its previous response is not sent (so what it
 *    does not read, it cannot make us produce), and the responses pending
 *    for all clients together are bounded too;
 *  - timeouts: a connection that sends no complete request for
 *    api-idle-timeout, or does not take a response for api-write-timeout,
 *    is closed;
 *  - caps: at most api-max-clients connections, at most
 *    api-max-clients-per-uid per user (uid 0, the operator, is exempt from
 *    the per-user cap); a full table closes the oldest idle connection of
 *    the user who holds the most, so a flood evicts itself, not others;
 *  - fairness: a few requests per client per turn of the loop.
 */
#include <errno.h>
#include <grp.h>
#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "xlbd.h"

#define TICK_MS 100
#define LINES_PER_TURN 4
#define OUT_TOTAL_MAX (256u << 20) /* responses pending for all clients together */

struct client {
	int fd;
	struct xlbd_peer peer;
	char *in;
	size_t in_len, in_cap;
	bool closing; /* close once the output is sent */
	char *out;
	size_t out_len, out_off;
	uint64_t active_ns;   /* accept, or the end of the last request */
	uint64_t out_since_ns; /* output pending since */
	struct client *prev, *next;
};

/* The fixed descriptors' epoll tags (clients carry their struct). */
static char tag_listen, tag_signal, tag_timer;

struct server {
	struct daemon *d;
	int ep, lfd, sfd, tfd;
	struct client *head;
	size_t clients;
	size_t out_total;
	uint64_t wd_usec, next_wd;
};

/* ---- clients -------------------------------------------------------------- */

static void client_free(struct server *s, struct client *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		s->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	epoll_ctl(s->ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	s->out_total -= c->out_len - c->out_off;
	s->clients--;
	free(c->in);
	free(c->out);
	free(c);
}

static void client_watch(struct server *s, struct client *c)
{
	/* Pending output: wait to write, and read nothing more (backpressure). */
	struct epoll_event ev = { .events = c->out_len ? EPOLLOUT : EPOLLIN, .data.ptr = c };

	epoll_ctl(s->ep, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Send what is pending; false when the client is gone. */
static bool client_flush(struct server *s, struct client *c)
{
	while (c->out_off < c->out_len) {
		ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0)
			return errno == EAGAIN || errno == EINTR;
		c->out_off += (size_t)w;
		s->out_total -= (size_t)w;
	}
	free(c->out);
	c->out = NULL;
	c->out_len = c->out_off = 0;
	return !c->closing;
}

static void client_queue(struct server *s, struct client *c, json_t *resp)
{
	char *text = json_dumps(resp, JSON_COMPACT);
	size_t n;

	json_decref(resp);
	if (!text) {
		c->closing = true;
		return;
	}
	n = strlen(text);
	text[n++] = '\n'; /* json_dumps' NUL becomes the line end */
	c->out = text;
	c->out_len = n;
	c->out_off = 0;
	c->out_since_ns = xlbd_now_ns();
	s->out_total += n;
}

static void client_error(struct server *s, struct client *c, int code, const char *msg)
{
	struct xlb_err err;

	xlb_err_set(&err, code, "%s", msg);
	client_queue(s, c, xlb_response_error(&err));
}

/* Handle up to LINES_PER_TURN complete lines; true if more are buffered. */
static bool client_requests(struct server *s, struct client *c)
{
	for (int n = 0; n < LINES_PER_TURN && !c->out_len && !c->closing; n++) {
		char *nl = memchr(c->in, '\n', c->in_len);
		size_t line;

		if (!nl)
			return false;
		line = (size_t)(nl - c->in);
		if (line)
			client_queue(s, c, xlbd_api_handle(s->d, c->in, line, &c->peer));
		memmove(c->in, nl + 1, c->in_len - line - 1);
		c->in_len -= line + 1;
		c->active_ns = xlbd_now_ns();
	}
	return !c->out_len && memchr(c->in, '\n', c->in_len);
}

/* Take what the socket has; false when the client is gone. */
static bool client_read(struct server *s, struct client *c)
{
	size_t max = s->d->cfg.api_max_request;

	for (;;) {
		ssize_t r;

		if (c->in_len == c->in_cap) {
			size_t cap = c->in_cap ? c->in_cap * 2 : 4096;
			char *n;

			if (cap > max + 1)
				cap = max + 1;
			if (cap <= c->in_len)
				break; /* full: the caller decides (oversize) */
			n = realloc(c->in, cap);
			if (!n)
				return false;
			c->in = n;
			c->in_cap = cap;
		}
		r = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, MSG_DONTWAIT);
		if (r == 0)
			return false;
		if (r < 0)
			return errno == EAGAIN || errno == EINTR;
		c->in_len += (size_t)r;
		if (c->in_len > max && !memchr(c->in, '\n', c->in_len)) {
			char msg[128];

			snprintf(msg, sizeof(msg), "request larger than %zu bytes; refused", max);
			xlbd_log(LOG_WARNING, "uid %u pid %d: %s", (unsigned)c->peer.uid,
				 (int)c->peer.pid, msg);
			/* The answer, then the close (the client reads it even if its send failed). */
			client_error(s, c, -E2BIG, msg);
			c->in_len = 0;
			c->closing = true;
			return true;
		}
	}
	return true;
}

/* ---- the table of clients ------------------------------------------------- */

static size_t clients_of(const struct server *s, uid_t uid)
{
	size_t n = 0;

	for (const struct client *c = s->head; c; c = c->next)
		n += c->peer.uid == uid;
	return n;
}

/* The table is full: close the oldest idle connection of the biggest holder. */
static bool evict_one(struct server *s)
{
	struct client *victim = NULL;
	size_t most = 0;
	uid_t hog = 0;

	for (struct client *c = s->head; c; c = c->next) {
		size_t n = clients_of(s, c->peer.uid);

		if (n > most) {
			most = n;
			hog = c->peer.uid;
		}
	}
	for (struct client *c = s->head; c; c = c->next)
		if (c->peer.uid == hog && !c->out_len && (!victim || c->active_ns < victim->active_ns))
			victim = c;
	if (!victim)
		return false;
	client_free(s, victim);
	return true;
}

static void accept_clients(struct server *s)
{
	const struct xlbd_config *cfg = &s->d->cfg;

	for (;;) {
		int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		struct ucred cred = { 0 };
		socklen_t len = sizeof(cred);
		struct epoll_event ev = { .events = EPOLLIN };
		struct client *c;

		if (fd < 0)
			return; /* EAGAIN, or out of fds: the backlog waits */
		getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len);
		if (cred.uid != 0 && clients_of(s, cred.uid) >= cfg->api_max_clients_per_uid) {
			static const char msg[] = "{\"v\":1,\"ok\":false,\"error\":{\"errno\":24,"
						  "\"code\":\"EMFILE\",\"message\":\"too many "
						  "connections for this user\"}}\n";

			/* Best effort, never waiting: the line fits an empty socket buffer. */
			send(fd, msg, sizeof(msg) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
			close(fd);
			continue;
		}
		if (s->clients >= cfg->api_max_clients && !evict_one(s)) {
			close(fd);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->fd = fd;
		c->peer = (struct xlbd_peer){ .uid = cred.uid, .pid = cred.pid };
		c->active_ns = xlbd_now_ns();
		ev.data.ptr = c;
		if (epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &ev)) {
			close(fd);
			free(c);
			continue;
		}
		c->next = s->head;
		if (s->head)
			s->head->prev = c;
		s->head = c;
		s->clients++;
	}
}

/* Timeouts, and the bound on pending output; every tick. */
static void sweep(struct server *s)
{
	const struct xlbd_config *cfg = &s->d->cfg;
	uint64_t now = xlbd_now_ns(), idle = (uint64_t)cfg->api_idle_timeout_ms * 1000000ull,
		 wr = (uint64_t)cfg->api_write_timeout_ms * 1000000ull;
	struct client *c = s->head, *next;

	for (; c; c = next) {
		next = c->next;
		if (c->out_len ? now - c->out_since_ns > wr : now - c->active_ns > idle)
			client_free(s, c);
	}
	while (s->out_total > OUT_TOTAL_MAX) {
		struct client *oldest = NULL;

		for (c = s->head; c; c = c->next)
			if (c->out_len && (!oldest || c->out_since_ns < oldest->out_since_ns))
				oldest = c;
		if (!oldest)
			break;
		client_free(s, oldest);
	}
}

/* ---- the socket and the loop ---------------------------------------------- */

bool xlbd_socket_in_use(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	bool used = false;
	int probe;

	if (strlen(path) >= sizeof(sa.sun_path))
		return false;
	strcpy(sa.sun_path, path);
	probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe >= 0 && !connect(probe, (struct sockaddr *)&sa, sizeof(sa))) {
		xlbd_log(LOG_ERR, "%s is served by another process; not taking it over", path);
		used = true;
	}
	if (probe >= 0)
		close(probe);
	return used;
}

static int listen_socket(const char *path, const char *group)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[sizeof(sa.sun_path)], *slash;
	mode_t old;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	strcpy(dir, path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		mkdir(dir, 0755);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* A socket someone answers on is never taken over; only a stale one is replaced. */
	if (xlbd_socket_in_use(path)) {
		close(fd);
		return -EADDRINUSE;
	}
	unlink(path);
	old = umask(0117);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, SOMAXCONN)) {
		int e = -errno;

		umask(old);
		close(fd);
		return e;
	}
	umask(old);
	if (group && *group) {
		struct group *g = getgrnam(group);

		if (!g || chown(path, (uid_t)-1, g->gr_gid))
			xlbd_log(LOG_WARNING, "cannot give socket to group %s, ignoring", group);
	}
	return fd;
}

static int server_open(struct server *s, struct daemon *d)
{
	struct itimerspec tick = { .it_interval = { .tv_nsec = TICK_MS * 1000000L },
				   .it_value = { .tv_nsec = TICK_MS * 1000000L } };
	struct epoll_event ev = { .events = EPOLLIN };
	struct rlimit rl;
	sigset_t mask;

	*s = (struct server){ .d = d, .ep = -1, .lfd = -1, .sfd = -1, .tfd = -1 };
	/* Room for api-max-clients descriptors: the soft limit up to the hard one. */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	xlbd_signals_block(&mask);
	s->sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	s->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	s->ep = epoll_create1(EPOLL_CLOEXEC);
	if (s->sfd < 0 || s->tfd < 0 || s->ep < 0 || timerfd_settime(s->tfd, 0, &tick, NULL))
		return -errno;
	s->lfd = listen_socket(d->sock_path, d->cfg.sock_group);
	if (s->lfd < 0) {
		xlbd_log(LOG_ERR, "cannot listen on %s: %s", d->sock_path, strerror(-s->lfd));
		return s->lfd;
	}
	ev.data.ptr = &tag_listen;
	epoll_ctl(s->ep, EPOLL_CTL_ADD, s->lfd, &ev);
	ev.data.ptr = &tag_signal;
	epoll_ctl(s->ep, EPOLL_CTL_ADD, s->sfd, &ev);
	ev.data.ptr = &tag_timer;
	epoll_ctl(s->ep, EPOLL_CTL_ADD, s->tfd, &ev);
	if (sd_watchdog_enabled(0, &s->wd_usec) <= 0)
		s->wd_usec = 0;
	return 0;
}

static void server_close(struct server *s)
{
	while (s->head)
		client_free(s, s->head);
	if (s->lfd >= 0) {
		close(s->lfd);
		unlink(s->d->sock_path);
	}
	if (s->sfd >= 0)
		close(s->sfd);
	if (s->tfd >= 0)
		close(s->tfd);
	if (s->ep >= 0)
		close(s->ep);
}

/* The watchdog is fed when due, also between clients: busy serving is alive. */
static void keepalive(struct server *s)
{
	if (s->wd_usec && xlbd_now_ns() >= s->next_wd) {
		sd_notify(0, "WATCHDOG=1");
		s->next_wd = xlbd_now_ns() + s->wd_usec * 1000 / 4;
	}
}

static void on_tick(struct server *s)
{
	uint64_t expirations;

	if (read(s->tfd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		return;
	keepalive(s);
	sweep(s);
}

static bool on_signal(struct server *s)
{
	struct signalfd_siginfo si;

	while (read(s->sfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo != SIGHUP)
			return true;
		xlbd_reload(s->d);
	}
	return false;
}

/* One client's event; false when it is gone. */
static bool on_client(struct server *s, struct client *c, uint32_t events, bool *ret_more)
{
	if (events & EPOLLOUT && !client_flush(s, c))
		return false;
	if (events & (EPOLLIN | EPOLLHUP | EPOLLERR) && !c->out_len && !client_read(s, c))
		return false;
	*ret_more = client_requests(s, c);
	if (c->out_len && !client_flush(s, c))
		return false;
	if (c->closing && !c->out_len)
		return false;
	client_watch(s, c);
	return true;
}

int xlbd_serve(struct daemon *d)
{
	struct epoll_event evs[64];
	struct server s;
	bool more = false;
	int r;

	r = server_open(&s, d);
	if (r) {
		server_close(&s);
		return r;
	}
	sd_notifyf(0, "READY=1\nSTATUS=serving %zu VIP(s) on %s\nMAINPID=%d", d->state.vip_cnt,
		   d->sock_path, (int)getpid());
	if (s.wd_usec)
		sd_notify(0, "WATCHDOG=1");
	xlbd_log(LOG_NOTICE, "ready: socket %s, backend %s", d->sock_path, d->be.ops->name);

	while (!d->stopping) {
		int n = epoll_wait(s.ep, evs, 64, more ? 0 : TICK_MS);

		if (n < 0 && errno != EINTR)
			break;
		more = false;
		for (int i = 0; i < n; i++) {
			void *tag = evs[i].data.ptr;

			if (tag == &tag_listen) {
				accept_clients(&s);
			} else if (tag == &tag_signal) {
				if (on_signal(&s))
					d->stopping = true;
			} else if (tag == &tag_timer) {
				on_tick(&s);
			} else {
				struct client *c = evs[i].data.ptr;
				bool again = false;

				if (!on_client(&s, c, evs[i].events, &again))
					client_free(&s, c);
				more |= again;
				keepalive(&s);
			}
		}
		/* Clients with requests still buffered get their next turn. */
		if (more)
			for (struct client *c = s.head, *next; c; c = next) {
				bool again = false;

				next = c->next;
				if (!c->out_len && memchr(c->in, '\n', c->in_len) &&
				    !on_client(&s, c, 0, &again))
					client_free(&s, c);
				keepalive(&s);
			}
		more = false;
		for (struct client *c = s.head; c && !more; c = c->next)
			more = !c->out_len && c->in_len && memchr(c->in, '\n', c->in_len);
	}
	sd_notify(0, "STOPPING=1");
	xlbd_log(LOG_NOTICE, "stopping; programs stay attached and maps pinned");
	server_close(&s);
	return 0;
}
