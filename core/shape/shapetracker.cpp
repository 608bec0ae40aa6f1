// ShapeTracker: movement ops on the top view, simplify, and the ShapeTracker arg's text form.
#include "core/shape/shapetracker.hpp"

#include "core/ir/hash.hpp"
#include "core/ir/text.hpp"

namespace tunebed {

ShapeTracker::ShapeTracker(std::vector<View> views) : views_(std::move(views)) {
  if (views_.empty()) throw std::invalid_argument("a ShapeTracker needs at least one view");
}

ShapeTracker ShapeTracker::from_shape(const SymShape& shape, std::optional<SymShape> strides) {
  return ShapeTracker({View::create(shape, std::move(strides))});
}

ShapeTracker ShapeTracker::with_last(View v) const {
  std::vector<View> views = views_;
  views.back() = std::move(v);
  return ShapeTracker(std::move(views));
}

ShapeTracker ShapeTracker::reshape(const SymShape& new_shape) const {
  if (std::optional<View> v = views_.back().reshape(new_shape)) return with_last(std::move(*v));
  std::vector<View> views = views_;
  views.push_back(View::create(new_shape));
  return ShapeTracker(std::move(views));
}

ShapeTracker ShapeTracker::permute(const std::vector<int64_t>& axis) const {
  return with_last(views_.back().permute(axis));
}
ShapeTracker ShapeTracker::expand(const SymShape& new_shape) const {
  return with_last(views_.back().expand(new_shape));
}
ShapeTracker ShapeTracker::pad(const Mask& arg) const { return with_last(views_.back().pad(arg)); }
ShapeTracker ShapeTracker::shrink(const Mask& arg) const { return with_last(views_.back().shrink(arg)); }
ShapeTracker ShapeTracker::flip(const std::vector<bool>& axes) const {
  return with_last(views_.back().flip(axes));
}

namespace {

const ArgTuple& tuple_arg(const char* op, const Arg& a) {
  if (!a.is_tuple()) throw ViewError(std::string(op) + ": expected a tuple argument, got " + print_arg(a));
  return a.as_tuple();
}

SymShape shape_arg(const char* op, const Arg& a) {
  SymShape s;
  for (const Arg& x : tuple_arg(op, a)) {
    if (!x.is<int64_t>() && !x.is<UOp>())
      throw ViewError(std::string(op) + ": expected sizes, got " + print_arg(a));
    s.push_back(sint_from_arg(x));
  }
  return s;
}

Mask pairs_arg(const char* op, const Arg& a) {
  Mask m;
  for (const Arg& x : tuple_arg(op, a)) {
    if (!x.is_tuple() || x.as_tuple().size() != 2)
      throw ViewError(std::string(op) + ": expected pairs, got " + print_arg(a));
    SymShape p = shape_arg(op, x);
    m.emplace_back(p[0], p[1]);
  }
  return m;
}

}  // namespace

ShapeTracker ShapeTracker::mop(Ops op, const Arg& arg) const {
  switch (op) {
    case Ops::RESHAPE:
      return reshape(shape_arg("reshape", arg));
    case Ops::EXPAND:
      return expand(shape_arg("expand", arg));
    case Ops::PERMUTE:
      return permute(to_ints(shape_arg("permute", arg)));
    case Ops::PAD:
      return pad(pairs_arg("pad", arg));
    case Ops::SHRINK:
      return shrink(pairs_arg("shrink", arg));
    case Ops::FLIP: {
      std::vector<bool> axes;
      for (const Arg& x : tuple_arg("flip", arg)) {
        if (!x.is<bool>()) throw ViewError("flip: expected a tuple of bools, got " + print_arg(arg));
        axes.push_back(x.as_bool());
      }
      return flip(axes);
    }
    default:
      throw ViewError(std::string(op_name(op)) + " is not a movement op");
  }
}

ShapeTracker ShapeTracker::simplify() const {
  std::vector<View> views = views_;
  while (views.size() >= 2) {
    std::optional<View> merged = views[views.size() - 2] + views.back();
    if (!merged) break;
    views.pop_back();
    views.back() = std::move(*merged);
  }
  return ShapeTracker(std::move(views));
}

// ---- as an Arg --------------------------------------------------------------------------------

namespace {

[[maybe_unused]] const bool registered = [] {
  register_arg_object("ShapeTracker", [](const Record& r) { return ShapeTracker::from_record(r).to_arg(); });
  return true;
}();

}  // namespace

Record ShapeTracker::to_record() const {
  ArgTuple views;
  for (const View& v : views_) views.push_back(Arg(v.to_record()));
  return Record{"ShapeTracker", {{"views", Arg(std::move(views))}}};
}

ShapeTracker ShapeTracker::from_record(const Record& r) {
  if (r.name != "ShapeTracker")
    throw std::invalid_argument("expected ShapeTracker(...), got " + r.name + "(...)");
  if (r.fields.size() != 1) throw std::invalid_argument("ShapeTracker has exactly one field, views");
  std::vector<View> views;
  for (const Arg& v : r.at("views").as_tuple()) views.push_back(View::from_record(v.as_record()));
  return ShapeTracker(std::move(views));
}

Arg ShapeTracker::to_arg() const {
  return Arg(std::shared_ptr<const ArgObject>(std::make_shared<ShapeTracker>(*this)));
}

uint64_t ShapeTracker::hash() const {
  uint64_t h = hash_bytes("ShapeTracker");
  for (const View& v : views_) h = hash_mix(h, v.hash());
  return h;
}

bool ShapeTracker::equals(const ArgObject& o) const {
  const auto* st = dynamic_cast<const ShapeTracker*>(&o);
  return st && *this == *st;
}

std::string ShapeTracker::repr() const { return print_arg(to_arg()); }

int64_t ShapeTracker::real_size() const {
  for (const sint& s : shape())
    if (s == sint(0)) return 0;
  View v = views_[0];
  if (v.mask()) v = v.shrink(*v.mask());
  return ShapeTracker({v}).to_indexed_uops().first.vmax() + 1;
}

}  // namespace tunebed
