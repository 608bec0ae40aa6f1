// Random movement-op sequences from bytes, and the checks of a ShapeTracker against the naive
// reference. Shared by the RapidCheck properties (tests/shape/property_test.cpp) and the libFuzzer
// target (fuzz/fuzz_shapetracker.cpp), so a fuzzer finding replays as the same property.
//
// Every decoded op is legal for the shape it applies to (the illegal ones have their own tests),
// sizes stay small (at most 4 per dimension from the base, at most kMaxElements in total) and
// every one of the six ops is reachable from any state.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/text.hpp"
#include "core/shape/shapetracker.hpp"
#include "fuzz/shape_naive_reference.hpp"
#include "fuzz/shape_uop_eval.hpp"

namespace tunebed::naive {

inline constexpr int64_t kMaxElements = 256;
inline constexpr size_t kMaxOps = 10;

struct MovementOp {
  Ops op;
  Ints sizes;                                      // reshape, expand: the shape; permute: the axes
  std::vector<std::pair<int64_t, int64_t>> pairs;  // pad, shrink
  std::vector<bool> axes;                          // flip

  Arg to_arg() const {
    ArgTuple t;
    if (op == Ops::PAD || op == Ops::SHRINK)
      for (const auto& [a, b] : pairs) t.push_back(Arg::tuple({Arg(a), Arg(b)}));
    else if (op == Ops::FLIP)
      for (bool f : axes) t.emplace_back(f);
    else
      for (int64_t s : sizes) t.emplace_back(s);
    return Arg(std::move(t));
  }

  NaiveMap apply(const NaiveMap& m) const {
    switch (op) {
      case Ops::RESHAPE:
        return m.reshape(sizes);
      case Ops::PERMUTE:
        return m.permute(sizes);
      case Ops::EXPAND:
        return m.expand(sizes);
      case Ops::PAD:
        return m.pad(pairs);
      case Ops::SHRINK:
        return m.shrink(pairs);
      default:
        return m.flip(axes);
    }
  }

  // In `tunebed st` syntax, so a failure can be replayed on the command line.
  std::string text() const {
    std::string name(op_name(op)), out;
    for (char c : name) out += static_cast<char>(c - 'A' + 'a');
    out += '(';
    for (size_t i = 0; i < sizes.size(); i++) out += (i ? "," : "") + std::to_string(sizes[i]);
    for (size_t i = 0; i < pairs.size(); i++)
      out += (i ? "," : "") + std::to_string(pairs[i].first) + ":" + std::to_string(pairs[i].second);
    bool first = true;
    for (size_t i = 0; i < axes.size(); i++)
      if (axes[i]) out += (std::exchange(first, false) ? "" : ",") + std::to_string(i);
    return out + ')';
  }
};

struct Case {
  Ints base;
  std::vector<MovementOp> ops;

  std::string text() const {
    std::string out = "tunebed st ";
    for (size_t i = 0; i < base.size(); i++) out += (i ? "," : "") + std::to_string(base[i]);
    for (const MovementOp& op : ops) out += " " + op.text();
    return out;
  }
};

class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool empty() const { return pos_ >= size_; }
  int64_t next(int64_t n) { return n <= 0 ? 0 : (empty() ? 0 : data_[pos_++]) % n; }  // in [0, n)

 private:
  const uint8_t* data_;
  size_t size_, pos_ = 0;
};

// One op (a kind byte, then its parameters), made legal for `shape`.
inline MovementOp decode_op(ByteReader& in, const Ints& shape) {
  static constexpr Ops kinds[] = {Ops::RESHAPE, Ops::PERMUTE, Ops::EXPAND, Ops::PAD, Ops::SHRINK, Ops::FLIP};
  MovementOp m{kinds[in.next(6)], {}, {}, {}};
  const int64_t n = numel(shape);
  switch (m.op) {
    case Ops::RESHAPE: {
      int64_t rest = n, ndim = in.next(5);
      if (ndim == 0 && n != 1) ndim = 1;  // only a one-element tensor reshapes to a scalar
      for (int64_t i = 0; i + 1 < ndim; i++) {
        Ints divisors;  // of rest; an empty tensor takes any size
        for (int64_t d = 1; d <= (rest == 0 ? 4 : rest); d++)
          if (rest == 0 || rest % d == 0) divisors.push_back(d);
        int64_t d = divisors[in.next(static_cast<int64_t>(divisors.size()))];
        m.sizes.push_back(d);
        if (rest != 0) rest /= d;
      }
      if (ndim > 0) m.sizes.push_back(rest);
      break;
    }
    case Ops::PERMUTE:
      for (size_t i = 0; i < shape.size(); i++) m.sizes.push_back(static_cast<int64_t>(i));
      for (size_t i = shape.size(); i > 1; i--)
        std::swap(m.sizes[i - 1], m.sizes[in.next(static_cast<int64_t>(i))]);
      break;
    case Ops::EXPAND:
      for (int64_t s : shape) m.sizes.push_back(s == 1 ? 1 + in.next(4) : s);
      if (numel(m.sizes) > kMaxElements) m.sizes = shape;
      break;
    case Ops::PAD: {
      Ints padded;
      for (int64_t s : shape) {
        m.pairs.emplace_back(in.next(3), in.next(3));
        padded.push_back(m.pairs.back().first + s + m.pairs.back().second);
      }
      if (numel(padded) > kMaxElements) m.pairs.assign(shape.size(), {0, 0});
      break;
    }
    case Ops::SHRINK:
      for (int64_t s : shape) {
        int64_t b = in.next(s + 1);
        m.pairs.emplace_back(b, b + in.next(s - b + 1));
      }
      break;
    default:
      for (size_t i = 0; i < shape.size(); i++) m.axes.push_back(in.next(2) == 1);
  }
  return m;
}

inline Case decode_case(const uint8_t* data, size_t size) {
  ByteReader in(data, size);
  Case c;
  for (int64_t i = 0, ndim = in.next(5); i < ndim; i++)
    c.base.push_back(in.next(16) == 15 ? 0 : 1 + in.next(4));
  NaiveMap shape_only = NaiveMap::base(c.base);  // tracks the shape the next op must be legal for
  while (!in.empty() && c.ops.size() < kMaxOps) {
    c.ops.push_back(decode_op(in, shape_only.shape));
    shape_only = c.ops.back().apply(shape_only);
  }
  return c;
}

// A case applied to both sides: the tracker under test and the naive map.
struct Applied {
  Case c;
  ShapeTracker st;
  NaiveMap ref;
};

inline Applied apply_case(const Case& c) {
  Applied a{c, ShapeTracker::from_shape(SymShape(c.base.begin(), c.base.end())), NaiveMap::base(c.base)};
  for (const MovementOp& op : c.ops) {
    a.st = a.st.mop(op.op, op.to_arg());
    a.ref = op.apply(a.ref);
  }
  return a;
}

inline std::string describe(const Applied& a, const std::string& what) {
  return what + "\n  case: " + a.c.text() + "\n  tracker: " + a.st.repr();
}

inline std::string ints_text(const Ints& v) {
  std::ostringstream out;
  for (size_t i = 0; i < v.size(); i++) out << (i ? " " : "") << v[i];
  return out.str();
}

// The tracker reads what the naive map reads, index for index. "" when it does.
inline std::string check_map(const Applied& a) {
  if (to_ints(a.st.shape()) != a.ref.shape)
    return describe(a, "shape differs from " + ints_text(a.ref.shape));
  Ints got = a.st.buffer_positions();
  if (got != a.ref.pos)
    return describe(a, "map\n    got " + ints_text(got) + "\n   want " + ints_text(a.ref.pos));
  return "";
}

// simplify() keeps the map and never adds views.
inline std::string check_simplify(const Applied& a) {
  ShapeTracker s = a.st.simplify();
  if (s.views().size() > a.st.views().size()) return describe(a, "simplify added views: " + s.repr());
  if (s.buffer_positions() != a.st.buffer_positions())
    return describe(a, "simplify changed the map: " + s.repr());
  return "";
}

// The (index, valid) UOps, evaluated at every index, give the naive map.
inline std::string check_index_uops(const Applied& a) {
  auto [idx, valid] = a.st.to_indexed_uops();
  UOpEvaluator eval({idx, valid});
  Ints index(a.ref.shape.size(), 0);
  for (int64_t want : a.ref.pos) {
    eval.run(index);
    int64_t got = eval.value(valid) ? eval.value(idx) : -1;
    if (got != want)
      return describe(a, "index UOps at (" + ints_text(index) + ") give " + std::to_string(got) + ", want " +
                             std::to_string(want) + "\n  valid: " + print_uop(valid) +
                             "  idx: " + print_uop(idx));
    for (size_t i = index.size(); i-- > 0;) {
      if (++index[i] < a.ref.shape[i]) break;
      index[i] = 0;
    }
  }
  return "";
}

// The tracker, as the arg of a VIEW UOp, prints and parses back to the same tracker.
inline std::string check_text_round_trip(const Applied& a) {
  UOp view = UOp::make(Ops::VIEW, dtypes::void_, {}, a.st.to_arg());
  std::string text = print_uop(view);
  UOp back = parse_uop(text);
  if (back != view) return describe(a, "text form does not parse back to the same UOp:\n" + text);
  return "";
}

}  // namespace tunebed::naive
