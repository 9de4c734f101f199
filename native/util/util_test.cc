#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "arg_parser.hh"
#include "clock.hh"
#include "host_timing.hh"
#include "json_writer.hh"
#include "latency_histogram.hh"
#include "poll_loop.hh"
#include "signal_fd.hh"
#include "system_error.hh"
#include "udp_socket.hh"

using namespace netrepro;

TEST(SystemError, CarriesErrnoAndContext) {
  try {
    check_syscall("open /nonexistent", -1 * (errno = ENOENT, 1));
    FAIL() << "no exception";
  } catch (const SystemError& e) {
    EXPECT_EQ(e.error_number(), ENOENT);
    EXPECT_NE(std::string(e.what()).find("open /nonexistent"), std::string::npos);
  }
}

TEST(Clock, MonotonicAdvancesAcrossSleep) {
  const uint64_t start = monotonic_us();
  sleep_until_us(start + 2000);
  EXPECT_GE(monotonic_us(), start + 2000);
}

TEST(UdpSocket, LoopbackRoundTripCarriesKernelTimestamp) {
  UdpSocket receiver;
  receiver.bind(Address::from("127.0.0.1", 0));
  UdpSocket sender;
  sender.sendto(receiver.local_address(), "hello");
  const ReceivedDatagram d = receiver.recv();
  EXPECT_EQ(d.payload, "hello");
  EXPECT_GT(d.kernel_timestamp_us, 0u);
}

TEST(Address, RejectsNonAddress) { EXPECT_THROW(Address::from("nope", 1), std::invalid_argument); }

// ---- try_recv / try_send -------------------------------------------------------------

TEST(UdpSocket, TryRecvIsEmptyWhenNothingWaitsAndNeverBlocks) {
  UdpSocket receiver;
  receiver.bind(Address::from("127.0.0.1", 0));
  const uint64_t start = monotonic_us();
  EXPECT_FALSE(receiver.try_recv().has_value());
  EXPECT_LT(monotonic_us() - start, 500000u);  // a blocking recv would never return
}

TEST(UdpSocket, TryRecvReturnsWhatWaits) {
  UdpSocket receiver;
  receiver.bind(Address::from("127.0.0.1", 0));
  UdpSocket sender;
  sender.connect(receiver.local_address());
  EXPECT_TRUE(sender.try_send("one"));
  EXPECT_TRUE(sender.try_send("two"));
  PollLoop loop("receiver");
  loop.add(receiver.fd(), POLLIN, [](short) { return PollLoop::Next::Continue; });
  ASSERT_EQ(loop.wait_ms(1000).ready, 1);
  const auto first = receiver.try_recv();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->payload, "one");
  const auto second = receiver.try_recv();
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->payload, "two");
  EXPECT_FALSE(receiver.try_recv().has_value());
}

TEST(UdpSocket, TryRecvStillThrowsOtherErrors) {
  // A connected socket whose peer port is closed gets ECONNREFUSED (ICMP port unreachable).
  Address closed;
  {
    UdpSocket placeholder;
    placeholder.bind(Address::from("127.0.0.1", 0));
    closed = placeholder.local_address();
  }
  UdpSocket sender;
  sender.connect(closed);
  sender.send("anyone?");
  PollLoop loop("sender");
  loop.add(sender.fd(), POLLIN, [](short) { return PollLoop::Next::Continue; });
  loop.wait_ms(1000);  // POLLERR once the ICMP error is queued
  try {
    sender.try_recv();
    FAIL() << "no exception";
  } catch (const SystemError& e) {
    EXPECT_EQ(e.error_number(), ECONNREFUSED);
  }
}

// ---- LatencyHistogram and HostTiming ------------------------------------------------------

TEST(LatencyHistogram, NearestRankPercentiles) {
  LatencyHistogram h;
  EXPECT_EQ(h.percentile(0.5), 0u);
  for (uint64_t v = 1; v <= 1000; ++v) h.add(v);
  EXPECT_EQ(h.percentile(0.5), 500u);   // rank 500
  EXPECT_EQ(h.percentile(0.99), 990u);  // rank 990
  EXPECT_EQ(h.percentile(0.999), 999u);
  EXPECT_EQ(h.max(), 1000u);
  h.add(2'500'123);  // coarse range: reported at its ms bucket's top, capped by the max
  EXPECT_EQ(h.percentile(1.0), 2'500'123u);
  EXPECT_EQ(h.count(), 1001u);
}

TEST(LatencyHistogram, CoarseValuesReportTheirMillisecondBucketsTop) {
  LatencyHistogram h;
  for (int i = 0; i < 98; ++i) h.add(10);
  h.add(70'250);   // ms bucket 70: reported as 70'999, unless that is above the max
  h.add(200'000'000);  // beyond 120 s: the overflow bucket, reported as the max
  EXPECT_EQ(h.percentiles({0.5, 0.99, 1.0}), (std::vector<uint64_t>{10, 70'999, 200'000'000}));
}

TEST(LatencyHistogram, AReversedIntervalAddsZeroAndIsCounted) {
  LatencyHistogram h;
  h.add_interval(1'000, 1'250);
  h.add_interval(2'000, 1'990);
  EXPECT_EQ(h.count(), 2u);
  EXPECT_EQ(h.max(), 250u);
  EXPECT_EQ(h.percentile(0.5), 0u);
  EXPECT_EQ(h.reversed(), 1u);
}

TEST(HostTiming, ASendAnswersTheEarliestArrivalStillWaiting) {
  HostTiming t("ACK -> data");
  EXPECT_FALSE(t.awaiting_send());
  t.sent(5'000);  // nothing waited: a send no arrival allowed (a timeout's, say)
  EXPECT_EQ(t.arrival_to_send().count(), 0u);
  t.allowed_by(1'000);
  t.allowed_by(1'300);  // read in the same round: the send answers the first
  EXPECT_TRUE(t.awaiting_send());
  t.sent(1'450);
  t.sent(1'500);  // the rest of the flight answers nothing more
  EXPECT_FALSE(t.awaiting_send());
  EXPECT_EQ(t.arrival_to_send().count(), 1u);
  EXPECT_EQ(t.arrival_to_send().max(), 450u);
  t.allowed_by(2'000);
  t.forget();  // the window closed again: that ACK allowed nothing
  t.allowed_by(3'000);
  t.sent(3'020);
  EXPECT_EQ(t.arrival_to_send().count(), 2u);
  EXPECT_EQ(t.arrival_to_send().percentile(0.5), 20u);
}

TEST(HostTiming, ArrivalsWithoutAKernelTimestampAreCountedNotGuessed) {
  HostTiming t("data -> ACK");
  t.allowed_by(0);
  EXPECT_FALSE(t.awaiting_send());
  t.answered(0, 7'000);
  t.answered(6'000, 6'040);
  EXPECT_EQ(t.arrival_to_send().count(), 1u);
  EXPECT_NE(t.json().str().find("\"arrivals_without_timestamp\": 2"), std::string::npos);
}

TEST(HostTiming, WritesPercentilesOfBothKinds) {
  HostTiming t("ACK -> data");
  for (uint64_t late = 1; late <= 100; ++late) t.woke(10'000, 10'000 + late);
  t.woke(20'000, 19'999);  // a poll cut short: 0, and counted
  t.answered(500, 530);
  EXPECT_EQ(t.json().str(),
            "{\n"
            "  \"wakeup_lateness_us\": {\n"
            "    \"p50\": 50,\n    \"p90\": 90,\n    \"p99\": 99,\n"
            "    \"max\": 100,\n    \"count\": 101\n  },\n"
            "  \"arrival_to_send_us\": {\n"
            "    \"p50\": 30,\n    \"p90\": 30,\n    \"p99\": 30,\n"
            "    \"max\": 30,\n    \"count\": 1\n  },\n"
            "  \"arrival_to_send\": \"ACK -> data\",\n"
            "  \"arrivals_without_timestamp\": 0,\n"
            "  \"negative_intervals\": 1\n"
            "}\n");
}

TEST(HostTiming, KernelReceiveTimeAndTheSendClockAreOneClock) {
  // SO_TIMESTAMPNS stamps CLOCK_REALTIME; epoch_us() must read the same clock, or every
  // arrival-to-send interval would be the difference of two clocks.
  UdpSocket receiver;
  receiver.bind(Address::from("127.0.0.1", 0));
  UdpSocket sender;
  sender.sendto(receiver.local_address(), "ack");
  const ReceivedDatagram d = receiver.recv();
  HostTiming t("ACK -> data");
  t.allowed_by(d.kernel_timestamp_us);
  t.sent(epoch_us());
  ASSERT_EQ(t.arrival_to_send().count(), 1u);
  EXPECT_LT(t.arrival_to_send().max(), 1'000'000u);
  EXPECT_EQ(t.arrival_to_send().reversed(), 0u);
}

// ---- JsonObject --------------------------------------------------------------------------

TEST(JsonObject, PrintsMembersInOrderIndentedAndNested) {
  JsonObject inner;
  inner.add("min", 1.5).add("none", std::optional<double>{});
  JsonObject o;
  o.add("name", "a\"b\\c\n\x01").add("count", uint64_t{3}).add("neg", int64_t{-2})
      .add("ok", true).add("inner", inner).add("empty", JsonObject{})
      .add_array("list", std::vector<uint64_t>{1, 2});
  EXPECT_EQ(o.str(),
            "{\n"
            "  \"name\": \"a\\\"b\\\\c\\n\\u0001\",\n"
            "  \"count\": 3,\n"
            "  \"neg\": -2,\n"
            "  \"ok\": true,\n"
            "  \"inner\": {\n"
            "    \"min\": 1.5,\n"
            "    \"none\": null\n"
            "  },\n"
            "  \"empty\": {},\n"
            "  \"list\": [1, 2]\n"
            "}\n");
}

TEST(JsonObject, NumbersAreShortestThatReadBackAndNonFiniteIsNull) {
  EXPECT_EQ(JsonObject::number(0.35), "0.35");
  EXPECT_EQ(JsonObject::number(1e-7), "1e-07");
  EXPECT_EQ(JsonObject::number(0.1 + 0.2), "0.30000000000000004");  // 15 digits would not read back
  EXPECT_EQ(JsonObject::number(std::nan("")), "null");
  EXPECT_EQ(JsonObject::number(HUGE_VAL), "null");
}

namespace {
std::string temp_dir() {
  char name[] = "/tmp/util_test.XXXXXX";
  const char* dir = ::mkdtemp(name);
  if (dir == nullptr) throw std::runtime_error("mkdtemp");
  return dir;
}
std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
}  // namespace

TEST(JsonObject, WriteFileReplacesAtomicallyAndLeavesNoTemporary) {
  const std::string dir = temp_dir();
  const std::string path = dir + "/stats.json";
  JsonObject().add("version", uint64_t{1}).write_file(path);
  JsonObject().add("version", uint64_t{2}).write_file(path);
  EXPECT_EQ(slurp(path), "{\n  \"version\": 2\n}\n");
  EXPECT_NE(::access((path + ".tmp").c_str(), F_OK), 0);
  ::unlink(path.c_str());
  ::rmdir(dir.c_str());
}

TEST(JsonObject, WriteFileIntoMissingFolderNamesThePath) {
  try {
    JsonObject().add("x", 1).write_file("/nonexistent-folder/stats.json");
    FAIL() << "no exception";
  } catch (const SystemError& e) {
    EXPECT_EQ(e.error_number(), ENOENT);
    EXPECT_NE(std::string(e.what()).find("/nonexistent-folder/stats.json"), std::string::npos);
  }
  EXPECT_THROW(JsonObject::check_writable("/nonexistent-folder/stats.json"), std::runtime_error);
}

// ---- SignalFd ----------------------------------------------------------------------------

TEST(SignalFd, DeliversTheSignalAsDataAndNeverBlocks) {
  SignalFd stop;
  EXPECT_FALSE(stop.read_signal().has_value());
  EXPECT_FALSE(stop.triggered());
  ASSERT_EQ(::raise(SIGTERM), 0);  // blocked: queued for the descriptor, not fatal
  PollLoop loop("signalfd");
  int seen = 0;
  loop.add(stop.fd(), POLLIN, [&](short) {
    seen = stop.read_signal().value_or(0);
    return PollLoop::Next::Stop;
  });
  const PollLoop::Outcome outcome = loop.wait_ms(1000);
  EXPECT_TRUE(outcome.stopped);
  EXPECT_EQ(seen, SIGTERM);
  EXPECT_EQ(stop.last_signal(), SIGTERM);
  EXPECT_FALSE(stop.read_signal().has_value());
}

TEST(SignalFd, TriggeredDrainsAndRemembers) {
  SignalFd stop({SIGUSR1});
  ASSERT_EQ(::raise(SIGUSR1), 0);
  EXPECT_TRUE(stop.triggered());
  EXPECT_TRUE(stop.triggered());  // remembered after the queue is empty
  EXPECT_EQ(stop.last_signal(), SIGUSR1);
}

TEST(SignalFd, RestoresTheSignalMask) {
  sigset_t before;
  ::pthread_sigmask(SIG_SETMASK, nullptr, &before);
  ASSERT_FALSE(sigismember(&before, SIGUSR2));
  {
    SignalFd watch({SIGUSR2});
    sigset_t during;
    ::pthread_sigmask(SIG_SETMASK, nullptr, &during);
    EXPECT_TRUE(sigismember(&during, SIGUSR2));
  }
  sigset_t after;
  ::pthread_sigmask(SIG_SETMASK, nullptr, &after);
  EXPECT_FALSE(sigismember(&after, SIGUSR2));
}

// ---- PollLoop ----------------------------------------------------------------------------

namespace {
struct Pipe {
  int fds[2] = {-1, -1};
  Pipe() {
    if (::pipe(fds) != 0) throw std::runtime_error("pipe");
  }
  ~Pipe() {
    ::close(fds[0]);
    ::close(fds[1]);
  }
  void put() { ASSERT_EQ(::write(fds[1], "x", 1), 1); }
};
}  // namespace

TEST(PollLoop, TimesOutWithNothingReady) {
  Pipe p;
  PollLoop loop("pipe");
  bool called = false;
  loop.add(p.fds[0], POLLIN, [&](short) {
    called = true;
    return PollLoop::Next::Continue;
  });
  const uint64_t start = monotonic_us();
  const PollLoop::Outcome outcome = loop.wait_us(3000);
  EXPECT_EQ(outcome.ready, 0);
  EXPECT_FALSE(outcome.stopped);
  EXPECT_FALSE(called);
  EXPECT_GE(monotonic_us() - start, 3000u);
}

TEST(PollLoop, RunsReadyCallbacksInOrderAndStopEndsTheRound) {
  Pipe first, second, third;
  PollLoop loop("pipes");
  std::vector<int> order;
  loop.add(first.fds[0], POLLIN, [&](short revents) {
    EXPECT_TRUE(revents & POLLIN);
    order.push_back(1);
    return PollLoop::Next::Continue;
  });
  loop.add(second.fds[0], POLLIN, [&](short) {
    order.push_back(2);
    return PollLoop::Next::Stop;
  });
  loop.add(third.fds[0], POLLIN, [&](short) {
    order.push_back(3);
    return PollLoop::Next::Continue;
  });
  third.put();
  first.put();
  PollLoop::Outcome outcome = loop.wait_ms(0);
  EXPECT_EQ(outcome.ready, 2);
  EXPECT_FALSE(outcome.stopped);
  EXPECT_EQ(order, (std::vector<int>{1, 3}));
  order.clear();
  second.put();
  outcome = loop.wait_ms(-1);
  EXPECT_TRUE(outcome.stopped);
  EXPECT_EQ(order, (std::vector<int>{1, 2}));  // 3 is still readable but waits
}

// ---- ArgParser ---------------------------------------------------------------------------

namespace {
struct Parsed {
  std::string host;
  uint64_t port = 0;
  std::optional<double> rate;
  std::optional<std::string> log;
  bool debug = false;
  std::string mode = "a";
};

ArgParser parser_for(Parsed& p) {
  ArgParser parser("prog", "", "Says what it does.");
  parser.text("--host", "H", "where to", &p.host, Need::Required)
      .integer("--port", "P", "port", &p.port, 1, 65535, Need::Required)
      .number("--rate", "R", "Mbit/s", &p.rate, 0, 1e6)
      .text("--log", "FILE", "log file", &p.log)
      .flag("--debug", "say more", &p.debug)
      .custom("--mode", "a|b", "a mode", Need::Optional, [&p](const std::string& v) {
        if (v != "a" && v != "b") throw std::invalid_argument("'" + v + "' is not a or b");
        p.mode = v;
      });
  return parser;
}

std::string error_of(std::vector<std::string> args) {
  Parsed p;
  args.insert(args.begin(), "prog");
  try {
    parser_for(p).parse(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(ArgParser, AcceptsBothSpellingsOfAValue) {
  Parsed p;
  ASSERT_TRUE(parser_for(p).parse(std::vector<std::string>{
      "prog", "--host", "10.0.0.1", "--port=9000", "--rate", "2.5", "--log=x=y", "--debug",
      "--mode", "b"}));
  EXPECT_EQ(p.host, "10.0.0.1");
  EXPECT_EQ(p.port, 9000u);
  EXPECT_EQ(p.rate, 2.5);
  EXPECT_EQ(p.log, "x=y");
  EXPECT_TRUE(p.debug);
  EXPECT_EQ(p.mode, "b");
}

TEST(ArgParser, LeavesOptionalValuesAlone) {
  Parsed p;
  ASSERT_TRUE(parser_for(p).parse(std::vector<std::string>{"prog", "--port", "1", "--host=h"}));
  EXPECT_FALSE(p.rate.has_value());
  EXPECT_FALSE(p.log.has_value());
  EXPECT_FALSE(p.debug);
  EXPECT_EQ(p.mode, "a");
}

TEST(ArgParser, EveryErrorNamesTheFlag) {
  EXPECT_EQ(error_of({"--port", "1"}), "--host is required");
  EXPECT_EQ(error_of({"--host", "h"}), "--port is required");
  EXPECT_EQ(error_of({"--host", "h", "--port", "1", "--colour", "red"}),
            "unknown option '--colour'");
  EXPECT_EQ(error_of({"--host", "h", "--port", "1", "--host", "g"}), "--host given twice");
  EXPECT_EQ(error_of({"--port", "1", "--host"}), "--host needs a value");
  EXPECT_EQ(error_of({"--port", "1", "--host="}), "--host needs a non-empty value");
  EXPECT_EQ(error_of({"--host", "h", "--port", "1", "--debug=yes"}), "--debug takes no value");
  EXPECT_EQ(error_of({"--host", "h", "--port", "0"}), "--port '0' is not a whole number in 1..65535");
  EXPECT_EQ(error_of({"--host", "h", "--port", "-5"}),
            "--port '-5' is not a whole number in 1..65535");
  EXPECT_EQ(error_of({"--host", "h", "--port", "70000"}),
            "--port '70000' is not a whole number in 1..65535");
  EXPECT_EQ(error_of({"--host", "h", "--port", "99999999999999999999999"}),
            "--port '99999999999999999999999' is not a whole number in 1..65535");
  EXPECT_EQ(error_of({"--host", "h", "--port", "1", "--rate", "0"}),
            "--rate '0' is not a number above 0 and at most 1e+06");
  EXPECT_EQ(error_of({"--host", "h", "--port", "1", "--rate", "inf"}),
            "--rate 'inf' is not a number above 0 and at most 1e+06");
  EXPECT_EQ(error_of({"--host", "h", "--port", "1", "--rate", "3x"}),
            "--rate '3x' is not a number above 0 and at most 1e+06");
  EXPECT_EQ(error_of({"--host", "h", "--port", "1", "--mode", "c"}), "--mode: 'c' is not a or b");
}

TEST(ArgParser, HelpStopsParsingAndUsageListsEveryOption) {
  Parsed p;
  ArgParser parser = parser_for(p);
  EXPECT_FALSE(parser.parse(std::vector<std::string>{"prog", "--port", "1", "--help"}));
  EXPECT_FALSE(parser_for(p).parse(std::vector<std::string>{"prog", "-h"}));
  const std::string usage = parser.usage();
  EXPECT_EQ(usage.rfind("usage: prog --host H --port P [--rate R] [--log FILE] [--debug] "
                        "[--mode a|b]\n", 0), 0u) << usage;
  for (const char* word : {"--host H", "where to (required)", "--debug", "say more",
                           "Says what it does."}) {
    EXPECT_NE(usage.find(word), std::string::npos) << word;
  }
  ArgParser custom("prog", "(--a | --b) ...", "");
  EXPECT_EQ(custom.usage(), "usage: prog (--a | --b) ...\n");
}

namespace {
// parse_or_exit_status() on `args` (program first): its result, what went to stdout, stderr.
struct MainStart {
  std::optional<int> status;
  std::string out, err;
};
MainStart start_main(std::vector<std::string> args, const std::function<void()>& check = nullptr) {
  Parsed p;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  std::ostringstream out, err;
  ArgParser parser = parser_for(p);
  MainStart r;
  r.status = parser.parse_or_exit_status(static_cast<int>(argv.size()), argv.data(), check,
                                         out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}
}  // namespace

TEST(ArgParser, AMainGoesOnAfterAGoodCommandLineAndItsChecks) {
  bool checked = false;
  const MainStart r = start_main({"prog", "--host", "h", "--port", "1"}, [&] { checked = true; });
  EXPECT_FALSE(r.status.has_value());
  EXPECT_TRUE(checked);
  EXPECT_EQ(r.out + r.err, "");
}

TEST(ArgParser, AMainAskedForHelpPrintsTheUsageAndEndsWithZero) {
  bool checked = false;
  const MainStart r = start_main({"prog", "--help"}, [&] { checked = true; });
  EXPECT_EQ(r.status, std::optional<int>(0));
  EXPECT_FALSE(checked);
  Parsed p;
  EXPECT_EQ(r.out, parser_for(p).usage());
  EXPECT_EQ(r.err, "");
}

TEST(ArgParser, AMainWithABadCommandLineExplainsAndEndsWithTwo) {
  Parsed p;
  const std::string usage = parser_for(p).usage();
  MainStart r = start_main({"prog", "--port", "1"});
  EXPECT_EQ(r.status, std::optional<int>(2));
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "prog: --host is required\n" + usage);
  r = start_main({"prog", "--host", "h", "--port", "1"},
                 [] { throw UsageError("--host and --port disagree"); });
  EXPECT_EQ(r.status, std::optional<int>(2));
  EXPECT_EQ(r.err, "prog: --host and --port disagree\n" + usage);
  // Only a UsageError is a bad command line: anything else is the program's to handle.
  EXPECT_THROW(start_main({"prog", "--host", "h", "--port", "1"},
                          [] { throw std::runtime_error("not a usage error"); }),
               std::runtime_error);
}

TEST(ArgParser, JoinKeepsTheWholeCommandLine) {
  EXPECT_EQ(ArgParser::join({"prog", "--a", "1"}), "prog --a 1");
}

TEST(ArgParser, ARepeatableOptionTakesEveryValueInOrder) {
  std::vector<std::string> seen;
  ArgParser parser("prog", "", "");
  parser.custom("--param", "K=V", "repeatable", Need::Repeatable,
                [&seen](const std::string& v) { seen.push_back(v); });
  ASSERT_TRUE(parser.parse(std::vector<std::string>{"prog", "--param", "a=1", "--param=b=2"}));
  EXPECT_EQ(seen, (std::vector<std::string>{"a=1", "b=2"}));
}
