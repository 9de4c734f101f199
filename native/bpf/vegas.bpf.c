// SPDX-License-Identifier: GPL-2.0
/* TCP Vegas (Brakmo & Peterson, IEEE JSAC 13(8), 1995) as a BPF struct_ops,
 * registered as "bpf_vegas" so it is never mistaken for the kernel module.
 *
 * Behaviour follows Linux's tcp_vegas defaults: alpha = 2, beta = 4,
 * gamma = 1 packets; baseRTT is the smallest RTT ever seen; once per RTT,
 * with at least three RTT samples in that RTT, compare the expected and the
 * actual rate through diff = cwnd * (minRTT - baseRTT) / baseRTT (packets
 * queued in the network). Too few samples, or any state other than Open,
 * means plain Reno. Loss response (ssthresh, undo) is Reno's.
 */
#include "tcp_ca_common.h"

char LICENSE[] SEC("license") = "GPL";

#define VEGAS_ALPHA 2U
#define VEGAS_BETA 4U
#define VEGAS_GAMMA 1U
#define VEGAS_NO_RTT 0x7fffffffU

struct vegas_state {
	__u32 window_end_seq; /* snd_nxt when the current RTT round began */
	__u32 samples; /* RTT samples seen in the current round */
	__u32 round_min_rtt_us; /* smallest RTT (+1) in the current round */
	__u32 base_rtt_us; /* smallest RTT (+1) ever: propagation delay */
	__u8 active; /* Vegas decisions on (only in the Open state) */
};

/* Start a fresh measurement round: decisions wait for a whole RTT of new
 * samples after connection start, idle restart, recovery or timeout. */
static __always_inline void vegas_start_round(struct sock *sk)
{
	struct vegas_state *v = netrepro_ca(sk);

	v->active = 1;
	v->window_end_seq = netrepro_tcp_sk(sk)->snd_nxt;
	v->samples = 0;
	v->round_min_rtt_us = VEGAS_NO_RTT;
}

static __always_inline void vegas_reset(struct sock *sk)
{
	struct vegas_state *v = netrepro_ca(sk);

	v->base_rtt_us = VEGAS_NO_RTT;
	vegas_start_round(sk);
}

SEC("struct_ops")
void BPF_PROG(vegas_init, struct sock *sk)
{
	vegas_reset(sk);
}

SEC("struct_ops")
void BPF_PROG(vegas_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct vegas_state *v = netrepro_ca(sk);
	__s32 rtt_us = sample->rtt_us;
	__u32 rtt;

	if (rtt_us < 0) /* no valid RTT sample on this ACK */
		return;
	rtt = (__u32)rtt_us + 1; /* +1 keeps baseRTT away from zero */
	if (rtt < v->base_rtt_us)
		v->base_rtt_us = rtt;
	if (rtt < v->round_min_rtt_us)
		v->round_min_rtt_us = rtt;
	v->samples++;
}

SEC("struct_ops")
void BPF_PROG(vegas_set_state, struct sock *sk, __u8 new_state)
{
	struct vegas_state *v = netrepro_ca(sk);

	if (new_state == TCP_CA_Open)
		vegas_start_round(sk);
	else
		v->active = 0;
}

SEC("struct_ops")
void BPF_PROG(vegas_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	if (event == CA_EVENT_CWND_RESTART || event == CA_EVENT_TX_START)
		vegas_reset(sk);
}

/* One Vegas decision at the end of a round with enough samples. */
static __always_inline void vegas_adjust(struct sock *sk, __u32 acked)
{
	struct tcp_sock *tp = netrepro_tcp_sk(sk);
	struct vegas_state *v = netrepro_ca(sk);
	__u32 rtt = v->round_min_rtt_us;
	__u32 base = v->base_rtt_us;
	__u32 cwnd = tp->snd_cwnd;
	__u64 expected_cwnd;
	__u32 diff;

	/* cwnd that the measured rate would need at the base RTT */
	expected_cwnd = (__u64)cwnd * base / rtt;
	/* packets this flow keeps queued; rtt >= base by construction */
	diff = cwnd * (rtt - base) / base;

	if (netrepro_in_slow_start(tp)) {
		if (diff > VEGAS_GAMMA) {
			/* Queue building in slow start: drop to the rate
			 * actually achieved (+1 for the truncation) and leave
			 * slow start. */
			tp->snd_cwnd = netrepro_min_u32(cwnd, (__u32)expected_cwnd + 1);
			tp->snd_ssthresh = netrepro_min_u32(tp->snd_ssthresh, tp->snd_cwnd);
		} else {
			tcp_slow_start(tp, acked);
		}
	} else if (diff > VEGAS_BETA) {
		tp->snd_cwnd = cwnd - 1;
		tp->snd_ssthresh = netrepro_min_u32(tp->snd_ssthresh, tp->snd_cwnd);
	} else if (diff < VEGAS_ALPHA) {
		tp->snd_cwnd = cwnd + 1;
	}

	if (tp->snd_cwnd < 2)
		tp->snd_cwnd = 2;
	else if (tp->snd_cwnd > tp->snd_cwnd_clamp)
		tp->snd_cwnd = tp->snd_cwnd_clamp;
	tp->snd_ssthresh = netrepro_current_ssthresh(sk);
}

SEC("struct_ops")
void BPF_PROG(vegas_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = netrepro_tcp_sk(sk);
	struct vegas_state *v = netrepro_ca(sk);

	if (!v->active) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}

	if (!netrepro_after(ack, v->window_end_seq)) {
		/* Mid-round: only slow start grows cwnd, per ACK as Reno. */
		if (netrepro_in_slow_start(tp))
			tcp_slow_start(tp, acked);
		return;
	}

	/* The round that started at window_end_seq is complete. */
	v->window_end_seq = tp->snd_nxt;
	/* Two or fewer samples in a round are probably all delayed ACKs. */
	if (v->samples <= 2)
		tcp_reno_cong_avoid(sk, ack, acked);
	else
		vegas_adjust(sk, acked);
	v->samples = 0;
	v->round_min_rtt_us = VEGAS_NO_RTT;
}

SEC("struct_ops")
__u32 BPF_PROG(vegas_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(vegas_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

/* The map's own name equals .name so `bpftool struct_ops show` lists it
 * under the name sockets use. get_info is omitted: the kernel refuses it. */
SEC(".struct_ops")
struct tcp_congestion_ops bpf_vegas = {
	.init = (void *)vegas_init,
	.ssthresh = (void *)vegas_ssthresh,
	.undo_cwnd = (void *)vegas_undo_cwnd,
	.cong_avoid = (void *)vegas_cong_avoid,
	.pkts_acked = (void *)vegas_pkts_acked,
	.set_state = (void *)vegas_set_state,
	.cwnd_event = (void *)vegas_cwnd_event,
	.name = "bpf_vegas",
};
