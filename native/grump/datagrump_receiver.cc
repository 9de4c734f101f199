#include "datagrump_receiver.hh"

#include <poll.h>
#include <sys/socket.h>

#include <array>

#include "clock.hh"
#include "contest_message.hh"
#include "system_error.hh"

namespace netrepro::grump {

DatagrumpReceiver::DatagrumpReceiver(const Address& local, std::ostream* debug) : debug_(debug) {
  socket_.bind(local);
}

void DatagrumpReceiver::receive_one() {
  const ReceivedDatagram received = socket_.recv();
  // Milliseconds on CLOCK_REALTIME: datagrump counts from each program's start,
  // we count from the Unix epoch so that recv - send is a one-way delay on the
  // one clock all Mininet hosts share.
  const uint64_t recv_ms =
      received.kernel_timestamp_us != 0 ? received.kernel_timestamp_us / 1000 : epoch_ms();
  try {
    const ContestMessage message = ContestMessage::parse(received.payload);
    const ContestMessage ack = message.make_ack(ack_sequence_number_++, recv_ms, epoch_ms());
    try {
      socket_.sendto(received.source, ack.serialize());
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
  std::array<pollfd, 2> fds{};
  fds[0].fd = socket_.fd();
  fds[0].events = POLLIN;
  fds[1].fd = stop.fd();
  fds[1].events = POLLIN;
  while (true) {
    for (auto& p : fds) {
      p.revents = 0;
    }
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) {
        continue;
      }
      throw SystemError("poll(receiver socket, signalfd)", errno);
    }
    if (fds[1].revents != 0) {
      return stop.read_signal();
    }
    if (fds[0].revents & POLLIN) {
      receive_one();
    } else if (fds[0].revents & POLLERR) {
      // A pending socket error (unconnected UDP sockets rarely get one): reading
      // SO_ERROR clears it so poll does not spin.
      int error = 0;
      socklen_t length = sizeof(error);
      check_syscall("getsockopt(SO_ERROR)",
                    ::getsockopt(socket_.fd(), SOL_SOCKET, SO_ERROR, &error, &length));
    }
  }
}

}  // namespace netrepro::grump
