#include "json_object.hh"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "system_error.hh"

namespace netrepro::sprout {

namespace {
std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}
}  // namespace

JsonObject& JsonObject::add_raw(const std::string& key, const std::string& json) {
  members_.push_back(quote(key) + ": " + json);
  return *this;
}

JsonObject& JsonObject::add(const std::string& key, const std::string& value) {
  return add_raw(key, quote(value));
}
JsonObject& JsonObject::add(const std::string& key, const char* value) {
  return add_raw(key, quote(value));
}
JsonObject& JsonObject::add(const std::string& key, double value) {
  if (!std::isfinite(value)) {
    return add_null(key);
  }
  std::ostringstream s;
  s.precision(17);
  s << value;
  return add_raw(key, s.str());
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
JsonObject& JsonObject::add(const std::string& key, bool value) {
  return add_raw(key, value ? "true" : "false");
}
JsonObject& JsonObject::add_null(const std::string& key) { return add_raw(key, "null"); }
JsonObject& JsonObject::add_array(const std::string& key, const std::vector<uint32_t>& values) {
  std::string json = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    json += (i ? ", " : "") + std::to_string(values[i]);
  }
  return add_raw(key, json + "]");
}

std::string JsonObject::str() const {
  std::string out = "{\n";
  for (size_t i = 0; i < members_.size(); ++i) {
    out += "  " + members_[i] + (i + 1 < members_.size() ? ",\n" : "\n");
  }
  return out + "}\n";
}

void JsonObject::write(const std::string& path) const {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    if (!out) {
      throw SystemError("cannot write stats file " + temporary, errno);
    }
    out << str();
    out.flush();
    if (!out) {
      throw SystemError("writing stats file " + temporary, errno);
    }
  }
  check_syscall("rename " + temporary + " -> " + path,
                std::rename(temporary.c_str(), path.c_str()));
}

}  // namespace netrepro::sprout
