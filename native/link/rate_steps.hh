// A fixed rate that changes at given times: `MS:MBPS[,MS:MBPS...]` (--a2b-rate-steps,
// --b2a-rate-steps), each step the time after the link's start (whole ms) from which the
// direction serves at the new rate. The schedule stays exact: within each stretch opportunity k
// comes at the stretch's start + floor(k x 12032 / rate) us (OpportunitySchedule).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace netrepro {

// A malformed list; the message names the entry at fault (the command line adds the flag).
class RateStepsError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct RateStep {
  uint64_t at_ms = 0;  // after the link's start
  double rate_mbps = 0;
};

class RateSteps {
 public:
  static constexpr size_t kMaxSteps = 1000;
  static constexpr uint64_t kMaxMs = 999999999;

  RateSteps() = default;
  // Parses `MS:MBPS[,MS:MBPS...]`: times whole ms above 0 and strictly increasing, rates
  // above 0 and at most `max_rate_mbps`, at most kMaxSteps. Throws RateStepsError.
  static RateSteps parse(const std::string& text, double max_rate_mbps);

  // Refuses (RateStepsError) a step at or after `span_ms`, the end of service: it would never
  // be served.
  void check_within(uint64_t span_ms) const;

  bool empty() const { return steps_.empty(); }
  const std::vector<RateStep>& steps() const { return steps_; }
  // The highest rate among the steps (nothing without steps).
  std::optional<double> max_rate_mbps() const;
  // "20000 ms: 20 Mbit/s, 40000 ms: 10 Mbit/s".
  std::string describe() const;

 private:
  std::vector<RateStep> steps_;
};

}  // namespace netrepro
