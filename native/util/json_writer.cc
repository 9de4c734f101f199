#include "json_writer.hh"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "file_descriptor.hh"
#include "system_error.hh"

namespace netrepro {

std::string JsonObject::quote(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned char>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string JsonObject::number(double value) {
  if (!std::isfinite(value)) {
    return "null";
  }
  // 0.35, not 0.34999999999999998; 17 digits only when 15 do not read back.
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.15g", value);
  if (std::strtod(buf, nullptr) != value) {
    std::snprintf(buf, sizeof(buf), "%.17g", value);
  }
  return buf;
}

JsonObject& JsonObject::add_raw(const std::string& key, std::string json) {
  members_.push_back(Member{key, std::move(json), {}});
  return *this;
}

JsonObject& JsonObject::add(const std::string& key, const std::string& value) {
  return add_raw(key, quote(value));
}
JsonObject& JsonObject::add(const std::string& key, const char* value) {
  return add_raw(key, quote(value));
}
JsonObject& JsonObject::add(const std::string& key, double value) {
  return add_raw(key, number(value));
}
JsonObject& JsonObject::add(const std::string& key, uint64_t value) {
  return add_raw(key, std::to_string(value));
}
JsonObject& JsonObject::add(const std::string& key, int64_t value) {
  return add_raw(key, std::to_string(value));
}
JsonObject& JsonObject::add(const std::string& key, int value) {
  return add_raw(key, std::to_string(value));
}
JsonObject& JsonObject::add(const std::string& key, unsigned int value) {
  return add_raw(key, std::to_string(value));
}
JsonObject& JsonObject::add(const std::string& key, long long value) {
  return add_raw(key, std::to_string(value));
}
JsonObject& JsonObject::add(const std::string& key, unsigned long long value) {
  return add_raw(key, std::to_string(value));
}
JsonObject& JsonObject::add(const std::string& key, bool value) {
  return add_raw(key, value ? "true" : "false");
}
JsonObject& JsonObject::add(const std::string& key, std::optional<double> value) {
  return value ? add(key, *value) : add_null(key);
}
JsonObject& JsonObject::add(const std::string& key, std::optional<uint64_t> value) {
  return value ? add(key, *value) : add_null(key);
}
JsonObject& JsonObject::add(const std::string& key, const JsonObject& value) {
  members_.push_back(Member{key, "", {value}});
  return *this;
}
JsonObject& JsonObject::add_null(const std::string& key) { return add_raw(key, "null"); }

namespace {
template <typename T, typename F>
std::string array_json(const std::vector<T>& values, F format) {
  std::string json = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    json += (i ? ", " : "") + format(values[i]);
  }
  return json + "]";
}
}  // namespace

JsonObject& JsonObject::add_array(const std::string& key, const std::vector<uint64_t>& values) {
  return add_raw(key, array_json(values, [](uint64_t v) { return std::to_string(v); }));
}
JsonObject& JsonObject::add_array(const std::string& key, const std::vector<uint32_t>& values) {
  return add_raw(key, array_json(values, [](uint32_t v) { return std::to_string(v); }));
}
JsonObject& JsonObject::add_array(const std::string& key, const std::vector<double>& values) {
  return add_raw(key, array_json(values, [](double v) { return number(v); }));
}

void JsonObject::append_to(std::string& out, int indent) const {
  if (members_.empty()) {
    out += "{}";
    return;
  }
  const std::string inner(static_cast<size_t>(indent + 2), ' ');
  out += "{\n";
  for (size_t i = 0; i < members_.size(); ++i) {
    const Member& m = members_[i];
    out += inner + quote(m.key) + ": ";
    if (m.nested.empty()) {
      out += m.json;
    } else {
      m.nested.front().append_to(out, indent + 2);
    }
    out += i + 1 < members_.size() ? ",\n" : "\n";
  }
  out += std::string(static_cast<size_t>(indent), ' ') + "}";
}

std::string JsonObject::str() const {
  std::string out;
  append_to(out, 0);
  return out + "\n";
}

void write_file_atomically(const std::string& path, const std::string& contents) {
  const std::string temporary = path + ".tmp";
  {
    FileDescriptor fd(check_syscall(
        "cannot write " + temporary + " (check that its folder exists and is writable)",
        ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)));
    size_t done = 0;
    while (done < contents.size()) {
      const ssize_t n = ::write(fd.fd(), contents.data() + done, contents.size() - done);
      if (n < 0 && errno == EINTR) continue;
      check_syscall("write " + temporary, n);
      done += static_cast<size_t>(n);
    }
  }
  check_syscall("rename " + temporary + " to " + path,
                std::rename(temporary.c_str(), path.c_str()));
}

void JsonObject::write_file(const std::string& path) const { write_file_atomically(path, str()); }

void JsonObject::check_writable(const std::string& path) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) {
    throw std::runtime_error("cannot write stats file '" + path + "': " + std::strerror(errno) +
                             " (check that its folder exists and is writable)");
  }
}

}  // namespace netrepro
