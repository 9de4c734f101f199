// The datagrump wire format: a 48-byte header of six big-endian u64 fields,
// then a payload (data datagrams are padded so the UDP payload is 1472 bytes,
// a 1500-byte IP packet). Layout and "unset = 2^64-1" convention follow
// keithw/sourdough datagrump/contest_message.{hh,cc}.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace netrepro::grump {

// Thrown when bytes from the wire are not a contest message.
class MalformedDatagram : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ContestHeader {
  static constexpr uint64_t kUnset = UINT64_MAX;  // datagrump writes -1 for "not set"

  uint64_t sequence_number = kUnset;
  uint64_t send_timestamp = kUnset;       // ms, CLOCK_REALTIME of the sender of this datagram
  uint64_t ack_sequence_number = kUnset;  // kUnset on data datagrams
  uint64_t ack_send_timestamp = kUnset;   // send_timestamp of the datagram acknowledged
  uint64_t ack_recv_timestamp = kUnset;   // when the receiver's kernel got it (ms)
  uint64_t ack_payload_length = kUnset;   // payload bytes of the datagram acknowledged
};

class ContestMessage {
 public:
  static constexpr size_t kHeaderSize = 6 * sizeof(uint64_t);  // 48
  static constexpr size_t kDataDatagramSize = 1472;            // UDP payload of a 1500-byte packet
  static constexpr size_t kDataPayloadSize = kDataDatagramSize - kHeaderSize;  // 1424

  ContestMessage(const ContestHeader& header, std::string payload);

  // A full-size data datagram.
  static ContestMessage data(uint64_t sequence_number, uint64_t send_timestamp_ms);
  // Parses bytes from the wire; throws MalformedDatagram when they are too short
  // or their fields contradict each other.
  static ContestMessage parse(const std::string& wire);

  // The acknowledgment of this (data) message, as the datagrump receiver builds it.
  ContestMessage make_ack(uint64_t ack_sequence_number, uint64_t recv_timestamp_ms,
                          uint64_t send_timestamp_ms) const;

  bool is_ack() const { return header_.ack_sequence_number != ContestHeader::kUnset; }
  std::string serialize() const;
  const ContestHeader& header() const { return header_; }
  const std::string& payload() const { return payload_; }

 private:
  ContestHeader header_;
  std::string payload_;
};

}  // namespace netrepro::grump
