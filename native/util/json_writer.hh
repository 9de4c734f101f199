// The one JSON writer of the native programs: an object whose members keep their insertion
// order, printed indented (two spaces a level) and written to a file atomically.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace netrepro {

class JsonObject {
 public:
  JsonObject& add(const std::string& key, const std::string& value);
  JsonObject& add(const std::string& key, const char* value);
  JsonObject& add(const std::string& key, double value);  // non-finite -> null
  JsonObject& add(const std::string& key, uint64_t value);
  JsonObject& add(const std::string& key, int64_t value);
  JsonObject& add(const std::string& key, int value);
  JsonObject& add(const std::string& key, unsigned int value);
  JsonObject& add(const std::string& key, long long value);
  JsonObject& add(const std::string& key, unsigned long long value);
  JsonObject& add(const std::string& key, bool value);
  JsonObject& add(const std::string& key, std::optional<double> value);    // empty -> null
  JsonObject& add(const std::string& key, std::optional<uint64_t> value);  // empty -> null
  JsonObject& add(const std::string& key, const JsonObject& value);
  JsonObject& add_null(const std::string& key);
  JsonObject& add_array(const std::string& key, const std::vector<uint64_t>& values);
  JsonObject& add_array(const std::string& key, const std::vector<uint32_t>& values);
  JsonObject& add_array(const std::string& key, const std::vector<double>& values);

  bool empty() const { return members_.empty(); }
  // Indented, ending in a newline.
  std::string str() const;

  // Replaces `path` atomically with str(): a temporary file beside it, then rename, so a
  // reader never sees half a file. Throws SystemError naming the path.
  void write_file(const std::string& path) const;
  // Creates (truncates) `path` now, so a bad path fails before a run instead of after it.
  // Throws std::runtime_error naming the path.
  static void check_writable(const std::string& path);

  // A JSON string literal (quotes, backslashes and control characters escaped).
  static std::string quote(const std::string& text);
  // The shortest of 15 or 17 significant digits that reads back exactly; null if not finite.
  static std::string number(double value);

 private:
  JsonObject& add_raw(const std::string& key, std::string json);
  void append_to(std::string& out, int indent) const;

  struct Member {
    std::string key;
    std::string json;                     // a scalar's text, or empty for a nested object
    std::vector<JsonObject> nested;       // one element for a nested object
  };
  std::vector<Member> members_;
};

// Replaces `path` with `contents` atomically (temporary file + rename); throws SystemError.
void write_file_atomically(const std::string& path, const std::string& contents);

}  // namespace netrepro
