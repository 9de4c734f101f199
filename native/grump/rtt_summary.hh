// Min / median / p95 of RTT samples. Percentiles interpolate linearly between
// the closest ranks (numpy's default), so the Python analysis agrees.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace netrepro::grump {

struct RttSummary {
  std::optional<double> min_ms;
  std::optional<double> median_ms;
  std::optional<double> p95_ms;

  // All fields empty when there are no samples.
  static RttSummary of(std::vector<uint64_t> samples_ms);
  // q in [0, 100]; samples must be sorted and non-empty.
  static double percentile(const std::vector<uint64_t>& sorted, double q);
};

}  // namespace netrepro::grump
