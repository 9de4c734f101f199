#include "udp_socket.hh"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "system_error.hh"

namespace netrepro {

Address Address::from(const std::string& host, uint16_t port) {
  Address a;
  a.sin.sin_family = AF_INET;
  a.sin.sin_port = htons(port);
  if (::inet_pton(AF_INET, host.c_str(), &a.sin.sin_addr) != 1) {
    throw std::invalid_argument("not an IPv4 address: '" + host + "'");
  }
  return a;
}

std::string Address::str() const {
  std::array<char, INET_ADDRSTRLEN> buf{};
  ::inet_ntop(AF_INET, &sin.sin_addr, buf.data(), buf.size());
  return std::string(buf.data()) + ":" + std::to_string(ntohs(sin.sin_port));
}

UdpSocket::UdpSocket() : fd_(check_syscall("socket(UDP)", ::socket(AF_INET, SOCK_DGRAM, 0))) {
  const int on = 1;
  check_syscall("setsockopt(SO_TIMESTAMPNS)",
                ::setsockopt(fd_.fd(), SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on)));
}

void UdpSocket::bind(const Address& local) {
  check_syscall("bind " + local.str(),
                ::bind(fd_.fd(), reinterpret_cast<const sockaddr*>(&local.sin), sizeof(local.sin)));
}

void UdpSocket::connect(const Address& peer) {
  check_syscall("connect " + peer.str(),
                ::connect(fd_.fd(), reinterpret_cast<const sockaddr*>(&peer.sin), sizeof(peer.sin)));
}

void UdpSocket::send(const std::string& payload) {
  check_syscall("send", ::send(fd_.fd(), payload.data(), payload.size(), 0));
}

void UdpSocket::sendto(const Address& peer, const std::string& payload) {
  check_syscall("sendto " + peer.str(),
                ::sendto(fd_.fd(), payload.data(), payload.size(), 0,
                         reinterpret_cast<const sockaddr*>(&peer.sin), sizeof(peer.sin)));
}

ReceivedDatagram UdpSocket::recv() { return *receive(0, false); }

std::optional<ReceivedDatagram> UdpSocket::try_recv() { return receive(MSG_DONTWAIT, true); }

bool UdpSocket::try_send(const std::string& payload) {
  while (true) {
    if (::send(fd_.fd(), payload.data(), payload.size(), MSG_DONTWAIT) >= 0) return true;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) return false;
    throw SystemError("send", errno);
  }
}

std::optional<ReceivedDatagram> UdpSocket::receive(int flags, bool may_be_empty) {
  std::array<char, 65536> buffer{};
  std::array<char, 256> control{};
  ReceivedDatagram out;
  iovec iov{buffer.data(), buffer.size()};
  msghdr msg{};
  msg.msg_name = &out.source.sin;
  msg.msg_namelen = sizeof(out.source.sin);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.data();
  msg.msg_controllen = control.size();
  ssize_t n = -1;
  while ((n = ::recvmsg(fd_.fd(), &msg, flags)) < 0) {
    if (errno == EINTR) continue;
    if (may_be_empty && (errno == EAGAIN || errno == EWOULDBLOCK)) return std::nullopt;
    throw SystemError("recvmsg", errno);
  }
  if (msg.msg_flags & MSG_TRUNC) {
    throw std::runtime_error("recvmsg: datagram truncated");
  }
  out.payload.assign(buffer.data(), static_cast<size_t>(n));
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
      timespec ts{};
      std::memcpy(&ts, CMSG_DATA(c), sizeof(ts));
      out.kernel_timestamp_us =
          static_cast<uint64_t>(ts.tv_sec) * 1000000u + static_cast<uint64_t>(ts.tv_nsec) / 1000u;
    }
  }
  return out;
}

Address UdpSocket::local_address() const {
  Address a;
  socklen_t len = sizeof(a.sin);
  check_syscall("getsockname",
                ::getsockname(fd_.fd(), reinterpret_cast<sockaddr*>(&a.sin), &len));
  return a;
}

}  // namespace netrepro
