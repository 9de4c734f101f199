#include "packet_socket.hh"

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "system_error.hh"

namespace netrepro {

namespace {

constexpr int kBufferBytes = 64 << 20;
constexpr size_t kControlBytes = 64;  // room for one SCM_TIMESTAMPNS

int open_packet_socket(const std::string& iface) {
  // Protocol 0 receives nothing until bind(), so no frame of another interface slips in.
  return check_syscall(iface + ": socket(AF_PACKET, SOCK_RAW)",
                       ::socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
}

void set_option(int fd, int level, int name, int value, const std::string& what) {
  check_syscall(what, ::setsockopt(fd, level, name, &value, sizeof(value)));
}

uint64_t to_us(uint64_t sec, uint64_t nsec) { return sec * 1000000u + nsec / 1000u; }

}  // namespace

const char* to_string(DataPath path) { return path == DataPath::Rings ? "rings" : "mmsg"; }

DataPath parse_data_path(const std::string& text) {
  if (text == "rings") return DataPath::Rings;
  if (text == "mmsg") return DataPath::Mmsg;
  throw std::invalid_argument("data path '" + text + "' must be rings or mmsg");
}

PacketSocket::PacketSocket(const std::string& iface, DataPath wanted)
    : iface_(iface),
      fd_(open_packet_socket(iface)),
      buffers_(kBatch * kFrameCapacity),
      rx_headers_(kBatch),
      rx_iovecs_(kBatch),
      rx_addresses_(kBatch),
      rx_controls_(kBatch * kControlBytes) {
  const unsigned index = ::if_nametoindex(iface.c_str());
  if (index == 0) {
    throw SystemError("interface " + iface + " (if_nametoindex; does it exist in this namespace?)",
                      errno);
  }
  const int fd = fd_.fd();
  // Force past rmem_max/wmem_max (we are root) so bursts at 1 Gbit/s are not dropped.
  set_option(fd, SOL_SOCKET, SO_RCVBUFFORCE, kBufferBytes, iface + ": setsockopt(SO_RCVBUFFORCE)");
  set_option(fd, SOL_SOCKET, SO_SNDBUFFORCE, kBufferBytes, iface + ": setsockopt(SO_SNDBUFFORCE)");
  // Frames we transmit on this interface must not come back to us as arrivals.
  set_option(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, 1,
             iface + ": setsockopt(PACKET_IGNORE_OUTGOING)");

  // Kernel receive times, so arrivals keep their true time when we read a batch late (this
  // also turns on the kernel's receive timestamps the ring's tp_sec/tp_nsec come from).
  set_option(fd, SOL_SOCKET, SO_TIMESTAMPNS, 1, iface + ": setsockopt(SO_TIMESTAMPNS)");

  // The ring before bind(): no frame arrives before it is in place.
  if (wanted == DataPath::Rings) {
    std::string why;
    if (map_rx_ring(&why)) {
      path_ = DataPath::Rings;
    } else {
      fallback_reason_ = why;
      std::fprintf(stderr, "netrepro-link: warning: %s: the rx ring cannot be set up (%s); "
                   "receiving with recvmmsg instead (data_path \"mmsg\" in the stats)\n",
                   iface.c_str(), why.c_str());
    }
  }

  sockaddr_ll addr{};
  addr.sll_family = AF_PACKET;
  addr.sll_protocol = htons(ETH_P_ALL);
  addr.sll_ifindex = static_cast<int>(index);
  check_syscall(iface + ": bind(AF_PACKET)",
                ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)));

  packet_mreq mreq{};
  mreq.mr_ifindex = static_cast<int>(index);
  mreq.mr_type = PACKET_MR_PROMISC;
  check_syscall(iface + ": setsockopt(PACKET_ADD_MEMBERSHIP, promiscuous)",
                ::setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mreq, sizeof(mreq)));

  // Reset the drop counter so it counts from here on.
  kernel_drops();
  drops_ = 0;

  for (unsigned i = 0; i < kBatch; ++i) {
    rx_iovecs_[i] = iovec{buffers_.data() + i * kFrameCapacity, kFrameCapacity};
  }
  received_.reserve(kBatch);
  tx_headers_.resize(kBatch);
  tx_iovecs_.resize(kBatch);
}

PacketSocket::~PacketSocket() {
  if (ring_ != nullptr) ::munmap(ring_, ring_bytes_);
}

bool PacketSocket::map_rx_ring(std::string* why) {
  const int fd = fd_.fd();
  const int version = TPACKET_V2;
  if (::setsockopt(fd, SOL_PACKET, PACKET_VERSION, &version, sizeof(version)) != 0) {
    *why = std::string("setsockopt(PACKET_VERSION, TPACKET_V2): ") + std::strerror(errno);
    return false;
  }
  tpacket_req req{};
  req.tp_block_size = kRingBlockBytes;
  req.tp_block_nr = kRingBlocks;
  req.tp_frame_size = kRingFrameBytes;
  req.tp_frame_nr = kRingBlocks * (kRingBlockBytes / kRingFrameBytes);
  if (::setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)) != 0) {
    *why = std::string("setsockopt(PACKET_RX_RING): ") + std::strerror(errno);
    return false;
  }
  const size_t bytes = static_cast<size_t>(req.tp_block_size) * req.tp_block_nr;
  void* ring = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (ring == MAP_FAILED) {
    *why = std::string("mmap of the rx ring: ") + std::strerror(errno);
    tpacket_req none{};  // take the ring down again, so recvmmsg sees the frames
    ::setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &none, sizeof(none));
    return false;
  }
  ring_ = static_cast<char*>(ring);
  ring_bytes_ = bytes;
  ring_frames_ = req.tp_frame_nr;
  return true;
}

void PacketSocket::release_ring_frames() {
  for (; ring_held_ > 0; --ring_held_) {
    const unsigned slot = (ring_head_ + ring_frames_ - ring_held_) % ring_frames_;
    auto* h = reinterpret_cast<tpacket2_hdr*>(ring_ + static_cast<size_t>(slot) * kRingFrameBytes);
    // Release: the kernel may overwrite the slot only after we are done reading it.
    __atomic_store_n(&h->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
  }
}

const std::vector<ReceivedFrame>& PacketSocket::receive_batch(unsigned most) {
  received_.clear();
  const unsigned wanted = std::max(1u, std::min(most, kBatch));
  return path_ == DataPath::Rings ? receive_ring(wanted) : receive_mmsg(wanted);
}

const std::vector<ReceivedFrame>& PacketSocket::receive_ring(unsigned wanted) {
  release_ring_frames();
  unsigned looked = 0;
  while (received_.size() < wanted && looked < ring_frames_) {
    char* slot = ring_ + static_cast<size_t>(ring_head_) * kRingFrameBytes;
    auto* h = reinterpret_cast<tpacket2_hdr*>(slot);
    // Acquire: the frame's bytes are visible once its status says it is ours.
    const uint32_t status = __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);
    if (!(status & TP_STATUS_USER)) break;
    ring_head_ = (ring_head_ + 1) % ring_frames_;
    ++ring_held_;
    ++looked;
    const auto* from = reinterpret_cast<const sockaddr_ll*>(slot + TPACKET_ALIGN(sizeof(*h)));
    if (from->sll_pkttype == PACKET_OUTGOING) continue;  // belt and braces
    if (h->tp_snaplen < h->tp_len) {
      if (truncated_++ == 0) {
        std::fprintf(stderr, "netrepro-link: warning: %u-byte frame on %s, larger than a ring "
                     "slot: segmentation/receive offloads are on; such frames are dropped and "
                     "counted (truncated_frames)\n", h->tp_len, iface_.c_str());
      }
      continue;
    }
    // The kernel's receive time (CLOCK_REALTIME), as SO_TIMESTAMPNS gives on the mmsg path.
    received_.push_back(ReceivedFrame{slot + h->tp_mac, h->tp_snaplen,
                                      to_us(h->tp_sec, h->tp_nsec)});
  }
  return received_;
}

const std::vector<ReceivedFrame>& PacketSocket::receive_mmsg(unsigned wanted) {
  for (unsigned i = 0; i < wanted; ++i) {
    msghdr& m = rx_headers_[i].msg_hdr;
    m = msghdr{};
    m.msg_name = &rx_addresses_[i];
    m.msg_namelen = sizeof(rx_addresses_[i]);
    m.msg_iov = &rx_iovecs_[i];
    m.msg_iovlen = 1;
    m.msg_control = rx_controls_.data() + i * kControlBytes;
    m.msg_controllen = kControlBytes;
    rx_headers_[i].msg_len = 0;
  }
  const int n = ::recvmmsg(fd_.fd(), rx_headers_.data(), wanted, MSG_DONTWAIT, nullptr);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return received_;
    throw SystemError(iface_ + ": recvmmsg", errno);
  }
  for (int i = 0; i < n; ++i) {
    const auto* from = reinterpret_cast<const sockaddr_ll*>(&rx_addresses_[i]);
    if (from->sll_pkttype == PACKET_OUTGOING) continue;  // belt and braces
    if (rx_headers_[i].msg_hdr.msg_flags & MSG_TRUNC) {
      ++truncated_;
      continue;
    }
    uint64_t kernel_us = 0;
    msghdr& m = rx_headers_[i].msg_hdr;
    for (cmsghdr* c = CMSG_FIRSTHDR(&m); c != nullptr; c = CMSG_NXTHDR(&m, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
        timespec ts{};
        std::memcpy(&ts, CMSG_DATA(c), sizeof(ts));
        kernel_us = to_us(static_cast<uint64_t>(ts.tv_sec), static_cast<uint64_t>(ts.tv_nsec));
      }
    }
    received_.push_back(ReceivedFrame{static_cast<const char*>(rx_iovecs_[i].iov_base),
                                      rx_headers_[i].msg_len, kernel_us});
  }
  return received_;
}

size_t PacketSocket::send_batch(const std::vector<const std::string*>& frames) {
  size_t sent = 0;
  size_t next = 0;
  while (next < frames.size()) {
    const size_t count = std::min<size_t>(kBatch, frames.size() - next);
    for (size_t i = 0; i < count; ++i) {
      const std::string& f = *frames[next + i];
      tx_iovecs_[i] = iovec{const_cast<char*>(f.data()), f.size()};
      tx_headers_[i] = mmsghdr{};
      tx_headers_[i].msg_hdr.msg_iov = &tx_iovecs_[i];
      tx_headers_[i].msg_hdr.msg_iovlen = 1;
    }
    size_t done = 0;
    int retries = 0;
    while (done < count) {
      const int n = ::sendmmsg(fd_.fd(), tx_headers_.data() + done,
                               static_cast<unsigned>(count - done), 0);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) {
          // Send buffer full: wait briefly for room; after a few tries count the frame as lost.
          if (++retries <= 3) {
            pollfd p{fd_.fd(), POLLOUT, 0};
            ::poll(&p, 1, 5);
            continue;
          }
          retries = 0;
          ++send_errors_;
          ++done;
          continue;
        }
        if (errno == EMSGSIZE || errno == ENETDOWN || errno == ENXIO) {
          ++send_errors_;  // one bad frame (or the link went down): skip it, keep running
          ++done;
          continue;
        }
        throw SystemError(iface_ + ": sendmmsg", errno);
      }
      retries = 0;
      done += static_cast<size_t>(n);
      sent += static_cast<size_t>(n);
    }
    next += count;
  }
  return sent;
}

uint64_t PacketSocket::kernel_drops() {
  tpacket_stats stats{};
  socklen_t len = sizeof(stats);
  check_syscall(iface_ + ": getsockopt(PACKET_STATISTICS)",
                ::getsockopt(fd_.fd(), SOL_PACKET, PACKET_STATISTICS, &stats, &len));
  // The kernel resets its counters on every read, so we accumulate.
  drops_ += stats.tp_drops;
  return drops_;
}

}  // namespace netrepro
