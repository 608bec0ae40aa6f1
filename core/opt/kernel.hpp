// Kernel: a kernel AST seen as one loop nest whose axes the OptOps split, as tinygrad's
// opt/kernel.py.
//
// ## The idea
//
// A kernel AST (SINK of STOREs over LOADs, ALU ops and REDUCE_AXIS, each buffer access through a
// VIEW) is, read as loops, one nest over the *full shape*: the output axes, then the reduced axes.
// The Kernel keeps one ShapeTracker per buffer access (`bufs`), two per reduce (its output shape
// and its input shape, so it knows which axes each reduce folds), and a last one of the full shape
// with zero strides. Every optimisation is a reshape plus a permute applied to all of them at
// once, so axis i means the same loop in every tracker. For a 64x64x64 matmul on the CPU:
//
//   Kernel(ast)    full shape (64, 64, 64)        axis types L L R
//   UPCAST:1:4     (64, 16, 4, 64)                L L u R      the new axis follows the loops
//   UNROLL:0:4     (64, 16, 4, 16, 4)             L L u R r    and an unroll goes last
//
// Axis types say how code generation runs each axis: GLOBAL (a launch dimension; LOOP on targets
// without locals), LOCAL (the workgroup), GROUP_REDUCE (a reduce split across the workgroup
// through shared memory), REDUCE (a reduce loop), UPCAST and UNROLL (unrolled into vectors), and
// THREAD (tunebed: a CPU loop sliced across the cores; always axis 0).
//
// At construction, axes of size 1 are dropped and adjacent axes that are contiguous in every
// tracker are merged (simplify_ones, simplify_merge_adjacent), so a 4x4 elementwise add is one
// axis of 16. why_illegal checks an Opt against tinygrad's legality rules and says which rule it
// breaks; apply_opt runs the same rules and throws KernelOptError with the rule's message. A
// refused opt leaves the Kernel as it was.
#pragma once

#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/opt/kernel_info.hpp"
#include "core/opt/opt.hpp"
#include "core/opt/renderer.hpp"
#include "core/shape/shapetracker.hpp"

namespace tunebed {

class Kernel {
 public:
  // Throws std::invalid_argument for an AST that is not a kernel (not a SINK, a LOAD or STORE
  // without a VIEW, reduce axes that are not the last ones of the full shape).
  Kernel(const UOp& ast, Renderer opts);

  const UOp& ast() const { return ast_; }
  const Renderer& opts() const { return opts_; }
  const std::vector<UOp>& bufs() const { return bufs_; }  // buffer ops, the outputs first
  const std::vector<ShapeTracker>& sts() const { return sts_; }
  const std::vector<UOp>& reduceops() const { return reduceops_; }
  const UOp* reduceop() const { return reduceops_.empty() ? nullptr : &reduceops_[0]; }
  const std::vector<UOp>& vars() const { return vars_; }  // DEFINE_VARs, by name

  const SymShape& full_shape() const { return sts_.back().shape(); }
  const SymShape& output_shape() const { return sts_[0].shape(); }
  int shape_len() const { return static_cast<int>(sts_[0].shape().size()); }
  const std::vector<AxisType>& axis_types() const { return axis_types_; }
  std::vector<int> axes_of(std::initializer_list<AxisType> types) const;
  int upcasted() const;                      // UPCAST and UNROLL axes
  int group_for_reduces() const;             // GROUP_REDUCE axes
  int64_t shared_memory_bytes() const;       // of a grouped reduce's workgroup buffer, else 0
  std::vector<int> upcastable_dims() const;  // GLOBAL/LOCAL/LOOP axes of an int size > 1
  std::vector<int> unrollable_dims() const;  // GROUP_REDUCE/REDUCE axes of an int size > 1

  const std::vector<Opt>& applied_opts() const { return applied_opts_; }
  bool dont_use_locals() const { return dont_use_locals_; }
  // The tensor core the TC opt applied, and where its N, M, K axes are now (tc_kernel.cpp).
  const std::optional<TensorCore>& tensor_core() const { return tensor_core_; }
  const std::optional<TensorCoreOptions>& tensor_core_opts() const { return tensor_core_opts_; }

  // tinygrad's kernel name: "r_" for a kernel with a reduce, "E_" for elementwise, "C_" for a
  // copy, the number of outputs if more than one, then the full shape joined by "_" (symbolic
  // sizes as written). Deterministic: tinygrad's per-process "n1" suffix for repeats is left
  // to whoever needs names unique within a program.
  std::string name() const;
  // The full shape, each size coloured by its axis type (ANSI, as tinygrad's colored_shape);
  // plain when `color` is false. The overload without it colours only when stdout is a TTY.
  std::string colored_shape(bool color, int pad = 0, bool dense = false) const;
  std::string colored_shape() const;
  // Per axis its letter and its index among axes of that type: {"L0", "u0", "R0", "r0"}.
  std::vector<std::string> shape_str() const;

  // The axis of the shape that an Opt's axis means (see opt.hpp), or why it means none.
  std::variant<int, std::string> real_axis(OptOps op, std::optional<int> axis) const;
  // The first legality rule the opt breaks, as a message naming the rule; nullopt when it applies.
  // No exception and no copy of the Kernel, except for TC, which is tried on a copy.
  std::optional<std::string> why_illegal(const Opt& opt) const;
  // Applies the opt and returns nullopt, or returns why_illegal's message and changes nothing.
  [[nodiscard]] std::optional<std::string> try_apply_opt(const Opt& opt, bool append_opt = true);
  // Applies the opt, or throws KernelOptError with why_illegal's message and changes nothing.
  void apply_opt(const Opt& opt, bool append_opt = true);
  Kernel& apply_opts(const std::vector<Opt>& opts);
  // tinygrad's apply_tensor_cores: the TC opt with (tc_select, tc_opt, use_tensor_cores), then
  // extra_opts or, on a GPU tensor core, the hand-coded upcasts and local of N. false, and the
  // Kernel unchanged, when no tensor core fits or an opt is refused.
  bool apply_tensor_cores(int use_tensor_cores = 1, const std::optional<std::vector<Opt>>& extra_opts = std::nullopt,
                          int axis = 0, int tc_select = -1, int tc_opt = 0);

  // The AST with every VIEW reshaped to the full shape after the opts and the SINK's arg a
  // KernelInfo record (kernel_info.hpp). The name is the SINK's KernelInfo name if it has one,
  // else name_override, else name(). GROUP/GROUPTOP reduces go through a DEFINE_LOCAL buffer.
  UOp get_optimized_ast(std::optional<std::string> name_override = std::nullopt) const;

 private:
  void reshape(const std::function<SymShape(const SymShape&)>& new_shape_fxn);
  void permute(const std::vector<int64_t>& new_axes);
  void shift_to(int axis, int64_t amount, AxisType new_type, bool top = false,
                std::optional<int> insert_at = std::nullopt);
  bool simplify_ones();
  void simplify_merge_adjacent();
  // apply_opt.cpp: an opt that passes check_opt, with its axis and amount resolved (SWAP's
  // amount is the other axis; -1 where the op has none).
  struct Legal {
    int axis;
    int64_t amt;
  };
  std::variant<Legal, std::string> check_opt(const Opt& opt) const;  // every rule but TC's matching
  std::optional<std::string> why_op_illegal(OptOps op, int axis, int64_t amt) const;
  std::optional<std::string> why_padto_illegal(int axis, int64_t amt) const;
  int64_t shared_memory_after(OptOps op, int axis, int64_t amt) const;
  void apply_legal(OptOps op, int axis, int64_t amt);
  // tc_kernel.cpp: matching a tensor core, applying its splits, and its WMMA in the optimized AST.
  std::optional<TensorCoreOptions> create_tc_opts(const UOp& reduceop, const TensorCore& tc, int axis,
                                                  int opt_level) const;
  bool apply_tc_opt(int use_tensor_cores, int axis, int tc_select, int opt_level);
  bool apply_tc_splits(const TensorCore& tc);
  UOp tc_reduce(const UOp& reduce, const std::vector<int>& axes) const;

  UOp ast_;
  Renderer opts_;
  std::vector<UOp> bufs_, reduceops_, vars_;
  std::vector<ShapeTracker> sts_;
  std::vector<AxisType> axis_types_;
  std::vector<Opt> applied_opts_;
  bool dont_use_locals_ = false;
  std::optional<TensorCore> tensor_core_;
  std::optional<TensorCoreOptions> tensor_core_opts_;
  int use_tensor_cores_ = 0;  // 1: the reduce becomes a WMMA; 2: only the TC's shape
};

}  // namespace tunebed
