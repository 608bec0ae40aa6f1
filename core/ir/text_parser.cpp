#include "core/ir/text_parser.hpp"

#include <charconv>
#include <cmath>
#include <limits>

namespace tunebed {

void Parser::fail(const std::string& msg) const {
  int line = 1, col = 1;
  for (size_t i = 0; i < pos_ && i < s_.size(); i++) {
    if (s_[i] == '\n') {
      line++;
      col = 1;
    } else {
      col++;
    }
  }
  throw ParseError(line, col, msg);
}

void Parser::skip_spaces() {
  while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\r')) pos_++;
}

char Parser::peek() {
  skip_spaces();
  return at_end() ? '\0' : s_[pos_];
}

bool Parser::accept(std::string_view tok) {
  skip_spaces();
  if (s_.substr(pos_, tok.size()) != tok) return false;
  pos_ += tok.size();
  return true;
}

void Parser::expect(std::string_view tok) {
  if (!accept(tok)) fail("expected '" + std::string(tok) + "'" + found());
}

std::string Parser::found() {
  skip_spaces();
  if (at_end()) return ", found end of input";
  if (s_[pos_] == '\n') return ", found end of line";
  size_t n = 0;
  while (pos_ + n < s_.size() && n < 12 && s_[pos_ + n] != '\n') n++;
  return ", found '" + std::string(s_.substr(pos_, n)) + "'";
}

std::string_view Parser::ident() {
  skip_spaces();
  size_t b = pos_;
  while (pos_ < s_.size() && ident_char(s_[pos_])) pos_++;
  if (b == pos_) fail("expected a name" + found());
  return s_.substr(b, pos_ - b);
}

int64_t Parser::integer() {
  skip_spaces();
  size_t b = pos_;
  if (pos_ < s_.size() && s_[pos_] == '-') pos_++;
  while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) pos_++;
  int64_t v = 0;
  auto r = std::from_chars(s_.data() + b, s_.data() + pos_, v);
  if (r.ec != std::errc() || r.ptr != s_.data() + pos_) {
    pos_ = b;
    fail("expected an integer" + found());
  }
  return v;
}

DType Parser::dtype() {
  skip_spaces();
  size_t start = pos_;  // errors point at the name, not past it
  std::string_view name = ident();
  auto sc = scalar_from_name(name);
  if (!sc) pos_ = start;
  if (!sc && name.starts_with("image")) fail("image dtypes (dtypes." + std::string(name) + ") are not supported");
  if (!sc) fail("unknown dtype '" + std::string(name) + "'");
  DType d(*sc);
  while (accept(".")) {
    std::string_view m = ident();
    expect("(");
    int64_t n = integer();
    if (m == "vec") {
      if (n < 1 || n > 1024) fail("vector width " + std::to_string(n) + " out of range");
      if (d.ptr ? d.v != 1 : d.count != 1) fail("a dtype can be vectorised once");
      d = d.ptr ? d.with_v(static_cast<int>(n)) : d.vec(static_cast<int>(n));
    } else if (m == "ptr") {
      if (d.ptr) fail("pointer to a pointer");
      AddrSpace a = AddrSpace::Global;
      if (accept(",")) {
        // Ours: `local`; tinygrad's: `AddrSpace.LOCAL`, and the older `local=True`.
        std::string_view sp = ident();
        if (sp == "AddrSpace") {
          expect(".");
          sp = ident();
        } else if (sp == "local" && accept("=")) {
          sp = ident() == "True" ? "local" : "global";
        }
        if (sp == "local" || sp == "LOCAL") a = AddrSpace::Local;
        else if (sp == "reg" || sp == "REG") a = AddrSpace::Reg;
        else if (sp != "global" && sp != "GLOBAL") fail("unknown address space '" + std::string(sp) + "'");
      }
      d = d.ptr_to(n, a);
    } else {
      fail("unknown dtype method '" + std::string(m) + "'");
    }
    expect(")");
  }
  return d;
}

Arg Parser::number() {
  skip_spaces();
  size_t b = pos_;
  if (accept("-inf")) return Arg(-std::numeric_limits<double>::infinity());
  if (accept("inf")) return Arg(std::numeric_limits<double>::infinity());
  if (accept("nan")) return Arg(std::numeric_limits<double>::quiet_NaN());
  size_t e = pos_;
  if (e < s_.size() && (s_[e] == '-' || s_[e] == '+')) e++;
  bool is_float = false;
  while (e < s_.size()) {
    char c = s_[e];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      e++;
    } else if (c == '.' || c == 'e' || c == 'E') {
      is_float = true;
      e++;
      if ((c == 'e' || c == 'E') && e < s_.size() && (s_[e] == '-' || s_[e] == '+')) e++;
    } else {
      break;
    }
  }
  const char* first = s_.data() + b;
  const char* last = s_.data() + e;
  if (first != last && *first == '+') first++;
  if (is_float) {
    double d = 0;
    auto r = std::from_chars(first, last, d);
    if (r.ec != std::errc() || r.ptr != last) fail("malformed number" + found());
    pos_ = e;
    return Arg(d);
  }
  int64_t v = 0;
  auto r = std::from_chars(first, last, v);
  if (r.ec == std::errc::result_out_of_range) {
    // A uint64 literal above int64's range is kept as its two's-complement bits, as uint64
    // constants are stored.
    uint64_t u = 0;
    auto ru = std::from_chars(first, last, u);
    if (ru.ec != std::errc() || ru.ptr != last) fail("integer out of range" + found());
    pos_ = e;
    return Arg(static_cast<int64_t>(u));
  }
  if (r.ec != std::errc() || r.ptr != last) fail("malformed number" + found());
  pos_ = e;
  return Arg(v);
}

std::string Parser::string_literal() {
  char quote = peek();
  if (quote != '"' && !(single_quotes_ && quote == '\'')) fail("expected a string" + found());
  pos_++;
  std::string out;
  while (true) {
    if (at_end() || s_[pos_] == '\n') fail("unterminated string");
    char c = s_[pos_++];
    if (c == quote) return out;
    if (c != '\\') {
      out += c;
      continue;
    }
    if (at_end()) fail("unterminated string");
    char e = s_[pos_++];
    if (e == '"' || e == '\'' || e == '\\') {
      out += e;
    } else if (e == 'n') {
      out += '\n';
    } else if (e == 't') {
      out += '\t';
    } else if (e == 'x' && pos_ + 2 <= s_.size() && std::isxdigit(static_cast<unsigned char>(s_[pos_])) &&
               std::isxdigit(static_cast<unsigned char>(s_[pos_ + 1]))) {
      out += static_cast<char>(std::stoi(std::string(s_.substr(pos_, 2)), nullptr, 16));
      pos_ += 2;
    } else {
      fail(std::string("unknown escape '\\") + e + "'");
    }
  }
}

Arg Parser::arg(int depth) {
  if (depth > 64) fail("arg nested too deeply");
  char c = peek();
  if (c == '"' || (single_quotes_ && c == '\'')) return Arg(string_literal());
  if (c == '(') {
    pos_++;
    ArgTuple items;
    while (!accept(")")) {
      items.push_back(arg(depth + 1));
      if (!accept(",")) {
        expect(")");
        break;
      }
    }
    return Arg(std::move(items));
  }
  if (c == '-' || c == '+' || c == '.' || std::isdigit(static_cast<unsigned char>(c))) return number();
  size_t start = pos_;
  std::string_view name = ident();
  if (name == "None") return Arg();
  if (name == "True") return Arg(true);
  if (name == "False") return Arg(false);
  if (name == "inf" || name == "nan") {
    pos_ = start;
    return number();
  }
  if (name == "Ops") {
    expect(".");
    std::string_view o = ident();
    auto op = op_from_name(o);
    if (!op) fail("unknown op 'Ops." + std::string(o) + "'");
    return Arg(*op);
  }
  if (name == "dtypes") {
    expect(".");
    return Arg(dtype());
  }
  if (auto a = dialect_arg(name, depth)) return *a;
  if (peek() == '(') return record(std::string(name), depth);
  if (uops_) {
    auto it = uops_->find(std::string(name));
    if (it != uops_->end()) return Arg(it->second);
  }
  pos_ = start;
  fail("unknown name '" + std::string(name) + "'");
}

Arg Parser::record(std::string name, int depth) {
  expect("(");
  Record r{std::move(name), {}};
  while (!accept(")")) {
    std::string field(ident());
    expect("=");
    r.fields.emplace_back(std::move(field), arg(depth + 1));
    if (!accept(",")) {
      expect(")");
      break;
    }
  }
  if (const ArgObjectParser* p = find_arg_object_parser(r.name)) {
    try {
      return (*p)(r);
    } catch (const ParseError&) {
      throw;
    } catch (const std::exception& e) {
      fail("bad " + r.name + ": " + e.what());
    }
  }
  return Arg(std::move(r));
}

UOp Parser::uop_list() {
  std::unordered_map<std::string, UOp> defined;
  uops_ = &defined;
  UOp last;
  while (true) {
    while (pos_ < s_.size() && (s_[pos_] == '\n' || s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\r'))
      pos_++;
    if (at_end()) break;
    size_t line_start = pos_;
    std::string name(ident());
    if (defined.count(name)) fail("'" + name + "' is defined twice");
    expect("=");
    std::string_view opname = ident();
    auto op = op_from_name(opname);
    if (!op) {
      pos_ -= opname.size();
      fail("unknown op '" + std::string(opname) + "'");
    }
    DType dt = dtype();
    Arg a;
    std::vector<UOp> src;
    if (accept("arg=")) a = arg();
    if (accept("src=")) {
      expect("(");
      while (!accept(")")) {
        size_t at = pos_;
        std::string ref(ident());
        auto it = defined.find(ref);
        if (it == defined.end()) {
          pos_ = at;
          skip_spaces();
          fail("'" + ref + "' is not defined before this line");
        }
        src.push_back(it->second);
        if (!accept(",")) {
          expect(")");
          break;
        }
      }
    }
    skip_spaces();
    if (!at_end() && s_[pos_] != '\n') fail("unexpected text at end of line" + found());
    try {
      last = UOp::make(*op, dt, std::move(src), a);
    } catch (const std::exception& e) {
      pos_ = line_start;
      fail(std::string("invalid ") + std::string(opname) + ": " + e.what());
    }
    defined.emplace(std::move(name), last);
  }
  if (!last) fail("no UOp in the text");
  uops_ = nullptr;
  return last;
}

void Parser::expect_end() {
  skip_spaces();
  while (pos_ < s_.size() && (s_[pos_] == '\n' || s_[pos_] == ' ')) pos_++;
  if (!at_end()) fail("unexpected text" + found());
}

}  // namespace tunebed
