// Appends text to a file through a large in-memory buffer: one write() per buffer, not per
// line. With `background`, full buffers are written by a helper thread so the caller (the
// emulator's timing loop) never waits for the disk unless the disk falls a whole buffer behind.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "file_descriptor.hh"

namespace netrepro {

class BufferedWriter {
 public:
  // Creates or truncates `path`; throws SystemError naming the path.
  explicit BufferedWriter(const std::string& path, size_t capacity = 1 << 20,
                          bool background = false);
  ~BufferedWriter();
  BufferedWriter(const BufferedWriter&) = delete;
  BufferedWriter& operator=(const BufferedWriter&) = delete;

  void append(std::string_view text) {
    if (buffer_.size() + text.size() > capacity_) hand_off();
    buffer_.append(text.data(), text.size());
  }
  void append_number(uint64_t value);
  void append_char(char c) {
    if (buffer_.size() + 1 > capacity_) hand_off();
    buffer_.push_back(c);
  }
  // Writes out everything appended so far and waits for it; throws SystemError on failure.
  void flush();
  const std::string& path() const { return path_; }

 private:
  void hand_off();
  void write_all(const std::string& data);
  void worker_loop();
  void rethrow_worker_error();

  std::string path_;
  FileDescriptor fd_;
  size_t capacity_;
  std::string buffer_;
  bool background_;
  // Background mode: one buffer in flight at a time.
  std::mutex mutex_;
  std::condition_variable changed_;
  std::string in_flight_;
  bool has_in_flight_ = false;
  bool stopping_ = false;
  int worker_errno_ = 0;
  std::thread worker_;
};

}  // namespace netrepro
