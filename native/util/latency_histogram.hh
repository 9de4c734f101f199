// Percentiles of many microsecond values in bounded memory: exact below 65.536 ms,
// 1-ms buckets up to 120 s, and an exact maximum. The link emulator's lateness and the end
// hosts' timing (host_timing.hh) both keep theirs in one.
#pragma once

#include <cstdint>
#include <vector>

namespace netrepro {

class LatencyHistogram {
 public:
  LatencyHistogram();
  void add(uint64_t value_us);
  // The time from `from_us` to `to_us`, which should not come before it: a reversed pair (a
  // clock stepped back) adds 0 and is counted in reversed().
  void add_interval(uint64_t from_us, uint64_t to_us);
  // Nearest-rank percentile: the smallest bucket value v with count(<= v) >= ceil(q * N);
  // q in (0, 1]. Returns 0 when empty. Values above 65.536 ms round up to their ms bucket.
  uint64_t percentile(double q) const { return percentiles({q})[0]; }
  // Several percentiles in one pass over the buckets; `qs` must be ascending.
  std::vector<uint64_t> percentiles(const std::vector<double>& qs) const;
  uint64_t max() const { return max_; }
  uint64_t count() const { return count_; }
  uint64_t reversed() const { return reversed_; }

 private:
  static constexpr uint64_t kFineLimitUs = 65536;
  static constexpr uint64_t kCoarseLimitMs = 120000;
  std::vector<uint64_t> fine_;    // 1-us buckets [0, kFineLimitUs)
  std::vector<uint64_t> coarse_;  // 1-ms buckets [kFineLimitUs, kCoarseLimitMs ms), then one overflow
  uint64_t max_ = 0;
  uint64_t count_ = 0;
  uint64_t reversed_ = 0;
};

}  // namespace netrepro
