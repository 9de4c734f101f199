// Unit tests for native/grump. Expected windows are worked out by hand from
// each controller's rule (see the comments next to each step).
#include <endian.h>
#include <gtest/gtest.h>
#include <poll.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "aimd_controller.hh"
#include "contest_message.hh"
#include "controller_registry.hh"
#include "dasjoshma_controller.hh"
#include "datagrump_receiver.hh"
#include "datagrump_sender.hh"
#include "delay_trigger_controller.hh"
#include "fixed_window_controller.hh"
#include "johnnybameesh_controller.hh"
#include "rtt_summary.hh"
#include "sheen_controller.hh"

using namespace netrepro;
using namespace netrepro::grump;

namespace {

ControllerOptions with_window(unsigned int w) {
  ControllerOptions o;
  o.set("window", w);
  return o;
}

std::string field_bytes(const std::string& wire, size_t index) {
  return wire.substr(index * 8, 8);
}

std::string be_bytes(std::initializer_list<unsigned char> bytes) {
  return std::string(bytes.begin(), bytes.end());
}

// Replaces field `index` of a serialized header with `value`.
std::string with_field(std::string wire, size_t index, uint64_t value) {
  const uint64_t be = htobe64(value);
  std::memcpy(&wire[index * 8], &be, 8);
  return wire;
}

}  // namespace

// ---------------------------------------------------------------- wire format

TEST(ContestMessage, DataDatagramIs1472BytesAndRoundTrips) {
  const ContestMessage m = ContestMessage::data(7, 1700000000123ULL);
  const std::string wire = m.serialize();
  EXPECT_EQ(wire.size(), 1472u);  // 1500-byte IP packet - 20 IP - 8 UDP
  const ContestMessage back = ContestMessage::parse(wire);
  EXPECT_FALSE(back.is_ack());
  EXPECT_EQ(back.header().sequence_number, 7u);
  EXPECT_EQ(back.header().send_timestamp, 1700000000123ULL);
  EXPECT_EQ(back.header().ack_sequence_number, ContestHeader::kUnset);
  EXPECT_EQ(back.payload().size(), 1424u);
}

TEST(ContestMessage, FieldsAreBigEndianInOrder) {
  ContestHeader h;
  h.sequence_number = 0x0102030405060708ULL;
  h.send_timestamp = 1;
  h.ack_sequence_number = 0x1122334455667788ULL;
  h.ack_send_timestamp = 2;
  h.ack_recv_timestamp = 0x100;
  h.ack_payload_length = 1424;  // 0x590
  const std::string wire = ContestMessage(h, "").serialize();
  ASSERT_EQ(wire.size(), 48u);
  EXPECT_EQ(field_bytes(wire, 0), be_bytes({1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(field_bytes(wire, 1), be_bytes({0, 0, 0, 0, 0, 0, 0, 1}));
  EXPECT_EQ(field_bytes(wire, 2), be_bytes({0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88}));
  EXPECT_EQ(field_bytes(wire, 3), be_bytes({0, 0, 0, 0, 0, 0, 0, 2}));
  EXPECT_EQ(field_bytes(wire, 4), be_bytes({0, 0, 0, 0, 0, 0, 1, 0}));
  EXPECT_EQ(field_bytes(wire, 5), be_bytes({0, 0, 0, 0, 0, 0, 0x05, 0x90}));
}

TEST(ContestMessage, UnsetFieldsAreAllOnes) {
  const std::string wire = ContestMessage::data(0, 5).serialize();
  EXPECT_EQ(field_bytes(wire, 2), std::string(8, '\xff'));
  EXPECT_EQ(field_bytes(wire, 5), std::string(8, '\xff'));
}

TEST(ContestMessage, AckCarriesTheAcknowledgedFields) {
  const ContestMessage data = ContestMessage::data(42, 1000);
  const ContestMessage ack = data.make_ack(3, 1025, 1026);
  const ContestMessage back = ContestMessage::parse(ack.serialize());
  ASSERT_TRUE(back.is_ack());
  EXPECT_EQ(back.serialize().size(), 48u);
  EXPECT_EQ(back.header().sequence_number, 3u);
  EXPECT_EQ(back.header().send_timestamp, 1026u);
  EXPECT_EQ(back.header().ack_sequence_number, 42u);
  EXPECT_EQ(back.header().ack_send_timestamp, 1000u);
  EXPECT_EQ(back.header().ack_recv_timestamp, 1025u);
  EXPECT_EQ(back.header().ack_payload_length, 1424u);
}

TEST(ContestMessage, RejectsShortDatagrams) {
  const std::string wire = ContestMessage::data(1, 2).serialize();
  EXPECT_THROW(ContestMessage::parse(""), MalformedDatagram);
  EXPECT_THROW(ContestMessage::parse(wire.substr(0, 47)), MalformedDatagram);
  EXPECT_NO_THROW(ContestMessage::parse(wire.substr(0, 48)));
  try {
    ContestMessage::parse(wire.substr(0, 10));
    FAIL() << "no exception";
  } catch (const MalformedDatagram& e) {
    EXPECT_NE(std::string(e.what()).find("10 bytes"), std::string::npos) << e.what();
  }
}

TEST(ContestMessage, RejectsGarbledDatagrams) {
  const std::string data = ContestMessage::data(1, 2).serialize();
  const std::string ack = ContestMessage::data(1, 2).make_ack(0, 3, 4).serialize();
  // no send timestamp
  EXPECT_THROW(ContestMessage::parse(with_field(data, 1, ContestHeader::kUnset)),
               MalformedDatagram);
  // data datagram with an ack field set
  EXPECT_THROW(ContestMessage::parse(with_field(data, 4, 99)), MalformedDatagram);
  // ack without its receive timestamp
  EXPECT_THROW(ContestMessage::parse(with_field(ack, 4, ContestHeader::kUnset)),
               MalformedDatagram);
  // ack with a payload
  EXPECT_THROW(ContestMessage::parse(ack + "junk"), MalformedDatagram);
}

// ------------------------------------------------------------------- helpers

TEST(RttSummary, LinearInterpolationBetweenRanks) {
  // sorted 10 20 30 40: median rank 1.5 -> 25; p95 rank 2.85 -> 30 + 0.85 * 10
  const RttSummary s = RttSummary::of({40, 10, 30, 20});
  EXPECT_DOUBLE_EQ(*s.min_ms, 10);
  EXPECT_DOUBLE_EQ(*s.median_ms, 25);
  EXPECT_DOUBLE_EQ(*s.p95_ms, 38.5);
  const RttSummary one = RttSummary::of({7});
  EXPECT_DOUBLE_EQ(*one.p95_ms, 7);
  EXPECT_FALSE(RttSummary::of({}).median_ms.has_value());
}

// --------------------------------------------------------------- controllers

TEST(FixedWindow, WindowIsTheOptionWhateverHappens) {
  FixedWindowController c(with_window(10));
  EXPECT_EQ(c.window_size(), 10u);
  c.datagram_was_sent(0, 100, false);
  c.ack_received(0, 100, 120, 5000);  // a 4.9 s RTT changes nothing
  c.datagram_was_sent(1, 5000, true);
  EXPECT_EQ(c.window_size(), 10u);
  EXPECT_EQ(c.timeout_ms(), 1000u);
  EXPECT_EQ(FixedWindowController(ControllerOptions{}).window_size(), 50u);
}

TEST(Aimd, AdditiveIncreaseAndOneCutPerWindow) {
  AimdController c(with_window(1));
  EXPECT_EQ(c.window_size(), 1u);
  c.datagram_was_sent(0, 0, false);
  c.ack_received(0, 0, 20, 40);  // rtt 40: W = 1 + 1/1 = 2
  EXPECT_EQ(c.window_size(), 2u);
  c.datagram_was_sent(1, 40, false);
  c.datagram_was_sent(2, 40, false);
  c.ack_received(1, 40, 60, 80);  // W = 2 + 1/2 = 2.5
  EXPECT_EQ(c.window_size(), 2u);
  c.ack_received(2, 40, 60, 80);  // W = 2.5 + 1/2.5 = 2.9
  EXPECT_EQ(c.window_size(), 2u);
  c.datagram_was_sent(3, 80, false);
  c.datagram_was_sent(4, 80, false);
  c.ack_received(3, 80, 150, 230);  // rtt 150 > 100: W = 2.9 / 2 = 1.45, cut covers seq < 5
  EXPECT_EQ(c.window_size(), 1u);
  c.ack_received(4, 80, 150, 231);  // same window: ignored, W = 1.45
  c.datagram_was_sent(5, 431, true);  // timeout: W = max(1, 0.725) = 1, cut covers seq < 6
  EXPECT_EQ(c.window_size(), 1u);
  c.ack_received(5, 431, 450, 470);  // before the cut: no increase
  EXPECT_EQ(c.window_size(), 1u);
  c.datagram_was_sent(6, 470, false);
  c.ack_received(6, 470, 520, 570);  // rtt exactly 100 is not above: W = 1 + 1 = 2
  EXPECT_EQ(c.window_size(), 2u);
}

TEST(DelayTrigger, GrowsBelowLowShrinksAboveHigh) {
  DelayTriggerController c(with_window(2));
  auto ack = [&](uint64_t rtt) { c.ack_received(0, 1000, 1000, 1000 + rtt); };
  ack(20);  // W = 2 + 1/2 = 2.5
  EXPECT_EQ(c.window_size(), 2u);
  ack(20);  // W = 2.5 + 0.4 = 2.9
  ack(75);  // in the band: hold
  ack(50);  // 50 is not below 50: hold
  ack(100);  // 100 is not above 100: hold
  EXPECT_EQ(c.window_size(), 2u);
  ack(150);  // W = 2.4
  EXPECT_EQ(c.window_size(), 2u);
  ack(150);  // W = 1.9
  EXPECT_EQ(c.window_size(), 1u);
  ack(150);  // 1.4
  ack(150);  // max(1, 0.9) = 1
  ack(20);   // 1 + 1 = 2
  EXPECT_EQ(c.window_size(), 2u);
}

TEST(DasJoshma, TickEstimateAndHigherLowerScale) {
  DasJoshmaController c{ControllerOptions{}};
  EXPECT_EQ(c.window_size(), 0u);
  EXPECT_EQ(c.timeout_ms(), 100u);
  // t=3000: first tick. d = min(recv-send 20, rtt 40) = 20, 1/d = 0.05.
  // recent = max(0/30, 0.05) = 0.05; thr = max(0.2*0.05, 0.05) = 0.05; not higher: lo = 1.
  // window = floor(0.05 * 0.99 * 70) = floor(3.465) = 3. Then this ACK counts: count = 1.
  c.ack_received(0, 2960, 2980, 3000);
  EXPECT_EQ(c.window_size(), 3u);
  c.ack_received(1, 2970, 2990, 3010);  // same tick: count 2
  c.ack_received(2, 2980, 3000, 3020);  // count 3
  c.datagram_was_sent(9, 3025, false);  // 25 ms into the tick: nothing
  EXPECT_EQ(c.window_size(), 3u);
  // t=3030: tick. d = min(10, 30) = 10: recent = max(3/30, 0.1) = 0.1;
  // thr = max(0.8*0.05 + 0.2*0.1, 0.1) = 0.1; not higher: lo = 2.
  // window = floor(0.1 * 0.98 * 70) = floor(6.86) = 6; count = 1.
  c.ack_received(3, 3000, 3010, 3030);
  EXPECT_EQ(c.window_size(), 6u);
  for (uint64_t t = 3040; t <= 3048; ++t) {
    c.ack_received(t, t - 200, t - 100, t);  // 9 more in the tick: count = 10
  }
  EXPECT_EQ(c.window_size(), 6u);
  // A send at t=3060 ends the tick with d = 0 (no bound): recent = 10/30;
  // thr = 0.8*0.1 + 0.2/3 = 0.1466667; recent > thr: hi = 1, lo = 0.
  // window = floor(0.1466667 * 1.01 * 70) = floor(10.369) = 10.
  c.datagram_was_sent(10, 3060, false);
  EXPECT_NEAR(c.throughput_per_ms(), 0.08 + 1.0 / 15, 1e-12);
  EXPECT_EQ(c.window_size(), 10u);
  // t=3095, d = 100: recent = max(0, 0.01) = 0.01; thr = 0.8*0.1466667 + 0.002 = 0.1193333;
  // lower: lo = 1. window = floor(0.1193333 * 0.99 * 70) = floor(8.2698) = 8.
  // The tick restarts at 3090 (aligned to 30 ms), and this ACK makes count 1.
  c.ack_received(11, 2895, 2995, 3095);
  EXPECT_EQ(c.window_size(), 8u);
  c.ack_received(12, 2919, 3019, 3119);  // 29 ms after 3090: same tick, count 2
  EXPECT_EQ(c.window_size(), 8u);
  // t=3120 = 3090 + 30: tick. recent = max(2/30, 0.01) = 0.0666667;
  // thr = 0.8*0.1193333 + 0.2*0.0666667 = 0.1088; lo = 2.
  // window = floor(0.1088 * 0.98 * 70) = floor(7.4637) = 7.
  c.ack_received(13, 2920, 3020, 3120);
  EXPECT_NEAR(c.throughput_per_ms(), 0.1088, 1e-9);
  EXPECT_EQ(c.window_size(), 7u);
  // Three ticks of 30 ACKs each (recent = 1 per ms) end at 3150, 3180, 3210:
  // thr = 0.8*0.1088 + 0.2 = 0.28704, then 0.429632, then 0.5437056; hi = 3.
  // window = floor(0.5437056 * 1.03 * 70) = floor(39.201) = 39 (38 without the scale).
  for (uint64_t tick = 3120; tick < 3210; tick += 30) {
    for (uint64_t t = tick + 1; t <= tick + 30; ++t) {
      c.ack_received(t, t - 200, t - 100, t);
    }
  }
  EXPECT_NEAR(c.throughput_per_ms(), 0.5437056, 1e-9);
  EXPECT_EQ(c.window_size(), 39u);
}

TEST(JohnnybAmeesh, RateEveryTwentyMsWithDelayFloor) {
  JohnnybAmeeshController c{ControllerOptions{}};
  EXPECT_EQ(c.window_size(), 0u);
  EXPECT_EQ(c.timeout_ms(), 100u);
  // First ACK (last update at time 0): d = 20, n = 0: thr = max(1/20, ~0) = 0.05;
  // window = floor(0.05 * 60) = 3.
  c.ack_received(0, 1000, 1020, 1040);
  EXPECT_EQ(c.window_size(), 3u);
  c.ack_received(5, 1010, 1030, 1050);  // 10 ms later: no update
  EXPECT_EQ(c.window_size(), 3u);
  // 20 ms after the update, n = 10 - 0: thr = max(0.05, 0.7*0.05 + 0.35*10/20) = 0.21;
  // window = floor(12.6) = 12.
  c.ack_received(10, 1020, 1040, 1060);
  EXPECT_NEAR(c.throughput_per_ms(), 0.21, 1e-12);
  EXPECT_EQ(c.window_size(), 12u);
  // 40 ms later, n = 1, d = 40: thr = 0.7*0.21 + 0.35/40 = 0.15575; window = floor(9.345) = 9.
  c.ack_received(11, 1040, 1080, 1100);
  EXPECT_EQ(c.window_size(), 9u);
  // d = 0 counts as 1 ms: thr = max(1, ...) = 1; window = 60.
  c.ack_received(12, 1150, 1150, 1200);
  EXPECT_EQ(c.window_size(), 60u);
}

TEST(Sheen, SlowStartDelayEventsAndRecovery) {
  SheenController c{ControllerOptions{}};
  auto ack = [&](uint64_t rtt) { c.ack_received(0, 1000, 1000, 1000 + rtt); };
  EXPECT_EQ(c.window_size(), 13u);
  EXPECT_EQ(c.timeout_ms(), 90u);
  ack(50);
  ack(50);
  ack(89);  // slow start: 14, 15, 16
  EXPECT_EQ(c.window_size(), 16u);
  for (int i = 0; i < 8; ++i) {
    ack(90);  // delay events 1..8 only count
  }
  EXPECT_EQ(c.window_size(), 16u);
  ack(200);  // 9th: ssthresh = 8, W = 11
  EXPECT_DOUBLE_EQ(c.ssthresh(), 8.0);
  EXPECT_EQ(c.window_size(), 11u);
  EXPECT_EQ(c.state(), SheenController::State::kSlowStart);
  ack(10);  // W = 11 > 8: congestion avoidance, W = 11 + 1/11
  EXPECT_EQ(c.state(), SheenController::State::kCongestionAvoidance);
  EXPECT_EQ(c.window_size(), 11u);
  ack(95);  // delay event in CA: counter 1, fast recovery, W unchanged
  EXPECT_EQ(c.state(), SheenController::State::kFastRecovery);
  ack(10);  // W > ssthresh: back to CA, W = 11.0909 + 1/11.0909 = 11.1811
  EXPECT_EQ(c.state(), SheenController::State::kCongestionAvoidance);
  ack(95);  // the counter never reset on good ACKs: 1 -> 2; fast recovery again
  for (int i = 0; i < 6; ++i) {
    ack(95);  // counter 3..8
  }
  EXPECT_EQ(c.window_size(), 11u);
  ack(95);  // fires: ssthresh = 11.1811 / 2 = 5.5905, W = 8.5905
  EXPECT_NEAR(c.ssthresh(), (11.0 + 1.0 / 11 + 1.0 / (11.0 + 1.0 / 11)) / 2, 1e-9);
  EXPECT_EQ(c.window_size(), 8u);
  ack(10);  // W = 8.5905 + 1/8.5905 = 8.7069 (CA)
  EXPECT_EQ(c.window_size(), 8u);
  EXPECT_EQ(c.state(), SheenController::State::kCongestionAvoidance);
}

// ------------------------------------------------------------------ registry

TEST(Registry, KnowsEveryShippedController) {
  const ControllerRegistry r = ControllerRegistry::with_builtin_controllers();
  const std::vector<std::string> expected{"aimd",         "dasjoshma",     "delay-trigger",
                                          "fixed-window", "johnnybameesh", "sheen"};
  EXPECT_EQ(r.names(), expected);
  for (const auto& name : expected) {
    const ControllerOptions options = name == "fixed-window" ? with_window(3) : ControllerOptions{};
    EXPECT_NE(r.create(name, options), nullptr) << name;
  }
  EXPECT_EQ(r.create("fixed-window", with_window(7))->window_size(), 7u);
}

TEST(Registry, UnknownNameListsTheKnownOnes) {
  const ControllerRegistry r = ControllerRegistry::with_builtin_controllers();
  try {
    r.create("cubic", ControllerOptions{});
    FAIL() << "no exception";
  } catch (const UnknownController& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("'cubic'"), std::string::npos) << message;
    EXPECT_NE(message.find("fixed-window"), std::string::npos) << message;
    EXPECT_NE(message.find("sheen"), std::string::npos) << message;
  }
}

TEST(Registry, WindowOptionRejectedWhereTheControllerSetsItsOwn) {
  const ControllerRegistry r = ControllerRegistry::with_builtin_controllers();
  for (const char* name : {"dasjoshma", "johnnybameesh", "sheen"}) {
    try {
      r.create(name, with_window(5));
      FAIL() << name << ": no exception";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("takes no parameter 'window'"), std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(r.create("aimd", with_window(5))->window_size(), 5u);
}

TEST(Registry, ParametersOutOfRangeOrMissingAreRefusedNamingTheRange) {
  const ControllerRegistry r = ControllerRegistry::with_builtin_controllers();
  ControllerOptions bad;
  bad.set("decrease", 0.5);  // below the declared 1.01: would grow the window on a loss
  try {
    r.create("aimd", bad);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("decrease 0.5 is out of range: 1.01 to 100"),
              std::string::npos)
        << e.what();
  }
  ControllerOptions fractional;
  fractional.set("timeout_ms", 10.5);
  EXPECT_THROW(r.create("aimd", fractional), std::invalid_argument);
  EXPECT_THROW(r.create("fixed-window", ControllerOptions{}), std::invalid_argument);  // no window
  ControllerOptions inverted;
  inverted.set("low_rtt_ms", 120).set("high_rtt_ms", 80);
  EXPECT_THROW(r.create("delay-trigger", inverted), std::invalid_argument);
}

TEST(Registry, ParametersReachTheController) {
  const ControllerRegistry r = ControllerRegistry::with_builtin_controllers();
  ControllerOptions o;
  o.set("decrease", 4).set("timeout_ms", 1000).set("rtt_threshold_ms", 60);
  const auto c = r.create("aimd", o);
  EXPECT_EQ(c->timeout_ms(), 1000u);
  EXPECT_DOUBLE_EQ(c->parameters().at("decrease"), 4.0);
  EXPECT_DOUBLE_EQ(c->parameters().at("rtt_threshold_ms"), 60.0);
  // W = 10 initially; a timeout divides by 4: floor(2.5) = 2.
  c->datagram_was_sent(0, 0, true);
  EXPECT_EQ(c->window_size(), 2u);
}

// controllers.tsv declares the defaults the registry fills in; each class has the same
// numbers as constants for use without the registry. They must agree.
TEST(Registry, DeclaredDefaultsMatchTheControllersOwn) {
  const ControllerRegistry r = ControllerRegistry::with_builtin_controllers();
  for (const auto& name : r.names()) {
    ControllerOptions given;
    for (const auto& p : r.params(name)) {
      if (!p.default_value) {
        given.set(p.name, p.minimum);  // a required one: the same value both ways
      }
    }
    const ControllerOptions resolved = r.resolve(name, given);
    const auto via_registry = r.create(name, given)->parameters();
    for (const auto& p : r.params(name)) {
      ASSERT_TRUE(via_registry.count(p.name)) << name << " does not report " << p.name;
      EXPECT_DOUBLE_EQ(via_registry.at(p.name), resolved.values.at(p.name)) << name << p.name;
    }
    // Built directly, with only the required values: the class's own defaults.
    std::unique_ptr<Controller> direct;
    if (name == "fixed-window") direct = std::make_unique<FixedWindowController>(given);
    if (name == "aimd") direct = std::make_unique<AimdController>(given);
    if (name == "delay-trigger") direct = std::make_unique<DelayTriggerController>(given);
    if (name == "dasjoshma") direct = std::make_unique<DasJoshmaController>(given);
    if (name == "johnnybameesh") direct = std::make_unique<JohnnybAmeeshController>(given);
    if (name == "sheen") direct = std::make_unique<SheenController>(given);
    ASSERT_NE(direct, nullptr) << name << ": add it to this test";
    for (const auto& p : r.params(name)) {
      EXPECT_DOUBLE_EQ(direct->parameters().at(p.name), resolved.values.at(p.name))
          << name << ": controllers.tsv's default for " << p.name << " differs from the class's";
    }
  }
}

TEST(Registry, DuplicateNameIsAnError) {
  ControllerRegistry r;
  auto factory = [](const ControllerOptions& o) -> std::unique_ptr<Controller> {
    return std::make_unique<FixedWindowController>(o);
  };
  r.add("x", factory);
  EXPECT_THROW(r.add("x", factory), std::logic_error);
}

// ------------------------------------------------- sender/receiver over loopback

namespace {

// Window 0 and a short timeout: every datagram goes out after a timeout.
class TimeoutOnlyController : public Controller {
 public:
  unsigned int window_size() override { return 0; }
  void datagram_was_sent(uint64_t, uint64_t, bool after_timeout) override {
    (after_timeout ? timeout_sends : window_sends)++;
  }
  void ack_received(uint64_t, uint64_t, uint64_t, uint64_t) override {}
  unsigned int timeout_ms() override { return 20; }
  std::map<std::string, double> parameters() const override { return {}; }
  int timeout_sends = 0;
  int window_sends = 0;
};

}  // namespace

TEST(Loopback, FixedWindowGetsEveryDatagramAcked) {
  DatagrumpReceiver receiver(Address::from("127.0.0.1", 0), nullptr);
  std::atomic<bool> done{false};
  std::thread receiving([&] {
    pollfd p{receiver.fd(), POLLIN, 0};
    while (!done) {
      if (::poll(&p, 1, 10) > 0) {
        receiver.receive_one();
      }
    }
  });
  FixedWindowController controller(with_window(4));
  SignalFd stop;
  DatagrumpSender sender(receiver.local_address(), controller, nullptr, nullptr);
  sender.run(300, stop);
  // Let the last ACKs in flight reach the receiver's counters.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  done = true;
  receiving.join();

  const SenderCounters& s = sender.counters();
  EXPECT_GT(s.acks_received, 10u);
  // At the end at most a window is unacknowledged.
  EXPECT_LE(s.datagrams_sent - s.acks_received, 4u);
  EXPECT_EQ(s.timeouts, 0u);
  EXPECT_EQ(receiver.counters().datagrams_received, s.datagrams_sent);
  EXPECT_EQ(receiver.counters().bytes_received, s.datagrams_sent * 1472);
  ASSERT_EQ(s.rtts_ms.size(), s.acks_received);
  EXPECT_LT(*RttSummary::of(s.rtts_ms).median_ms, 50.0);  // loopback: well under 50 ms
  // Every ACK opened the window by one and its datagram followed, but an ACK read after
  // the deadline; the receiver answered every datagram.
  const LatencyHistogram& reacted = sender.timing().arrival_to_send();
  EXPECT_GE(reacted.count() + 1, s.acks_received);
  EXPECT_LE(reacted.count(), s.acks_received);
  EXPECT_LT(reacted.percentile(0.5), 50'000u);
  EXPECT_LE(sender.timing().wakeups().count(), 1u);  // at most the wait cut by the deadline
  EXPECT_EQ(receiver.timing().arrival_to_send().count(), receiver.counters().datagrams_received);
}

TEST(Loopback, NoReceiverMeansNoAcksButNoError) {
  // Bind then drop a socket to find a port nobody listens on.
  Address nobody;
  {
    UdpSocket probe;
    probe.bind(Address::from("127.0.0.1", 0));
    nobody = probe.local_address();
  }
  TimeoutOnlyController controller;
  SignalFd stop;
  DatagrumpSender sender(nobody, controller, nullptr, nullptr);
  sender.run(210, stop);
  const SenderCounters& s = sender.counters();
  EXPECT_EQ(s.acks_received, 0u);
  // 210 ms of 20 ms timeouts: about 10 (fewer if the machine is slow).
  EXPECT_GE(s.timeouts, 4u);
  EXPECT_LE(s.timeouts, 11u);
  EXPECT_EQ(s.datagrams_sent, s.timeouts);
  EXPECT_EQ(controller.window_sends, 0);
  EXPECT_EQ(controller.timeout_sends, static_cast<int>(s.timeouts));
  // Every timeout is a wake-up at a deadline (and the last wait, cut by the run's end); no
  // ACK allowed any send.
  EXPECT_GE(sender.timing().wakeups().count(), s.timeouts);
  EXPECT_LE(sender.timing().wakeups().count(), s.timeouts + 1);
  EXPECT_EQ(sender.timing().arrival_to_send().count(), 0u);
}
