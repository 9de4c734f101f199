// How late an end host's event loop was, recorded as the link emulator records its own
// lateness (latency_histogram.hh), for the stats JSON each program writes:
//
// - wake-ups: a poll that asked to wake after a timeout, against the deadline it asked for
//   (CLOCK_MONOTONIC), when it woke because the timeout passed;
// - arrival to send: from a datagram's kernel receive time (SO_TIMESTAMPNS, CLOCK_REALTIME:
//   stamped when it entered the host's stack, so the time before the process ran counts) to
//   the send it allowed (an ACK that opened the window and the data datagram that follows; a
//   data datagram and the ACK the receiver answers it with).
//
// Each event costs a histogram increment; the programs read no clock for it that they did not
// read already, but one CLOCK_REALTIME read for the first send after an allowing arrival.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "json_writer.hh"
#include "latency_histogram.hh"

namespace netrepro {

class HostTiming {
 public:
  // `arrival_to_send` names the pair measured, for the JSON (e.g. "ACK -> data").
  explicit HostTiming(std::string arrival_to_send) : pair_(std::move(arrival_to_send)) {}

  // A poll asked to wake at `deadline_us` woke by its timeout at `woke_us` (CLOCK_MONOTONIC).
  void woke(uint64_t deadline_us, uint64_t woke_us) { wakeups_.add_interval(deadline_us, woke_us); }

  // A datagram that allows a send arrived at `kernel_us` (its kernel receive time; 0 when the
  // kernel gave none, which is counted, not guessed). The earliest arrival not yet followed by
  // a send is the one the next send answers.
  void allowed_by(uint64_t kernel_us);
  // Whether an allowing arrival waits for its send (the caller reads the clock only then).
  bool awaiting_send() const { return pending_.has_value(); }
  // The send that answers the waiting arrival went out at `sent_us` (CLOCK_REALTIME).
  void sent(uint64_t sent_us);
  // The arrivals noted since the last send allowed none after all (the window closed again).
  void forget() { pending_.reset(); }
  // One arrival and the send that answers it at once (a receiver's ACK).
  void answered(uint64_t kernel_us, uint64_t sent_us);

  const LatencyHistogram& wakeups() const { return wakeups_; }
  const LatencyHistogram& arrival_to_send() const { return arrival_to_send_; }

  // {"wakeup_lateness_us": {p50, p90, p99, max, count}, "arrival_to_send_us": {...},
  //  "arrival_to_send": "<pair>", "arrivals_without_timestamp": N, "negative_intervals": N}
  // negative_intervals: wake-ups before their deadline (a poll cut short) and sends before
  // their arrival (CLOCK_REALTIME stepped back), each recorded as 0.
  JsonObject json() const;
  // {p50, p90, p99, max, count} of one histogram.
  static JsonObject percentiles_json(const LatencyHistogram& h);

 private:
  std::string pair_;
  LatencyHistogram wakeups_;
  LatencyHistogram arrival_to_send_;
  std::optional<uint64_t> pending_;
  uint64_t without_timestamp_ = 0;
};

}  // namespace netrepro
