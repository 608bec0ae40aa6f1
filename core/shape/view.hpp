// View: one strided, offset, optionally masked window onto a flat buffer; tinygrad's shape/view.py.
//
// ## The idea
//
// A View maps an index (i0, i1, ...) of its shape to a position in a flat buffer:
//
//     position(i) = offset + sum_k i_k * strides[k]      if mask[k].begin <= i_k < mask[k].end for all k
//                   (no position: the element is padding, reads 0)       otherwise
//
// Every movement op (reshape, permute, expand, pad, shrink, flip) is a change of (shape, strides,
// offset, mask) that moves no data. A worked example on a 4x6 buffer of 24 elements:
//
//     base          shape (4, 6)  strides (6, 1)   offset 0          (i, j) -> 6i + j
//     permute(1,0)  shape (6, 4)  strides (1, 6)   offset 0          (i, j) -> i + 6j
//     shrink(1:3,2:5) shape (2, 3) strides (6, 1)  offset 8          (i, j) -> 8 + 6i + j
//     flip(1)       shape (4, 6)  strides (6, -1)  offset 5          (i, j) -> 5 + 6i - j
//     reshape(4,1,6).expand(4,3,6)
//                   shape (4, 3, 6) strides (6, 0, 1)                (i, k, j) -> 6i + j: stride 0 repeats
//     pad(1:1,0:2)  shape (6, 8)  strides (6, 1)   offset -6  mask ((1, 5), (0, 6))
//                   (i, j) -> 6(i-1) + j inside the mask; the border rows and the two right
//                   columns are padding. The offset is negative: (0, 0) would be position -6,
//                   but it is masked, so it is never read.
//
// Not every composition is one View. Reshaping that padded (6, 8) view to (48,) needs
// position(k) = 6(k/8 - 1) + k%8, which no single stride can express, so reshape() answers
// nullopt and the ShapeTracker keeps two views: the (6, 8) one, and a contiguous (48,) view whose
// index is unravelled into it. Merging two views back into one (operator+, tinygrad's
// View.__add__) is the other half of the algebra: it succeeds exactly when the composed map is
// again affine-with-a-box-mask.
//
// ## Canonical form
//
// View::create is the only way to build a View, and it normalises, so that equal maps compare
// equal and a View prints the same as tinygrad's: a size-1 dimension has stride 0; a mask that
// covers everything is dropped; a dimension masked down to one index gets stride 0 (its offset
// folded in); a view with an empty dimension is contiguous with zero strides; an empty mask
// makes every stride and the offset 0. `contiguous` means "offset 0, no mask, row-major strides".
//
// Entries are sints (core/shape/sint.hpp): ints, or UOp expressions for symbolic shapes.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/shape/sint.hpp"

namespace tunebed {

// An illegal movement op (wrong rank, out-of-range shrink, a size mismatch in reshape, ...). The
// message starts with the op's name and says what was wrong.
class ViewError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Per dimension a half-open [begin, end): the argument of pad (before, after), of shrink
// (begin, end), and a View's mask.
using Mask = std::vector<std::pair<sint, sint>>;

// Row-major strides for a shape, canonical (a size-1 dimension gets stride 0).
SymShape strides_for_shape(const SymShape& shape);

// Python's divmod-style unravel of a flat offset into an index of shape.
std::vector<sint> unravel(const SymShape& shape, const sint& offset);

class View {
 public:
  static View create(SymShape shape, std::optional<SymShape> strides = std::nullopt, sint offset = 0,
                     std::optional<Mask> mask = std::nullopt);

  const SymShape& shape() const { return shape_; }
  const SymShape& strides() const { return strides_; }
  const sint& offset() const { return offset_; }
  const std::optional<Mask>& mask() const { return mask_; }
  bool contiguous() const { return contiguous_; }
  size_t ndim() const { return shape_.size(); }
  int64_t size() const;  // number of elements; symbolic dimensions count at their maximum

  // Movement ops. Each throws ViewError for an argument illegal for this shape.
  View pad(const Mask& before_after) const;
  View shrink(const Mask& begin_end) const;
  View expand(const SymShape& new_shape) const;
  View permute(const std::vector<int64_t>& axis) const;
  View flip(const std::vector<bool>& axes) const;
  // nullopt when the result is not expressible as one View (the tracker then stacks a new one).
  std::optional<View> reshape(const SymShape& new_shape) const;

  // `lower + upper`: one View equal to applying `upper` to the index space of `lower` (lower is
  // the view nearer the buffer), or nullopt where the composition is not one View.
  std::optional<View> operator+(const View& upper) const;

  // The same map with dimensions merged where the strides allow (fewer index terms).
  View minify() const;

  // (index, valid) of this view for the given index expressions, one per dimension, computed in
  // `dtype`; `valid` is and-ed onto the incoming validity.
  std::pair<UOp, UOp> to_indexed_uops(const std::vector<UOp>& idxs, const UOp& valid,
                                      DType dtype = dtypes::index) const;

  bool operator==(const View& o) const = default;
  uint64_t hash() const;
  std::string repr() const;                  // tinygrad's repr: View(shape=(4, 6), strides=(6, 1), ...)
  Record to_record() const;                  // the record that repr prints
  static View from_record(const Record& r);  // throws std::invalid_argument naming the fault

 private:
  View() = default;
  View unsafe_resize(const Mask& arg, std::optional<Mask> mask) const;

  SymShape shape_, strides_;
  sint offset_;
  std::optional<Mask> mask_;
  bool contiguous_ = true;
};

// Dimensions merged where contiguous, zero-strided or masked to one index: (merged size, stride,
// merged size not counting stride-0 parts) per run, as tinygrad's merge_dims.
struct MergedDim {
  sint size, stride, real_size;
};
std::vector<MergedDim> merge_dims(const SymShape& shape, const SymShape& strides, const std::optional<Mask>& mask);

std::string to_string(const Mask& m);  // "((0, 4), (1, 5))"

}  // namespace tunebed
