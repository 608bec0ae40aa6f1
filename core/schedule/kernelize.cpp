// kernelize: from a tensor graph to KERNEL UOps with finished ASTs (tinygrad's
// schedule/kernelize.py at the seed: get_kernelize_map and fix_kernel_ast).
#include "core/schedule/kernelize.hpp"

#include <algorithm>
#include <unordered_map>

#include "core/schedule/schedule.hpp"
#include "core/schedule/swizzler.hpp"
#include "core/schedule/uop_st.hpp"

namespace tunebed::sched {
namespace {

UOp src0(const Match& m) { return m["x"]; }

// A reduce over axes that are all stride 0 in an unmasked view reads one element many times:
// x.sum over n copies is x*n (+0.0 for floats: a sum starts at +0.0, so n copies of -0.0 sum to
// +0.0, where -0.0*n is -0.0), x.prod is x**n, x.max is x.
UOp simplify_stride0_reduce(const Match& m) {
  const UOp &reduce = m["reduce"], &x = m["x"];
  const ShapeTracker& st = st_of(x);
  const std::vector<int64_t> axes = reduce_axes(reduce);
  const SymShape shape = st.shape();
  if (!all_int(shape) || reduce.dtype().is_bool()) return {};
  for (const View& v : st.views())
    if (v.mask()) return {};
  int64_t n = 1;
  Mask keep;
  for (size_t i = 0; i < shape.size(); i++) {
    const bool reduced = std::find(axes.begin(), axes.end(), static_cast<int64_t>(i)) != axes.end();
    if (reduced && st.views().back().strides()[i] != sint(0)) return {};
    if (reduced) n *= shape[i].to_int();
    keep.emplace_back(0, reduced ? sint(1) : shape[i]);
  }
  ArgTuple shrink;
  for (const auto& [b, e] : keep) shrink.push_back(Arg::tuple({to_arg(b), to_arg(e)}));
  const UOp ret = mop(x, Ops::SHRINK, Arg(std::move(shrink)));
  switch (reduce_op(reduce)) {
    case Ops::ADD: {
      const UOp sum = ret.alu(Ops::MUL, const_like(ret, const_arg(ret.dtype(), static_cast<double>(n))));
      return ret.dtype().is_float() ? sum.alu(Ops::ADD, const_like(ret, const_arg(ret.dtype(), 0.0))) : sum;
    }
    case Ops::MUL:
      return ret.alu(Ops::POW, const_like(ret, const_arg(ret.dtype(), static_cast<double>(n))));
    default:
      return ret;  // MAX
  }
}

// The scheduler's share of kernelize.py's `sym` table: the rules that apply to graphs the Tensor
// front end builds (no DISK, images, multi-device or DETACH here).
PatternMatcher sym_rules() {
  const UPat x = UPat::var("x");
  return PatternMatcher({
      // A tensor-level constant is 0-d over its device; tinygrad keeps that shape as a VIEW on
      // the DEVICE, where merge_views folds later views of the constant.
      {"const-device-view", UPat(Ops::CONST, {UPat(Ops::DEVICE).named("d")}).named("c"),
       [](const Match& m) { return m["c"].with_src({view(m["d"], ShapeTracker::from_shape({}))}); }},
      {"copy-same-device", UPat(Ops::COPY, {x, UPat(Ops::DEVICE)}).named("c"),
       [](const Match& m) { return uop_device(m["c"]) == uop_device(m["x"]) ? m["x"] : UOp{}; }},
      {"contiguous-of-buffer-view",
       UPat(Ops::CONTIGUOUS, {UPat(Ops::VIEW, {UPat(Ops::BUFFER).named("buf")}).named("view")}),
       [](const Match& m) -> UOp {
         const ShapeTracker& st = view_st(m["view"]);
         return st.contiguous() && st.size() == uop_size(m["buf"]) ? m["view"] : UOp{};
       }},
      {"contiguous-of-realized",
       UPat(Ops::CONTIGUOUS, {UPat::ops({Ops::CONTIGUOUS, Ops::BUFFER, Ops::COPY, Ops::ASSIGN}).named("x")}),
       src0},
      {"assign-to-unrealized", UPat(Ops::ASSIGN, {UPat::var("t"), x}),
       [](const Match& m) -> UOp {
         const Ops b = uop_base(m["t"]).op();
         if (b == Ops::BUFFER || b == Ops::BUFFER_VIEW) return {};
         return UOp::make(Ops::CONTIGUOUS, m["x"].dtype(), {m["x"]});
       }},
      {"reduce-on-stride0", UPat(Ops::REDUCE_AXIS, {UPat::var("x")}).named("reduce"),
       simplify_stride0_reduce},
      // CAST to a no wider dtype and unary ops run before an EXPAND, on the smaller input.
      {"cast-before-expand", UPat(Ops::CAST, {UPat(Ops::VIEW).named("vm")}).named("cast"),
       [](const Match& m) -> UOp {
         const UOp &cast = m["cast"], &vm = m["vm"];
         const ShapeTracker& st = view_st(vm);
         if (cast.dtype().itemsize() > vm.dtype().itemsize() ||
             !resolve(lt(st.real_size(), prod(st.shape()))))
           return {};
         return view(uop_base(vm).cast(cast.dtype()), st);
       }},
      {"unary-before-expand",
       UPat::ops(GroupOp::Unary, {UPat(Ops::VIEW, {UPat::var("inp").where([](const UOp& u) {
                                         return !ALWAYS_CONTIGUOUS.contains(u.op());
                                       })})
                                      .named("v")})
           .named("alu"),
       [](const Match& m) -> UOp {
         const ShapeTracker& st = view_st(m["v"]);
         if (!resolve(lt(st.real_size(), prod(st.shape())))) return {};
         // Not past a pad when f(0) != 0: the padding must see f applied to 0. tinygrad 7b16fadd
         // lacks this check: (x*2).pad(((0,0),(0,1))).exp2() gives [[4.0, 0.0]] there, not 1 in the pad.
         const bool masked =
             std::any_of(st.views().begin(), st.views().end(), [](const View& v) { return bool(v.mask()); });
         if (masked && GroupOp::UnsafePad.contains(m["alu"].op())) return {};
         return view(m["inp"].alu(m["alu"].op()), st);
       }},
  });
}

UOp create_kernel(const UOp& x, UOp b) {
  if (!b) {
    const std::optional<std::string> device = uop_device(x);
    if (!device)
      throw ScheduleError(std::string("cannot realize a ") + std::string(op_name(x.op())) +
                          " with no device");
    b = new_buffer_uop(*device, uop_size(x), x.dtype());
  }
  std::vector<UOp> src{b};
  src.insert(src.end(), x.src().begin(), x.src().end());
  const UOp kernel = UOp::make(Ops::KERNEL, dtypes::void_, src, UOp::make(Ops::SINK, dtypes::void_, {x}));
  const UOp buffer = uop_base(b);
  if (uop_size(b) != uop_size(buffer))
    throw ScheduleError("assign to part of a buffer (a BUFFER_VIEW) is not supported: " +
                        to_string(uop_shape(b)) + " of a buffer of " + std::to_string(uop_size(buffer)));
  return reshape(UOp::make(Ops::ASSIGN, buffer.dtype(), {buffer, kernel}), uop_shape(x));
}

// Walk back the local graph until every source of the KERNEL is a realized buffer.
UOp append_to_kernel(const Match& m) {
  static constexpr OpSet dont_place_in_kernel{Ops::KERNEL, Ops::ASSIGN, Ops::BUFFER, Ops::MSELECT,
                                              Ops::MSTACK};
  const UOp& k = m["x"];
  std::vector<UOp> src;
  auto push = [&](const UOp& s) {
    if (std::find(src.begin(), src.end(), s) == src.end()) src.push_back(s);
  };
  for (const UOp& s : k.src()) {
    if (dont_place_in_kernel.contains(s.op()))
      push(s);
    else
      for (const UOp& ss : s.src()) push(ss);
  }
  return src == k.src() ? UOp{} : k.with_src(std::move(src));
}

std::string describe_buffer(const UOp& s) {
  const UOp b = buf_uop(s);
  return "BUFFER(" + std::to_string(b.src(0).arg().as_int()) + ", " + std::string(to_string(b.dtype())) +
         ", " + std::to_string(b.arg().as_int()) + ") on " + uop_device(b).value_or("?");
}

// A CONTIGUOUS on every realized node. tinygrad writes this as a bottom-up table whose output is
// marked with a tag so it does not fire on itself; UOps here carry no tags, and a bottom-up
// rewrite whose result has the matched node as a source would be lost, so this is one pass over
// the graph in topological order instead, matching each node against the realize set.
UOp add_contiguous(const UOp& g, const Realizes& realizes) {
  std::unordered_map<UOp, UOp, UOpHash> rebuilt;
  for (const UOp& u : g.toposort()) {
    std::vector<UOp> src;
    for (const UOp& s : u.src()) src.push_back(rebuilt.at(s));
    UOp n = src == u.src() ? u : u.with_src(std::move(src));
    if (realizes.contains(u) && u.op() != Ops::CONTIGUOUS && u.op() != Ops::ASSIGN)
      n = UOp::make(Ops::CONTIGUOUS, n.dtype(), {n});
    rebuilt.emplace(u, n);
  }
  return rebuilt.at(g);
}

// A kernel that reads a buffer an earlier ASSIGN (in toposort order) writes must run before that
// ASSIGN: the ASSIGN gets the reading kernel's ASSIGN as an extra source, so it sorts after it
// (tinygrad's "fix_assign" step of get_kernelize_map).
UOp order_assigns(const UOp& sink) {
  std::unordered_map<UOp, UOp, UOpHash> kernel_assign, assign_rep;
  for (const UOp& u : sink.toposort()) {
    if (u.op() != Ops::ASSIGN) continue;
    const UOp target = buf_uop(u);
    kernel_assign.insert_or_assign(target, u);
    for (const UOp& s : u.src(1).src()) {
      auto it = kernel_assign.find(s);
      if (s.op() != Ops::BUFFER || s == target || it == kernel_assign.end()) continue;
      for (const UOp& x : u.toposort())
        if (x.op() == Ops::ASSIGN && buf_uop(x) == s)
          throw ScheduleError("cycle detected in graph, kernel for " + describe_buffer(s) +
                              " must either depend on ASSIGN or BUFFER");
      std::vector<UOp> src = it->second.src();
      src.push_back(u);
      const UOp later = it->second.with_src(std::move(src));
      assign_rep.insert_or_assign(it->second, later);
      it->second = later;
    }
  }
  if (assign_rep.empty()) return sink;
  const PatternMatcher substitute({
      {"substitute", UPat::var("x"),
       [&](const Match& m) {
         auto it = assign_rep.find(m["x"]);
         return it == assign_rep.end() ? UOp{} : it->second;
       }},
  });
  return graph_rewrite(sink, substitute, {.bottom_up = true});
}

}  // namespace

const PatternMatcher& tensor_graph_rules() {
  static const PatternMatcher pm = merge_views() + sym_rules();
  return pm;
}

const PatternMatcher& create_kernels() {
  static const PatternMatcher pm({
      {"assign-kernel",
       UPat(Ops::ASSIGN,
            {UPat::var("b"), UPat::var().where([](const UOp& u) { return u.op() != Ops::KERNEL; })})
           .named("x"),
       [](const Match& m) { return create_kernel(m["x"], m["b"]); }},
      {"contiguous-kernel", UPat(Ops::CONTIGUOUS).named("x"),
       [](const Match& m) { return create_kernel(m["x"], {}); }},
      {"append-to-kernel", UPat(Ops::KERNEL).named("x"), append_to_kernel},
  });
  return pm;
}

const PatternMatcher& replace_buffers() {
  static const PatternMatcher pm({
      {"assign-to-target",
       UPat(Ops::ASSIGN, {UPat::ops({Ops::BUFFER, Ops::LOAD}), UPat(Ops::KERNEL)}).allow_any_len().named("a"),
       [](const Match& m) { return m["a"].src(0); }},
      {"buffer-to-load", UPat(Ops::BUFFER).named("x"),
       [](const Match& m) {
         const auto& bufs = m.ctx<std::vector<UOp>>();
         const auto at = std::find(bufs.begin(), bufs.end(), m["x"]);
         if (at == bufs.end())
           throw std::logic_error("replace_buffers: a BUFFER that is not a source of its KERNEL");
         const UOp g = UOp::make(Ops::DEFINE_GLOBAL, m["x"].dtype().ptr_to(uop_size(m["x"])), {},
                                 static_cast<int64_t>(at - bufs.begin()));
         return UOp::make(Ops::LOAD, m["x"].dtype(), {g});
       }},
      {"no-sink-for-meta", UPat(Ops::SINK, {UPat(Ops::CONTIGUOUS, {UPat::ops(Meta).named("x")})}), src0},
  });
  return pm;
}

UOp buf_uop(const UOp& u) {
  if (u.op() == Ops::BUFFER) return u;
  if (u.op() != Ops::ASSIGN)
    throw std::logic_error(std::string("buf_uop of ") + std::string(op_name(u.op())));
  return uop_base(u.src(0));
}

UOp fix_kernel_ast(const UOp& k) {
  const UOp& ast = k.arg().as_uop();
  std::vector<UOp> bufs;
  for (const UOp& s : k.src()) bufs.push_back(buf_uop(s));
  UOp out = graph_rewrite(ast, replace_buffers(), bufs, {.bottom_up = true});
  if (out.op() == Ops::SINK) {
    std::optional<std::string> device;
    for (const UOp& b : bufs)
      if (device && uop_device(b) != device) {
        std::string names;
        for (const UOp& s : k.src()) names += (names.empty() ? "" : ", ") + describe_buffer(s);
        throw ScheduleError("all buffers must be on the same device: (" + names + ")");
      } else
        device = uop_device(b);
  }
  out = graph_rewrite(out, view_left());
  out = graph_rewrite(out, view_right());
  return graph_rewrite(out, view_left() + fix_kernel_ops(), {.bottom_up = true});
}

UOp get_kernelize_sink(const UOp& sink) {
  UOp g = graph_rewrite(sink, tensor_graph_rules());
  const Realizes realizes = group_realizes(g);
  g = add_contiguous(g, realizes);
  static const PatternMatcher finalize_contiguous({
      {"merge-contiguous", UPat(Ops::CONTIGUOUS, {UPat(Ops::CONTIGUOUS)}).named("x"),
       [](const Match& m) { return m["x"].src(0); }},
      {"simplify-view", UPat(Ops::VIEW, {UPat::var("x")}).named("v"),
       [](const Match& m) -> UOp {
         const ShapeTracker s = view_st(m["v"]).simplify();
         return s == view_st(m["v"]) ? UOp{} : view(m["x"], s);
       }},
  });
  g = graph_rewrite(g, finalize_contiguous);
  return order_assigns(graph_rewrite(g, create_kernels()));
}

}  // namespace tunebed::sched
