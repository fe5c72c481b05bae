// SPDX-License-Identifier: MIT
/*
 * The kernel backend, reading: per-VIP and per-real counters (summed over
 * the CPUs of the per-CPU maps), the reasons and events, and the status
 * (interfaces, attach modes, program ids, verifier verdicts).
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "kernel.h"

/*
 * Sum one entry of a per-CPU counter map over the CPUs.  The values are
 * struct xlb_counter (packets, bytes) or, for VIPs and reals, struct
 * xlb_lb_counter, which adds new_flows: both are __u64 fields in that order.
 */
static int percpu_sum(struct kernel *k, enum kmap m, uint32_t idx, size_t value_size,
		      struct xlb_counters *ret)
{
	size_t fields = value_size / sizeof(__u64);
	__u64 vals[k->ncpus * fields];

	memset(ret, 0, sizeof(*ret));
	if (km_lookup(k, m, &idx, vals))
		return -errno;
	for (int c = 0; c < k->ncpus; c++) {
		const __u64 *v = &vals[(size_t)c * fields];

		ret->packets += v[0];
		ret->bytes += v[1];
		ret->new_flows += fields > 2 ? v[2] : 0;
	}
	return 0;
}

_Static_assert(sizeof(struct xlb_counter) == 2 * sizeof(__u64) &&
		       sizeof(struct xlb_lb_counter) == 3 * sizeof(__u64) &&
		       offsetof(struct xlb_lb_counter, new_flows) == 2 * sizeof(__u64),
	       "percpu_sum() reads the counters as __u64 fields");

int kernel_vip_counters(struct xlb_backend *be, uint32_t id, struct xlb_counters *ret)
{
	struct kernel *k = be->priv;

	return percpu_sum(k, KM_VIP_STATS, id, sizeof(struct xlb_lb_counter), ret);
}

int kernel_real_counters(struct xlb_backend *be, uint32_t id, struct xlb_counters *ret)
{
	struct kernel *k = be->priv;

	return percpu_sum(k, KM_REAL_STATS, id, sizeof(struct xlb_lb_counter), ret);
}

static int stat_counter(struct xlb_backend *be, bool event, uint32_t idx, struct xlb_counters *ret)
{
	struct kernel *k = be->priv;

	return percpu_sum(k, event ? KM_EVENT_STATS : KM_REASON_STATS, idx,
			  sizeof(struct xlb_counter), ret);
}

int kernel_stats(struct xlb_backend *be, struct xlb_dp_stats *ret)
{
	return xlb_dp_stats_read(be, stat_counter, ret);
}

/*
 * Is our program attached?  Over netlink (no capability: xlbd dropped
 * CAP_SYS_ADMIN after attaching): the program id each XDP mode runs.  Under
 * libxdp's dispatcher only libxdp can tell, by program ids (CAP_SYS_ADMIN).
 */
static bool kernel_prog_running(const struct kiface *ifc, bool *ret_disp, bool *ret_native)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);

	if (ifc->dispatcher)
		return kernel_prog_attached(ifc->ifindex, ifc->prog_id, ret_disp, ret_native);
	*ret_disp = false;
	if (bpf_xdp_query(ifc->ifindex, 0, &q))
		return false;
	*ret_native = q.drv_prog_id == ifc->prog_id;
	return q.drv_prog_id == ifc->prog_id || q.skb_prog_id == ifc->prog_id;
}

/*
 * Has the object file changed since it was read?  By its inode, size and
 * mtime: status never reads the object again (the bytes verified are the
 * bytes loaded, read once).
 */
static bool object_changed(const struct kernel *k)
{
	struct stat st;

	if (!k->img.buf || !k->img_st.st_ino || stat(k->opts.obj_path, &st))
		return false;
	return st.st_ino != k->img_st.st_ino || st.st_dev != k->img_st.st_dev ||
	       st.st_size != k->img_st.st_size || st.st_mtim.tv_sec != k->img_st.st_mtim.tv_sec ||
	       st.st_mtim.tv_nsec != k->img_st.st_mtim.tv_nsec;
}

json_t *kernel_status(struct xlb_backend *be)
{
	struct kernel *k = be->priv;
	json_t *ifaces = json_array(), *j;
	char otag[17] = "", tag[17];
	bool same_build = true;

	if (k->obj_tag[0] | k->obj_tag[1] | k->obj_tag[2] | k->obj_tag[3] | k->obj_tag[4] |
	    k->obj_tag[5] | k->obj_tag[6] | k->obj_tag[7])
		kernel_tag_str(k->obj_tag, otag);

	for (size_t i = 0; i < k->iface_cnt; i++) {
		struct kiface *ifc = &k->ifaces[i];
		bool disp = false, native = false, running;

		running = kernel_prog_running(ifc, &disp, &native);
		/* prog_id runs, and its tag was read when it was attached or adopted. */
		tag[0] = 0;
		if (running)
			kernel_tag_str(ifc->tag, tag);
		if (!running || strcmp(tag, otag))
			same_build = false;
		json_array_append_new(ifaces,
				      json_pack("{s:s, s:i, s:I, s:s, s:b, s:s, s:s, s:b, s:b}", "name",
						ifc->name, "ifindex", ifc->ifindex, "prog_id",
						(json_int_t)ifc->prog_id, "tag", tag, "attached", running,
						"mode", native ? "native" : "generic", "libxdp",
						disp ? "dispatcher" : "single-program", "adopted",
						ifc->adopted, "upgraded", ifc->upgraded));
	}
	j = json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:{s:s, s:s}}", "backend", "kernel", "object",
		      k->opts.obj_path, "object_tag", otag, "running",
		      !otag[0] ? "the pinned program (this build was not loaded)" :
		      !same_build ? "another build than the object (its tag differs)" :
		      object_changed(k) ? "the object as loaded; the file changed since: restart xlbd "
					  "to run it (hitless)" :
					  "the object",
		      "pin_root", k->pin_root, "interfaces", ifaces, "verifier", "result",
		      xlb_verify_result_name(k->verify_result), "message", k->verify_msg);
	if (k->verify_json)
		json_object_set(json_object_get(j, "verifier"), "programs", k->verify_json);
	json_object_set_new(j, "healthcheck_program",
			    json_pack("{s:b, s:s, s:{s:s, s:s}}", "attached", k->hc_obj != NULL,
				      "message", k->hc_msg, "verifier", "result",
				      xlb_verify_result_name(k->hc_img.verify_result), "message",
				      k->hc_verify_msg));
	if (k->hc_verify_json)
		json_object_set(json_object_get(json_object_get(j, "healthcheck_program"), "verifier"),
				"programs", k->hc_verify_json);
	return j;
}
