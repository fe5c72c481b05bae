// SPDX-License-Identifier: MIT
/*
 * The API server: a UNIX stream socket, one JSON request per line and one
 * response line back, clients identified by SO_PEERCRED.  One loop polls
 * the signalfd (SIGTERM/SIGINT stop, SIGHUP is ignored), the listening
 * socket and the clients, and feeds systemd's watchdog.
 */
#include <errno.h>
#include <grp.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "xlbd.h"

#define MAX_CLIENTS 64

struct client {
	int fd;
	struct xlbd_peer peer;
	char *buf;
	size_t len;
};

static int send_resp(struct client *cl, json_t *resp)
{
	char *text = json_dumps(resp, JSON_COMPACT);
	size_t n, off = 0;

	json_decref(resp);
	if (!text)
		return -ENOMEM;
	n = strlen(text);
	text[n] = '\n'; /* json_dumps' NUL becomes the line end */
	n++;
	while (off < n) {
		ssize_t w = send(cl->fd, text + off, n - off, MSG_NOSIGNAL);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			free(text);
			return -errno; /* includes a peer that does not read (SO_SNDTIMEO) */
		}
		off += (size_t)w;
	}
	free(text);
	return 0;
}

static void client_close(struct client *cl)
{
	if (cl->fd >= 0)
		close(cl->fd);
	free(cl->buf);
	cl->fd = -1;
	cl->buf = NULL;
	cl->len = 0;
}

/* Read what is there; answer every complete line.  Returns false to drop the client. */
static bool client_readable(struct daemon *d, struct client *cl)
{
	ssize_t r;

	if (!cl->buf) {
		cl->buf = malloc(XLB_API_MAX_REQUEST + 2);
		if (!cl->buf)
			return false;
	}
	r = recv(cl->fd, cl->buf + cl->len, XLB_API_MAX_REQUEST + 1 - cl->len, MSG_DONTWAIT);
	if (r < 0)
		return errno == EAGAIN || errno == EINTR;
	if (r == 0)
		return false;
	cl->len += (size_t)r;
	for (;;) {
		char *nl = memchr(cl->buf, '\n', cl->len);
		size_t line;

		if (!nl)
			break;
		line = (size_t)(nl - cl->buf);
		if (line && send_resp(cl, xlbd_api_handle(d, cl->buf, line, &cl->peer)))
			return false;
		memmove(cl->buf, nl + 1, cl->len - line - 1);
		cl->len -= line + 1;
	}
	if (cl->len > XLB_API_MAX_REQUEST) {
		struct xlb_err err;

		xlb_err_set(&err, -E2BIG, "request larger than %d bytes without a newline; closing",
			    XLB_API_MAX_REQUEST);
		xlbd_log(LOG_WARNING, "uid %u pid %d: %s", (unsigned)cl->peer.uid, (int)cl->peer.pid,
			 err.msg);
		send_resp(cl, xlb_response_error(&err));
		return false;
	}
	return true;
}

static int listen_socket(const char *path, const char *group)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	mode_t old;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	{
		char dir[sizeof(sa.sun_path)], *slash;

		strcpy(dir, path);
		slash = strrchr(dir, '/');
		if (slash && slash != dir) {
			*slash = 0;
			mkdir(dir, 0755);
		}
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	unlink(path);
	old = umask(0117);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 64)) {
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

static void accept_client(int lfd, struct client *clients)
{
	int cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	struct ucred cred = { 0 };
	socklen_t cl = sizeof(cred);
	struct timeval tv = { .tv_sec = 2 };
	struct xlb_err err;
	int slot = -1;

	if (cfd < 0)
		return;
	getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &cl);
	setsockopt(cfd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	for (int i = 0; i < MAX_CLIENTS && slot < 0; i++)
		if (clients[i].fd < 0)
			slot = i;
	if (slot < 0) {
		struct client tmp = { .fd = cfd };

		xlb_err_set(&err, -EMFILE, "too many clients");
		send_resp(&tmp, xlb_response_error(&err));
		close(cfd);
		return;
	}
	clients[slot] = (struct client){ .fd = cfd, .peer = { .uid = cred.uid, .pid = cred.pid } };
}

int xlbd_serve(struct daemon *d)
{
	struct client clients[MAX_CLIENTS];
	uint64_t wd_usec = 0, next_wd = 0;
	int lfd, sfd;
	sigset_t mask;

	xlbd_signals_block(&mask);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0)
		return -errno;
	lfd = listen_socket(d->sock_path, d->cfg.sock_group);
	if (lfd < 0) {
		xlbd_log(LOG_ERR, "cannot listen on %s: %s", d->sock_path, strerror(-lfd));
		close(sfd);
		return lfd;
	}
	for (int i = 0; i < MAX_CLIENTS; i++)
		clients[i] = (struct client){ .fd = -1 };
	if (sd_watchdog_enabled(0, &wd_usec) > 0 && wd_usec)
		next_wd = xlbd_now_ns();
	sd_notifyf(0, "READY=1\nSTATUS=serving %zu VIP(s) on %s\nMAINPID=%d", d->state.vip_cnt,
		   d->sock_path, (int)getpid());
	xlbd_log(LOG_NOTICE, "ready: socket %s, backend %s", d->sock_path, d->be.ops->name);

	while (!d->stopping) {
		struct pollfd pfd[MAX_CLIENTS + 2];
		int map[MAX_CLIENTS + 2], n = 0, timeout = 1000;

		pfd[n] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		map[n++] = -2;
		pfd[n] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		map[n++] = -1;
		for (int i = 0; i < MAX_CLIENTS; i++)
			if (clients[i].fd >= 0) {
				pfd[n] = (struct pollfd){ .fd = clients[i].fd, .events = POLLIN };
				map[n++] = i;
			}
		if (wd_usec)
			timeout = (int)(wd_usec / 4000);
		if (poll(pfd, (nfds_t)n, timeout) < 0 && errno != EINTR)
			break;
		if (wd_usec && xlbd_now_ns() >= next_wd) {
			sd_notify(0, "WATCHDOG=1");
			next_wd = xlbd_now_ns() + wd_usec * 1000 / 2;
		}
		for (int k = 0; k < n; k++) {
			if (!pfd[k].revents)
				continue;
			if (map[k] == -2) {
				struct signalfd_siginfo si;

				if (read(sfd, &si, sizeof(si)) == sizeof(si) && si.ssi_signo != SIGHUP)
					d->stopping = true;
			} else if (map[k] == -1) {
				accept_client(lfd, clients);
			} else if (!client_readable(d, &clients[map[k]])) {
				client_close(&clients[map[k]]);
			}
		}
	}
	sd_notify(0, "STOPPING=1");
	xlbd_log(LOG_NOTICE, "stopping; programs stay attached and maps pinned");
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (clients[i].fd >= 0)
			client_close(&clients[i]);
	close(lfd);
	unlink(d->sock_path);
	close(sfd);
	return 0;
}
