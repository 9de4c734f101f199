// A delivery-opportunity trace: one integer (ms since trace start) per line, never decreasing.
#pragma once

#include <cstdint>
#include <istream>
#include <stdexcept>
#include <string>
#include <vector>

namespace netrepro {

// A malformed or unreadable trace; what() reads "file:line: what is wrong".
class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Trace {
 public:
  // Reads and validates a trace file; throws TraceError.
  static Trace load(const std::string& path);
  // Validates trace text from a stream; `name` is used in error messages.
  static Trace parse(std::istream& in, const std::string& name);

  const std::vector<uint64_t>& timestamps_ms() const { return timestamps_ms_; }
  const std::string& name() const { return name_; }

 private:
  Trace(std::string name, std::vector<uint64_t> timestamps_ms);
  std::string name_;
  std::vector<uint64_t> timestamps_ms_;
};

}  // namespace netrepro
