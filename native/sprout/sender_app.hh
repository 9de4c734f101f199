// sprout-sender's event loop: a saturating application (always has data)
// that sends what the Sprout window allows, heartbeats after 50 ms of
// silence, and takes forecasts from the receiver.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>

#include "host_timing.hh"
#include "json_writer.hh"
#include "sender_window.hh"
#include "signal_fd.hh"
#include "throwaway_tracker.hh"
#include "udp_socket.hh"

namespace netrepro::sprout {

struct SenderConfig {
  std::string host;
  uint16_t port = 0;
  double duration_s = 0;   // 0: until a signal
  std::string log_path;    // empty: no window log
};

class SenderApp {
 public:
  explicit SenderApp(const SenderConfig& config);

  // Runs for the configured duration or until SIGINT/SIGTERM.
  void run(SignalFd& signals);
  JsonObject stats() const;
  uint64_t forecasts_received() const { return forecasts_received_; }
  const HostTiming& timing() const { return timing_; }

 private:
  void drain_socket();
  // Sends the whole window now (or a heartbeat when due); returns true if
  // anything was sent.
  bool send_flight(uint64_t now_ms);
  // Sends one datagram; false if the socket buffer is full (nothing sent).
  bool send_datagram(uint16_t payload_bytes, uint16_t time_to_next_ms, uint64_t now_ms);

  SenderConfig config_;
  UdpSocket socket_;
  SenderWindow window_;
  ThrowawayTracker throwaway_;
  std::unique_ptr<std::ofstream> log_;

  uint64_t start_ms_ = 0;
  uint64_t next_seq_ = 0;
  uint64_t next_heartbeat_ms_ = 0;
  uint64_t last_forecast_tick_ = 0;

  // Stats.
  uint64_t data_datagrams_ = 0;
  uint64_t heartbeats_ = 0;
  uint64_t payload_bytes_ = 0;
  uint64_t udp_bytes_ = 0;
  uint64_t flights_ = 0;
  uint64_t forecasts_received_ = 0;
  uint64_t stale_forecasts_ = 0;
  uint64_t malformed_ = 0;
  uint64_t socket_full_ = 0;
  uint64_t send_errors_ = 0;
  int64_t first_forecast_after_ms_ = -1;
  int64_t last_window_ = 0;
  int64_t max_window_ = 0;
  double window_sum_ = 0;  // sampled at each forecast
  uint64_t end_ms_ = 0;
  // Poll wake-ups against their deadlines; a window-opening forecast's kernel arrival to the
  // data datagram it let out.
  HostTiming timing_{"forecast -> data"};
};

}  // namespace netrepro::sprout
