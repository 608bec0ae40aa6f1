// Kernel: construction from an AST, the shape-wide reshape/permute, the simplifiers and the
// printable forms (name, coloured shape).
#include "core/opt/kernel.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <stdexcept>

#include "core/spec/ast_shape.hpp"

namespace tunebed {

namespace {

void collect_vars(const sint& s, std::map<std::string, UOp>& vars) {
  if (s.is_int()) return;
  for (const UOp& u : s.uop().toposort())
    if (u.op() == Ops::DEFINE_VAR) vars.emplace(u.arg().as_tuple().at(0).as_string(), u);
}

// tinygrad's colored(): a lowercase colour name is the normal ANSI colour, an uppercase one the
// bright variant.
std::string ansi(const std::string& s, std::string_view color) {
  static constexpr std::string_view names[] = {"black", "red",     "green", "yellow",
                                               "blue",  "magenta", "cyan",  "white"};
  std::string lower(color);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (int i = 0; i < 8; i++)
    if (lower == names[i]) {
      bool bright = std::isupper(static_cast<unsigned char>(color[0]));
      return "\x1b[" + std::to_string(30 + 60 * bright + i) + "m" + s + "\x1b[0m";
    }
  return s;
}

// tinygrad's axis_colors; THREAD (tunebed's) is bright cyan.
std::string_view axis_color(AxisType t) {
  switch (t) {
    case AxisType::GLOBAL:
      return "blue";
    case AxisType::LOCAL:
      return "cyan";
    case AxisType::LOOP:
      return "WHITE";
    case AxisType::GROUP_REDUCE:
      return "green";
    case AxisType::REDUCE:
      return "red";
    case AxisType::UPCAST:
      return "yellow";
    case AxisType::UNROLL:
      return "magenta";
    case AxisType::THREAD:
      return "CYAN";
  }
  return "white";
}

}  // namespace

Kernel::Kernel(const UOp& ast, Renderer opts) : ast_(ast), opts_(std::move(opts)) {
  if (!ast_ || ast_.op() != Ops::SINK)
    throw std::invalid_argument("kernel AST: the root must be a SINK, got " +
                                std::string(ast_ ? op_name(ast_.op()) : "nothing"));
  std::vector<UOp> topo = ast_.toposort();
  std::map<std::string, UOp> vars;
  // The buffer accesses, outputs first (tinygrad reverses the toposort). A CONST, VALID or
  // DEFINE_VAR without a VIEW is a scalar, not an access.
  for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
    const UOp& u = *it;
    if (u.op() == Ops::DEFINE_VAR) vars.emplace(u.arg().as_tuple().at(0).as_string(), u);
    if (!GroupOp::Buffer.contains(u.op())) continue;
    bool has_view = !u.src().empty() && u.src(0).op() == Ops::VIEW;
    if (!has_view && (u.op() == Ops::LOAD || u.op() == Ops::STORE))
      throw std::invalid_argument("kernel AST: a " + std::string(op_name(u.op())) +
                                  " must read its buffer through a VIEW");
    if (!has_view) continue;
    bufs_.push_back(u);
    const auto& st = u.src(0).arg().as_object<ShapeTracker>();
    sts_.push_back(st);
    for (const View& v : st.views()) {
      for (const sint& s : v.shape()) collect_vars(s, vars);
      for (const sint& s : v.strides()) collect_vars(s, vars);
      collect_vars(v.offset(), vars);
      if (v.mask())
        for (const auto& [b, e] : *v.mask()) collect_vars(b, vars), collect_vars(e, vars);
    }
  }
  for (auto& [name, v] : vars) vars_.push_back(v);
  if (bufs_.empty()) throw std::invalid_argument("kernel AST: no buffer is accessed through a VIEW");

  // Two trackers per reduce, its output and its input, to know which axes it folds.
  AstShapes shape_of;
  for (const UOp& u : topo) {
    if (u.op() != Ops::REDUCE_AXIS) continue;
    reduceops_.push_back(u);
    sts_.push_back(ShapeTracker::from_shape(shape_of(u).value()));
    sts_.push_back(ShapeTracker::from_shape(shape_of(u.src(0)).value()));
  }
  // The full shape, with zero strides so that it merges with anything.
  SymShape full = shape_of.full_shape(ast_);
  sts_.push_back(ShapeTracker::from_shape(full, SymShape(full.size(), 0)));

  simplify_ones();
  simplify_merge_adjacent();

  AxisType global_loops = opts_.has_local ? AxisType::GLOBAL : AxisType::LOOP;
  for (size_t i = 0; i < full_shape().size(); i++)
    axis_types_.push_back(resolve(ne(output_shape()[i], full_shape()[i])) ? AxisType::REDUCE : global_loops);
  auto first_reduce = std::find(axis_types_.begin(), axis_types_.end(), AxisType::REDUCE);
  if (std::find(first_reduce, axis_types_.end(), global_loops) != axis_types_.end())
    throw std::invalid_argument("reduces are not at the end of the shape " + to_string(full_shape()) +
                                " -> " + to_string(output_shape()));
}

std::vector<int> Kernel::axes_of(std::initializer_list<AxisType> types) const {
  std::vector<int> axes;
  for (size_t i = 0; i < axis_types_.size(); i++)
    if (std::find(types.begin(), types.end(), axis_types_[i]) != types.end())
      axes.push_back(static_cast<int>(i));
  return axes;
}

int Kernel::upcasted() const {
  return static_cast<int>(axes_of({AxisType::UPCAST, AxisType::UNROLL}).size());
}
int Kernel::group_for_reduces() const { return static_cast<int>(axes_of({AxisType::GROUP_REDUCE}).size()); }

std::vector<int> Kernel::upcastable_dims() const {
  std::vector<int> dims;
  for (int i : axes_of({AxisType::GLOBAL, AxisType::LOCAL, AxisType::LOOP}))
    if (full_shape()[i].is_int() && full_shape()[i].to_int() > 1) dims.push_back(i);
  return dims;
}

std::vector<int> Kernel::unrollable_dims() const {
  std::vector<int> dims;
  for (int i : axes_of({AxisType::GROUP_REDUCE, AxisType::REDUCE}))
    if (full_shape()[i].is_int() && full_shape()[i].to_int() > 1) dims.push_back(i);
  return dims;
}

// ---- reshape, permute, shift_to ------------------------------------------------------------

void Kernel::reshape(const std::function<SymShape(const SymShape&)>& new_shape_fxn) {
  for (ShapeTracker& st : sts_) st = st.reshape(new_shape_fxn(st.shape()));
}

void Kernel::permute(const std::vector<int64_t>& new_axes) {
  for (ShapeTracker& st : sts_) st = st.permute(new_axes);
}

// Split `amount` off `axis` (from the top: the outer part, else the inner part), give it
// new_type and move it to insert_at (default: the end). Trackers where the axis is reduced to 1
// get (1, 1).
void Kernel::shift_to(int axis, int64_t amount, AxisType new_type, bool top,
                      std::optional<int> insert_at_opt) {
  int insert_at = insert_at_opt.value_or(shape_len());
  int old_len = shape_len();
  axis_types_.insert(axis_types_.begin() + insert_at, new_type);
  int move_axis = top ? axis : axis + 1;
  if (move_axis < insert_at) insert_at += 1;
  reshape([&](const SymShape& x) {
    SymShape s(x.begin(), x.begin() + axis);
    if (resolve(lt(1, x[axis]), false)) {
      sint rest = floordiv(x[axis], amount);
      s.push_back(top ? sint(amount) : rest);
      s.push_back(top ? rest : sint(amount));
    } else {
      s.insert(s.end(), {1, 1});
    }
    s.insert(s.end(), x.begin() + axis + 1, x.end());
    return s;
  });
  std::vector<int64_t> new_axes;
  for (int i = 0; i < insert_at; i++)
    if (i != move_axis) new_axes.push_back(i);
  new_axes.push_back(move_axis);
  for (int i = insert_at; i <= old_len; i++)
    if (i != move_axis) new_axes.push_back(i);
  permute(new_axes);
}

// ---- simplifiers ---------------------------------------------------------------------------

bool Kernel::simplify_ones() {
  std::vector<bool> ones;
  for (const sint& s : full_shape()) ones.push_back(s == sint(1));
  if (std::find(ones.begin(), ones.end(), true) == ones.end()) return false;
  if (!axis_types_.empty()) {
    std::vector<AxisType> kept;
    for (size_t i = 0; i < axis_types_.size(); i++)
      if (!ones[i]) kept.push_back(axis_types_[i]);
    axis_types_ = std::move(kept);
  }
  reshape([&](const SymShape& shape) {
    SymShape s;
    for (size_t i = 0; i < shape.size(); i++)
      if (!ones[i]) s.push_back(shape[i]);
    return s;
  });
  return true;
}

// Merge axis i into axis i-1 where every tracker allows it (the stride of i-1 is size_i *
// stride_i, or both are 0), never across the first reduce axis. tinygrad's version also fakes
// strides for image dtypes, which tunebed does not have.
void Kernel::simplify_merge_adjacent() {
  if (shape_len() == 0) return;
  size_t first_reduce = 0;
  while (first_reduce < output_shape().size() &&
         !resolve(ne(output_shape()[first_reduce], full_shape()[first_reduce])))
    first_reduce++;
  std::vector<std::vector<std::optional<sint>>> strides;
  for (const ShapeTracker& st : sts_) strides.push_back(st.real_strides());
  // per tracker: (merged size, stride of the last merged axis)
  std::vector<std::vector<std::pair<sint, std::optional<sint>>>> rets;
  for (size_t j = 0; j < sts_.size(); j++) rets.push_back({{sts_[j].shape()[0], strides[j][0]}});
  for (size_t i = 1; i < full_shape().size(); i++) {
    bool mergeable = i != first_reduce;
    for (size_t j = 0; j < sts_.size() && mergeable; j++) {
      const sint& si = sts_[j].shape()[i];
      const std::optional<sint>& sti = strides[j][i];
      const std::optional<sint>& last_st = rets[j].back().second;
      mergeable = sti && ((!(*sti == sint(0)) && last_st && *last_st == si * *sti) ||
                          (*sti == sint(0) && last_st && *last_st == sint(0)));
    }
    for (size_t j = 0; j < sts_.size(); j++) {
      if (mergeable)
        rets[j].back() = {rets[j].back().first * sts_[j].shape()[i], strides[j][i]};
      else
        rets[j].emplace_back(sts_[j].shape()[i], strides[j][i]);
    }
  }
  for (size_t j = 0; j < sts_.size(); j++) {
    SymShape s;
    for (const auto& r : rets[j]) s.push_back(r.first);
    sts_[j] = sts_[j].reshape(s);
  }
}

// ---- printable forms -----------------------------------------------------------------------

std::string Kernel::name() const {
  bool only_buffers = true;
  for (const UOp& u : ast_.toposort())
    only_buffers &= u.op() == Ops::SINK || GroupOp::Buffer.contains(u.op());
  std::string n = reduceop() ? "r" : only_buffers ? "C" : "E";
  if (ast_.src().size() > 1) n += std::to_string(ast_.src().size());
  n += "_";
  for (size_t i = 0; i < full_shape().size(); i++) n += (i ? "_" : "") + to_string(full_shape()[i]);
  return n;
}

std::string Kernel::colored_shape(bool color, int pad, bool dense) const {
  std::string ret;
  int visible = 0;
  for (size_t i = 0; i < full_shape().size(); i++) {
    std::string s = to_string(full_shape()[i]);
    if (!dense && s.size() < 4) s = std::string(4 - s.size(), ' ') + s;
    if (i > 0) ret += ' ', visible++;
    visible += static_cast<int>(s.size());
    std::string_view c =
        dont_use_locals_ && axis_types_[i] == AxisType::GLOBAL ? "BLUE" : axis_color(axis_types_[i]);
    ret += color ? ansi(s, c) : s;
  }
  if (pad > visible) ret += std::string(pad - visible, ' ');
  return ret;
}

std::string Kernel::colored_shape() const { return colored_shape(isatty(STDOUT_FILENO) != 0); }

std::vector<std::string> Kernel::shape_str() const {
  std::map<AxisType, int> cnt;
  std::vector<std::string> ret;
  for (AxisType t : axis_types_) ret.push_back(std::string(1, axis_letter(t)) + std::to_string(cnt[t]++));
  return ret;
}

}  // namespace tunebed
