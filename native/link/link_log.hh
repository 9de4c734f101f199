// A mahimahi-format link log (`T + S`, `T d N B`, `T # 1504`, `T - S D`, times in integer ms).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "buffered_writer.hh"
#include "link_events.hh"

namespace netrepro {

class LinkLog : public LinkEvents {
 public:
  // With log_opportunities false, `#` lines are left out (fixed rates above 100 Mbit/s).
  LinkLog(const std::string& path, bool log_opportunities);

  // Writes "# <line>" for each line; call once, before any event.
  void write_header(const std::vector<std::string>& lines);
  void arrival(uint64_t time_us, uint32_t size) override;
  void drop(uint64_t time_us, uint32_t packets, uint64_t bytes) override;
  void opportunity(uint64_t time_us, uint32_t bytes) override;
  void departure(uint64_t time_us, uint32_t size, uint64_t queueing_delay_ms) override;
  void flush() { out_.flush(); }
  const std::string& path() const { return out_.path(); }

 private:
  BufferedWriter out_;
  bool log_opportunities_;
};

}  // namespace netrepro
