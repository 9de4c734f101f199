// SPDX-License-Identifier: GPL-2.0
/* DCTCP (Alizadeh et al., SIGCOMM 2010; RFC 8257) as a BPF struct_ops,
 * registered as "bpf_dctcp" so it is never mistaken for the kernel's module.
 *
 * Behaviour follows Linux's tcp_dctcp defaults: g = 1/16 (shift 4), alpha
 * starts at 1 (1024/1024) and is updated once per window of data, when
 * snd_una passes the end of the window that was in flight at the last update,
 * from the fraction F of packets delivered with ECE: alpha <- (1 - g) alpha +
 * g F. (Linux counts delivered packets, not bytes as RFC 8257 does; with a
 * fixed MSS the two agree.) Entering CWR on ECE sets ssthresh = cwnd -
 * cwnd alpha / 2 (alpha in 1/1024: cwnd - (cwnd alpha) >> 11, at least 2); a
 * loss (fast recovery or timeout) halves instead. Growth and undo are Reno's.
 *
 * The receiving side runs the same code: its CE state machine echoes exactly
 * which packets carried CE. On a change of CE state it first sends the ACK it
 * was delaying, with ECE as the earlier state had it, then asks for an
 * immediate ACK; ECE (TCP_ECN_DEMAND_CWR) then follows the new state.
 *
 * Without negotiated ECN the socket switches itself to Reno, as Linux's
 * dctcp falls back to its dctcp-reno; it then no longer reads as bpf_dctcp.
 *
 * The kernel refuses get_info from BPF, so alpha is published per socket in
 * the map dctcp_alpha (schemes/dctcp_alpha.py reads it).
 */
#include "tcp_ca_common.h"
#include <bpf/bpf_endian.h>

char LICENSE[] SEC("license") = "GPL";

#define DCTCP_SHIFT_G 4U
#define DCTCP_MAX_ALPHA 1024U
/* Not exported as BTF constants: include/net/tcp.h and include/net/inet_ecn.h. */
#define NETREPRO_TCP_CONG_NEEDS_ECN 0x2
#define NETREPRO_TCP_ECN_OK 0x1
#define NETREPRO_TCP_ECN_DEMAND_CWR 0x4
#define NETREPRO_TCP_CONGESTION 13
#define DCTCP_EXPORT_ENTRIES 4096

struct dctcp_state {
	__u32 old_delivered; /* tp->delivered when the current window began */
	__u32 old_delivered_ce; /* tp->delivered_ce then */
	__u32 prior_rcv_nxt; /* receiver: rcv_nxt before the last CE event */
	__u32 alpha; /* 1/1024 */
	__u32 next_seq; /* snd_nxt when the current window began */
	__u32 ce_state; /* receiver: 1 while the last data packet carried CE */
	__u32 loss_cwnd; /* cwnd before the last reduction, for undo */
};

/* The published state of one socket, keyed by its namespace and addresses.
 * The layout is read back by schemes/dctcp_alpha.py: change both together. */
struct dctcp_key {
	__u32 netns; /* inode of the socket's network namespace */
	__u32 saddr; /* local IPv4 address, network order */
	__u32 daddr; /* remote IPv4 address, network order */
	__u16 sport; /* local port, host order */
	__u16 dport; /* remote port, host order */
};

struct dctcp_export {
	__u64 init_ns; /* CLOCK_MONOTONIC when DCTCP started on the socket */
	__u64 update_ns; /* ... at the last alpha update */
	__u64 release_ns; /* ... when the socket let go of DCTCP; 0 while it runs */
	__u32 alpha; /* 1/1024 */
	__u32 updates; /* alpha updates (windows) so far */
	__u32 window_delivered; /* packets delivered in the last completed window */
	__u32 window_delivered_ce; /* of which with ECE */
	__u32 delivered; /* tp->delivered at the last update */
	__u32 delivered_ce; /* tp->delivered_ce at the last update */
	__u32 reductions; /* ssthresh() calls: ECN (CWR) and loss alike */
	__u32 last_reduction_cwnd; /* cwnd when ssthresh() was last called */
	__u32 last_reduction_alpha; /* alpha it used */
	__u32 last_reduction_ssthresh; /* what it returned */
	__u32 ce_state; /* receiver */
	__u32 ce_changes; /* receiver: CE state changes */
	__u32 delayed_acks_sent; /* receiver: delayed ACKs sent early for the earlier state */
	__u32 losses; /* halvings on fast recovery or timeout */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, DCTCP_EXPORT_ENTRIES);
	__type(key, struct dctcp_key);
	__type(value, struct dctcp_export);
} dctcp_alpha SEC(".maps");

static __always_inline void dctcp_key_of(const struct sock *sk, struct dctcp_key *key)
{
	key->netns = sk->__sk_common.skc_net.net->ns.inum;
	key->saddr = sk->__sk_common.skc_rcv_saddr;
	key->daddr = sk->__sk_common.skc_daddr;
	key->sport = sk->__sk_common.skc_num;
	key->dport = bpf_ntohs(sk->__sk_common.skc_dport);
}

static __always_inline struct dctcp_export *dctcp_export_of(const struct sock *sk)
{
	struct dctcp_key key = {};

	dctcp_key_of(sk, &key);
	return bpf_map_lookup_elem(&dctcp_alpha, &key);
}

/* Start a new observation window at the data now in flight. */
static __always_inline void dctcp_reset(const struct tcp_sock *tp, struct dctcp_state *ca)
{
	ca->next_seq = tp->snd_nxt;
	ca->old_delivered = tp->delivered;
	ca->old_delivered_ce = tp->delivered_ce;
}

SEC("struct_ops")
void BPF_PROG(dctcp_init, struct sock *sk)
{
	const struct tcp_sock *tp = netrepro_tcp_sk(sk);
	struct dctcp_state *ca = netrepro_ca(sk);
	unsigned char state = sk->__sk_common.skc_state;
	struct dctcp_export fresh = {};
	struct dctcp_key key = {};

	if (!(tp->ecn_flags & NETREPRO_TCP_ECN_OK) && state != TCP_LISTEN &&
	    state != TCP_CLOSE) {
		/* No ECN negotiated: Reno, as Linux's dctcp does (changing the
		 * control also stops ECT on this socket's packets). */
		char reno[] = "reno";

		bpf_setsockopt(sk, NETREPRO_SOL_TCP, NETREPRO_TCP_CONGESTION, reno,
			       sizeof(reno));
		return;
	}

	ca->prior_rcv_nxt = tp->rcv_nxt;
	ca->alpha = DCTCP_MAX_ALPHA;
	ca->loss_cwnd = 0;
	ca->ce_state = 0;
	dctcp_reset(tp, ca);

	dctcp_key_of(sk, &key);
	fresh.init_ns = bpf_ktime_get_ns();
	fresh.alpha = ca->alpha;
	fresh.delivered = tp->delivered;
	fresh.delivered_ce = tp->delivered_ce;
	bpf_map_update_elem(&dctcp_alpha, &key, &fresh, BPF_ANY);
}

SEC("struct_ops")
void BPF_PROG(dctcp_release, struct sock *sk)
{
	struct dctcp_export *out = dctcp_export_of(sk);

	/* Kept, not deleted: the run reads the final values after the
	 * connection closed (the map is LRU, so old entries age out). */
	if (out)
		out->release_ns = bpf_ktime_get_ns();
}

/* Once per window: alpha <- (1 - g) alpha + g F, F = delivered_ce / delivered. */
SEC("struct_ops")
void BPF_PROG(dctcp_update_alpha, struct sock *sk, __u32 flags)
{
	const struct tcp_sock *tp = netrepro_tcp_sk(sk);
	struct dctcp_state *ca = netrepro_ca(sk);
	struct dctcp_export *out;
	__u32 delivered_ce, delivered, alpha, decay;

	if (netrepro_after(ca->next_seq, tp->snd_una))
		return; /* the window is not acknowledged yet */

	delivered_ce = tp->delivered_ce - ca->old_delivered_ce;
	delivered = tp->delivered - ca->old_delivered;
	alpha = ca->alpha;
	/* alpha - alpha g, rounded so that a small alpha still decays to 0 */
	decay = alpha >> DCTCP_SHIFT_G;
	alpha -= decay ? decay : alpha;
	if (delivered_ce) {
		/* g F in 1/1024 units: delivered_ce << (10 - shift) / delivered */
		__u32 gain = (delivered_ce << (10 - DCTCP_SHIFT_G)) /
			     netrepro_max_u32(delivered, 1);

		alpha = netrepro_min_u32(alpha + gain, DCTCP_MAX_ALPHA);
	}
	ca->alpha = alpha;
	dctcp_reset(tp, ca);

	out = dctcp_export_of(sk);
	if (out) {
		out->alpha = alpha;
		out->updates++;
		out->update_ns = bpf_ktime_get_ns();
		out->window_delivered = delivered;
		out->window_delivered_ce = delivered_ce;
		out->delivered = tp->delivered;
		out->delivered_ce = tp->delivered_ce;
	}
}

SEC("struct_ops")
__u32 BPF_PROG(dctcp_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = netrepro_tcp_sk(sk);
	struct dctcp_state *ca = netrepro_ca(sk);
	struct dctcp_export *out;
	__u32 cwnd = tp->snd_cwnd;
	__u32 ssthresh;

	ca->loss_cwnd = cwnd;
	ssthresh = netrepro_max_u32(cwnd - ((cwnd * ca->alpha) >> 11U), 2U);
	out = dctcp_export_of(sk);
	if (out) {
		out->reductions++;
		out->last_reduction_cwnd = cwnd;
		out->last_reduction_alpha = ca->alpha;
		out->last_reduction_ssthresh = ssthresh;
	}
	return ssthresh;
}

/* A loss halves the window whatever alpha says. */
static __always_inline void dctcp_react_to_loss(struct sock *sk)
{
	struct tcp_sock *tp = netrepro_tcp_sk(sk);
	struct dctcp_state *ca = netrepro_ca(sk);
	struct dctcp_export *out;

	ca->loss_cwnd = tp->snd_cwnd;
	tp->snd_ssthresh = netrepro_max_u32(tp->snd_cwnd >> 1U, 2U);
	out = dctcp_export_of(sk);
	if (out)
		out->losses++;
}

SEC("struct_ops")
void BPF_PROG(dctcp_set_state, struct sock *sk, __u8 new_state)
{
	/* Entering fast recovery (the state still holds the old value here);
	 * a timeout arrives as CA_EVENT_LOSS instead, so each loss halves once. */
	if (new_state == TCP_CA_Recovery &&
	    new_state != netrepro_inet_csk(sk)->icsk_ca_state)
		dctcp_react_to_loss(sk);
}

/* ECE on the ACKs this socket sends follows the CE state. */
static __always_inline void dctcp_ece_follows(struct sock *sk, __u32 ce_state)
{
	struct tcp_sock *tp = netrepro_tcp_sk(sk);

	if (ce_state)
		tp->ecn_flags |= NETREPRO_TCP_ECN_DEMAND_CWR;
	else
		tp->ecn_flags &= ~NETREPRO_TCP_ECN_DEMAND_CWR;
}

/* The receiver's two-state machine (RFC 8257 section 3.2). */
static __always_inline void dctcp_ce_event(struct sock *sk, enum tcp_ca_event event)
{
	struct inet_connection_sock *icsk = netrepro_inet_csk(sk);
	struct dctcp_state *ca = netrepro_ca(sk);
	__u32 ce_state = event == CA_EVENT_ECN_IS_CE ? 1 : 0;
	struct dctcp_export *out = 0;

	if (ca->ce_state != ce_state) {
		out = dctcp_export_of(sk);
		/* An ACK was being delayed: send it now, for the data up to
		 * the previous event, with the previous state's ECE. */
		if (icsk->icsk_ack.pending & ICSK_ACK_TIMER) {
			dctcp_ece_follows(sk, ca->ce_state);
			bpf_tcp_send_ack(sk, ca->prior_rcv_nxt);
			if (out)
				out->delayed_acks_sent++;
		}
		/* ... and ACK the packet that changed the state at once. */
		icsk->icsk_ack.pending |= ICSK_ACK_NOW;
		if (out) {
			out->ce_changes++;
			out->ce_state = ce_state;
		}
	}
	ca->prior_rcv_nxt = netrepro_tcp_sk(sk)->rcv_nxt;
	ca->ce_state = ce_state;
	dctcp_ece_follows(sk, ce_state);
}

SEC("struct_ops")
void BPF_PROG(dctcp_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	switch (event) {
	case CA_EVENT_ECN_IS_CE:
	case CA_EVENT_ECN_NO_CE:
		dctcp_ce_event(sk, event);
		break;
	case CA_EVENT_LOSS: /* retransmission timeout */
		dctcp_react_to_loss(sk);
		break;
	default:
		break;
	}
}

SEC("struct_ops")
__u32 BPF_PROG(dctcp_undo_cwnd, struct sock *sk)
{
	const struct dctcp_state *ca = netrepro_ca(sk);

	return netrepro_max_u32(netrepro_tcp_sk(sk)->snd_cwnd, ca->loss_cwnd);
}

SEC("struct_ops")
void BPF_PROG(dctcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

/* The map's own name equals .name so `bpftool struct_ops show` lists it
 * under the name sockets use. get_info is omitted: the kernel refuses it. */
SEC(".struct_ops")
struct tcp_congestion_ops bpf_dctcp = {
	.init = (void *)dctcp_init,
	.release = (void *)dctcp_release,
	.in_ack_event = (void *)dctcp_update_alpha,
	.cwnd_event = (void *)dctcp_cwnd_event,
	.ssthresh = (void *)dctcp_ssthresh,
	.cong_avoid = (void *)dctcp_cong_avoid,
	.undo_cwnd = (void *)dctcp_undo_cwnd,
	.set_state = (void *)dctcp_set_state,
	.flags = NETREPRO_TCP_CONG_NEEDS_ECN,
	.name = "bpf_dctcp",
};
