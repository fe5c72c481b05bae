// SPDX-License-Identifier: MIT
/*
 * Health checks: TCP connect and HTTP GET probes per VIP (interval, timeout,
 * rise, fall).  One thread walks the reals of VIPs that have a check, probes
 * the due ones without holding the daemon lock, and on a transition (fall
 * failures in a row: down; rise successes in a row: up) takes the lock and
 * reconciles, which rebuilds that VIP's Maglev ring without (or with) the
 * real; Maglev moves only that real's slots.
 *
 * Probes go straight to the real's address and the check port (default:
 * the VIP's port).  Reals start "unknown", which counts as up, so a restart
 * of xlbd does not shake the rings before the first probes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "xlbd.h"

struct probe {
	uint32_t real_id;
	uint32_t mark; /* non-zero: through the encapsulated path, to the VIP */
	struct xlb_ip addr; /* where the probe connects */
	struct xlb_ip real; /* for messages */
	uint16_t port;
	struct xlb_hc hc;
	char host[64];
};

static int wait_fd(int fd, short events, uint64_t deadline_ns)
{
	for (;;) {
		uint64_t now = xlbd_now_ns();
		struct pollfd p = { .fd = fd, .events = events };
		int r;

		if (now >= deadline_ns)
			return -ETIMEDOUT;
		r = poll(&p, 1, (int)((deadline_ns - now) / 1000000 + 1));
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
	}
}

/* One probe; 0 when healthy, else -errno with why in msg. */
static int run_probe(const struct probe *p, char *msg, size_t len)
{
	uint64_t deadline = xlbd_now_ns() + (uint64_t)p->hc.timeout_ms * 1000000ull;
	struct sockaddr_storage ss = { 0 };
	socklen_t sl;
	int fd, r, soerr = 0;
	socklen_t el = sizeof(soerr);

	if (p->addr.family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(p->port);
		memcpy(&sin->sin_addr, p->addr.bytes, 4);
		sl = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(p->port);
		memcpy(&sin6->sin6_addr, p->addr.bytes, 16);
		sl = sizeof(*sin6);
	}
	fd = socket(p->addr.family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(msg, len, "socket: %s", strerror(errno));
		return -errno;
	}
	if (p->mark && setsockopt(fd, SOL_SOCKET, SO_MARK, &p->mark, sizeof(p->mark))) {
		r = -errno;
		snprintf(msg, len, "SO_MARK: %s", strerror(-r));
		goto out;
	}
	r = connect(fd, (struct sockaddr *)&ss, sl);
	if (r && errno != EINPROGRESS) {
		r = -errno;
		snprintf(msg, len, "connect: %s", strerror(-r));
		goto out;
	}
	r = wait_fd(fd, POLLOUT, deadline);
	if (!r && (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &el) || soerr))
		r = -(soerr ? soerr : errno);
	if (r) {
		snprintf(msg, len, "connect: %s", strerror(-r));
		goto out;
	}
	if (p->hc.type == XLB_HC_HTTP) {
		char req[300], resp[64];
		size_t got = 0;
		int code = 0;

		/*
		 * Through the encapsulated path the request stays minimal: the
		 * healthcheck tc program (dataplane) currently drops TCP segments
		 * whose headers and payload exceed its 128-byte pull (seen as
		 * drop_trunc_l4), so no Host/User-Agent headers there.
		 */
		if (p->mark)
			snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\n\r\n", p->hc.path);
		else
			snprintf(req, sizeof(req),
				 "GET %s HTTP/1.0\r\nHost: %s\r\nUser-Agent: xlbd-healthcheck\r\nConnection: close\r\n\r\n",
				 p->hc.path, p->host);
		if (send(fd, req, strlen(req), MSG_NOSIGNAL) != (ssize_t)strlen(req)) {
			r = -EIO;
			snprintf(msg, len, "send failed");
			goto out;
		}
		while (got < 12) {
			ssize_t n;

			r = wait_fd(fd, POLLIN, deadline);
			if (r) {
				snprintf(msg, len, "no HTTP answer: %s", strerror(-r));
				goto out;
			}
			n = recv(fd, resp + got, sizeof(resp) - 1 - got, 0);
			if (n <= 0) {
				r = -ECONNRESET;
				snprintf(msg, len, "connection closed before a status line");
				goto out;
			}
			got += (size_t)n;
		}
		resp[got] = 0;
		if (sscanf(resp, "HTTP/%*d.%*d %d", &code) != 1 || code < 200 || code >= 400) {
			r = -EPROTO;
			snprintf(msg, len, "HTTP status %d", code);
			goto out;
		}
	}
	r = 0;
	msg[0] = 0;
out:
	close(fd);
	return r;
}

static void *health_main(void *arg)
{
	struct daemon *d = arg;

	while (!d->stopping) {
		struct probe *due = NULL;
		size_t n = 0, cap = 0;
		uint64_t now = xlbd_now_ns();

		pthread_mutex_lock(&d->lock);
		for (size_t i = 0; i < d->state.vip_cnt; i++) {
			const struct xlb_vip_cfg *v = &d->state.vips[i];

			if (v->hc.type == XLB_HC_NONE)
				continue;
			for (size_t j = 0; j < v->real_cnt; j++) {
				const struct xlb_real_cfg *r = &v->reals[j];
				struct real_health *h = &d->health[r->id];

				if (r->state == XLB_REAL_DOWN || h->next_probe_ns > now)
					continue;
				if (n == cap) {
					struct probe *np = realloc(due, (cap ? cap * 2 : 16) * sizeof(*np));

					if (!np)
						break;
					due = np;
					cap = cap ? cap * 2 : 16;
				}
				due[n] = (struct probe){ .real_id = r->id, .addr = r->addr,
							 .real = r->addr,
							 .port = v->hc.port ? v->hc.port : v->port,
							 .hc = v->hc };
				if (v->hc.via_encap) {
					struct xlb_err err;
					uint32_t mark = XLB_HC_MARK(&d->settings, r->id);

					if (d->be.ops->hc_real_put &&
					    !d->be.ops->hc_real_put(&d->be, mark, &r->addr, v->encap, &err)) {
						due[n].mark = mark;
						due[n].addr = v->addr;
					} else if (!h->probes) {
						xlbd_log(LOG_WARNING,
							 "encapsulated probe impossible (%s), probing the real directly",
							 d->be.ops->hc_real_put ? err.msg : "backend");
					}
				}
				xlb_addr_str(&v->addr, due[n].host, sizeof(due[n].host));
				h->next_probe_ns = now + (uint64_t)v->hc.interval_ms * 1000000ull;
				n++;
			}
		}
		pthread_mutex_unlock(&d->lock);

		for (size_t i = 0; i < n && !d->stopping; i++) {
			char msg[96];
			int r = run_probe(&due[i], msg, sizeof(msg));
			bool changed = false;
			struct real_health *h;

			pthread_mutex_lock(&d->lock);
			h = &d->health[due[i].real_id];
			h->probes++;
			if (r) {
				h->failures++;
				h->fail_streak++;
				h->ok_streak = 0;
				snprintf(h->last_error, sizeof(h->last_error), "%s", msg);
				if (h->state != HEALTH_DOWN && h->fail_streak >= due[i].hc.fall) {
					h->state = HEALTH_DOWN;
					changed = true;
				}
			} else {
				h->ok_streak++;
				h->fail_streak = 0;
				h->last_error[0] = 0;
				if (h->state == HEALTH_UNKNOWN ||
				    (h->state == HEALTH_DOWN && h->ok_streak >= due[i].hc.rise)) {
					/* a waiting new real enters the ring with its first pass */
					changed = h->state == HEALTH_DOWN || h->gated;
					h->state = HEALTH_UP;
					h->gated = false;
				}
			}
			if (changed) {
				char a[64];
				struct xlb_err err;

				xlbd_log(LOG_NOTICE, "real %s is %s (%s)",
					 xlb_addr_str(&due[i].real, a, sizeof(a)),
					 h->state == HEALTH_UP ? "healthy: back in the ring" :
								 "unhealthy: out of the ring",
					 r ? msg : "probe ok");
				{
					struct xlb_real_cfg rc = { .id = due[i].real_id, .addr = due[i].real };

					xlbd_health_save(d, &rc);
				}
				if (xlbd_reconcile(d, &d->state, &err))
					xlbd_log(LOG_ERR, "health change not pushed: %s", err.msg);
			}
			pthread_mutex_unlock(&d->lock);
		}
		free(due);
		{
			struct timespec ts = { .tv_sec = 0, .tv_nsec = 20 * 1000 * 1000 };

			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

int xlbd_health_start(struct daemon *d)
{
	if (pthread_create(&d->health_thread, NULL, health_main, d))
		return -errno;
	d->health_running = true;
	return 0;
}

void xlbd_health_stop(struct daemon *d)
{
	if (!d->health_running)
		return;
	d->stopping = true;
	pthread_join(d->health_thread, NULL);
	d->health_running = false;
}
