#include "results/json_lines.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>

namespace tunebed::results {
namespace {

void append_string(std::string& out, std::string_view s) {
  out += '"';
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
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);  // UTF-8 passes through as is
        }
    }
  }
  out += '"';
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// A cursor over one JSON text; every error names the 1-based column where it was found.
class Reader {
 public:
  explicit Reader(std::string_view text) : s_(text) {}

  [[noreturn]] void fail(const std::string& what) const { fail_at(pos_, what); }
  [[noreturn]] void fail_at(size_t pos, const std::string& what) const {
    throw std::invalid_argument("column " + std::to_string(pos + 1) + ": " + what);
  }
  size_t pos() {
    skip_space();
    return pos_;
  }
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\r' || s_[pos_] == '\n'))
      ++pos_;
  }
  bool peek(char c) {
    skip_space();
    return pos_ < s_.size() && s_[pos_] == c;
  }
  void expect(char c) {
    if (!peek(c)) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  bool at_end() {
    skip_space();
    return pos_ == s_.size();
  }

  std::string string() {
    expect('"');
    std::string out;
    while (true) {
      if (pos_ >= s_.size()) fail("unterminated string");
      if (static_cast<unsigned char>(s_[pos_]) < 0x20) fail("control character inside a string");
      char c = s_[pos_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) fail("unterminated escape");
      switch (char e = s_[pos_++]) {
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
          uint32_t cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00) {  // a surrogate pair encodes one code point past U+FFFF
            if (s_.substr(pos_, 2) != "\\u") fail("unpaired UTF-16 surrogate");
            pos_ += 2;
            uint32_t low = hex4();
            if (low < 0xDC00 || low >= 0xE000) fail("invalid UTF-16 low surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(out, cp);
          break;
        }
        default:
          --pos_;
          fail(std::string("unknown escape '\\") + e + "'");
      }
    }
  }

  Value value() {
    skip_space();
    if (pos_ >= s_.size()) fail("expected a value");
    char c = s_[pos_];
    if (c == '"') return string();
    if (word("null")) return std::monostate{};
    if (word("true")) return int64_t{1};
    if (word("false")) return int64_t{0};
    if (c == '-' || (c >= '0' && c <= '9')) return number();
    fail(std::string("expected a string, number, true, false or null, not '") + c + "'");
  }

  Value number() {
    size_t start = pos_;
    while (pos_ < s_.size() && std::string_view("+-0123456789.eE").find(s_[pos_]) != std::string_view::npos)
      ++pos_;
    std::string_view text = s_.substr(start, pos_ - start);
    const char* end = text.data() + text.size();
    if (text.find_first_of(".eE") == std::string_view::npos) {
      int64_t i = 0;
      auto [p, ec] = std::from_chars(text.data(), end, i);
      if (ec == std::errc() && p == end) return i;
    }
    // from_chars reports out-of-range (1e999) as an error; strtod gives the infinity JSON means.
    std::string copy(text);
    char* stop = nullptr;
    double d = std::strtod(copy.c_str(), &stop);
    if (copy.empty() || stop != copy.c_str() + copy.size()) fail_at(start, "malformed number '" + copy + "'");
    return d;
  }

 private:
  bool word(std::string_view w) {
    if (s_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }
  uint32_t hex4() {
    if (pos_ + 4 > s_.size()) fail("truncated \\u escape");
    uint32_t cp = 0;
    auto [p, ec] = std::from_chars(s_.data() + pos_, s_.data() + pos_ + 4, cp, 16);
    if (ec != std::errc() || p != s_.data() + pos_ + 4) fail("\\u needs four hex digits");
    pos_ += 4;
    return cp;
  }
  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

std::string json_number(double v) {
  if (std::isnan(v)) return "null";
  if (std::isinf(v)) return v > 0 ? "1e999" : "-1e999";
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);  // shortest form that reads back exactly
  return std::string(buf, end);
}

std::string json_numbers(const std::vector<double>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + json_number(values[i]);
  return out + "]";
}

std::vector<double> parse_json_numbers(std::string_view text) {
  Reader r(text);
  std::vector<double> out;
  r.expect('[');
  if (!r.peek(']')) {
    do {
      Value v = r.value();
      if (std::holds_alternative<int64_t>(v)) {
        out.push_back(static_cast<double>(std::get<int64_t>(v)));
      } else if (std::holds_alternative<double>(v)) {
        out.push_back(std::get<double>(v));
      } else if (std::holds_alternative<std::monostate>(v)) {
        out.push_back(std::numeric_limits<double>::quiet_NaN());
      } else {
        r.fail("expected a number in the array");
      }
    } while (r.peek(',') && (r.expect(','), true));
  }
  r.expect(']');
  if (!r.at_end()) r.fail("unexpected text after the array");
  return out;
}

std::string to_json(const JsonRow& row) {
  std::string out = "{";
  for (size_t i = 0; i < row.size(); ++i) {
    if (i) out += ',';
    append_string(out, row[i].first);
    out += ':';
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::monostate>)
            out += "null";
          else if constexpr (std::is_same_v<T, int64_t>)
            out += std::to_string(v);
          else if constexpr (std::is_same_v<T, double>)
            out += json_number(v);
          else
            append_string(out, v);
        },
        row[i].second);
  }
  return out + "}";
}

JsonRow parse_json_object(std::string_view text) {
  Reader r(text);
  JsonRow row;
  r.expect('{');
  if (!r.peek('}')) {
    do {
      size_t start = r.pos();
      std::string key = r.string();
      for (const auto& [k, v] : row) {
        if (k == key) r.fail_at(start, "duplicate key \"" + key + "\"");
      }
      r.expect(':');
      row.emplace_back(std::move(key), r.value());
    } while (r.peek(',') && (r.expect(','), true));
  }
  r.expect('}');
  if (!r.at_end()) r.fail("unexpected text after the object");
  return row;
}

}  // namespace tunebed::results
