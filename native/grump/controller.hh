// The datagrump congestion-controller interface (keithw/sourdough
// datagrump/controller.hh), as an abstract class so the sender can pick one
// by name at run time. All timestamps are milliseconds on CLOCK_REALTIME.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace netrepro::grump {

class Controller {
 public:
  virtual ~Controller() = default;

  // Datagrams allowed in flight; asked before every poll and after every send.
  virtual unsigned int window_size() = 0;

  // After every send; after_timeout is true when the datagram went out because
  // timeout_ms() passed with nothing received.
  virtual void datagram_was_sent(uint64_t sequence_number, uint64_t send_timestamp,
                                 bool after_timeout) = 0;

  // Once per ACK. send and arrival stamps are on the sender's clock, recv on the
  // receiver's (the same clock inside one Mininet machine).
  virtual void ack_received(uint64_t sequence_number_acked, uint64_t send_timestamp_acked,
                            uint64_t recv_timestamp_acked, uint64_t timestamp_ack_received) = 0;

  // How long to wait for an ACK before sending one datagram anyway.
  virtual unsigned int timeout_ms() = 0;

  // The constants this controller runs with, for the stats file.
  virtual std::map<std::string, double> parameters() const = 0;
};

}  // namespace netrepro::grump
