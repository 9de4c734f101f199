// How the Sprout programs use their non-blocking socket: read the next datagram, send one.
#pragma once

#include <cerrno>
#include <cstdint>
#include <iostream>
#include <optional>
#include <string>

#include "system_error.hh"
#include "udp_socket.hh"

namespace netrepro::sprout {

// The next datagram waiting, or nothing when none waits (never blocks). An ICMP error left by
// a datagram sent before the other end listened (ECONNREFUSED) is skipped: the two ends may
// start in either order.
inline std::optional<ReceivedDatagram> next_datagram(UdpSocket& socket) {
  while (true) {
    try {
      return socket.try_recv();
    } catch (const SystemError& e) {
      if (e.error_number() != ECONNREFUSED) {
        throw;
      }
    }
  }
}

// Sends `wire` without blocking. False when the socket buffer is full (nothing sent; counted
// in `full`). Any other error, such as the other end not up yet (ICMP port unreachable), is
// counted in `errors` and told once on stderr ("PROGRAM: send failed: ..."), and the datagram
// counts as sent: the sequence space advances anyway and the other end's loss bookkeeping
// absorbs it.
inline bool send_or_full(UdpSocket& socket, const std::string& wire, const char* program,
                         uint64_t& full, uint64_t& errors) {
  try {
    if (!socket.try_send(wire)) {
      ++full;
      return false;
    }
  } catch (const SystemError& e) {
    if (errors++ == 0) {
      std::cerr << program << ": send failed: " << e.what() << "\n";
    }
  }
  return true;
}

}  // namespace netrepro::sprout
