// A raw AF_PACKET socket bound to one interface: promiscuous, ignores frames we send ourselves,
// large receive buffer, batched receive (recvmmsg) and send (sendmmsg).
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <vector>

#include "file_descriptor.hh"

namespace netrepro {

struct ReceivedFrame {
  const char* data = nullptr;
  uint32_t length = 0;
  uint64_t kernel_realtime_us = 0;  // when the kernel received it (CLOCK_REALTIME); 0 if unknown
};

class PacketSocket {
 public:
  static constexpr unsigned kBatch = 64;
  static constexpr size_t kFrameCapacity = 65536 + 64;  // room for a GSO super-frame

  // Throws SystemError naming the interface and the failed call.
  explicit PacketSocket(const std::string& iface);

  // Reads up to `most` (at most kBatch) frames without blocking; returns them (valid until
  // the next call). Frames we sent (PACKET_OUTGOING) and truncated frames are skipped and
  // counted.
  const std::vector<ReceivedFrame>& receive_batch(unsigned most = kBatch);
  // Sends frames in one sendmmsg call per kBatch; returns how many the kernel took.
  size_t send_batch(const std::vector<const std::string*>& frames);

  // Kernel receive-queue drops since the socket was opened (PACKET_STATISTICS).
  uint64_t kernel_drops();
  uint64_t send_errors() const { return send_errors_; }
  uint64_t truncated() const { return truncated_; }
  const std::string& iface() const { return iface_; }
  int fd() const { return fd_.fd(); }

 private:
  std::string iface_;
  FileDescriptor fd_;
  std::vector<char> buffers_;
  std::vector<mmsghdr> rx_headers_;
  std::vector<iovec> rx_iovecs_;
  std::vector<struct sockaddr_storage> rx_addresses_;
  std::vector<char> rx_controls_;
  std::vector<ReceivedFrame> received_;
  std::vector<mmsghdr> tx_headers_;
  std::vector<iovec> tx_iovecs_;
  uint64_t drops_ = 0;
  uint64_t send_errors_ = 0;
  uint64_t truncated_ = 0;
};

}  // namespace netrepro
