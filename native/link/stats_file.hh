// Replaces a file atomically (write a temporary file, then rename) so readers and crashes
// only ever see a complete version.
#pragma once

#include <string>

namespace netrepro {

class StatsFile {
 public:
  explicit StatsFile(std::string path) : path_(std::move(path)) {}
  // Throws SystemError naming the path.
  void replace(const std::string& contents) const;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace netrepro
