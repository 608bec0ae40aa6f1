// View: canonical form and the movement ops that are a local change of strides, offset and mask.
// reshape lives in view_reshape.cpp, merging two views in view_merge.cpp.
#include "core/shape/view.hpp"

#include <algorithm>

#include "core/ir/hash.hpp"
#include "core/ir/text.hpp"
#include "core/symbolic/symbolic.hpp"

namespace tunebed {

namespace {

bool has_zero(const SymShape& shape) {
  return std::any_of(shape.begin(), shape.end(), [](const sint& s) { return s == sint(0); });
}

std::string range_text(const sint& b, const sint& e) { return to_string(b) + ":" + to_string(e); }

void check_rank(const char* op, size_t got, size_t want) {
  if (got != want)
    throw ViewError(std::string(op) + ": expected " + std::to_string(want) + " axes, got " +
                     std::to_string(got));
}

}  // namespace

SymShape strides_for_shape(const SymShape& shape) {
  SymShape strides(shape.size(), 0);
  sint acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = shape[i] == sint(1) ? sint(0) : acc;
    acc = acc * shape[i];
  }
  return strides;
}

std::vector<sint> unravel(const SymShape& shape, const sint& offset) {
  std::vector<sint> idxs(shape.size());
  sint acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    idxs[i] = floormod(floordiv(offset, acc), shape[i]);
    acc = acc * shape[i];
  }
  return idxs;
}

View View::create(SymShape shape, std::optional<SymShape> strides, sint offset, std::optional<Mask> mask) {
  for (const sint& s : shape)
    if (!resolve(le(0, s))) throw ViewError("view: negative dimension in shape " + to_string(shape));
  SymShape st = strides ? std::move(*strides) : strides_for_shape(shape);
  if (st.size() != shape.size() || (mask && mask->size() != shape.size()))
    throw ViewError("view: shape, strides and mask of different ranks");
  for (size_t i = 0; i < shape.size(); i++)
    if (shape[i] == sint(1)) st[i] = 0;

  View v;
  v.shape_ = std::move(shape);
  if (has_zero(v.shape_)) {  // an empty view maps nothing: one canonical form for all of them
    v.strides_ = SymShape(v.shape_.size(), 0);
    return v;
  }
  if (mask) {
    bool full = true;
    for (size_t i = 0; i < v.shape_.size() && full; i++)
      full = (*mask)[i] == std::pair<sint, sint>(0, v.shape_[i]);
    if (full) mask.reset();
  }
  if (mask) {
    // A dimension masked to (at most) one index reads one position: stride 0, offset moved there.
    // A dimension masked to nothing empties the whole view.
    bool any_single = false, any_empty = false;
    std::vector<bool> single(v.shape_.size());
    for (size_t i = 0; i < single.size(); i++) {
      const auto& [b, e] = (*mask)[i];
      single[i] = !resolve(lt(b + 1, e));
      any_single = any_single || single[i];
      any_empty = any_empty || !resolve(lt(b, e));
    }
    if (any_empty) {
      st = SymShape(st.size(), 0);
      offset = 0;
      mask = Mask(st.size(), {0, 0});
    }
    if (any_single)
      for (size_t i = 0; i < st.size(); i++)
        if (single[i]) {
          offset = offset + st[i] * (*mask)[i].first;
          st[i] = 0;
        }
  }
  v.strides_ = std::move(st);
  v.offset_ = std::move(offset);
  v.mask_ = std::move(mask);
  v.contiguous_ = v.offset_ == sint(0) && !v.mask_ && v.strides_ == strides_for_shape(v.shape_);
  return v;
}

int64_t View::size() const {
  int64_t n = 1;
  for (const sint& s : shape_) n = (sint(n) * sint(s.vmax())).to_int();
  return n;
}

// Shrink to `arg` and intersect the (moved) old mask with `mask`: pad and shrink in one. The arg
// may reach outside the shape (pad's negative begins); the mask then marks what is real.
View View::unsafe_resize(const Mask& arg, std::optional<Mask> mask) const {
  sint offset = offset_;
  SymShape shape(ndim());
  for (size_t i = 0; i < ndim(); i++) {
    offset = offset + strides_[i] * arg[i].first;
    shape[i] = arg[i].second - arg[i].first;
  }
  if (mask_) {
    Mask moved(ndim());
    for (size_t i = 0; i < ndim(); i++) {
      const auto& [mb, me] = (*mask_)[i];
      const auto& [ab, ae] = arg[i];
      moved[i] = {smax(0, smin(mb - ab, ae - ab)), smax(0, smin(me - ab, ae - ab))};
      if (mask) moved[i] = {smax(moved[i].first, (*mask)[i].first), smin(moved[i].second, (*mask)[i].second)};
    }
    mask = std::move(moved);
  }
  return create(std::move(shape), strides_, offset, std::move(mask));
}

View View::pad(const Mask& arg) const {
  check_rank("pad", arg.size(), ndim());
  bool any = false;
  for (size_t i = 0; i < ndim(); i++) {
    const auto& [b, e] = arg[i];
    if (b.is_int() && e.is_int() && (b.to_int() < 0 || e.to_int() < 0))
      throw ViewError("pad: axis " + std::to_string(i) + ": negative padding " + range_text(b, e));
    any = any || resolve(ne(b, 0)) || resolve(ne(e, 0));
  }
  if (!any) return *this;
  Mask window(ndim()), mask(ndim());
  for (size_t i = 0; i < ndim(); i++) {
    window[i] = {-arg[i].first, shape_[i] + arg[i].second};
    mask[i] = {arg[i].first, shape_[i] + arg[i].first};
#ifdef TUNEBED_PLANT_BUG_SHAPE_PAD  // planted (scripts/fuzz-planted): the mask ends one too late
    mask[i].second = mask[i].second + 1;
#endif
  }
  return unsafe_resize(window, std::move(mask));
}

View View::shrink(const Mask& arg) const {
  check_rank("shrink", arg.size(), ndim());
  for (size_t i = 0; i < ndim(); i++) {
    const auto& [b, e] = arg[i];
    bool legal = resolve(le(0, b)) && resolve(le(b, e)) && resolve(le(e, shape_[i]));
    if (!legal)
      throw ViewError("shrink: axis " + std::to_string(i) + ": " + range_text(b, e) +
                       " is not within 0:" + to_string(shape_[i]));
  }
  return unsafe_resize(arg, std::nullopt);
}

View View::expand(const SymShape& new_shape) const {
  check_rank("expand", new_shape.size(), ndim());
  for (size_t i = 0; i < ndim(); i++)
    if (!(resolve(eq(shape_[i], new_shape[i])) || shape_[i] == sint(1)))
      throw ViewError("expand: axis " + std::to_string(i) + " has size " + to_string(shape_[i]) +
                       ", only size 1 expands (to " + to_string(new_shape[i]) + ")");
  if (has_zero(shape_)) return create(new_shape);
  std::optional<Mask> mask = mask_;
  if (mask)
    for (size_t i = 0; i < ndim(); i++)
      if (resolve(ne(shape_[i], new_shape[i])) && resolve(eq(shape_[i], 1), false))
        (*mask)[i] = (*mask)[i] == std::pair<sint, sint>(0, 1) ? std::pair<sint, sint>(0, new_shape[i])
                                                               : std::pair<sint, sint>(0, 0);
  return create(new_shape, strides_, offset_, std::move(mask));
}

View View::permute(const std::vector<int64_t>& axis) const {
  check_rank("permute", axis.size(), ndim());
  std::vector<bool> seen(ndim());
  for (int64_t a : axis) {
    if (a < 0 || a >= static_cast<int64_t>(ndim()) || seen[a])
      throw ViewError("permute: not a permutation of 0.." +
                       std::to_string(static_cast<int64_t>(ndim()) - 1));
    seen[a] = true;
  }
  SymShape shape, strides;
  std::optional<Mask> mask = mask_ ? std::optional<Mask>(Mask()) : std::nullopt;
  for (int64_t a : axis) {
    shape.push_back(shape_[a]);
    strides.push_back(strides_[a]);
    if (mask) mask->push_back((*mask_)[a]);
  }
  return create(std::move(shape), std::move(strides), offset_, std::move(mask));
}

View View::flip(const std::vector<bool>& axes) const {
  check_rank("flip", axes.size(), ndim());
  sint offset = offset_;
  SymShape strides = strides_;
  std::optional<Mask> mask = mask_;
  for (size_t i = 0; i < ndim(); i++) {
    if (!axes[i]) continue;
    offset = offset + (shape_[i] - 1) * strides_[i];
    strides[i] = -strides_[i];
    if (mask) (*mask)[i] = {shape_[i] - (*mask_)[i].second, shape_[i] - (*mask_)[i].first};
  }
  return create(shape_, std::move(strides), offset, std::move(mask));
}

View View::minify() const {
  SymShape min_shape;
  for (const MergedDim& m : merge_dims(shape_, strides_, mask_)) min_shape.push_back(m.size);
  std::optional<View> v = reshape(min_shape);
  return v ? *v : *this;
}

uint64_t View::hash() const {
  auto mix = [](uint64_t h, const sint& s) {
    return hash_mix(h, s.is_int() ? static_cast<uint64_t>(s.to_int()) : s.uop().hash());
  };
  uint64_t h = hash_mix(ndim(), contiguous_);
  for (size_t i = 0; i < ndim(); i++) h = mix(mix(h, shape_[i]), strides_[i]);
  h = mix(h, offset_);
  if (mask_)
    for (const auto& [b, e] : *mask_) h = mix(mix(h, b), e);
  return h;
}

std::string to_string(const Mask& m) {
  std::string out = "(";
  for (size_t i = 0; i < m.size(); i++)
    out += (i ? ", (" : "(") + to_string(m[i].first) + ", " + to_string(m[i].second) + ")";
  return out + (m.size() == 1 ? ",)" : ")");
}

namespace {

Arg shape_to_arg(const SymShape& s) {
  ArgTuple t;
  for (const sint& x : s) t.push_back(to_arg(x));
  return Arg(std::move(t));
}

SymShape shape_from_arg(const Arg& a, const char* field) {
  if (!a.is_tuple()) throw std::invalid_argument(std::string("View field ") + field + " must be a tuple");
  SymShape s;
  for (const Arg& x : a.as_tuple()) s.push_back(sint_from_arg(x));
  return s;
}

}  // namespace

Record View::to_record() const {
  const View& v = *this;
  Arg mask;
  if (v.mask()) {
    ArgTuple m;
    for (const auto& [b, e] : *v.mask()) m.push_back(Arg::tuple({to_arg(b), to_arg(e)}));
    mask = Arg(std::move(m));
  }
  return Record{"View",
                {{"shape", shape_to_arg(v.shape())},
                 {"strides", shape_to_arg(v.strides())},
                 {"offset", to_arg(v.offset())},
                 {"mask", mask},
                 {"contiguous", Arg(v.contiguous())}}};
}

namespace {

// A symbolic entry in the form tunebed's sint arithmetic keeps it: simplified, a constant as an
// int. tinygrad's View.create leaves strides and mask bounds unsimplified ("enabling stride
// simplification breaks symbolic jit", view.py at 7b16fadd), so its records can hold the raw
// product strides_for_shape built, e.g. the stride 1*(pos+1)*1 of the dataset's llama kernels,
// where tunebed holds pos+1. Both are the same map; the simplified one is tunebed's canonical form.
Arg simplified(const Arg& a) {
  if (a.is<UOp>()) return to_arg(sint(simplify(a.as_uop())));
  if (!a.is_tuple()) return a;
  ArgTuple t;
  for (const Arg& x : a.as_tuple()) t.push_back(simplified(x));
  return Arg(std::move(t));
}

}  // namespace

// Rebuilt through View::create, so a hand-edited view that is not in canonical form (and would
// compare unequal to the same map built by movement ops) is rejected rather than kept. Symbolic
// entries are simplified first: that is a difference of spelling, not of form.
View View::from_record(const Record& record) {
  if (record.name != "View") throw std::invalid_argument("expected View(...), got " + record.name + "(...)");
  Record r{record.name, {}};
  for (const auto& [name, value] : record.fields) r.fields.emplace_back(name, simplified(value));
  std::optional<Mask> mask;
  if (!r.at("mask").is_none()) {
    mask.emplace();
    for (const Arg& p : r.at("mask").as_tuple()) {
      SymShape be = shape_from_arg(p, "mask");
      if (be.size() != 2) throw std::invalid_argument("View mask entries must be (begin, end) pairs");
      mask->emplace_back(be[0], be[1]);
    }
  }
  View v = View::create(shape_from_arg(r.at("shape"), "shape"), shape_from_arg(r.at("strides"), "strides"),
                        sint_from_arg(r.at("offset")), std::move(mask));
  if (v.to_record() != r) throw std::invalid_argument("view is not in canonical form, expected " + v.repr());
  return v;
}

std::string View::repr() const { return print_arg(Arg(to_record())); }

}  // namespace tunebed
