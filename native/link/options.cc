#include "options.hh"

#include <limits>
#include <utility>

#include "random_loss.hh"

namespace netrepro {

namespace {

constexpr uint64_t kMaxMs = 999999999;
constexpr double kMaxRateMbps = 1e6;

const char* const kSynopsis =
    "--iface-a IF --iface-b IF\n"
    "  (--a2b-trace FILE | --a2b-rate-mbps R) (--b2a-trace FILE | --b2a-rate-mbps R)\n"
    "  [--a2b-delay-ms D=0] [--b2a-delay-ms D=0]\n"
    "  [--a2b-delay-by-src IP=MS[,IP=MS...]] [--b2a-delay-by-dst IP=MS[,IP=MS...]]\n"
    "  [--a2b-order queue-delay|delay-queue] [--b2a-order queue-delay|delay-queue]\n"
    "  [--a2b-queue SPEC=infinite] [--b2a-queue SPEC=infinite]\n"
    "  [--a2b-rate-steps MS:MBPS[,MS:MBPS...]] [--b2a-rate-steps MS:MBPS[,MS:MBPS...]]\n"
    "  [--a2b-loss P=0] [--b2a-loss P=0] [--loss-seed N=1]\n"
    "  [--once] [--span-ms N] [--realtime] [--spin-us N] [--cpu N] [--data-path rings|mmsg]\n"
    "  --a2b-log FILE --b2a-log FILE\n"
    "  [--a2b-lateness FILE] [--b2a-lateness FILE]\n"
    "  [--a2b-queue-log FILE] [--b2a-queue-log FILE]\n"
    "  --stats FILE [--ready-file FILE]";

const char* const kDescription =
    "Bridges IF A and IF B: frames from A cross the a2b queue and delay, frames from B the b2a\n"
    "ones (default orders: a2b queue-delay, b2a delay-queue, i.e. mm-delay D mm-link DATA ACK\n"
    "with the sender on side A). SPEC: infinite | droptail:packets=N | droptail:bytes=N |\n"
    "droptail:packets=N,bytes=M (bytes counted as IP length + 4) |\n"
    "codel[:target=MS,interval=MS] (CoDel, defaults target=5, interval=100) |\n"
    "ecn:k=K,packets=N (CE on ECT packets arriving to more than K waiting packets, drop-tail at\n"
    "N). Times in ms.\n"
    "--a2b-delay-by-src: a2b frames from a listed IPv4 source get its delay instead of\n"
    "--a2b-delay-ms; --b2a-delay-by-dst: b2a frames to a listed IPv4 destination instead of\n"
    "--b2a-delay-ms (one FIFO per delay value: a shorter delay may overtake a longer one).\n"
    "--once: no service after the trace's first pass; --span-ms N: no service later than N ms\n"
    "after the start, in both directions (every scheme is then measured over the same span).\n"
    "--realtime: the timing loop runs under SCHED_FIFO (for links that need little CPU).\n"
    "--spin-us N: how long before a send the real-time loop stops sleeping and spins.\n"
    "--cpu N: the timing loop runs on CPU N only (the log writers keep every CPU); an error if\n"
    "the CPU cannot be had.\n"
    "--data-path: mmsg (default; recvmmsg batches) or rings (a PACKET_MMAP rx ring; recvmmsg if\n"
    "it cannot be set up, said on stderr and in the stats).\n"
    "--a2b-rate-steps (with --a2b-rate-mbps): from MS ms after the start, the rate is MBPS.\n"
    "--a2b-loss P: each packet leaving the queue is lost with probability P (0 <= P < 1),\n"
    "drawn from a generator seeded by --loss-seed (each direction its own stream).\n";

// Both directions' flags, declared the same way.
void declare_direction(ArgParser& parser, const std::string& name, DirectionOptions& d) {
  const std::string p = "--" + name + "-";
  parser.text(p + "trace", "FILE", "trace of delivery opportunities (ms per line)", &d.trace)
      .number(p + "rate-mbps", "R", "a fixed rate in Mbit/s instead of a trace", &d.rate_mbps,
              0, kMaxRateMbps)
      .integer(p + "delay-ms", "D", "fixed one-way delay in ms (default 0)", &d.delay_ms, 0,
               kMaxMs)
      .custom(p + "order", "ORDER", "queue-delay or delay-queue", Need::Optional,
              [&d, p](const std::string& v) {
                if (v != "queue-delay" && v != "delay-queue") {
                  throw UsageError(p + "order '" + v + "' must be queue-delay or delay-queue");
                }
                d.order = v;
              })
      .custom(p + "rate-steps", "MS:MBPS,...", "rate changes of a fixed-rate direction",
              Need::Optional,
              [&d](const std::string& v) { d.rate_steps = RateSteps::parse(v, kMaxRateMbps); })
      .custom(p + "loss", "P", "random loss after the queue, 0 <= P < 1", Need::Optional,
              [&d](const std::string& v) {
                d.loss = RandomLoss::parse_probability(v);
                d.loss_given = true;
              })
      .text(p + "queue", "SPEC", "the queue discipline (default infinite)", &d.queue)
      .text(p + "log", "FILE", "mahimahi-format log", &d.log, Need::Required)
      .text(p + "lateness", "FILE", "per-packet lateness record", &d.lateness)
      .text(p + "queue-log", "FILE", "per-packet queue record (backlog, ECN, send times)",
            &d.queue_log);
}

ArgParser parser_for(const std::string& program, Options& o) {
  ArgParser parser(program, kSynopsis, kDescription);
  parser.text("--iface-a", "IF", "side A's interface", &o.iface_a, Need::Required)
      .text("--iface-b", "IF", "side B's interface", &o.iface_b, Need::Required);
  declare_direction(parser, "a2b", o.a2b);
  declare_direction(parser, "b2a", o.b2a);
  // Keyed by the far host: the senders are on side A, so a2b by source, b2a by destination.
  parser
      .custom("--a2b-delay-by-src", "IP=MS,...", "a2b delay per IPv4 source", Need::Optional,
              [&o](const std::string& v) {
                o.a2b.peer_delays = PeerDelays::parse(v, PeerKey::Source);
              })
      .custom("--b2a-delay-by-dst", "IP=MS,...", "b2a delay per IPv4 destination",
              Need::Optional, [&o](const std::string& v) {
                o.b2a.peer_delays = PeerDelays::parse(v, PeerKey::Destination);
              });
  parser.flag("--once", "no service after the trace's first pass", &o.once)
      .integer("--span-ms", "N", "no service later than N ms after the start", &o.span_ms, 1,
               kMaxMs)
      .flag("--realtime", "run the timing loop under SCHED_FIFO", &o.realtime)
      .integer("--spin-us", "N",
               "with --realtime, spin the last N us before each send (default, for a fixed "
               "rate above 24 Mbit/s: 40% of an opportunity, at most 50; else 0: only sleep)",
               &o.spin_us, 0, 1000)
      .integer("--cpu", "N", "run the timing loop on CPU N only", &o.cpu, 0, 4095)
      .custom("--data-path", "PATH", "mmsg (default) or rings", Need::Optional,
              [&o](const std::string& v) {
                if (v != "rings" && v != "mmsg") {
                  throw UsageError("--data-path '" + v + "' must be rings or mmsg");
                }
                o.data_path = v;
              })
      .integer("--loss-seed", "N", "seed of the random loss (default 1)", &o.loss_seed, 0,
               std::numeric_limits<uint64_t>::max())
      .text("--stats", "FILE", "JSON counters, rewritten every second", &o.stats,
            Need::Required)
      .text("--ready-file", "FILE", "written once the link serves", &o.ready_file);
  return parser;
}

}  // namespace

std::string Options::usage(const std::string& program) {
  Options scratch;
  return parser_for(program, scratch).usage();
}

Options Options::parse(const std::vector<std::string>& args, bool* help) {
  Options o;
  o.a2b.order = "queue-delay";
  o.b2a.order = "delay-queue";
  o.command_line = ArgParser::join(args);
  const bool complete = parser_for(args.empty() ? "netrepro-link" : args[0], o).parse(args);
  if (help != nullptr) *help = !complete;
  if (!complete) return o;
  if (o.iface_a == o.iface_b) throw UsageError("--iface-a and --iface-b must differ");
  for (const auto& [name, d] : {std::pair<std::string, const DirectionOptions*>{"a2b", &o.a2b},
                                {"b2a", &o.b2a}}) {
    if (d->trace.has_value() == d->rate_mbps.has_value()) {
      throw UsageError("give exactly one of --" + name + "-trace and --" + name + "-rate-mbps");
    }
    if (!d->rate_steps.empty() && !d->rate_mbps.has_value()) {
      throw UsageError("--" + name + "-rate-steps changes a fixed rate: give --" + name +
                       "-rate-mbps with it, not a trace");
    }
    if (!d->rate_steps.empty() && o.span_ms.has_value()) {
      try {
        d->rate_steps.check_within(*o.span_ms);
      } catch (const RateStepsError& e) {
        throw UsageError("--" + name + "-rate-steps: " + e.what());
      }
    }
  }
  return o;
}

}  // namespace netrepro
