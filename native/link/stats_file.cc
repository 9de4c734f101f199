#include "stats_file.hh"

#include <cstdio>

#include "buffered_writer.hh"
#include "system_error.hh"

namespace netrepro {

void StatsFile::replace(const std::string& contents) const {
  const std::string temporary = path_ + ".tmp";
  {
    BufferedWriter out(temporary, contents.size() + 1);
    out.append(contents);
    out.flush();
  }
  check_syscall("rename " + temporary + " to " + path_,
                std::rename(temporary.c_str(), path_.c_str()));
}

}  // namespace netrepro
