// Constants of the Sprout model and protocol (NSDI'13; reference
// keithw/sprout src/sprout/receiver.hh and src/network/sproutconn.h).
#pragma once

#include <cstddef>
#include <cstdint>

namespace netrepro::sprout {

// Rate model.
constexpr double kMaxRate = 1000.0;          // pkt/s; the top bin holds everything above
constexpr double kVolatility = 200.0;        // sigma of the Brownian motion, (pkt/s)/sqrt(s)
constexpr double kOutageEscapeRate = 1.0;    // lambda_z, per second
constexpr int kRequestedBins = 256;          // the reference asks for 256 and stores 257
constexpr int kBins = kRequestedBins + 1;    // bin 0 = outage, bins 1..256 = rates
constexpr double kBinWidth = kMaxRate / kRequestedBins;  // 3.90625 pkt/s, exact in binary

// Time.
constexpr uint64_t kTickMs = 20;
constexpr double kTickSeconds = 0.02;
constexpr int kMaxArrivalsPerTick = 30;      // per-tick counts 0..29 are modelled, the tail dropped
constexpr int kHorizons = 8;                 // forecast 8 ticks = 160 ms ahead
constexpr int kTargetDelayTicks = 5;         // 100 ms of queue
constexpr double kDefaultQuantile = 0.05;  // the forecast is this lower quantile (the paper's "95% confidence")

// Counting packets at the receiver: fractional packets of this many bytes.
constexpr double kCountingPacketBytes = 1400.0;

// Sender.
constexpr size_t kMaxPayloadBytes = 1440;     // bytes of data per datagram
constexpr uint64_t kSeqOverheadBytes = 50;    // sequence numbers advance by payload + 50
constexpr uint64_t kHeartbeatIntervalMs = 50; // silence before a heartbeat; also time_to_next
constexpr uint64_t kReorderLimitMs = 10;      // the throwaway window covers the last 10 ms
constexpr uint64_t kMaxPollMs = 10;           // re-check the window at least this often

}  // namespace netrepro::sprout
