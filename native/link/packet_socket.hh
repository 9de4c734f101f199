// A raw AF_PACKET socket bound to one interface: promiscuous, ignores frames we send ourselves,
// large receive buffer, batched send (sendmmsg). Frames are received through one of two data
// paths (--data-path, native/link/README.md):
//   rings: (asked for) a PACKET_MMAP rx ring (TPACKET_V2) the kernel writes frames into and we read
//          without a system call per batch; each frame keeps its kernel receive time
//          (tp_sec/tp_nsec). V2, not V3: a V3 block reaches user space only when full or
//          after its retire timeout (>= 1 ms), which would delay frames at low rates.
//   mmsg:  (the default) recvmmsg batches, SO_TIMESTAMPNS receive times; also the fallback
//          when the ring cannot be set up (said on stderr and recorded in the stats).
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

enum class DataPath { Rings, Mmsg };
const char* to_string(DataPath path);
// "rings" or "mmsg"; throws std::invalid_argument for anything else.
DataPath parse_data_path(const std::string& text);

class PacketSocket {
 public:
  static constexpr unsigned kBatch = 64;
  static constexpr size_t kFrameCapacity = 65536 + 64;  // room for a GSO super-frame
  // One ring slot: header + sockaddr_ll + a 1518-byte frame fit; larger frames (offloads on)
  // are truncated there and counted.
  static constexpr unsigned kRingFrameBytes = 2048;
  static constexpr unsigned kRingBlockBytes = 1 << 16;
  // 16 MiB: 8192 frames, ~100 ms of full-size frames at 1 Gbit/s. The ring is mapped (and
  // counted in the resident memory) whole, whether or not it fills.
  static constexpr unsigned kRingBlocks = 256;

  // Throws SystemError naming the interface and the failed call. With `wanted` Rings, a ring
  // that cannot be set up falls back to Mmsg: data_path() and fallback_reason() say so.
  PacketSocket(const std::string& iface, DataPath wanted);
  ~PacketSocket();
  PacketSocket(const PacketSocket&) = delete;
  PacketSocket& operator=(const PacketSocket&) = delete;

  DataPath data_path() const { return path_; }
  // Why the ring was not used though asked for; empty otherwise.
  const std::string& fallback_reason() const { return fallback_reason_; }

  // Reads up to `most` (at most kBatch) frames without blocking; returns them (valid until
  // the next call or release_batch(), which hand their ring slots back to the kernel).
  // Frames we sent (PACKET_OUTGOING) and truncated frames are skipped and counted.
  const std::vector<ReceivedFrame>& receive_batch(unsigned most = kBatch);
  // Hands the last batch's ring slots back to the kernel at once (the frames were copied):
  // held slots would keep the socket readable and the loop awake. Nothing on mmsg.
  void release_batch() { release_ring_frames(); }
  // Sends frames in one sendmmsg call per kBatch; returns how many the kernel took.
  size_t send_batch(const std::vector<const std::string*>& frames);

  // Kernel receive-queue drops since the socket was opened (PACKET_STATISTICS).
  uint64_t kernel_drops();
  uint64_t send_errors() const { return send_errors_; }
  uint64_t truncated() const { return truncated_; }
  const std::string& iface() const { return iface_; }
  int fd() const { return fd_.fd(); }

 private:
  // Sets up and maps the rx ring; false with `why` (the ring torn down again) if it cannot.
  bool map_rx_ring(std::string* why);
  void release_ring_frames();
  const std::vector<ReceivedFrame>& receive_ring(unsigned wanted);
  const std::vector<ReceivedFrame>& receive_mmsg(unsigned wanted);

  std::string iface_;
  FileDescriptor fd_;
  DataPath path_ = DataPath::Mmsg;
  std::string fallback_reason_;
  char* ring_ = nullptr;
  size_t ring_bytes_ = 0;
  unsigned ring_frames_ = 0;
  unsigned ring_head_ = 0;  // the next slot to read
  unsigned ring_held_ = 0;  // slots handed out by the last call, released by the next
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
