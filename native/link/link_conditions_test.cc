// Unit tests for the link's conditions beyond its queue and delay: random loss after the queue
// (RandomLoss, in a direction of either order, in the queue log, on the command line) and a
// fixed rate that changes at given times (RateSteps, the stepped schedule, the flags). Every
// expected time is worked out by hand in the test; loss rates are judged against the binomial
// distribution's own spread.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "delay_line.hh"
#include "link_direction.hh"
#include "opportunity_schedule.hh"
#include "options.hh"
#include "queue_log.hh"
#include "queue_spec.hh"
#include "random_loss.hh"
#include "rate_steps.hh"
#include "trace_queue.hh"

using namespace netrepro;

namespace {

constexpr uint64_t kMs = 1000;

// Lost packets of `draws` at probability p, seed `seed`, stream a2b.
uint64_t lost_of(double p, uint64_t seed, uint64_t draws,
                 RandomLoss::Stream stream = RandomLoss::Stream::A2B) {
  RandomLoss loss(p, seed, stream);
  uint64_t lost = 0;
  for (uint64_t i = 0; i < draws; ++i) lost += loss.lose() ? 1 : 0;
  return lost;
}

std::vector<bool> pattern(double p, uint64_t seed, RandomLoss::Stream stream, int draws) {
  RandomLoss loss(p, seed, stream);
  std::vector<bool> out;
  for (int i = 0; i < draws; ++i) out.push_back(loss.lose());
  return out;
}

// Within `sigmas` standard deviations of the binomial mean.
void expect_binomial(uint64_t lost, uint64_t draws, double p, double sigmas = 5.0) {
  const double mean = draws * p;
  const double sd = std::sqrt(draws * p * (1 - p));
  EXPECT_NEAR(static_cast<double>(lost), mean, sigmas * sd)
      << lost << " of " << draws << " at p=" << p;
}

Packet full_packet(int tag) {
  Packet p;
  p.frame = std::string(1514, static_cast<char>('a' + tag % 26));
  p.size = 1504;
  return p;
}

struct Recorder : LossObserver {
  std::vector<Packet> lost_packets;
  void lost(const Packet& packet) override { lost_packets.push_back(packet); }
};

// Every opportunity of a schedule up to until_us, one consume() at a time.
std::vector<uint64_t> opportunities(OpportunitySchedule s, uint64_t until_us) {
  std::vector<uint64_t> out;
  while (!s.finished() && s.next_us() <= until_us) {
    out.push_back(s.next_us());
    s.consume();
  }
  return out;
}

std::vector<std::string> base_args() {
  return {"netrepro-link", "--iface-a", "a0", "--iface-b", "b0", "--a2b-rate-mbps", "10",
          "--b2a-rate-mbps", "10", "--a2b-log", "a.log", "--b2a-log", "b.log", "--stats", "s.json"};
}

std::vector<std::string> with(std::vector<std::string> extra) {
  std::vector<std::string> args = base_args();
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

// --- Random loss ----------------------------------------------------------------------------

TEST(RandomLoss, LosesAtItsRate) {
  const uint64_t draws = 1'000'000;
  for (double p : {0.00001, 0.001, 0.01, 0.1, 0.5, 0.9}) {
    expect_binomial(lost_of(p, 1, draws), draws, p);
    expect_binomial(lost_of(p, 12345, draws), draws, p);
  }
}

TEST(RandomLoss, NothingIsLostOrDrawnAtZero) {
  RandomLoss loss(0.0, 5, RandomLoss::Stream::A2B);
  EXPECT_FALSE(loss.active());
  for (int i = 0; i < 10000; ++i) ASSERT_FALSE(loss.lose());
  EXPECT_EQ(loss.draws(), 0u);
  RandomLoss none;
  EXPECT_FALSE(none.lose());
}

TEST(RandomLoss, ASeedGivesOneSequenceAndSeedsAndDirectionsDiffer) {
  const auto one = pattern(0.5, 42, RandomLoss::Stream::A2B, 2000);
  EXPECT_EQ(one, pattern(0.5, 42, RandomLoss::Stream::A2B, 2000));
  EXPECT_NE(one, pattern(0.5, 43, RandomLoss::Stream::A2B, 2000));
  EXPECT_NE(one, pattern(0.5, 42, RandomLoss::Stream::B2A, 2000));
  // Unrelated, not merely shifted: two seeds agree on about half the draws at p = 0.5.
  const auto other = pattern(0.5, 43, RandomLoss::Stream::A2B, 2000);
  int same = 0;
  for (size_t i = 0; i < one.size(); ++i) same += one[i] == other[i] ? 1 : 0;
  EXPECT_NEAR(same, 1000, 5 * std::sqrt(2000 * 0.25));
  RandomLoss loss(0.25, 42, RandomLoss::Stream::B2A);
  EXPECT_EQ(loss.seed(), 42u);
  EXPECT_DOUBLE_EQ(loss.probability(), 0.25);
}

TEST(RandomLoss, RefusesProbabilitiesOutsideZeroToOne) {
  EXPECT_DOUBLE_EQ(RandomLoss::parse_probability("0"), 0.0);
  EXPECT_DOUBLE_EQ(RandomLoss::parse_probability("0.5"), 0.5);
  EXPECT_DOUBLE_EQ(RandomLoss::parse_probability("1e-5"), 1e-5);
  EXPECT_DOUBLE_EQ(RandomLoss::parse_probability("0.99999"), 0.99999);
  for (const char* bad : {"1", "1.0", "-0.1", "1.5", "abc", "", "nan", "inf", "0.5x", "5%"}) {
    EXPECT_THROW(RandomLoss::parse_probability(bad), RandomLossError) << bad;
  }
  EXPECT_THROW(RandomLoss(1.0, 1, RandomLoss::Stream::A2B), RandomLossError);
  EXPECT_THROW(RandomLoss(-0.5, 1, RandomLoss::Stream::A2B), RandomLossError);
}

TEST(RandomLoss, TakesPacketsAfterTheQueueInTheDataOrder) {
  // One opportunity per ms; 400 packets arrive at 0 and leave at 1, 2, ... 400 ms.
  LinkDirection d(TraceQueue(OpportunitySchedule::from_trace({1}, false, 0),
                             QueueSpec::parse("infinite"), nullptr),
                  DelayLine(10 * kMs), StageOrder::QueueThenDelay);
  Recorder seen;
  d.set_loss(RandomLoss(0.25, 9, RandomLoss::Stream::A2B), &seen);
  std::vector<Release> ready;
  for (int i = 0; i < 400; ++i) d.arrive(full_packet(i), 0, ready);
  d.advance(500 * kMs, ready);
  // Every packet left the queue; the lost ones never reach the delay line's output.
  EXPECT_EQ(d.queue().counters().departures, 400u);
  EXPECT_EQ(ready.size() + seen.lost_packets.size(), 400u);
  EXPECT_EQ(d.loss().lost(), seen.lost_packets.size());
  EXPECT_EQ(d.loss().lost_bytes(), 1504u * seen.lost_packets.size());
  EXPECT_EQ(d.loss().draws(), 400u);
  expect_binomial(seen.lost_packets.size(), 400, 0.25);
  // A released packet left the queue at (k + 1) ms and is released 10 ms later; a lost one
  // carries its departure and what the queue saw on its arrival.
  for (const Release& r : ready) EXPECT_EQ(r.release_us % kMs, 0u);
  for (const Packet& p : seen.lost_packets) {
    EXPECT_EQ(p.departure_us % kMs, 0u);
    EXPECT_GE(p.departure_us, 1 * kMs);
    EXPECT_LE(p.departure_us, 400 * kMs);
  }
  // The same seed loses the same packets: their departure times agree.
  LinkDirection again(TraceQueue(OpportunitySchedule::from_trace({1}, false, 0),
                                 QueueSpec::parse("infinite"), nullptr),
                      DelayLine(10 * kMs), StageOrder::QueueThenDelay);
  Recorder seen_again;
  again.set_loss(RandomLoss(0.25, 9, RandomLoss::Stream::A2B), &seen_again);
  std::vector<Release> ready_again;
  for (int i = 0; i < 400; ++i) again.arrive(full_packet(i), 0, ready_again);
  again.advance(500 * kMs, ready_again);
  ASSERT_EQ(seen_again.lost_packets.size(), seen.lost_packets.size());
  for (size_t i = 0; i < seen.lost_packets.size(); ++i) {
    EXPECT_EQ(seen_again.lost_packets[i].departure_us, seen.lost_packets[i].departure_us);
  }
}

TEST(RandomLoss, TakesPacketsAfterTheQueueInTheAckOrder) {
  LinkDirection d(TraceQueue(OpportunitySchedule::from_trace({1}, false, 0),
                             QueueSpec::parse("infinite"), nullptr),
                  DelayLine(5 * kMs), StageOrder::DelayThenQueue);
  Recorder seen;
  d.set_loss(RandomLoss(0.5, 3, RandomLoss::Stream::B2A), &seen);
  std::vector<Release> ready;
  for (int i = 0; i < 200; ++i) d.arrive(full_packet(i), 0, ready);
  d.advance(300 * kMs, ready);
  EXPECT_EQ(d.queue().counters().departures, 200u);
  EXPECT_EQ(ready.size() + seen.lost_packets.size(), 200u);
  expect_binomial(seen.lost_packets.size(), 200, 0.5);
  // Delay then queue: the queue sees them at 5 ms; they leave at 6, 7, ... ms.
  for (const Release& r : ready) EXPECT_GE(r.release_us, 6 * kMs);
}

TEST(RandomLoss, LostPacketsAreQueueLogLines) {
  char name[] = "/tmp/link_conditions_test_log_XXXXXX";
  const int fd = mkstemp(name);
  ASSERT_GE(fd, 0);
  close(fd);
  {
    QueueLog log(name);
    log.start({"netrepro-link queue log", "base timestamp: 7"}, 7'000, true);
    Packet p = full_packet(0);
    p.arrival_us = 7'250;
    p.backlog = 3;
    p.ecn_in = p.ecn_out = Ecn::Ect0;
    p.departure_us = 11'250;
    log.lost(p);
    log.flush();
  }
  const std::string text = read_file(name);
  unlink(name);
  EXPECT_NE(text.find("# format: l ARRIVAL BACKLOG SIZE ECN_IN ECN_OUT DEPARTURE\n"),
            std::string::npos);
  const std::string line = "l 250 3 1504 2 2 4250\n";
  EXPECT_EQ(text.substr(text.size() - line.size()), line);
}

TEST(RandomLoss, IsAskedForPerDirectionWithOneSeed) {
  const Options plain = Options::parse(base_args());
  EXPECT_FALSE(plain.a2b.loss_given);
  EXPECT_EQ(plain.loss_seed, 1u);
  const Options o = Options::parse(with({"--a2b-loss", "0.01", "--loss-seed", "77"}));
  EXPECT_TRUE(o.a2b.loss_given);
  EXPECT_DOUBLE_EQ(o.a2b.loss, 0.01);
  EXPECT_FALSE(o.b2a.loss_given);
  EXPECT_EQ(o.loss_seed, 77u);
  EXPECT_TRUE(Options::parse(with({"--b2a-loss=0"})).b2a.loss_given);
  for (const char* bad : {"1", "1.5", "-0.01", "x", "0.1,0.2"}) {
    EXPECT_THROW(Options::parse(with({"--a2b-loss", bad})), UsageError) << bad;
  }
  EXPECT_THROW(Options::parse(with({"--loss-seed", "-1"})), UsageError);
  EXPECT_THROW(Options::parse(with({"--loss-seed", "1.5"})), UsageError);
  try {
    Options::parse(with({"--a2b-loss", "1"}));
    FAIL() << "a loss of 1 was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--a2b-loss"), std::string::npos) << e.what();
  }
}

// --- Rate steps ----------------------------------------------------------------------------

TEST(RateSteps, ParsesTimesAndRates) {
  const RateSteps s = RateSteps::parse("20000:20,40000:10", 1e6);
  ASSERT_EQ(s.steps().size(), 2u);
  EXPECT_EQ(s.steps()[0].at_ms, 20000u);
  EXPECT_DOUBLE_EQ(s.steps()[0].rate_mbps, 20.0);
  EXPECT_EQ(s.steps()[1].at_ms, 40000u);
  EXPECT_DOUBLE_EQ(*s.max_rate_mbps(), 20.0);
  EXPECT_EQ(s.describe(), "20000 ms: 20 Mbit/s, 40000 ms: 10 Mbit/s");
  EXPECT_FALSE(RateSteps().max_rate_mbps().has_value());
  for (const char* bad : {"", ",", "20000", "20000:", ":20", "0:10", "20000:0", "20000:-1",
                          "20000:abc", "x:10", "2.5:10", "20000:10,10000:5", "20000:10,20000:5",
                          "20000:10,", "20000:2000000"}) {
    EXPECT_THROW(RateSteps::parse(bad, 1e6), RateStepsError) << bad;
  }
  s.check_within(40001);
  EXPECT_THROW(s.check_within(40000), RateStepsError);  // a step at the end is never served
  EXPECT_THROW(s.check_within(30000), RateStepsError);
}

TEST(RateSteps, EachStretchIsAnExactScheduleOfItsOwn) {
  // 12.032 Mbit/s is one 1504-byte opportunity per 1000 us, 24.064 one per 500 us.
  const OpportunitySchedule s = OpportunitySchedule::fixed_rate(
      12.032, 0, {RateStep{10, 24.064}, RateStep{20, 12.032}});
  const std::vector<uint64_t> got = opportunities(s, 24'000);
  std::vector<uint64_t> want;
  for (uint64_t t = 1000; t < 10'000; t += 1000) want.push_back(t);   // the old rate's last: 9 ms
  for (uint64_t t = 10'500; t < 20'000; t += 500) want.push_back(t);  // 10 ms + one interval
  for (uint64_t t = 21'000; t <= 24'000; t += 1000) want.push_back(t);
  EXPECT_EQ(got, want);
}

TEST(RateSteps, TheDoubledRateAtTwentySecondsLandsOnTheMicrosecond) {
  // 10 -> 20 -> 10 Mbit/s at 20 s and 40 s after a base of 5 s, as the BBR paper's Fig. 3.
  const uint64_t base = 5'000'000;
  const OpportunitySchedule s = OpportunitySchedule::fixed_rate(
      10, base, {RateStep{20'000, 20}, RateStep{40'000, 10}});
  const std::vector<uint64_t> got = opportunities(s, base + 41'000'000);
  // Last of the first stretch: k = floor(20 s / 1203.2 us) = 16622 (16622 x 1203.2 = 19999590.4).
  const auto before = std::lower_bound(got.begin(), got.end(), base + 20'000'000);
  ASSERT_NE(before, got.begin());
  EXPECT_EQ(*(before - 1), base + 19'999'590);
  EXPECT_EQ(*before, base + 20'000'000 + 601);  // floor(12032 / 20) after the step
  EXPECT_EQ(*(before + 1), base + 20'000'000 + 1203);
  const auto after = std::lower_bound(got.begin(), got.end(), base + 40'000'000);
  // Last of the second stretch: k = floor(20 s / 601.6 us) = 33244 (33244 x 601.6 = 19999590.4
  // after its start, as it happens the same offset as the first stretch's last).
  EXPECT_EQ(*(after - 1), base + 39'999'590);
  EXPECT_EQ(*after, base + 40'000'000 + 1203);
  EXPECT_EQ(static_cast<size_t>(before - got.begin()), 16622u);
}

TEST(RateSteps, SkippingAcrossStepsMatchesServingEachOpportunity) {
  const std::vector<RateStep> steps = {RateStep{7, 3.3}, RateStep{19, 97}, RateStep{23, 1.1}};
  for (uint64_t now : {3'000ull, 7'000ull, 7'001ull, 18'999ull, 19'000ull, 25'555ull, 90'000ull}) {
    OpportunitySchedule skipped = OpportunitySchedule::fixed_rate(5, 0, steps);
    const uint64_t count = skipped.skip_through(now);
    const OpportunitySchedule stepped = OpportunitySchedule::fixed_rate(5, 0, steps);
    const std::vector<uint64_t> each = opportunities(stepped, now);
    EXPECT_EQ(count, each.size()) << now;
    OpportunitySchedule rest = OpportunitySchedule::fixed_rate(5, 0, steps);
    for (size_t i = 0; i < each.size(); ++i) rest.consume();
    EXPECT_EQ(skipped.next_us(), rest.next_us()) << now;
  }
}

TEST(RateSteps, EndOfServiceStillApplies) {
  OpportunitySchedule s = OpportunitySchedule::fixed_rate(12.032, 0, {RateStep{5, 24.064}});
  s.end_at(6'000);
  const std::vector<uint64_t> got = opportunities(s, 1'000'000);
  EXPECT_EQ(got, (std::vector<uint64_t>{1000, 2000, 3000, 4000, 5500, 6000}));
}

TEST(RateSteps, AreRefusedWithoutAFixedRateOrPastTheEnd) {
  const Options o = Options::parse(with({"--a2b-rate-steps", "20000:20,40000:10",
                                         "--span-ms", "60000"}));
  EXPECT_EQ(o.a2b.rate_steps.steps().size(), 2u);
  EXPECT_TRUE(o.b2a.rate_steps.empty());
  EXPECT_THROW(Options::parse(with({"--a2b-rate-steps", "20000:20", "--span-ms", "20000"})),
               UsageError);
  EXPECT_THROW(Options::parse(with({"--a2b-rate-steps", "20000:0"})), UsageError);
  EXPECT_THROW(Options::parse(with({"--a2b-rate-mbps", "0"})), UsageError);
  std::vector<std::string> traced = {"netrepro-link", "--iface-a", "a0", "--iface-b", "b0",
                                     "--a2b-trace", "up.txt", "--b2a-rate-mbps", "10",
                                     "--a2b-log", "a.log", "--b2a-log", "b.log", "--stats",
                                     "s.json", "--a2b-rate-steps", "1000:5"};
  try {
    Options::parse(traced);
    FAIL() << "rate steps on a trace were accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--a2b-rate-steps"), std::string::npos) << e.what();
  }
}
