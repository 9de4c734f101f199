// The datagrump receiver (keithw/sourdough datagrump/receiver.cc): ACKs every
// datagram at once to its source, stamped with the kernel receive time.
// Runs until SIGINT/SIGTERM.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>

#include "host_timing.hh"
#include "signal_fd.hh"
#include "udp_socket.hh"

namespace netrepro::grump {

struct ReceiverCounters {
  uint64_t datagrams_received = 0;  // valid contest datagrams
  uint64_t bytes_received = 0;      // their UDP payload bytes
  uint64_t acks_sent = 0;
  uint64_t malformed_datagrams = 0;  // not acknowledged
  std::optional<uint64_t> first_receive_ms;
  std::optional<uint64_t> last_receive_ms;
};

class DatagrumpReceiver {
 public:
  // debug (may be null) gets one line per malformed datagram.
  DatagrumpReceiver(const Address& local, std::ostream* debug);

  Address local_address() const { return socket_.local_address(); }
  int fd() const { return socket_.fd(); }
  // Returns the signal that stopped it.
  int run(SignalFd& stop);
  // Handles one datagram that is already waiting (the loop calls this).
  void receive_one();

  const ReceiverCounters& counters() const { return counters_; }
  // Each datagram's kernel arrival to the ACK that answers it (it sets no timer).
  const HostTiming& timing() const { return timing_; }

 private:
  UdpSocket socket_;
  std::ostream* debug_;
  uint64_t ack_sequence_number_ = 0;
  ReceiverCounters counters_;
  HostTiming timing_{"data -> ACK"};
};

}  // namespace netrepro::grump
