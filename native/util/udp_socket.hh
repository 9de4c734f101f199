// A UDP socket with kernel receive timestamps, for the datagram endpoints.
#pragma once

#include <netinet/in.h>

#include <cstdint>
#include <string>

#include "file_descriptor.hh"

namespace netrepro {

struct Address {
  sockaddr_in sin{};
  static Address from(const std::string& host, uint16_t port);
  std::string str() const;
};

struct ReceivedDatagram {
  Address source;
  std::string payload;
  uint64_t kernel_timestamp_us = 0;  // SO_TIMESTAMPNS, CLOCK_REALTIME
};

class UdpSocket {
 public:
  UdpSocket();
  void bind(const Address& local);
  void connect(const Address& peer);
  void send(const std::string& payload);
  void sendto(const Address& peer, const std::string& payload);
  // Blocks until a datagram arrives (unless the socket is non-blocking).
  ReceivedDatagram recv();
  Address local_address() const;
  int fd() const { return fd_.fd(); }
  void set_nonblocking() { fd_.set_nonblocking(); }

 private:
  FileDescriptor fd_;
};

}  // namespace netrepro
