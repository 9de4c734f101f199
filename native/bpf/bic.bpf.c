// SPDX-License-Identifier: GPL-2.0
/* BIC TCP (Xu, Harfoush, Rhee, "Binary Increase Congestion Control for Fast,
 * Long Distance Networks", INFOCOM 2004) as a BPF struct_ops registered as
 * "bpf_bic".
 *
 * Linux's defaults: beta = 819/1024, max_increment = 16, low_window = 14,
 * smooth_part = 20, B = 4, fast convergence on, no initial ssthresh. Below
 * low_window BIC behaves as Reno. Above it, after a loss the window searches
 * between the post-loss window and Wmax by binary search (at most
 * max_increment packets per RTT), then probes past Wmax slowly before
 * growing linearly again. Increments are scaled by the measured ratio of
 * packets per ACK (delayed ACKs).
 */
#include "tcp_ca_common.h"

char LICENSE[] SEC("license") = "GPL";

#define BIC_BETA_SCALE 1024U
#define BIC_BETA 819U
#define BIC_B 4U /* binary search goes to (max + min) / B */
#define BIC_MAX_INCREMENT 16U
#define BIC_LOW_WINDOW 14U
#define BIC_SMOOTH_PART 20U
#define BIC_ACK_RATIO_SHIFT 4
/* Recompute cnt at most every HZ/32 jiffies (31.25 ms) while cwnd is
 * unchanged; kept in microseconds so no kconfig HZ is needed. */
#define BIC_UPDATE_INTERVAL_US 31250

struct bic_state {
	__u32 cnt; /* ACKed packets needed per +1 of cwnd */
	__u32 last_max_cwnd; /* Wmax: window at the last loss (or its estimate) */
	__u32 last_cwnd; /* cwnd when cnt was last computed */
	__u32 last_time_us; /* when cnt was last computed */
	__u32 delayed_ack; /* EWMA of packets per ACK, << BIC_ACK_RATIO_SHIFT */
};

static __always_inline void bic_reset(struct bic_state *ca)
{
	ca->cnt = 0;
	ca->last_max_cwnd = 0;
	ca->last_cwnd = 0;
	ca->last_time_us = 0;
	ca->delayed_ack = 2 << BIC_ACK_RATIO_SHIFT;
}

SEC("struct_ops")
void BPF_PROG(bic_init, struct sock *sk)
{
	bic_reset(netrepro_ca(sk));
}

/* Number of ACKed packets per +1 of cwnd for the current position
 * relative to Wmax. */
static __always_inline void bic_update(struct bic_state *ca, __u32 cwnd, __u32 now_us)
{
	__u32 dist;

	if (ca->last_cwnd == cwnd &&
	    (__s32)(now_us - ca->last_time_us) <= BIC_UPDATE_INTERVAL_US)
		return;
	ca->last_cwnd = cwnd;
	ca->last_time_us = now_us;

	if (cwnd <= BIC_LOW_WINDOW) {
		/* Small windows: Reno's one packet per RTT. */
		ca->cnt = cwnd;
		return;
	}

	if (cwnd < ca->last_max_cwnd) {
		/* Below Wmax: binary search towards it. */
		dist = (ca->last_max_cwnd - cwnd) / BIC_B;
		if (dist > BIC_MAX_INCREMENT)
			ca->cnt = cwnd / BIC_MAX_INCREMENT; /* capped: linear */
		else if (dist <= 1)
			ca->cnt = cwnd * BIC_SMOOTH_PART / BIC_B; /* close: creep */
		else
			ca->cnt = cwnd / dist;
	} else {
		/* At or above Wmax: probe for a new maximum, slowly at first. */
		if (cwnd < ca->last_max_cwnd + BIC_B)
			ca->cnt = cwnd * BIC_SMOOTH_PART / BIC_B;
		else if (cwnd < ca->last_max_cwnd + BIC_MAX_INCREMENT * (BIC_B - 1))
			ca->cnt = cwnd * (BIC_B - 1) / (cwnd - ca->last_max_cwnd);
		else
			ca->cnt = cwnd / BIC_MAX_INCREMENT;
	}

	/* No loss seen yet (bandwidth unknown): at least 5% growth per RTT. */
	if (ca->last_max_cwnd == 0 && ca->cnt > 20)
		ca->cnt = 20;

	/* cnt counts ACKs, so divide by the packets each ACK covers. */
	ca->cnt = (ca->cnt << BIC_ACK_RATIO_SHIFT) / ca->delayed_ack;
	if (ca->cnt == 0)
		ca->cnt = 1;
}

SEC("struct_ops")
void BPF_PROG(bic_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = netrepro_tcp_sk(sk);
	struct bic_state *ca = netrepro_ca(sk);

	if (!netrepro_is_cwnd_limited(sk))
		return;

	if (netrepro_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	bic_update(ca, tp->snd_cwnd, (__u32)tp->tcp_mstamp);
	tcp_cong_avoid_ai(tp, ca->cnt, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(bic_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = netrepro_tcp_sk(sk);
	struct bic_state *ca = netrepro_ca(sk);
	__u32 cwnd = tp->snd_cwnd;

	/* Fast convergence: a loss below the previous Wmax means another flow
	 * is taking bandwidth, so aim lower than this window. */
	if (cwnd < ca->last_max_cwnd)
		ca->last_max_cwnd = cwnd * (BIC_BETA_SCALE + BIC_BETA) / (2 * BIC_BETA_SCALE);
	else
		ca->last_max_cwnd = cwnd;

	if (cwnd <= BIC_LOW_WINDOW)
		return netrepro_max_u32(cwnd >> 1, 2);
	return netrepro_max_u32(cwnd * BIC_BETA / BIC_BETA_SCALE, 2);
}

SEC("struct_ops")
void BPF_PROG(bic_set_state, struct sock *sk, __u8 new_state)
{
	/* A timeout forgets everything learnt about the path. */
	if (new_state == TCP_CA_Loss)
		bic_reset(netrepro_ca(sk));
}

SEC("struct_ops")
void BPF_PROG(bic_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct bic_state *ca = netrepro_ca(sk);

	/* ratio += (sample - ratio) / 16, in 1/16 packet units */
	if (netrepro_inet_csk(sk)->icsk_ca_state == TCP_CA_Open)
		ca->delayed_ack += sample->pkts_acked - (ca->delayed_ack >> BIC_ACK_RATIO_SHIFT);
}

SEC("struct_ops")
__u32 BPF_PROG(bic_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops bpf_bic = {
	.init = (void *)bic_init,
	.ssthresh = (void *)bic_ssthresh,
	.cong_avoid = (void *)bic_cong_avoid,
	.set_state = (void *)bic_set_state,
	.undo_cwnd = (void *)bic_undo_cwnd,
	.pkts_acked = (void *)bic_pkts_acked,
	.name = "bpf_bic",
};
