// ShapeTracker: a stack of Views, tinygrad's shape/shapetracker.py.
//
// Movement ops apply to the last view. When a reshape cannot be expressed on it (View::reshape
// answers nullopt), a new contiguous view of the new shape is pushed: the index of the top view is
// unravelled into the shape of the one below, and so on down to the buffer. `simplify` merges
// adjacent views wherever the pair is one view (View::operator+), so a tracker only stays
// multi-view where the map truly is not affine-with-a-box-mask.
//
// A ShapeTracker is a value and also an Arg of VIEW UOps: it prints as tinygrad's repr,
//   ShapeTracker(views=(View(shape=(4, 6), strides=(6, 1), offset=0, mask=None, contiguous=True),))
// and the text parser rebuilds it (registered for the record kind "ShapeTracker").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/shape/view.hpp"

namespace tunebed {

class ShapeTracker : public ArgObject {
 public:
  explicit ShapeTracker(std::vector<View> views);  // at least one view
  static ShapeTracker from_shape(const SymShape& shape, std::optional<SymShape> strides = std::nullopt);

  const std::vector<View>& views() const { return views_; }
  const SymShape& shape() const { return views_.back().shape(); }
  int64_t size() const { return views_.back().size(); }
  bool contiguous() const { return views_.size() == 1 && views_[0].contiguous(); }

  // Movement ops; each throws ViewError, naming the op, for an argument illegal for this shape.
  ShapeTracker reshape(const SymShape& new_shape) const;
  ShapeTracker permute(const std::vector<int64_t>& axis) const;
  ShapeTracker expand(const SymShape& new_shape) const;
  ShapeTracker pad(const Mask& before_after) const;
  ShapeTracker shrink(const Mask& begin_end) const;
  ShapeTracker flip(const std::vector<bool>& axes) const;
  // A movement op given as a UOp's op and arg (tinygrad's mops table): RESHAPE/EXPAND a tuple of
  // sizes, PERMUTE a tuple of axes, PAD/SHRINK a tuple of pairs, FLIP a tuple of bools.
  ShapeTracker mop(Ops op, const Arg& arg) const;

  // Merge the top views while they compose into one.
  ShapeTracker simplify() const;

  // (index, valid) of the buffer position read for the index expressions `idxs` (one per dimension
  // of shape()), simplified. Without idxs: over RANGE variables, axis i is RANGE(shape[i]) arg=i.
  // The arithmetic is in index_dtype().
  std::pair<UOp, UOp> to_indexed_uops(const std::vector<UOp>& idxs) const;
  std::pair<UOp, UOp> to_indexed_uops() const;
  static std::vector<UOp> index_ranges(const SymShape& shape, DType dtype = dtypes::index);
  // int32 (dtypes::index), or int64 where some position or intermediate may not fit in int32.
  DType index_dtype() const;

  // Per dimension, the stride in the buffer, or nullopt where it is not one constant stride (a
  // reshape across views) or, unless ignore_valid, where the dimension is masked.
  std::vector<std::optional<sint>> real_strides(bool ignore_valid = false) const;
  std::vector<size_t> unit_stride_axes(bool ignore_valid = false) const;

  // An upper bound on the buffer positions the tracker reaches, plus one: the size a buffer read
  // through it needs (tinygrad's real_size). 0 for an empty shape.
  int64_t real_size() const;

  // For every index of shape() in row-major order, the buffer position it reads, or -1 where it is
  // masked out. Integer shapes only; computed from the views directly (IntTracker), not from the
  // UOps.
  std::vector<int64_t> buffer_positions() const;

  bool operator==(const ShapeTracker& o) const { return views_ == o.views_; }
  std::string repr() const;

  // ArgObject: how a ShapeTracker rides in a UOp's arg.
  std::string_view kind() const override { return "ShapeTracker"; }
  uint64_t hash() const override;
  bool equals(const ArgObject& o) const override;
  Record to_record() const override;
  static ShapeTracker from_record(const Record& r);  // throws std::invalid_argument naming the fault
  Arg to_arg() const;

 private:
  ShapeTracker with_last(View v) const;
  std::vector<View> views_;
};

// A tracker's map from index to buffer position evaluated directly on integers, view by view: the
// top view's offset, strides and mask box, then each view below unravels that position row-major
// into its own shape. No index UOps are built or simplified, so it is independent of the
// expressions codegen lowers (the AST interpreter reads through it) and fast enough to run once
// per element.
class IntTracker {
 public:
  // Whether every shape, stride, offset and mask bound of ST is an integer.
  static bool concrete(const ShapeTracker& st);
  explicit IntTracker(const ShapeTracker& st);  // throws std::invalid_argument unless concrete(st)

  // The position index IDX (one entry per dimension of the tracker's shape) reads, or nullopt
  // where a mask hides it.
  std::optional<int64_t> position(const int64_t* idx) const;
  // The positions of the COUNT indices that differ from IDX only on AXIS, where they are IDX[AXIS],
  // IDX[AXIS] + 1, ...: OUT[j], or kHidden where a mask hides it. A single view steps by its stride.
  static constexpr int64_t kHidden = INT64_MIN;
  void positions_along(const int64_t* idx, size_t axis, int64_t count, int64_t* out) const;

 private:
  struct IntView {
    std::vector<int64_t> shape, strides, begin, end;  // begin/end: the mask box, else 0 and shape
    int64_t offset = 0;
    bool empty = false;  // a size-0 view: nothing is valid through it
  };
  std::vector<IntView> views_;
};

}  // namespace tunebed
