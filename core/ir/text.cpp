#include "core/ir/text.hpp"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>

namespace tunebed {

ParseError::ParseError(int l, int c, const std::string& msg)
    : std::runtime_error("line " + std::to_string(l) + ", column " + std::to_string(c) + ": " + msg),
      line(l),
      col(c) {}

// ---- printing ------------------------------------------------------------------------------

namespace {

using Names = std::unordered_map<const UOpNode*, std::string>;

void print_float(std::string& out, double d) {
  if (std::isnan(d)) {
    out += "nan";
  } else if (std::isinf(d)) {
    out += d > 0 ? "inf" : "-inf";
  } else {
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, d);  // shortest text that reads back exactly
    std::string_view s(buf, res.ptr - buf);
    out += s;
    if (s.find_first_of(".e") == std::string_view::npos) out += ".0";
  }
}

void print_string(std::string& out, const std::string& s) {
  out += '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  out += '"';
}

void print_arg_to(std::string& out, const Arg& a, const Names* names);

void print_record(std::string& out, const Record& r, const Names* names) {
  out += r.name;
  out += '(';
  for (size_t i = 0; i < r.fields.size(); i++) {
    if (i) out += ", ";
    out += r.fields[i].first;
    out += '=';
    print_arg_to(out, r.fields[i].second, names);
  }
  out += ')';
}

void print_arg_to(std::string& out, const Arg& a, const Names* names) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, None>) out += "None";
        else if constexpr (std::is_same_v<T, bool>) out += x ? "True" : "False";
        else if constexpr (std::is_same_v<T, int64_t>) out += std::to_string(x);
        else if constexpr (std::is_same_v<T, double>) print_float(out, x);
        else if constexpr (std::is_same_v<T, std::string>) print_string(out, x);
        else if constexpr (std::is_same_v<T, Ops>) out += "Ops." + std::string(op_name(x));
        else if constexpr (std::is_same_v<T, DType>) out += "dtypes." + to_string(x);
        else if constexpr (std::is_same_v<T, UOp>) {
          auto it = names ? names->find(x.get()) : Names::const_iterator();
          if (names && it != names->end()) out += it->second;
          else out += "<UOp " + std::string(op_name(x.op())) + ">";
        } else if constexpr (std::is_same_v<T, std::shared_ptr<const ArgTuple>>) {
          out += '(';
          for (size_t i = 0; i < x->size(); i++) {
            if (i) out += ", ";
            print_arg_to(out, (*x)[i], names);
          }
          if (x->size() == 1) out += ',';
          out += ')';
        } else if constexpr (std::is_same_v<T, std::shared_ptr<const Record>>) {
          print_record(out, *x, names);
        } else {
          print_record(out, x->to_record(), names);
        }
      },
      a.v);
}

// UOps an arg refers to, in order of appearance.
void arg_uops(const Arg& a, std::vector<UOp>& out) {
  if (a.is<UOp>()) out.push_back(a.as_uop());
  else if (a.is_tuple())
    for (const Arg& x : a.as_tuple()) arg_uops(x, out);
  else if (a.is_record())
    for (const auto& f : a.as_record().fields) arg_uops(f.second, out);
  else if (a.is_object())
    for (const auto& f : std::get<std::shared_ptr<const ArgObject>>(a.v)->to_record().fields) arg_uops(f.second, out);
}

}  // namespace

std::string print_arg(const Arg& a) {
  std::string out;
  print_arg_to(out, a, nullptr);
  return out;
}

std::string print_uop(const UOp& root) {
  // Depth-first, the UOps inside an arg first, then the sources in order; iterative. Nodes are
  // numbered in the order they finish, so every name is defined before it is used.
  Names names;
  std::string out;
  struct Frame {
    UOp u;
    std::vector<UOp> deps;
    size_t next = 0;
  };
  std::vector<Frame> stack;
  auto push = [&](const UOp& u) {
    Frame f{u, {}, 0};
    arg_uops(u.arg(), f.deps);
    f.deps.insert(f.deps.end(), u.src().begin(), u.src().end());
    names.emplace(u.get(), std::string());  // mark as being visited
    stack.push_back(std::move(f));
  };
  std::vector<UOp> order;
  push(root);
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.next < f.deps.size()) {
      UOp d = f.deps[f.next++];
      if (!names.count(d.get())) push(d);
      continue;
    }
    order.push_back(f.u);
    stack.pop_back();
  }
  for (size_t i = 0; i < order.size(); i++) names[order[i].get()] = "u" + std::to_string(i);
  for (const UOp& u : order) {
    out += names[u.get()];
    out += " = ";
    out += op_name(u.op());
    out += ' ';
    out += to_string(u.dtype());
    if (!u.arg().is_none()) {
      out += " arg=";
      print_arg_to(out, u.arg(), &names);
    }
    if (!u.src().empty()) {
      out += " src=(";
      for (size_t i = 0; i < u.src().size(); i++) {
        if (i) out += ", ";
        out += names[u.src()[i].get()];
      }
      out += ')';
    }
    out += '\n';
  }
  return out;
}

// ---- parsing -------------------------------------------------------------------------------

namespace {

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  [[noreturn]] void fail(const std::string& msg) const {
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

  void skip_spaces() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\r')) pos_++;
  }
  bool at_end() const { return pos_ >= s_.size(); }
  char peek() {
    skip_spaces();
    return at_end() ? '\0' : s_[pos_];
  }
  bool accept(std::string_view tok) {
    skip_spaces();
    if (s_.substr(pos_, tok.size()) != tok) return false;
    pos_ += tok.size();
    return true;
  }
  void expect(std::string_view tok) {
    if (!accept(tok)) fail("expected '" + std::string(tok) + "'" + found());
  }
  std::string found() {
    skip_spaces();
    if (at_end()) return ", found end of input";
    if (s_[pos_] == '\n') return ", found end of line";
    size_t n = 0;
    while (pos_ + n < s_.size() && n < 12 && s_[pos_ + n] != '\n') n++;
    return ", found '" + std::string(s_.substr(pos_, n)) + "'";
  }
  static bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
  std::string_view ident() {
    skip_spaces();
    size_t b = pos_;
    while (pos_ < s_.size() && ident_char(s_[pos_])) pos_++;
    if (b == pos_) fail("expected a name" + found());
    return s_.substr(b, pos_ - b);
  }

  int64_t integer() {
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

  DType dtype() {
    std::string_view name = ident();
    auto sc = scalar_from_name(name);
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
          std::string_view sp = ident();
          if (sp == "local") a = AddrSpace::Local;
          else if (sp == "reg") a = AddrSpace::Reg;
          else if (sp != "global") fail("unknown address space '" + std::string(sp) + "'");
        }
        d = d.ptr_to(n, a);
      } else {
        fail("unknown dtype method '" + std::string(m) + "'");
      }
      expect(")");
    }
    return d;
  }

  Arg number() {
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
    if (r.ec == std::errc::result_out_of_range) fail("integer out of range" + found());
    if (r.ec != std::errc() || r.ptr != last) fail("malformed number" + found());
    pos_ = e;
    return Arg(v);
  }

  std::string string_literal() {
    expect("\"");
    std::string out;
    while (true) {
      if (at_end() || s_[pos_] == '\n') fail("unterminated string");
      char c = s_[pos_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_end()) fail("unterminated string");
      char e = s_[pos_++];
      if (e == '"' || e == '\\') {
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

  Arg arg(int depth = 0) {
    if (depth > 64) fail("arg nested too deeply");
    char c = peek();
    if (c == '"') return Arg(string_literal());
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
    if (peek() == '(') return record(std::string(name), depth);
    if (uops_) {
      auto it = uops_->find(std::string(name));
      if (it != uops_->end()) return Arg(it->second);
    }
    pos_ = start;
    fail("unknown name '" + std::string(name) + "'");
  }

  Arg record(std::string name, int depth) {
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

  UOp graph() {
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

  void expect_end() {
    skip_spaces();
    while (pos_ < s_.size() && (s_[pos_] == '\n' || s_[pos_] == ' ')) pos_++;
    if (!at_end()) fail("unexpected text" + found());
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
  const std::unordered_map<std::string, UOp>* uops_ = nullptr;
};

}  // namespace

UOp parse_uop(std::string_view text) { return Parser(text).graph(); }

Arg parse_arg(std::string_view text) {
  Parser p(text);
  Arg a = p.arg();
  p.expect_end();
  return a;
}

DType parse_dtype(std::string_view text) {
  Parser p(text);
  DType d = p.dtype();
  p.expect_end();
  return d;
}

}  // namespace tunebed
