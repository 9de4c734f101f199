// SPDX-License-Identifier: GPL-2.0
/* TCP Hybla (Caini & Firrincieli, "TCP Hybla: a TCP enhancement for
 * heterogeneous networks", Int. J. Satellite Communications, 2004) as a BPF
 * struct_ops registered as "bpf_hybla".
 *
 * Hybla makes cwnd growth independent of the RTT by scaling it with
 * rho = RTT / RTT0 (RTT0 = 25 ms, Linux's default; rho >= 1): per ACK, slow
 * start adds 2^rho - 1 packets and congestion avoidance rho^2 / cwnd, so a
 * long-RTT flow grows in wall-clock time like a 25 ms Reno flow. Fractions of
 * a packet are accumulated in 1/128 units. rho is kept in 1/8 units and is
 * recomputed only when the smoothed RTT reaches a new minimum. Loss
 * response (ssthresh, undo) is Reno's.
 */
#include "tcp_ca_common.h"

char LICENSE[] SEC("license") = "GPL";

#define HYBLA_RTT0_US 25000U
#define HYBLA_CWND_CLAMP 65535

struct hybla_state {
	__u32 cwnd_cents; /* accumulated fractional increments, 1/128 packet */
	__u32 rho; /* integer part of rho */
	__u32 rho_3ls; /* rho << 3 */
	__u32 rho2_7ls; /* rho^2 << 7 */
	__u32 min_srtt; /* smallest smoothed RTT seen (srtt_us units: us << 3) */
	__u8 enabled; /* Hybla growth on (Open state only) */
};

/* srtt_us holds 8 x the smoothed RTT in microseconds, so dividing it by
 * RTT0 in microseconds gives rho already in 1/8 units. */
static __always_inline void hybla_update_rho(struct sock *sk)
{
	struct hybla_state *ca = netrepro_ca(sk);

	ca->rho_3ls = netrepro_max_u32(netrepro_tcp_sk(sk)->srtt_us / HYBLA_RTT0_US, 8);
	ca->rho = ca->rho_3ls >> 3;
	/* (rho_3ls^2 / 64) << 7 */
	ca->rho2_7ls = (ca->rho_3ls * ca->rho_3ls) << 1;
}

/* 2^(eighths / 8) in 1/128 units for eighths in 0..7, rounded down as in
 * Linux (a switch rather than a table: static tables break libbpf 1.1's
 * BTF finalisation). */
static __always_inline __u32 hybla_pow2_fraction(__u32 eighths)
{
	switch (eighths) {
	case 1: return 139;
	case 2: return 152;
	case 3: return 165;
	case 4: return 181;
	case 5: return 197;
	case 6: return 215;
	case 7: return 234;
	default: return 128;
	}
}

SEC("struct_ops")
void BPF_PROG(hybla_init, struct sock *sk)
{
	struct tcp_sock *tp = netrepro_tcp_sk(sk);
	struct hybla_state *ca = netrepro_ca(sk);
	__u32 ssthresh = tp->snd_ssthresh;
	int clamp = HYBLA_CWND_CLAMP;

	ca->rho = 0;
	ca->rho_3ls = 0;
	ca->rho2_7ls = 0;
	ca->cwnd_cents = 0;
	ca->enabled = 1;
	/* snd_cwnd_clamp is read-only to BPF; this setsockopt writes it but
	 * also sets ssthresh, which is therefore restored. */
	bpf_setsockopt(sk, NETREPRO_SOL_TCP, NETREPRO_TCP_BPF_SNDCWND_CLAMP, &clamp, sizeof(clamp));
	tp->snd_ssthresh = ssthresh;

	/* First rho from the handshake's RTT; start with rho packets. */
	hybla_update_rho(sk);
	ca->min_srtt = tp->srtt_us;
	tp->snd_cwnd = ca->rho;
}

SEC("struct_ops")
void BPF_PROG(hybla_set_state, struct sock *sk, __u8 new_state)
{
	struct hybla_state *ca = netrepro_ca(sk);

	ca->enabled = new_state == TCP_CA_Open;
}

SEC("struct_ops")
void BPF_PROG(hybla_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = netrepro_tcp_sk(sk);
	struct hybla_state *ca = netrepro_ca(sk);
	__u32 increment, eighths, cwnd;
	int slow_start = 0;

	if (tp->srtt_us < ca->min_srtt) {
		hybla_update_rho(sk);
		ca->min_srtt = tp->srtt_us;
	}

	if (!netrepro_is_cwnd_limited(sk))
		return;

	if (!ca->enabled) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}

	if (ca->rho == 0)
		hybla_update_rho(sk);

	/* Hybla counts per ACK, not per packet ACKed (as Linux does). */
	if (netrepro_in_slow_start(tp)) {
		slow_start = 1;
		/* 2^rho = 2^int(rho) * 2^frac(rho); shift capped so it cannot
		 * overflow. */
		eighths = ca->rho_3ls - (ca->rho << 3);
		increment = ((1U << netrepro_min_u32(ca->rho, 16)) * hybla_pow2_fraction(eighths)) - 128;
	} else {
		increment = ca->rho2_7ls / tp->snd_cwnd;
		if (increment < 128)
			tp->snd_cwnd_cnt++;
	}

	cwnd = tp->snd_cwnd + (increment >> 7);
	ca->cwnd_cents += increment & 127;
	/* Both terms are below 128 before the sum, so one carry at most. */
	if (ca->cwnd_cents >= 128) {
		cwnd++;
		ca->cwnd_cents -= 128;
		tp->snd_cwnd_cnt = 0;
	}
	/* An increment that rounds to zero still grows cwnd by one per cwnd
	 * ACKs, like Reno. */
	if (increment == 0 && tp->snd_cwnd_cnt >= cwnd) {
		cwnd++;
		tp->snd_cwnd_cnt = 0;
	}

	if (slow_start)
		cwnd = netrepro_min_u32(cwnd, tp->snd_ssthresh);
	tp->snd_cwnd = netrepro_min_u32(cwnd, tp->snd_cwnd_clamp);
}

SEC("struct_ops")
__u32 BPF_PROG(hybla_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(hybla_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops bpf_hybla = {
	.init = (void *)hybla_init,
	.ssthresh = (void *)hybla_ssthresh,
	.undo_cwnd = (void *)hybla_undo_cwnd,
	.cong_avoid = (void *)hybla_cong_avoid,
	.set_state = (void *)hybla_set_state,
	.name = "bpf_hybla",
};
