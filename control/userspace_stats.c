// SPDX-License-Identifier: MIT
/*
 * The userspace backend, reading what xlb-dpdk publishes beside the
 * program's maps (xlb_dpdk_shared.h): its status (pid, heartbeat, engine,
 * program), its ports and its lcores with their counters and load.  The
 * program's own counters are read by kernel_stats.c (one CPU of the
 * per-CPU maps per worker lcore).
 */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>

#include "userspace.h"

/* xlb-dpdk refreshes its heartbeat every 100 ms; a second without one means it is gone. */
#define DPDK_HEARTBEAT_STALE_NS (1000ull * 1000 * 1000)

bool userspace_dpdk_status(struct userspace *u, struct xlb_dpdk_status *ret)
{
	uint32_t zero = 0;

	return !xbpf_map__lookup(u->dpdk[UD_STATUS], &zero, ret) && ret->pid;
}

bool userspace_dpdk_alive(const struct xlb_dpdk_status *st)
{
	uint64_t now = kernel_now_ns();

	if (!st->pid || !st->running || (kill((pid_t)st->pid, 0) && errno == ESRCH))
		return false;
	return now < st->heartbeat_ns || now - st->heartbeat_ns < DPDK_HEARTBEAT_STALE_NS;
}

static json_t *ports_json(struct userspace *u, uint32_t nr_ports)
{
	json_t *ports = json_array();

	for (uint32_t i = 0; i < nr_ports && i < XLB_DPDK_MAX_PORTS; i++) {
		struct xlb_dpdk_port_stats p;

		if (xbpf_map__lookup(u->dpdk[UD_PORTS], &i, &p))
			continue;
		p.name[sizeof(p.name) - 1] = '\0';
		json_array_append_new(
			ports, json_pack("{s:s, s:i, s:I, s:s, s:i}", "name", p.name, "port_id",
					 (int)p.port_id, "ifindex", (json_int_t)p.ifindex, "role",
					 p.role == XLB_DPDK_PORT_EXCEPTION ? "exception" : "data",
					 "rx_queues", (int)p.rx_queues));
	}
	return ports;
}

static json_t *lcores_json(struct userspace *u, uint32_t nr_lcores)
{
	json_t *lcores = json_array();

	for (uint32_t i = 0; i < nr_lcores && i < XLB_DPDK_MAX_LCORES; i++) {
		struct xlb_dpdk_lcore_stats l;

		if (xbpf_map__lookup(u->dpdk[UD_LCORES], &i, &l))
			continue;
		json_array_append_new(lcores,
				      json_pack("{s:i, s:i, s:i, s:f, s:I}", "index", (int)i, "lcore",
						(int)l.lcore_id, "queues", (int)l.nr_queues, "load",
						(double)l.load_permille / 1000.0, "rx",
						(json_int_t)l.rx));
	}
	return lcores;
}

int userspace_io_stats(struct xlb_backend *be, struct xlb_dp_io *ret)
{
	struct userspace *u = be->priv;
	struct xlb_dpdk_status st;

	memset(ret, 0, sizeof(*ret));
	if (!userspace_dpdk_status(u, &st))
		return -ENOENT;
	for (uint32_t i = 0; i < st.nr_ports && i < XLB_DPDK_MAX_PORTS; i++) {
		struct xlb_dpdk_port_stats p;
		uint64_t *c = ret->port[ret->port_cnt].ctr;

		if (xbpf_map__lookup(u->dpdk[UD_PORTS], &i, &p))
			continue;
		snprintf(ret->port[ret->port_cnt].name, sizeof(ret->port[0].name), "%.*s",
			 (int)sizeof(p.name), p.name);
		ret->port[ret->port_cnt].role = p.role == XLB_DPDK_PORT_EXCEPTION ? "exception" : "data";
		ret->port[ret->port_cnt].ifindex = p.ifindex;
		c[XLB_PC_rx_packets] = p.rx_packets, c[XLB_PC_rx_bytes] = p.rx_bytes;
		c[XLB_PC_rx_missed] = p.rx_missed, c[XLB_PC_rx_errors] = p.rx_errors;
		c[XLB_PC_tx_packets] = p.tx_packets, c[XLB_PC_tx_bytes] = p.tx_bytes;
		c[XLB_PC_tx_errors] = p.tx_errors;
		ret->port_cnt++;
	}
	for (uint32_t i = 0; i < st.nr_lcores && i < XLB_DPDK_MAX_LCORES; i++) {
		struct xlb_dpdk_lcore_stats l;
		uint64_t *c = ret->lcore[ret->lcore_cnt].ctr;

		if (xbpf_map__lookup(u->dpdk[UD_LCORES], &i, &l))
			continue;
		ret->lcore[ret->lcore_cnt].index = i;
		ret->lcore[ret->lcore_cnt].lcore = l.lcore_id;
		ret->lcore[ret->lcore_cnt].load = (double)l.load_permille / 1000.0;
		c[XLB_LC_rx] = l.rx, c[XLB_LC_tx] = l.tx, c[XLB_LC_redirect] = l.redirect;
		c[XLB_LC_pass] = l.pass, c[XLB_LC_drop] = l.drop, c[XLB_LC_aborted] = l.aborted;
		c[XLB_LC_tx_failed] = l.tx_failed, c[XLB_LC_bad_mbuf] = l.bad_mbuf;
		ret->lcore_cnt++;
	}
	return 0;
}

json_t *userspace_status(struct xlb_backend *be)
{
	struct userspace *u = be->priv;
	struct xlb_dpdk_status st;
	bool known = userspace_dpdk_status(u, &st);
	bool alive = known && userspace_dpdk_alive(&st);
	json_t *j, *dpdk;

	if (known) {
		st.engine[sizeof(st.engine) - 1] = st.program[sizeof(st.program) - 1] = '\0';
		st.object[sizeof(st.object) - 1] = '\0';
		dpdk = json_pack("{s:b, s:I, s:s, s:s, s:s, s:I, s:o, s:o}", "running", alive, "pid",
				 (json_int_t)st.pid, "engine", st.engine, "program", st.program,
				 "object", st.object, "lcores", (json_int_t)st.nr_lcores, "ports",
				 ports_json(u, st.nr_ports), "lcore_load",
				 lcores_json(u, st.nr_lcores));
	} else {
		dpdk = json_pack("{s:b, s:s}", "running", 0, "message",
				 "xlb-dpdk has not run over these maps yet");
	}
	j = json_pack("{s:s, s:s, s:s, s:s, s:o, s:[], s:{s:s, s:s}}", "backend", "userspace",
		      "object", u->k.opts.obj_path, "pin_root", u->maps_dir, "run_dir", u->run_dir,
		      "dpdk", dpdk, "interfaces", "verifier", "result",
		      xlb_verify_result_name(u->k.verify_result), "message", u->k.verify_msg);
	if (u->k.verify_json)
		json_object_set(json_object_get(j, "verifier"), "programs", u->k.verify_json);
	json_object_set_new(j, "healthcheck_program",
			    json_pack("{s:b, s:s}", "attached", u->k.hc_obj != NULL, "message",
				      u->k.hc_msg));
	return j;
}
