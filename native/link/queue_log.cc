#include "queue_log.hh"

namespace netrepro {

QueueLog::QueueLog(const std::string& path) : out_(path, 4 << 20, true) {}

void QueueLog::start(const std::vector<std::string>& header, uint64_t base_us, bool losses) {
  base_us_ = base_us;
  for (const std::string& line : header) {
    out_.append("# ");
    out_.append(line);
    out_.append_char('\n');
  }
  out_.append(
      "# times: microseconds after the base timestamp; ECN: 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE\n"
      "# backlog: packets waiting in the queue at the arrival, the arriving one and the one in "
      "transit not counted\n"
      "# format: - ARRIVAL BACKLOG SIZE ECN_IN ECN_OUT DEPARTURE RELEASE SENT\n"
      "# format: d ARRIVAL BACKLOG SIZE ECN_IN\n"
      "# format: D ARRIVAL BACKLOG SIZE ECN_IN DROPPED\n");
  if (losses) out_.append("# format: l ARRIVAL BACKLOG SIZE ECN_IN ECN_OUT DEPARTURE\n");
}

void QueueLog::time(uint64_t us) {
  // Every time here is at or after the base: the queue's clock starts there.
  out_.append_number(us >= base_us_ ? us - base_us_ : 0);
}

void QueueLog::arrival_fields(const Packet& packet) {
  time(packet.arrival_us);
  out_.append_char(' ');
  out_.append_number(packet.backlog);
  out_.append_char(' ');
  out_.append_number(packet.size);
  out_.append_char(' ');
  out_.append_char(static_cast<char>('0' + static_cast<int>(packet.ecn_in)));
}

void QueueLog::sent(const Packet& packet, uint64_t release_us, uint64_t sent_us) {
  out_.append("- ");
  arrival_fields(packet);
  out_.append_char(' ');
  out_.append_char(static_cast<char>('0' + static_cast<int>(packet.ecn_out)));
  out_.append_char(' ');
  time(packet.departure_us);
  out_.append_char(' ');
  time(release_us);
  out_.append_char(' ');
  time(sent_us);
  out_.append_char('\n');
}

void QueueLog::dropped(const Packet& packet, uint64_t time_us, bool at_dequeue) {
  out_.append(at_dequeue ? "D " : "d ");
  arrival_fields(packet);
  if (at_dequeue) {
    out_.append_char(' ');
    time(time_us);
  }
  out_.append_char('\n');
}

void QueueLog::lost(const Packet& packet) {
  out_.append("l ");
  arrival_fields(packet);
  out_.append_char(' ');
  out_.append_char(static_cast<char>('0' + static_cast<int>(packet.ecn_out)));
  out_.append_char(' ');
  time(packet.departure_us);
  out_.append_char('\n');
}

}  // namespace netrepro
