// The running emulator: two packet sockets, one LinkDirection per direction, and the event
// loop that sleeps to the next scheduled event, reads frames in batches and sends what is due.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "departure_gaps.hh"
#include "lateness_recorder.hh"
#include "link_direction.hh"
#include "link_log.hh"
#include "options.hh"
#include "packet_socket.hh"
#include "poll_loop.hh"
#include "queue_log.hh"
#include "queue_spec.hh"
#include "signal_fd.hh"
#include "trace.hh"

namespace netrepro {

// What one direction needs before it starts: a validated trace (or a rate) and queue.
struct DirectionPlan {
  std::string name;  // "a2b" or "b2a"
  DirectionOptions options;
  std::unique_ptr<Trace> trace;  // null in fixed-rate mode
  QueueSpec queue;
  StageOrder order = StageOrder::QueueThenDelay;
};

class LinkEmulator {
 public:
  // Opens logs, lateness files and both sockets; throws SystemError naming what failed.
  LinkEmulator(const Options& options, DirectionPlan a2b, DirectionPlan b2a);
  // Runs until a signal arrives on `stop`. Flushes everything at the end.
  void run(SignalFd& stop);

 private:
  struct Direction {
    DirectionPlan plan;
    std::unique_ptr<LinkLog> log;
    std::unique_ptr<LinkDirection> link;
    std::unique_ptr<LatenessRecorder> lateness;
    std::unique_ptr<QueueLog> queue_log;  // null unless asked for
    PacketSocket* in = nullptr;
    PacketSocket* out = nullptr;
    std::vector<Release> ready;
    std::vector<const std::string*> to_send;
    std::vector<std::string> non_ip;  // forwarded at once, unqueued
    uint64_t non_ip_forwarded = 0;
    uint64_t sent = 0;
    DepartureGapCounter gaps;
    uint64_t lost_at_previous_send = 0;  // random loss's count when the last packet was sent
    // An untrusted queue's sender, not read while its queue is full (QueueSpec).
    bool unread = false;
    uint64_t unread_since_us = 0, unread_us = 0, unread_spells = 0;
  };

  void start(Direction& d, uint64_t base_ms);
  void receive(Direction& d);
  void send_due(Direction& d);
  // Bytes an untrusted queue can still take (its frames in the delay line before it count);
  // unlimited for every other queue.
  uint64_t room(const Direction& d) const;
  // Stop reading d's sender while its untrusted queue is full; read it again once not.
  void stop_reading(Direction& d, uint64_t now_us);
  void read_again_if_room(Direction& d, uint64_t now_us);
  void write_stats(bool final_write);
  // How long the loop pauses at least between wake-ups (kMinWakeIntervalUs, or finer on a fast
  // fixed-rate link whose loop is real-time).
  uint64_t min_wake_interval_us() const;
  uint64_t spin_window_us() const;

  Options options_;
  uint64_t init_ms_;
  uint64_t base_ms_ = 0;
  uint64_t end_ms_ = 0;
  PacketSocket socket_a_;
  PacketSocket socket_b_;
  Direction a2b_;
  Direction b2a_;
  bool warned_large_frame_ = false;
  std::string scheduling_ = "SCHED_OTHER (realtime not requested)";
  uint64_t min_wake_us_ = 0;  // the loop's shortest pause between wake-ups (stats)
  uint64_t spin_us_ = 0;      // how long before an event the loop stops sleeping and spins
  PollLoop* loop_ = nullptr;  // while run() runs

};

}  // namespace netrepro
