#include "contest_message.hh"

#include <endian.h>

#include <cstring>
#include <utility>

namespace netrepro::grump {

namespace {

uint64_t read_field(const std::string& wire, size_t index) {
  uint64_t big_endian = 0;
  std::memcpy(&big_endian, wire.data() + index * sizeof(uint64_t), sizeof(big_endian));
  return be64toh(big_endian);
}

void append_field(std::string& out, uint64_t value) {
  const uint64_t big_endian = htobe64(value);
  out.append(reinterpret_cast<const char*>(&big_endian), sizeof(big_endian));
}

std::string describe(uint64_t value) {
  return value == ContestHeader::kUnset ? std::string("unset") : std::to_string(value);
}

}  // namespace

ContestMessage::ContestMessage(const ContestHeader& header, std::string payload)
    : header_(header), payload_(std::move(payload)) {}

ContestMessage ContestMessage::data(uint64_t sequence_number, uint64_t send_timestamp_ms) {
  ContestHeader header;
  header.sequence_number = sequence_number;
  header.send_timestamp = send_timestamp_ms;
  // Same filler as datagrump's dummy payload.
  return ContestMessage(header, std::string(kDataPayloadSize, 'x'));
}

ContestMessage ContestMessage::parse(const std::string& wire) {
  if (wire.size() < kHeaderSize) {
    throw MalformedDatagram("contest datagram of " + std::to_string(wire.size()) +
                            " bytes is shorter than the " + std::to_string(kHeaderSize) +
                            "-byte header");
  }
  ContestHeader h;
  h.sequence_number = read_field(wire, 0);
  h.send_timestamp = read_field(wire, 1);
  h.ack_sequence_number = read_field(wire, 2);
  h.ack_send_timestamp = read_field(wire, 3);
  h.ack_recv_timestamp = read_field(wire, 4);
  h.ack_payload_length = read_field(wire, 5);
  std::string payload = wire.substr(kHeaderSize);

  // Consistency rules from how datagrump builds messages: a data datagram leaves
  // every ack field unset; an ack sets all of them and carries no payload.
  if (h.send_timestamp == ContestHeader::kUnset) {
    throw MalformedDatagram("contest datagram seq " + describe(h.sequence_number) +
                            " has no send timestamp");
  }
  if (h.ack_sequence_number == ContestHeader::kUnset) {
    if (h.ack_send_timestamp != ContestHeader::kUnset ||
        h.ack_recv_timestamp != ContestHeader::kUnset ||
        h.ack_payload_length != ContestHeader::kUnset) {
      throw MalformedDatagram("contest data datagram seq " + describe(h.sequence_number) +
                              " has ack fields set (ack_send_ts " +
                              describe(h.ack_send_timestamp) + ", ack_recv_ts " +
                              describe(h.ack_recv_timestamp) + ", ack_payload_len " +
                              describe(h.ack_payload_length) + ")");
    }
  } else {
    if (h.ack_send_timestamp == ContestHeader::kUnset ||
        h.ack_recv_timestamp == ContestHeader::kUnset ||
        h.ack_payload_length == ContestHeader::kUnset) {
      throw MalformedDatagram("contest ack for seq " + describe(h.ack_sequence_number) +
                              " lacks ack_send_ts, ack_recv_ts or ack_payload_len");
    }
    if (!payload.empty()) {
      throw MalformedDatagram("contest ack for seq " + describe(h.ack_sequence_number) +
                              " carries " + std::to_string(payload.size()) +
                              " payload bytes; acks have none");
    }
  }
  return ContestMessage(h, std::move(payload));
}

ContestMessage ContestMessage::make_ack(uint64_t ack_sequence_number, uint64_t recv_timestamp_ms,
                                        uint64_t send_timestamp_ms) const {
  ContestHeader ack;
  ack.sequence_number = ack_sequence_number;
  ack.send_timestamp = send_timestamp_ms;
  ack.ack_sequence_number = header_.sequence_number;
  ack.ack_send_timestamp = header_.send_timestamp;
  ack.ack_recv_timestamp = recv_timestamp_ms;
  ack.ack_payload_length = payload_.size();
  return ContestMessage(ack, std::string());
}

std::string ContestMessage::serialize() const {
  std::string out;
  out.reserve(kHeaderSize + payload_.size());
  append_field(out, header_.sequence_number);
  append_field(out, header_.send_timestamp);
  append_field(out, header_.ack_sequence_number);
  append_field(out, header_.ack_send_timestamp);
  append_field(out, header_.ack_recv_timestamp);
  append_field(out, header_.ack_payload_length);
  out += payload_;
  return out;
}

}  // namespace netrepro::grump
