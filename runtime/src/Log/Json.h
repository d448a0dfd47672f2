//===- Json.h - a small JSON writer and reader
//-----------------------------===//
//
// Enough JSON for the runtime's logs and checkpoint manifests: an object
// writer that produces one line, and a reader into a value tree whose depth
// is capped (so hostile input cannot make it recurse deeply).
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_LOG_JSON_H
#define DTCRT_LOG_JSON_H

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace dtcrt {

/// `s` as a quoted JSON string.
std::string jsonQuote(const std::string &s);

/// `v` as a JSON number that reads back to the same double (NaN and the
/// infinities as Python's json module writes them: NaN, Infinity).
std::string jsonNumber(double v);

/// `v` with `digits` significant digits (9 round-trips a float).
std::string jsonNumber(double v, int digits);

/// Builds one JSON object, key by key, in order.
class JsonObjectWriter {
public:
  JsonObjectWriter &raw(const std::string &key, const std::string &json);
  JsonObjectWriter &str(const std::string &key, const std::string &value);
  JsonObjectWriter &num(const std::string &key, double value);
  JsonObjectWriter &num(const std::string &key, double value, int digits);
  JsonObjectWriter &integer(const std::string &key, int64_t value);
  /// The object text, "{...}".
  std::string finish() const { return "{" + body + "}"; }

private:
  std::string body;
};

/// A parsed JSON value.
struct JsonValue {
  enum class Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  double number = 0;
  /// The number's text, for exact integers past 2^53.
  std::string numberText;
  std::string string;
  std::vector<JsonValue> array;
  std::vector<std::pair<std::string, JsonValue>> object;

  /// The member `key` of an object, or null.
  const JsonValue *get(const std::string &key) const;
  /// The number as an exact int64, if it is one.
  bool asInt64(int64_t &out) const;
};

/// Most nesting levels parseJson accepts.
constexpr int kMaxJsonDepth = 32;

/// Parses `text` (one JSON value, surrounding space allowed).
bool parseJson(const std::string &text, JsonValue &out, std::string &error);

} // namespace dtcrt

#endif // DTCRT_LOG_JSON_H
