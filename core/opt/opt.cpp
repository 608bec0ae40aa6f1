// Opt: names, the text form "UPCAST:0:4" and the record form Opt(op="UPCAST", axis=0, arg=4).
#include "core/opt/opt.hpp"

#include <charconv>

namespace tunebed {

namespace {

constexpr std::array<std::string_view, 10> kOptOpsNames = {
    "TC", "UPCAST", "UNROLL", "LOCAL", "GROUP", "GROUPTOP", "NOLOCALS", "PADTO", "SWAP", "THREAD"};

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

int parse_int(std::string_view s, std::string_view what, std::string_view item) {
  s = trim(s);
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size())
    throw std::invalid_argument("opt \"" + std::string(item) + "\": " + std::string(what) + " \"" +
                                std::string(s) + "\" is not an integer");
  return v;
}

// "(-1,2,1)" -> TCArg
TCArg parse_tc_arg(std::string_view s, std::string_view item) {
  s = trim(s);
  if (s.size() < 2 || s.front() != '(' || s.back() != ')')
    throw std::invalid_argument("opt \"" + std::string(item) +
                                "\": a TC arg is (tc_select,tc_opt,use_tensor_cores)");
  s = s.substr(1, s.size() - 2);
  std::array<int, 3> v{};
  for (int i = 0; i < 3; i++) {
    size_t comma = s.find(',');
    if ((comma == std::string_view::npos) != (i == 2))
      throw std::invalid_argument("opt \"" + std::string(item) + "\": a TC arg has exactly 3 integers");
    v[i] = parse_int(s.substr(0, comma), "TC arg", item);
    if (i < 2) s.remove_prefix(comma + 1);
  }
  return TCArg{v[0], v[1], v[2]};
}

}  // namespace

std::string_view optops_name(OptOps op) { return kOptOpsNames[static_cast<size_t>(op)]; }

std::optional<OptOps> optops_from_name(std::string_view s) {
  for (size_t i = 0; i < kOptOpsNames.size(); i++)
    if (kOptOpsNames[i] == s) return static_cast<OptOps>(i);
  return std::nullopt;
}

std::optional<int> Opt::amount() const {
  if (const int* a = std::get_if<int>(&arg)) return *a;
  return std::nullopt;
}

std::string to_string(const Opt& opt) {
  std::string s(optops_name(opt.op));
  if (!opt.axis && std::holds_alternative<std::monostate>(opt.arg)) return s;
  s += ":" + (opt.axis ? std::to_string(*opt.axis) : std::string("None")) + ":";
  if (const int* a = std::get_if<int>(&opt.arg))
    s += std::to_string(*a);
  else if (const TCArg* t = std::get_if<TCArg>(&opt.arg))
    s += "(" + std::to_string(t->tc_select) + "," + std::to_string(t->tc_opt) + "," +
         std::to_string(t->use_tensor_cores) + ")";
  else
    s += "None";
  return s;
}

std::string to_string(const std::vector<Opt>& opts) {
  std::string s;
  for (const Opt& o : opts) s += (s.empty() ? "" : ",") + to_string(o);
  return s;
}

Opt parse_opt(std::string_view text) {
  std::string_view item = trim(text);
  size_t c1 = item.find(':');
  std::string_view name = item.substr(0, c1);
  std::optional<OptOps> op = optops_from_name(name);
  if (!op)
    throw std::invalid_argument(
        "opt \"" + std::string(item) + "\": unknown OptOp \"" + std::string(name) +
        "\" (one of TC UPCAST UNROLL LOCAL GROUP GROUPTOP NOLOCALS PADTO SWAP THREAD)");
  Opt opt{*op, std::nullopt, std::monostate{}};
  if (c1 == std::string_view::npos) {
    if (*op != OptOps::NOLOCALS)
      throw std::invalid_argument("opt \"" + std::string(item) + "\": " + std::string(name) +
                                  " needs an axis and an arg, as " + std::string(name) + ":AXIS:ARG");
    return opt;
  }
  std::string_view rest = item.substr(c1 + 1);
  size_t c2 = rest.find(':');
  if (c2 == std::string_view::npos)
    throw std::invalid_argument("opt \"" + std::string(item) + "\": expected OP:AXIS:ARG");
  std::string_view axis = trim(rest.substr(0, c2)), arg = trim(rest.substr(c2 + 1));
  if (axis != "None") opt.axis = parse_int(axis, "axis", item);
  if (*op == OptOps::TC)
    opt.arg = parse_tc_arg(arg, item);
  else if (arg != "None")
    opt.arg = parse_int(arg, "arg", item);
  return opt;
}

std::vector<Opt> parse_opts(std::string_view text) {
  std::vector<Opt> opts;
  if (trim(text).empty()) return opts;
  // Split at the commas outside parentheses, so that a TC arg keeps its own.
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); i++) {
    if (i < text.size() && text[i] == '(') depth++;
    if (i < text.size() && text[i] == ')') depth--;
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      opts.push_back(parse_opt(text.substr(start, i - start)));
      start = i + 1;
    }
  }
  return opts;
}

Record Opt::to_record() const {
  Arg a;
  if (const int* n = std::get_if<int>(&arg))
    a = Arg(*n);
  else if (const TCArg* t = std::get_if<TCArg>(&arg))
    a = Arg::tuple({Arg(t->tc_select), Arg(t->tc_opt), Arg(t->use_tensor_cores)});
  return Record{"Opt",
                {{"op", Arg(std::string(optops_name(op)))}, {"axis", axis ? Arg(*axis) : Arg()}, {"arg", a}}};
}

Opt Opt::from_record(const Record& r) {
  if (r.name != "Opt") throw std::invalid_argument("expected an Opt record, got " + r.name);
  std::optional<OptOps> op = optops_from_name(r.at("op").as_string());
  if (!op) throw std::invalid_argument("Opt record: unknown op \"" + r.at("op").as_string() + "\"");
  Opt opt{*op, std::nullopt, std::monostate{}};
  if (!r.at("axis").is_none()) opt.axis = static_cast<int>(r.at("axis").as_int());
  const Arg& a = r.at("arg");
  if (a.is_tuple()) {
    std::vector<int64_t> v = a.as_ints();
    if (v.size() != 3) throw std::invalid_argument("Opt record: a TC arg has 3 integers");
    opt.arg = TCArg{static_cast<int>(v[0]), static_cast<int>(v[1]), static_cast<int>(v[2])};
  } else if (!a.is_none()) {
    opt.arg = static_cast<int>(a.as_int());
  }
  return opt;
}

}  // namespace tunebed
