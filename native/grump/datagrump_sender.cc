#include "datagrump_sender.hh"

#include <algorithm>
#include <optional>

#include "clock.hh"
#include "contest_message.hh"
#include "poll_loop.hh"
#include "system_error.hh"

namespace netrepro::grump {

namespace {
// Linux reports an ICMP error (e.g. port unreachable) on the next call on a
// connected UDP socket. With no receiver yet that is expected, not fatal.
bool is_icmp_error(const SystemError& e) {
  return e.error_number() == ECONNREFUSED || e.error_number() == EHOSTUNREACH ||
         e.error_number() == ENETUNREACH;
}
}  // namespace

DatagrumpSender::DatagrumpSender(const Address& peer, Controller& controller,
                                 std::ostream* ack_log, std::ostream* debug)
    : controller_(controller), ack_log_(ack_log), debug_(debug) {
  socket_.connect(peer);
}

bool DatagrumpSender::window_is_open() {
  const unsigned int window = controller_.window_size();
  if (debug_ != nullptr) {
    *debug_ << "At time " << epoch_ms() << " window size is " << window << '\n';
  }
  return sequence_number_ - next_ack_expected_ < window;
}

void DatagrumpSender::send_datagram(bool after_timeout) {
  const uint64_t now_us = epoch_us();
  const uint64_t send_ts = now_us / 1000;
  timing_.sent(now_us);  // answers the ACK that opened the window, if one waits
  const ContestMessage message = ContestMessage::data(sequence_number_, send_ts);
  const std::string wire = message.serialize();
  // A pending ICMP error makes send() fail once without sending; try again
  // so the sequence stays gap-free when the error was only a report.
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      socket_.send(wire);
      break;
    } catch (const SystemError& e) {
      if (!is_icmp_error(e)) {
        throw;
      }
      ++counters_.icmp_errors;
    }
  }
  // Counted as sent either way: like a loss in the network, the window will see it.
  ++sequence_number_;
  ++counters_.datagrams_sent;
  if (after_timeout) {
    ++counters_.timeouts;
  }
  controller_.datagram_was_sent(message.header().sequence_number, send_ts, after_timeout);
  if (debug_ != nullptr) {
    *debug_ << "At time " << send_ts << " sent datagram " << message.header().sequence_number
            << " (timeout = " << after_timeout << ")\n";
  }
}

void DatagrumpSender::receive_ack() {
  std::optional<ReceivedDatagram> waiting;
  try {
    waiting = socket_.try_recv();
  } catch (const SystemError& e) {
    if (!is_icmp_error(e)) {
      throw;
    }
    ++counters_.icmp_errors;
    return;
  }
  if (!waiting) {
    return;  // nothing after all (a spurious wake-up)
  }
  const ReceivedDatagram& received = *waiting;
  // Kernel receive time in ms on CLOCK_REALTIME, as datagrump's recd.timestamp.
  const uint64_t arrival =
      received.kernel_timestamp_us != 0 ? received.kernel_timestamp_us / 1000 : epoch_ms();
  std::optional<ContestMessage> ack;
  try {
    ack = ContestMessage::parse(received.payload);
  } catch (const MalformedDatagram&) {
    ++counters_.malformed_datagrams;
    return;
  }
  if (!ack->is_ack()) {
    ++counters_.malformed_datagrams;  // datagrump throws here; we count and go on
    return;
  }
  const ContestHeader& h = ack->header();
  next_ack_expected_ = std::max(next_ack_expected_, h.ack_sequence_number + 1);
  // The loop sends next if this ACK opened the window; if it did not, it forgets it.
  timing_.allowed_by(received.kernel_timestamp_us);
  const uint64_t rtt = arrival >= h.ack_send_timestamp ? arrival - h.ack_send_timestamp : 0;
  ++counters_.acks_received;
  counters_.rtts_ms.push_back(rtt);
  controller_.ack_received(h.ack_sequence_number, h.ack_send_timestamp, h.ack_recv_timestamp,
                           arrival);
  if (debug_ != nullptr) {
    *debug_ << "At time " << arrival << " received ack for datagram " << h.ack_sequence_number
            << " (send @ time " << h.ack_send_timestamp << ", received @ time "
            << h.ack_recv_timestamp << " by receiver's clock)\n";
  }
  if (ack_log_ != nullptr) {
    *ack_log_ << arrival << ' ' << h.ack_sequence_number << ' ' << rtt << ' '
              << controller_.window_size() << '\n';
  }
}

void DatagrumpSender::run(uint64_t duration_ms, SignalFd& stop) {
  const uint64_t deadline = monotonic_ms() + duration_ms;
  PollLoop loop("sender socket and signalfd");
  // The signal first: once asked to stop, no more ACKs are read.
  loop.add(stop.fd(), POLLIN, [&](short) {
    if (!stop.read_signal()) {
      return PollLoop::Next::Continue;
    }
    counters_.stopped_by_signal = true;
    return PollLoop::Next::Stop;
  });
  loop.add(socket_.fd(), POLLIN, [this](short revents) {
    if (revents & (POLLIN | POLLERR)) {
      receive_ack();
    }
    return PollLoop::Next::Continue;
  });

  while (true) {
    // Close the window; the window is asked again after every send.
    while (window_is_open() && monotonic_ms() < deadline) {
      send_datagram(false);
    }
    timing_.forget();  // an ACK read but followed by no send did not open the window
    const uint64_t now_us = monotonic_us();
    const uint64_t now = now_us / 1000;
    if (now >= deadline) {
      return;
    }
    const unsigned int timeout = controller_.timeout_ms();
    const uint64_t remaining = deadline - now;
    const bool cut_by_deadline = remaining < timeout;
    const uint64_t wait_ms = std::min<uint64_t>(timeout, remaining);
    const PollLoop::Outcome outcome = loop.wait_ms(static_cast<int>(wait_ms));
    if (outcome.stopped) {
      return;
    }
    if (outcome.ready == 0 && wait_ms > 0) {  // a zero timeout asked for no wake-up
      timing_.woke(now_us + wait_ms * 1000, monotonic_us());
    }
    if (outcome.ready == 0 && !cut_by_deadline) {
      send_datagram(true);  // get things moving again
    }
  }
}

}  // namespace netrepro::grump
