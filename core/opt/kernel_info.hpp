// AxisType and KernelInfo: what the optimizer tells code generation, in the SINK's arg.
//
// The contract with core/codegen is tinygrad's (uop/ops.py at the seed). After
// Kernel::get_optimized_ast(), the SINK's arg is the record
//
//   KernelInfo(name="r_16_4_4", axis_types=("LOOP", "UPCAST", "REDUCE"), dont_use_locals=False,
//              applied_opts=(Opt(op="UPCAST", axis=0, arg=4),), opts_to_apply=None)
//
// and every VIEW in the AST has the kernel's full shape after the opts, axis i of each
// ShapeTracker being axis i of axis_types. The fields:
//   name            the kernel name, r_/E_/C_ plus the full shape; plain text where tinygrad's
//                   carries ANSI colours, and symbolic sizes as written ("r_4_(N+1)"), so
//                   codegen makes the C name with to_function_name
//   axis_types      one per axis, in order; the strings "GLOBAL", "LOCAL", "LOOP",
//                   "GROUP_REDUCE", "REDUCE", "UPCAST", "UNROLL" and, tunebed only, "THREAD"
//                   (a CPU loop run as one slice per core; it is always the outermost axis)
//   dont_use_locals NOLOCALS was applied: the GLOBAL axes are not split into workgroups
//   applied_opts    the opts, in order, that made this shape (records, see Opt::to_record)
//   opts_to_apply   None, or opts that get_optimized_ast(ast, renderer) applies instead of
//                   the heuristics (a kernel replayed from the tuning database)
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/opt/opt.hpp"

namespace tunebed {

enum class AxisType : uint8_t { GLOBAL, LOCAL, LOOP, GROUP_REDUCE, REDUCE, UPCAST, UNROLL, THREAD };

std::string_view axis_type_name(AxisType t);  // "GLOBAL"
std::optional<AxisType> axis_type_from_name(std::string_view s);
char axis_letter(AxisType t);  // tinygrad's shape_str letters: g l L G R u r, and t

struct KernelInfo {
  std::string name = "test";
  std::vector<AxisType> axis_types;
  bool dont_use_locals = false;
  std::vector<Opt> applied_opts;
  std::optional<std::vector<Opt>> opts_to_apply;

  Record to_record() const;
  // Throws std::invalid_argument naming the field that is missing or of the wrong kind.
  static KernelInfo from_record(const Record& r);
  bool operator==(const KernelInfo&) const = default;
};

// tinygrad's to_function_name: a kernel name as a C identifier, every character that is not a
// letter, digit or '_' as two hex digits ("r_4_(N+1)" -> "r_4_284E2B2129").
std::string to_function_name(std::string_view name);

// The KernelInfo of a SINK's arg, or nullopt where the arg is not a KernelInfo record.
std::optional<KernelInfo> kernel_info_of(const UOp& sink);

}  // namespace tunebed
