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
  void flush();

 private:
  std::unique_ptr<BufferedWriter> file_;
  LatencyHistogram histogram_;
};

}  // namespace netrepro
