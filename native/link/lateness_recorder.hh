// How late each packet was actually sent versus its scheduled release: an optional text file
// (`<scheduled_us> <lateness_us>` per departure) and a histogram for the stats.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "buffered_writer.hh"
#include "latency_histogram.hh"

namespace netrepro {

class LatenessRecorder {
 public:
  // An empty path records the histogram only.
  explicit LatenessRecorder(const std::string& path);
  void record(uint64_t scheduled_us, uint64_t sent_us);
  const LatencyHistogram& histogram() const { return histogram_; }
  // When the latest departure was due (CLOCK_MONOTONIC us; 0 before any): lines it up with
  // the CPU probe's record of the same run (native/probe).
  uint64_t max_at_us() const { return max_at_us_; }
  void flush();

 private:
  std::unique_ptr<BufferedWriter> file_;
  LatencyHistogram histogram_;
  uint64_t max_at_us_ = 0;
};

}  // namespace netrepro
