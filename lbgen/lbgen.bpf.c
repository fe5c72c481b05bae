// SPDX-License-Identifier: MIT
/*
 * lbgen.bpf.c - lbgen's frame builder for BPF_PROG_RUN live frames.
 *
 * With BPF_F_TEST_XDP_LIVE_FRAMES the kernel runs this program on pages it
 * initialised once from data_in and recycles, then sends each frame out of
 * the device as the program says.  A load balancer on the far side rewrites
 * frames in place (its Ethernet header at least), and the kernel hands the
 * page back as it was left: so lbgen_build writes the whole header of every
 * frame from a template, for its flow, before XDP_TX sends it.
 *
 * lbgen_sink is the program on the generator's own veth end: frames the LB
 * sends back are dropped there (veth delivers XDP frames only to a device
 * with an XDP program).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "lbgen_shared.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lbgen_config);
} lbgen_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lbgen_cpu);
} lbgen_cpu SEC(".maps");

/* RFC 1624: HC' = ~(~HC + ~m + m') over 16-bit words, as stored. */
static __always_inline __u16 csum_replace(__u16 hc, __u32 old, __u32 new)
{
	__u32 s = (__u16)~hc;

	s += (__u16)~old + (__u16)~(old >> 16) + (__u16)new + (__u16)(new >> 16);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (__u16)~s;
}

SEC("xdp")
int lbgen_build(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	__u32 zero = 0, t = 0, r, flow, len, old_addr, new_addr, old_port, new_port;
	struct lbgen_config *cfg = bpf_map_lookup_elem(&lbgen_config, &zero);
	struct lbgen_cpu *cpu = bpf_map_lookup_elem(&lbgen_cpu, &zero);
	const struct lbgen_template *tp;

	if (!cfg || !cpu || !cfg->flows)
		return XDP_ABORTED;
	if (cfg->tmpl_cnt > 1) {
		r = bpf_get_prandom_u32();
		/* at most LBGEN_TEMPLATES_MAX - 1 comparisons; the last template takes the rest */
		if (r >= cfg->tmpl[0].weight_cum) {
			t = 1;
			if (cfg->tmpl_cnt > 2 && r >= cfg->tmpl[1].weight_cum) {
				t = 2;
				if (cfg->tmpl_cnt > 3 && r >= cfg->tmpl[2].weight_cum)
					t = 3;
			}
		}
	}
	tp = &cfg->tmpl[t];
	if (cfg->random)
		flow = bpf_get_prandom_u32() % cfg->flows;
	else
		flow = cpu->next_flow++ % cfg->flows;
	len = tp->len;
	if (len > LBGEN_HDR_MAX || data + len > data_end) {
		cpu->bad++;
		return XDP_DROP;
	}
	for (int i = 0; i < LBGEN_HDR_MAX / 8; i++) {
		if ((i + 1) * 8 > len)
			break;
		if (data + (i + 1) * 8 > data_end)
			return XDP_DROP;
		*(__u64 *)(data + i * 8) = tp->words[i];
	}
	if (flow) {
		__u16 so = tp->saddr_off & (LBGEN_HDR_MAX - 1), po = tp->sport_off & (LBGEN_HDR_MAX - 1);
		__u16 co;

		if (data + so + 4 > data_end || data + po + 2 > data_end)
			return XDP_DROP;
		old_addr = *(__u32 *)(data + so);
		new_addr = bpf_htonl(tp->saddr_base + flow / LBGEN_SPORT_SPAN);
		old_port = *(__u16 *)(data + po);
		new_port = bpf_htons(LBGEN_SPORT_MIN + flow % LBGEN_SPORT_SPAN);
		*(__u32 *)(data + so) = new_addr;
		*(__u16 *)(data + po) = (__u16)new_port;
		co = tp->ip4_csum_off & (LBGEN_HDR_MAX - 1);
		if (co) {
			if (data + co + 2 > data_end)
				return XDP_DROP;
			*(__u16 *)(data + co) = csum_replace(*(__u16 *)(data + co), old_addr, new_addr);
		}
		co = tp->l4_csum_off & (LBGEN_HDR_MAX - 1);
		if (co) {
			__u16 c;

			if (data + co + 2 > data_end)
				return XDP_DROP;
			c = csum_replace(*(__u16 *)(data + co), old_addr, new_addr);
			c = csum_replace(c, old_port, new_port);
			*(__u16 *)(data + co) = tp->udp && !c ? 0xffff : c;
		}
	}
	cpu->built++;
	if (t < LBGEN_TEMPLATES_MAX)
		cpu->per_tmpl[t]++;
	return XDP_TX;
}

SEC("xdp")
int lbgen_sink(struct xdp_md *ctx)
{
	return XDP_DROP;
}

char _license[] SEC("license") = "GPL";
