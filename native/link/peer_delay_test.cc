// Unit tests for a fixed delay per far host: the `IP=MS,...` list (PeerDelays), the delay stage
// with one FIFO line per delay value (DelayStage), the stage inside a direction in both orders,
// and the command-line flags. Frames carry real Ethernet and IPv4 headers; every expected time
// is worked out by hand in the test.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "delay_line.hh"
#include "delay_stage.hh"
#include "link_direction.hh"
#include "opportunity_schedule.hh"
#include "options.hh"
#include "peer_delays.hh"
#include "queue_spec.hh"
#include "trace_queue.hh"

using namespace netrepro;

namespace {

constexpr uint64_t kMs = 1000;

uint32_t ip(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  return (uint32_t{a} << 24) | (uint32_t{b} << 16) | (uint32_t{c} << 8) | d;
}

void put_be32(std::string& f, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) f[at + i] = static_cast<char>((v >> (24 - 8 * i)) & 0xFF);
}

// An Ethernet frame carrying a 100-byte IPv4 packet from `src` to `dst`; `tag` goes in the
// payload so tests can tell packets apart.
std::string ipv4_frame(uint32_t src, uint32_t dst, const std::string& tag = "") {
  std::string f(14 + 100, '\0');
  f[12] = 0x08;
  f[13] = 0x00;
  f[14] = 0x45;
  f[17] = 100;
  put_be32(f, 26, src);
  put_be32(f, 30, dst);
  f.replace(14 + 20, tag.size(), tag);
  return f;
}

Packet packet(std::string frame) {
  Packet p;
  p.size = static_cast<uint32_t>(frame.size() - 14 + 4);
  p.frame = std::move(frame);
  return p;
}

Packet from(uint32_t src, const std::string& tag) {
  return packet(ipv4_frame(src, ip(10, 0, 0, 99), tag));
}

// The tag written by ipv4_frame (up to the first NUL of the payload).
std::string tag_of(const Packet& p) { return p.frame.substr(34).c_str(); }

const uint32_t kA = ip(10, 0, 0, 1), kB = ip(10, 0, 0, 2), kC = ip(10, 0, 0, 3),
               kOther = ip(10, 0, 0, 9);

std::vector<std::pair<std::string, uint64_t>> drain(DelayStage& s) {
  std::vector<std::pair<std::string, uint64_t>> out;
  while (!s.empty()) {
    const Release r = s.pop();
    out.emplace_back(tag_of(r.packet), r.release_us);
  }
  return out;
}

using Releases = std::vector<std::pair<std::string, uint64_t>>;

TraceQueue every_ms_queue(LinkEvents* events = nullptr) {
  return TraceQueue(OpportunitySchedule::from_trace({1}, false, 0), QueueSpec::parse("infinite"),
                    events);
}

}  // namespace

// --- The list ------------------------------------------------------------------------------

TEST(PeerDelays, ParsesAddressesAndDelaysInTheOrderGiven) {
  const PeerDelays p = PeerDelays::parse("10.0.0.2=40,192.168.1.254=0,10.0.0.1=999999999",
                                         PeerKey::Destination);
  ASSERT_EQ(p.entries().size(), 3u);
  EXPECT_EQ(p.entries()[0].address, ip(10, 0, 0, 2));
  EXPECT_EQ(p.entries()[0].delay_ms, 40u);
  EXPECT_EQ(p.entries()[1].address, ip(192, 168, 1, 254));
  EXPECT_EQ(p.entries()[1].delay_ms, 0u);
  EXPECT_EQ(p.entries()[2].delay_ms, 999999999u);
  EXPECT_EQ(p.key(), PeerKey::Destination);
  EXPECT_EQ(p.describe(), "10.0.0.2=40,192.168.1.254=0,10.0.0.1=999999999");
  EXPECT_EQ(p.stats_key(), "delay_by_dst_ms");
  EXPECT_EQ(PeerDelays::parse("10.0.0.2=1", PeerKey::Source).stats_key(), "delay_by_src_ms");
  EXPECT_TRUE(PeerDelays().empty());
}

TEST(PeerDelays, RefusesEveryMalformedList) {
  auto error = [](const std::string& text) -> std::string {
    try {
      PeerDelays::parse(text, PeerKey::Source);
    } catch (const PeerDelaysError& e) {
      return e.what();
    }
    return "accepted";
  };
  for (const char* bad_ip : {"10.0.0=5", "10.0.0.256=5", "10.0.0.1.1=5", "010.0.0.1=5",
                             "0x0a.0.0.1=5", "host=5", "=5", "::1=5", " 10.0.0.1=5"}) {
    EXPECT_NE(error(bad_ip).find("is not an IPv4 address"), std::string::npos) << bad_ip;
  }
  for (const char* bad_ms : {"10.0.0.1=-5", "10.0.0.1=2.5", "10.0.0.1=", "10.0.0.1=1e3",
                             "10.0.0.1=+5", "10.0.0.1=5 ", "10.0.0.1=1000000000",
                             "10.0.0.1=99999999999999999999999"}) {
    EXPECT_NE(error(bad_ms).find("is not a whole number of ms in 0..999999999"),
              std::string::npos)
        << bad_ms;
  }
  EXPECT_EQ(error("10.0.0.1"), "'10.0.0.1' is not IP=MS (write IP=MS[,IP=MS...], e.g. "
                               "10.0.0.2=40,10.0.0.3=53)");
  for (const char* empty_entry : {"", ",10.0.0.1=5", "10.0.0.1=5,", "10.0.0.1=5,,10.0.0.2=5"}) {
    EXPECT_NE(error(empty_entry).find("an empty entry"), std::string::npos) << empty_entry;
  }
  EXPECT_EQ(error("10.0.0.1=5,10.0.0.2=6,10.0.0.1=5"), "10.0.0.1 is listed twice");
  std::string many;
  for (int i = 0; i < 257; ++i) {
    many += (i ? "," : "") + std::string("10.0.") + std::to_string(i / 256) + "." +
            std::to_string(i % 256) + "=1";
  }
  EXPECT_EQ(error(many), "more than 256 addresses");
  const std::string most = many.substr(0, many.rfind(','));  // 256 entries
  EXPECT_EQ(PeerDelays::parse(most, PeerKey::Source).entries().size(), 256u);
}

// --- The stage -----------------------------------------------------------------------------

TEST(DelayStage, WithoutAListIsTheDelayLineItWraps) {
  DelayStage s(DelayLine(20 * kMs));
  s.push(from(kA, "a"), 1000);
  s.push(from(kB, "b"), 1000);
  s.push(packet("arp"), 4000);
  EXPECT_EQ(s.size(), 3u);
  EXPECT_EQ(s.next_release_us(), 21000u);
  const Release a = s.pop();
  EXPECT_EQ(tag_of(a.packet), "a");
  EXPECT_EQ(a.release_us, 21000u);
  EXPECT_EQ(tag_of(s.pop().packet), "b");
  EXPECT_EQ(s.pop().release_us, 24000u);
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.next_release_us(), DelayLine::kNever);
  EXPECT_THROW(s.pop(), std::logic_error);
}

TEST(DelayStage, EachPacketLeavesAtItsEntryPlusItsOwnDelay) {
  // A: 40 ms, B: 10 ms, the rest 20 ms. A at 0 leaves at 40; B at 5 overtakes it (15); the
  // unlisted one at 6 leaves at 26, between them; a second B at 31 leaves at 41, after A.
  DelayStage s(20 * kMs, PeerDelays::parse("10.0.0.1=40,10.0.0.2=10", PeerKey::Source));
  s.push(from(kA, "a1"), 0);
  EXPECT_EQ(s.next_release_us(), 40 * kMs);
  s.push(from(kB, "b1"), 5 * kMs);
  EXPECT_EQ(s.next_release_us(), 15 * kMs);
  s.push(from(kOther, "o1"), 6 * kMs);
  s.push(from(kB, "b2"), 31 * kMs);
  EXPECT_EQ(s.size(), 4u);
  EXPECT_EQ(drain(s), (Releases{{"b1", 15 * kMs}, {"o1", 26 * kMs}, {"a1", 40 * kMs},
                                {"b2", 41 * kMs}}));
}

TEST(DelayStage, PacketsWithOneDelayValueStayInOrder) {
  // A and C share 30 ms: one FIFO line, whatever the address, interleaved with B's 5 ms.
  DelayStage s(0, PeerDelays::parse("10.0.0.1=30,10.0.0.2=5,10.0.0.3=30", PeerKey::Source));
  s.push(from(kA, "a1"), 100);
  s.push(from(kC, "c1"), 100);
  s.push(from(kB, "b1"), 200);
  s.push(from(kA, "a2"), 300);
  s.push(from(kB, "b2"), 300);
  s.push(from(kC, "c2"), 400);
  EXPECT_EQ(drain(s), (Releases{{"b1", 5200}, {"b2", 5300}, {"a1", 30100}, {"c1", 30100},
                                {"a2", 30300}, {"c2", 30400}}));
}

TEST(DelayStage, AListedAddressWithTheDefaultDelaySharesTheDefaultLine) {
  // A's 20 ms is the default: A and an unlisted sender entering at the same instant leave in
  // the order they entered, as one FIFO.
  DelayStage s(20 * kMs, PeerDelays::parse("10.0.0.1=20,10.0.0.2=1", PeerKey::Source));
  s.push(from(kOther, "o1"), 0);
  s.push(from(kA, "a1"), 0);
  s.push(from(kOther, "o2"), 0);
  EXPECT_EQ(drain(s), (Releases{{"o1", 20 * kMs}, {"a1", 20 * kMs}, {"o2", 20 * kMs}}));
}

TEST(DelayStage, OfTwoPacketsDueAtOnceTheOneThatEnteredFirstLeavesFirst) {
  // A (30 ms) at 0 and B (10 ms) at 20 ms are both due at 30 ms: A entered first.
  DelayStage s(0, PeerDelays::parse("10.0.0.2=10,10.0.0.1=30", PeerKey::Source));
  s.push(from(kA, "a"), 0);
  s.push(from(kB, "b"), 20 * kMs);
  EXPECT_EQ(drain(s), (Releases{{"a", 30 * kMs}, {"b", 30 * kMs}}));
}

TEST(DelayStage, FramesWithoutAnIpv4SourceGetTheDefault) {
  // A is listed at 50 ms; none of these frames has A as an IPv4 source that can be read, even
  // where A's bytes sit at the IPv4 source offset.
  DelayStage s(7 * kMs, PeerDelays::parse("10.0.0.1=50", PeerKey::Source));
  std::string arp = ipv4_frame(kA, kOther);
  arp[12] = 0x08, arp[13] = 0x06;
  std::string ipv6 = ipv4_frame(kA, kOther);
  ipv6[12] = static_cast<char>(0x86), ipv6[13] = static_cast<char>(0xDD);
  std::string version6 = ipv4_frame(kA, kOther);
  version6[14] = 0x65;
  std::string short_header = ipv4_frame(kA, kOther);
  short_header[14] = 0x44;  // IHL 4: not a valid IPv4 header
  std::string vlan = ipv4_frame(kA, kOther);
  vlan[12] = static_cast<char>(0x81), vlan[13] = 0x00;  // an 802.1Q tag: not untagged IPv4
  const std::string truncated = ipv4_frame(kA, kOther).substr(0, 14 + 19);
  for (const std::string& f : {arp, ipv6, version6, short_header, vlan, truncated,
                               std::string("x"), std::string()}) {
    EXPECT_EQ(s.delay_us_for(f), 7 * kMs) << f.size();
  }
  EXPECT_EQ(s.delay_us_for(ipv4_frame(kA, kOther)), 50 * kMs);
  EXPECT_EQ(s.delay_us_for(ipv4_frame(kOther, kA)), 7 * kMs);  // A as destination: unlisted
  s.push(packet(arp), 0);
  s.push(from(kA, "a"), 0);
  s.push(packet(truncated), 1);
  EXPECT_EQ(s.pop().release_us, 7 * kMs);
  EXPECT_EQ(s.pop().release_us, 7 * kMs + 1);
  EXPECT_EQ(tag_of(s.pop().packet), "a");
}

TEST(DelayStage, KeyedByDestinationReadsTheDestination) {
  DelayStage s(2 * kMs, PeerDelays::parse("10.0.0.1=11,10.0.0.2=22", PeerKey::Destination));
  EXPECT_EQ(s.delay_us_for(ipv4_frame(kOther, kA)), 11 * kMs);
  EXPECT_EQ(s.delay_us_for(ipv4_frame(kOther, kB)), 22 * kMs);
  EXPECT_EQ(s.delay_us_for(ipv4_frame(kA, kOther)), 2 * kMs);  // A as source: unlisted
  EXPECT_EQ(s.delay_us_for(ipv4_frame(kA, kB)), 22 * kMs);
}

// --- Inside a direction ----------------------------------------------------------------------

TEST(LinkDirection, PerSourceDelayAfterTheQueue) {
  // queue-delay, trace "1", A at 30 ms, B at 10 ms, default 20. A arrives at 0.2 ms and B at
  // 0.3: the queue sends A at 1 ms and B at 2 ms (one 1504-byte packet per opportunity), B
  // then overtakes A: released at 12 ms, A at 31. An unlisted packet at 0.4 leaves the queue at
  // 3 ms and is released at 23.
  LinkDirection d(every_ms_queue(),
                  DelayStage(20 * kMs, PeerDelays::parse("10.0.0.1=30,10.0.0.2=10",
                                                          PeerKey::Source)),
                  StageOrder::QueueThenDelay);
  std::vector<Release> out;
  auto full = [](uint32_t src, const std::string& tag) {
    Packet p = from(src, tag);
    p.size = 1504;
    return p;
  };
  d.arrive(full(kA, "a"), 200, out);
  d.arrive(full(kB, "b"), 300, out);
  d.arrive(full(kOther, "o"), 400, out);
  EXPECT_EQ(d.next_event_us(), 1 * kMs);
  d.advance(11 * kMs, out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(d.next_event_us(), 12 * kMs);
  d.advance(40 * kMs, out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(tag_of(out[0].packet), "b");
  EXPECT_EQ(out[0].release_us, 12 * kMs);
  EXPECT_EQ(out[0].packet.departure_us, 2 * kMs);  // the queue log's DEPARTURE
  EXPECT_EQ(tag_of(out[1].packet), "o");
  EXPECT_EQ(out[1].release_us, 23 * kMs);
  EXPECT_EQ(tag_of(out[2].packet), "a");
  EXPECT_EQ(out[2].release_us, 31 * kMs);
  EXPECT_EQ(d.delay().size(), 0u);
}

namespace {
class Arrivals : public LinkEvents {
 public:
  void arrival(uint64_t t, uint32_t) override { times_us.push_back(t); }
  void drop(uint64_t, uint32_t, uint64_t) override {}
  void opportunity(uint64_t, uint32_t) override {}
  void departure(uint64_t t, uint32_t, uint64_t delay_ms) override {
    departures.emplace_back(t, delay_ms);
  }
  std::vector<uint64_t> times_us;
  std::vector<std::pair<uint64_t, uint64_t>> departures;
};
}  // namespace

TEST(LinkDirection, PerDestinationDelayBeforeTheQueue) {
  // delay-queue (the ack path), trace "1": to A 25 ms, to B 5 ms. To A at 0.5 ms reaches the
  // queue at 25.5 and leaves at 26; to B at 1.5 reaches it at 6.5 and leaves at 7, first. The
  // queue sees them in the order they leave the delay stage, even when the loop wakes late.
  Arrivals ev;
  LinkDirection d(every_ms_queue(&ev),
                  DelayStage(0, PeerDelays::parse("10.0.0.1=25,10.0.0.2=5",
                                                   PeerKey::Destination)),
                  StageOrder::DelayThenQueue);
  std::vector<Release> out;
  d.arrive(packet(ipv4_frame(kOther, kA, "toA")), 500, out);
  d.arrive(packet(ipv4_frame(kOther, kB, "toB")), 1500, out);
  EXPECT_EQ(d.next_event_us(), 6500u);
  d.advance(50 * kMs, out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(tag_of(out[0].packet), "toB");
  EXPECT_EQ(out[0].release_us, 7 * kMs);
  EXPECT_EQ(tag_of(out[1].packet), "toA");
  EXPECT_EQ(out[1].release_us, 26 * kMs);
  EXPECT_EQ(ev.times_us, (std::vector<uint64_t>{6500, 25500}));  // the log's `+` lines
  // The log's queueing delay is in whole ms: 7 - 6 and 26 - 25.
  EXPECT_EQ(ev.departures,
            (std::vector<std::pair<uint64_t, uint64_t>>{{7 * kMs, 1}, {26 * kMs, 1}}));
}

// --- The command line ----------------------------------------------------------------------

namespace {
std::vector<std::string> args_with(std::vector<std::string> extra) {
  std::vector<std::string> args = {"netrepro-link", "--iface-a", "a0", "--iface-b", "b0",
                                   "--a2b-rate-mbps", "10", "--b2a-rate-mbps", "10",
                                   "--a2b-log", "a.log", "--b2a-log", "b.log",
                                   "--stats", "s.json"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

std::string usage_error(const std::vector<std::string>& extra) {
  try {
    Options::parse(args_with(extra));
  } catch (const UsageError& e) {
    return e.what();
  }
  return "accepted";
}
}  // namespace

TEST(Options, DelayByPeerFlags) {
  const Options none = Options::parse(args_with({}));
  EXPECT_TRUE(none.a2b.peer_delays.empty());
  EXPECT_TRUE(none.b2a.peer_delays.empty());
  const Options o = Options::parse(args_with({"--a2b-delay-by-src", "10.0.0.1=80,10.0.0.2=93",
                                              "--b2a-delay-by-dst=10.0.0.1=0"}));
  EXPECT_EQ(o.a2b.peer_delays.describe(), "10.0.0.1=80,10.0.0.2=93");
  EXPECT_EQ(o.a2b.peer_delays.key(), PeerKey::Source);
  EXPECT_EQ(o.b2a.peer_delays.describe(), "10.0.0.1=0");
  EXPECT_EQ(o.b2a.peer_delays.key(), PeerKey::Destination);
  EXPECT_EQ(o.a2b.delay_ms, 0u);  // the default is untouched
}

TEST(Options, DelayByPeerRefusalsNameTheFlag) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--a2b-delay-by-src", "10.0.0.300=5"},
       "--a2b-delay-by-src: '10.0.0.300' in '10.0.0.300=5' is not an IPv4 address"},
      {{"--b2a-delay-by-dst", "10.0.0.1=-5"},
       "--b2a-delay-by-dst: delay '-5' in '10.0.0.1=-5' is not a whole number of ms"},
      {{"--b2a-delay-by-dst", "10.0.0.1=2.5"},
       "--b2a-delay-by-dst: delay '2.5' in '10.0.0.1=2.5' is not a whole number of ms"},
      {{"--a2b-delay-by-src", "10.0.0.1=5,10.0.0.1=6"},
       "--a2b-delay-by-src: 10.0.0.1 is listed twice"},
      {{"--a2b-delay-by-src", "10.0.0.1=5,"}, "--a2b-delay-by-src: an empty entry"},
      {{"--a2b-delay-by-src", "10.0.0.1"}, "--a2b-delay-by-src: '10.0.0.1' is not IP=MS"},
      {{"--a2b-delay-by-src="}, "--a2b-delay-by-src needs a non-empty value"},
      {{"--a2b-delay-by-src"}, "--a2b-delay-by-src needs a value"},
      {{"--a2b-delay-by-src", "10.0.0.1=5", "--a2b-delay-by-src", "10.0.0.2=5"},
       "--a2b-delay-by-src given twice"},
      // Only the far host's address picks a delay: sources a2b, destinations b2a.
      {{"--a2b-delay-by-dst", "10.0.0.1=5"}, "unknown option '--a2b-delay-by-dst'"},
      {{"--b2a-delay-by-src", "10.0.0.1=5"}, "unknown option '--b2a-delay-by-src'"},
  };
  for (const auto& [extra, expected] : cases) {
    const std::string message = usage_error(extra);
    EXPECT_EQ(message.rfind(expected, 0), 0u) << message;
  }
  std::string many;
  for (int i = 0; i < 257; ++i) {
    many += (i ? ",10.1." : "10.1.") + std::to_string(i / 256) + "." + std::to_string(i % 256) +
            "=1";
  }
  EXPECT_EQ(usage_error({"--a2b-delay-by-src", many}),
            "--a2b-delay-by-src: more than 256 addresses");
}
