// sprout-peer's event loop: one endpoint that sends AND receives, as the reference's
// bidirectional bulk test application (sproutbt2) does. Its sender half is the saturating
// Sprout sender (sender_app.hh: the window, flights, 50-ms heartbeats); its receiver half runs
// the tick loop and the forecaster (receiver_app.hh) on the datagrams from the other endpoint.
// No separate feedback stream: the forecast of what this endpoint receives rides on the first
// datagram of each of its own flights (data or heartbeat), when a newer one exists, as in the
// reference (sproutconn.cc send()). With both directions loaded, a forecast therefore waits in
// the same queue as this endpoint's data.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "forecaster.hh"
#include "host_timing.hh"
#include "json_writer.hh"
#include "peer_datagram.hh"
#include "sender_window.hh"
#include "signal_fd.hh"
#include "throwaway_tracker.hh"
#include "tick_receiver.hh"
#include "udp_socket.hh"

namespace netrepro::sprout {

struct PeerConfig {
  std::optional<std::string> connect_host;  // set: the client end; else listen for the client
  uint16_t port = 0;                        // the client's destination, or the port to listen on
  bool ewma = false;
  double quantile = kDefaultQuantile;  // the forecast's lower quantile (the paper's confidence: 1 - this)
  double duration_s = 0;  // 0: until a signal
};

class PeerApp {
 public:
  explicit PeerApp(const PeerConfig& config);

  // Runs for the configured duration (from the start, or for the listening end from the
  // first datagram) or until SIGINT/SIGTERM.
  void run(SignalFd& signals);
  JsonObject stats() const;
  uint64_t forecasts_received() const { return forecasts_received_; }
  const HostTiming& timing() const { return timing_; }
  bool attached() const { return attached_; }

 private:
  // Waits for the client's first datagram (the listening end); false if stopped first.
  bool wait_for_peer(SignalFd& signals);
  void drain_socket();
  // `kernel_us`: the datagram's kernel receive time (CLOCK_REALTIME), 0 when unknown.
  void handle(const PeerDatagram& d, uint64_t now_us, uint64_t kernel_us);
  // Sends the whole window now (or a heartbeat when due); true if anything was sent.
  bool send_flight(uint64_t now_ms);
  bool send_datagram(size_t carried_bytes, uint16_t time_to_next_ms, bool first_of_flight,
                     uint64_t now_ms);
  // The receiver half's forecast if it has one newer than the last sent.
  std::optional<Forecast> fresh_forecast(uint64_t now_ms);

  PeerConfig config_;
  double precompute_seconds_ = 0.0;
  std::unique_ptr<Forecaster> forecaster_;  // null for EWMA
  std::unique_ptr<TickReceiver> receiver_;
  UdpSocket socket_;
  bool attached_ = false;

  // Sender half.
  SenderWindow window_;
  ThrowawayTracker throwaway_;
  uint64_t next_seq_ = 0;
  uint64_t next_heartbeat_ms_ = 0;
  std::optional<uint64_t> last_forecast_tick_received_;
  std::optional<uint64_t> last_forecast_tick_sent_;
  uint64_t start_ms_ = 0;
  uint64_t end_ms_ = 0;

  // Stats: sending.
  uint64_t data_datagrams_sent_ = 0;
  uint64_t heartbeats_sent_ = 0;
  uint64_t payload_bytes_sent_ = 0;
  uint64_t udp_bytes_sent_ = 0;
  uint64_t flights_ = 0;
  uint64_t forecasts_sent_ = 0;
  uint64_t socket_full_ = 0;
  uint64_t send_errors_ = 0;
  int64_t max_window_ = 0;
  // Stats: receiving.
  uint64_t datagrams_received_ = 0;
  uint64_t heartbeats_received_ = 0;
  uint64_t payload_bytes_received_ = 0;
  uint64_t forecasts_received_ = 0;
  uint64_t stale_forecasts_ = 0;
  uint64_t malformed_ = 0;
  int64_t first_forecast_after_ms_ = -1;
  uint64_t model_cpu_us_ = 0;
  // Poll wake-ups against their deadlines; a window-opening forecast's kernel arrival to the
  // data datagram it let out.
  HostTiming timing_{"forecast -> data"};
};

}  // namespace netrepro::sprout
