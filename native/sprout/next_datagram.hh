// How the three Sprout programs read their socket: the next datagram waiting, or nothing when
// none waits (never blocks). An ICMP error left by a datagram sent before the other end
// listened (ECONNREFUSED) is skipped: the two ends may start in either order.
#pragma once

#include <cerrno>
#include <optional>

#include "system_error.hh"
#include "udp_socket.hh"

namespace netrepro::sprout {

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

}  // namespace netrepro::sprout
