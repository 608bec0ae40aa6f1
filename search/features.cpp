#include "search/features.hpp"

#include <cmath>
#include <cstdlib>
#include <optional>

#include "core/opt/cost.hpp"
#include "core/opt/kernel.hpp"

namespace tunebed::search {

namespace {

float log2p(double x) { return static_cast<float>(std::log2(1 + x)); }
int64_t extent(const sint& s) { return s.is_int() ? s.to_int() : s.vmax(); }
bool is_body(AxisType t) { return t == AxisType::UPCAST || t == AxisType::UNROLL; }

// What one access does in the loop body: the distinct elements it touches once upcasts and
// unrolls are expanded, its widest unit-stride upcast (a vector), and its stride on the innermost
// loop (nullopt: not one constant stride).
struct Access {
  double elements = 1;
  int64_t vector = 1;
  std::optional<int64_t> inner_stride;
};

Access access(const Kernel& k, const ShapeTracker& st, std::optional<size_t> inner) {
  const std::vector<std::optional<sint>> strides = st.real_strides();
  Access a;
  for (size_t i = 0; i < strides.size(); i++) {
    const std::optional<int64_t> stride =
        strides[i] ? std::optional(extent(*strides[i])) : std::nullopt;  // a symbolic stride at its max
    if (is_body(k.axis_types()[i]) && stride != 0) {
      a.elements *= static_cast<double>(extent(k.full_shape()[i]));
      if (stride == 1) a.vector = std::max(a.vector, extent(k.full_shape()[i]));
    }
  }
  if (inner) a.inner_stride = strides[*inner] ? std::optional(extent(*strides[*inner])) : std::nullopt;
  return a;
}

}  // namespace

const std::vector<std::string>& kernel_feature_names() {
  static const std::vector<std::string> names = {
      "loops",        "locals",        "threads",      "group_reduce", "reduce",           "upcast",
      "unroll",       "loop_axes",     "inner_loop",   "loads",        "stores",           "load_vector",
      "store_vector", "accumulators",  "registers",    "flops_per_load", "bytes_per_flop", "work",
      "work_items",   "inner_contiguous", "inner_broadcast", "inner_strided", "shared_bytes", "tensor_core",
      "opts",         "inputs"};
  return names;
}

std::vector<float> kernel_features(const Kernel& k) {
  // Extents per axis type, and the innermost loop: the last axis that is not unrolled into the body.
  double loops = 1, locals = 1, threads = 1, group = 1, reduce = 1, upcast = 1, unroll = 1, work = 1;
  int loop_axes = 0;
  std::optional<size_t> inner;
  for (size_t i = 0; i < k.axis_types().size(); i++) {
    const double n = static_cast<double>(extent(k.full_shape()[i]));
    work *= n;
    switch (k.axis_types()[i]) {
      case AxisType::GLOBAL:
      case AxisType::LOOP: loops *= n; break;
      case AxisType::LOCAL: locals *= n; break;
      case AxisType::THREAD: threads *= n; break;
      case AxisType::GROUP_REDUCE: group *= n; break;
      case AxisType::REDUCE: reduce *= n; break;
      case AxisType::UPCAST: upcast *= n; break;
      case AxisType::UNROLL: unroll *= n; break;
    }
    if (!is_body(k.axis_types()[i])) loop_axes++, inner = i;
  }

  double loads = 0, stores = 0;
  int64_t load_vector = 1, store_vector = 1;
  int inputs = 0, contiguous = 0, broadcast = 0, strided = 0;
  for (size_t b = 0; b < k.bufs().size(); b++) {
    const Ops op = k.bufs()[b].op();
    if (op != Ops::LOAD && op != Ops::STORE) continue;  // constants and valids touch no memory
    const Access a = access(k, k.sts()[b], inner);
    if (op == Ops::STORE) {
      stores += a.elements, store_vector = std::max(store_vector, a.vector);
      continue;
    }
    inputs++;
    loads += a.elements, load_vector = std::max(load_vector, a.vector);
    if (!inner) continue;
    if (a.inner_stride == 0) broadcast++;
    else if (a.inner_stride && std::llabs(*a.inner_stride) == 1) contiguous++;
    else if (!a.inner_stride || std::llabs(*a.inner_stride) >= 16) strided++;  // past a 64-byte line of floats
  }
  const double accumulators = static_cast<double>(k.reduceops().size()) * upcast;
  const KernelCost cost = kernel_cost(k.ast());
  const double flops = std::max<double>(1, static_cast<double>(cost.flops));
  const double body_flops = flops / std::max(1.0, work / (upcast * unroll));
  const auto fraction = [&](int n) { return inputs ? static_cast<float>(n) / static_cast<float>(inputs) : 0.0F; };

  return {log2p(loops),
          log2p(locals),
          log2p(threads),
          log2p(group),
          log2p(reduce),
          log2p(upcast),
          log2p(unroll),
          static_cast<float>(loop_axes),
          inner ? log2p(static_cast<double>(extent(k.full_shape()[*inner]))) : 0.0F,
          log2p(loads),
          log2p(stores),
          log2p(static_cast<double>(load_vector)),
          log2p(static_cast<double>(store_vector)),
          log2p(accumulators),
          log2p(accumulators + loads),
          log2p(body_flops / std::max(1.0, loads)),
          static_cast<float>(std::log2(std::max<double>(1, static_cast<double>(cost.bytes)) / flops)),
          log2p(work),
          log2p(loops * locals * threads),
          fraction(contiguous),
          fraction(broadcast),
          fraction(strided),
          log2p(static_cast<double>(k.shared_memory_bytes())),
          k.tensor_core() ? 1.0F : 0.0F,
          static_cast<float>(k.applied_opts().size()),
          static_cast<float>(inputs)};
}

}  // namespace tunebed::search
