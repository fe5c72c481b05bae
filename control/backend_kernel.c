// SPDX-License-Identifier: MIT
/*
 * The kernel backend: balancer.bpf.o attached with libxdp, maps programmed
 * with libbpf.  This file opens and closes it and holds the ops table; the
 * jobs are in kernel_pin.c (attach, adoption, pins), kernel_maps.c,
 * kernel_iface.c (egress, MTU, MACs), kernel_hc.c (encapsulated health
 * probes) and kernel_stats.c (kernel.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel.h"

/* libbpf and libxdp print through the daemon's log, one level lower (STYLE 8). */
static void (*lib_log)(int level, const char *fmt, ...);

static int lib_print(int level, const char *fmt, va_list ap)
{
	char buf[512];
	size_t n;

	if (!lib_log)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	while (n && buf[n - 1] == '\n')
		buf[--n] = 0;
	lib_log(level == 0 ? LOG_INFO : LOG_DEBUG, "%s", buf);
	return 0;
}

static int libbpf_print_cb(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return lib_print((int)level, fmt, ap);
}

static int libxdp_print_cb(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	return lib_print((int)level, fmt, ap);
}

static int kernel_open(struct xlb_backend *be, const struct xlb_backend_opts *opts,
		       struct xlb_err *err)
{
	const struct xlb_settings *set = opts->settings;
	struct kernel *k;
	int ret;

	k = calloc(1, sizeof(*k));
	if (!k)
		return xlb_err_set(err, -ENOMEM, "out of memory");
	be->priv = k;
	k->opts = *opts;
	lib_log = opts->log;
	libbpf_set_print(libbpf_print_cb);
	libxdp_set_print(libxdp_print_cb);
	for (int m = 0; m < KM_CNT; m++)
		k->fd[m] = -1;
	k->lock_fd = -1;
	k->tx_fd = -1;
	k->verify_result = 1;
	k->img.verify_result = 1;
	k->hc_img.verify_result = 1;
	snprintf(k->verify_msg, sizeof(k->verify_msg), "running program adopted, object not reloaded");
	if (strlen(opts->pin_root) >= sizeof(k->pin_root) || opts->pin_root[0] != '/')
		return xlb_err_set(err, -EINVAL, "pin root must be an absolute path under 256 bytes");
	snprintf(k->pin_root, sizeof(k->pin_root), "%s", opts->pin_root);
	be->max_vips = XLB_MAX_VIPS;
	be->max_reals = XLB_MAX_REALS;
	be->ring_size = XLB_RING_SIZE;
	k->ncpus = libbpf_num_possible_cpus();
	if (k->ncpus <= 0)
		return xlb_err_set(err, -EIO, "cannot count possible CPUs");
	k->keys = malloc(XLB_RING_SIZE * sizeof(*k->keys));
	if (!k->keys)
		return xlb_err_set(err, -ENOMEM, "out of memory");
	if (!set->iface_cnt)
		return xlb_err_set(err, -EINVAL, "no interface configured");

	ret = kernel_attach(k, err);
	if (!ret)
		kernel_hc_setup(k);
	return ret;
}

static void kernel_close(struct xlb_backend *be, bool keep)
{
	struct kernel *k = be->priv;

	if (!k)
		return;
	kernel_hc_teardown(k, keep);
	kernel_detach(k, keep);
	for (int m = 0; m < KM_CNT; m++)
		if (k->fd[m] >= 0)
			close(k->fd[m]);
	if (k->tx_fd >= 0)
		close(k->tx_fd);
	/* Attached programs are held by the kernel; our references can go. */
	if (k->obj)
		bpf_object__close(k->obj);
	json_decref(k->verify_json);
	json_decref(k->hc_verify_json);
	free(k->img.buf);
	free(k->hc_img.buf);
	if (k->lock_fd >= 0)
		close(k->lock_fd);
	free(k->keys);
	free(k);
	be->priv = NULL;
}

/* The global config, then how each interface's balanced packets leave. */
static int kernel_settings_put(struct xlb_backend *be, const struct xlb_settings *set,
			       struct xlb_err *err)
{
	return kernel_config_put(be, set, err) ?: kernel_ifaces_put(be->priv, set, err);
}

const struct xlb_backend_ops xlb_backend_kernel_ops = {
	.name = "kernel",
	.open = kernel_open,
	.close = kernel_close,
	.config_put = kernel_settings_put,
	.real_put = kernel_real_put,
	.vip_put = kernel_vip_put,
	.vip_del = kernel_vip_del,
	.vip_list = kernel_vip_list,
	.ring_get = kernel_ring_get,
	.real_get = kernel_real_get,
	.vip_counters = kernel_vip_counters,
	.real_counters = kernel_real_counters,
	.stats = kernel_stats,
	.status = kernel_status,
	.hc_real_put = kernel_hc_real_put,
	.conn_lookup = kernel_conn_lookup,
	.conn_list = kernel_conn_list,
	.conn_flush = kernel_conn_flush,
	.conn_active = kernel_conn_active,
};
