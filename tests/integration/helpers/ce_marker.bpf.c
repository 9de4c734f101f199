// SPDX-License-Identifier: GPL-2.0
/* A test instrument: a marking queue for a fixed-rate link, as a tc (clsact,
 * direct-action) program on the sender's egress.
 *
 * The link serves one packet per CE_PACKET_NS nanoseconds. The program keeps
 * the backlog such a server would have, as the time it needs to drain
 * (backlog = max(0, backlog - elapsed) + packets * CE_PACKET_NS), and sets CE
 * on an ECN-capable IPv4 TCP data packet towards CE_DPORT that arrives while
 * more than CE_K packets are queued ahead of it: DCTCP's marking rule on the
 * instantaneous queue. It never marks a packet that is not ECN-capable, and
 * updates the IPv4 header checksum with the change.
 *
 * The sender's egress sees a TCP segment before software GSO splits it, so a
 * packet here may be several on the wire: it counts as gso_segs packets, and
 * marking it marks all of them (their headers are copies of its header).
 *
 * Counts what it saw in its .bss map, which the test reads with bpftool.
 * Built by the test: clang -O2 -target bpf -DCE_PACKET_NS=T -DCE_K=K
 * -DCE_DPORT=P -I<build>/bpf (for vmlinux.h).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

char LICENSE[] SEC("license") = "GPL";

#if !defined(CE_PACKET_NS) || !defined(CE_K) || !defined(CE_DPORT)
#error "CE_PACKET_NS, CE_K and CE_DPORT must be defined"
#endif

#define CE_ETH_P_IP 0x0800
#define CE_IPPROTO_TCP 6
#define CE_ECN_MASK 3
#define CE_ECN_CE 3
#define CE_TC_ACT_OK 0

struct ce_marker {
	__u64 backlog_ns; /* time the modelled link needs to drain its queue */
	__u64 last_ns; /* when backlog_ns was last brought up to date */
	__u64 packets; /* packets towards CE_DPORT (all of them feed the queue) */
	__u64 data_packets; /* of which TCP data */
	__u64 not_ect; /* data packets that were not ECN-capable */
	__u64 already_ce; /* data packets that arrived with CE */
	__u64 marked; /* data packets set to CE here */
};

struct ce_marker counts = {};

SEC("tc")
int mark_ce(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	__u64 now = bpf_ktime_get_ns();
	__u32 ip_len, headers, segs;
	__u16 old_word, new_word;
	struct tcphdr *tcp;
	struct iphdr *ip;
	__u64 ahead;
	__u8 tos;

	if ((void *)(eth + 1) > end || eth->h_proto != bpf_htons(CE_ETH_P_IP))
		return CE_TC_ACT_OK;
	ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > end || ip->protocol != CE_IPPROTO_TCP || ip->ihl < 5)
		return CE_TC_ACT_OK;
	tcp = (void *)ip + ip->ihl * 4;
	if ((void *)(tcp + 1) > end || tcp->dest != bpf_htons(CE_DPORT))
		return CE_TC_ACT_OK;

	segs = skb->gso_segs > 1 ? skb->gso_segs : 1;
	/* the queue this packet finds, then joins */
	ahead = counts.backlog_ns > now - counts.last_ns ?
		counts.backlog_ns - (now - counts.last_ns) : 0;
	counts.backlog_ns = ahead + (__u64)segs * CE_PACKET_NS;
	counts.last_ns = now;
	counts.packets += segs;

	ip_len = bpf_ntohs(ip->tot_len);
	headers = ip->ihl * 4 + tcp->doff * 4;
	if (ip_len <= headers)
		return CE_TC_ACT_OK; /* no data: a pure ACK, SYN or FIN */
	counts.data_packets += segs;
	tos = ip->tos;
	if ((tos & CE_ECN_MASK) == 0) {
		counts.not_ect += segs;
		return CE_TC_ACT_OK;
	}
	if ((tos & CE_ECN_MASK) == CE_ECN_CE) {
		counts.already_ce += segs;
		return CE_TC_ACT_OK;
	}
	if (ahead <= (__u64)CE_K * CE_PACKET_NS)
		return CE_TC_ACT_OK;

	/* The header's first 16-bit word holds version/IHL and TOS. */
	old_word = *(__u16 *)ip;
	tos |= CE_ECN_CE;
	bpf_skb_store_bytes(skb, sizeof(struct ethhdr) + offsetof(struct iphdr, tos), &tos,
			    sizeof(tos), 0);
	data = (void *)(long)skb->data;
	end = (void *)(long)skb->data_end;
	ip = data + sizeof(struct ethhdr);
	if ((void *)(ip + 1) > end)
		return CE_TC_ACT_OK;
	new_word = *(__u16 *)ip;
	bpf_l3_csum_replace(skb, sizeof(struct ethhdr) + offsetof(struct iphdr, check), old_word,
			    new_word, sizeof(__u16));
	counts.marked += segs;
	return CE_TC_ACT_OK;
}
