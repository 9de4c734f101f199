#include "link_emulator.hh"

#include <arpa/inet.h>
#include <sys/prctl.h>
#include <sched.h>
#include <sys/resource.h>

#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <limits>
#include <optional>
#include <stdexcept>
#include <utility>

#include "buffered_writer.hh"
#include "clock.hh"
#include "json_writer.hh"
#include "poll_loop.hh"
#include "scheduling.hh"
#include "system_error.hh"

namespace netrepro {

namespace {

// Above this fixed rate a `#` line per opportunity would dwarf the rest of the log.
constexpr double kMaxLoggedOpportunityRateMbps = 100.0;
constexpr uint64_t kStatsIntervalUs = 1000000;
// Frames waiting in the socket are read (in batches of 64) before serving, up to this many
// batches per wake-up, so a flood cannot starve the schedule entirely.
constexpr int kMaxBatchesPerWake = 32;
// At most one wake-up per 50 us. At 1 Gbit/s on a 2-core VM, against waking for every frame or
// opportunity, this took ~20% less CPU and cut p99 lateness (3.7 vs 9.1 ms in one comparison).
constexpr uint64_t kMinWakeIntervalUs = 50;
// A real-time loop (links of at most 100 Mbit/s) may wake more often on a fast fixed-rate side:
// at 100 Mbit/s a full frame takes 120 us, and waking only every 50 us moves departures by up
// to 50 us (half the gaps beyond 10% of the ideal). A tenth of the opportunity interval there,
// never below this floor.
constexpr uint64_t kMinWakeIntervalFloorUs = 5;
// A real-time loop on a fixed-rate side sleeps only until this long before its next event and
// spins the rest: waking from ppoll in a VM is late by a few to tens of us (at 100 Mbit/s, with
// sleeping alone 94.5% of backlogged gaps were within 10% of 120 us, p99 error 30 us). Capped
// at 40% of an opportunity so a backlogged link spins at most that share of a CPU.
constexpr uint64_t kSpinWindowUs = 50;
constexpr double kSpinShareOfOpportunity = 0.4;
// Only where 10% of an opportunity is below this does a wake-up's error matter (above
// 24 Mbit/s): at 10 Mbit/s the tolerance is 120 us and sleeping alone keeps 99% of the gaps.
constexpr double kSpinBelowToleranceUs = 50.0;
// Above ordinary tasks, below the kernel's own real-time threads (migration, watchdog: 99).
constexpr int kRealtimePriority = 10;
// An Ethernet frame with a VLAN tag; anything larger means offloads are on.
constexpr uint32_t kLargestExpectedFrame = 1518;

uint64_t realtime_us() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000u + static_cast<uint64_t>(ts.tv_nsec) / 1000u;
}

std::string format_rate(double mbps) {
  char text[64];
  std::snprintf(text, sizeof(text), "%g", mbps);
  return text;
}

// A fixed-rate direction's highest rate (its rate steps' included); nothing for a trace.
std::optional<double> highest_rate_mbps(const DirectionPlan& p) {
  if (!p.options.rate_mbps) return std::nullopt;
  return std::max(*p.options.rate_mbps, p.options.rate_steps.max_rate_mbps().value_or(0.0));
}

bool logs_opportunities(const DirectionPlan& p) {
  const std::optional<double> rate = highest_rate_mbps(p);
  return !rate.has_value() || *rate <= kMaxLoggedOpportunityRateMbps;
}

RandomLoss::Stream loss_stream(const DirectionPlan& p) {
  return p.name == "a2b" ? RandomLoss::Stream::A2B : RandomLoss::Stream::B2A;
}

// Size on mahimahi's basis (IP length + 4) for IPv4 frames; 0 for anything else.
uint32_t ipv4_size(const char* frame, uint32_t length) {
  if (length < 14) return 0;
  const unsigned ethertype = (static_cast<unsigned char>(frame[12]) << 8) |
                             static_cast<unsigned char>(frame[13]);
  if (ethertype != 0x0800) return 0;
  if (length >= 14 + 20) {
    // Trust the IP total length when it fits: padding of short frames is not IP data.
    const unsigned total = (static_cast<unsigned char>(frame[16]) << 8) |
                           static_cast<unsigned char>(frame[17]);
    if (total >= 20 && total <= length - 14) return total + 4;
  }
  return mahimahi_size(length);
}

// What a direction adds to the stats with random loss or rate steps (nothing without them).
void add_conditions(JsonObject& j, const DirectionPlan& p, const RandomLoss& loss) {
  if (p.options.loss_given) {
    j.add("loss", JsonObject()
                      .add("probability", loss.probability())
                      .add("seed", loss.seed())
                      .add("stream", p.name)
                      .add("where", "after the queue")
                      .add("draws", loss.draws())
                      .add("lost", loss.lost())
                      .add("lost_bytes", loss.lost_bytes()));
  }
  if (!p.options.rate_steps.empty()) {
    std::vector<uint64_t> at;
    std::vector<double> rates;
    for (const RateStep& s : p.options.rate_steps.steps()) {
      at.push_back(s.at_ms);
      rates.push_back(s.rate_mbps);
    }
    j.add("rate_steps", JsonObject()
                            .add("initial_rate_mbps", *p.options.rate_mbps)
                            .add_array("at_ms", at)
                            .add_array("rate_mbps", rates));
  }
}

JsonObject direction_json(const TraceQueue& q, const DelayStage& delay,
                          const LatenessRecorder& lateness, uint64_t socket_drops, uint64_t non_ip, uint64_t sent,
                          uint64_t send_errors, uint64_t truncated) {
  const TraceQueueCounters& c = q.counters();
  const LatencyHistogram& h = lateness.histogram();
  const std::vector<uint64_t> p = h.percentiles({0.5, 0.99, 0.999});
  JsonObject j;
  j.add("arrivals", c.arrivals)
      .add("arrival_bytes", c.arrival_bytes)
      .add("drops", c.drops)
      .add("drop_bytes", c.drop_bytes)
      .add("dequeue_drops", c.dequeue_drops)
      .add("dequeue_drop_bytes", c.dequeue_drop_bytes)
      .add("arrivals_after_service", c.after_service)
      .add("arrival_bytes_after_service", c.after_service_bytes)
      .add("departures", c.departures)
      .add("departure_bytes", c.departure_bytes)
      .add("opportunities", c.opportunities)
      .add("opportunity_bytes", c.opportunity_bytes)
      .add("queue_bytes_at_end", q.queued_bytes())
      .add("queue_packets_at_end", q.queued_packets())
      .add("queue_bytes_max", c.max_queued_bytes)
      .add("queue_packets_max", c.max_queued_packets)
      .add("delay_line_packets_at_end", static_cast<uint64_t>(delay.size()))
      .add("sent", sent)
      .add("send_errors", send_errors)
      .add("socket_drops", socket_drops)
      .add("truncated_frames", truncated)
      .add("non_ip_forwarded", non_ip)
      .add("ecn", JsonObject()
                      .add("arrivals_not_ect", c.arrivals_not_ect)
                      .add("arrivals_ect0", c.arrivals_ect0)
                      .add("arrivals_ect1", c.arrivals_ect1)
                      .add("arrivals_ce", c.arrivals_ce)
                      .add("marks", c.ecn_marks)
                      .add("drops_ecn_capable", c.drops_ecn_capable)
                      .add("drops_not_ect", c.drops - c.drops_ecn_capable))
      .add("lateness_us", JsonObject()
                              .add("p50", p[0])
                              .add("p99", p[1])
                              .add("p999", p[2])
                              .add("max", h.max())
                              .add("max_at_us", lateness.max_at_us())
                              .add("count", h.count()));
  const PeerDelays& peers = delay.peers();
  if (!peers.empty()) {
    JsonObject by_address;
    for (const PeerDelays::Entry& e : peers.entries()) {
      by_address.add(PeerDelays::format_address(e.address), e.delay_ms);
    }
    j.add(peers.stats_key(), by_address);
  }
  return j;
}

// This process's peak resident memory (VmHWM): what the queues made it hold. Not getrusage's
// ru_maxrss, which keeps the peak of the process image before exec (the runner's).
std::optional<uint64_t> peak_rss_kib() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return std::nullopt;
  char line[256];
  std::optional<uint64_t> found;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    unsigned long long kib = 0;
    if (std::sscanf(line, "VmHWM: %llu kB", &kib) == 1) {
      found = kib;
      break;
    }
  }
  std::fclose(f);
  return found;
}

}  // namespace

LinkEmulator::LinkEmulator(const Options& options, DirectionPlan a2b, DirectionPlan b2a)
    : options_(options),
      init_ms_(monotonic_ms()),
      socket_a_(options.iface_a, parse_data_path(options.data_path)),
      socket_b_(options.iface_b, parse_data_path(options.data_path)) {
  a2b_.plan = std::move(a2b);
  b2a_.plan = std::move(b2a);
  a2b_.in = &socket_a_;
  a2b_.out = &socket_b_;
  b2a_.in = &socket_b_;
  b2a_.out = &socket_a_;
  for (Direction* d : {&a2b_, &b2a_}) {
    d->log = std::make_unique<LinkLog>(d->plan.options.log, logs_opportunities(d->plan));
    d->lateness = std::make_unique<LatenessRecorder>(d->plan.options.lateness);
    if (!d->plan.options.queue_log.empty()) {
      d->queue_log = std::make_unique<QueueLog>(d->plan.options.queue_log);
    }
  }
}

void LinkEmulator::start(Direction& d, uint64_t base_ms) {
  const DirectionPlan& p = d.plan;
  OpportunitySchedule schedule =
      p.trace ? OpportunitySchedule::from_trace(p.trace->timestamps_ms(), options_.once, base_ms)
              : OpportunitySchedule::fixed_rate(*p.options.rate_mbps, base_ms * 1000,
                                                p.options.rate_steps.steps());
  if (options_.span_ms) schedule.end_at((base_ms + *options_.span_ms) * 1000);
  const bool every = logs_opportunities(p);
  TraceQueue queue(std::move(schedule), p.queue, d.log.get(), every);
  queue.observe_drops(d.queue_log.get());
  d.link = std::make_unique<LinkDirection>(
      std::move(queue), DelayStage(p.options.delay_ms * 1000, p.options.peer_delays), p.order);
  if (p.options.loss_given) {
    d.link->set_loss(RandomLoss(p.options.loss, options_.loss_seed, loss_stream(p)),
                     d.queue_log.get());
  }
  // Frames queued in the socket before the start count as arriving at the start.
  d.link->advance(base_ms * 1000, d.ready);
  const std::string from = d.in->iface(), to = d.out->iface();
  std::vector<std::string> header = {
      "netrepro-link",
      "command line: " + options_.command_line,
      "direction: " + p.name + " (" + from + " -> " + to + ")",
      "queue: " + p.queue.describe(),
      "trace: " + (p.trace ? p.trace->name() : "fixed " + format_rate(*p.options.rate_mbps) + " Mbit/s"),
      "delay: " + std::to_string(p.options.delay_ms) + " ms (" + to_string(p.order) + ")",
      "byte basis: ip+4 (1504-byte opportunities)",
      std::string("once: ") + (options_.once ? "yes" : "no"),
      "span: " + (options_.span_ms ? std::to_string(*options_.span_ms) +
                                         " ms (no opportunity after base + span)"
                                   : std::string("unlimited")),
  };
  // Only with the flags, so a log without them stays byte for byte as before.
  if (!p.options.rate_steps.empty()) {
    header.push_back("rate steps: " + p.options.rate_steps.describe() + " (after the start)");
  }
  if (p.options.loss_given) {
    header.push_back("loss: " + JsonObject::number(p.options.loss) +
                     " per packet after the queue (Bernoulli), seed " +
                     std::to_string(options_.loss_seed) + ", stream " + p.name +
                     " (lost packets depart the queue here; the queue log marks them l)");
  }
  const PeerDelays& peers = p.options.peer_delays;
  if (!peers.empty()) d.gaps.reordered();
  if (!peers.empty()) {
    // Only with the flag, so a log without it stays byte for byte as before.
    header.push_back(std::string("delay by ") +
                     (peers.key() == PeerKey::Source ? "source" : "destination") +
                     " (ms; other frames: the delay above): " + peers.describe());
  }
  if (!every) {
    header.push_back("opportunities: not logged (fixed rate above 100 Mbit/s); counted in the stats file");
  }
  header.push_back("clock: CLOCK_MONOTONIC milliseconds");
  header.push_back("init timestamp: " + std::to_string(init_ms_));
  header.push_back("base timestamp: " + std::to_string(base_ms));
  d.log->write_header(header);
  if (d.queue_log) {
    std::vector<std::string> queue_header = {"netrepro-link queue log"};
    for (const std::string& line : header) {
      if (line != header[0] && line.rfind("opportunities:", 0) != 0) queue_header.push_back(line);
    }
    d.queue_log->start(queue_header, base_ms * 1000, p.options.loss_given);
  }
}

uint64_t LinkEmulator::room(const Direction& d) const {
  if (!d.plan.queue.unread_when_full()) return std::numeric_limits<uint64_t>::max();
  if (d.link->queue().service_over()) return 0;  // nothing it sends would be carried now
  uint64_t held = d.link->queue().queued_bytes();
  if (d.plan.order == StageOrder::DelayThenQueue) {
    held += d.link->delay().size() * kLargestExpectedFrame;  // on their way into the queue
  }
  return held < d.plan.queue.byte_limit ? d.plan.queue.byte_limit - held : 0;
}

void LinkEmulator::stop_reading(Direction& d, uint64_t now_us) {
  // Frames the sender sends meanwhile wait in the socket's buffer; what overflows it the
  // kernel drops before us (socket_drops): the flood costs its sender, not this process.
  loop_->set_events(d.in->fd(), 0);
  d.unread = true;
  d.unread_since_us = now_us;
  ++d.unread_spells;
}

void LinkEmulator::read_again_if_room(Direction& d, uint64_t now_us) {
  if (!d.unread || room(d) < kLargestExpectedFrame) return;
  loop_->set_events(d.in->fd(), POLLIN);
  d.unread = false;
  d.unread_us += now_us - d.unread_since_us;
}

void LinkEmulator::receive(Direction& d) {
  for (int batch = 0; batch < kMaxBatchesPerWake; ++batch) {
    // An untrusted queue takes only the frames it has room for, one largest frame each.
    const uint64_t space = room(d);
    if (space < kLargestExpectedFrame) {
      stop_reading(d, monotonic_us());
      return;
    }
    const unsigned most = static_cast<unsigned>(
        std::min<uint64_t>(PacketSocket::kBatch, space / kLargestExpectedFrame));
    const std::vector<ReceivedFrame>& frames = d.in->receive_batch(most);
    if (frames.empty()) return;
    // Map kernel receive times (CLOCK_REALTIME) onto our monotonic clock.
    const uint64_t mono_before = monotonic_us();
    const uint64_t real = realtime_us();
    const uint64_t now = monotonic_us();
    const int64_t real_minus_mono =
        static_cast<int64_t>(real) - static_cast<int64_t>((mono_before + now) / 2);
    for (const ReceivedFrame& f : frames) {
      const uint32_t size = ipv4_size(f.data, f.length);
      if (size == 0) {
        d.non_ip.emplace_back(f.data, f.length);
        continue;
      }
      if (f.length > kLargestExpectedFrame && !warned_large_frame_) {
        warned_large_frame_ = true;
        std::fprintf(stderr,
                     "netrepro-link: warning: %u-byte frame on %s, larger than one Ethernet "
                     "frame: segmentation/receive offloads are on (ethtool -K %s gro off gso off "
                     "tso off); such frames are counted and may fail to send\n",
                     f.length, d.in->iface().c_str(), d.in->iface().c_str());
      }
      Packet p;
      p.frame.assign(f.data, f.length);
      p.size = size;
      // LinkDirection raises a time older than what it already served; never beyond now.
      uint64_t arrival = now;
      if (f.kernel_realtime_us != 0) {
        const int64_t mono = static_cast<int64_t>(f.kernel_realtime_us) - real_minus_mono;
        if (mono > 0 && static_cast<uint64_t>(mono) < now) arrival = static_cast<uint64_t>(mono);
      }
      d.link->arrive(std::move(p), arrival, d.ready);
    }
    d.in->release_batch();  // every frame was copied above
    send_due(d);
    if (frames.size() < most) return;
  }
}

void LinkEmulator::send_due(Direction& d) {
  if (!d.non_ip.empty()) {
    d.to_send.clear();
    for (const std::string& f : d.non_ip) d.to_send.push_back(&f);
    d.out->send_batch(d.to_send);
    d.non_ip_forwarded += d.non_ip.size();
    d.non_ip.clear();
  }
  if (d.ready.empty()) return;
  d.to_send.clear();
  for (const Release& r : d.ready) d.to_send.push_back(&r.packet.frame);
  const uint64_t now = monotonic_us();
  d.out->send_batch(d.to_send);
  for (const Release& r : d.ready) {
    d.lateness->record(r.release_us, now);
    // Its delay is fixed, so it left the queue at the send time less (release - departure).
    const uint64_t lost = d.link->loss().lost();
    d.gaps.sent(r.packet.departure_us, now - (r.release_us - r.packet.departure_us),
                r.packet.backlog, r.packet.size, lost != d.lost_at_previous_send);
    d.lost_at_previous_send = lost;
  }
  if (d.queue_log) {
    for (const Release& r : d.ready) d.queue_log->sent(r.packet, r.release_us, now);
  }
  d.sent += d.ready.size();
  d.ready.clear();
}

void LinkEmulator::write_stats(bool final_write) {
  JsonObject j;
  j.add("program", "netrepro-link")
      .add("iface_a", options_.iface_a)
      .add("iface_b", options_.iface_b)
      .add("init_ms", init_ms_)
      .add("start_ms", base_ms_)
      .add("end_ms", final_write ? std::optional<uint64_t>(end_ms_) : std::nullopt)
      .add("updated_ms", monotonic_ms())
      .add("complete", final_write)
      .add("scheduling", scheduling_)
      .add("min_wake_interval_us", static_cast<int64_t>(min_wake_us_))
      .add("spin_window_us", static_cast<int64_t>(spin_us_))
      .add("cpu", options_.cpu ? std::optional<uint64_t>(*options_.cpu) : std::nullopt);
  // Which receive path served the run (PacketSocket), and why not the ring if it fell back.
  const DataPath a = socket_a_.data_path(), b = socket_b_.data_path();
  j.add("data_path", a == b ? to_string(a) : "mixed");
  j.add("data_path_asked", options_.data_path);
  const std::string& why = !socket_a_.fallback_reason().empty() ? socket_a_.fallback_reason()
                                                                 : socket_b_.fallback_reason();
  if (!why.empty()) j.add("data_path_fallback", why);
  rusage usage{};
  if (::getrusage(RUSAGE_SELF, &usage) == 0) {
    j.add("cpu_user_s", usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6)
        .add("cpu_system_s", usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6)
        .add("voluntary_context_switches", static_cast<int64_t>(usage.ru_nvcsw))
        .add("involuntary_context_switches", static_cast<int64_t>(usage.ru_nivcsw));
  }
  const std::optional<uint64_t> peak = peak_rss_kib();
  if (peak) j.add("peak_rss_kib", *peak);
  for (Direction* d : {&a2b_, &b2a_}) {
    JsonObject dj = direction_json(d->link->queue(), d->link->delay(), *d->lateness,
                                   d->in->kernel_drops(), d->non_ip_forwarded, d->sent,
                                   d->out->send_errors(), d->in->truncated());
    add_conditions(dj, d->plan, d->link->loss());
    JsonObject gaps;
    gaps.add("backlogged", d->gaps.gaps())
        .add("within_10pct", d->gaps.within())
        .add("fraction", d->gaps.known() ? std::optional<double>(d->gaps.fraction()) : std::nullopt);
    if (!d->link->delay().peers().empty()) {
      gaps.add("unknown_because", "a delay per far host reorders departures");
    }
    dj.add("departure_gaps", gaps);
    if (d->plan.queue.unread_when_full()) {
      const uint64_t open = d->unread ? monotonic_us() - d->unread_since_us : 0;
      dj.add("unread_while_full", JsonObject()
                                      .add("spells", d->unread_spells)
                                      .add("ms", (d->unread_us + open) / 1000));
    }
    j.add(d->plan.name, dj);
  }
  j.write_file(options_.stats);
}

uint64_t LinkEmulator::min_wake_interval_us() const {
  if (scheduling_.rfind("SCHED_FIFO", 0) != 0) return kMinWakeIntervalUs;
  uint64_t interval = kMinWakeIntervalUs;
  for (const Direction* d : {&a2b_, &b2a_}) {
    const std::optional<double> rate = highest_rate_mbps(d->plan);
    if (d->plan.trace || !rate) continue;
    const double opportunity_us = 12032.0 / *rate;  // 1504 bytes
    const auto tenth = static_cast<uint64_t>(opportunity_us / 10.0);
    interval = std::min(interval, std::max(kMinWakeIntervalFloorUs, tenth));
  }
  return interval;
}

uint64_t LinkEmulator::spin_window_us() const {
  if (scheduling_.rfind("SCHED_FIFO", 0) != 0) return 0;  // spinning would starve its peers
  if (options_.spin_us) return *options_.spin_us;
  uint64_t window = 0;
  for (const Direction* d : {&a2b_, &b2a_}) {
    const std::optional<double> rate = highest_rate_mbps(d->plan);
    if (d->plan.trace || !rate) continue;
    const double opportunity_us = 12032.0 / *rate;
    if (opportunity_us / 10.0 >= kSpinBelowToleranceUs) continue;
    window = std::max(window, std::min(kSpinWindowUs, static_cast<uint64_t>(
                                                          opportunity_us * kSpinShareOfOpportunity)));
  }
  return window;
}

void LinkEmulator::run(SignalFd& stop) {
  // Ask for precise wake-ups: the default 50 us timer slack would add to every lateness.
  ::prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  if (options_.realtime) {
    scheduling_ = request_realtime(kRealtimePriority);
    if (scheduling_.rfind("SCHED_FIFO", 0) != 0) {
      std::fprintf(stderr, "netrepro-link: warning: --realtime: %s; running with the normal "
                   "policy (the lateness figures show the cost)\n", scheduling_.c_str());
    }
  }
  if (options_.cpu) {
    // Asked for by name (the caller steers the end hosts' packets elsewhere): never ignored.
    const std::string why = pin_to_cpu(static_cast<int>(*options_.cpu));
    if (!why.empty()) throw std::runtime_error("--cpu: " + why);
  }

  base_ms_ = monotonic_ms();
  start(a2b_, base_ms_);
  start(b2a_, base_ms_);
  write_stats(false);  // fails now, not a second later, if the path is bad
  if (!options_.ready_file.empty()) {
    BufferedWriter ready(options_.ready_file, 64);
    ready.append("ready base_ms=" + std::to_string(base_ms_) + "\n");
    ready.flush();
  }
  uint64_t next_stats_us = monotonic_us() + kStatsIntervalUs;
  // Read before serving: frames already waiting arrived earlier (kernel timestamps) and must
  // be queued before the opportunities since then are served.
  PollLoop loop(options_.iface_a + ", " + options_.iface_b + " and the signalfd");
  loop_ = &loop;
  loop.add(socket_a_.fd(), POLLIN, [this](short) {
    receive(a2b_);
    return PollLoop::Next::Continue;
  });
  loop.add(socket_b_.fd(), POLLIN, [this](short) {
    receive(b2a_);
    return PollLoop::Next::Continue;
  });
  bool stopping = false;
  loop.add(stop.fd(), POLLIN, [&](short) {
    stopping = stop.triggered();
    return PollLoop::Next::Continue;
  });

  min_wake_us_ = min_wake_interval_us();
  spin_us_ = spin_window_us();
  uint64_t last_wake_us = 0;
  while (!stopping) {
    uint64_t now = monotonic_us();
    const uint64_t next_link = std::min(a2b_.link->next_event_us(), b2a_.link->next_event_us());
    uint64_t next_send = std::min(a2b_.link->next_send_us(), b2a_.link->next_send_us());
    const bool spin_to_next = spin_us_ > 0 && next_send <= now + spin_us_;
    if (!spin_to_next && now < last_wake_us + min_wake_us_) {
      // Rate-limit wake-ups: under a packet flood, waking for every frame or every 12-us
      // opportunity costs more CPU than the machine has; kernel timestamps keep arrival
      // times exact, so this only adds at most this interval to the lateness.
      sleep_until_us(last_wake_us + min_wake_us_);
      now = monotonic_us();
    }
    // With a spin window, sleep only until the window before the next send opens; the loop
    // then spins to it. Other events (a queue departure into the delay stage) need no spin.
    const uint64_t spin_from = next_send > spin_us_ ? next_send - spin_us_ : 0;
    const uint64_t wake_at = std::min({spin_from, next_link, next_stats_us});
    loop.poll_us(wake_at > now ? wake_at - now : 0);
    last_wake_us = monotonic_us();
    loop.dispatch();
    if (spin_us_ > 0) {
      now = monotonic_us();
      // Bring the queues up to now first: a departure due already may schedule the send.
      for (Direction* d : {&a2b_, &b2a_}) {
        d->link->advance(now, d->ready);
        send_due(*d);
      }
      next_send = std::min(a2b_.link->next_send_us(), b2a_.link->next_send_us());
      if (next_send > now && next_send <= now + spin_us_) {
        // Yielding lets another real-time emulator on this CPU (runs side by side) take its
        // own send meanwhile: SCHED_FIFO does not slice time between equal priorities.
        while (monotonic_us() < next_send) ::sched_yield();
        // A delay stage's release is already decided: send it before reading what came during
        // the spin (reading a burst first made it late). Then queue those frames, whose arrival
        // came before the queue's next opportunity, before the queue moves on.
        now = monotonic_us();
        for (Direction* d : {&a2b_, &b2a_}) {
          d->link->release_due(now, d->ready);
          send_due(*d);
        }
        loop.poll_us(0);
        loop.dispatch();
      }
    }
    now = monotonic_us();
    for (Direction* d : {&a2b_, &b2a_}) {
      d->link->advance(now, d->ready);
      send_due(*d);
      read_again_if_room(*d, now);
    }
    if (now >= next_stats_us) {
      write_stats(false);
      next_stats_us = now + kStatsIntervalUs;
    }
  }

  // Bring the logs up to the moment we stop, send what is due, and flush everything.
  const uint64_t now = monotonic_us();
  end_ms_ = now / 1000;
  for (Direction* d : {&a2b_, &b2a_}) {
    d->link->advance(now, d->ready);
    send_due(*d);
    d->log->flush();
    d->lateness->flush();
    if (d->queue_log) d->queue_log->flush();
  }
  for (Direction* d : {&a2b_, &b2a_}) read_again_if_room(*d, now);  // closes an unread spell
  loop_ = nullptr;
  write_stats(true);
}

}  // namespace netrepro
