// SPDX-License-Identifier: GPL-2.0
/* Fast-recovery window reductions as BPF struct_ops congestion controls, so
 * that the pre-PRR Linux recovery, RFC 3517 and PRR can all run on one modern
 * kernel, each on top of Reno's or Cubic's window growth and ssthresh.
 *
 * One source, twelve objects: the build compiles it once per
 *   -DNETREPRO_RECOVERY_RH | -DNETREPRO_RECOVERY_3517 | -DNETREPRO_RECOVERY_PRR
 *   -DNETREPRO_BASE_RENO   | -DNETREPRO_BASE_CUBIC
 *   -DNETREPRO_CONG_CONTROL_ARGS=4 | -DNETREPRO_CONG_CONTROL_ARGS=2
 * and NETREPRO_CC_NAME (bpf_rh_reno, bpf_3517_cubic, bpf_prr_cubic, ...): the
 * name sockets use, never the kernel's own "reno"/"cubic".
 *
 * The kernel's cong_control has two shapes. Linux 6.10 gave it the ACK and
 * the kernel's ACK flags: cong_control(sk, ack, flag, rs); before, it was
 * cong_control(sk, rs). A program of the other shape reads its arguments at
 * the wrong places, and the verifier refuses it. The 4-argument shape uses the
 * kernel's flag; the 2-argument shape derives the same flag bits from what
 * the ACK changed since the previous one (rc_flag_from_changes below), and
 * the ACK itself is snd_una by the time cong_control runs. Which object a
 * kernel gets is read from its BTF (schemes/cong_control_shape.py).
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
 * snd_ssthresh, snd_cwnd_cnt, icsk_ca_priv and the pacing fields may be
 * written (snd_cwnd_stamp too from Linux 6.10), so our own state lives in
 * icsk_ca_priv after Cubic's (the cubictcp_* kfuncs use its start); no
 * signed division; every struct_ops program in the object is used.
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
#if !defined(NETREPRO_CONG_CONTROL_ARGS) || \
    (NETREPRO_CONG_CONTROL_ARGS != 2 && NETREPRO_CONG_CONTROL_ARGS != 4)
#error "define NETREPRO_CONG_CONTROL_ARGS as 2 (Linux < 6.10) or 4 (Linux >= 6.10)"
#endif
#if defined(NETREPRO_ACK_FLAG_CHECK) && NETREPRO_CONG_CONTROL_ARGS != 4
#error "NETREPRO_ACK_FLAG_CHECK compares the derived flag with the kernel's: 4 arguments only"
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
/* include/net/tcp_states.h */
#define RC_TCP_SYN_SENT 2
#define RC_TCP_SYN_RECV 3

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
	/* What the previous ACK left behind, to tell what this one changed (the
	 * 2-argument cong_control is not given the kernel's ACK flags). */
	__u32 seen_snd_una;
	__u32 seen_dsack_dups;
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

/* snd_cwnd_stamp is writable from BPF from Linux 6.10, the release (and patch
 * series) that gave cong_control its 4 arguments, so the 2-argument shape
 * leaves it alone. Nothing is lost: the kernel reads it only in
 * tcp_cwnd_validate(), to shrink an application-limited cwnd after an idle
 * RTO, and skips that for a congestion control with cong_control; these
 * programs never read it. The 4-argument shape keeps it as the kernel's own
 * code does (tcp_cong_avoid, tcp_end_cwnd_reduction, Linux 3.1's
 * tcp_cwnd_down). */
static __always_inline void rc_stamp_cwnd(struct tcp_sock *tp)
{
#if NETREPRO_CONG_CONTROL_ARGS == 4
	tp->snd_cwnd_stamp = (__u32)bpf_jiffies64(); /* tcp_jiffies32 */
#endif
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

/* Each recovery reads one of the two predicates below; the flag check reads both. */
#define RC_PREDICATE static __always_inline __attribute__((unused)) int

/* Linux 3.1's tcp_cwnd_down() moved only on an ACK that made progress: new
 * data ACKed or SACKed, snd_una advanced, a DSACK, or (without SACK) a
 * duplicate ACK. */
RC_PREDICATE rc_rh_progress(const struct tcp_sock *tp, int flag)
{
	return (flag & (RC_FLAG_ANY_PROGRESS | RC_FLAG_DSACKING_ACK)) ||
	       (tp->rx_opt.sack_ok == 0 && !(flag & RC_FLAG_NOT_DUP));
}

/* PRR's slow-start reduction bound adds a segment only on an ACK that advanced
 * snd_una without marking new losses. */
RC_PREDICATE rc_prr_safe_ack(int flag, const struct rate_sample *rs)
{
	return (flag & RC_FLAG_SND_UNA_ADVANCED) && rs->losses == 0;
}

#if NETREPRO_CONG_CONTROL_ARGS == 2 || defined(NETREPRO_ACK_FLAG_CHECK)
/* The kernel's ACK flag bits that the recoveries read, from what this ACK
 * changed (tcp_ack() in net/ipv4/tcp_input.c sets them; cong_control runs at
 * its end, on every ACK that is neither old nor received with nothing in
 * flight, and snd_una and dsack_dups change on no other path in between):
 *
 *   SND_UNA_ADVANCED  snd_una moved;
 *   DATA_ACKED        and it moved over data;
 *   DSACKING_ACK      dsack_dups grew and stays within total_retrans
 *                     (tcp_dsack_seen() ignores a DSACK past it);
 *   DATA_SACKED       (snd_una still) something was delivered beyond the
 *                     DSACKed segments, which tcp_dsack_seen() also counts
 *                     as delivered;
 *   NOT_DUP           (no SACK, snd_una still) nothing was delivered: without
 *                     SACK the kernel counts each duplicate ACK as one
 *                     delivered segment (tcp_add_reno_sack()).
 *
 * During the handshake (SYN_SENT, SYN_RECV) cong_control sees only the ACK
 * of our SYN: SND_UNA_ADVANCED and SYN_ACKED, whatever the snapshot says (on
 * the connecting side that ACK comes before init(), with icsk_ca_priv still
 * zero).
 *
 * Where this can differ from the kernel's flag: an ACK that ends inside a
 * one-segment skb (snd_una advances, the kernel sets no DATA_ACKED); a DSACK
 * on an old ACK, which the kernel never passes to cong_control, counted on
 * the next one; data on a TCP Fast Open SYN; without SACK, a duplicate ACK
 * beyond packets_out (tcp_limit_reno_sacked() counts it as nothing
 * delivered). The recoveries read SND_UNA_ADVANCED and DATA_ACKED, and
 * DATA_SACKED or DSACKING_ACK only where SND_UNA_ADVANCED does not already
 * decide. */
static __always_inline int rc_flag_from_changes(const struct sock *sk,
						const struct rate_sample *rs)
{
	const struct tcp_sock *tp = netrepro_tcp_sk(sk);
	const struct recovery_state *r = rc_state(sk);
	__u32 delivered = rs->acked_sacked;
	__u32 dsacked = tp->dsack_dups - r->seen_dsack_dups;
	__u8 sk_state = sk->__sk_common.skc_state;
	int flag = 0;

	if (sk_state == RC_TCP_SYN_SENT || sk_state == RC_TCP_SYN_RECV)
		return RC_FLAG_SND_UNA_ADVANCED | RC_FLAG_SYN_ACKED;
	if (netrepro_after(tp->snd_una, r->seen_snd_una))
		flag |= RC_FLAG_SND_UNA_ADVANCED | RC_FLAG_DATA_ACKED;
	if (dsacked && tp->dsack_dups <= tp->total_retrans) {
		flag |= RC_FLAG_DSACKING_ACK;
		delivered = delivered > dsacked ? delivered - dsacked : 0;
	}
	if (!(flag & RC_FLAG_SND_UNA_ADVANCED)) {
		if (tp->rx_opt.sack_ok == 0) {
			if (delivered == 0)
				flag |= RC_FLAG_DATA; /* not a duplicate ACK */
		} else if (delivered) {
			flag |= RC_FLAG_DATA_SACKED;
		}
	}
	return flag;
}

static __always_inline void rc_remember_ack(const struct sock *sk)
{
	const struct tcp_sock *tp = netrepro_tcp_sk(sk);
	struct recovery_state *r = rc_state(sk);

	r->seen_snd_una = tp->snd_una;
	r->seen_dsack_dups = tp->dsack_dups;
}
#endif

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

	if (!rc_rh_progress(tp, flag))
		return;
	decr = tp->snd_cwnd_cnt + 1;
	tp->snd_cwnd_cnt = decr & 1;
	decr >>= 1;
	if (decr && tp->snd_cwnd > rc_rh_floor(tp))
		tp->snd_cwnd -= decr;
	tp->snd_cwnd = netrepro_min_u32(tp->snd_cwnd, rc_packets_in_flight(tp) + 1);
	rc_stamp_cwnd(tp);
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
		if (rc_prr_safe_ack(flag, rs))
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
#if NETREPRO_CONG_CONTROL_ARGS == 2 || defined(NETREPRO_ACK_FLAG_CHECK)
	rc_remember_ack(sk);
#endif
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
			rc_stamp_cwnd(tp);
		}
	}
#ifdef NETREPRO_BASE_CUBIC
	cubictcp_state(sk, new_state);
#endif
}

/* One ACK: what the kernel's tcp_cong_control() does without cong_control. */
static __always_inline void rc_on_ack(struct sock *sk, __u32 ack, int flag,
				      const struct rate_sample *rs)
{
	struct tcp_sock *tp = netrepro_tcp_sk(sk);

	if (rc_in_reduction(netrepro_inet_csk(sk)->icsk_ca_state)) {
		rc_reduce(sk, flag, rs);
	} else if (rc_may_raise_cwnd(sk, flag)) {
		rc_base_cong_avoid(sk, ack, rs->acked_sacked);
		rc_stamp_cwnd(tp);
	}
	rc_update_pacing_rate(sk);
}

#ifdef NETREPRO_ACK_FLAG_CHECK
/* A test build (never registered by a run): beside the kernel's flag, derive
 * the 2-argument shape's and count the ACKs on which anything the recoveries
 * read from them differs. Read from this object's .bss map. */
enum {
	RC_CHECK_ACK,		/* ack != snd_una */
	RC_CHECK_MAY_RAISE,	/* rc_may_raise_cwnd() */
	RC_CHECK_DATA_ACKED,	/* its two inputs, whatever the reordering: DATA_ACKED */
	RC_CHECK_FORWARD,	/* and FORWARD_PROGRESS */
	RC_CHECK_RH_PROGRESS,	/* rc_rh_progress() */
	RC_CHECK_PRR_SAFE,	/* rc_prr_safe_ack() */
	RC_CHECK_KINDS,
};

struct rc_flag_check {
	__u64 acks;
	__u64 in_reduction;	/* of them, in CWR or Recovery */
	__u64 dsacking;		/* of them, with the kernel's DSACKING_ACK */
	__u64 dsack_dups_grew;	/* of them, with more DSACKed segments (valid or not) */
	__u64 una_advanced;	/* of them, with the kernel's SND_UNA_ADVANCED */
	__u64 mismatches[RC_CHECK_KINDS];
	__s32 first_flag;	/* the kernel's flag on the first differing ACK */
	__s32 first_derived;	/* and the derived one */
	__u32 first_kinds;	/* bit k: RC_CHECK_k differed */
	__u32 pad;
};

struct rc_flag_check rc_flag_check = {};

static __always_inline void rc_check_flag(struct sock *sk, __u32 ack, int flag,
					  const struct rate_sample *rs)
{
	const struct tcp_sock *tp = netrepro_tcp_sk(sk);
	int derived = rc_flag_from_changes(sk, rs);
	__u32 dsack_dups_grew = tp->dsack_dups != rc_state(sk)->seen_dsack_dups;
	__u32 kinds = 0;
	int k;

	rc_remember_ack(sk);
	if (ack != tp->snd_una)
		kinds |= 1U << RC_CHECK_ACK;
	if (rc_may_raise_cwnd(sk, flag) != rc_may_raise_cwnd(sk, derived))
		kinds |= 1U << RC_CHECK_MAY_RAISE;
	if (!(flag & RC_FLAG_DATA_ACKED) != !(derived & RC_FLAG_DATA_ACKED))
		kinds |= 1U << RC_CHECK_DATA_ACKED;
	if (!(flag & RC_FLAG_FORWARD_PROGRESS) != !(derived & RC_FLAG_FORWARD_PROGRESS))
		kinds |= 1U << RC_CHECK_FORWARD;
	if (rc_rh_progress(tp, flag) != rc_rh_progress(tp, derived))
		kinds |= 1U << RC_CHECK_RH_PROGRESS;
	if (rc_prr_safe_ack(flag, rs) != rc_prr_safe_ack(derived, rs))
		kinds |= 1U << RC_CHECK_PRR_SAFE;

	__sync_fetch_and_add(&rc_flag_check.acks, 1);
	if (rc_in_reduction(netrepro_inet_csk(sk)->icsk_ca_state))
		__sync_fetch_and_add(&rc_flag_check.in_reduction, 1);
	if (flag & RC_FLAG_DSACKING_ACK)
		__sync_fetch_and_add(&rc_flag_check.dsacking, 1);
	if (dsack_dups_grew)
		__sync_fetch_and_add(&rc_flag_check.dsack_dups_grew, 1);
	if (flag & RC_FLAG_SND_UNA_ADVANCED)
		__sync_fetch_and_add(&rc_flag_check.una_advanced, 1);
	if (!kinds)
		return;
	for (k = 0; k < RC_CHECK_KINDS; k++)
		if (kinds & (1U << k))
			__sync_fetch_and_add(&rc_flag_check.mismatches[k], 1);
	if (rc_flag_check.first_kinds == 0) {
		rc_flag_check.first_flag = flag;
		rc_flag_check.first_derived = derived;
		rc_flag_check.first_kinds = kinds;
	}
}
#endif

#if NETREPRO_CONG_CONTROL_ARGS == 4
SEC("struct_ops")
void BPF_PROG(rc_cong_control, struct sock *sk, __u32 ack, int flag,
	      const struct rate_sample *rs)
{
#ifdef NETREPRO_ACK_FLAG_CHECK
	rc_check_flag(sk, ack, flag, rs);
#endif
	rc_on_ack(sk, ack, flag, rs);
}
#else
SEC("struct_ops")
void BPF_PROG(rc_cong_control, struct sock *sk, const struct rate_sample *rs)
{
	int flag = rc_flag_from_changes(sk, rs);

	rc_remember_ack(sk);
	/* tcp_ack() has moved snd_una to the ACK before calling cong_control. */
	rc_on_ack(sk, netrepro_tcp_sk(sk)->snd_una, flag, rs);
}
#endif

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
