// Owns one file descriptor and closes it exactly once.
#pragma once

namespace netrepro {

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd);
  ~FileDescriptor();
  FileDescriptor(FileDescriptor&& other) noexcept;
  FileDescriptor& operator=(FileDescriptor&& other) noexcept;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;

  int fd() const { return fd_; }
  void set_nonblocking();

 private:
  void close_if_open();
  int fd_;
};

}  // namespace netrepro
