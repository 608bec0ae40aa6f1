// After expansion: reduces become accumulators (pm_reduce), vector code becomes what the target
// runs (devectorize, load_store_folding), and the last forms the renderer prints (pm_render).
// tinygrad's codegen/devectorizer.py.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "core/codegen/passes.hpp"
#include "core/codegen/wmma.hpp"

namespace tunebed::codegen_detail {

std::vector<UOp> ended_ranges(const UOp& store) {
  std::vector<UOp> out;
  for (size_t i = 2; i < store.src().size(); i++)
    if (store.src(i).op() == Ops::RANGE) out.push_back(store.src(i));
  return out;
}

namespace {

// ---- REDUCE -> accumulator ---------------------------------------------------------------------

UOp identity_element(Ops op, const DType& d) {
  switch (op) {
    case Ops::ADD:
      return d.is_float() ? UOp::const_float(d, 0) : UOp::const_int(d, 0);
    case Ops::MUL:
      return d.is_float() ? UOp::const_float(d, 1) : UOp::const_int(d, 1);
    case Ops::MAX:
      return d.is_float() ? UOp::const_float(d, -std::numeric_limits<double>::infinity())
                          : UOp::const_int(d, d.int_min());
    default:
      throw CodegenError("REDUCE with " + std::string(op_name(op)) + ", which has no identity element");
  }
}

// The ranges u is computed inside: those it reads, less those a STORE under it has closed.
std::vector<UOp> open_ranges(const UOp& u) {
  std::map<const UOpNode*, std::vector<UOp>> scope;
  for (const UOp& x : u.toposort()) {
    std::vector<UOp> s;
    for (const UOp& src : x.src()) {
      const std::vector<UOp>& inner = scope[src.get()];
      std::vector<UOp> closed = src.op() == Ops::STORE ? ended_ranges(src) : std::vector<UOp>{};
      for (const UOp& r : inner)
        if (std::find(closed.begin(), closed.end(), r) == closed.end() &&
            std::find(s.begin(), s.end(), r) == s.end())
          s.push_back(r);
    }
    if (x.op() == Ops::RANGE) s.push_back(x);  // a RANGE contributes itself to what reads it
    scope[x.get()] = std::move(s);
  }
  return scope[u.get()];
}

// x reduced across its lanes, to one scalar.
UOp horizontal_reduce(Ops op, const UOp& x) {
  UOp acc = lane(x, 0);
  for (int64_t i = 1; i < x.dtype().count; i++) acc = acc.alu(op, lane(x, i));
  return acc;
}

// The store/update/read of an accumulator, tinygrad's reduce_to_acc: the identity is stored
// before the reduce's loops (inside whatever loops the input already sits in), the update inside
// them, and the read after them; the STORE's RANGE sources say which loops it closes.
UOp reduce_to_acc(ReduceContext& ctx, const UOp& red) {
  const Ops op = red.arg().as_op();
  // An input of the REDUCE's own dtype (a WMMA's vector) accumulates lane by lane.
  UOp inp = red.src(0).dtype() == red.dtype() ? red.src(0) : horizontal_reduce(op, red.src(0));
  std::vector<UOp> reduce_ranges(red.src().begin() + 1, red.src().end());
  if (reduce_ranges.empty()) return inp;
  std::vector<UOp> outer;
  for (const UOp& r : open_ranges(inp))
    if (std::find(reduce_ranges.begin(), reduce_ranges.end(), r) == reduce_ranges.end()) outer.push_back(r);

  const DType d = red.dtype();
  UOp acc = UOp::make(Ops::DEFINE_REG, d.ptr_to(1, AddrSpace::Reg), {}, Arg(ctx.acc_num++));
  UOp slot = UOp::make(Ops::INDEX, acc.dtype(), {acc, UOp::index(0)});
  std::vector<UOp> init_srcs{slot, broadcast(identity_element(op, d.scalar_type()), d.count)};
  if (!outer.empty()) init_srcs.push_back(UOp::make(Ops::NOOP, dtypes::void_, outer));
  UOp init = UOp::make(Ops::STORE, dtypes::void_, init_srcs);
  std::vector<UOp> load_srcs{slot, init};
  load_srcs.insert(load_srcs.end(), reduce_ranges.begin(), reduce_ranges.end());
  UOp updated = UOp::make(Ops::LOAD, d, load_srcs).alu(op, inp);
  std::vector<UOp> store_srcs{slot, updated};
  store_srcs.insert(store_srcs.end(), reduce_ranges.begin(), reduce_ranges.end());
  return UOp::make(Ops::LOAD, d, {slot, UOp::make(Ops::STORE, dtypes::void_, store_srcs)});
}

// A REDUCE of a WMMA keeps one vector accumulator, fed back into the WMMA; of a WMMA standing for
// several (split_wmma), one per WMMA of the tensor core's width: a single accumulator of all
// their lanes (float32.vec(32) for 8 upcast m16n8k16 WMMAs) is wider than CUDA's vector types.
UOp split_wmma_reduce(const UOp& red) {
  const std::vector<UOp> parts = split_wmma(red.src(0));
  if (parts.size() == 1) return {};
  std::vector<UOp> lanes;
  for (const UOp& wmma : parts) {
    std::vector<UOp> srcs = red.src();
    srcs[0] = wmma;
    const UOp one = UOp::make(Ops::REDUCE, wmma.dtype(), srcs, red.arg());
    for (int64_t j = 0; j < wmma.dtype().count; j++) lanes.push_back(gep(one, {j}));
  }
  return vectorize(lanes);
}

// A REDUCE to n lanes: lane j reduces the j-th block of its input's lanes (CONTRACT puts the
// reduced lanes innermost).
UOp no_vectorized_reduce(const UOp& red) {
  if (red.src(0).op() == Ops::WMMA) return split_wmma_reduce(red);
  const int64_t n = red.dtype().count, k = red.src(0).dtype().count / n;
  std::vector<UOp> lanes;
  for (int64_t j = 0; j < n; j++) {
    std::vector<int64_t> block;
    for (int64_t i = 0; i < k; i++) block.push_back(j * k + i);
    std::vector<UOp> srcs = red.src();
    srcs[0] = gep(red.src(0), block);
    lanes.push_back(UOp::make(Ops::REDUCE, red.dtype().scalar_type(), srcs, red.arg()));
  }
  return vectorize(lanes);
}

// ---- vector memory access -> runs of supported widths -----------------------------------------

struct Lane {
  UOp root;        // null for a constant index
  int64_t offset;  // the index is root + offset
  UOp valid;       // null when ungated
};

std::vector<Lane> index_lanes(const UOp& index, int64_t n) {
  std::vector<Lane> out;
  for (int64_t i = 0; i < n; i++) {
    UOp idx = lane(index.src(1), i);
    Lane l{idx, 0, index.src().size() > 2 ? lane(index.src(2), i) : UOp()};
    if (idx.is_const()) {
      l = {UOp(), idx.const_int(), l.valid};
    } else if (idx.op() == Ops::ADD) {
      for (int s = 0; s < 2; s++)
        if (idx.src(s).is_const()) l = {idx.src(1 - s), idx.src(s).const_int(), l.valid};
    }
    out.push_back(l);
  }
  return out;
}

// The accesses of a vector LOAD/STORE as runs of consecutive addresses: lanes with the same root
// and gate, sorted by offset (tinygrad's fold_expanded: the lanes of an access need not be in
// address order, a matmul's B operand is read down a column), each run as wide as the target
// allows. A run lists, per element, the lanes that access it (a load may read one address for
// several lanes; a store writes each lane on its own).
using Run = std::vector<std::vector<int64_t>>;

// Whether x is a multiple of n for every value of its variables (tinygrad's UOp.divides).
bool divisible(const UOp& x, int64_t n) {
  if (n == 1) return true;
  if (x.is_const()) return x.const_int() % n == 0;
  if (x.op() == Ops::ADD) return divisible(x.src(0), n) && divisible(x.src(1), n);
  if (x.op() == Ops::MUL) return divisible(x.src(0), n) || divisible(x.src(1), n);
  return false;
}

std::vector<Run> runs(const std::vector<Lane>& lanes, const DType& d, const Renderer& r, bool share) {
  std::vector<int> widths;
  if (d.scalar == Scalar::Float32 && r.supports_float4) widths = r.vector_widths;
  std::sort(widths.rbegin(), widths.rend());
  // OpenCL's and CUDA's vector types are aligned to their size, so a vector access must start at
  // a multiple of its width; the C renderer declares its vectors aligned(4).
  const bool aligned = r.device != "CPU";
  auto starts_aligned = [&](const Lane& first, int w) {
    return !aligned || ((!first.root || divisible(first.root, w)) && first.offset % w == 0);
  };
  // Groups in order of their first lane; in each, the addresses in order with their lanes.
  std::vector<std::pair<const Lane*, std::map<int64_t, std::vector<int64_t>>>> groups;
  for (size_t i = 0; i < lanes.size(); i++) {
    auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& x) {
      return x.first->root == lanes[i].root && x.first->valid == lanes[i].valid;
    });
    if (g == groups.end()) g = groups.insert(groups.end(), {&lanes[i], {}});
    auto& at = g->second[lanes[i].offset];
    if (share || at.empty())
      at.push_back(static_cast<int64_t>(i));
    else
      groups.push_back({&lanes[i], {{lanes[i].offset, {static_cast<int64_t>(i)}}}});
  }
  std::vector<Run> out;
  for (const auto& [first, addresses] : groups) {
    Run run;
    int64_t prev = 0;
    auto flush = [&] {
      for (size_t i = 0; i < run.size();) {
        int w = 1;
        for (int cand : widths)
          if (static_cast<size_t>(cand) <= run.size() - i && starts_aligned(lanes[run[i][0]], cand)) {
            w = cand;
            break;
          }
        out.emplace_back(run.begin() + i, run.begin() + i + w);
        i += w;
      }
      run.clear();
    };
    for (const auto& [offset, at] : addresses) {
      if (!run.empty() && offset != prev + 1) flush();
      run.push_back(at);
      prev = offset;
    }
    flush();
  }
  return out;
}

UOp scalar_index(const UOp& index, const Lane& l, int64_t i) {
  std::vector<UOp> srcs{index.src(0), lane(index.src(1), i)};
  if (l.valid) srcs.push_back(l.valid);
  return UOp::make(Ops::INDEX, index.src(0).dtype(), srcs);
}

UOp fold_load(const Renderer& r, const UOp& load) {
  const UOp& index = load.src(0);
  const int64_t n = load.dtype().count;
  std::vector<Lane> lanes = index_lanes(index, n);
  std::vector<UOp> out(n);
  for (const Run& run : runs(lanes, load.dtype(), r, true)) {
    std::vector<UOp> srcs = load.src();
    srcs[0] = scalar_index(index, lanes[run[0][0]], run[0][0]);
    UOp part = UOp::make(Ops::LOAD, load.dtype().scalar_type().vec(static_cast<int>(run.size())), srcs);
    for (size_t k = 0; k < run.size(); k++)
      for (int64_t l : run[k]) out[l] = lane(part, static_cast<int64_t>(k));
  }
  return vectorize(out);
}

UOp fold_store(const Renderer& r, const UOp& store) {
  const UOp& index = store.src(0);
  const UOp& val = store.src(1);
  std::vector<Lane> lanes = index_lanes(index, val.dtype().count);
  std::vector<UOp> stores;
  for (const Run& run : runs(lanes, val.dtype().scalar_type(), r, false)) {
    std::vector<UOp> part;
    for (const auto& at : run) part.push_back(lane(val, at[0]));
    std::vector<UOp> srcs = store.src();
    srcs[0] = scalar_index(index, lanes[run[0][0]], run[0][0]);
    srcs[1] = vectorize(part);
    stores.push_back(UOp::make(Ops::STORE, dtypes::void_, srcs));
  }
  return stores.size() == 1 ? stores[0] : UOp::make(Ops::NOOP, dtypes::void_, stores);
}

bool is_vector(const UOp& u) { return u.dtype().count > 1; }
// An INDEX of several addresses (an expanded one), not the single address of a folded access.
const UPat vector_index = UPat(Ops::INDEX).where([](const UOp& i) { return i.dtype().v > 1; });

}  // namespace

const PatternMatcher& pm_reduce() {
  static const PatternMatcher pm = {
      {"reduce-unparented", UPat(Ops::REDUCE).named("red"),
       [](const Match& m) { return reduce_unparented(m["red"]); }},
      {"reduce-collapse", UPat(Ops::REDUCE).named("red"),
       [](const Match& m) { return reduce_collapse(m["red"]); }},
      {"no-vectorized-reduce", UPat(Ops::REDUCE).where(is_vector).named("red"),
       [](const Match& m) { return no_vectorized_reduce(m["red"]); }},
      {"reduce-to-acc", UPat(Ops::REDUCE).named("red"),
       [](const Match& m) { return reduce_to_acc(m.ctx<ReduceContext>(), m["red"]); }},
      {"wmma-accumulate", UPat(Ops::WMMA).named("wmma") + UPat::var("acc"),
       [](const Match& m) { return wmma_accumulate(m["wmma"], m["acc"]); }},
  };
  return pm;
}

const PatternMatcher& devectorize() {
  static const PatternMatcher pm = {
      {"devectorize-wmma", UPat(Ops::WMMA).named("wmma"),
       [](const Match& m) { return devectorize_wmma(m["wmma"]); }},
      // An ALU on vectors is the VECTORIZE of the ALU on each lane.
      {"no-vectorized-alu",
       UPat::ops(GroupOp::ALU | OpSet{Ops::CAST, Ops::BITCAST}).where(is_vector).named("alu"),
       [](const Match& m) {
         const UOp& alu = m["alu"];
         std::vector<UOp> lanes;
         for (int64_t i = 0; i < alu.dtype().count; i++) {
           std::vector<UOp> srcs;
           for (const UOp& s : alu.src()) srcs.push_back(lane(s, i));
           lanes.push_back(UOp::make(alu.op(), alu.dtype().scalar_type(), srcs, alu.arg()));
         }
         return vectorize(lanes);
       }},
      // A GEP of several lanes is the VECTORIZE of single-lane GEPs (the renderer prints those).
      {"gep-multi",
       UPat(Ops::GEP).where([](const UOp& g) { return g.arg().as_tuple().size() > 1; }).named("g"),
       [](const Match& m) {
         std::vector<UOp> lanes;
         for (int64_t i : m["g"].arg().as_ints()) lanes.push_back(gep(m["g"].src(0), {i}));
         return vectorize(lanes);
       }},
  };
  return pm;
}

const PatternMatcher& load_store_folding() {
  static const PatternMatcher pm = {
      {"fold-load", UPat(Ops::LOAD, {vector_index}).allow_any_len().named("load"),
       [](const Match& m) { return fold_load(m.ctx<Renderer>(), m["load"]); }},
      {"fold-store", UPat(Ops::STORE, {vector_index, UPat::var("val")}).allow_any_len().named("store"),
       [](const Match& m) { return fold_store(m.ctx<Renderer>(), m["store"]); }},
      {"index-valid-true", UPat(Ops::INDEX, {UPat::var("buf"), UPat::var("idx"), UPat::cnst(1)}),
       [](const Match& m) {
         return UOp::make(Ops::INDEX, m["buf"].dtype(), {m["buf"], m["idx"]});
       }},
  };
  return pm;
}

const PatternMatcher& pm_render() {
  // An expanded STORE (UNROLL) and the stores fold-store split one into (NOOP) are statements
  // of the SINK.
  static const auto is_group = [](const UOp& x) { return x.op() == Ops::NOOP || x.op() == Ops::UNROLL; };
  static const PatternMatcher pm = {
      {"sink-flatten",
       UPat(Ops::SINK)
           .where([](const UOp& s) { return std::any_of(s.src().begin(), s.src().end(), is_group); })
           .named("sink"),
       [](const Match& m) {
         std::vector<UOp> srcs;
         for (const UOp& s : m["sink"].src()) {
           if (is_group(s))
             srcs.insert(srcs.end(), s.src().begin(), s.src().end());
           else
             srcs.push_back(s);
         }
         return m["sink"].with_src(srcs);
       }},
  };
  return pm;
}

}  // namespace tunebed::codegen_detail
