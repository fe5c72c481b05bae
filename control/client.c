// SPDX-License-Identifier: MIT
/*
 * The client side of xlbd's socket: one JSON document per line each way,
 * within a deadline.  Every step (connect, send, receive) is bounded by the
 * same absolute deadline, so a daemon that accepts but never answers, or a
 * full backlog, costs the caller at most the timeout.
 */
#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "xlb_control.h"

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for events on fd until deadline (ms, CLOCK_MONOTONIC; < 0: none). */
static int wait_fd(int fd, short events, int64_t deadline)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = events };
		int64_t left = deadline < 0 ? -1 : deadline - now_ms();
		int r;

		if (deadline >= 0 && left <= 0)
			return -ETIMEDOUT;
		r = poll(&p, 1, left < 0 ? -1 : (int)(left > 1000000 ? 1000000 : left));
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
	}
}

static int64_t deadline_of(int timeout_ms)
{
	return timeout_ms > 0 ? now_ms() + timeout_ms : -1;
}

int xlb_client_connect(const char *path, int timeout_ms)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int64_t deadline = deadline_of(timeout_ms);
	int fd, r;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* A full backlog makes a non-blocking connect fail with EAGAIN: retry until the deadline. */
	while ((r = connect(fd, (struct sockaddr *)&sa, sizeof(sa))) && errno == EAGAIN) {
		struct timespec ts = { .tv_nsec = 10 * 1000 * 1000 };

		if (deadline >= 0 && now_ms() >= deadline) {
			close(fd);
			return -ETIMEDOUT;
		}
		nanosleep(&ts, NULL);
	}
	if (r && errno != EINPROGRESS) {
		int e = -errno;

		close(fd);
		return e;
	}
	return fd;
}

int xlb_client_call(int fd, json_t *req, json_t **ret_resp, int timeout_ms)
{
	int64_t deadline = deadline_of(timeout_ms);
	size_t cap = 65536, len = 0, off = 0, n;
	char *text, *buf;
	json_error_t jerr;
	int ret = 0;

	text = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	if (!text)
		return -ENOMEM;
	n = strlen(text);
	text[n++] = '\n'; /* json_dumps' NUL becomes the line end */
	while (off < n && !ret) {
		ssize_t w = send(fd, text + off, n - off, MSG_NOSIGNAL);

		if (w >= 0)
			off += (size_t)w;
		else if (errno == EAGAIN)
			ret = wait_fd(fd, POLLOUT, deadline);
		else if (errno == EPIPE || errno == ECONNRESET)
			break; /* refused mid-request (E2BIG): its answer may be there to read */
		else if (errno != EINTR)
			ret = -errno;
	}
	free(text);
	if (ret)
		return ret;

	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t r;

		if (len + 1 >= cap) {
			char *nb;

			if (cap >= 64 * 1024 * 1024) {
				free(buf);
				return -E2BIG;
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		r = recv(fd, buf + len, cap - len - 1, 0);
		if (r < 0 && (errno == EAGAIN || errno == EINTR)) {
			ret = errno == EAGAIN ? wait_fd(fd, POLLIN, deadline) : 0;
			if (ret) {
				free(buf);
				return ret;
			}
			continue;
		}
		if (r < 0) {
			ret = -errno;
			free(buf);
			return ret;
		}
		if (r == 0) {
			free(buf);
			return -ECONNRESET;
		}
		len += (size_t)r;
		if (memchr(buf + len - r, '\n', (size_t)r))
			break;
	}
	*ret_resp = json_loadb(buf, len, JSON_DISABLE_EOF_CHECK, &jerr);
	free(buf);
	return *ret_resp ? 0 : -EBADMSG;
}
