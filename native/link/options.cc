#include "options.hh"

#include <cmath>
#include <cstdlib>
#include <map>

namespace netrepro {

namespace {

uint64_t parse_ms(const std::string& flag, const std::string& value) {
  if (value.empty() || value.size() > 9 || value.find_first_not_of("0123456789") != std::string::npos) {
    throw UsageError(flag + " '" + value + "' is not a whole number of milliseconds (0 to 999999999)");
  }
  return std::stoull(value);
}

double parse_rate(const std::string& flag, const std::string& value) {
  char* end = nullptr;
  const double r = std::strtod(value.c_str(), &end);
  if (value.empty() || end == nullptr || *end != '\0' || !std::isfinite(r) || r <= 0 || r > 1e6) {
    throw UsageError(flag + " '" + value + "' is not a rate in Mbit/s (a number above 0, at most 1e6)");
  }
  return r;
}

}  // namespace

std::string Options::usage(const std::string& program) {
  return "usage: " + program +
         " --iface-a IF --iface-b IF\n"
         "  (--a2b-trace FILE | --a2b-rate-mbps R) (--b2a-trace FILE | --b2a-rate-mbps R)\n"
         "  [--a2b-delay-ms D=0] [--b2a-delay-ms D=0]\n"
         "  [--a2b-order queue-delay|delay-queue] [--b2a-order queue-delay|delay-queue]\n"
         "  [--a2b-queue SPEC=infinite] [--b2a-queue SPEC=infinite]\n"
         "  [--once] [--span-ms N] [--realtime]\n"
         "  --a2b-log FILE --b2a-log FILE\n"
         "  [--a2b-lateness FILE] [--b2a-lateness FILE]\n"
         "  --stats FILE [--ready-file FILE]\n"
         "Bridges IF A and IF B: frames from A cross the a2b queue and delay, frames from B the b2a\n"
         "ones (default orders: a2b queue-delay, b2a delay-queue, i.e. mm-delay D mm-link DATA ACK\n"
         "with the sender on side A). SPEC: infinite | droptail:packets=N | droptail:bytes=N |\n"
         "droptail:packets=N,bytes=M (bytes counted as IP length + 4). Times in ms. --once: no\n"
         "service after the trace's first pass; --span-ms N: no service later than N ms after the\n"
         "start, in both directions (every scheme is then measured over the same span).\n"
         "--realtime: the timing loop runs under SCHED_FIFO (for links that need little CPU).\n";
}

Options Options::parse(const std::vector<std::string>& args) {
  Options o;
  o.a2b.order = "queue-delay";
  o.b2a.order = "delay-queue";
  for (const std::string& a : args) {
    o.command_line += (o.command_line.empty() ? "" : " ") + a;
  }
  std::map<std::string, std::string*> strings = {
      {"--iface-a", &o.iface_a},         {"--iface-b", &o.iface_b},
      {"--a2b-order", &o.a2b.order},     {"--b2a-order", &o.b2a.order},
      {"--a2b-queue", &o.a2b.queue},     {"--b2a-queue", &o.b2a.queue},
      {"--a2b-log", &o.a2b.log},         {"--b2a-log", &o.b2a.log},
      {"--a2b-lateness", &o.a2b.lateness}, {"--b2a-lateness", &o.b2a.lateness},
      {"--stats", &o.stats},             {"--ready-file", &o.ready_file},
  };
  std::map<std::string, bool> seen;
  for (size_t i = 1; i < args.size(); ++i) {
    std::string flag = args[i];
    std::string value;
    bool has_inline_value = false;
    const size_t eq = flag.find('=');
    if (flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
      has_inline_value = true;
    }
    if (seen[flag]) throw UsageError(flag + " given twice");
    seen[flag] = true;
    if (flag == "--once" || flag == "--realtime") {
      if (has_inline_value) throw UsageError(flag + " takes no value");
      (flag == "--once" ? o.once : o.realtime) = true;
      continue;
    }
    const bool known = strings.count(flag) || flag == "--a2b-trace" || flag == "--b2a-trace" ||
                       flag == "--a2b-rate-mbps" || flag == "--b2a-rate-mbps" ||
                       flag == "--a2b-delay-ms" || flag == "--b2a-delay-ms" ||
                       flag == "--span-ms";
    if (!known) throw UsageError("unknown option '" + args[i] + "'");
    if (!has_inline_value) {
      if (i + 1 >= args.size()) throw UsageError(flag + " needs a value");
      value = args[++i];
    }
    if (value.empty()) throw UsageError(flag + " needs a non-empty value");
    if (strings.count(flag)) {
      *strings[flag] = value;
    } else if (flag == "--a2b-trace") {
      o.a2b.trace = value;
    } else if (flag == "--b2a-trace") {
      o.b2a.trace = value;
    } else if (flag == "--a2b-rate-mbps") {
      o.a2b.rate_mbps = parse_rate(flag, value);
    } else if (flag == "--b2a-rate-mbps") {
      o.b2a.rate_mbps = parse_rate(flag, value);
    } else if (flag == "--a2b-delay-ms") {
      o.a2b.delay_ms = parse_ms(flag, value);
    } else if (flag == "--b2a-delay-ms") {
      o.b2a.delay_ms = parse_ms(flag, value);
    } else if (flag == "--span-ms") {
      o.span_ms = parse_ms(flag, value);
      if (*o.span_ms == 0) throw UsageError("--span-ms must be above 0");
    }
  }
  if (o.iface_a.empty() || o.iface_b.empty()) throw UsageError("--iface-a and --iface-b are required");
  if (o.iface_a == o.iface_b) throw UsageError("--iface-a and --iface-b must differ");
  for (const auto& [name, d] : {std::pair<std::string, const DirectionOptions*>{"a2b", &o.a2b},
                                {"b2a", &o.b2a}}) {
    if (d->trace.has_value() == d->rate_mbps.has_value()) {
      throw UsageError("give exactly one of --" + name + "-trace and --" + name + "-rate-mbps");
    }
    if (d->log.empty()) throw UsageError("--" + name + "-log is required");
    if (d->order != "queue-delay" && d->order != "delay-queue") {
      throw UsageError("--" + name + "-order '" + d->order + "' must be queue-delay or delay-queue");
    }
  }
  if (o.stats.empty()) throw UsageError("--stats is required");
  return o;
}

}  // namespace netrepro
