// SPDX-License-Identifier: GPL-2.0
/* A deterministic loss pattern for one TCP flow: a tc (clsact, direct-action)
 * program that drops chosen ORIGINAL data segments, counted from the first
 * data segment the flow sends (1-based).
 *
 * A segment is original when its sequence number is at or above the highest
 * end of sequence seen so far (so retransmissions, which lie below, are never
 * counted and never dropped). Only IPv4 TCP segments with a payload towards
 * `dport` are looked at; everything else passes.
 *
 * Configuration and results live in one global (the object's .bss map), which
 * topologies/segment_dropper.py writes before traffic starts and reads after:
 * the destination port, up to SD_MAX_DROPS segment numbers to drop, and what
 * happened (originals counted, retransmissions seen, the relative sequence
 * numbers of the dropped segments).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

char LICENSE[] SEC("license") = "GPL";

#define SD_MAX_DROPS 32
#define SD_ETH_P_IP 0x0800
#define SD_IPPROTO_TCP 6
#define SD_TC_ACT_OK 0
#define SD_TC_ACT_SHOT 2

struct segment_dropper {
	/* written by the loader */
	__u32 dport; /* host order */
	__u32 n_drops;
	__u32 drops[SD_MAX_DROPS]; /* original segment numbers, 1-based */
	/* written here */
	__u32 started;
	__u32 isn; /* sequence number of the first data byte */
	__u32 high_end; /* highest end of sequence seen, relative to isn */
	__u32 originals; /* original data segments seen (dropped ones included) */
	__u32 retransmissions; /* data segments below high_end */
	__u32 dropped; /* how many were dropped */
	__u32 dropped_seq[SD_MAX_DROPS]; /* relative sequence numbers of the drops */
};

struct segment_dropper dropper = {};

static __always_inline int sd_should_drop(__u32 number)
{
	__u32 n = dropper.n_drops;

#pragma clang loop unroll(full)
	for (int i = 0; i < SD_MAX_DROPS; i++) {
		if ((__u32)i < n && dropper.drops[i] == number)
			return 1;
	}
	return 0;
}

SEC("tc")
int drop_segments(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip;
	struct tcphdr *tcp;
	__u32 ip_len, tcp_len, payload, seq, rel, end;

	if ((void *)(eth + 1) > data_end || eth->h_proto != bpf_htons(SD_ETH_P_IP))
		return SD_TC_ACT_OK;
	ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > data_end || ip->protocol != SD_IPPROTO_TCP)
		return SD_TC_ACT_OK;
	ip_len = ip->ihl * 4;
	if (ip_len < sizeof(*ip) || ip_len > 60)
		return SD_TC_ACT_OK;
	tcp = (void *)ip + ip_len;
	if ((void *)(tcp + 1) > data_end || bpf_ntohs(tcp->dest) != dropper.dport)
		return SD_TC_ACT_OK;
	tcp_len = tcp->doff * 4;
	payload = bpf_ntohs(ip->tot_len);
	if (payload <= ip_len + tcp_len)
		return SD_TC_ACT_OK; /* no data: SYN, pure ACK, FIN */
	payload -= ip_len + tcp_len;
	seq = bpf_ntohl(tcp->seq);

	if (!dropper.started) {
		dropper.started = 1;
		dropper.isn = seq;
		dropper.high_end = 0;
	}
	rel = seq - dropper.isn;
	if ((__s32)(rel - dropper.high_end) < 0) {
		dropper.retransmissions++;
		return SD_TC_ACT_OK;
	}
	end = rel + payload;
	dropper.high_end = end;
	dropper.originals++;
	if (!sd_should_drop(dropper.originals))
		return SD_TC_ACT_OK;
	if (dropper.dropped < SD_MAX_DROPS) {
		__u32 slot = dropper.dropped;

		if (slot < SD_MAX_DROPS)
			dropper.dropped_seq[slot] = rel;
	}
	dropper.dropped++;
	return SD_TC_ACT_SHOT;
}
