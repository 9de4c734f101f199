// Unit tests for the clock-free parts of netrepro-link. Expected times are worked out by hand
// from mahimahi's rules (1504-byte opportunities, departure at the carrying opportunity's
// scheduled time, only opportunities strictly after arrival, period = last trace value).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <deque>
#include <optional>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "buffered_writer.hh"
#include "codel.hh"
#include "delay_line.hh"
#include "departure_gaps.hh"
#include "lateness_recorder.hh"
#include "link_direction.hh"
#include "link_log.hh"
#include "opportunity_schedule.hh"
#include "options.hh"
#include "queue_spec.hh"
#include "trace.hh"
#include "trace_queue.hh"

using namespace netrepro;

namespace {

constexpr uint64_t kMs = 1000;  // microseconds per millisecond

struct Event {
  char kind;
  uint64_t time_ms;
  uint64_t a;
  uint64_t b;
  bool operator==(const Event& o) const {
    return kind == o.kind && time_ms == o.time_ms && a == o.a && b == o.b;
  }
};

std::ostream& operator<<(std::ostream& os, const Event& e) {
  return os << e.time_ms << " " << e.kind << " " << e.a << " " << e.b;
}

class RecordingEvents : public LinkEvents {
 public:
  void arrival(uint64_t t, uint32_t size) override { events.push_back({'+', t / kMs, size, 0}); }
  void drop(uint64_t t, uint32_t n, uint64_t bytes) override {
    events.push_back({'d', t / kMs, n, bytes});
  }
  void opportunity(uint64_t t, uint32_t bytes) override {
    events.push_back({'#', t / kMs, bytes, 0});
  }
  void departure(uint64_t t, uint32_t size, uint64_t delay_ms) override {
    events.push_back({'-', t / kMs, size, delay_ms});
  }
  std::vector<Event> of_kind(char kind) const {
    std::vector<Event> out;
    for (const Event& e : events)
      if (e.kind == kind) out.push_back(e);
    return out;
  }
  std::vector<Event> events;
};

Packet packet_of(uint32_t size, const std::string& tag = "") {
  Packet p;
  p.size = size;
  p.frame = tag;
  return p;
}

TraceQueue trace_queue(std::vector<uint64_t> trace, LinkEvents* events, bool once = false,
                       const std::string& queue = "infinite", uint64_t base_ms = 0) {
  return TraceQueue(OpportunitySchedule::from_trace(std::move(trace), once, base_ms),
                    QueueSpec::parse(queue), events);
}

std::vector<uint64_t> departure_ms(const std::vector<Departure>& out) {
  std::vector<uint64_t> ms;
  for (const Departure& d : out) ms.push_back(d.departure_us / kMs);
  return ms;
}

std::vector<uint64_t> next_opportunities_ms(OpportunitySchedule& s, int n) {
  std::vector<uint64_t> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(s.next_us() / kMs);
    s.consume();
  }
  return out;
}

}  // namespace

// --- Trace schedule --------------------------------------------------------------------------

TEST(OpportunitySchedule, LoopsWithPeriodEqualToLastValue) {
  // Trace 1,3: period 3, so 1,3 then 4,6 then 7,9.
  auto s = OpportunitySchedule::from_trace({1, 3}, false, 100);
  EXPECT_EQ(next_opportunities_ms(s, 6), (std::vector<uint64_t>{101, 103, 104, 106, 107, 109}));
}

TEST(OpportunitySchedule, TraceStartingAtZeroGivesTwoOpportunitiesAtAWrap) {
  // Trace 0,3: 0,3 then (3+0),(3+3) then (6+0),(6+3): two opportunities at 3 and at 6.
  auto s = OpportunitySchedule::from_trace({0, 3}, false, 1000);
  EXPECT_EQ(next_opportunities_ms(s, 6),
            (std::vector<uint64_t>{1000, 1003, 1003, 1006, 1006, 1009}));
}

TEST(OpportunitySchedule, OnceStopsAfterTheTrace) {
  auto s = OpportunitySchedule::from_trace({1, 2, 2}, true, 0);
  EXPECT_EQ(next_opportunities_ms(s, 3), (std::vector<uint64_t>{1, 2, 2}));
  EXPECT_TRUE(s.finished());
  EXPECT_EQ(s.next_us(), OpportunitySchedule::kNever);
  EXPECT_EQ(s.skip_through(1'000'000'000), 0u);
}

TEST(OpportunitySchedule, SpanEndsALoopingTraceInclusively) {
  // Trace 1,3 looping from base 100: 101, 103, 104, 106, 107, ... Span ends at 106 ms.
  auto s = OpportunitySchedule::from_trace({1, 3}, false, 100);
  s.end_at(106'000);
  EXPECT_EQ(next_opportunities_ms(s, 4), (std::vector<uint64_t>{101, 103, 104, 106}));
  EXPECT_TRUE(s.finished());
  EXPECT_EQ(s.skip_through(1'000'000'000), 0u);
}

TEST(OpportunitySchedule, SpanBeforeTheNextOpportunityFinishesAtOnce) {
  auto s = OpportunitySchedule::from_trace({5}, false, 0);
  s.end_at(4'999);
  EXPECT_TRUE(s.finished());
}

TEST(OpportunitySchedule, SpanEndsAFixedRateEvenWhenSkipping) {
  // 12.032 Mbit/s from base 0: one opportunity per ms, at 1000, 2000, ... us. End at 10.5 ms:
  // ten opportunities, whether stepped or skipped past in one jump.
  auto stepped = OpportunitySchedule::fixed_rate(12.032, 0);
  stepped.end_at(10'500);
  uint64_t n = 0;
  for (; !stepped.finished(); stepped.consume()) ++n;
  EXPECT_EQ(n, 10u);
  auto skipped = OpportunitySchedule::fixed_rate(12.032, 0);
  skipped.end_at(10'500);
  EXPECT_EQ(skipped.skip_through(1'000'000), 10u);
  EXPECT_TRUE(skipped.finished());
}

TEST(OpportunitySchedule, FixedRateSpacing) {
  // 12.032 Mbit/s carries 12032 bits (one 1504-byte opportunity) per 1000 us: like trace "1".
  auto slow = OpportunitySchedule::fixed_rate(12.032, 5000);
  std::vector<uint64_t> times;
  for (int i = 0; i < 4; ++i, slow.consume()) times.push_back(slow.next_us());
  EXPECT_EQ(times, (std::vector<uint64_t>{6000, 7000, 8000, 9000}));
  // 1000 Mbit/s: k * 12.032 us, floored: 12, 24, 36, 48; the 125th is exactly 1504 us.
  auto fast = OpportunitySchedule::fixed_rate(1000, 0);
  times.clear();
  for (int i = 0; i < 4; ++i, fast.consume()) times.push_back(fast.next_us());
  EXPECT_EQ(times, (std::vector<uint64_t>{12, 24, 36, 48}));
  for (int i = 5; i < 125; ++i) fast.consume();
  EXPECT_EQ(fast.next_us(), 1504u);
  // 10 Gbit/s: 1.2032 us apart, so some microseconds hold two opportunities.
  auto faster = OpportunitySchedule::fixed_rate(10000, 0);
  times.clear();
  for (int i = 0; i < 6; ++i, faster.consume()) times.push_back(faster.next_us());
  EXPECT_EQ(times, (std::vector<uint64_t>{1, 2, 3, 4, 6, 7}));
}

TEST(OpportunitySchedule, SkipThroughMatchesSteppingOneByOne) {
  for (double rate : {1.0, 12.032, 100.0, 999.5, 1000.0, 2500.0}) {
    auto stepped = OpportunitySchedule::fixed_rate(rate, 7);
    auto skipped = OpportunitySchedule::fixed_rate(rate, 7);
    uint64_t now = 7;
    for (int round = 0; round < 50; ++round) {
      now += 997 * static_cast<uint64_t>(round + 1);
      uint64_t n = 0;
      while (stepped.next_us() <= now) {
        stepped.consume();
        ++n;
      }
      EXPECT_EQ(skipped.skip_through(now), n) << "rate " << rate << " round " << round;
      EXPECT_EQ(skipped.next_us(), stepped.next_us()) << "rate " << rate << " round " << round;
    }
  }
}

// --- The queue -------------------------------------------------------------------------------

TEST(TraceQueue, ExactDepartureTimesOnAHandMadeTrace) {
  // Opportunities at 102, 105, 105, 109 (base 100). Four full-size packets at 100.4 ms.
  RecordingEvents ev;
  TraceQueue q = trace_queue({2, 5, 5, 9}, &ev, false, "infinite", 100);
  std::vector<Departure> out;
  for (int i = 0; i < 4; ++i) q.enqueue(packet_of(1504, std::to_string(i)), 100 * kMs + 400, out);
  EXPECT_EQ(q.next_busy_us(), 102 * kMs);
  q.advance(109 * kMs, out);
  EXPECT_EQ(departure_ms(out), (std::vector<uint64_t>{102, 105, 105, 109}));
  EXPECT_EQ(out[3].packet.frame, "3");  // FIFO
  EXPECT_EQ(ev.of_kind('-'), (std::vector<Event>{{'-', 102, 1504, 2}, {'-', 105, 1504, 5},
                                                 {'-', 105, 1504, 5}, {'-', 109, 1504, 9}}));
  // Every opportunity is reported, in order, before the departures it carries.
  EXPECT_EQ(ev.events.size(), 4u + 4u + 4u);
  EXPECT_EQ(ev.events[4], (Event{'#', 102, 1504, 0}));
  EXPECT_EQ(ev.events[5], (Event{'-', 102, 1504, 2}));
  EXPECT_EQ(q.next_busy_us(), OpportunitySchedule::kNever);
}

TEST(TraceQueue, OnlyOpportunitiesStrictlyAfterTheArrivalMillisecond) {
  std::vector<Departure> out;
  TraceQueue q = trace_queue({1}, nullptr);  // one opportunity every ms
  q.enqueue(packet_of(1504), 5 * kMs, out);  // arrives exactly at the 5 ms opportunity
  q.advance(7 * kMs, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].departure_us, 6 * kMs);
  out.clear();
  q.enqueue(packet_of(1504), 7 * kMs + 999, out);  // late in ms 7: the 7 ms one has gone
  q.advance(100 * kMs, out);
  EXPECT_EQ(departure_ms(out), (std::vector<uint64_t>{8}));
}

TEST(TraceQueue, SplitsAPacketOverOpportunities) {
  // Trace "1". A 3000-byte packet needs 1504 + 1496: it leaves at 2 ms; the next 1504-byte
  // packet uses the 8 bytes left at 2 ms and 1496 at 3 ms, so it leaves at 3 ms.
  RecordingEvents ev;
  TraceQueue q = trace_queue({1}, &ev);
  std::vector<Departure> out;
  q.enqueue(packet_of(3000), 0, out);
  q.enqueue(packet_of(1504), 0, out);
  q.advance(1 * kMs, out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(q.queued_bytes(), 3000u + 1504u - 1504u);
  q.advance(10 * kMs, out);
  EXPECT_EQ(departure_ms(out), (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(ev.of_kind('-'), (std::vector<Event>{{'-', 2, 3000, 2}, {'-', 3, 1504, 3}}));
}

TEST(TraceQueue, SmallPacketsShareOneOpportunity) {
  // Three 500-byte packets fit in 1504; the fourth gets 4 bytes at 1 ms and leaves at 2 ms.
  TraceQueue q = trace_queue({1}, nullptr);
  std::vector<Departure> out;
  for (int i = 0; i < 4; ++i) q.enqueue(packet_of(500), 200, out);
  q.advance(5 * kMs, out);
  EXPECT_EQ(departure_ms(out), (std::vector<uint64_t>{1, 1, 1, 2}));
}

TEST(TraceQueue, UnusedBudgetIsWastedNotBanked) {
  RecordingEvents ev;
  TraceQueue q = trace_queue({1}, &ev);
  std::vector<Departure> out;
  q.enqueue(packet_of(100), 0, out);  // uses 100 of the 1 ms opportunity; 1404 wasted
  // Idle until 10.5 ms: opportunities 2..10 pass unused. A 3008-byte packet then needs two
  // whole fresh opportunities (11 and 12); banked budget would have sent it at 11.
  q.enqueue(packet_of(3008), 10 * kMs + 500, out);
  q.advance(20 * kMs, out);
  EXPECT_EQ(departure_ms(out), (std::vector<uint64_t>{1, 12}));
  EXPECT_EQ(ev.of_kind('#').size(), 20u);  // every opportunity 1..20 reported, used or not
  EXPECT_EQ(q.counters().opportunities, 20u);
  EXPECT_EQ(q.counters().opportunity_bytes, 20u * 1504u);
}

TEST(TraceQueue, LoopingWrapGivesTwoOpportunitiesAtOneInstant) {
  // Trace 0,3: opportunities at 0,3,3,6,6,... Two full packets arriving at 1.5 ms both leave
  // at 3 ms (the wrap instant); a third one leaves at 6.
  TraceQueue q = trace_queue({0, 3}, nullptr);
  std::vector<Departure> out;
  for (int i = 0; i < 3; ++i) q.enqueue(packet_of(1504), 1500, out);
  q.advance(6 * kMs, out);
  EXPECT_EQ(departure_ms(out), (std::vector<uint64_t>{3, 3, 6}));
}

TEST(TraceQueue, OnceStopsService) {
  TraceQueue q = trace_queue({1, 2}, nullptr, true);
  std::vector<Departure> out;
  for (int i = 0; i < 3; ++i) q.enqueue(packet_of(1504), 0, out);
  q.advance(1'000 * kMs, out);
  EXPECT_EQ(departure_ms(out), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(q.queued_packets(), 1u);
  EXPECT_EQ(q.next_busy_us(), OpportunitySchedule::kNever);
  EXPECT_EQ(q.counters().opportunities, 2u);
}

TEST(TraceQueue, ArrivalsAfterServiceAreCountedButNeitherLoggedNorQueued) {
  // Trace 1,2 once: the last opportunity is at 2 ms. An arrival at 2 ms could only use a
  // later one, so it and one at 5 ms come after service; one at 1.5 ms is logged and served.
  RecordingEvents ev;
  TraceQueue q = trace_queue({1, 2}, &ev, true);
  std::vector<Departure> out;
  EXPECT_TRUE(q.enqueue(packet_of(1504), 1'500, out));
  EXPECT_FALSE(q.enqueue(packet_of(1000), 2 * kMs, out));
  EXPECT_FALSE(q.enqueue(packet_of(700), 5 * kMs, out));
  EXPECT_EQ(departure_ms(out), (std::vector<uint64_t>{2}));
  EXPECT_TRUE(q.service_over());
  EXPECT_EQ(q.counters().arrivals, 1u);
  EXPECT_EQ(q.counters().after_service, 2u);
  EXPECT_EQ(q.counters().after_service_bytes, 1700u);
  EXPECT_EQ(q.queued_packets(), 0u);
  EXPECT_EQ(ev.of_kind('+'), (std::vector<Event>{{'+', 1, 1504, 0}}));
}

TEST(TraceQueue, DropTailByPacketsIgnoresThePacketInTransit) {
  // packets=1. A 3008-byte packet is half sent at 1 ms and is then in transit, not queued,
  // so one more packet fits at 1.5 ms; the next is dropped and logged as "d 1 S".
  RecordingEvents ev;
  TraceQueue q = trace_queue({1}, &ev, false, "droptail:packets=1");
  std::vector<Departure> out;
  EXPECT_TRUE(q.enqueue(packet_of(3008), 0, out));
  EXPECT_FALSE(q.enqueue(packet_of(700), 100, out));  // queue already holds 1 packet
  EXPECT_TRUE(q.enqueue(packet_of(1504), 1500, out));
  EXPECT_FALSE(q.enqueue(packet_of(800), 1600, out));
  q.advance(10 * kMs, out);
  EXPECT_EQ(departure_ms(out), (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(ev.of_kind('d'), (std::vector<Event>{{'d', 0, 1, 700}, {'d', 1, 1, 800}}));
  EXPECT_EQ(ev.of_kind('+').size(), 4u);  // drops are arrivals too
  EXPECT_EQ(q.counters().drops, 2u);
  EXPECT_EQ(q.counters().drop_bytes, 1500u);
  EXPECT_EQ(q.counters().arrivals, 4u);
}

TEST(TraceQueue, DropTailByBytes) {
  std::vector<Departure> out;
  TraceQueue exact = trace_queue({1}, nullptr, false, "droptail:bytes=3008");
  EXPECT_TRUE(exact.enqueue(packet_of(1504), 0, out));
  EXPECT_TRUE(exact.enqueue(packet_of(1504), 0, out));  // 3008 <= 3008
  EXPECT_FALSE(exact.enqueue(packet_of(1504), 0, out));
  EXPECT_FALSE(exact.enqueue(packet_of(1), 0, out));
  TraceQueue tight = trace_queue({1}, nullptr, false, "droptail:bytes=3007");
  EXPECT_TRUE(tight.enqueue(packet_of(1504), 0, out));
  EXPECT_FALSE(tight.enqueue(packet_of(1504), 0, out));  // 3008 > 3007
  EXPECT_TRUE(tight.enqueue(packet_of(1503), 0, out));   // 3007 fits
  // Both limits: whichever is hit first.
  TraceQueue both = trace_queue({1}, nullptr, false, "droptail:packets=3,bytes=2000");
  EXPECT_TRUE(both.enqueue(packet_of(100), 0, out));
  EXPECT_TRUE(both.enqueue(packet_of(100), 0, out));
  EXPECT_TRUE(both.enqueue(packet_of(100), 0, out));
  EXPECT_FALSE(both.enqueue(packet_of(100), 0, out));  // 4 packets > 3
  TraceQueue both2 = trace_queue({1}, nullptr, false, "droptail:packets=3,bytes=2000");
  EXPECT_TRUE(both2.enqueue(packet_of(1504), 0, out));
  EXPECT_FALSE(both2.enqueue(packet_of(600), 0, out));  // 2104 bytes > 2000
}

TEST(TraceQueue, AFloodIntoAByteBoundedQueueHoldsAtMostTheBoundAndCountsTheRestAsDrops) {
  // A sender far above the link's rate: the queue holds at most its byte limit (plus what is
  // left of the packet in transit), every packet beyond it is a drop of this queue, logged,
  // and the high-water mark says so. The same flood into an infinite queue keeps everything.
  const uint64_t limit = 100 * 1504;
  RecordingEvents ev;
  TraceQueue bounded = trace_queue({1}, &ev, false, "droptail:bytes=" + std::to_string(limit));
  TraceQueue infinite = trace_queue({1}, nullptr, false, "infinite");
  std::vector<Departure> out;
  uint64_t accepted = 0;
  const uint64_t flood = 20000;
  for (uint64_t i = 0; i < flood; ++i) {
    const uint64_t now = i * 10;  // one 1504-byte packet every 10 us; the link carries one per ms
    if (bounded.enqueue(packet_of(1504), now, out)) ++accepted;
    infinite.enqueue(packet_of(1504), now, out);
  }
  EXPECT_LE(bounded.counters().max_queued_bytes, limit + 1504);
  EXPECT_GE(bounded.counters().max_queued_bytes, limit);
  EXPECT_EQ(bounded.counters().drops, flood - accepted);
  EXPECT_EQ(ev.of_kind('d').size(), flood - accepted);
  EXPECT_EQ(ev.of_kind('+').size(), flood);
  EXPECT_EQ(infinite.counters().drops, 0u);
  EXPECT_GT(infinite.counters().max_queued_bytes, 100 * limit);
  EXPECT_EQ(infinite.counters().max_queued_packets, infinite.queued_packets());
}

TEST(TraceQueue, BulkCountingOfIdleOpportunitiesMatchesOneByOne) {
  RecordingEvents ev;
  TraceQueue every(OpportunitySchedule::fixed_rate(1000, 0), QueueSpec{}, &ev, true);
  TraceQueue bulk(OpportunitySchedule::fixed_rate(1000, 0), QueueSpec{}, nullptr, false);
  std::vector<Departure> a, b;
  for (uint64_t t : {5000u, 5001u, 5002u, 90000u, 90100u, 250000u}) {
    every.enqueue(packet_of(1504), t, a);
    bulk.enqueue(packet_of(1504), t, b);
  }
  every.advance(300000, a);
  bulk.advance(300000, b);
  EXPECT_EQ(every.counters().opportunities, bulk.counters().opportunities);
  EXPECT_EQ(ev.of_kind('#').size(), every.counters().opportunities);
  // 300000 us / 12.032 us = 24933.5: 24933 opportunities.
  EXPECT_EQ(bulk.counters().opportunities, 24933u);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].departure_us, b[i].departure_us);
  // 5000 us arrival: next opportunity k=416 at floor(416 * 12.032) = 5005 us.
  EXPECT_EQ(b[0].departure_us, 5005u);
}

namespace {
// A deliberately different formulation of the same rules, opportunity by opportunity: at each
// opportunity time t, 1504 bytes serve FIFO the packets that arrived strictly before t
// (an arrival at exactly t comes after that opportunity); unused bytes are lost.
std::vector<uint64_t> reference_departures(const std::vector<uint64_t>& opportunity_us,
                                           const std::vector<std::pair<uint64_t, uint32_t>>& arrivals) {
  std::vector<uint64_t> departure(arrivals.size(), 0);
  size_t head = 0;
  uint64_t head_left = arrivals.empty() ? 0 : arrivals[0].second;
  for (const uint64_t t : opportunity_us) {
    uint64_t budget = 1504;
    while (budget > 0 && head < arrivals.size() && arrivals[head].first < t) {
      const uint64_t used = std::min(budget, head_left);
      budget -= used;
      head_left -= used;
      if (head_left == 0) {
        departure[head] = t;
        if (++head < arrivals.size()) head_left = arrivals[head].second;
      }
    }
  }
  return departure;
}
}  // namespace

TEST(TraceQueue, MatchesAnOpportunityByOpportunityReferenceOnRandomTraffic) {
  // A bursty looping trace (with a 0 start and repeated ms) and random arrivals/sizes.
  unsigned seed = 12345;
  auto next_random = [&seed]() {
    seed = seed * 1103515245u + 12345u;
    return (seed >> 8) & 0xffff;
  };
  std::vector<uint64_t> trace = {0};
  for (int i = 0; i < 300; ++i) trace.push_back(trace.back() + (next_random() % 7 == 0 ? 0 : next_random() % 5));
  trace.push_back(trace.back() + 3);
  std::vector<std::pair<uint64_t, uint32_t>> arrivals;
  uint64_t t = 0;
  for (int i = 0; i < 3000; ++i) {
    // Mostly busy, with idle gaps so that wasted budget matters too.
    t += next_random() % 40 == 0 ? 200'000 + next_random() * 10 : next_random() % 900;
    arrivals.emplace_back(t, 40 + next_random() % 2960);
  }
  const uint64_t end_us = t + 5'000'000;
  auto schedule = OpportunitySchedule::from_trace(trace, false, 0);
  std::vector<uint64_t> opportunities;
  while (schedule.next_us() <= end_us) {
    opportunities.push_back(schedule.next_us());
    schedule.consume();
  }
  const std::vector<uint64_t> expected = reference_departures(opportunities, arrivals);

  TraceQueue q = trace_queue(trace, nullptr);
  std::vector<Departure> out;
  for (size_t i = 0; i < arrivals.size(); ++i) {
    q.enqueue(packet_of(arrivals[i].second, std::to_string(i)), arrivals[i].first, out);
  }
  q.advance(end_us, out);
  ASSERT_EQ(out.size(), arrivals.size());
  size_t waited_past_idle = 0;  // the test must cover departures right after idle periods
  for (size_t i = 0; i < out.size(); ++i) {
    if (i > 0 && arrivals[i].first > out[i - 1].departure_us) ++waited_past_idle;
    ASSERT_EQ(out[i].packet.frame, std::to_string(i));
    ASSERT_EQ(out[i].departure_us, expected[i]) << "packet " << i;
  }
  EXPECT_EQ(q.counters().opportunities, opportunities.size());
  EXPECT_GT(waited_past_idle, 20u);
}

// --- Delay and its order ---------------------------------------------------------------------

TEST(DelayLine, ReleasesFifoAfterTheDelay) {
  DelayLine d(20 * kMs);
  d.push(packet_of(1, "a"), 1000);
  d.push(packet_of(1, "b"), 1000);
  d.push(packet_of(1, "c"), 4000);
  EXPECT_EQ(d.next_release_us(), 21000u);
  EXPECT_EQ(d.pop().packet.frame, "a");
  EXPECT_EQ(d.pop().packet.frame, "b");
  const Release c = d.pop();
  EXPECT_EQ(c.release_us, 24000u);
  EXPECT_EQ(d.next_release_us(), DelayLine::kNever);
}

TEST(LinkDirection, QueueThenDelayVersusDelayThenQueue) {
  // Trace "3": opportunities at 3, 6, ..., 18, 21, 24. Fixed delay 20 ms, arrival at 0.
  // queue-delay: the queue sends at 3 ms, released at 23 ms, logged "3 - 1504 3".
  // delay-queue: the queue sees it at 20 ms and sends at 21 ms, logged "21 - 1504 1".
  RecordingEvents qd_events, dq_events;
  LinkDirection qd(trace_queue({3}, &qd_events), DelayLine(20 * kMs), StageOrder::QueueThenDelay);
  LinkDirection dq(trace_queue({3}, &dq_events), DelayLine(20 * kMs), StageOrder::DelayThenQueue);
  std::vector<Release> qd_out, dq_out;
  qd.arrive(packet_of(1504), 0, qd_out);
  dq.arrive(packet_of(1504), 0, dq_out);
  EXPECT_EQ(qd.next_event_us(), 3 * kMs);
  EXPECT_EQ(dq.next_event_us(), 20 * kMs);
  qd.advance(22 * kMs, qd_out);
  dq.advance(22 * kMs, dq_out);
  EXPECT_TRUE(qd_out.empty());  // still in the delay stage until 23 ms
  ASSERT_EQ(dq_out.size(), 1u);
  EXPECT_EQ(dq_out[0].release_us, 21 * kMs);
  qd.advance(23 * kMs, qd_out);
  ASSERT_EQ(qd_out.size(), 1u);
  EXPECT_EQ(qd_out[0].release_us, 23 * kMs);
  EXPECT_EQ(qd_events.of_kind('+'), (std::vector<Event>{{'+', 0, 1504, 0}}));
  EXPECT_EQ(qd_events.of_kind('-'), (std::vector<Event>{{'-', 3, 1504, 3}}));
  EXPECT_EQ(dq_events.of_kind('+'), (std::vector<Event>{{'+', 20, 1504, 0}}));
  EXPECT_EQ(dq_events.of_kind('-'), (std::vector<Event>{{'-', 21, 1504, 1}}));
}

TEST(LinkDirection, ZeroDelayReleasesAtTheDepartureTime) {
  LinkDirection d(trace_queue({1}, nullptr), DelayLine(0), StageOrder::QueueThenDelay);
  std::vector<Release> out;
  d.arrive(packet_of(1504), 300, out);
  EXPECT_TRUE(out.empty());
  d.advance(1 * kMs + 250, out);  // woke up 250 us late: still scheduled at 1 ms
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].release_us, 1 * kMs);
}

TEST(LinkDirection, DelayThenQueueServesEarlierOpportunitiesFirstWhenProcessedLate) {
  // delay-queue, D = 2 ms, trace "1". A packet arriving at 0.5 ms enters the queue at 2.5 ms
  // and leaves at 3 ms, even if the loop only wakes up at 10 ms.
  RecordingEvents ev;
  LinkDirection d(trace_queue({1}, &ev), DelayLine(2 * kMs), StageOrder::DelayThenQueue);
  std::vector<Release> out;
  d.arrive(packet_of(1504), 500, out);
  d.advance(10 * kMs, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].release_us, 3 * kMs);
  EXPECT_EQ(ev.of_kind('-'), (std::vector<Event>{{'-', 3, 1504, 1}}));
}

TEST(LinkDirection, AnArrivalStampedBeforeProcessedTimeCountsAsArrivingThen) {
  // Run to 5.2 ms, then a packet stamped 3.1 ms shows up (its kernel timestamp is older than our
  // last wake-up): it is treated as arriving at 5.2 ms, so it leaves at 6 ms, never in the past.
  RecordingEvents ev;
  LinkDirection d(trace_queue({1}, &ev), DelayLine(0), StageOrder::QueueThenDelay);
  std::vector<Release> out;
  d.advance(5200, out);
  d.arrive(packet_of(1504), 3100, out);
  d.advance(10 * kMs, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].release_us, 6 * kMs);
  EXPECT_EQ(ev.of_kind('+'), (std::vector<Event>{{'+', 5, 1504, 0}}));
  EXPECT_EQ(d.time_us(), 10 * kMs);
}

// --- Trace files -----------------------------------------------------------------------------

namespace {
std::string trace_error(const std::string& text) {
  std::istringstream in(text);
  try {
    Trace::parse(in, "t.txt");
  } catch (const TraceError& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST(Trace, AcceptsAValidTrace) {
  std::istringstream in("0\n3\n3\n7");
  const Trace t = Trace::parse(in, "t.txt");
  EXPECT_EQ(t.timestamps_ms(), (std::vector<uint64_t>{0, 3, 3, 7}));
}

TEST(Trace, MalformedTracesNameFileAndLine) {
  EXPECT_EQ(trace_error("1\n\n2\n").rfind("t.txt:2: empty line", 0), 0u) << trace_error("1\n\n2\n");
  EXPECT_EQ(trace_error("1\n2\n\n").rfind("t.txt:3: empty line", 0), 0u);
  EXPECT_EQ(trace_error("1\nx\n").rfind("t.txt:2: 'x' is not", 0), 0u);
  EXPECT_EQ(trace_error("1\n-4\n").rfind("t.txt:2: '-4' is not", 0), 0u);
  EXPECT_EQ(trace_error("1.5\n").rfind("t.txt:1: '1.5' is not", 0), 0u);
  EXPECT_EQ(trace_error(" 1\n").rfind("t.txt:1:", 0), 0u);
  EXPECT_EQ(trace_error("1\r\n2\r\n").rfind("t.txt:1: Windows line ending", 0), 0u);
  EXPECT_EQ(trace_error("5\n6\n3\n").rfind("t.txt:3: 3 is smaller than the previous line's 6", 0),
            0u);
  EXPECT_EQ(trace_error("0\n0\n").rfind("t.txt:2: last timestamp is 0", 0), 0u);
  EXPECT_EQ(trace_error("").rfind("t.txt:1: empty trace", 0), 0u);
  EXPECT_EQ(trace_error("99999999999999999999\n").rfind("t.txt:1: '99999999999999999999' is too large", 0), 0u);
}

TEST(Trace, UnreadableFileNamesThePath) {
  try {
    Trace::load("/nonexistent/trace.down");
    FAIL() << "no error";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/trace.down: cannot open"), std::string::npos)
        << e.what();
  }
}

// --- CoDel, on a fake clock -------------------------------------------------------------------

namespace {

constexpr uint64_t kTarget = 5 * kMs;
constexpr uint64_t kInterval = 100 * kMs;

// A queue of full-size packets that all arrived at `arrival_us` (so the sojourn time is just
// the clock), tagged with their position.
std::deque<Packet> standing_queue(size_t n, uint64_t arrival_us, uint64_t& bytes) {
  std::deque<Packet> q;
  for (size_t i = 0; i < n; ++i) {
    Packet p = packet_of(1504, std::to_string(i));
    p.arrival_us = arrival_us;
    q.push_back(p);
    bytes += p.size;
  }
  return q;
}

struct CodelRun {
  std::vector<uint64_t> drop_times_us;
  std::vector<std::string> dropped_tags;
  std::vector<std::string> delivered_tags;
};

// Dequeues one packet every `step_us` from `from_us` up to (not including) `to_us`.
CodelRun dequeue_every(Codel& codel, std::deque<Packet>& q, uint64_t& bytes, uint64_t from_us,
                       uint64_t to_us, uint64_t step_us) {
  CodelRun run;
  for (uint64_t now = from_us; now < to_us; now += step_us) {
    std::vector<Packet> dropped;
    const std::optional<Packet> p = codel.dequeue(now, q, bytes, dropped);
    for (const Packet& d : dropped) {
      run.drop_times_us.push_back(now);
      run.dropped_tags.push_back(d.frame);
    }
    if (p) run.delivered_tags.push_back(p->frame);
  }
  return run;
}

}  // namespace

TEST(Codel, NoDropWhileTheSojournStaysBelowTarget) {
  Codel codel({kTarget, kInterval});
  std::deque<Packet> q;
  uint64_t bytes = 0;
  // One packet in, one out every ms, each having waited 4.9 ms: a standing queue below target.
  for (uint64_t i = 0; i < 5; ++i) {
    Packet p = packet_of(1504);
    p.arrival_us = i * kMs;
    q.push_back(p);
    bytes += 1504;
  }
  for (uint64_t i = 5; i < 2000; ++i) {
    Packet p = packet_of(1504);
    p.arrival_us = i * kMs;
    q.push_back(p);
    bytes += 1504;
    std::vector<Packet> dropped;
    const uint64_t now = (i - 5) * kMs + 4900;
    ASSERT_TRUE(codel.dequeue(now, q, bytes, dropped).has_value());
    ASSERT_TRUE(dropped.empty()) << "at " << now;
  }
  EXPECT_FALSE(codel.dropping());
  EXPECT_EQ(codel.count(), 0u);
}

TEST(Codel, FirstDropOneIntervalAfterTheSojournWentAboveTarget) {
  Codel codel({kTarget, kInterval});
  uint64_t bytes = 0;
  std::deque<Packet> q = standing_queue(10000, 0, bytes);
  // First dequeue at 10 ms: above target from here on, so the first drop comes at 110 ms.
  CodelRun run = dequeue_every(codel, q, bytes, 10 * kMs, 110 * kMs, 100);
  EXPECT_TRUE(run.drop_times_us.empty());
  EXPECT_FALSE(codel.dropping());
  run = dequeue_every(codel, q, bytes, 110 * kMs, 110 * kMs + 1, 100);
  ASSERT_EQ(run.drop_times_us, (std::vector<uint64_t>{110 * kMs}));
  // The head is dropped and the packet behind it is sent in its place.
  EXPECT_EQ(run.dropped_tags, (std::vector<std::string>{"1000"}));
  EXPECT_EQ(run.delivered_tags, (std::vector<std::string>{"1001"}));
  EXPECT_TRUE(codel.dropping());
  EXPECT_EQ(codel.count(), 1u);
  EXPECT_EQ(codel.drop_next_us(), 210 * kMs);
}

TEST(Codel, DropsComeIntervalOverSqrtCountApart) {
  Codel codel({kTarget, kInterval});
  uint64_t bytes = 0;
  std::deque<Packet> q = standing_queue(20000, 0, bytes);
  const CodelRun run = dequeue_every(codel, q, bytes, 10 * kMs, 700 * kMs, 100);
  // Each next drop time is the previous one plus interval / sqrt(count), counted from the
  // scheduled time (not from when the dequeue happened): 110, 210, 280.710, 338.445, 388.445...
  std::vector<uint64_t> expected = {110 * kMs};
  uint64_t next = 110 * kMs + kInterval;
  for (uint32_t count = 2; next < 700 * kMs; ++count) {
    expected.push_back((next + 99) / 100 * 100);  // the first 100-us dequeue at or after it
    next += static_cast<uint64_t>(kInterval / std::sqrt(static_cast<double>(count)));
  }
  EXPECT_EQ(run.drop_times_us, expected);
  EXPECT_EQ(expected[2], 280800u);  // 210 ms + 70.710 ms, rounded up to the dequeue grid
  EXPECT_EQ(codel.count(), expected.size());
}

TEST(Codel, LeavesTheDroppingStateWhenTheSojournFallsBelowTarget) {
  Codel codel({kTarget, kInterval});
  uint64_t bytes = 0;
  std::deque<Packet> q = standing_queue(5000, 0, bytes);
  dequeue_every(codel, q, bytes, 10 * kMs, 250 * kMs, 100);
  ASSERT_TRUE(codel.dropping());
  const uint32_t count = codel.count();
  // The standing queue is gone: what is left has waited 1 ms.
  bytes = 0;
  q = standing_queue(100, 249 * kMs, bytes);
  const CodelRun run = dequeue_every(codel, q, bytes, 250 * kMs, 350 * kMs, kMs);
  EXPECT_TRUE(run.drop_times_us.empty());
  EXPECT_FALSE(codel.dropping());
  EXPECT_EQ(codel.count(), count);  // kept for the next dropping state
}

TEST(Codel, NeverDropsWhenAtMostOnePacketWouldRemain) {
  Codel codel({kTarget, kInterval});
  uint64_t bytes = 0;
  std::deque<Packet> q = standing_queue(2, 0, bytes);
  std::vector<Packet> dropped;
  ASSERT_TRUE(codel.dequeue(10 * kMs, q, bytes, dropped));
  ASSERT_TRUE(codel.dequeue(500 * kMs, q, bytes, dropped));
  EXPECT_FALSE(codel.dequeue(600 * kMs, q, bytes, dropped));
  EXPECT_TRUE(dropped.empty());
  EXPECT_EQ(bytes, 0u);
}

namespace {
// Drives a CoDel to `count` drops in one dropping state, then out of it at `leave_us`.
Codel codel_that_dropped(uint32_t count, uint64_t& leave_us) {
  Codel codel({kTarget, kInterval});
  uint64_t bytes = 0;
  std::deque<Packet> q = standing_queue(20000, 0, bytes);
  uint64_t now = 10 * kMs;
  while (codel.count() < count) {
    std::vector<Packet> dropped;
    codel.dequeue(now, q, bytes, dropped);
    now += 100;
  }
  // A short queue below target ends the dropping state.
  bytes = 0;
  q = standing_queue(3, now - kMs, bytes);
  std::vector<Packet> dropped;
  codel.dequeue(now, q, bytes, dropped);
  EXPECT_FALSE(codel.dropping());
  leave_us = now;
  return codel;
}

// Re-enters the dropping state with a standing queue from `from_us` on; returns the time of
// the first drop.
uint64_t reenter(Codel& codel, uint64_t from_us) {
  uint64_t bytes = 0;
  std::deque<Packet> q = standing_queue(20000, from_us - 10 * kMs, bytes);
  for (uint64_t now = from_us;; now += 100) {
    std::vector<Packet> dropped;
    codel.dequeue(now, q, bytes, dropped);
    if (!dropped.empty()) return now;
  }
}
}  // namespace

TEST(Codel, ReenteringSoonReusesTheDropsOfTheLastDroppingState) {
  uint64_t left = 0;
  Codel codel = codel_that_dropped(5, left);  // entered with count 1: 4 more drops since
  const uint64_t drop_next = codel.drop_next_us();
  const uint64_t first = reenter(codel, left + kMs);
  ASSERT_LT(first - drop_next, 16 * kInterval);
  EXPECT_EQ(codel.count(), 4u);  // delta = count - lastcount = 5 - 1
  EXPECT_EQ(codel.drop_next_us(), first + kInterval / 2);  // interval / sqrt(4)
}

TEST(Codel, ReenteringLateStartsCountingAgain) {
  uint64_t left = 0;
  Codel codel = codel_that_dropped(5, left);
  const uint64_t first = reenter(codel, codel.drop_next_us() + 16 * kInterval);
  ASSERT_GE(first - codel.drop_next_us(), 0u);
  EXPECT_EQ(codel.count(), 1u);
  EXPECT_EQ(codel.drop_next_us(), first + kInterval);
}

TEST(Codel, ReenteringAfterASingleDropStartsAtOne) {
  uint64_t left = 0;
  Codel codel = codel_that_dropped(1, left);  // delta = 0: nothing to reuse
  const uint64_t first = reenter(codel, left + kMs);
  EXPECT_EQ(codel.count(), 1u);
  EXPECT_EQ(codel.drop_next_us(), first + kInterval);
}

TEST(TraceQueue, CodelDropsAtDequeueAreLoggedAndCounted) {
  // One opportunity per ms; a burst of 300 full-size packets at 0. Packet k leaves at k+1 ms
  // having waited k+1 ms; at 5 ms (packet 4) the sojourn reaches target, so the first drop is
  // at 105 ms (packet 104, packet 105 goes instead), the next at 205 ms.
  RecordingEvents events;
  TraceQueue q = trace_queue({1}, &events, false, "codel");
  std::vector<Departure> out;
  for (int i = 0; i < 300; ++i) ASSERT_TRUE(q.enqueue(packet_of(1504, std::to_string(i)), 0, out));
  q.advance(1000 * kMs, out);
  const std::vector<Event> drops = events.of_kind('d');
  ASSERT_GE(drops.size(), 2u);
  EXPECT_EQ(drops[0], (Event{'d', 105, 1, 1504}));
  EXPECT_EQ(drops[1], (Event{'d', 205, 1, 1504}));
  ASSERT_GE(out.size(), 105u);
  EXPECT_EQ(out[103].packet.frame, "103");
  EXPECT_EQ(out[104].packet.frame, "105");
  EXPECT_EQ(out[104].departure_us, 105 * kMs);
  const TraceQueueCounters& c = q.counters();
  EXPECT_EQ(c.drops, drops.size());
  EXPECT_EQ(c.dequeue_drops, drops.size());
  EXPECT_EQ(c.dequeue_drop_bytes, drops.size() * 1504);
  EXPECT_EQ(c.departures + c.drops, 300u);  // nothing lost unseen
  EXPECT_EQ(q.queued_packets(), 0u);
}

// --- Queue specs and options -----------------------------------------------------------------

TEST(QueueSpec, ParsesTheFourForms) {
  EXPECT_EQ(QueueSpec::parse("infinite").kind, QueueSpec::Kind::Infinite);
  const QueueSpec p = QueueSpec::parse("droptail:packets=10");
  EXPECT_EQ(p.packet_limit, 10u);
  EXPECT_EQ(p.byte_limit, 0u);
  EXPECT_EQ(QueueSpec::parse("droptail:bytes=3000").byte_limit, 3000u);
  const QueueSpec both = QueueSpec::parse("droptail:packets=5,bytes=9000");
  EXPECT_EQ(both.packet_limit, 5u);
  EXPECT_EQ(both.byte_limit, 9000u);
  EXPECT_EQ(both.describe(), "droptail [packets=5, bytes=9000]");
  const QueueSpec codel = QueueSpec::parse("codel");
  EXPECT_EQ(codel.kind, QueueSpec::Kind::Codel);
  EXPECT_EQ(codel.codel_target_ms, 5u);
  EXPECT_EQ(codel.codel_interval_ms, 100u);
  EXPECT_TRUE(codel.accepts(1000000, 1000000000, 1504));  // CoDel drops at dequeue only
  const QueueSpec tuned = QueueSpec::parse("codel:target=10,interval=200");
  EXPECT_EQ(tuned.codel_target_ms, 10u);
  EXPECT_EQ(tuned.codel_interval_ms, 200u);
  EXPECT_EQ(tuned.describe(), "codel [target=10 ms, interval=200 ms]");
  EXPECT_EQ(QueueSpec::parse("codel:interval=50").codel_target_ms, 5u);
  for (const char* bad : {"", "droptail", "droptail:", "droptail:packets=0", "droptail:packets=",
                          "droptail:packets=x", "droptail:packets=1,packets=2", "droptail:cells=3",
                          "drophead:packets=3", "infinite:packets=3", "droptail:packets=1,",
                          "codel:", "codel:target=0", "codel:target=5,target=6", "codel:packets=3",
                          "codel:target=100,interval=100", "codel:target=1.5", "codel:target=5,"}) {
    EXPECT_THROW(QueueSpec::parse(bad), QueueSpecError) << bad;
  }
}

TEST(QueueSpec, AnUntrustedSendersQueueIsBoundedInBytesAndLeavesItsSenderUnreadWhenFull) {
  const QueueSpec u = QueueSpec::parse("untrusted:bytes=3008");
  EXPECT_EQ(u.kind, QueueSpec::Kind::Untrusted);
  EXPECT_EQ(u.byte_limit, 3008u);
  EXPECT_TRUE(u.unread_when_full());
  EXPECT_FALSE(QueueSpec::parse("droptail:bytes=3008").unread_when_full());
  EXPECT_FALSE(QueueSpec::parse("infinite").unread_when_full());
  EXPECT_EQ(u.describe(), "untrusted [bytes=3008, its sender unread while full]");
  // What it is handed beyond the bound (a batch read at once) it drops as droptail would.
  EXPECT_TRUE(u.accepts(1, 1504, 1504));
  EXPECT_FALSE(u.accepts(2, 3008, 1));
  for (const char* bad : {"untrusted", "untrusted:", "untrusted:packets=3", "untrusted:bytes=0",
                          "untrusted:bytes=5,bytes=6"}) {
    EXPECT_THROW(QueueSpec::parse(bad), QueueSpecError) << bad;
  }
}

namespace {
std::vector<std::string> base_args() {
  return {"netrepro-link", "--iface-a", "a0", "--iface-b", "b0", "--a2b-trace", "up.txt",
          "--b2a-rate-mbps", "1000", "--a2b-log", "a.log", "--b2a-log", "b.log", "--stats", "s.json"};
}
}  // namespace

TEST(Options, DefaultsMatchMmDelayThenMmLink) {
  const Options o = Options::parse(base_args());
  EXPECT_EQ(o.a2b.order, "queue-delay");
  EXPECT_EQ(o.b2a.order, "delay-queue");
  EXPECT_EQ(o.a2b.queue, "infinite");
  EXPECT_EQ(*o.a2b.trace, "up.txt");
  EXPECT_DOUBLE_EQ(*o.b2a.rate_mbps, 1000.0);
  EXPECT_FALSE(o.once);
}

TEST(Options, RejectsBadCommandLines) {
  auto with = [](std::vector<std::string> extra) {
    std::vector<std::string> args = base_args();
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  EXPECT_THROW(Options::parse(with({"--a2b-rate-mbps", "12"})), UsageError);  // trace and rate
  EXPECT_THROW(Options::parse(with({"--a2b-delay-ms", "-1"})), UsageError);
  EXPECT_THROW(Options::parse(with({"--a2b-delay-ms", "2.5"})), UsageError);
  EXPECT_THROW(Options::parse(with({"--a2b-order", "sideways"})), UsageError);
  EXPECT_THROW(Options::parse(with({"--bogus"})), UsageError);
  EXPECT_THROW(Options::parse(with({"--stats"})), UsageError);
  EXPECT_THROW(Options::parse(with({"--once=yes"})), UsageError);
  EXPECT_THROW(Options::parse({"netrepro-link", "--iface-a", "a0"}), UsageError);
  std::vector<std::string> no_rate = base_args();
  no_rate[7] = "--b2a-log";  // drop the b2a rate, repeat a flag
  EXPECT_THROW(Options::parse(no_rate), UsageError);
  const Options o = Options::parse(with({"--b2a-order=queue-delay", "--once", "--a2b-delay-ms=20"}));
  EXPECT_EQ(o.b2a.order, "queue-delay");
  EXPECT_EQ(o.a2b.delay_ms, 20u);
  EXPECT_TRUE(o.once);
  EXPECT_FALSE(o.span_ms.has_value());
  EXPECT_EQ(*Options::parse(with({"--span-ms", "60000"})).span_ms, 60000u);
  EXPECT_FALSE(o.realtime);
  EXPECT_TRUE(Options::parse(with({"--realtime"})).realtime);
  EXPECT_THROW(Options::parse(with({"--realtime=1"})), UsageError);
  EXPECT_THROW(Options::parse(with({"--span-ms", "0"})), UsageError);
  EXPECT_THROW(Options::parse(with({"--span-ms", "1.5"})), UsageError);
  // The receive path: recvmmsg unless the ring is asked for; nothing else is taken.
  EXPECT_EQ(o.data_path, "mmsg");
  EXPECT_EQ(Options::parse(with({"--data-path", "rings"})).data_path, "rings");
  EXPECT_EQ(Options::parse(with({"--data-path=mmsg"})).data_path, "mmsg");
  EXPECT_THROW(Options::parse(with({"--data-path", "xdp"})), UsageError);
  // The timing loop's CPU: any unless named; a CPU number, nothing else.
  EXPECT_FALSE(o.cpu.has_value());
  EXPECT_EQ(*Options::parse(with({"--cpu", "1"})).cpu, 1u);
  EXPECT_THROW(Options::parse(with({"--cpu", "-1"})), UsageError);
  EXPECT_THROW(Options::parse(with({"--cpu", "one"})), UsageError);
}

// --- Lateness statistics and the log --------------------------------------------------------

TEST(LinkLog, WritesMahimahiLines) {
  char name[] = "/tmp/link_test_log_XXXXXX";
  const int fd = mkstemp(name);
  ASSERT_GE(fd, 0);
  close(fd);
  {
    LinkLog log(name, true);
    log.write_header({"netrepro-link", "base timestamp: 7"});
    log.arrival(12'345, 1504);
    log.drop(12'999, 1, 1504);
    log.opportunity(13'000, 1504);
    log.departure(13'000, 1504, 1);
    log.flush();
  }
  std::ifstream in(name);
  std::stringstream text;
  text << in.rdbuf();
  unlink(name);
  EXPECT_EQ(text.str(),
            "# netrepro-link\n# base timestamp: 7\n12 + 1504\n12 d 1 1504\n13 # 1504\n13 - 1504 1\n");
}

TEST(BufferedWriter, BackgroundWriterKeepsOrderAcrossManyHandOffs) {
  char name[] = "/tmp/link_test_writer_XXXXXX";
  const int fd = mkstemp(name);
  ASSERT_GE(fd, 0);
  close(fd);
  std::string expected;
  {
    BufferedWriter out(name, 64, true);  // tiny buffer: hundreds of hand-offs to the thread
    for (uint64_t i = 0; i < 5000; ++i) {
      out.append_number(i);
      out.append_char('\n');
      expected += std::to_string(i) + "\n";
    }
    out.flush();
    std::ifstream in(name);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(text.str(), expected);
    out.append("tail\n");
  }  // the destructor flushes the rest
  std::ifstream in(name);
  std::stringstream text;
  text << in.rdbuf();
  unlink(name);
  EXPECT_EQ(text.str(), expected + "tail\n");
}

TEST(BufferedWriter, UnwritablePathNamesIt) {
  try {
    BufferedWriter out("/nonexistent-dir/x.log");
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/x.log"), std::string::npos) << e.what();
  }
}

TEST(LatenessRecorder, RemembersWhenTheLatestDepartureWasDue) {
  LatenessRecorder recorder("");  // histogram only
  EXPECT_EQ(recorder.max_at_us(), 0u);
  recorder.record(1'000, 1'040);
  recorder.record(2'000, 464'000);  // 462 ms late
  recorder.record(3'000, 465'000);  // later still, but less late
  EXPECT_EQ(recorder.histogram().max(), 462'000u);
  EXPECT_EQ(recorder.max_at_us(), 2'000u);
}

// The emulator's own count of departure gaps within 10% of schedule (DepartureGapCounter).
TEST(DepartureGapCounter, CountsOnlyBackloggedFullSizeGaps) {
  DepartureGapCounter c;
  c.sent(1000, 1000, 0, 1504, false);  // first: no gap
  c.sent(1120, 1121, 1, 1504, false);  // 121 vs 120: within
  c.sent(1240, 1280, 1, 1504, false);  // 159 vs 120: outside
  c.sent(1360, 1400, 0, 1504, false);  // found the queue empty: no gap
  c.sent(1480, 1520, 1, 100, false);   // not full size: no gap
  c.sent(1600, 1640, 1, 1504, false);  // 120 vs 120: within
  EXPECT_TRUE(c.known());
  EXPECT_EQ(c.gaps(), 3u);
  EXPECT_EQ(c.within(), 2u);
  EXPECT_DOUBLE_EQ(c.fraction(), 2.0 / 3.0);
}

TEST(DepartureGapCounter, ToleranceIsTenPercentOfTheScheduledGap) {
  DepartureGapCounter c;
  c.sent(0, 0, 0, 1504, false);
  c.sent(120, 132, 1, 1504, false);   // +12 on 120: within
  c.sent(240, 253, 1, 1504, false);   // 121 after 132, on 120: within (error 1)
  c.sent(360, 386, 1, 1504, false);   // 133 on 120: outside
  c.sent(1360, 1286, 1, 1504, false);  // 900 on 1000: within (a slower step's gap)
  EXPECT_EQ(c.gaps(), 4u);
  EXPECT_EQ(c.within(), 3u);
}

TEST(DepartureGapCounter, ALossBetweenTwoSendsBreaksTheirGap) {
  DepartureGapCounter c;
  c.sent(0, 0, 0, 1504, false);
  c.sent(240, 240, 1, 1504, true);  // a lost packet took the opportunity at 120
  c.sent(360, 360, 1, 1504, false);
  EXPECT_EQ(c.gaps(), 1u);
  EXPECT_EQ(c.within(), 1u);
}

TEST(DepartureGapCounter, ReorderedSendsMakeItUnknown) {
  DepartureGapCounter c;
  c.sent(0, 0, 0, 1504, false);
  c.sent(120, 120, 1, 1504, false);
  EXPECT_TRUE(c.known());
  c.reordered();
  EXPECT_FALSE(c.known());
  DepartureGapCounter none;
  EXPECT_FALSE(none.known());  // no gap yet
}
