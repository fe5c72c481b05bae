// SPDX-License-Identifier: MIT
/*
 * A dead link for the host-failure test: attached on the router's side of
 * an LB's link (tc ingress and egress), it drops every frame both ways
 * while the carrier stays up, as a frozen host or a broken switch port
 * would.  Only BFD can tell the router that the LB is gone.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>

__attribute__((section("tc"), used)) int blackhole(struct __sk_buff *skb)
{
	return TC_ACT_SHOT;
}

char _license[] __attribute__((section("license"), used)) = "GPL";
