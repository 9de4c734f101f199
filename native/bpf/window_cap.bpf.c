// SPDX-License-Identifier: GPL-2.0
/* A receiver that never offers more than a fixed window: a tc (clsact,
 * direct-action) program on the receiver's egress that lowers the window field
 * of the TCP segments it sends from one port to at most `cap` bytes.
 *
 * Why: a Linux receiver before 3.12 offered 10 segments at first and did not
 * grow its window on out-of-order data, so after losses in the first window
 * the sender could send nothing new until the cumulative ACK moved. This
 * kernel's receiver grows its window with every out-of-order segment, and the
 * route's `window` metric does not hold it (the clamp it sets is recomputed
 * from the receive buffer once the receiver has measured its first segments,
 * as one set by TCP_WINDOW_CLAMP would be). The window field is taken
 * as bytes, so the receiver must not use window scaling (the loader turns it
 * off in the receiver's namespace and says so).
 *
 * Configuration and what happened live in one global (the object's .bss map),
 * written by kernel/window_cap.py before traffic and read after.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

char LICENSE[] SEC("license") = "GPL";

#define WC_ETH_P_IP 0x0800
#define WC_IPPROTO_TCP 6
#define WC_TC_ACT_OK 0
#define WC_ETH_HLEN 14
#define WC_TCP_WINDOW_OFF 14 /* offsetof(struct tcphdr, window) */
#define WC_TCP_CHECK_OFF 16 /* offsetof(struct tcphdr, check) */

struct window_cap {
	/* written by the loader */
	__u32 sport; /* the receiver's port, host order */
	__u32 cap; /* the largest window advertised, bytes */
	/* written here */
	__u32 segments; /* segments from sport seen */
	__u32 capped; /* of those, segments whose window was lowered */
	__u32 largest; /* the largest window the receiver asked for, bytes */
	__u32 failed; /* rewrites the kernel refused */
};

struct window_cap cap = {};

SEC("tc")
int cap_window(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip;
	struct tcphdr *tcp;
	__u32 ip_len, offset;
	__u16 window;
	__be16 old_be, new_be;

	if ((void *)(eth + 1) > data_end || eth->h_proto != bpf_htons(WC_ETH_P_IP))
		return WC_TC_ACT_OK;
	ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > data_end || ip->protocol != WC_IPPROTO_TCP)
		return WC_TC_ACT_OK;
	ip_len = ip->ihl * 4;
	if (ip_len < sizeof(*ip) || ip_len > 60)
		return WC_TC_ACT_OK;
	tcp = (void *)ip + ip_len;
	if ((void *)(tcp + 1) > data_end || bpf_ntohs(tcp->source) != cap.sport)
		return WC_TC_ACT_OK;
	cap.segments++;
	old_be = tcp->window;
	window = bpf_ntohs(old_be);
	if (window > cap.largest)
		cap.largest = window;
	if (window <= cap.cap)
		return WC_TC_ACT_OK;
	new_be = bpf_htons((__u16)cap.cap);
	offset = WC_ETH_HLEN + ip_len;
	/* Packet pointers are invalid after these helpers: nothing reads them again. */
	if (bpf_l4_csum_replace(skb, offset + WC_TCP_CHECK_OFF, old_be, new_be, sizeof(new_be)) ||
	    bpf_skb_store_bytes(skb, offset + WC_TCP_WINDOW_OFF, &new_be, sizeof(new_be), 0)) {
		cap.failed++;
		return WC_TC_ACT_OK;
	}
	cap.capped++;
	return WC_TC_ACT_OK;
}
