// The datagrump sender loop (keithw/sourdough datagrump/sender.cc): keep
// next_seq - next_ack_expected below the controller's window, poll for ACKs
// with the controller's timeout, send one datagram after a timeout with
// nothing received. No retransmissions. Runs for a fixed time or until
// SIGINT/SIGTERM.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <vector>

#include "controller.hh"
#include "host_timing.hh"
#include "signal_fd.hh"
#include "udp_socket.hh"

namespace netrepro::grump {

struct SenderCounters {
  uint64_t datagrams_sent = 0;
  uint64_t acks_received = 0;
  uint64_t timeouts = 0;             // datagrams sent with after_timeout
  uint64_t malformed_datagrams = 0;  // replies that were not valid acks
  uint64_t icmp_errors = 0;          // e.g. port unreachable while no receiver listens
  std::vector<uint64_t> rtts_ms;     // one per ACK
  bool stopped_by_signal = false;
};

class DatagrumpSender {
 public:
  // ack_log (may be null) gets "ack_arrival_ms seq rtt_ms window" per ACK;
  // debug (may be null) gets datagrump-style trace lines.
  DatagrumpSender(const Address& peer, Controller& controller, std::ostream* ack_log,
                  std::ostream* debug);

  void run(uint64_t duration_ms, SignalFd& stop);

  const SenderCounters& counters() const { return counters_; }
  // Its timeout wake-ups against their deadlines, and each window-opening ACK's kernel
  // arrival to the datagram it let out.
  const HostTiming& timing() const { return timing_; }

 private:
  void send_datagram(bool after_timeout);
  void receive_ack();
  bool window_is_open();

  UdpSocket socket_;
  Controller& controller_;
  std::ostream* ack_log_;
  std::ostream* debug_;
  uint64_t sequence_number_ = 0;    // next outgoing
  uint64_t next_ack_expected_ = 0;  // max acked + 1
  SenderCounters counters_;
  HostTiming timing_{"ACK -> data"};
};

}  // namespace netrepro::grump
