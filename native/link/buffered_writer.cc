#include "buffered_writer.hh"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>

#include "system_error.hh"

namespace netrepro {

namespace {
int open_for_writing(const std::string& path) {
  return check_syscall("open " + path + " for writing",
                       ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
}
}  // namespace

BufferedWriter::BufferedWriter(const std::string& path, size_t capacity, bool background)
    : path_(path), fd_(open_for_writing(path)), capacity_(capacity), background_(background) {
  buffer_.reserve(capacity_);
  if (background_) {
    in_flight_.reserve(capacity_);
    worker_ = std::thread([this] { worker_loop(); });
  }
}

BufferedWriter::~BufferedWriter() {
  try {
    flush();
  } catch (...) {
    // Destructors must not throw; callers that care flush explicitly first.
  }
  if (background_) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    worker_.join();
  }
}

void BufferedWriter::append_number(uint64_t value) {
  char digits[24];
  const auto result = std::to_chars(digits, digits + sizeof(digits), value);
  append(std::string_view(digits, static_cast<size_t>(result.ptr - digits)));
}

void BufferedWriter::write_all(const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd_.fd(), data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw SystemError("write " + path_, errno);
    }
    done += static_cast<size_t>(n);
  }
}

void BufferedWriter::rethrow_worker_error() {
  if (worker_errno_ != 0) {
    const int err = worker_errno_;
    worker_errno_ = 0;
    throw SystemError("write " + path_, err);
  }
}

void BufferedWriter::hand_off() {
  if (buffer_.empty()) return;
  if (!background_) {
    std::string data;
    data.swap(buffer_);
    buffer_.reserve(capacity_);
    write_all(data);  // on failure the data is dropped, so the destructor does not retry it
    return;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return !has_in_flight_; });
  rethrow_worker_error();
  in_flight_.swap(buffer_);  // in_flight_ was emptied by the worker and keeps its capacity
  has_in_flight_ = true;
  lock.unlock();
  changed_.notify_all();
}

void BufferedWriter::flush() {
  hand_off();
  if (background_) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return !has_in_flight_; });
    rethrow_worker_error();
  }
}

void BufferedWriter::worker_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(lock, [this] { return has_in_flight_ || stopping_; });
    if (!has_in_flight_) return;  // stopping with nothing left
    lock.unlock();
    int err = 0;
    try {
      write_all(in_flight_);
    } catch (const SystemError& e) {
      err = e.error_number();
    }
    lock.lock();
    in_flight_.clear();
    has_in_flight_ = false;
    if (err != 0) worker_errno_ = err;
    changed_.notify_all();
  }
}

}  // namespace netrepro
