#include "file_descriptor.hh"

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <utility>

#include "system_error.hh"

namespace netrepro {

FileDescriptor::FileDescriptor(int fd) : fd_(check_syscall("open descriptor", fd)) {}

FileDescriptor::~FileDescriptor() { close_if_open(); }

FileDescriptor::FileDescriptor(FileDescriptor&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)) {}

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& other) noexcept {
  if (this != &other) {
    close_if_open();
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

void FileDescriptor::set_nonblocking() {
  const int flags = check_syscall("fcntl(F_GETFL)", ::fcntl(fd_, F_GETFL));
  check_syscall("fcntl(F_SETFL, O_NONBLOCK)", ::fcntl(fd_, F_SETFL, flags | O_NONBLOCK));
}

void FileDescriptor::close_if_open() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

}  // namespace netrepro
