// sprout-receiver's event loop: receives data and heartbeats, runs the tick
// loop, and sends one forecast per tick back to the sender's address.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "forecaster.hh"
#include "host_timing.hh"
#include "json_writer.hh"
#include "signal_fd.hh"
#include "tick_receiver.hh"
#include "udp_socket.hh"

namespace netrepro::sprout {

struct ReceiverConfig {
  std::string bind_host = "0.0.0.0";
  uint16_t port = 0;
  bool ewma = false;
  double quantile = kDefaultQuantile;  // the forecast's lower quantile (the paper's confidence: 1 - this)
};

class ReceiverApp {
 public:
  explicit ReceiverApp(const ReceiverConfig& config);

  // Runs until SIGINT/SIGTERM arrives on `signals`.
  void run(SignalFd& signals);
  // Counters, times and the model's cost, for the stats file.
  JsonObject stats() const;
  const HostTiming& timing() const { return timing_; }

 private:
  // Stop answering a sender that has been silent this long.
  static constexpr uint64_t kAssociationTimeoutMs = 2000;

  std::unique_ptr<TickReceiver> fresh_receiver() const;
  void drain_socket();
  void handle(const ReceivedDatagram& datagram, uint64_t now_us);
  void advance_and_maybe_send(uint64_t now_ms);
  int poll_timeout_ms(uint64_t now_ms) const;

  ReceiverConfig config_;
  double precompute_seconds_ = 0.0;
  std::unique_ptr<Forecaster> forecaster_;  // null for EWMA
  std::unique_ptr<TickReceiver> receiver_;
  UdpSocket socket_;

  std::optional<Address> peer_;
  uint64_t last_heard_ms_ = 0;
  std::optional<uint64_t> last_forecast_tick_;

  // Stats.
  uint64_t datagrams_ = 0;
  uint64_t heartbeats_ = 0;
  uint64_t payload_bytes_ = 0;
  uint64_t udp_bytes_ = 0;
  uint64_t malformed_ = 0;
  uint64_t senders_seen_ = 0;
  uint64_t forecasts_sent_ = 0;
  uint64_t feedback_send_errors_ = 0;
  uint64_t first_receive_epoch_us_ = 0;
  uint64_t last_receive_epoch_us_ = 0;
  uint64_t model_cpu_us_ = 0;  // time spent in the tick loop and forecasts
  std::vector<uint32_t> one_way_delay_us_;
  Counts last_counts_{};
  // Its tick wake-ups against their deadlines (it sends on ticks, not on arrivals).
  HostTiming timing_{"none (forecasts go out on the 20-ms tick)"};
};

}  // namespace netrepro::sprout
