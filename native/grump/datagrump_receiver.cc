#include "datagrump_receiver.hh"

#include <sys/socket.h>

#include <optional>

#include "clock.hh"
#include "contest_message.hh"
#include "poll_loop.hh"
#include "system_error.hh"

namespace netrepro::grump {

DatagrumpReceiver::DatagrumpReceiver(const Address& local, std::ostream* debug) : debug_(debug) {
  socket_.bind(local);
}

void DatagrumpReceiver::receive_one() {
  const std::optional<ReceivedDatagram> waiting = socket_.try_recv();
  if (!waiting) {
    return;  // nothing after all (a spurious wake-up)
  }
  const ReceivedDatagram& received = *waiting;
  // Milliseconds on CLOCK_REALTIME: datagrump counts from each program's start,
  // we count from the Unix epoch so that recv - send is a one-way delay on the
  // one clock all Mininet hosts share.
  const uint64_t recv_ms =
      received.kernel_timestamp_us != 0 ? received.kernel_timestamp_us / 1000 : epoch_ms();
  try {
    const ContestMessage message = ContestMessage::parse(received.payload);
    const uint64_t now_us = epoch_us();
    const ContestMessage ack = message.make_ack(ack_sequence_number_++, recv_ms, now_us / 1000);
    try {
      socket_.sendto(received.source, ack.serialize());
      timing_.answered(received.kernel_timestamp_us, now_us);
      ++counters_.acks_sent;
    } catch (const SystemError& e) {
      // The sender may be gone already (port unreachable); the ACK is just lost.
      if (debug_ != nullptr) {
        *debug_ << "ack to " << received.source.str() << " not sent: " << e.what() << '\n';
      }
    }
  } catch (const MalformedDatagram& e) {
    ++counters_.malformed_datagrams;
    if (debug_ != nullptr) {
      *debug_ << "ignored datagram from " << received.source.str() << ": " << e.what() << '\n';
    }
    return;
  }
  ++counters_.datagrams_received;
  counters_.bytes_received += received.payload.size();
  if (!counters_.first_receive_ms) {
    counters_.first_receive_ms = recv_ms;
  }
  counters_.last_receive_ms = recv_ms;
}

int DatagrumpReceiver::run(SignalFd& stop) {
  PollLoop loop("receiver socket and signalfd");
  int signal_number = 0;
  loop.add(stop.fd(), POLLIN, [&](short) {
    const std::optional<int> signal = stop.read_signal();
    if (!signal) {
      return PollLoop::Next::Continue;
    }
    signal_number = *signal;
    return PollLoop::Next::Stop;
  });
  loop.add(socket_.fd(), POLLIN, [this](short revents) {
    if (revents & POLLIN) {
      receive_one();
    } else if (revents & POLLERR) {
      // A pending socket error (unconnected UDP sockets rarely get one): reading
      // SO_ERROR clears it so poll does not spin.
      int error = 0;
      socklen_t length = sizeof(error);
      check_syscall("getsockopt(SO_ERROR)",
                    ::getsockopt(socket_.fd(), SOL_SOCKET, SO_ERROR, &error, &length));
    }
    return PollLoop::Next::Continue;
  });
  while (!loop.wait_ms(-1).stopped) {
  }
  return signal_number;
}

}  // namespace netrepro::grump
