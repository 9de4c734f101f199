// When delivery opportunities happen: from a trace (ms-exact, looping or once) or at a fixed rate.
// All times are absolute microseconds on the caller's clock; nothing here reads a clock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "rate_steps.hh"

namespace netrepro {

class OpportunitySchedule {
 public:
  static constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();
  static constexpr uint64_t kOpportunityBytes = 1504;

  // Opportunity i of pass p happens at (base_ms + p * period + trace[i]) ms, where the period
  // is the trace's LAST value (so a trace starting at 0 gives two opportunities at a wrap).
  // With `once`, there are no opportunities after the first pass.
  static OpportunitySchedule from_trace(std::vector<uint64_t> trace_ms, bool once, uint64_t base_ms);
  // Opportunity k (k >= 1) happens at base_us + floor(k * 1504 * 8 / rate_mbps) us, with the
  // rate rounded to 1e-9 Mbit/s.
  static OpportunitySchedule fixed_rate(double rate_mbps, uint64_t base_us);
  // A fixed rate that changes: `rate_mbps` from base_us, then each step's rate from
  // base_us + its at_ms x 1000. Each stretch is a fixed-rate schedule of its own from its start
  // (opportunity k at the start + floor(k * 1504 * 8 / rate) us); an opportunity of the old
  // rate that would fall at or after the step is not served.
  static OpportunitySchedule fixed_rate(double rate_mbps, uint64_t base_us,
                                        const std::vector<RateStep>& steps);

  // No opportunity later than end_us (inclusive): service stops there, as at the end of a
  // `once` trace. Used to measure every scheme over exactly the same span.
  void end_at(uint64_t end_us);

  // Time of the next opportunity, or kNever once a `once` trace or the span is over.
  uint64_t next_us() const { return next_us_; }
  bool finished() const { return next_us_ == kNever; }
  // Moves past the next opportunity.
  void consume();
  // Consumes every opportunity at or before now_us; returns how many (fast for fixed rate).
  uint64_t skip_through(uint64_t now_us);

 private:
  OpportunitySchedule() = default;
  uint64_t compute_next() const;
  // Moves into the stretch of every step whose time the next opportunity has reached.
  void enter_due_stretches();
  // compute_next(), or kNever past the end.
  uint64_t bounded_next() const;

  bool fixed_ = false;
  // Trace mode.
  std::vector<uint64_t> trace_ms_;
  bool once_ = false;
  size_t index_ = 0;
  uint64_t pass_base_ms_ = 0;
  // Fixed-rate mode.
  // The rate in units of 1e-9 Mbit/s, so decimal rates like 12.032 give exact spacing.
  uint64_t rate_nano_mbps_ = 0;
  uint64_t base_us_ = 0;
  uint64_t k_ = 1;
  // Rate steps still to come: (start us, rate in 1e-9 Mbit/s), and the next one's index.
  std::vector<std::pair<uint64_t, uint64_t>> steps_;
  size_t next_step_ = 0;

  uint64_t end_us_ = kNever;
  uint64_t next_us_ = kNever;
};

}  // namespace netrepro
