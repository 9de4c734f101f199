// Strict parsing of command-line values for the two programs.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace netrepro::sprout {

// A bad flag or value; the programs print it with their usage and exit 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class CliArgs {
 public:
  CliArgs(int argc, char** argv) : argc_(argc), argv_(argv) {}

  bool done() const { return index_ >= argc_; }
  // The next flag (advances).
  std::string next_flag();
  // The value after `flag` (advances); throws UsageError if missing.
  std::string value(const std::string& flag);

  static uint16_t parse_port(const std::string& flag, const std::string& text);
  // A finite number with lo < x < hi (open interval), or lo < x if hi is infinite.
  static double parse_double(const std::string& flag, const std::string& text, double lo,
                             double hi);

 private:
  int argc_;
  char** argv_;
  int index_ = 1;
};

}  // namespace netrepro::sprout
