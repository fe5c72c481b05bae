// SPDX-License-Identifier: MIT
/* The client side of xlbd's socket: one JSON document per line each way. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "xlb_control.h"

int xlb_client_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int e = -errno;

		close(fd);
		return e;
	}
	return fd;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int xlb_client_call(int fd, json_t *req, json_t **ret_resp)
{
	size_t cap = 65536, len = 0;
	char *text, *buf;
	json_error_t jerr;
	int ret;

	text = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	if (!text)
		return -ENOMEM;
	ret = write_all(fd, text, strlen(text));
	if (!ret)
		ret = write_all(fd, "\n", 1);
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
		r = read(fd, buf + len, cap - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
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
