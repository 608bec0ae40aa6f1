#include "core/ir/text.hpp"

#include "core/ir/hash.hpp"
#include "core/ir/text_parser.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
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

UOp parse_uop(std::string_view text) { return Parser(text).uop_list(); }

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

std::string kernel_hash(const UOp& ast) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash_bytes(print_uop(ast))));
  return hex;
}

}  // namespace tunebed
