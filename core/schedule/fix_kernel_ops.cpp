// fix_kernel_ops: the last table of the seed's fix_kernel_ast pipeline (opt/swizzler.py), run
// bottom-up together with view_left. It turns the kernel graph into the AST codegen consumes.
#include <stdexcept>

#include "core/schedule/schedule.hpp"
#include "core/schedule/swizzler.hpp"
#include "core/schedule/uop_st.hpp"

namespace tunebed::sched {
namespace {

// A kernel that assigns to buffer 0 and also loads it must load it contiguously (or through a
// view that is contiguous once its expanded or padded parts are shrunk away): otherwise an
// element could be read after this kernel has already overwritten it.
UOp check_load_st(const Match& m) {
  const UOp& glbl = m["glbl"];
  if (glbl.arg() != Arg(0)) return {};
  const ShapeTracker& st = view_st(m["view"]);
  if (st.contiguous()) return {};
  if (st.views().size() == 1) {
    const View& v = st.views()[0];
    Mask expanded;
    for (size_t i = 0; i < v.ndim(); i++)
      expanded.emplace_back(0, v.strides()[i] == sint(0) ? sint(1) : v.shape()[i]);
    if (st.shrink(expanded).contiguous()) return {};
    if (v.mask() && ShapeTracker::from_shape(st.shape()).shrink(*v.mask()) == st.shrink(*v.mask())) return {};
  }
  throw ScheduleError(
      "self operand of augmented assign must be contiguous.\nhelp: consider using .contiguous():\n"
      "   - a += a.T\n"
      "   + a += a.T.contiguous()");
}

UOp store_outputs(const Match& m) {
  std::vector<UOp> stores;
  const auto& outs = m["sink"].src();
  for (size_t i = 0; i < outs.size(); i++) {
    const UOp s = uop_base(outs[i]);
    const ShapeTracker& st = st_of(s);
    const UOp glbl =
        UOp::make(Ops::DEFINE_GLOBAL, s.dtype().ptr_to(st.real_size()), {}, static_cast<int64_t>(i));
    stores.push_back(UOp::make(Ops::STORE, dtypes::void_, {view(glbl, st), s}));
  }
  return m["sink"].with_src(std::move(stores));
}

}  // namespace

const PatternMatcher& fix_kernel_ops() {
  static const PatternMatcher pm =
      view_left_through_load() +
      PatternMatcher({
          {"add-view-to-load", UPat(Ops::LOAD, {UPat(Ops::DEFINE_GLOBAL).named("g")}),
           [](const Match& m) {
             return UOp::make(Ops::LOAD, m["g"].dtype().base(), {view(m["g"], st_of(m["g"]))});
           }},
          {"store-outputs",
           UPat(Ops::SINK)
               .src_all(UPat::var().where([](const UOp& u) { return u.op() != Ops::STORE; }))
               .named("sink"),
           store_outputs},
          {"assign-passthrough", UPat(Ops::ASSIGN).named("x"), [](const Match& m) { return m["x"].src(1); }},
          {"const-view-to-valid", UPat(Ops::VIEW, {UPat::cvar()}).named("self"),
           [](const Match& m) {
             const UOp& self = m["self"];
             const UOp valid = UOp::make(Ops::VALID, dtypes::bool_,
                                         {UOp::make(Ops::VIEW, dtypes::void_, {}, view_st(self).to_arg())});
             const UOp c = const_like(self, uop_base(self).arg());
             return valid.where(c, const_like(self, const_arg(self.dtype(), 0)));
           }},
          {"remove-contiguous", UPat::ops({Ops::CONTIGUOUS, Ops::MSELECT}, {UPat::var("x")}),
           [](const Match& m) { return m["x"]; }},
          {"remove-device", UPat(Ops::VIEW, {UPat(Ops::DEVICE)}).named("view"),
           [](const Match& m) { return m["view"].with_src({}); }},
          {"check-load-st", UPat(Ops::LOAD, {UPat(Ops::VIEW, {UPat::var("glbl")}).named("view")}),
           check_load_st},
      });
  return pm;
}

}  // namespace tunebed::sched
