// Unit tests for ECN threshold marking (`ecn:k=K,packets=N`) and the per-packet queue log, on
// a fake clock like link_test's CoDel tests. Frames are real IPv4 headers; every checksum is
// checked by recomputing it from scratch here, independently of the emulator's incremental
// update. Expected backlogs, marks and times are worked out by hand in each test.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "drop_observer.hh"
#include "ecn_field.hh"
#include "opportunity_schedule.hh"
#include "options.hh"
#include "queue_log.hh"
#include "queue_spec.hh"
#include "trace_queue.hh"

using namespace netrepro;

namespace {

constexpr uint64_t kMs = 1000;
constexpr uint8_t kNotEct = 0, kEct1 = 1, kEct0 = 2, kCe = 3;

// The IPv4 header checksum from scratch: the one's-complement of the one's-complement sum of
// the header's 16-bit words, the checksum field counted as zero.
uint16_t recomputed_checksum(const std::string& frame) {
  const size_t ihl = (static_cast<unsigned char>(frame[14]) & 0x0F) * 4u;
  uint32_t sum = 0;
  for (size_t i = 14; i < 14 + ihl; i += 2) {
    if (i == 24) continue;
    sum += (static_cast<unsigned char>(frame[i]) << 8) | static_cast<unsigned char>(frame[i + 1]);
  }
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<uint16_t>(~sum & 0xFFFF);
}

uint16_t stored_checksum(const std::string& frame) {
  return static_cast<uint16_t>((static_cast<unsigned char>(frame[24]) << 8) |
                               static_cast<unsigned char>(frame[25]));
}

uint8_t tos_of(const std::string& frame) { return static_cast<unsigned char>(frame[15]); }

// An Ethernet frame with an IPv4 header (TOS `tos`, `ihl` words, IP total length `ip_length`)
// and a correct header checksum; `salt` varies the identification and addresses.
std::string ipv4_frame(uint8_t tos, uint16_t ip_length = 1500, uint8_t ihl = 5, uint32_t salt = 7) {
  std::string f(14 + ip_length, '\0');
  f[12] = 0x08;
  f[13] = 0x00;
  f[14] = static_cast<char>(0x40 | ihl);
  f[15] = static_cast<char>(tos);
  f[16] = static_cast<char>(ip_length >> 8);
  f[17] = static_cast<char>(ip_length & 0xFF);
  f[18] = static_cast<char>(salt >> 8);
  f[19] = static_cast<char>(salt);
  f[22] = 64;  // TTL
  f[23] = 17;  // UDP
  for (int i = 0; i < 4; ++i) {
    f[26 + i] = static_cast<char>(10 + i + salt);
    f[30 + i] = static_cast<char>(200 - i + (salt >> 3));
  }
  for (size_t i = 34; i < 14u + ihl * 4u; ++i) f[i] = static_cast<char>(i * 31 + salt);  // options
  const uint16_t c = recomputed_checksum(f);
  f[24] = static_cast<char>(c >> 8);
  f[25] = static_cast<char>(c & 0xFF);
  return f;
}

Packet ip_packet(uint8_t tos, uint32_t size = 1504) {
  Packet p;
  p.frame = ipv4_frame(tos, static_cast<uint16_t>(size - 4));
  p.size = size;
  return p;
}

TraceQueue ecn_queue(const std::string& spec, std::vector<uint64_t> trace = {1}) {
  return TraceQueue(OpportunitySchedule::from_trace(std::move(trace), false, 0),
                    QueueSpec::parse(spec), nullptr);
}

class RecordingDrops : public DropObserver {
 public:
  struct Drop {
    uint64_t time_us;
    uint32_t backlog;
    Ecn ecn;
    bool at_dequeue;
  };
  void dropped(const Packet& p, uint64_t t, bool at_dequeue) override {
    drops.push_back({t, p.backlog, p.ecn_in, at_dequeue});
  }
  std::vector<Drop> drops;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

// --- The queue spec ----------------------------------------------------------------------------

TEST(EcnQueueSpec, ParsesBothKeysInEitherOrder) {
  const QueueSpec q = QueueSpec::parse("ecn:k=20,packets=425");
  EXPECT_EQ(q.kind, QueueSpec::Kind::Ecn);
  EXPECT_EQ(q.ecn_threshold, 20u);
  EXPECT_EQ(q.packet_limit, 425u);
  EXPECT_EQ(q.byte_limit, 0u);
  EXPECT_EQ(q.describe(), "ecn [k=20, packets=425]");
  EXPECT_EQ(QueueSpec::parse("ecn:packets=10,k=3").ecn_threshold, 3u);
  EXPECT_NO_THROW(QueueSpec::parse("ecn:k=1,packets=3"));  // the smallest that can mark
  // Drop-tail at N, as droptail:packets=N: the packets already waiting are what counts.
  EXPECT_TRUE(q.accepts(424, 0, 1504));
  EXPECT_FALSE(q.accepts(425, 0, 1504));
  EXPECT_FALSE(q.marks(20));
  EXPECT_TRUE(q.marks(21));
  EXPECT_FALSE(QueueSpec::parse("droptail:packets=425").marks(1000));
}

TEST(EcnQueueSpec, RejectsIncompleteOrMeaninglessForms) {
  for (const char* bad :
       {"ecn", "ecn:", "ecn:k=20", "ecn:packets=425", "ecn:k=0,packets=10", "ecn:k=20,packets=21",
        "ecn:k=20,packets=20", "ecn:k=30,packets=20", "ecn:k=2,packets=4,bytes=9000",
        "ecn:k=2,k=3,packets=9", "ecn:k=1.5,packets=9", "ecn:k=2,packets=9,", "ecn:K=2,packets=9",
        "ecn:threshold=2,packets=9"}) {
    EXPECT_THROW(QueueSpec::parse(bad), QueueSpecError) << bad;
  }
  try {
    QueueSpec::parse("ecn:k=20");
    FAIL();
  } catch (const QueueSpecError& e) {
    EXPECT_NE(std::string(e.what()).find("needs both k=K"), std::string::npos) << e.what();
  }
  try {
    QueueSpec::parse("ecn:k=20,packets=21");
    FAIL();
  } catch (const QueueSpecError& e) {
    EXPECT_NE(std::string(e.what()).find("at most packets - 2"), std::string::npos) << e.what();
  }
}

// --- The ECN field and the checksum ------------------------------------------------------------

TEST(EcnField, ReadsTheCodepointOfIpv4FramesOnly) {
  EXPECT_EQ(ecn_of(ipv4_frame(0x00)), Ecn::NotEct);
  EXPECT_EQ(ecn_of(ipv4_frame(0x01)), Ecn::Ect1);
  EXPECT_EQ(ecn_of(ipv4_frame(0xB8 | 0x02)), Ecn::Ect0);  // DSCP EF beside ECT(0)
  EXPECT_EQ(ecn_of(ipv4_frame(0x03)), Ecn::Ce);
  std::string arp = ipv4_frame(0x02);
  arp[12] = 0x08;
  arp[13] = 0x06;
  EXPECT_EQ(ecn_of(arp), Ecn::NotEct);
  std::string v6 = ipv4_frame(0x02);
  v6[14] = 0x65;  // version 6
  EXPECT_EQ(ecn_of(v6), Ecn::NotEct);
  std::string short_ihl = ipv4_frame(0x02);
  short_ihl[14] = 0x44;  // a 16-byte header cannot be
  EXPECT_EQ(ecn_of(short_ihl), Ecn::NotEct);
  EXPECT_EQ(ecn_of(ipv4_frame(0x02).substr(0, 33)), Ecn::NotEct);  // truncated header
  std::string options_past_end = ipv4_frame(0x02, 20);
  options_past_end[14] = 0x46;  // says 24 bytes of header; the frame holds 20
  EXPECT_EQ(ecn_of(options_past_end), Ecn::NotEct);
  EXPECT_EQ(ecn_of(ipv4_frame(0x02, 1500, 6)), Ecn::Ect0);  // with options
}

TEST(EcnField, MarkingSetsCeAndKeepsTheChecksumValid) {
  // Every DSCP value with both ECT codepoints, with and without options, over varied headers:
  // the incremental update must equal a recomputation from scratch, and only the ECN bits move.
  std::mt19937 random(1624);
  int checked = 0;
  for (unsigned dscp = 0; dscp < 64; ++dscp) {
    for (uint8_t ect : {kEct1, kEct0}) {
      for (uint8_t ihl : {5, 6, 15}) {
        const uint8_t tos = static_cast<uint8_t>(dscp << 2 | ect);
        const std::string before = ipv4_frame(tos, 1500, ihl, random());
        ASSERT_EQ(stored_checksum(before), recomputed_checksum(before));
        std::string after = before;
        mark_ce(after);
        EXPECT_EQ(ecn_of(after), Ecn::Ce);
        EXPECT_EQ(tos_of(after), (dscp << 2) | kCe);
        EXPECT_EQ(stored_checksum(after), recomputed_checksum(after)) << "tos " << int(tos);
        for (size_t i = 0; i < before.size(); ++i) {
          if (i != 15 && i != 24 && i != 25) {
            ASSERT_EQ(before[i], after[i]) << i;
          }
        }
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 64 * 2 * 3);
}

TEST(EcnField, ChecksumEdgeWhereTheSumWrapsToZero) {
  // Stored checksums near 0x0000 and near 0xFFFF exercise the end-around carry of the
  // one's-complement sum: search salts until both kinds have been marked and checked.
  bool saw_low = false, saw_high = false;
  for (uint32_t salt = 0; salt < 200000 && !(saw_low && saw_high); ++salt) {
    const std::string before = ipv4_frame(kEct0, 1500, 5, salt);
    const uint16_t c = stored_checksum(before);
    if (c > 3 && c < 0xFFFC) continue;
    (c <= 3 ? saw_low : saw_high) = true;
    std::string after = before;
    mark_ce(after);
    EXPECT_EQ(stored_checksum(after), recomputed_checksum(after)) << "salt " << salt;
  }
  EXPECT_TRUE(saw_low);
  EXPECT_TRUE(saw_high);
}

// --- The queue, on a fake clock -----------------------------------------------------------------

TEST(EcnQueue, MarksExactlyTheEctPacketsArrivingAboveK) {
  // ecn:k=2,packets=6, one opportunity per ms, nothing served before 1 ms. A burst at 0: packet
  // i finds i packets waiting. Backlogs 0, 1, 2 (= K) are not marked; 3, 4, 5 are, if ECT;
  // backlog 6 = N is dropped. ECN fields in: ECT(0), Not-ECT, ECT(1), Not-ECT, ECT(0), CE,
  // ECT(0), ECT(1).
  TraceQueue q = ecn_queue("ecn:k=2,packets=6");
  RecordingDrops drops;
  q.observe_drops(&drops);
  const std::vector<uint8_t> in = {kEct0, kNotEct, kEct1, kNotEct, kEct0, kCe, kEct0, kEct1};
  std::vector<Departure> out;
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(q.enqueue(ip_packet(in[i]), 0, out), i < 6) << i;
  }
  q.advance(10 * kMs, out);
  ASSERT_EQ(out.size(), 6u);
  const std::vector<uint8_t> expected_out = {kEct0, kNotEct, kEct1, kNotEct, kCe, kCe};
  for (size_t i = 0; i < out.size(); ++i) {
    const Packet& p = out[i].packet;
    EXPECT_EQ(p.backlog, i) << i;
    EXPECT_EQ(tos_of(p.frame) & 3, expected_out[i]) << i;
    EXPECT_EQ(static_cast<uint8_t>(p.ecn_in), in[i]) << i;
    EXPECT_EQ(static_cast<uint8_t>(p.ecn_out), expected_out[i]) << i;
    EXPECT_EQ(stored_checksum(p.frame), recomputed_checksum(p.frame)) << i;
    EXPECT_EQ(p.departure_us, (i + 1) * kMs) << i;  // one full packet per opportunity
  }
  const TraceQueueCounters& c = q.counters();
  EXPECT_EQ(c.ecn_marks, 1u);  // packet 4 only: packet 5 arrived CE, 3 was Not-ECT
  EXPECT_EQ(c.arrivals_ect0, 3u);
  EXPECT_EQ(c.arrivals_ect1, 2u);
  EXPECT_EQ(c.arrivals_not_ect, 2u);
  EXPECT_EQ(c.arrivals_ce, 1u);
  EXPECT_EQ(c.drops, 2u);  // only at overflow
  EXPECT_EQ(c.drops_ecn_capable, 2u);
  ASSERT_EQ(drops.drops.size(), 2u);
  EXPECT_EQ(drops.drops[0].backlog, 6u);
  EXPECT_EQ(drops.drops[0].ecn, Ecn::Ect0);
  EXPECT_FALSE(drops.drops[0].at_dequeue);
  EXPECT_EQ(drops.drops[1].ecn, Ecn::Ect1);
}

TEST(EcnQueue, TheBoundaryIsStrictlyAboveK) {
  // For several K, an ECT(0) packet arriving to exactly K waiting packets is not marked and one
  // arriving to K + 1 is; Not-ECT fillers never are, however deep the queue.
  for (uint64_t k : {1u, 2u, 5u, 20u}) {
    TraceQueue q = ecn_queue("ecn:k=" + std::to_string(k) + ",packets=" + std::to_string(k + 40));
    std::vector<Departure> out;
    for (uint64_t i = 0; i < k; ++i) ASSERT_TRUE(q.enqueue(ip_packet(kNotEct), 0, out));
    ASSERT_TRUE(q.enqueue(ip_packet(kEct0), 0, out));  // backlog k
    ASSERT_TRUE(q.enqueue(ip_packet(kEct0), 0, out));  // backlog k + 1
    for (int i = 0; i < 30; ++i) ASSERT_TRUE(q.enqueue(ip_packet(kNotEct), 0, out));
    q.advance(1000 * kMs, out);
    ASSERT_EQ(out.size(), k + 32);
    EXPECT_EQ(tos_of(out[k].packet.frame) & 3, kEct0) << "k=" << k;
    EXPECT_EQ(tos_of(out[k + 1].packet.frame) & 3, kCe) << "k=" << k;
    for (size_t i = 0; i < out.size(); ++i) {
      if (i != k && i != k + 1) {
        EXPECT_EQ(tos_of(out[i].packet.frame) & 3, kNotEct) << i;
      }
    }
    EXPECT_EQ(q.counters().ecn_marks, 1u);
    EXPECT_EQ(q.counters().drops, 0u);
  }
}

TEST(EcnQueue, BacklogFallsAsPacketsDepartAndIgnoresThePacketInTransit) {
  // ecn:k=1,packets=10, one opportunity per ms. Three Not-ECT packets at 0 leave at 1, 2, 3 ms.
  // At 1.5 ms one has left and two wait: an ECT(0) arrival is marked (2 > 1), leaving at 4 ms.
  // At 3.5 ms only that one waits: an ECT(0) arrival is not (1 = K); it leaves at 5 ms. A
  // 3008-byte ECT(1) packet at 5.2 ms finds the queue empty and is half carried at 6 ms: in
  // transit from then until 7 ms, it is not counted, so ECT(1) at 6.5 ms finds 0 waiting and
  // ECT(0) at 6.6 ms finds 1 (not marked; counting the one in transit would have made it 2).
  TraceQueue q = ecn_queue("ecn:k=1,packets=10");
  std::vector<Departure> out;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(q.enqueue(ip_packet(kNotEct), 0, out));
  ASSERT_TRUE(q.enqueue(ip_packet(kEct0), 1'500, out));
  ASSERT_TRUE(q.enqueue(ip_packet(kEct0), 3'500, out));
  Packet big = ip_packet(kEct1);
  big.size = 3008;
  ASSERT_TRUE(q.enqueue(big, 5'200, out));
  ASSERT_TRUE(q.enqueue(ip_packet(kEct1), 6'500, out));
  ASSERT_TRUE(q.enqueue(ip_packet(kEct0), 6'600, out));
  EXPECT_EQ(q.queued_packets(), 3u);  // two waiting, one in transit
  q.advance(20 * kMs, out);
  ASSERT_EQ(out.size(), 8u);
  const std::vector<uint32_t> backlog = {0, 1, 2, 2, 1, 0, 0, 1};
  const std::vector<uint8_t> ecn = {kNotEct, kNotEct, kNotEct, kCe, kEct0, kEct1, kEct1, kEct0};
  const std::vector<uint64_t> departs_ms = {1, 2, 3, 4, 5, 7, 8, 9};
  for (size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i].packet.backlog, backlog[i]) << i;
    EXPECT_EQ(tos_of(out[i].packet.frame) & 3, ecn[i]) << i;
    EXPECT_EQ(out[i].departure_us, departs_ms[i] * kMs) << i;
    EXPECT_EQ(out[i].packet.departure_us, out[i].departure_us) << i;
  }
  EXPECT_EQ(q.counters().ecn_marks, 1u);
}

TEST(EcnQueue, OtherQueuesReadButNeverMarkTheEcnField) {
  for (const char* spec : {"infinite", "droptail:packets=100", "codel"}) {
    TraceQueue q = ecn_queue(spec);
    std::vector<Departure> out;
    for (int i = 0; i < 50; ++i) ASSERT_TRUE(q.enqueue(ip_packet(i % 2 ? kEct0 : kEct1), 0, out));
    q.advance(60 * kMs, out);
    ASSERT_EQ(out.size(), 50u) << spec;
    for (size_t i = 0; i < out.size(); ++i) {
      EXPECT_EQ(out[i].packet.ecn_out, out[i].packet.ecn_in) << spec;
      EXPECT_EQ(out[i].packet.backlog, i) << spec;
    }
    EXPECT_EQ(q.counters().ecn_marks, 0u);
    EXPECT_EQ(q.counters().arrivals_ect0, 25u);
    EXPECT_EQ(q.counters().arrivals_ect1, 25u);
  }
}

TEST(EcnQueue, CodelDropsReachTheObserverAtDequeue) {
  // The burst of link_test's CoDel test: the first drop is packet 104 at 105 ms.
  TraceQueue q = ecn_queue("codel");
  RecordingDrops drops;
  q.observe_drops(&drops);
  std::vector<Departure> out;
  for (int i = 0; i < 300; ++i) ASSERT_TRUE(q.enqueue(ip_packet(kEct0), 0, out));
  q.advance(200 * kMs, out);
  ASSERT_GE(drops.drops.size(), 1u);
  EXPECT_EQ(drops.drops[0].time_us, 105 * kMs);
  EXPECT_EQ(drops.drops[0].backlog, 104u);
  EXPECT_TRUE(drops.drops[0].at_dequeue);
  EXPECT_EQ(q.counters().drops_ecn_capable, drops.drops.size());
}

// --- The queue log -------------------------------------------------------------------------------

TEST(QueueLog, WritesOneLinePerPacketAfterTheBase) {
  char name[] = "/tmp/ecn_queue_test_log_XXXXXX";
  const int fd = mkstemp(name);
  ASSERT_GE(fd, 0);
  close(fd);
  {
    QueueLog log(name);
    log.start({"netrepro-link queue log", "base timestamp: 7"}, 7'000);
    Packet sent = ip_packet(kEct0);
    sent.arrival_us = 7'250;
    sent.backlog = 21;
    sent.ecn_in = Ecn::Ect0;
    sent.ecn_out = Ecn::Ce;
    sent.departure_us = 9'770;
    log.sent(sent, 29'770, 29'801);
    Packet refused = ip_packet(kNotEct);
    refused.arrival_us = 8'000;
    refused.backlog = 425;
    refused.size = 52;
    log.dropped(refused, 8'000, false);
    refused.ecn_in = Ecn::Ect1;
    log.dropped(refused, 12'345, true);
    log.flush();
  }
  const std::string text = read_file(name);
  unlink(name);
  const std::string header =
      "# netrepro-link queue log\n# base timestamp: 7\n"
      "# times: microseconds after the base timestamp; ECN: 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE\n"
      "# backlog: packets waiting in the queue at the arrival, the arriving one and the one in "
      "transit not counted\n"
      "# format: - ARRIVAL BACKLOG SIZE ECN_IN ECN_OUT DEPARTURE RELEASE SENT\n"
      "# format: d ARRIVAL BACKLOG SIZE ECN_IN\n"
      "# format: D ARRIVAL BACKLOG SIZE ECN_IN DROPPED\n";
  EXPECT_EQ(text, header + "- 250 21 1504 2 3 2770 22770 22801\nd 1000 425 52 0\n"
                           "D 1000 425 52 1 5345\n");
}

TEST(QueueLog, IsAskedForPerDirection) {
  const std::vector<std::string> base = {"netrepro-link", "--iface-a", "a0", "--iface-b", "b0",
                                         "--a2b-rate-mbps", "100", "--b2a-rate-mbps", "100",
                                         "--a2b-log", "a.log", "--b2a-log", "b.log",
                                         "--stats", "s.json"};
  const Options plain = Options::parse(base);
  EXPECT_EQ(plain.a2b.queue_log, "");
  EXPECT_EQ(plain.b2a.queue_log, "");
  std::vector<std::string> args = base;
  args.push_back("--a2b-queue-log=data-queue.log");
  args.push_back("--a2b-queue=ecn:k=20,packets=425");
  const Options asked = Options::parse(args);
  EXPECT_EQ(asked.a2b.queue_log, "data-queue.log");
  EXPECT_EQ(asked.b2a.queue_log, "");
  EXPECT_EQ(asked.a2b.queue, "ecn:k=20,packets=425");
}
