// The one command-line parser of the native programs. Options are declared with their type,
// whether they are required, a value name and a line of help; `--flag value` and
// `--flag=value` are both accepted; every error names the flag (UsageError), and usage()
// lists what was declared. A flag given twice, an unknown flag, a missing or empty value and a
// value out of range are errors. `-h`/`--help` makes parse() return false.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace netrepro {

// A bad command line: the programs print it with their usage and exit with status 2.
class UsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Repeatable: optional, and may be given more than once (each value goes to the setter).
enum class Need { Optional, Required, Repeatable };

class ArgParser {
 public:
  // Gets the value text; throws UsageError (or std::invalid_argument, which parse() turns
  // into a UsageError prefixed with the flag) when it is not acceptable.
  using Setter = std::function<void(const std::string& value)>;

  // `synopsis` follows "usage: PROGRAM" on the first line of usage() (empty: made from the
  // declarations); `description` ends it.
  ArgParser(std::string program, std::string synopsis, std::string description);

  // A switch without a value.
  ArgParser& flag(const std::string& name, const std::string& help, bool* out);
  // Text; an empty value is refused.
  ArgParser& text(const std::string& name, const std::string& metavar, const std::string& help,
                  std::string* out, Need need = Need::Optional);
  ArgParser& text(const std::string& name, const std::string& metavar, const std::string& help,
                  std::optional<std::string>* out);
  // A whole number written in decimal digits only, lo <= x <= hi.
  ArgParser& integer(const std::string& name, const std::string& metavar,
                     const std::string& help, uint64_t* out, uint64_t lo, uint64_t hi,
                     Need need = Need::Optional);
  ArgParser& integer(const std::string& name, const std::string& metavar,
                     const std::string& help, std::optional<uint64_t>* out, uint64_t lo,
                     uint64_t hi);
  // A finite number with lo < x <= hi (open below, closed above).
  ArgParser& number(const std::string& name, const std::string& metavar,
                    const std::string& help, double* out, double lo, double hi,
                    Need need = Need::Optional);
  ArgParser& number(const std::string& name, const std::string& metavar,
                    const std::string& help, std::optional<double>* out, double lo, double hi);
  // Anything else: the setter converts and stores.
  ArgParser& custom(const std::string& name, const std::string& metavar,
                    const std::string& help, Need need, Setter setter);

  // args[0] is the program. Returns false when help was asked for (print usage(), exit 0).
  bool parse(const std::vector<std::string>& args);
  bool parse(int argc, char** argv);

  // How every program's main() reads its command line: parse(), then `check` (what the
  // declarations cannot say, e.g. two values that must differ; it throws UsageError). Returns
  // nothing when the program goes on, else its exit status, already explained: 0 after
  // -h/--help (the usage on `out`), 2 after a UsageError ("PROGRAM: why" and the usage on
  // `err`).
  std::optional<int> parse_or_exit_status(int argc, char** argv,
                                          const std::function<void()>& check = nullptr);
  std::optional<int> parse_or_exit_status(int argc, char** argv,
                                          const std::function<void()>& check, std::ostream& out,
                                          std::ostream& err);

  std::string usage() const;
  const std::string& program() const { return program_; }
  // The whole command line, program first, joined with spaces (for log headers).
  static std::string join(const std::vector<std::string>& args);

  // The converters behind integer() and number(), for custom setters.
  static uint64_t to_integer(const std::string& name, const std::string& value, uint64_t lo,
                             uint64_t hi);
  static double to_number(const std::string& name, const std::string& value, double lo,
                          double hi);

 private:
  struct Spec {
    std::string name;
    std::string metavar;  // empty: a switch
    std::string help;
    Need need = Need::Optional;
    Setter set;
    bool* flag = nullptr;
  };
  ArgParser& declare(Spec spec);
  const Spec* find(const std::string& name) const;

  std::string program_;
  std::string synopsis_;
  std::string description_;
  std::vector<Spec> specs_;
};

}  // namespace netrepro
