#include "receiver_app.hh"

#include <poll.h>

#include <algorithm>
#include <chrono>
#include <iostream>

#include "clock.hh"
#include "data_datagram.hh"
#include "ewma_estimator.hh"
#include "feedback_datagram.hh"
#include "json_writer.hh"
#include "socket_io.hh"
#include "sprout_estimator.hh"
#include "system_error.hh"

namespace netrepro::sprout {

ReceiverApp::ReceiverApp(const ReceiverConfig& config) : config_(config) {
  if (!config_.ewma) {
    const uint64_t start = monotonic_us();
    forecaster_ = std::make_unique<Forecaster>();
    precompute_seconds_ = static_cast<double>(monotonic_us() - start) / 1e6;
    std::cerr << "sprout-receiver: forecast tables precomputed in " << precompute_seconds_
              << " s\n";
  }
  receiver_ = fresh_receiver();
  socket_.bind(Address::from(config_.bind_host, config_.port));
  socket_.set_nonblocking();
}

std::unique_ptr<TickReceiver> ReceiverApp::fresh_receiver() const {
  std::unique_ptr<DeliveryEstimator> estimator;
  if (config_.ewma) {
    estimator = std::make_unique<EwmaEstimator>();
  } else {
    estimator = std::make_unique<SproutEstimator>(*forecaster_, config_.quantile);
  }
  return std::make_unique<TickReceiver>(std::move(estimator));
}

int ReceiverApp::poll_timeout_ms(uint64_t now_ms) const {
  if (!receiver_->started()) {
    return -1;
  }
  // The tick loop advances once now > tick_start + 20: wake just after that.
  const uint64_t due = receiver_->tick_start_ms() + kTickMs + 1;
  return due > now_ms ? static_cast<int>(std::min<uint64_t>(due - now_ms, kTickMs)) : 0;
}

void ReceiverApp::run(SignalFd& signals) {
  std::cerr << "sprout-receiver: listening on " << socket_.local_address().str() << " ("
            << receiver_->estimator().name() << ")\n";
  while (!signals.triggered()) {
    pollfd fds[2] = {{socket_.fd(), POLLIN, 0}, {signals.fd(), POLLIN, 0}};
    const uint64_t poll_start_us = monotonic_us();
    const int timeout = poll_timeout_ms(poll_start_us / 1000);
    const int ready = ::poll(fds, 2, timeout);
    if (ready < 0 && errno == EINTR) {
      continue;
    }
    check_syscall("poll", ready);
    if (ready == 0 && timeout > 0) {  // woke for the tick (a zero timeout asked for no wake-up)
      timing_.woke(poll_start_us + static_cast<uint64_t>(timeout) * 1000, monotonic_us());
    }
    if (fds[0].revents & POLLIN) {
      drain_socket();
    }
    advance_and_maybe_send(monotonic_ms());
  }
}

void ReceiverApp::drain_socket() {
  while (const std::optional<ReceivedDatagram> datagram = next_datagram(socket_)) {
    handle(*datagram, monotonic_us());
  }
}

void ReceiverApp::handle(const ReceivedDatagram& datagram, uint64_t now_us) {
  DataDatagram data;
  try {
    data = DataDatagram::decode(datagram.payload);
  } catch (const std::invalid_argument& e) {
    if (malformed_++ == 0) {
      std::cerr << "sprout-receiver: ignoring datagram from " << datagram.source.str() << ": "
                << e.what() << "\n";
    }
    return;
  }
  const uint64_t now_ms = now_us / 1000;
  if (!peer_ || peer_->str() != datagram.source.str()) {
    // A new sender (or a restarted one, on a new port) starts a new sequence
    // space and a new model; keeping the old state would corrupt both.
    if (peer_) {
      std::cerr << "sprout-receiver: new sender, starting over\n";
      receiver_ = fresh_receiver();
      last_forecast_tick_.reset();
    }
    ++senders_seen_;
    std::cerr << "sprout-receiver: sender at " << datagram.source.str() << "\n";
  }
  peer_ = datagram.source;
  last_heard_ms_ = now_ms;

  const uint64_t cpu_start = monotonic_us();
  receiver_->on_datagram(now_ms, data.seq, data.throwaway_window, data.time_to_next_ms,
                         data.payload_length);
  model_cpu_us_ += monotonic_us() - cpu_start;

  ++datagrams_;
  if (data.payload_length == 0) {
    ++heartbeats_;
  } else if (now_us >= data.send_time_us) {
    one_way_delay_us_.push_back(
        static_cast<uint32_t>(std::min<uint64_t>(now_us - data.send_time_us, UINT32_MAX)));
  }
  payload_bytes_ += data.payload_length;
  udp_bytes_ += datagram.payload.size();
  const uint64_t epoch_us = datagram.kernel_timestamp_us ? datagram.kernel_timestamp_us
                                                         : epoch_ms() * 1000;
  if (first_receive_epoch_us_ == 0) {
    first_receive_epoch_us_ = epoch_us;
  }
  last_receive_epoch_us_ = epoch_us;
}

void ReceiverApp::advance_and_maybe_send(uint64_t now_ms) {
  if (!receiver_->started()) {
    return;
  }
  const uint64_t cpu_start = monotonic_us();
  receiver_->advance(now_ms);
  const bool new_tick =
      !last_forecast_tick_ || *last_forecast_tick_ != receiver_->tick_start_ms();
  const bool associated = peer_ && now_ms - last_heard_ms_ <= kAssociationTimeoutMs;
  if (!new_tick || !associated) {
    model_cpu_us_ += monotonic_us() - cpu_start;
    return;
  }
  FeedbackDatagram feedback;
  feedback.forecast = receiver_->forecast();
  model_cpu_us_ += monotonic_us() - cpu_start;
  last_forecast_tick_ = receiver_->tick_start_ms();
  last_counts_ = feedback.forecast.counts;
  try {
    socket_.sendto(*peer_, feedback.encode());
    ++forecasts_sent_;
  } catch (const SystemError& e) {
    if (feedback_send_errors_++ == 0) {
      std::cerr << "sprout-receiver: cannot send forecast: " << e.what() << "\n";
    }
  }
}

JsonObject ReceiverApp::stats() const {
  JsonObject json;
  json.add("model", receiver_->estimator().name())
      .add("quantile", config_.quantile)
      .add("port", static_cast<int>(config_.port))
      .add("datagrams_received", datagrams_)
      .add("heartbeats_received", heartbeats_)
      .add("payload_bytes_received", payload_bytes_)
      .add("udp_bytes_received", udp_bytes_)
      .add("malformed_datagrams", malformed_)
      .add("senders_seen", senders_seen_)
      .add("forecasts_sent", forecasts_sent_)
      .add("feedback_send_errors", feedback_send_errors_);
  if (first_receive_epoch_us_) {
    json.add("first_receive_epoch_s", static_cast<double>(first_receive_epoch_us_) / 1e6)
        .add("last_receive_epoch_s", static_cast<double>(last_receive_epoch_us_) / 1e6);
  } else {
    json.add_null("first_receive_epoch_s").add_null("last_receive_epoch_s");
  }
  const uint64_t ticks = receiver_->observed_ticks() + receiver_->skipped_ticks();
  // Tick counters cover the current sender only.
  json.add("ticks_observed", receiver_->observed_ticks())
      .add("ticks_skipped", receiver_->skipped_ticks())
      .add("forecast_precompute_s", precompute_seconds_)
      .add("model_cpu_us_per_tick",
           ticks ? static_cast<double>(model_cpu_us_) / static_cast<double>(ticks) : 0.0)
      .add_array("last_counts", std::vector<uint32_t>(last_counts_.begin(), last_counts_.end()))
      .add("host_timing", timing_.json());
  // One-way delay of data datagrams; meaningful only when sender and
  // receiver read the same CLOCK_MONOTONIC (one kernel, e.g. Mininet hosts).
  if (!one_way_delay_us_.empty()) {
    std::vector<uint32_t> sorted = one_way_delay_us_;
    std::sort(sorted.begin(), sorted.end());
    double sum = 0;
    for (uint32_t d : sorted) {
      sum += d;
    }
    json.add("one_way_delay_ms_mean", sum / static_cast<double>(sorted.size()) / 1000.0)
        .add("one_way_delay_ms_p50", sorted[sorted.size() / 2] / 1000.0)
        .add("one_way_delay_ms_p95", sorted[sorted.size() * 95 / 100] / 1000.0);
  }
  return json;
}

}  // namespace netrepro::sprout
