/* Shared helpers for netrepro's eBPF TCP congestion controls.
 *
 * The kernel's own helpers for these (tcp_sk(), inet_csk_ca(),
 * tcp_in_slow_start(), ...) are static inline functions, which BPF cannot
 * call, so they are restated here from their definitions in include/net/tcp.h
 * and include/net/inet_connection_sock.h. Only the kfuncs declared below are
 * exported to struct_ops programs by the kernel (tcp_cong.c).
 */
#ifndef NETREPRO_TCP_CA_COMMON_H
#define NETREPRO_TCP_CA_COMMON_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

/* Not exported as BTF constants: values from include/uapi/linux/tcp.h and
 * include/net/tcp.h. */
#define NETREPRO_SOL_TCP 6
#define NETREPRO_TCP_BPF_SNDCWND_CLAMP 1002
#define NETREPRO_TCPF_CA_CWR (1 << TCP_CA_CWR)
#define NETREPRO_TCPF_CA_RECOVERY (1 << TCP_CA_Recovery)

extern __u32 tcp_reno_ssthresh(struct sock *sk) __ksym;
extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;
extern __u32 tcp_slow_start(struct tcp_sock *tp, __u32 acked) __ksym;
extern void tcp_cong_avoid_ai(struct tcp_sock *tp, __u32 w, __u32 acked) __ksym;

static __always_inline struct tcp_sock *netrepro_tcp_sk(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline struct inet_connection_sock *netrepro_inet_csk(const struct sock *sk)
{
	return (struct inet_connection_sock *)sk;
}

/* The per-socket private area (icsk_ca_priv, 104 bytes) holds our state. */
static __always_inline void *netrepro_ca(const struct sock *sk)
{
	return (void *)netrepro_inet_csk(sk)->icsk_ca_priv;
}

static __always_inline __u32 netrepro_min_u32(__u32 a, __u32 b)
{
	return a < b ? a : b;
}

static __always_inline __u32 netrepro_max_u32(__u32 a, __u32 b)
{
	return a > b ? a : b;
}

/* Sequence-number comparison with wrap-around (before()/after()). */
static __always_inline int netrepro_after(__u32 seq1, __u32 seq2)
{
	return (__s32)(seq2 - seq1) < 0;
}

static __always_inline int netrepro_in_slow_start(const struct tcp_sock *tp)
{
	return tp->snd_cwnd < tp->snd_ssthresh;
}

/* True when the sender used its whole window: growing cwnd is pointless
 * otherwise. In slow start, cwnd may grow up to twice what was in flight. */
static __always_inline int netrepro_is_cwnd_limited(const struct sock *sk)
{
	const struct tcp_sock *tp = netrepro_tcp_sk(sk);

	if (tp->is_cwnd_limited)
		return 1;
	if (netrepro_in_slow_start(tp))
		return tp->snd_cwnd < 2 * tp->max_packets_out;
	return 0;
}

static __always_inline int netrepro_in_cwnd_reduction(const struct sock *sk)
{
	return ((1 << netrepro_inet_csk(sk)->icsk_ca_state) &
		(NETREPRO_TCPF_CA_CWR | NETREPRO_TCPF_CA_RECOVERY)) != 0;
}

/* Outside a window reduction, the threshold never falls below 3/4 of cwnd
 * (tcp_current_ssthresh()). */
static __always_inline __u32 netrepro_current_ssthresh(const struct sock *sk)
{
	const struct tcp_sock *tp = netrepro_tcp_sk(sk);

	if (netrepro_in_cwnd_reduction(sk))
		return tp->snd_ssthresh;
	return netrepro_max_u32(tp->snd_ssthresh,
				(tp->snd_cwnd >> 1) + (tp->snd_cwnd >> 2));
}

#endif /* NETREPRO_TCP_CA_COMMON_H */
