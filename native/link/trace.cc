#include "trace.hh"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <utility>

namespace netrepro {

namespace {

// Keeps one period well inside uint64 microseconds even after many wraps.
constexpr uint64_t kMaxTimestampMs = 1'000'000'000'000ULL;

std::string where(const std::string& name, uint64_t line) {
  return name + ":" + std::to_string(line) + ": ";
}

}  // namespace

Trace::Trace(std::string name, std::vector<uint64_t> timestamps_ms)
    : name_(std::move(name)), timestamps_ms_(std::move(timestamps_ms)) {}

Trace Trace::load(const std::string& path) {
  std::ifstream in(path);
  if (!in.is_open()) {
    throw TraceError(path + ": cannot open trace for reading: " + std::strerror(errno) +
                     " (check the path)");
  }
  Trace trace = parse(in, path);
  return trace;
}

Trace Trace::parse(std::istream& in, const std::string& name) {
  std::vector<uint64_t> out;
  std::string line;
  uint64_t line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (line.empty()) {
      throw TraceError(where(name, line_number) +
                       "empty line; a trace holds one integer (ms) per line and no blank lines");
    }
    if (line.back() == '\r') {
      throw TraceError(where(name, line_number) +
                       "Windows line ending (carriage return); convert the file with dos2unix");
    }
    uint64_t value = 0;
    for (const char c : line) {
      if (c < '0' || c > '9') {
        throw TraceError(where(name, line_number) + "'" + line +
                         "' is not a non-negative integer number of milliseconds");
      }
      value = value * 10 + static_cast<uint64_t>(c - '0');
      if (value > kMaxTimestampMs) {
        throw TraceError(where(name, line_number) + "'" + line + "' is too large (more than " +
                         std::to_string(kMaxTimestampMs) + " ms)");
      }
    }
    if (!out.empty() && value < out.back()) {
      throw TraceError(where(name, line_number) + std::to_string(value) +
                       " is smaller than the previous line's " + std::to_string(out.back()) +
                       "; timestamps must never decrease");
    }
    out.push_back(value);
  }
  if (in.bad()) {
    throw TraceError(where(name, line_number + 1) + "read error: " + std::strerror(errno));
  }
  if (out.empty()) {
    throw TraceError(where(name, 1) + "empty trace; expected one integer (ms) per line");
  }
  if (out.back() == 0) {
    throw TraceError(where(name, line_number) +
                     "last timestamp is 0; a trace must last a nonzero time (it is its period)");
  }
  return Trace(name, std::move(out));
}

}  // namespace netrepro
