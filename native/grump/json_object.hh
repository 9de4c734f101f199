// A small builder for the flat-ish JSON objects the endpoints write as stats.
// Keys keep their insertion order.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace netrepro::grump {

class JsonObject {
 public:
  JsonObject& add(const std::string& key, const std::string& value);
  JsonObject& add(const std::string& key, const char* value);
  JsonObject& add(const std::string& key, double value);  // non-finite -> null
  JsonObject& add(const std::string& key, uint64_t value);
  JsonObject& add(const std::string& key, bool value);
  JsonObject& add(const std::string& key, std::optional<double> value);  // empty -> null
  JsonObject& add(const std::string& key, const JsonObject& value);
  std::string str() const;  // one line

  // Writes str() and a newline to path; throws std::runtime_error naming the path.
  void write_file(const std::string& path) const;
  // Creates (truncates) path now, so a bad path fails before a run instead of after it.
  static void check_writable(const std::string& path);

  static std::string quote(const std::string& text);

 private:
  JsonObject& add_raw(const std::string& key, std::string json);
  std::vector<std::pair<std::string, std::string>> members_;
};

}  // namespace netrepro::grump
