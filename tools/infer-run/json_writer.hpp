// A minimal streaming JSON writer for --json output: objects, arrays, strings, numbers,
// booleans and null, written compactly on one line. It does not validate call order
// beyond what the commas need; the callers are few and tested.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace infer::cli {

class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  // The key of the next value inside an object.
  JsonWriter& key(std::string_view name);
  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(const std::string& text) { return value(std::string_view(text)); }
  // Non-finite numbers have no JSON form and are written as null.
  JsonWriter& value(double number);
  JsonWriter& value(int64_t number);
  JsonWriter& value(int number) { return value(static_cast<int64_t>(number)); }
  JsonWriter& value(size_t number);
  JsonWriter& value(bool flag);
  JsonWriter& null();

  const std::string& str() const { return out_; }

 private:
  void before_value();
  std::string out_;
  // One entry per open container: true until its first element is written.
  std::vector<bool> first_;
  bool after_key_ = false;
};

// `text` as a JSON string literal, quotes included.
std::string json_quote(std::string_view text);

}  // namespace infer::cli
