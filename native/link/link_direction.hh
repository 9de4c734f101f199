// One direction of the link: a trace queue and a fixed delay, in either order.
// queue-delay: arrival -> queue -> delay -> out (mm-link then mm-delay, the data path);
// delay-queue: arrival -> delay -> queue -> out (the ack path of `mm-delay D mm-link DATA ACK`).
// Random loss, when set, takes packets as they leave the queue (in either order), as mm-loss
// outside mm-link does. Clock-free: the caller passes times in microseconds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "delay_line.hh"
#include "delay_stage.hh"
#include "random_loss.hh"
#include "trace_queue.hh"

namespace netrepro {

enum class StageOrder { QueueThenDelay, DelayThenQueue };

// Parses "queue-delay" / "delay-queue"; throws std::invalid_argument otherwise.
StageOrder parse_stage_order(const std::string& text);
std::string to_string(StageOrder order);

class LinkDirection {
 public:
  LinkDirection(TraceQueue queue, DelayLine delay, StageOrder order);
  // A delay stage with a delay per far host (see DelayStage).
  LinkDirection(TraceQueue queue, DelayStage delay, StageOrder order);

  // Packets leaving the queue are lost at random from now on; each lost one is told to
  // `observer` (may be null; it must outlive the direction).
  void set_loss(RandomLoss loss, LossObserver* observer);

  // A packet (with its size set) enters the direction at now_us (raised to the latest time
  // already processed, if earlier). Packets due by then are appended to `ready` with their
  // scheduled release time.
  void arrive(Packet packet, uint64_t now_us, std::vector<Release>& ready);
  // Runs every stage up to now_us, appending packets due by then to `ready`.
  void advance(uint64_t now_us, std::vector<Release>& ready);
  // The next time something happens that needs a wake-up (kNever if nothing pending).
  // Sends what the delay stage of a queue-then-delay direction has due by now, without moving
  // the queue's clock: arrivals not yet read keep their own times. Nothing in delay-queue
  // order, where a send is a queue departure.
  void release_due(uint64_t now_us, std::vector<Release>& ready);
  // When the next frame leaves this direction (is sent), as far as known now: the time the
  // loop must meet exactly. Queue departures on their way into a delay stage are not sends.
  uint64_t next_send_us() const;
  uint64_t next_event_us() const;
  // The latest time this direction has been run to.
  uint64_t time_us() const { return time_us_; }

  const TraceQueue& queue() const { return queue_; }
  const DelayStage& delay() const { return delay_; }
  StageOrder order() const { return order_; }
  const RandomLoss& loss() const { return loss_; }

 private:
  void drain_delay(uint64_t now_us, std::vector<Release>& ready);
  // Whether random loss takes this packet as it leaves the queue (counted and told if so).
  bool lost(const Departure& d);

  TraceQueue queue_;
  DelayStage delay_;
  StageOrder order_;
  RandomLoss loss_;
  LossObserver* loss_observer_ = nullptr;
  std::vector<Departure> departures_;  // scratch, reused to avoid allocations
  uint64_t time_us_ = 0;
};

}  // namespace netrepro
