#include "sender_app.hh"

#include <poll.h>

#include <algorithm>
#include <iostream>

#include "clock.hh"
#include "data_datagram.hh"
#include "feedback_datagram.hh"
#include "socket_io.hh"
#include "sprout_constants.hh"
#include "system_error.hh"

namespace netrepro::sprout {

SenderApp::SenderApp(const SenderConfig& config) : config_(config) {
  socket_.connect(Address::from(config_.host, config_.port));
  socket_.set_nonblocking();
  if (!config_.log_path.empty()) {
    log_ = std::make_unique<std::ofstream>(config_.log_path, std::ios::trunc);
    if (!*log_) {
      throw SystemError("cannot write window log " + config_.log_path, errno);
    }
    *log_ << "# t_ms tick_start_ms received_or_lost next_seq queue_bytes window_bytes counts[0..7]\n";
  }
}

void SenderApp::run(SignalFd& signals) {
  start_ms_ = monotonic_ms();
  next_heartbeat_ms_ = start_ms_;  // announce ourselves at once
  const uint64_t deadline =
      config_.duration_s > 0 ? start_ms_ + static_cast<uint64_t>(config_.duration_s * 1000.0)
                             : UINT64_MAX;
  while (!signals.triggered()) {
    uint64_t now = monotonic_ms();
    if (now >= deadline) {
      break;
    }
    if (send_flight(now)) {
      next_heartbeat_ms_ = std::max(now + kHeartbeatIntervalMs, next_heartbeat_ms_);
    }
    const uint64_t poll_start_us = monotonic_us();
    now = poll_start_us / 1000;
    // Re-check the window at least every 10 ms, and wake for the heartbeat.
    const uint64_t until_heartbeat = next_heartbeat_ms_ > now ? next_heartbeat_ms_ - now : 0;
    const uint64_t until_deadline = deadline > now ? deadline - now : 0;
    const int timeout =
        static_cast<int>(std::min({until_heartbeat, kMaxPollMs, until_deadline}));
    pollfd fds[2] = {{socket_.fd(), POLLIN, 0}, {signals.fd(), POLLIN, 0}};
    const int ready = ::poll(fds, 2, timeout);
    if (ready < 0 && errno == EINTR) {
      continue;
    }
    check_syscall("poll", ready);
    if (ready == 0 && timeout > 0) {  // a zero timeout asked for no wake-up
      timing_.woke(poll_start_us + static_cast<uint64_t>(timeout) * 1000, monotonic_us());
    }
    if (fds[0].revents & (POLLIN | POLLERR)) {
      drain_socket();
    }
  }
  end_ms_ = monotonic_ms();
}

bool SenderApp::send_flight(uint64_t now_ms) {
  int64_t budget = window_.window(now_ms);
  if (budget <= 0) {
    timing_.forget();  // a forecast noted as opening the window opens it no more
  }
  if (budget <= 0 && now_ms < next_heartbeat_ms_) {
    return false;
  }
  last_window_ = budget;
  if (budget <= 0) {
    return send_datagram(0, static_cast<uint16_t>(kHeartbeatIntervalMs), now_ms);
  }
  bool sent = false;
  ++flights_;
  while (budget > 0) {
    const auto size = static_cast<uint16_t>(std::min<int64_t>(budget, kMaxPayloadBytes));
    budget -= size;
    // The last packet of a flight says "nothing more for up to 50 ms".
    const uint16_t time_to_next = budget == 0 ? static_cast<uint16_t>(kHeartbeatIntervalMs) : 0;
    if (!send_datagram(size, time_to_next, now_ms)) {
      break;  // socket buffer full: the rest waits for the next check
    }
    sent = true;
  }
  return sent;
}

bool SenderApp::send_datagram(uint16_t payload_bytes, uint16_t time_to_next_ms,
                              uint64_t now_ms) {
  DataDatagram d;
  d.seq = next_seq_;
  d.time_to_next_ms = time_to_next_ms;
  d.payload_length = payload_bytes;
  d.send_time_us = monotonic_us();
  // If the send fails for a full buffer the same seq is registered again on
  // the retry; a duplicate entry does not change any throwaway window.
  d.throwaway_window = throwaway_.add(d.seq, now_ms);
  const std::string wire = d.encode();
  if (!send_or_full(socket_, wire, "sprout-sender", socket_full_, send_errors_)) {
    return false;
  }
  if (payload_bytes > 0 && timing_.awaiting_send()) {
    timing_.sent(epoch_us());
  }
  next_seq_ += payload_bytes + kSeqOverheadBytes;
  window_.on_send(payload_bytes, now_ms);
  udp_bytes_ += wire.size();
  payload_bytes_ += payload_bytes;
  if (payload_bytes == 0) {
    ++heartbeats_;
  } else {
    ++data_datagrams_;
  }
  return true;
}

void SenderApp::drain_socket() {
  while (const std::optional<ReceivedDatagram> datagram = next_datagram(socket_)) {
    FeedbackDatagram feedback;
    try {
      feedback = FeedbackDatagram::decode(datagram->payload);
    } catch (const std::invalid_argument& e) {
      if (malformed_++ == 0) {
        std::cerr << "sprout-sender: ignoring datagram: " << e.what() << "\n";
      }
      continue;
    }
    const uint64_t now = monotonic_ms();
    // One forecast per receiver tick: an older or repeated tick is a reordered duplicate.
    if (forecasts_received_ > 0 && feedback.forecast.tick_start_ms <= last_forecast_tick_) {
      ++stale_forecasts_;
      continue;
    }
    last_forecast_tick_ = feedback.forecast.tick_start_ms;
    if (forecasts_received_++ == 0) {
      first_forecast_after_ms_ = static_cast<int64_t>(now - start_ms_);
    }
    window_.on_forecast(feedback.forecast, now, next_seq_);
    const int64_t w = window_.window(now);
    if (w > 0) {
      timing_.allowed_by(datagram->kernel_timestamp_us);
    }
    max_window_ = std::max(max_window_, w);
    window_sum_ += static_cast<double>(w);
    if (log_) {
      *log_ << now - start_ms_ << ' ' << feedback.forecast.tick_start_ms << ' '
            << feedback.forecast.received_or_lost << ' ' << next_seq_ << ' '
            << window_.queue_estimate() << ' ' << w;
      for (uint32_t c : feedback.forecast.counts) {
        *log_ << ' ' << c;
      }
      *log_ << '\n';
    }
  }
}

JsonObject SenderApp::stats() const {
  const uint64_t end = end_ms_ ? end_ms_ : monotonic_ms();
  const double seconds = static_cast<double>(end - start_ms_) / 1000.0;
  JsonObject json;
  json.add("host", config_.host)
      .add("port", static_cast<int>(config_.port))
      .add("duration_s", seconds)
      .add("payload_bytes_sent", payload_bytes_)
      .add("udp_bytes_sent", udp_bytes_)
      .add("data_datagrams_sent", data_datagrams_)
      .add("heartbeats_sent", heartbeats_)
      .add("flights", flights_)
      .add("forecasts_received", forecasts_received_)
      .add("stale_forecasts_ignored", stale_forecasts_)
      .add("malformed_datagrams", malformed_)
      .add("socket_full_events", socket_full_)
      .add("send_errors", send_errors_)
      .add("first_forecast_after_ms", first_forecast_after_ms_)
      .add("last_window_bytes", last_window_)
      .add("max_window_bytes", max_window_)
      .add("mean_window_bytes_at_forecast",
           forecasts_received_ ? window_sum_ / static_cast<double>(forecasts_received_) : 0.0)
      .add("send_rate_mbit_s",
           seconds > 0 ? static_cast<double>(payload_bytes_) * 8 / seconds / 1e6 : 0.0)
      .add("host_timing", timing_.json());
  return json;
}

}  // namespace netrepro::sprout
