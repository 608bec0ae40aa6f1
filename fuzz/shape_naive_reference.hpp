// The oracle for ShapeTracker: a movement-op result carried as an explicit array.
//
// NaiveMap holds, for every index of its shape in row-major order, the base-buffer position that
// index reads (-1: padding). Each movement op builds the new array by computing, for every new
// index, which old index it comes from. No strides, no masks, no merging, and no code shared with
// core/shape: if View's algebra is wrong, the two disagree. Used by the tests and by
// fuzz/fuzz_shapetracker.cpp.
#pragma once

#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

namespace tunebed::naive {

using Ints = std::vector<int64_t>;

inline int64_t numel(const Ints& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

struct NaiveMap {
  Ints shape;
  Ints pos;

  static NaiveMap base(const Ints& shape) {
    NaiveMap m{shape, Ints(numel(shape))};
    std::iota(m.pos.begin(), m.pos.end(), 0);
    return m;
  }

  // The map of new_shape whose index `idx` reads the old index that source(idx, old) writes into
  // `old`, or padding where source returns false.
  template <class Source>
  NaiveMap remap(const Ints& new_shape, Source source) const {
    NaiveMap out{new_shape, Ints(numel(new_shape))};
    Ints idx(new_shape.size(), 0), old(shape.size(), 0);
    for (int64_t& p : out.pos) {
      p = source(idx, old) ? pos[flat(old)] : -1;
      for (size_t i = idx.size(); i-- > 0;) {  // next index, row-major
        if (++idx[i] < new_shape[i]) break;
        idx[i] = 0;
      }
    }
    return out;
  }

  int64_t flat(const Ints& idx) const {
    int64_t f = 0;
    for (size_t i = 0; i < shape.size(); i++) f = f * shape[i] + idx[i];
    return f;
  }

  // Row-major order is what reshape keeps: the array is unchanged.
  NaiveMap reshape(const Ints& new_shape) const { return {new_shape, pos}; }

  NaiveMap permute(const Ints& axis) const {
    Ints new_shape;
    for (int64_t a : axis) new_shape.push_back(shape[a]);
    return remap(new_shape, [&](const Ints& idx, Ints& old) {
      for (size_t i = 0; i < axis.size(); i++) old[axis[i]] = idx[i];
      return true;
    });
  }

  NaiveMap expand(const Ints& new_shape) const {
    return remap(new_shape, [&](const Ints& idx, Ints& old) {
      for (size_t i = 0; i < old.size(); i++) old[i] = shape[i] == 1 ? 0 : idx[i];
      return true;
    });
  }

  NaiveMap pad(const std::vector<std::pair<int64_t, int64_t>>& before_after) const {
    Ints new_shape;
    for (size_t i = 0; i < shape.size(); i++)
      new_shape.push_back(before_after[i].first + shape[i] + before_after[i].second);
    return remap(new_shape, [&](const Ints& idx, Ints& old) {
      for (size_t i = 0; i < idx.size(); i++) {
        old[i] = idx[i] - before_after[i].first;
        if (old[i] < 0 || old[i] >= shape[i]) return false;
      }
      return true;
    });
  }

  NaiveMap shrink(const std::vector<std::pair<int64_t, int64_t>>& begin_end) const {
    Ints new_shape;
    for (const auto& [b, e] : begin_end) new_shape.push_back(e - b);
    return remap(new_shape, [&](const Ints& idx, Ints& old) {
      for (size_t i = 0; i < old.size(); i++) old[i] = idx[i] + begin_end[i].first;
      return true;
    });
  }

  NaiveMap flip(const std::vector<bool>& axes) const {
    return remap(shape, [&](const Ints& idx, Ints& old) {
      for (size_t i = 0; i < old.size(); i++) old[i] = axes[i] ? shape[i] - 1 - idx[i] : idx[i];
      return true;
    });
  }
};

}  // namespace tunebed::naive
