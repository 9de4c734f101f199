// A UDP socket with kernel receive timestamps, for the datagram endpoints.
#pragma once

#include <netinet/in.h>

#include <cstdint>
#include <optional>
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
  // Never blocks: the waiting datagram, or nothing when none is waiting (EAGAIN). Any other
  // error (e.g. ECONNREFUSED reported by ICMP on a connected socket) throws SystemError.
  std::optional<ReceivedDatagram> try_recv();
  // Never blocks: false when the socket's buffer is full (EAGAIN, ENOBUFS) and the datagram
  // was not sent; other errors throw SystemError.
  bool try_send(const std::string& payload);
  Address local_address() const;
  int fd() const { return fd_.fd(); }
  void set_nonblocking() { fd_.set_nonblocking(); }

 private:
  // recvmsg with `flags`; nothing on EAGAIN/EWOULDBLOCK when `may_be_empty`.
  std::optional<ReceivedDatagram> receive(int flags, bool may_be_empty);
  FileDescriptor fd_;
};

}  // namespace netrepro
