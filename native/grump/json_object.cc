#include "json_object.hh"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace netrepro::grump {

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

JsonObject& JsonObject::add_raw(const std::string& key, std::string json) {
  members_.emplace_back(key, std::move(json));
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
    return add_raw(key, "null");
  }
  // The shortest of 15 or 17 digits that reads back exactly (0.35, not 0.34999999999999998).
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.15g", value);
  if (std::strtod(buf, nullptr) != value) {
    std::snprintf(buf, sizeof(buf), "%.17g", value);
  }
  return add_raw(key, buf);
}

JsonObject& JsonObject::add(const std::string& key, uint64_t value) {
  return add_raw(key, std::to_string(value));
}

JsonObject& JsonObject::add(const std::string& key, bool value) {
  return add_raw(key, value ? "true" : "false");
}

JsonObject& JsonObject::add(const std::string& key, std::optional<double> value) {
  return value.has_value() ? add(key, *value) : add_raw(key, "null");
}

JsonObject& JsonObject::add(const std::string& key, const JsonObject& value) {
  return add_raw(key, value.str());
}

std::string JsonObject::str() const {
  std::string out = "{";
  for (size_t i = 0; i < members_.size(); ++i) {
    out += (i == 0 ? "" : ", ") + quote(members_[i].first) + ": " + members_[i].second;
  }
  return out + "}";
}

void JsonObject::check_writable(const std::string& path) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) {
    throw std::runtime_error("cannot write stats file '" + path + "': " + std::strerror(errno) +
                             " (check that its folder exists and is writable)");
  }
}

void JsonObject::write_file(const std::string& path) const {
  std::ofstream out(path, std::ios::trunc);
  out << str() << '\n';
  out.close();
  if (!out) {
    throw std::runtime_error("cannot write stats file '" + path + "': " + std::strerror(errno) +
                             " (check that its folder exists and is writable)");
  }
}

}  // namespace netrepro::grump
