// The tensor-core tables, transcribed as data from tinygrad's opt/tc.py at the seed, tunebed's CPU
// register blocks, and the sub-axis bookkeeping every table shares.
#include "core/opt/tc.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace tunebed {

namespace {

using Swizzle = std::array<std::array<std::vector<std::string>, 3>, 2>;

int log2_exact(int x) {
  int n = 0;
  while ((1 << n) < x) n++;
  return n;
}

std::vector<std::string> numbered(char letter, int count) {
  std::vector<std::string> out;
  for (int i = 0; i < count; i++) out.push_back(letter + std::to_string(i));
  return out;
}

// Shared by every NVIDIA shape with M=16 N=8. A function, not a global, so that Renderer records
// made during static initialisation elsewhere see it filled in.
std::vector<std::string> cuda_opts() { return {"u0", "l0", "l0", "l1", "l1", "l1", "u1"}; }

std::vector<TensorCore> cuda_81616() {
  const Swizzle swizzle = {{{{{"r1", "r2", "l2", "l3", "l4"}, {"u1", "r3"}, {"l0", "l1", "u0", "r0"}}},
                            {{{"r1", "r2", "u0", "l0", "l1"}, {"r0", "r3"}, {"l2", "l3", "l4", "u1"}}}}};
  std::vector<TensorCore> tcs;
  for (auto [in, out] :
       {std::pair{dtypes::float16, dtypes::float32}, std::pair{dtypes::bfloat16, dtypes::float32},
        std::pair{dtypes::float16, dtypes::float16}})
    tcs.push_back(TensorCore{{8, 16, 16}, 32, {8, 4, 4}, in, out, cuda_opts(), swizzle});
  return tcs;
}

std::vector<TensorCore> cuda_8168_f16() {
  const Swizzle swizzle = {{{{{"r1", "r2", "l2", "l3", "l4"}, {"r0", "u1"}, {"l0", "l1", "u0"}}},
                            {{{"r1", "r2", "u0", "l0", "l1"}, {"u1", "r0"}, {"l2", "l3", "l4"}}}}};
  std::vector<TensorCore> tcs;
  for (auto [in, out] :
       {std::pair{dtypes::float16, dtypes::float32}, std::pair{dtypes::float16, dtypes::float16}})
    tcs.push_back(TensorCore{{8, 16, 8}, 32, {4, 2, 4}, in, out, cuda_opts(), swizzle});
  return tcs;
}

// An N x M register block (both powers of two): u0..u(n-1) are N's bits, then M's. A keeps its
// natural order; B's N bits go to the top n upcast positions, its broadcast M bits below them.
TensorCore cpu_block(int n, int m) {
  const int nb = log2_exact(n), mb = log2_exact(m);
  std::vector<std::string> opts(nb, "u0"), a = numbered('u', nb + mb), b;
  opts.insert(opts.end(), mb, "u1");
  for (int i = nb; i < nb + mb; i++) b.push_back("u" + std::to_string(i));
  for (int i = 0; i < nb; i++) b.push_back("u" + std::to_string(i));
  return TensorCore{{n, m, 1},
                    1,
                    {m, n, n * m},
                    dtypes::float32,
                    dtypes::float32,
                    opts,
                    Swizzle{{{{{}, a, {}}}, {{{}, b, {}}}}}};
}

}  // namespace

std::string TensorCore::name() const {
  return "WMMA_" + std::to_string(dims[0]) + "_" + std::to_string(dims[1]) + "_" + std::to_string(dims[2]) +
         "_" + to_string(dtype_in) + "_" + to_string(dtype_out);
}

int TensorCore::reduce_axes() const { return log2_exact(dims[2]); }
int TensorCore::upcast_axes() const {
  return static_cast<int>(std::ranges::count_if(opts, [](const std::string& o) { return o[0] == 'u'; }));
}
int TensorCore::local_axes() const {
  return static_cast<int>(std::ranges::count_if(opts, [](const std::string& o) { return o[0] == 'l'; }));
}

std::vector<std::string> TensorCore::base_upcast_axes() const {
  std::vector<std::string> axes = numbered('r', reduce_axes()), u = numbered('u', upcast_axes());
  axes.insert(axes.end(), u.begin(), u.end());
  std::ranges::reverse(axes);
  return axes;
}

std::array<std::vector<int64_t>, 2> TensorCore::permutes_for_shape_str(
    const std::vector<std::string>& shape_str) const {
  std::vector<std::string> fwd = numbered('l', local_axes()), u = numbered('u', upcast_axes()),
                           r = numbered('r', reduce_axes());
  fwd.insert(fwd.end(), u.begin(), u.end());
  fwd.insert(fwd.end(), r.begin(), r.end());
  std::array<std::vector<int64_t>, 2> ret;
  for (int op = 0; op < 2; op++) {
    std::map<std::string, std::string> remap;
    size_t k = 0;
    for (const auto& part : swizzle[op])
      for (const std::string& s : part) remap[fwd.at(k++)] = s;
    for (size_t i = 0; i < shape_str.size(); i++) {
      auto it = remap.find(shape_str[i]);
      ret[op].push_back(it == remap.end() ? static_cast<int64_t>(i)
                                          : std::ranges::find(shape_str, it->second) - shape_str.begin());
    }
  }
  return ret;
}

void TensorCore::check() const {
  auto require = [&](bool cond, const std::string& what) {
    if (!cond) throw std::logic_error("tensor core " + name() + ": " + what);
  };
  const int l = local_axes(), u = upcast_axes(), r = reduce_axes();
  require(dims[0] * dims[1] == 1 << (l + u), "N x M is not local x upcast");
  require(1 << l == threads, "the locals do not make up the threads");
  require(1 << u == elements_per_thread[2], "the upcasts do not make up C's elements per thread");
  for (int d = 0; d < 2; d++)
    require(
        dims[d] == 1 << std::ranges::count_if(opts, [&](const std::string& o) { return o[1] == '0' + d; }),
        "opts do not split dim " + std::to_string(d) + " into its size");
  for (const auto& s : swizzle) {
    require(static_cast<int>(s[0].size()) == l, "local swizzle size is wrong");
    require(static_cast<int>(s[1].size()) == u, "upcast swizzle size is wrong");
    require(static_cast<int>(s[2].size()) == r, "reduce swizzle size is wrong");
  }
  // The sub-axes an operand does not vary along (its zero strides) may sit anywhere; the others
  // held in registers (upcast or reduce, not local) must number elements_per_thread.
  for (int op = 0; op < 2; op++) {
    std::vector<std::string> zero_stride;
    int un = 0, ln = 0;
    for (const std::string& o : opts) {
      if (o[1] == '0' + op) zero_stride.push_back(o[0] + std::to_string(o[0] == 'u' ? un : ln));
      (o[0] == 'u' ? un : ln)++;
    }
    int held = 0;
    for (int part = 1; part < 3; part++)
      for (const std::string& x : swizzle[op][part])
        held += x[0] != 'l' && std::ranges::find(zero_stride, x) == zero_stride.end();
    require(1 << held == elements_per_thread[op], "elements_per_thread of operand " + std::to_string(op));
  }
}

void TensorCoreOptions::fix_axes(int removed) {
  for (int d = 0; d < 2; d++) {
    if (!axes_exist[d]) continue;
    if (removed < axes[d])
      axes[d]--;
    else if (removed == axes[d])
      axes_exist[d] = false;
  }
}

const std::vector<TensorCore>& cuda_sm80_tensor_cores() {
  static const std::vector<TensorCore> tcs = [] {
    std::vector<TensorCore> all = cuda_81616();
    for (TensorCore& tc : cuda_8168_f16()) all.push_back(tc);
    return all;
  }();
  return tcs;
}

const std::vector<TensorCore>& cuda_sm75_tensor_cores() {
  static const std::vector<TensorCore> tcs = cuda_8168_f16();
  return tcs;
}

const std::vector<TensorCore>& cpu_tensor_cores() {
  static const std::vector<TensorCore> tcs = {cpu_block(32, 8), cpu_block(16, 4)};
  return tcs;
}

}  // namespace tunebed
