#include "peer_app.hh"

#include <algorithm>
#include <iostream>

#include "clock.hh"
#include "ewma_estimator.hh"
#include "socket_io.hh"
#include "poll_loop.hh"
#include "sprout_constants.hh"
#include "sprout_estimator.hh"
#include "system_error.hh"

namespace netrepro::sprout {

PeerApp::PeerApp(const PeerConfig& config) : config_(config) {
  std::unique_ptr<DeliveryEstimator> estimator;
  if (config_.ewma) {
    estimator = std::make_unique<EwmaEstimator>();
  } else {
    const uint64_t start = monotonic_us();
    forecaster_ = std::make_unique<Forecaster>();
    precompute_seconds_ = static_cast<double>(monotonic_us() - start) / 1e6;
    estimator = std::make_unique<SproutEstimator>(*forecaster_, config_.quantile);
  }
  receiver_ = std::make_unique<TickReceiver>(std::move(estimator));
  if (config_.connect_host) {
    socket_.connect(Address::from(*config_.connect_host, config_.port));
    attached_ = true;
  } else {
    socket_.bind(Address::from("0.0.0.0", config_.port));
  }
  socket_.set_nonblocking();
}

bool PeerApp::wait_for_peer(SignalFd& signals) {
  std::cerr << "sprout-peer: listening on " << socket_.local_address().str() << "\n";
  PollLoop loop("sprout-peer socket and signalfd");
  bool stop = false;
  loop.add(socket_.fd(), POLLIN, [&](short) {
    while (!attached_) {
      const std::optional<ReceivedDatagram> datagram = next_datagram(socket_);
      if (!datagram) break;
      PeerDatagram d;
      try {
        d = PeerDatagram::decode(datagram->payload);
      } catch (const std::invalid_argument& e) {
        if (malformed_++ == 0) std::cerr << "sprout-peer: ignoring datagram: " << e.what() << "\n";
        continue;
      }
      socket_.connect(datagram->source);
      attached_ = true;
      std::cerr << "sprout-peer: attached to " << datagram->source.str() << "\n";
      handle(d, monotonic_us(), datagram->kernel_timestamp_us);
    }
    return PollLoop::Next::Continue;
  });
  loop.add(signals.fd(), POLLIN, [&](short) {
    stop = signals.triggered();
    return stop ? PollLoop::Next::Stop : PollLoop::Next::Continue;
  });
  while (!attached_ && !stop) {
    loop.wait_ms(-1);
  }
  return attached_;
}

void PeerApp::run(SignalFd& signals) {
  if (!attached_ && !wait_for_peer(signals)) {
    return;
  }
  start_ms_ = monotonic_ms();
  next_heartbeat_ms_ = start_ms_;  // announce ourselves at once
  const uint64_t deadline =
      config_.duration_s > 0 ? start_ms_ + static_cast<uint64_t>(config_.duration_s * 1000.0)
                             : UINT64_MAX;
  PollLoop loop("sprout-peer socket and signalfd");
  bool stop = false;
  loop.add(socket_.fd(), POLLIN, [&](short) {
    drain_socket();
    return PollLoop::Next::Continue;
  });
  loop.add(signals.fd(), POLLIN, [&](short) {
    stop = signals.triggered();
    return stop ? PollLoop::Next::Stop : PollLoop::Next::Continue;
  });
  while (!stop) {
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
    const uint64_t timeout = std::min({until_heartbeat, kMaxPollMs, until_deadline});
    if (loop.wait_ms(static_cast<int>(timeout)).ready == 0 && timeout > 0) {
      timing_.woke(poll_start_us + timeout * 1000, monotonic_us());
    }
  }
  end_ms_ = monotonic_ms();
}

std::optional<Forecast> PeerApp::fresh_forecast(uint64_t now_ms) {
  if (!receiver_->started()) {
    return std::nullopt;
  }
  const uint64_t cpu_start = monotonic_us();
  receiver_->advance(now_ms);
  if (last_forecast_tick_sent_ && *last_forecast_tick_sent_ == receiver_->tick_start_ms()) {
    model_cpu_us_ += monotonic_us() - cpu_start;
    return std::nullopt;
  }
  Forecast f = receiver_->forecast();
  model_cpu_us_ += monotonic_us() - cpu_start;
  return f;
}

bool PeerApp::send_flight(uint64_t now_ms) {
  int64_t budget = window_.window(now_ms);
  if (budget <= 0) {
    timing_.forget();  // a forecast noted as opening the window opens it no more
  }
  if (budget <= 0 && now_ms < next_heartbeat_ms_) {
    return false;
  }
  if (budget <= 0) {
    return send_datagram(0, static_cast<uint16_t>(kHeartbeatIntervalMs), true, now_ms);
  }
  max_window_ = std::max(max_window_, budget);
  ++flights_;
  bool sent = false;
  bool first = true;
  while (budget > 0) {
    const auto size = static_cast<size_t>(
        std::min<int64_t>(budget, static_cast<int64_t>(PeerDatagram::kMaxCarriedBytes)));
    budget -= static_cast<int64_t>(size);
    // The last packet of a flight says "nothing more for up to 50 ms".
    const uint16_t time_to_next = budget <= 0 ? static_cast<uint16_t>(kHeartbeatIntervalMs) : 0;
    if (!send_datagram(size, time_to_next, first, now_ms)) {
      break;  // socket buffer full: the rest waits for the next check
    }
    first = false;
    sent = true;
  }
  return sent;
}

bool PeerApp::send_datagram(size_t carried_bytes, uint16_t time_to_next_ms,
                            bool first_of_flight, uint64_t now_ms) {
  PeerDatagram d;
  if (first_of_flight) {
    d.forecast = fresh_forecast(now_ms);
  }
  // The forecast takes its place in what the datagram carries (a heartbeat grows by it).
  const size_t forecast_bytes = d.forecast ? PeerDatagram::kForecastBytes : 0;
  d.payload_length =
      static_cast<uint16_t>(carried_bytes > forecast_bytes ? carried_bytes - forecast_bytes : 0);
  const uint64_t carried = d.carried_bytes();
  d.seq = next_seq_;
  d.time_to_next_ms = time_to_next_ms;
  d.throwaway_window = throwaway_.add(d.seq, now_ms);
  const std::string wire = d.encode();
  if (!send_or_full(socket_, wire, "sprout-peer", socket_full_, send_errors_)) {
    return false;
  }
  if (d.payload_length > 0 && timing_.awaiting_send()) {
    timing_.sent(epoch_us());
  }
  if (d.forecast) {
    last_forecast_tick_sent_ = d.forecast->tick_start_ms;
    ++forecasts_sent_;
  }
  next_seq_ += carried + kSeqOverheadBytes;
  window_.on_send(carried, now_ms);
  udp_bytes_sent_ += wire.size();
  payload_bytes_sent_ += d.payload_length;
  if (d.payload_length == 0) {
    ++heartbeats_sent_;
  } else {
    ++data_datagrams_sent_;
  }
  return true;
}

void PeerApp::drain_socket() {
  while (const std::optional<ReceivedDatagram> datagram = next_datagram(socket_)) {
    PeerDatagram d;
    try {
      d = PeerDatagram::decode(datagram->payload);
    } catch (const std::invalid_argument& e) {
      if (malformed_++ == 0) {
        std::cerr << "sprout-peer: ignoring datagram: " << e.what() << "\n";
      }
      continue;
    }
    handle(d, monotonic_us(), datagram->kernel_timestamp_us);
  }
}

void PeerApp::handle(const PeerDatagram& d, uint64_t now_us, uint64_t kernel_us) {
  const uint64_t now_ms = now_us / 1000;
  const uint64_t cpu_start = monotonic_us();
  receiver_->advance(now_ms);
  receiver_->on_datagram(now_ms, d.seq, d.throwaway_window, d.time_to_next_ms,
                         d.carried_bytes());
  model_cpu_us_ += monotonic_us() - cpu_start;
  ++datagrams_received_;
  if (d.payload_length == 0) {
    ++heartbeats_received_;
  }
  payload_bytes_received_ += d.payload_length;
  if (!d.forecast) {
    return;
  }
  // One forecast per tick of the other end: an older or repeated tick is a reordered duplicate.
  if (last_forecast_tick_received_ &&
      !PeerDatagram::tick_after(d.forecast->tick_start_ms, *last_forecast_tick_received_)) {
    ++stale_forecasts_;
    return;
  }
  last_forecast_tick_received_ = d.forecast->tick_start_ms;
  if (forecasts_received_++ == 0) {
    first_forecast_after_ms_ = static_cast<int64_t>(now_ms - start_ms_);
  }
  Forecast forecast = *d.forecast;
  forecast.received_or_lost = PeerDatagram::restore_received_or_lost(
      static_cast<uint32_t>(forecast.received_or_lost), next_seq_);
  window_.on_forecast(forecast, now_ms, next_seq_);
  if (window_.window(now_ms) > 0) {
    timing_.allowed_by(kernel_us);
  }
}

JsonObject PeerApp::stats() const {
  const uint64_t end = end_ms_ ? end_ms_ : monotonic_ms();
  const double seconds =
      start_ms_ ? static_cast<double>(end - start_ms_) / 1000.0 : 0.0;
  JsonObject json;
  json.add("role", config_.connect_host ? "client" : "listener")
      .add("model", receiver_->estimator().name())
      .add("quantile", config_.quantile)
      .add("port", static_cast<int>(config_.port))
      .add("attached", attached_)
      .add("duration_s", seconds)
      .add("payload_bytes_sent", payload_bytes_sent_)
      .add("udp_bytes_sent", udp_bytes_sent_)
      .add("data_datagrams_sent", data_datagrams_sent_)
      .add("heartbeats_sent", heartbeats_sent_)
      .add("flights", flights_)
      .add("forecasts_sent", forecasts_sent_)
      .add("socket_full_events", socket_full_)
      .add("send_errors", send_errors_)
      .add("max_window_bytes", max_window_)
      .add("datagrams_received", datagrams_received_)
      .add("heartbeats_received", heartbeats_received_)
      .add("payload_bytes_received", payload_bytes_received_)
      .add("forecasts_received", forecasts_received_)
      .add("stale_forecasts_ignored", stale_forecasts_)
      .add("malformed_datagrams", malformed_)
      .add("first_forecast_after_ms", first_forecast_after_ms_)
      .add("forecast_precompute_s", precompute_seconds_)
      .add("ticks_observed", receiver_->observed_ticks())
      .add("ticks_skipped", receiver_->skipped_ticks())
      .add("model_cpu_us", model_cpu_us_)
      .add("send_rate_mbit_s",
           seconds > 0 ? static_cast<double>(payload_bytes_sent_) * 8 / seconds / 1e6 : 0.0)
      .add("host_timing", timing_.json());
  return json;
}

}  // namespace netrepro::sprout
