// OptOps and Opt: one step of kernel optimisation, as tinygrad's opt/kernel.py.
//
// An Opt names an OptOp, the axis it acts on and its argument:
//   UPCAST:0:4     split 4 off axis 0 and run it as a vector (UNROLL is the same for a reduce axis)
//   LOCAL:1:16     split 16 off global axis 1 into the workgroup
//   GROUPTOP:0:16  reduce the top 16 of reduce axis 0 through shared memory (GROUP: the bottom)
//   PADTO:2:32     pad axis 2 up to a multiple of 32
//   SWAP:0:1       swap global axes 0 and 1 (the arg is an axis)
//   NOLOCALS       run without a workgroup (no axis, no arg)
//   THREAD:0:8     tunebed only: split 8 off a CPU loop axis, one slice per core
//   TC:0:(-1,2,1)  tensor cores, arg (tc_select, tc_opt, use_tensor_cores)
// An amount of 0 means the whole axis. The text form above is what `--opts` and the tuning
// database use: a list is the opts joined by ",", and print(parse(s)) is s.
//
// For UNROLL the axis counts unrollable (reduce) dims, for GROUP/GROUPTOP it counts REDUCE axes,
// and for every other op it is an index into the kernel's shape: tinygrad's real_axis.
#pragma once

#include <array>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/ir/uop.hpp"

namespace tunebed {

enum class OptOps : uint8_t { TC, UPCAST, UNROLL, LOCAL, GROUP, GROUPTOP, NOLOCALS, PADTO, SWAP, THREAD };

std::string_view optops_name(OptOps op);  // "UPCAST"
std::optional<OptOps> optops_from_name(std::string_view s);

// TC's argument: which tensor core (-1: the first that fits), how permissive the match is
// (0..2), and 1 = emit WMMA or 2 = only the shape ops.
struct TCArg {
  int tc_select = -1, tc_opt = 0, use_tensor_cores = 1;
  bool operator==(const TCArg&) const = default;
};

struct Opt {
  OptOps op;
  std::optional<int> axis;
  std::variant<std::monostate, int, TCArg> arg;

  std::optional<int> amount() const;  // the int arg, if it is one
  bool operator==(const Opt&) const = default;

  // As tinygrad's repr inside a KernelInfo: Opt(op="UPCAST", axis=0, arg=4).
  Record to_record() const;
  static Opt from_record(const Record& r);  // throws std::invalid_argument naming the fault
};

// A failed legality check. The message says which rule refused the opt, and why.
class KernelOptError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Text form: "UPCAST:0:4", "NOLOCALS", "TC:0:(-1,2,1)"; lists joined with ",".
std::string to_string(const Opt& opt);
std::string to_string(const std::vector<Opt>& opts);  // "" for none
// Throws std::invalid_argument naming the bad item and what was wrong with it.
Opt parse_opt(std::string_view text);
std::vector<Opt> parse_opts(std::string_view text);  // "" gives none

}  // namespace tunebed
