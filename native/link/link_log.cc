#include "link_log.hh"

namespace netrepro {

LinkLog::LinkLog(const std::string& path, bool log_opportunities)
    : out_(path, 4 << 20, true), log_opportunities_(log_opportunities) {}

void LinkLog::write_header(const std::vector<std::string>& lines) {
  for (const std::string& line : lines) {
    out_.append("# ");
    out_.append(line);
    out_.append_char('\n');
  }
}

void LinkLog::arrival(uint64_t time_us, uint32_t size) {
  out_.append_number(time_us / 1000);
  out_.append(" + ");
  out_.append_number(size);
  out_.append_char('\n');
}

void LinkLog::drop(uint64_t time_us, uint32_t packets, uint64_t bytes) {
  out_.append_number(time_us / 1000);
  out_.append(" d ");
  out_.append_number(packets);
  out_.append_char(' ');
  out_.append_number(bytes);
  out_.append_char('\n');
}

void LinkLog::opportunity(uint64_t time_us, uint32_t bytes) {
  if (!log_opportunities_) return;
  out_.append_number(time_us / 1000);
  out_.append(" # ");
  out_.append_number(bytes);
  out_.append_char('\n');
}

void LinkLog::departure(uint64_t time_us, uint32_t size, uint64_t queueing_delay_ms) {
  out_.append_number(time_us / 1000);
  out_.append(" - ");
  out_.append_number(size);
  out_.append_char(' ');
  out_.append_number(queueing_delay_ms);
  out_.append_char('\n');
}

}  // namespace netrepro
