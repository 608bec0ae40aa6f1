// KernelInfo as a record, and the names and letters of the axis types.
#include "core/opt/kernel_info.hpp"

#include <array>
#include <cctype>
#include <stdexcept>

namespace tunebed {

namespace {

constexpr std::array<std::string_view, 8> kAxisTypeNames = {"GLOBAL", "LOCAL",  "LOOP",   "GROUP_REDUCE",
                                                            "REDUCE", "UPCAST", "UNROLL", "THREAD"};
constexpr std::array<char, 8> kAxisLetters = {'g', 'l', 'L', 'G', 'R', 'u', 'r', 't'};

Arg opts_arg(const std::vector<Opt>& opts) {
  ArgTuple t;
  for (const Opt& o : opts) t.emplace_back(o.to_record());
  return Arg(std::move(t));
}

std::vector<Opt> opts_from_arg(const Arg& a) {
  std::vector<Opt> opts;
  for (const Arg& o : a.as_tuple()) opts.push_back(Opt::from_record(o.as_record()));
  return opts;
}

}  // namespace

std::string_view axis_type_name(AxisType t) { return kAxisTypeNames[static_cast<size_t>(t)]; }
char axis_letter(AxisType t) { return kAxisLetters[static_cast<size_t>(t)]; }

std::optional<AxisType> axis_type_from_name(std::string_view s) {
  for (size_t i = 0; i < kAxisTypeNames.size(); i++)
    if (kAxisTypeNames[i] == s) return static_cast<AxisType>(i);
  return std::nullopt;
}

Record KernelInfo::to_record() const {
  ArgTuple types;
  for (AxisType t : axis_types) types.emplace_back(std::string(axis_type_name(t)));
  return Record{"KernelInfo",
                {{"name", Arg(name)},
                 {"axis_types", Arg(std::move(types))},
                 {"dont_use_locals", Arg(dont_use_locals)},
                 {"applied_opts", opts_arg(applied_opts)},
                 {"opts_to_apply", opts_to_apply ? opts_arg(*opts_to_apply) : Arg()}}};
}

// Fields left out take tinygrad's dataclass defaults; a field tinygrad's KernelInfo does not have
// is an error (the dataset's older KernelInfo(global_dims=..., ...) is not this record).
KernelInfo KernelInfo::from_record(const Record& r) {
  if (r.name != "KernelInfo") throw std::invalid_argument("expected a KernelInfo record, got " + r.name);
  KernelInfo info;
  for (const auto& [field, value] : r.fields) {
    try {
      if (field == "name") {
        info.name = value.as_string();
      } else if (field == "axis_types") {
        for (const Arg& t : value.as_tuple()) {
          std::optional<AxisType> at = axis_type_from_name(t.as_string());
          if (!at) throw std::invalid_argument("unknown axis type \"" + t.as_string() + "\"");
          info.axis_types.push_back(*at);
        }
      } else if (field == "dont_use_locals") {
        info.dont_use_locals = value.as_bool();
      } else if (field == "applied_opts") {
        info.applied_opts = opts_from_arg(value);
      } else if (field == "opts_to_apply") {
        if (!value.is_none()) info.opts_to_apply = opts_from_arg(value);
      } else {
        throw std::invalid_argument("no such field");
      }
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("KernelInfo field " + field + ": " + e.what());
    }
  }
  return info;
}

std::string to_function_name(std::string_view name) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : name) {
    if (std::isalnum(c) || c == '_')
      out += static_cast<char>(c);
    else
      out += {hex[c >> 4], hex[c & 15]};
  }
  return out;
}

std::optional<KernelInfo> kernel_info_of(const UOp& sink) {
  if (!sink.arg().is_record() || sink.arg().as_record().name != "KernelInfo") return std::nullopt;
  return KernelInfo::from_record(sink.arg().as_record());
}

}  // namespace tunebed
