#include "arg_parser.hh"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <set>

namespace netrepro {

namespace {
std::string format_number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", x);
  return buf;
}
}  // namespace

ArgParser::ArgParser(std::string program, std::string synopsis, std::string description)
    : program_(std::move(program)),
      synopsis_(std::move(synopsis)),
      description_(std::move(description)) {}

ArgParser& ArgParser::declare(Spec spec) {
  if (spec.name.rfind("--", 0) != 0 || spec.name.size() < 3 ||
      spec.name.find('=') != std::string::npos || find(spec.name) != nullptr ||
      spec.name == "--help") {
    throw std::logic_error("ArgParser: bad or repeated option name '" + spec.name + "'");
  }
  specs_.push_back(std::move(spec));
  return *this;
}

const ArgParser::Spec* ArgParser::find(const std::string& name) const {
  for (const Spec& s : specs_) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

ArgParser& ArgParser::flag(const std::string& name, const std::string& help, bool* out) {
  Spec s;
  s.name = name;
  s.help = help;
  s.flag = out;
  return declare(std::move(s));
}

ArgParser& ArgParser::custom(const std::string& name, const std::string& metavar,
                             const std::string& help, Need need, Setter setter) {
  Spec s;
  s.name = name;
  s.metavar = metavar.empty() ? "VALUE" : metavar;
  s.help = help;
  s.need = need;
  s.set = std::move(setter);
  return declare(std::move(s));
}

ArgParser& ArgParser::text(const std::string& name, const std::string& metavar,
                           const std::string& help, std::string* out, Need need) {
  return custom(name, metavar, help, need, [out](const std::string& v) { *out = v; });
}

ArgParser& ArgParser::text(const std::string& name, const std::string& metavar,
                           const std::string& help, std::optional<std::string>* out) {
  return custom(name, metavar, help, Need::Optional, [out](const std::string& v) { *out = v; });
}

uint64_t ArgParser::to_integer(const std::string& name, const std::string& value, uint64_t lo,
                               uint64_t hi) {
  const bool digits = !value.empty() && value.size() <= 20 &&
                      value.find_first_not_of("0123456789") == std::string::npos;
  errno = 0;
  const unsigned long long x = digits ? std::strtoull(value.c_str(), nullptr, 10) : 0;
  if (!digits || errno == ERANGE || x < lo || x > hi) {
    throw UsageError(name + " '" + value + "' is not a whole number in " + std::to_string(lo) +
                     ".." + std::to_string(hi));
  }
  return x;
}

double ArgParser::to_number(const std::string& name, const std::string& value, double lo,
                            double hi) {
  char* end = nullptr;
  const double x = value.empty() ? 0 : std::strtod(value.c_str(), &end);
  if (value.empty() || end == nullptr || *end != '\0' || !std::isfinite(x) || !(x > lo) ||
      !(x <= hi)) {
    throw UsageError(name + " '" + value + "' is not a number above " + format_number(lo) +
                     " and at most " + format_number(hi));
  }
  return x;
}

ArgParser& ArgParser::integer(const std::string& name, const std::string& metavar,
                              const std::string& help, uint64_t* out, uint64_t lo, uint64_t hi,
                              Need need) {
  return custom(name, metavar, help, need,
                [=](const std::string& v) { *out = to_integer(name, v, lo, hi); });
}

ArgParser& ArgParser::integer(const std::string& name, const std::string& metavar,
                              const std::string& help, std::optional<uint64_t>* out,
                              uint64_t lo, uint64_t hi) {
  return custom(name, metavar, help, Need::Optional,
                [=](const std::string& v) { *out = to_integer(name, v, lo, hi); });
}

ArgParser& ArgParser::number(const std::string& name, const std::string& metavar,
                             const std::string& help, double* out, double lo, double hi,
                             Need need) {
  return custom(name, metavar, help, need,
                [=](const std::string& v) { *out = to_number(name, v, lo, hi); });
}

ArgParser& ArgParser::number(const std::string& name, const std::string& metavar,
                             const std::string& help, std::optional<double>* out, double lo,
                             double hi) {
  return custom(name, metavar, help, Need::Optional,
                [=](const std::string& v) { *out = to_number(name, v, lo, hi); });
}

bool ArgParser::parse(int argc, char** argv) {
  return parse(std::vector<std::string>(argv, argv + argc));
}

bool ArgParser::parse(const std::vector<std::string>& args) {
  std::set<std::string> seen;
  for (size_t i = 1; i < args.size(); ++i) {
    std::string name = args[i];
    std::optional<std::string> inline_value;
    const size_t eq = name.find('=');
    if (name.rfind("--", 0) == 0 && eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if ((name == "-h" || name == "--help") && !inline_value) {
      return false;
    }
    const Spec* spec = find(name);
    if (spec == nullptr) {
      throw UsageError("unknown option '" + args[i] + "'");
    }
    if (!seen.insert(name).second && spec->need != Need::Repeatable) {
      throw UsageError(name + " given twice");
    }
    if (spec->flag != nullptr) {
      if (inline_value) throw UsageError(name + " takes no value");
      *spec->flag = true;
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= args.size()) throw UsageError(name + " needs a value");
      inline_value = args[++i];
    }
    if (inline_value->empty()) throw UsageError(name + " needs a non-empty value");
    try {
      spec->set(*inline_value);
    } catch (const UsageError&) {
      throw;
    } catch (const std::invalid_argument& e) {
      throw UsageError(name + ": " + e.what());
    }
  }
  for (const Spec& s : specs_) {
    if (s.need == Need::Required && seen.count(s.name) == 0) {
      throw UsageError(s.name + " is required");
    }
  }
  return true;
}

std::optional<int> ArgParser::parse_or_exit_status(int argc, char** argv,
                                                   const std::function<void()>& check) {
  return parse_or_exit_status(argc, argv, check, std::cout, std::cerr);
}

std::optional<int> ArgParser::parse_or_exit_status(int argc, char** argv,
                                                   const std::function<void()>& check,
                                                   std::ostream& out, std::ostream& err) {
  try {
    if (!parse(argc, argv)) {
      out << usage();
      return 0;
    }
    if (check) check();
  } catch (const UsageError& e) {
    err << program_ << ": " << e.what() << "\n" << usage();
    return 2;
  }
  return std::nullopt;
}

std::string ArgParser::usage() const {
  std::string out = "usage: " + program_;
  if (!synopsis_.empty()) {
    out += " " + synopsis_;
  } else {
    for (const Spec& s : specs_) {
      const std::string word = s.metavar.empty() ? s.name : s.name + " " + s.metavar;
      out += " " + (s.need == Need::Required ? word : "[" + word + "]");
    }
  }
  out += "\n";
  for (const Spec& s : specs_) {
    std::string word = "  " + s.name + (s.metavar.empty() ? "" : " " + s.metavar);
    if (word.size() < 26) word.resize(26, ' ');
    else word += "\n" + std::string(26, ' ');
    out += word + s.help + (s.need == Need::Required ? " (required)" : "") + "\n";
  }
  if (!description_.empty()) {
    out += description_;
    if (description_.back() != '\n') out += "\n";
  }
  return out;
}

std::string ArgParser::join(const std::vector<std::string>& args) {
  std::string out;
  for (size_t i = 0; i < args.size(); ++i) {
    out += (i == 0 ? "" : " ") + args[i];
  }
  return out;
}

}  // namespace netrepro
