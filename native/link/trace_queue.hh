// A bottleneck queue served by delivery opportunities, with mahimahi mm-link semantics:
// each opportunity carries 1504 bytes; packets are split across opportunities and small ones
// share one; unused budget is wasted; a packet departs at the scheduled time of the opportunity
// carrying its last byte, and only opportunities strictly after its arrival can serve it.
// Clock-free: the caller passes the current time, so tests can drive it with a fake clock.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "codel.hh"
#include "drop_observer.hh"
#include "link_events.hh"
#include "opportunity_schedule.hh"
#include "packet.hh"
#include "queue_spec.hh"

namespace netrepro {

struct Departure {
  Packet packet;
  uint64_t departure_us = 0;  // scheduled time of the opportunity that carried the last byte
};

struct TraceQueueCounters {
  uint64_t arrivals = 0, arrival_bytes = 0;
  uint64_t drops = 0, drop_bytes = 0;  // every drop: at enqueue (droptail) or dequeue
  uint64_t dequeue_drops = 0, dequeue_drop_bytes = 0;  // the ones at dequeue (CoDel)
  uint64_t departures = 0, departure_bytes = 0;
  // The most the queue ever held (waiting packets and the rest of the one in transit): what
  // a bounded queue's limit kept the emulator's memory to.
  uint64_t max_queued_bytes = 0, max_queued_packets = 0;
  uint64_t opportunities = 0, opportunity_bytes = 0;
  // Arrivals once service is over (a `once` trace or the span ended): neither logged nor
  // queued, as mahimahi's shell has exited by then; counted so nothing disappears unseen.
  uint64_t after_service = 0, after_service_bytes = 0;
  // ECN, for every queue kind: arrivals by their ECN field on arrival, CE marks this queue set,
  // and drops of ECN-capable packets (ECT or CE); the other drops were Not-ECT.
  uint64_t arrivals_not_ect = 0, arrivals_ect0 = 0, arrivals_ect1 = 0, arrivals_ce = 0;
  uint64_t ecn_marks = 0;
  uint64_t drops_ecn_capable = 0;
};

class TraceQueue {
 public:
  // `events` may be null; it must outlive the queue. When `report_every_opportunity` is false
  // and the queue is idle, opportunities are counted in bulk instead of one event each.
  TraceQueue(OpportunitySchedule schedule, QueueSpec spec, LinkEvents* events,
             bool report_every_opportunity = true);

  // Serves every opportunity at or before now_us, appending finished packets to `out`.
  void advance(uint64_t now_us, std::vector<Departure>& out);
  // Advances to now_us, then enqueues (or drops) the packet; returns false when dropped or
  // when service is over. An ECN queue marks an ECT packet CE when the backlog it finds (the
  // packets waiting, as droptail counts them: not the one in transit) is above K.
  bool enqueue(Packet packet, uint64_t now_us, std::vector<Departure>& out);
  // Tells `observer` (may be null; it must outlive the queue) of every dropped packet.
  void observe_drops(DropObserver* observer) { drop_observer_ = observer; }

  // When the next opportunity that has something to carry happens (kNever if idle/finished).
  uint64_t next_busy_us() const;
  // No opportunity will ever come again.
  bool service_over() const { return schedule_.finished(); }
  uint64_t queued_packets() const { return queue_.size() + (in_transit_left_ > 0 ? 1 : 0); }
  // Bytes waiting: queued packets plus what is left of the one in transit.
  uint64_t queued_bytes() const { return queue_bytes_ + in_transit_left_; }
  const TraceQueueCounters& counters() const { return counters_; }

 private:
  void serve_one_opportunity(std::vector<Departure>& out);
  // The next packet to put in transit at `when`, or nothing (the AQM may drop some first).
  std::optional<Packet> take_next(uint64_t when);
  void count_drop(const Packet& p, uint64_t when, bool at_dequeue);

  OpportunitySchedule schedule_;
  QueueSpec spec_;
  LinkEvents* events_;
  DropObserver* drop_observer_ = nullptr;
  bool report_every_opportunity_;
  std::deque<Packet> queue_;
  uint64_t queue_bytes_ = 0;  // bytes in queue_ (not the packet in transit)
  Packet in_transit_;
  uint64_t in_transit_left_ = 0;
  TraceQueueCounters counters_;
  std::optional<Codel> codel_;  // set for a CoDel queue
  std::vector<Packet> dropped_;  // scratch for CoDel's drops
};

}  // namespace netrepro
