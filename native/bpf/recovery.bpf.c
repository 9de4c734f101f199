// SPDX-License-Identifier: GPL-2.0
/* Fast-recovery window reductions as BPF struct_ops congestion controls, so
 * that the pre-PRR Linux recovery, RFC 3517 and PRR can all run on one modern
 * kernel, each on top of Reno's or Cubic's window growth and ssthresh.
 *
 * One source, six objects: the build compiles it once per pair of
 *   -DNETREPRO_RECOVERY_RH | -DNETREPRO_RECOVERY_3517 | -DNETREPRO_RECOVERY_PRR
 *   -DNETREPRO_BASE_RENO   | -DNETREPRO_BASE_CUBIC
 * and NETREPRO_CC_NAME (bpf_rh_reno, bpf_3517_cubic, bpf_prr_cubic, ...): the
 * name sockets use, never the kernel's own "reno"/"cubic".
 *
 * A congestion control that implements cong_control owns cwnd on every ACK:
 * the kernel then never runs its own reduction (tcp_cwnd_reduction, i.e.
 * PRR), its growth (tcp_cong_avoid) or its pacing-rate update, nor the reset
 * of cwnd when recovery ends (tcp_end_cwnd_reduction returns early). It still
 * runs tcp_init_cwnd_reduction() at entry (prior_cwnd, high_seq, prr_out = 0,
 * snd_cwnd_cnt = 0, ssthresh from our .ssthresh) and counts prr_out on every
 * (re)transmission during the reduction. So this file does, per ACK:
 *
 *   in CWR or Recovery: the recovery's own window rule (below);
 *   otherwise, when the kernel would (tcp_may_raise_cwnd): the base CC's
 *   growth (tcp_reno_cong_avoid, or Cubic's cubictcp_cong_avoid kfunc);
 *   always: the pacing-rate update of tcp_update_pacing_rate();
 *
 * and, in set_state, the entry (our prr_delivered := 0) and the exit of a
 * reduction (cwnd := ssthresh, or min(cwnd, ssthresh) for rate halving,
 * unless the reduction was undone), which the kernel's
 * tcp_end_cwnd_reduction() would have done. set_state runs before
 * icsk_ca_state takes the new value, so the old state is still readable.
 *
 * The recoveries (pipe = packets in flight, tcp_packets_in_flight()):
 *
 * RH  Linux <= 3.1 rate halving (tcp_cwnd_down, tcp_complete_cwr): cwnd is
 *     left unchanged at entry; on every ACK that makes progress (new data
 *     ACKed or SACKed, snd_una advanced, or a DSACK), a counter flips and
 *     every second such ACK lowers cwnd by one while it is above the floor
 *     (Reno: ssthresh / 2, Linux's tcp_reno_min_cwnd; Cubic had no min_cwnd
 *     hook, so ssthresh); then cwnd = min(cwnd, pipe + 1). Never grows in
 *     recovery. At exit cwnd = min(cwnd, ssthresh).
 * 3517 RFC 3517 (now RFC 6675) conservative recovery: cwnd = ssthresh from
 *     entry, and the sender sends while pipe < cwnd; the first retransmission
 *     is sent whatever pipe is, so until one segment has gone out in this
 *     recovery (prr_out == 0) cwnd = max(ssthresh, pipe + 1). At exit
 *     cwnd = ssthresh.
 * PRR RFC 6937 as Linux implements it since 3.2 (tcp_cwnd_reduction),
 *     written independently to check the kernel's own: prr_delivered +=
 *     DeliveredData; if pipe > ssthresh, sndcnt = ceil(prr_delivered *
 *     ssthresh / RecoverFS) - prr_out with RecoverFS = prior_cwnd; otherwise
 *     sndcnt = min(ssthresh - pipe, max(prr_delivered - prr_out,
 *     DeliveredData) + 1), the +1 (slow-start reduction bound) only on an ACK
 *     that advanced snd_una without marking new losses; sndcnt >= 1 while
 *     nothing was sent in this recovery; cwnd = pipe + sndcnt. ACKs that
 *     deliver nothing leave cwnd alone. At exit cwnd = ssthresh.
 *
 * Limits of the verifier and of libbpf 1.1 shape the code: only snd_cwnd,
 * snd_ssthresh, snd_cwnd_cnt, snd_cwnd_stamp and icsk_ca_priv (plus pacing
 * fields) may be written, so prr_delivered lives in icsk_ca_priv after
 * Cubic's own state (the cubictcp_* kfuncs use its start); no signed
 * division; every struct_ops program in the object is used.
 */
#include "tcp_ca_common.h"

char LICENSE[] SEC("license") = "GPL";

#if defined(NETREPRO_BASE_RENO) == defined(NETREPRO_BASE_CUBIC)
#error "define exactly one of NETREPRO_BASE_RENO, NETREPRO_BASE_CUBIC"
#endif
#if (defined(NETREPRO_RECOVERY_RH) + defined(NETREPRO_RECOVERY_3517) + \
     defined(NETREPRO_RECOVERY_PRR)) != 1
#error "define exactly one of NETREPRO_RECOVERY_RH, NETREPRO_RECOVERY_3517, NETREPRO_RECOVERY_PRR"
#endif
#ifndef NETREPRO_CC_NAME
#error "define NETREPRO_CC_NAME, the name the congestion control registers under"
#endif
#define RC_STR2(x) #x
#define RC_STR(x) RC_STR2(x)

/* ACK flags from net/ipv4/tcp_input.c (not in BTF). */
#define RC_FLAG_DATA 0x01
#define RC_FLAG_WIN_UPDATE 0x02
#define RC_FLAG_DATA_ACKED 0x04
#define RC_FLAG_SYN_ACKED 0x10
#define RC_FLAG_DATA_SACKED 0x20
#define RC_FLAG_SND_UNA_ADVANCED 0x400
#define RC_FLAG_DSACKING_ACK 0x800
#define RC_FLAG_ACKED (RC_FLAG_DATA_ACKED | RC_FLAG_SYN_ACKED)
#define RC_FLAG_NOT_DUP (RC_FLAG_DATA | RC_FLAG_WIN_UPDATE | RC_FLAG_ACKED)
#define RC_FLAG_FORWARD_PROGRESS (RC_FLAG_ACKED | RC_FLAG_DATA_SACKED)
#define RC_FLAG_ANY_PROGRESS (RC_FLAG_FORWARD_PROGRESS | RC_FLAG_SND_UNA_ADVANCED)

#define RC_INFINITE_SSTHRESH 0x7fffffffU
#define RC_USEC_PER_SEC 1000000ULL

#ifdef NETREPRO_BASE_CUBIC
extern void cubictcp_init(struct sock *sk) __ksym;
extern __u32 cubictcp_recalc_ssthresh(struct sock *sk) __ksym;
extern void cubictcp_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern void cubictcp_state(struct sock *sk, __u8 new_state) __ksym;
extern void cubictcp_cwnd_event(struct sock *sk, enum tcp_ca_event event) __ksym;
extern void cubictcp_acked(struct sock *sk, const struct ack_sample *sample) __ksym;
#endif

struct recovery_state {
	__u32 prr_delivered; /* packets delivered since the reduction began */
};

/* icsk_ca_priv: Cubic's struct bictcp first (its kfuncs read it there), ours after. */
struct recovery_priv {
	__u8 base[sizeof(struct bictcp)];
	struct recovery_state r;
};

_Static_assert(sizeof(struct recovery_priv) <=
	       sizeof(((struct inet_connection_sock *)0)->icsk_ca_priv),
	       "icsk_ca_priv is too small for Cubic's state and ours");

static __always_inline struct recovery_state *rc_state(const struct sock *sk)
{
	return &((struct recovery_priv *)netrepro_ca(sk))->r;
}

static __always_inline int rc_in_reduction(__u8 state)
{
	return state == TCP_CA_CWR || state == TCP_CA_Recovery;
}

static __always_inline __u32 rc_packets_in_flight(const struct tcp_sock *tp)
{
	return tp->packets_out - (tp->sacked_out + tp->lost_out) + tp->retrans_out;
}

static __always_inline __u32 rc_jiffies32(void)
{
	return (__u32)bpf_jiffies64();
}

/* tcp_may_raise_cwnd(): grow only on in-order delivery unless reordering is high. */
static __always_inline int rc_may_raise_cwnd(const struct sock *sk, int flag)
{
	const struct tcp_sock *tp = netrepro_tcp_sk(sk);
	int sysctl_reordering = sk->__sk_common.skc_net.net->ipv4.sysctl_tcp_reordering;

	if ((int)tp->reordering > sysctl_reordering)
		return (flag & RC_FLAG_FORWARD_PROGRESS) != 0;
	return (flag & RC_FLAG_DATA_ACKED) != 0;
}

/* tcp_update_pacing_rate(): 200% (slow start) or 120% of cwnd * mss / srtt. */
static __always_inline void rc_update_pacing_rate(struct sock *sk)
{
	const struct tcp_sock *tp = netrepro_tcp_sk(sk);
	const struct netns_ipv4 *ipv4 = &sk->__sk_common.skc_net.net->ipv4;
	__u64 rate = (__u64)tp->mss_cache * ((RC_USEC_PER_SEC / 100) << 3);

	if (tp->snd_cwnd < tp->snd_ssthresh / 2)
		rate *= (__u32)ipv4->sysctl_tcp_pacing_ss_ratio;
	else
		rate *= (__u32)ipv4->sysctl_tcp_pacing_ca_ratio;
	rate *= netrepro_max_u32(tp->snd_cwnd, tp->packets_out);
	if (tp->srtt_us)
		rate /= (__u64)tp->srtt_us;
	if (rate > sk->sk_max_pacing_rate)
		rate = sk->sk_max_pacing_rate;
	sk->sk_pacing_rate = rate;
}

static __always_inline void rc_base_cong_avoid(struct sock *sk, __u32 ack, __u32 acked)
{
#ifdef NETREPRO_BASE_CUBIC
	cubictcp_cong_avoid(sk, ack, acked);
#else
	tcp_reno_cong_avoid(sk, ack, acked);
#endif
}

/* ------------------------------------------------------------ recoveries */

#ifdef NETREPRO_RECOVERY_RH
/* Linux's tcp_reno_min_cwnd() returned ssthresh / 2; Cubic had no min_cwnd. */
static __always_inline __u32 rc_rh_floor(const struct tcp_sock *tp)
{
#ifdef NETREPRO_BASE_RENO
	return tp->snd_ssthresh / 2;
#else
	return tp->snd_ssthresh;
#endif
}

/* tcp_cwnd_down() of Linux 3.1. */
static __always_inline void rc_reduce(struct sock *sk, int flag, const struct rate_sample *rs)
{
	struct tcp_sock *tp = netrepro_tcp_sk(sk);
	__u32 decr;
	int no_sack = tp->rx_opt.sack_ok == 0;

	if (!((flag & (RC_FLAG_ANY_PROGRESS | RC_FLAG_DSACKING_ACK)) ||
	      (no_sack && !(flag & RC_FLAG_NOT_DUP))))
		return;
	decr = tp->snd_cwnd_cnt + 1;
	tp->snd_cwnd_cnt = decr & 1;
	decr >>= 1;
	if (decr && tp->snd_cwnd > rc_rh_floor(tp))
		tp->snd_cwnd -= decr;
	tp->snd_cwnd = netrepro_min_u32(tp->snd_cwnd, rc_packets_in_flight(tp) + 1);
	tp->snd_cwnd_stamp = rc_jiffies32();
}

/* tcp_complete_cwr() of Linux 3.1. */
static __always_inline __u32 rc_exit_cwnd(const struct tcp_sock *tp)
{
	return netrepro_min_u32(tp->snd_cwnd, tp->snd_ssthresh);
}
#endif /* NETREPRO_RECOVERY_RH */

#ifdef NETREPRO_RECOVERY_3517
static __always_inline void rc_reduce(struct sock *sk, int flag, const struct rate_sample *rs)
{
	struct tcp_sock *tp = netrepro_tcp_sk(sk);
	__u32 cwnd = tp->snd_ssthresh;

	/* The first retransmission goes out whatever pipe is. */
	if (tp->prr_out == 0)
		cwnd = netrepro_max_u32(cwnd, rc_packets_in_flight(tp) + 1);
	tp->snd_cwnd = cwnd;
}

static __always_inline __u32 rc_exit_cwnd(const struct tcp_sock *tp)
{
	return tp->snd_ssthresh;
}
#endif /* NETREPRO_RECOVERY_3517 */

#ifdef NETREPRO_RECOVERY_PRR
static __always_inline void rc_reduce(struct sock *sk, int flag, const struct rate_sample *rs)
{
	struct tcp_sock *tp = netrepro_tcp_sk(sk);
	struct recovery_state *r = rc_state(sk);
	__u32 delivered = rs->acked_sacked;
	__u32 pipe = rc_packets_in_flight(tp);
	__u32 ssthresh = tp->snd_ssthresh;
	__u32 recover_fs = tp->prior_cwnd;
	__u32 prr_out = tp->prr_out;
	__s32 sndcnt;

	if (delivered == 0 || recover_fs == 0)
		return;
	r->prr_delivered += delivered;
	if (pipe > ssthresh) {
		/* Proportional part: ceil(prr_delivered * ssthresh / RecoverFS). */
		__u64 out = ((__u64)r->prr_delivered * ssthresh + recover_fs - 1) / recover_fs;

		sndcnt = (__s32)((__u32)out - prr_out);
	} else {
		/* Reduction bound: catch up with what was delivered, at most to ssthresh. */
		__s32 banked = (__s32)(r->prr_delivered - prr_out);

		sndcnt = banked > (__s32)delivered ? banked : (__s32)delivered;
		if ((flag & RC_FLAG_SND_UNA_ADVANCED) && rs->losses == 0)
			sndcnt++;
		if (sndcnt > (__s32)(ssthresh - pipe))
			sndcnt = (__s32)(ssthresh - pipe);
	}
	/* Force the fast retransmission when entering recovery. */
	if (sndcnt < (prr_out ? 0 : 1))
		sndcnt = prr_out ? 0 : 1;
	tp->snd_cwnd = pipe + (__u32)sndcnt;
}

static __always_inline __u32 rc_exit_cwnd(const struct tcp_sock *tp)
{
	return tp->snd_ssthresh;
}
#endif /* NETREPRO_RECOVERY_PRR */

/* ------------------------------------------------------------ callbacks */

SEC("struct_ops")
void BPF_PROG(rc_init, struct sock *sk)
{
	rc_state(sk)->prr_delivered = 0;
#ifdef NETREPRO_BASE_CUBIC
	cubictcp_init(sk);
#endif
}

SEC("struct_ops")
__u32 BPF_PROG(rc_ssthresh, struct sock *sk)
{
#ifdef NETREPRO_BASE_CUBIC
	return cubictcp_recalc_ssthresh(sk);
#else
	return tcp_reno_ssthresh(sk);
#endif
}

SEC("struct_ops")
__u32 BPF_PROG(rc_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC("struct_ops")
void BPF_PROG(rc_set_state, struct sock *sk, __u8 new_state)
{
	struct tcp_sock *tp = netrepro_tcp_sk(sk);
	__u8 old_state = netrepro_inet_csk(sk)->icsk_ca_state;

	if (rc_in_reduction(new_state) && !rc_in_reduction(old_state)) {
		/* tcp_init_cwnd_reduction() has just run. */
		rc_state(sk)->prr_delivered = 0;
	} else if (rc_in_reduction(old_state) && !rc_in_reduction(new_state) &&
		   new_state != TCP_CA_Loss) {
		/* tcp_end_cwnd_reduction(): unless the reduction was undone. */
		if (tp->snd_ssthresh < RC_INFINITE_SSTHRESH &&
		    (old_state == TCP_CA_CWR || tp->undo_marker)) {
			tp->snd_cwnd = rc_exit_cwnd(tp);
			tp->snd_cwnd_stamp = rc_jiffies32();
		}
	}
#ifdef NETREPRO_BASE_CUBIC
	cubictcp_state(sk, new_state);
#endif
}

SEC("struct_ops")
void BPF_PROG(rc_cong_control, struct sock *sk, __u32 ack, int flag,
	      const struct rate_sample *rs)
{
	struct tcp_sock *tp = netrepro_tcp_sk(sk);

	if (rc_in_reduction(netrepro_inet_csk(sk)->icsk_ca_state)) {
		rc_reduce(sk, flag, rs);
	} else if (rc_may_raise_cwnd(sk, flag)) {
		rc_base_cong_avoid(sk, ack, rs->acked_sacked);
		tp->snd_cwnd_stamp = rc_jiffies32();
	}
	rc_update_pacing_rate(sk);
}

#ifdef NETREPRO_BASE_CUBIC
SEC("struct_ops")
void BPF_PROG(rc_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	cubictcp_cwnd_event(sk, event);
}

SEC("struct_ops")
void BPF_PROG(rc_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	cubictcp_acked(sk, sample);
}
#endif

/* The map's own name equals .name so `bpftool struct_ops show` lists it under
 * the name sockets use. get_info is omitted: the kernel refuses it. */
SEC(".struct_ops")
struct tcp_congestion_ops NETREPRO_CC_NAME = {
	.init = (void *)rc_init,
	.ssthresh = (void *)rc_ssthresh,
	.undo_cwnd = (void *)rc_undo_cwnd,
	.set_state = (void *)rc_set_state,
	.cong_control = (void *)rc_cong_control,
#ifdef NETREPRO_BASE_CUBIC
	.cwnd_event = (void *)rc_cwnd_event,
	.pkts_acked = (void *)rc_pkts_acked,
#endif
	.name = RC_STR(NETREPRO_CC_NAME),
};
