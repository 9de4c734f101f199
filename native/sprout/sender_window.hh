// The Sprout sender's window (reference sproutconn.cc): how many bytes may
// be sent now so that, if the link delivers only what the latest forecast
// promises, everything sent is delivered within 100 ms (5 ticks).
#pragma once

#include <cstdint>

#include "forecast.hh"

namespace netrepro::sprout {

class SenderWindow {
 public:
  // A forecast arrived at `now_ms`; `next_seq` is the sender's next sequence number.
  void on_forecast(const Forecast& forecast, uint64_t now_ms, uint64_t next_seq);
  // `payload_bytes` were just sent.
  void on_send(uint64_t payload_bytes, uint64_t now_ms);
  // Bytes that may be sent now (0 before the first forecast).
  int64_t window(uint64_t now_ms);

  bool has_forecast() const { return has_forecast_; }
  int64_t queue_estimate() const { return queue_bytes_; }
  int forecast_tick() const { return tau_; }
  const Forecast& forecast() const { return forecast_; }

 private:
  // Moves tau to the ticks that have passed since the forecast arrived and
  // drains the queue estimate by what the forecast says they delivered.
  void age(uint64_t now_ms);

  bool has_forecast_ = false;
  Forecast forecast_;
  uint64_t forecast_arrival_ms_ = 0;
  int tau_ = 0;
  int64_t queue_bytes_ = 0;  // bytes believed to be in the network
};

}  // namespace netrepro::sprout
