//===- Json.cpp - a small JSON writer and reader
//---------------------------===//

#include "runtime/src/Log/Json.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace dtcrt;

std::string dtcrt::jsonQuote(const std::string &s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (c < 0x20) {
        char buffer[8];
        std::snprintf(buffer, sizeof(buffer), "\\u%04x", c);
        out += buffer;
      } else {
        out += char(c);
      }
    }
  }
  return out + "\"";
}

static std::string nonFinite(double v) {
  if (std::isnan(v))
    return "NaN";
  return v > 0 ? "Infinity" : "-Infinity";
}

std::string dtcrt::jsonNumber(double v) {
  if (!std::isfinite(v))
    return nonFinite(v);
  char buffer[32];
  for (int digits = 15; digits <= 17; ++digits) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", digits, v);
    if (std::strtod(buffer, nullptr) == v)
      break;
  }
  return buffer;
}

std::string dtcrt::jsonNumber(double v, int digits) {
  if (!std::isfinite(v))
    return nonFinite(v);
  char buffer[40];
  std::snprintf(buffer, sizeof(buffer), "%.*g", digits, v);
  return buffer;
}

JsonObjectWriter &JsonObjectWriter::raw(const std::string &key,
                                        const std::string &json) {
  if (!body.empty())
    body += ", ";
  body += jsonQuote(key) + ": " + json;
  return *this;
}

JsonObjectWriter &JsonObjectWriter::str(const std::string &key,
                                        const std::string &value) {
  return raw(key, jsonQuote(value));
}

JsonObjectWriter &JsonObjectWriter::num(const std::string &key, double value) {
  return raw(key, jsonNumber(value));
}

JsonObjectWriter &JsonObjectWriter::num(const std::string &key, double value,
                                        int digits) {
  return raw(key, jsonNumber(value, digits));
}

JsonObjectWriter &JsonObjectWriter::integer(const std::string &key,
                                            int64_t value) {
  return raw(key, std::to_string(value));
}

const JsonValue *JsonValue::get(const std::string &key) const {
  if (kind != Kind::Object)
    return nullptr;
  for (const auto &member : object)
    if (member.first == key)
      return &member.second;
  return nullptr;
}

bool JsonValue::asInt64(int64_t &out) const {
  if (kind != Kind::Number || numberText.empty())
    return false;
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(numberText.c_str(), &end, 10);
  if (errno != 0 || *end != '\0')
    return false;
  out = v;
  return true;
}

namespace {
/// Recursive descent over the JSON grammar, at most kMaxJsonDepth deep.
class JsonParser {
public:
  explicit JsonParser(const std::string &text) : text(text) {}
  bool parseDocument(JsonValue &out, std::string &error);

private:
  bool parseValue(JsonValue &out, int depth);
  bool parseString(std::string &out);
  bool parseNumber(JsonValue &out);
  bool fail(const std::string &message) {
    if (error.empty())
      error = message + " at offset " + std::to_string(pos);
    return false;
  }
  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }
  bool startsWith(const char *word) const {
    return text.compare(pos, std::strlen(word), word) == 0;
  }

  const std::string &text;
  size_t pos = 0;
  std::string error;
};
} // namespace

bool JsonParser::parseDocument(JsonValue &out, std::string &err) {
  bool ok = parseValue(out, 0);
  if (ok) {
    skipSpace();
    if (pos != text.size())
      ok = fail("unexpected text after the value");
  }
  if (!ok)
    err = error;
  return ok;
}

static void appendUtf8(std::string &out, uint32_t cp) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xc0 | (cp >> 6));
    out += char(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += char(0xe0 | (cp >> 12));
    out += char(0x80 | ((cp >> 6) & 0x3f));
    out += char(0x80 | (cp & 0x3f));
  } else {
    out += char(0xf0 | (cp >> 18));
    out += char(0x80 | ((cp >> 12) & 0x3f));
    out += char(0x80 | ((cp >> 6) & 0x3f));
    out += char(0x80 | (cp & 0x3f));
  }
}

bool JsonParser::parseString(std::string &out) {
  // At the opening quote.
  ++pos;
  out.clear();
  auto hex4 = [&](uint32_t &v) {
    if (pos + 4 > text.size())
      return false;
    v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text[pos++];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= uint32_t(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= uint32_t(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= uint32_t(c - 'A' + 10);
      else
        return false;
    }
    return true;
  };
  while (pos < text.size()) {
    char c = text[pos++];
    if (c == '"')
      return true;
    if (static_cast<unsigned char>(c) < 0x20)
      return fail("control character in a string");
    if (c != '\\') {
      out += c;
      continue;
    }
    if (pos >= text.size())
      break;
    char e = text[pos++];
    switch (e) {
    case '"':
    case '\\':
    case '/':
      out += e;
      break;
    case 'b':
      out += '\b';
      break;
    case 'f':
      out += '\f';
      break;
    case 'n':
      out += '\n';
      break;
    case 'r':
      out += '\r';
      break;
    case 't':
      out += '\t';
      break;
    case 'u': {
      uint32_t cp;
      if (!hex4(cp))
        return fail("malformed \\u escape");
      if (cp >= 0xd800 && cp < 0xdc00 && startsWith("\\u")) {
        pos += 2;
        uint32_t low;
        if (!hex4(low) || low < 0xdc00 || low >= 0xe000)
          return fail("malformed surrogate pair");
        cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
      }
      appendUtf8(out, cp);
      break;
    }
    default:
      return fail("unknown escape in a string");
    }
  }
  return fail("unterminated string");
}

bool JsonParser::parseNumber(JsonValue &out) {
  size_t start = pos;
  if (pos < text.size() && text[pos] == '-')
    ++pos;
  if (startsWith("Infinity")) {
    pos += 8;
    out.kind = JsonValue::Kind::Number;
    out.number = text[start] == '-' ? -INFINITY : INFINITY;
    return true;
  }
  bool integer = true;
  size_t digits = pos;
  while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9')
    ++pos;
  if (pos == digits)
    return fail("malformed number");
  if (pos < text.size() && text[pos] == '.') {
    integer = false;
    ++pos;
    size_t frac = pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9')
      ++pos;
    if (pos == frac)
      return fail("malformed number");
  }
  if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
    integer = false;
    ++pos;
    if (pos < text.size() && (text[pos] == '+' || text[pos] == '-'))
      ++pos;
    size_t exp = pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9')
      ++pos;
    if (pos == exp)
      return fail("malformed number");
  }
  std::string literal = text.substr(start, pos - start);
  out.kind = JsonValue::Kind::Number;
  out.number = std::strtod(literal.c_str(), nullptr);
  if (integer)
    out.numberText = literal;
  return true;
}

bool JsonParser::parseValue(JsonValue &out, int depth) {
  if (depth > kMaxJsonDepth)
    return fail("nesting deeper than " + std::to_string(kMaxJsonDepth));
  skipSpace();
  if (pos >= text.size())
    return fail("unexpected end of text");
  char c = text[pos];
  out = JsonValue();
  if (c == '{') {
    out.kind = JsonValue::Kind::Object;
    ++pos;
    skipSpace();
    if (pos < text.size() && text[pos] == '}') {
      ++pos;
      return true;
    }
    while (true) {
      skipSpace();
      if (pos >= text.size() || text[pos] != '"')
        return fail("expected a member name");
      std::string key;
      if (!parseString(key))
        return false;
      skipSpace();
      if (pos >= text.size() || text[pos] != ':')
        return fail("expected ':'");
      ++pos;
      out.object.emplace_back(std::move(key), JsonValue());
      if (!parseValue(out.object.back().second, depth + 1))
        return false;
      skipSpace();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == '}') {
        ++pos;
        return true;
      }
      return fail("expected ',' or '}'");
    }
  }
  if (c == '[') {
    out.kind = JsonValue::Kind::Array;
    ++pos;
    skipSpace();
    if (pos < text.size() && text[pos] == ']') {
      ++pos;
      return true;
    }
    while (true) {
      out.array.emplace_back();
      if (!parseValue(out.array.back(), depth + 1))
        return false;
      skipSpace();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == ']') {
        ++pos;
        return true;
      }
      return fail("expected ',' or ']'");
    }
  }
  if (c == '"') {
    out.kind = JsonValue::Kind::String;
    return parseString(out.string);
  }
  if (startsWith("true") || startsWith("false")) {
    out.kind = JsonValue::Kind::Bool;
    out.boolean = c == 't';
    pos += out.boolean ? 4 : 5;
    return true;
  }
  if (startsWith("null")) {
    pos += 4;
    return true;
  }
  if (startsWith("NaN")) {
    pos += 3;
    out.kind = JsonValue::Kind::Number;
    out.number = NAN;
    return true;
  }
  if (c == '-' || (c >= '0' && c <= '9') || startsWith("Infinity"))
    return parseNumber(out);
  return fail("unexpected character");
}

bool dtcrt::parseJson(const std::string &text, JsonValue &out,
                      std::string &error) {
  return JsonParser(text).parseDocument(out, error);
}
