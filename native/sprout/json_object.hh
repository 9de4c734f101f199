// A flat JSON object for the stats files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace netrepro::sprout {

class JsonObject {
 public:
  JsonObject& add(const std::string& key, const std::string& value);
  JsonObject& add(const std::string& key, const char* value);
  JsonObject& add(const std::string& key, double value);
  JsonObject& add(const std::string& key, uint64_t value);
  JsonObject& add(const std::string& key, int64_t value);
  JsonObject& add(const std::string& key, int value);
  JsonObject& add(const std::string& key, bool value);
  JsonObject& add_null(const std::string& key);
  JsonObject& add_array(const std::string& key, const std::vector<uint32_t>& values);

  std::string str() const;
  // Writes atomically (temporary file + rename); throws naming the path.
  void write(const std::string& path) const;

 private:
  JsonObject& add_raw(const std::string& key, const std::string& json);
  std::vector<std::string> members_;
};

}  // namespace netrepro::sprout
