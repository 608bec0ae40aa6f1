// The C renderer, tinygrad's renderer/cstyle.py (CStyleLanguage and ClangRenderer): one function
// in the CPU ABI of core/runtime/device.hpp, with clang's vector extensions for float2/4/8.
//
// Values get a variable when they have to (loads, and anything used twice) and are written
// inline otherwise; constants and addresses are always inline. A variable's name says what made
// it (data, ridx, val, alu, acc, cast), numbered in order, so the same list prints the same text.
// Self-contained: no #include, only clang builtins, so the source compiles on its own.
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "core/codegen/passes.hpp"

namespace tunebed {

using namespace codegen_detail;

namespace {

std::string c_scalar(const DType& d) {
  switch (d.scalar) {
    case Scalar::Bool:
      return "_Bool";
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
      return "__fp16";
    case Scalar::Float32:
      return "float";
    case Scalar::Float64:
      return "double";
    default:
      throw CodegenError("the C renderer has no type for " + to_string(d));
  }
}

// float4 for a vector (declared by a typedef in the prelude), the scalar's C type otherwise.
std::string c_type(const DType& d) {
  if (d.count == 1) return c_scalar(d);
  if (d.scalar != Scalar::Float32)
    throw CodegenError("the C renderer has no vector type for " + to_string(d));
  return "float" + std::to_string(d.count);
}

std::string render_const(const UOp& c) {
  const DType& d = c.dtype();
  if (d.is_float()) {
    const double v = c.const_value();
    const bool f32 = d.scalar != Scalar::Float64;
    std::string s;
    if (std::isnan(v))
      s = f32 ? "__builtin_nanf(\"\")" : "__builtin_nan(\"\")";
    else if (std::isinf(v))
      s = std::string(v < 0 ? "-" : "") + (f32 ? "__builtin_inff()" : "__builtin_inf()");
    else {
      char buf[40];
      std::snprintf(buf, sizeof buf, f32 ? "%.9g" : "%.17g", v);
      s = buf;
      if (s.find_first_of(".e") == std::string::npos) s += ".0";
      if (f32) s += "f";
    }
    return d.scalar == Scalar::Float16 ? "((__fp16)" + s + ")" : s;
  }
  if (d.is_bool()) return c.const_int() ? "1" : "0";
  const int64_t v = c.const_int();
  switch (d.scalar) {
    case Scalar::Int32:
      return v == d.int_min() ? "(-2147483647-1)" : std::to_string(v);
    case Scalar::Int64:
      return v == d.int_min() ? "(-9223372036854775807ll-1)" : std::to_string(v) + "ll";
    case Scalar::UInt32:
      return std::to_string(static_cast<uint32_t>(v)) + "u";
    case Scalar::UInt64:
      return std::to_string(static_cast<uint64_t>(v)) + "ull";
    default:
      return "((" + c_scalar(d) + ")" + std::to_string(v) + ")";
  }
}

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

std::string render_alu(Ops op, const DType& d, const std::vector<std::string>& a, const DType& src_dtype) {
  const bool f64 = src_dtype.scalar == Scalar::Float64;
  auto fn = [&](const char* name) {
    return std::string("__builtin_") + name + (f64 ? "" : "f") + "(" + a[0] + ")";
  };
  std::string e;
  switch (op) {
    case Ops::ADD:
      e = "(" + a[0] + "+" + a[1] + ")";
      break;
    case Ops::SUB:
      e = "(" + a[0] + "-" + a[1] + ")";
      break;
    case Ops::MUL:
      e = "(" + a[0] + "*" + a[1] + ")";
      break;
    case Ops::FDIV:
    case Ops::IDIV:
      e = "(" + a[0] + "/" + a[1] + ")";
      break;
    case Ops::MOD:
      e = "(" + a[0] + "%" + a[1] + ")";
      break;
    case Ops::CMPLT:
      e = "(" + a[0] + "<" + a[1] + ")";
      break;
    case Ops::CMPNE:
      e = "(" + a[0] + "!=" + a[1] + ")";
      break;
    case Ops::CMPEQ:
      e = "(" + a[0] + "==" + a[1] + ")";
      break;
    case Ops::AND:
      e = "(" + a[0] + "&" + a[1] + ")";
      break;
    case Ops::OR:
      e = "(" + a[0] + "|" + a[1] + ")";
      break;
    case Ops::XOR:
      e = "(" + a[0] + "^" + a[1] + ")";
      break;
    case Ops::SHL:
      e = "(" + a[0] + "<<" + a[1] + ")";
      break;
    case Ops::SHR:
      e = "(" + a[0] + ">>" + a[1] + ")";
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
      e = std::string("__builtin_pow") + (f64 ? "" : "f") + "(" + a[0] + "," + a[1] + ")";
      break;
    default:
      throw CodegenError("the C renderer cannot render " + std::string(op_name(op)));
  }
  // half arithmetic happens in float; round each result back, as the dtype says.
  return d.scalar == Scalar::Float16 ? "((__fp16)" + e + ")" : e;
}

class CRenderer {
 public:
  explicit CRenderer(const std::vector<UOp>& uops) : uops_(uops) {
    for (const UOp& u : uops)
      for (const UOp& s : u.src()) {
        uses_[s.get()]++;
        // MAX repeats its operands in the ternary: they get variables so nothing grows twice as big.
        if (u.op() == Ops::MAX) uses_[s.get()]++;
      }
  }

  std::string render() {
    const UOp& sink = uops_.back();
    const std::string name = to_function_name(kernel_info(sink).name);
    std::vector<std::string> vars;
    for (const UOp& u : uops_)
      if (u.op() == Ops::DEFINE_VAR) vars.push_back(u.arg().as_tuple().at(0).as_string());
    std::sort(vars.begin(), vars.end());
    for (const UOp& u : uops_) line(u, vars);
    std::string prelude;
    for (int w : vector_widths_)
      prelude += "typedef float float" + std::to_string(w) + " __attribute__((aligned(4),vector_size(" +
                 std::to_string(4 * w) + ")));\n";
    return prelude + "void " + name + "(void* const* bufs, const int* vars, int core_id, int num_cores) {\n" +
           body_ + "}\n";
  }

 private:
  static void check_identifier(const std::string& s, const char* what) {
    bool ok = !s.empty() && !std::isdigit(static_cast<unsigned char>(s[0]));
    for (char ch : s) ok = ok && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_');
    if (!ok) throw CodegenError(std::string(what) + " '" + s + "' is not a C identifier");
  }

  std::string type_of(const DType& d) {
    if (d.count > 1) vector_widths_.insert(d.count);
    return c_type(d);
  }

  void stmt(const std::string& s) { body_ += std::string(2 * depth_, ' ') + s + "\n"; }

  // Give u's expression a variable (prefix + number) unless it can stay inline.
  void define(const UOp& u, const std::string& prefix, const std::string& expr, bool inline_ok) {
    if (inline_ok && uses_[u.get()] <= 1) {
      r_[u.get()] = expr;
      return;
    }
    const std::string var = prefix + std::to_string(counts_[prefix]++);
    stmt(type_of(u.dtype()) + " " + var + " = " + expr + ";");
    r_[u.get()] = var;
  }

  // The address an INDEX names, and its gate ("" when ungated).
  std::pair<std::string, std::string> address(const UOp& index, int width) {
    std::string base = r_.at(index.src(0).get()), idx = r_.at(index.src(1).get());
    std::string addr = index.src(1).is_const(0) ? base : "(" + base + "+" + idx + ")";
    if (width > 1) addr = "((" + type_of(index.src(0).dtype().base().vec(width)) + "*)" + addr + ")";
    return {addr, index.src().size() > 2 ? r_.at(index.src(2).get()) : ""};
  }

  std::vector<std::string> operands(const UOp& u) {
    std::vector<std::string> out;
    for (const UOp& s : u.src()) {
      auto it = r_.find(s.get());  // statements and global addresses have no expression
      out.push_back(it == r_.end() ? "" : it->second);
    }
    return out;
  }

  void line(const UOp& u, const std::vector<std::string>& vars) {
    const std::vector<std::string> a = operands(u);
    switch (u.op()) {
      case Ops::DEFINE_GLOBAL: {
        const std::string var = "data" + std::to_string(u.arg().as_int()), t = c_scalar(u.dtype().base());
        stmt(t + "* restrict " + var + " = (" + t + "*)bufs[" + std::to_string(u.arg().as_int()) + "];");
        r_[u.get()] = var;
        return;
      }
      case Ops::DEFINE_VAR: {
        const std::string var = u.arg().as_tuple().at(0).as_string();
        check_identifier(var, "variable name");
        const auto k = std::find(vars.begin(), vars.end(), var) - vars.begin();
        stmt("const int " + var + " = vars[" + std::to_string(k) + "];");
        r_[u.get()] = var;
        return;
      }
      case Ops::DEFINE_REG: {
        const std::string var = "acc" + std::to_string(u.arg().as_int());
        stmt(type_of(u.dtype().base()) + " " + var + "[1];");
        r_[u.get()] = var;
        return;
      }
      case Ops::SPECIAL:
        r_[u.get()] = "core_id";
        return;
      case Ops::CONST:
        r_[u.get()] = render_const(u);
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
        auto [addr, gate] = address(index, u.dtype().count);
        std::string expr = "*" + addr;
        if (!gate.empty()) {
          std::string zero = u.dtype().count > 1 ? "(" + type_of(u.dtype()) + "){0}" : render_zero(u.dtype());
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
      case Ops::VECTORIZE: {
        std::string e = "(" + type_of(u.dtype()) + "){";
        for (size_t i = 0; i < a.size(); i++) e += (i ? "," : "") + a[i];
        define(u, "cast", e + "}", true);
        return;
      }
      case Ops::GEP:
        r_[u.get()] = a[0] + "[" + std::to_string(u.arg().as_ints().at(0)) + "]";
        return;
      case Ops::CAST:
        define(u, "cast", "((" + type_of(u.dtype()) + ")" + a[0] + ")", true);
        return;
      case Ops::BITCAST:
        define(u, "cast", "__builtin_bit_cast(" + type_of(u.dtype()) + "," + a[0] + ")", true);
        return;
      default:
        if (!GroupOp::ALU.contains(u.op()) || u.op() == Ops::THREEFRY || u.op() == Ops::MULACC)
          throw CodegenError("the C renderer cannot render " + std::string(op_name(u.op())));
        define(u, "alu", render_alu(u.op(), u.dtype(), a, u.src(0).dtype()), true);
    }
  }

  static std::string render_zero(const DType& d) {
    return render_const(d.is_float() ? UOp::const_float(d, 0) : UOp::const_int(d, 0));
  }

  const std::vector<UOp>& uops_;
  std::map<const UOpNode*, int> uses_;
  std::map<const UOpNode*, std::string> r_;
  std::map<std::string, int> counts_;
  std::set<int> vector_widths_;
  std::string body_;
  size_t depth_ = 1;
};

}  // namespace

std::string render_c(const std::vector<UOp>& uops) {
  if (uops.empty() || uops.back().op() != Ops::SINK)
    throw CodegenError("render_c: the list does not end with a SINK");
  return CRenderer(uops).render();
}

}  // namespace tunebed
