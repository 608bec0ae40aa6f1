// The C-style renderer core (render_cstyle.hpp): constants, ALU expressions and the walk over
// the linearized list that every dialect shares.
#include "core/codegen/render_cstyle.hpp"

#include <cctype>
#include <cmath>
#include <algorithm>
#include <cstdio>
#include <map>

#include "core/codegen/passes.hpp"
#include "core/codegen/wmma.hpp"

namespace tunebed::codegen_detail {

std::string CStyleLanguage::scalar_type(const DType& d) const {
  switch (d.scalar) {
    case Scalar::Bool:
      return "bool";
    case Scalar::Int8:
      return "signed char";
    case Scalar::Int16:
      return "short";
    case Scalar::Int32:
      return "int";
    case Scalar::Int64:
      return "long long";
    case Scalar::UInt8:
      return "unsigned char";
    case Scalar::UInt16:
      return "unsigned short";
    case Scalar::UInt32:
      return "unsigned int";
    case Scalar::UInt64:
      return "unsigned long long";
    case Scalar::Float16:
      return "half";
    case Scalar::Float32:
      return "float";
    case Scalar::Float64:
      return "double";
    default:
      throw CodegenError("the " + name() + " renderer has no type for " + to_string(d));
  }
}

std::string CStyleLanguage::pointer_type(const DType& ptr, int width) const {
  const DType base = ptr.base();
  return (width > 1 ? vector_type(base.vec(width)) : buffer_type(base)) + "*";
}

std::string CStyleLanguage::vector_zero(const DType& d) const {
  const DType s = d.scalar_type();
  return vector_value(d, std::vector<std::string>(d.count, constant(UOp::const_float(s, 0))));
}

std::string CStyleLanguage::round_to(const std::string& e, const DType& d) const {
  if (d.scalar != Scalar::Float16 && d.scalar != Scalar::BFloat16) return e;
  return "((" + scalar_type(d) + ")" + e + ")";
}

std::string CStyleLanguage::cast(const DType& to, const DType& from, const std::string& x) const {
  (void)from;
  return "((" + (to.count > 1 ? vector_type(to) : scalar_type(to)) + ")" + x + ")";
}

std::string CStyleLanguage::barrier() const {
  throw CodegenError("the " + name() + " renderer's target has no barrier (no local memory)");
}

std::string CStyleLanguage::define_local(const std::string&, const std::string&, int64_t) const {
  throw CodegenError("the " + name() + " renderer's target has no local memory");
}

std::string CStyleLanguage::constant(const UOp& c) const {
  const DType& d = c.dtype();
  if (d.is_float()) {
    const double v = c.const_value();
    const bool f64 = d.scalar == Scalar::Float64;
    std::string s;
    if (std::isnan(v))
      s = nan(f64);
    else if (std::isinf(v))
      s = std::string(v < 0 ? "-" : "") + infinity(f64);
    else {
      char buf[40];
      std::snprintf(buf, sizeof buf, f64 ? "%.17g" : "%.9g", v);
      s = buf;
      if (s.find_first_of(".e") == std::string::npos) s += ".0";
      if (!f64) s += "f";
    }
    return round_to(s, d);
  }
  if (d.is_bool()) return c.const_int() ? "1" : "0";
  const int64_t v = c.const_int();
  switch (d.scalar) {
    case Scalar::Int32:
      return v == d.int_min() ? "(-2147483647-1)" : std::to_string(v);
    case Scalar::Int64:
      return v == d.int_min() ? "(-9223372036854775807" + int64_suffix(false) + "-1)"
                              : std::to_string(v) + int64_suffix(false);
    case Scalar::UInt32:
      return std::to_string(static_cast<uint32_t>(v)) + "u";
    case Scalar::UInt64:
      return std::to_string(static_cast<uint64_t>(v)) + int64_suffix(true);
    default:
      return "((" + scalar_type(d) + ")" + std::to_string(v) + ")";
  }
}

std::string CStyleLanguage::alu(Ops op, const DType& d, const std::vector<std::string>& raw,
                                const std::vector<DType>& src_dtypes) const {
  const DType& src_dtype = src_dtypes.at(0);
  const bool f64 = src_dtype.scalar == Scalar::Float64;
  std::vector<std::string> a;
  for (size_t i = 0; i < raw.size(); i++) a.push_back(widen(raw[i], src_dtypes.at(i)));
  auto fn = [&](const char* name) { return function(name, f64) + "(" + a[0] + ")"; };
  auto binary = [&](const char* sym) { return "(" + a[0] + sym + a[1] + ")"; };
  std::string e;
  switch (op) {
    case Ops::ADD:
      e = binary("+");
      break;
    case Ops::SUB:
      e = binary("-");
      break;
    case Ops::MUL:
      e = binary("*");
      break;
    case Ops::FDIV:
    case Ops::IDIV:
      e = binary("/");
      break;
    case Ops::MOD:
      e = binary("%");
      break;
    case Ops::CMPLT:
      e = binary("<");
      break;
    case Ops::CMPNE:
      e = binary("!=");
      break;
    case Ops::CMPEQ:
      e = binary("==");
      break;
    case Ops::AND:
      e = binary("&");
      break;
    case Ops::OR:
      e = binary("|");
      break;
    case Ops::XOR:
      e = binary("^");
      break;
    case Ops::SHL:
      e = binary("<<");
      break;
    case Ops::SHR:
      e = binary(">>");
      break;
    // NaN propagates, as exec_alu's MAX: a NaN a is picked by a!=a, a NaN b because a>b is false.
    case Ops::MAX:
      e = src_dtype.is_float()
              ? "((" + a[0] + "!=" + a[0] + "||" + a[0] + ">" + a[1] + ")?" + a[0] + ":" + a[1] + ")"
              : "((" + a[0] + ">" + a[1] + ")?" + a[0] + ":" + a[1] + ")";
      break;
    case Ops::WHERE:
      e = "(" + a[0] + "?" + a[1] + ":" + a[2] + ")";
      break;
    case Ops::NEG:
      e = d.is_bool() ? "(!" + a[0] + ")" : "(-" + a[0] + ")";
      break;
    case Ops::RECIP:
      e = std::string("(") + (f64 ? "1.0" : "1.0f") + "/" + a[0] + ")";
      break;
    case Ops::SQRT:
      e = fn("sqrt");
      break;
    case Ops::EXP2:
      e = fn("exp2");
      break;
    case Ops::LOG2:
      e = fn("log2");
      break;
    case Ops::SIN:
      e = fn("sin");
      break;
    case Ops::TRUNC:
      e = fn("trunc");
      break;
    case Ops::POW:
      e = function("pow", f64) + "(" + a[0] + "," + a[1] + ")";
      break;
    default:
      throw CodegenError("the " + name() + " renderer cannot render " + std::string(op_name(op)));
  }
  return round_to(e, d);
}

namespace {

// s with one pair of parentheses around it, not two (clang warns on `if ((a==b))`).
std::string paren(const std::string& s) {
  if (s.size() < 2 || s.front() != '(' || s.back() != ')') return "(" + s + ")";
  int depth = 0;
  for (size_t i = 0; i + 1 < s.size(); i++) {
    depth += s[i] == '(' ? 1 : s[i] == ')' ? -1 : 0;
    if (depth == 0) return "(" + s + ")";  // "(a)+(b)": the first pair closes early
  }
  return s;
}

void check_identifier(const std::string& s, const char* what) {
  bool ok = !s.empty() && !std::isdigit(static_cast<unsigned char>(s[0]));
  for (char ch : s) ok = ok && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_');
  if (!ok) throw CodegenError(std::string(what) + " '" + s + "' is not a C identifier");
}

class CStyleRenderer {
 public:
  CStyleRenderer(const std::vector<UOp>& uops, const CStyleLanguage& lang) : uops_(uops), lang_(lang) {
    for (const UOp& u : uops)
      for (const UOp& s : u.src()) {
        uses_[s.get()]++;
        // MAX repeats its operands in the ternary: they get variables so nothing grows twice as big.
        if (u.op() == Ops::MAX) uses_[s.get()]++;
      }
  }

  KernelParts render() {
    parts_.name = to_function_name(kernel_info(uops_.back()).name);
    for (const UOp& u : uops_)
      if (u.op() == Ops::DEFINE_VAR) parts_.vars.push_back(u.arg().as_tuple().at(0).as_string());
    std::sort(parts_.vars.begin(), parts_.vars.end());
    for (const UOp& u : uops_) {
      note_dtype(u.dtype());
      line(u);
    }
    return std::move(parts_);
  }

 private:
  void note_dtype(const DType& d) {
    parts_.uses_half |= d.scalar == Scalar::Float16;
    parts_.uses_double |= d.scalar == Scalar::Float64;
    parts_.uses_bfloat16 |= d.scalar == Scalar::BFloat16;
  }

  std::string type_of(const DType& d) {
    if (d.count == 1) return lang_.scalar_type(d);
    if (!lang_.has_vector(d))
      throw CodegenError("the " + lang_.name() + " renderer has no vector type for " + to_string(d));
    auto& used = parts_.vector_types;
    if (std::find(used.begin(), used.end(), d) == used.end()) used.push_back(d);
    return lang_.vector_type(d);
  }

  void stmt(const std::string& s) { parts_.body += std::string(2 * depth_, ' ') + s + "\n"; }

  // Give u's expression a variable (prefix + number) unless it can stay inline. An inline chain
  // deeper than kMaxInlineDepth gets a variable too: a wide unrolled reduce is one long chain of
  // adds, and clang refuses brackets nested past 256.
  void define(const UOp& u, const std::string& prefix, const std::string& expr, bool inline_ok) {
    int depth = 1;
    for (const UOp& s : u.src())
      if (auto it = inline_depth_.find(s.get()); it != inline_depth_.end()) depth = std::max(depth, it->second + 1);
    if (inline_ok && uses_[u.get()] <= 1 && depth <= kMaxInlineDepth) {
      r_[u.get()] = expr;
      inline_depth_[u.get()] = depth;
      return;
    }
    r_[u.get()] = declare(u.dtype(), prefix, expr);
  }

  // A new variable PREFIX<n> of type D holding EXPR; its name.
  std::string declare(const DType& d, const std::string& prefix, const std::string& expr) {
    const std::string var = prefix + std::to_string(counts_[prefix]++);
    stmt(type_of(d) + " " + var + " = " + expr + ";");
    return var;
  }

  // The address an INDEX names, and its gate ("" when ungated). With CLAMP, the index is 0 where
  // the gate is off, so the address can be read whatever the gate says.
  std::pair<std::string, std::string> address(const UOp& index, int width, bool clamp = false) {
    const std::string gate = index.src().size() > 2 ? r_.at(index.src(2).get()) : "";
    std::string base = r_.at(index.src(0).get()), idx = r_.at(index.src(1).get());
    if (clamp && !gate.empty()) idx = "(" + gate + "?" + idx + ":0)";
    std::string addr = index.src(1).is_const(0) ? base : "(" + base + "+" + idx + ")";
    if (width > 1) {
      type_of(index.src(0).dtype().base().vec(width));  // records the vector width
      addr = "((" + lang_.pointer_type(index.src(0).dtype(), width) + ")" + addr + ")";
    }
    return {addr, gate};
  }

  std::vector<std::string> operands(const UOp& u) {
    std::vector<std::string> out;
    for (const UOp& s : u.src()) {
      auto it = r_.find(s.get());  // statements and global addresses have no expression
      out.push_back(it == r_.end() ? "" : it->second);
    }
    return out;
  }

  void line(const UOp& u) {
    const std::vector<std::string> a = operands(u);
    switch (u.op()) {
      case Ops::DEFINE_GLOBAL:
        parts_.globals.emplace_back(u.arg().as_int(), u.dtype());
        r_[u.get()] = "data" + std::to_string(u.arg().as_int());
        return;
      case Ops::DEFINE_VAR: {
        const std::string var = u.arg().as_tuple().at(0).as_string();
        check_identifier(var, "variable name");
        r_[u.get()] = var;
        return;
      }
      case Ops::DEFINE_LOCAL: {
        const std::string var = u.arg().as_string();
        check_identifier(var, "local buffer name");
        stmt(lang_.define_local(type_of(u.dtype().base()), var, u.dtype().size));
        r_[u.get()] = var;
        return;
      }
      case Ops::DEFINE_REG: {
        const std::string var = "acc" + std::to_string(u.arg().as_int());
        stmt(type_of(u.dtype().base()) + " " + var + "[1];");
        r_[u.get()] = var;
        return;
      }
      case Ops::SPECIAL: {
        const std::string id = u.arg().as_tuple().at(0).as_string();
        check_identifier(id, "launch id");
        if (id == "core_id") {
          r_[u.get()] = id;
          return;
        }
        stmt("int " + id + " = " + lang_.special(id) + "; /* " +
             to_string(sint_from_arg(u.arg().as_tuple().at(1))) + " */");
        r_[u.get()] = id;
        return;
      }
      case Ops::BARRIER:
        stmt(lang_.barrier());
        return;
      case Ops::CONST:
        r_[u.get()] = lang_.constant(u);
        return;
      case Ops::NOOP:
      case Ops::SINK:
        return;
      case Ops::RANGE: {
        const std::string var = "ridx" + std::to_string(u.arg().as_int());
        stmt("for (int " + var + " = 0; " + var + " < " + a[0] + "; " + var + "++) {");
        depth_++;
        r_[u.get()] = var;
        return;
      }
      case Ops::ENDRANGE:
        depth_--;
        stmt("}");
        return;
      case Ops::INDEX:
        if (u.src(0).op() == Ops::DEFINE_REG) r_[u.get()] = a[0] + "[0]";
        return;  // global addresses are written by the LOAD or STORE, which know the width
      case Ops::LOAD: {
        const UOp& index = u.src(0);
        if (index.src(0).op() == Ops::DEFINE_REG) {  // an accumulator read: its value until the next update
          r_[u.get()] = r_.at(index.get());
          return;
        }
        // Index 0 holds a whole vector only in a buffer of at least its width.
        const bool unconditional = lang_.reads_gated_loads_unconditionally() &&
                                   index.src(0).dtype().size >= u.dtype().count;
        auto [addr, gate] = address(index, u.dtype().count, unconditional);
        std::string expr = "*" + addr;
        if (!gate.empty()) {
          type_of(u.dtype());
          std::string zero = u.dtype().count > 1 ? lang_.vector_zero(u.dtype()) : zero_of(u.dtype());
          if (unconditional) expr = declare(u.dtype(), "val", expr);
          expr = "(" + gate + "?" + expr + ":" + zero + ")";
        }
        define(u, "val", expr, false);
        return;
      }
      case Ops::STORE: {
        const UOp& index = u.src(0);
        if (index.src(0).op() == Ops::DEFINE_REG) {
          stmt(r_.at(index.get()) + " = " + a[1] + ";");
          return;
        }
        auto [addr, gate] = address(index, u.src(1).dtype().count);
        const std::string s = "*" + addr + " = " + a[1] + ";";
        stmt(gate.empty() ? s : "if " + paren(gate) + " { " + s + " }");
        return;
      }
      case Ops::VECTORIZE:
        if (a.size() == 1) {  // a vector of one lane is its lane
          r_[u.get()] = a[0];
          return;
        }
        type_of(u.dtype());
        define(u, "cast", lang_.vector_value(u.dtype(), a), true);
        return;
      case Ops::GEP:
        r_[u.get()] = lang_.lane(a[0], u.src(0).dtype(), u.arg().as_ints().at(0));
        return;
      case Ops::CAST:
        type_of(u.dtype());
        define(u, "cast", lang_.cast(u.dtype(), u.src(0).dtype(), a[0]), true);
        return;
      case Ops::BITCAST:
        type_of(u.dtype());
        define(u, "cast", lang_.bitcast(u.dtype(), u.src(0).dtype(), a[0]), true);
        return;
      case Ops::WMMA:
        for (const UOp& s : u.src()) type_of(s.dtype());
        parts_.wmmas.emplace(WmmaArg(u).name, u);
        define(u, "wmma", wmma_call(u, a), false);
        return;
      default: {
        if (!GroupOp::ALU.contains(u.op()) || u.op() == Ops::THREEFRY || u.op() == Ops::MULACC)
          throw CodegenError("the " + lang_.name() + " renderer cannot render " +
                             std::string(op_name(u.op())));
        std::vector<DType> src_dtypes;
        for (const UOp& s : u.src()) src_dtypes.push_back(s.dtype());
        define(u, "alu", lang_.alu(u.op(), u.dtype(), a, src_dtypes), true);
      }
    }
  }

  std::string zero_of(const DType& d) const {
    return lang_.constant(d.is_float() ? UOp::const_float(d, 0) : UOp::const_int(d, 0));
  }

  const std::vector<UOp>& uops_;
  const CStyleLanguage& lang_;
  std::map<const UOpNode*, int> uses_;
  std::map<const UOpNode*, std::string> r_;
  static constexpr int kMaxInlineDepth = 64;
  std::map<const UOpNode*, int> inline_depth_;  // of each inlined expression's nested operations
  std::map<std::string, int> counts_;
  KernelParts parts_;
  size_t depth_ = 1;
};

}  // namespace

std::string render_cstyle(const std::vector<UOp>& uops, const CStyleLanguage& lang,
                          const std::array<sint, 3>& local_size) {
  if (uops.empty() || uops.back().op() != Ops::SINK)
    throw CodegenError("render: the list does not end with a SINK");
  KernelParts parts = CStyleRenderer(uops, lang).render();
  parts.local_size = local_size;
  return lang.kernel(parts);
}

}  // namespace tunebed::codegen_detail
