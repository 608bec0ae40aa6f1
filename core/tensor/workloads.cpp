#include "core/tensor/workloads.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "core/ir/hash.hpp"

namespace tunebed {

namespace {

const std::vector<DType> kAll = {dtypes::float32, dtypes::float16, dtypes::int32};
const std::vector<DType> kFloats = {dtypes::float32, dtypes::float16};

WorkloadParam dtype_param() { return {"dtype", "float32", "element type"}; }

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (size_t k = 0; k < items.size(); k++) out += (k ? ", " : "") + items[k];
  return out;
}

std::vector<WorkloadDef> build_library() {
  std::vector<WorkloadDef> lib;
  lib.push_back(
      {"matmul",
       "C = A @ B with A (M, K) and B (K, N)",
       {{"M", "512", "rows of A"}, {"N", "512", "columns of B"}, {"K", "512", "inner dim"}, dtype_param()},
       kAll,
       [](const WorkloadParams& p) {
         const int64_t M = p.integer("M"), N = p.integer("N"), K = p.integer("K");
         return p.input("a", {M, K}).matmul(p.input("b", {K, N}));
       }});
  lib.push_back({"batched_matmul",
                 "C = A @ B with A (B, M, K) and B (B, K, N)",
                 {{"B", "8", "batch"},
                  {"M", "128", "rows"},
                  {"N", "128", "columns"},
                  {"K", "128", "inner dim"},
                  dtype_param()},
                 kAll,
                 [](const WorkloadParams& p) {
                   const int64_t B = p.integer("B"), M = p.integer("M"), N = p.integer("N"),
                                 K = p.integer("K");
                   return p.input("a", {B, M, K}).matmul(p.input("b", {B, K, N}));
                 }});
  lib.push_back({"conv2d",
                 "NCHW convolution of x (N, C, H, W) with w (K, C/groups, R, S)",
                 {{"N", "1", "batch"},
                  {"C", "32", "input channels"},
                  {"H", "32", "height"},
                  {"W", "32", "width"},
                  {"K", "64", "output channels"},
                  {"R", "3", "kernel height"},
                  {"S", "3", "kernel width"},
                  {"stride", "1", "of both spatial dims"},
                  {"padding", "1", "zeros on each side"},
                  {"dilation", "1", "of the kernel"},
                  {"groups", "1", "channel groups, dividing C and K"},
                  dtype_param()},
                 kAll,
                 [](const WorkloadParams& p) {
                   const int64_t g = p.integer("groups"), C = p.integer("C"), K = p.integer("K");
                   if (C % g || K % g)
                     throw WorkloadError("conv2d: groups=" + std::to_string(g) + " must divide C and K");
                   const Tensor x = p.input("x", {p.integer("N"), C, p.integer("H"), p.integer("W")});
                   const Tensor f = p.input("w", {K, C / g, p.integer("R"), p.integer("S")});
                   return x.conv2d(f, std::nullopt,
                                   {.groups = g,
                                    .stride = {p.integer("stride")},
                                    .dilation = {p.integer("dilation")},
                                    .padding = {p.non_negative("padding")}});
                 }});
  lib.push_back(
      {"depthwise_conv",
       "conv2d with groups = C: one R x S filter per channel",
       {{"N", "1", "batch"},
        {"C", "64", "channels"},
        {"H", "32", "height"},
        {"W", "32", "width"},
        {"R", "3", "kernel height"},
        {"S", "3", "kernel width"},
        {"stride", "1", "of both spatial dims"},
        {"padding", "1", "zeros on each side"},
        dtype_param()},
       kAll,
       [](const WorkloadParams& p) {
         const int64_t C = p.integer("C");
         const Tensor x = p.input("x", {p.integer("N"), C, p.integer("H"), p.integer("W")});
         const Tensor f = p.input("w", {C, 1, p.integer("R"), p.integer("S")});
         return x.conv2d(
             f, std::nullopt,
             {.groups = C, .stride = {p.integer("stride")}, .padding = {p.non_negative("padding")}});
       }});
  for (const char* op : {"sum", "max"}) {
    const std::string name = op;
    lib.push_back({name,
                   name + " of x (M, N): all of it (full), each row (rows) or each column (cols)",
                   {{"M", "1024", "rows"},
                    {"N", "1024", "columns"},
                    {"axis", "full", "full, rows or cols"},
                    dtype_param()},
                   kAll,
                   [name](const WorkloadParams& p) {
                     const Tensor x = p.input("x", {p.integer("M"), p.integer("N")});
                     const std::string axis = p.choice("axis", {"full", "rows", "cols"});
                     const Axes axes = axis == "full" ? Axes() : axis == "rows" ? Axes(1) : Axes(0);
                     return name == "sum" ? x.sum(axes) : x.max(axes);
                   }});
  }
  lib.push_back({"softmax",
                 "softmax of x (M, N) along its rows",
                 {{"M", "512", "rows"}, {"N", "512", "columns"}, dtype_param()},
                 kFloats,
                 [](const WorkloadParams& p) {
                   return p.input("x", {p.integer("M"), p.integer("N")}).softmax(-1);
                 }});
  lib.push_back({"layernorm",
                 "layernorm of x (M, N) along its rows (no affine)",
                 {{"M", "512", "rows"}, {"N", "512", "columns"}, dtype_param()},
                 kFloats,
                 [](const WorkloadParams& p) {
                   return p.input("x", {p.integer("M"), p.integer("N")}).layernorm(-1);
                 }});
  lib.push_back({"attention",
                 "scaled dot-product attention of q, k, v (B, H, S, D)",
                 {{"B", "1", "batch"},
                  {"H", "8", "heads"},
                  {"S", "128", "sequence length"},
                  {"D", "64", "head dim"},
                  {"causal", "0", "1 for a causal mask"},
                  dtype_param()},
                 kFloats,
                 [](const WorkloadParams& p) {
                   const Shape s{p.integer("B"), p.integer("H"), p.integer("S"), p.integer("D")};
                   const bool causal = p.choice("causal", {"0", "1"}) == "1";
                   const Tensor q = p.input("q", s), k = p.input("k", s), v = p.input("v", s);
                   return q.scaled_dot_product_attention(k, v, std::nullopt, causal);
                 }});
  lib.push_back({"elementwise",
                 "a chain of `length` elementwise steps over a, b, c (N,): y*b+c, relu, y-a, ...",
                 {{"N", "1048576", "elements"}, {"length", "4", "steps in the chain"}, dtype_param()},
                 kAll,
                 [](const WorkloadParams& p) {
                   const int64_t N = p.integer("N");
                   const Tensor a = p.input("a", {N}), b = p.input("b", {N}), c = p.input("c", {N});
                   Tensor y = a;
                   for (int64_t k = 0; k < p.integer("length"); k++)
                     y = k % 3 == 0 ? y * b + c : k % 3 == 1 ? y.relu() : y - a;
                   return y;
                 }});
  lib.push_back({"transpose",
                 "a copy of x (M, N) transposed to (N, M)",
                 {{"M", "1024", "rows"}, {"N", "1024", "columns"}, dtype_param()},
                 kAll,
                 [](const WorkloadParams& p) {
                   return p.input("x", {p.integer("M"), p.integer("N")}).transpose().contiguous();
                 }});
  lib.push_back({"mlp",
                 "a two-layer perceptron: relu(x @ w1 + b1) @ w2 + b2, x (B, IN)",
                 {{"B", "64", "batch"},
                  {"IN", "256", "input features"},
                  {"HIDDEN", "512", "hidden features"},
                  {"OUT", "128", "output features"},
                  dtype_param()},
                 kFloats,
                 [](const WorkloadParams& p) {
                   const int64_t in = p.integer("IN"), hidden = p.integer("HIDDEN"), out = p.integer("OUT");
                   const Tensor x = p.input("x", {p.integer("B"), in});
                   const Tensor w1 = p.input("w1", {in, hidden}), b1 = p.input("b1", {hidden});
                   const Tensor w2 = p.input("w2", {hidden, out}), b2 = p.input("b2", {out});
                   return (x.matmul(w1) + b1).relu().matmul(w2) + b2;
                 }});
  std::sort(lib.begin(), lib.end(),
            [](const WorkloadDef& a, const WorkloadDef& b) { return a.name < b.name; });
  return lib;
}

}  // namespace

const std::vector<WorkloadDef>& workload_library() {
  static const std::vector<WorkloadDef> lib = build_library();
  return lib;
}

WorkloadParams::WorkloadParams(const WorkloadDef& def, std::map<std::string, std::string> values,
                               uint64_t seed)
    : def_(def), values_(std::move(values)), seed_(seed) {}

const std::string& WorkloadParams::raw(const std::string& name) const { return values_.at(name); }

int64_t WorkloadParams::non_negative(const std::string& name) const {
  const std::string& s = raw(name);
  int64_t v = -1;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || v < 0)
    throw WorkloadError(def_.name + ": parameter " + name + " must be a non-negative integer, got '" + s +
                        "'");
  return v;
}

int64_t WorkloadParams::integer(const std::string& name) const {
  const int64_t v = non_negative(name);
  if (v == 0) throw WorkloadError(def_.name + ": parameter " + name + " must be a positive integer, got '0'");
  return v;
}

std::string WorkloadParams::choice(const std::string& name, const std::vector<std::string>& options) const {
  const std::string& s = raw(name);
  if (std::find(options.begin(), options.end(), s) == options.end())
    throw WorkloadError(def_.name + ": parameter " + name + " must be one of " + join(options) + ", got '" +
                        s + "'");
  return s;
}

DType WorkloadParams::dtype() const {
  const std::string& s = raw("dtype");
  std::vector<std::string> names;
  for (const DType& d : def_.dtypes) {
    if (to_string(d) == s) return d;
    names.push_back(to_string(d));
  }
  throw WorkloadError(def_.name + ": dtype must be one of " + join(names) + ", got '" + s + "'");
}

Tensor WorkloadParams::input(const std::string& name, const Shape& shape) const {
  const uint64_t seed = hash_mix(seed_, inputs_.size());  // each input its own stream
  const DType d = dtype();
  Tensor t = d.is_float() ? Tensor::randn(shape, seed, d) : Tensor::randint(shape, -4, 5, seed, d);
  inputs_.emplace_back(name, t);
  return t;
}

Workload make_workload(std::string_view spec, uint64_t seed) {
  const size_t colon = spec.find(':');
  const std::string name(spec.substr(0, colon));
  const auto& lib = workload_library();
  auto def = std::find_if(lib.begin(), lib.end(), [&](const WorkloadDef& d) { return d.name == name; });
  if (def == lib.end()) {
    std::vector<std::string> names;
    for (const WorkloadDef& d : lib) names.push_back(d.name);
    throw WorkloadError("unknown workload '" + name + "' (valid: " + join(names) + ")");
  }
  std::map<std::string, std::string> values;
  for (const WorkloadParam& p : def->params) values[p.name] = p.default_value;
  std::string_view rest = colon == std::string_view::npos ? std::string_view() : spec.substr(colon + 1);
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const size_t eq = item.find('=');
    const std::string key(item.substr(0, eq));
    if (!values.count(key)) {
      std::vector<std::string> names;
      for (const WorkloadParam& p : def->params) names.push_back(p.name);
      throw WorkloadError(name + ": unknown parameter '" + key + "' (valid: " + join(names) + ")");
    }
    if (eq == std::string_view::npos)
      throw WorkloadError(name + ": parameter '" + key + "' needs a value (" + key + "=...)");
    values[key] = std::string(item.substr(eq + 1));
  }
  std::string canonical = name + ":";
  for (size_t k = 0; k < def->params.size(); k++)
    canonical += (k ? "," : "") + def->params[k].name + "=" + values[def->params[k].name];
  const WorkloadParams params(*def, std::move(values), seed);
  params.dtype();  // a bad dtype is reported before anything is built
  try {
    Tensor output = def->build(params);
    return Workload{canonical, params.inputs(), output};
  } catch (const ShapeError& e) {
    throw WorkloadError(canonical + ": " + e.what());
  }
}

}  // namespace tunebed
