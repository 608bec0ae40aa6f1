// Tensor: a lazy tensor in the style of tinygrad's tensor.py. Each operation builds UOps of the
// tensor-level graph (core/tensor/README.md states every op's dtype, sources, arg and shape rule);
// nothing is computed until realize(), which hands the graph to the current Backend (realize.hpp).
//
// A Tensor is a value: {the UOp of its graph, its shape, the host data of the buffers the graph
// reads}. Copies share the graph and the buffers. Shapes are checked as the graph is built, so a bad
// reshape or a matmul of mismatched inner dims throws ShapeError naming the op and the shapes.
//
//   Tensor a = Tensor::randn({64, 32}, /*seed=*/1), b = Tensor::randn({32, 16}, 2);
//   Tensor c = (a.matmul(b) + 1).relu().sum(1);   // a graph; nothing has run
//   std::vector<float> v = c.values<float>();      // realizes it, with the reference by default
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/ir/host_buffer.hpp"
#include "core/ir/uop.hpp"

namespace tunebed {

using Shape = std::vector<int64_t>;
using PadPairs = std::vector<std::pair<int64_t, int64_t>>;

inline constexpr const char* kDefaultDevice = "CPU";

// A tensor op given shapes (or axes, or dtypes) it cannot work with. The message names the op.
struct ShapeError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// A Python-like scalar for constants and fill values: its kind picks the dtype as tinygrad's
// dtypes.from_py does (bool, int32, float32).
struct ConstType {
  std::variant<bool, int64_t, double> v;
  ConstType(bool b) : v(b) {}                        // NOLINT: implicit, as a Python literal
  ConstType(int i) : v(int64_t{i}) {}                // NOLINT
  ConstType(int64_t i) : v(i) {}                     // NOLINT
  ConstType(double d) : v(d) {}                      // NOLINT
  ConstType(float d) : v(static_cast<double>(d)) {}  // NOLINT
  DType default_dtype() const;
  double as_double() const;
  Arg as_arg(const DType& d) const;  // the CONST arg for dtype d (rounded or wrapped)
};

// Which axes a reduction covers: all of them (the default), one, or a list. Negative axes count
// from the end.
struct Axes {
  std::optional<std::vector<int64_t>> axes;
  Axes() = default;
  Axes(int axis) : axes(std::vector<int64_t>{axis}) {}                             // NOLINT
  Axes(std::initializer_list<int64_t> list) : axes(std::vector<int64_t>(list)) {}  // NOLINT
  Axes(std::vector<int64_t> list) : axes(std::move(list)) {}                       // NOLINT
};

// A Python slice of one axis; a missing bound means the end in the step's direction.
struct Slice {
  std::optional<int64_t> start, stop;
  int64_t step = 1;
};

// conv2d's geometry. Padding (here and in the pools) is one int for all sides, one per spatial dim, or
// torch's flat form (left, right, top, bottom) of two per dim.
struct ConvOptions {
  int64_t groups = 1;
  std::vector<int64_t> stride = {1}, dilation = {1}, padding = {0};
};

class Tensor {
 public:
  // ---- creation ----
  explicit Tensor(ConstType scalar, std::optional<DType> dtype = std::nullopt,
                  const std::string& device = kDefaultDevice);  // a 0-d constant
  static Tensor empty(const Shape& shape, DType dtype = dtypes::float32,
                      const std::string& device = kDefaultDevice);
  static Tensor full(const Shape& shape, ConstType value, std::optional<DType> dtype = std::nullopt,
                     const std::string& device = kDefaultDevice);
  static Tensor zeros(const Shape& shape, DType dtype = dtypes::float32);
  static Tensor ones(const Shape& shape, DType dtype = dtypes::float32);
  static Tensor arange(int64_t start, int64_t stop, int64_t step = 1, DType dtype = dtypes::int32);
  static Tensor arange(int64_t stop) { return arange(0, stop); }
  // Seeded host data (SplitMix64, so the same seed gives the same numbers on every platform).
  static Tensor rand(const Shape& shape, uint64_t seed, DType dtype = dtypes::float32);   // uniform [0, 1)
  static Tensor randn(const Shape& shape, uint64_t seed, DType dtype = dtypes::float32);  // standard normal
  static Tensor randint(const Shape& shape, int64_t low, int64_t high, uint64_t seed,
                        DType dtype = dtypes::int32);
  static Tensor from_host(HostBuffer data, const Shape& shape, const std::string& device = kDefaultDevice);
  static Tensor from_values(const std::vector<double>& values, const Shape& shape,
                            DType dtype = dtypes::float32);

  // ---- properties ----
  const UOp& uop() const { return uop_; }
  const Shape& shape() const { return shape_; }
  DType dtype() const { return uop_.dtype(); }
  int64_t ndim() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numel() const;
  std::string device() const;
  const BufferData& buffers() const { return buffers_; }  // the host data the graph reads
  bool is_realized() const;                               // a buffer, or a reshape of one

  // ---- movement (tinygrad's names; a no-op returns *this) ----
  Tensor reshape(Shape shape) const;  // one -1 is inferred
  Tensor permute(std::vector<int64_t> order) const;
  Tensor transpose(int64_t dim0 = 1, int64_t dim1 = 0) const;
  Tensor expand(Shape shape) const;                         // broadcasting rules; -1 keeps a dim
  Tensor pad(PadPairs padding, ConstType value = 0) const;  // negative pads shrink
  Tensor shrink(PadPairs bounds) const;
  Tensor flip(std::vector<int64_t> axes) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor squeeze(int64_t dim) const;
  Tensor repeat(std::vector<int64_t> repeats) const;
  Tensor slice(const std::vector<Slice>& slices) const;  // one per leading axis
  Tensor index(int64_t axis, int64_t i) const;           // selects one entry and drops the axis

  // ---- elementwise (broadcasting as NumPy, dtypes promoted as tinygrad) ----
  Tensor add(const Tensor& x) const;
  Tensor sub(const Tensor& x) const;
  Tensor mul(const Tensor& x) const;
  Tensor div(const Tensor& x) const;   // true division: the result is a float
  Tensor idiv(const Tensor& x) const;  // integers, truncating as C
  Tensor mod(const Tensor& x) const;   // integers, the sign of the dividend as C
  Tensor pow(const Tensor& x) const;
  Tensor maximum(const Tensor& x) const;
  Tensor minimum(const Tensor& x) const;
  Tensor lt(const Tensor& x) const;
  Tensor gt(const Tensor& x) const;
  Tensor le(const Tensor& x) const;
  Tensor ge(const Tensor& x) const;
  Tensor eq(const Tensor& x) const;
  Tensor ne(const Tensor& x) const;
  Tensor where(const Tensor& x, const Tensor& y) const;  // *this is the condition
  Tensor where(const Tensor& x, ConstType y) const;
  Tensor where(ConstType x, const Tensor& y) const;
  Tensor neg() const;
  Tensor logical_not() const;
  Tensor reciprocal() const;
  Tensor exp() const;
  Tensor exp2() const;
  Tensor log() const;
  Tensor log2() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor square() const;
  Tensor sign() const;
  Tensor abs() const;
  Tensor relu() const;
  Tensor sigmoid() const;
  Tensor tanh() const;
  Tensor gelu() const;
  Tensor cast(DType dtype) const;

  // ---- reductions ----
  // The sum accumulates in tinygrad's sum_acc_dtype (or `acc`); float16/bfloat16 sums cast back.
  Tensor sum(Axes axes = {}, bool keepdim = false, std::optional<DType> acc = std::nullopt) const;
  Tensor max(Axes axes = {}, bool keepdim = false) const;
  Tensor min(Axes axes = {}, bool keepdim = false) const;
  Tensor prod(Axes axes = {}, bool keepdim = false) const;
  Tensor mean(Axes axes = {}, bool keepdim = false) const;
  Tensor var(Axes axes = {}, bool keepdim = false, int64_t correction = 1) const;
  Tensor argmax(std::optional<int64_t> axis = std::nullopt, bool keepdim = false) const;

  // ---- composite ops (nn.cpp) ----
  Tensor dot(const Tensor& w, std::optional<DType> acc = std::nullopt) const;
  Tensor matmul(const Tensor& w, std::optional<DType> acc = std::nullopt) const { return dot(w, acc); }
  Tensor conv2d(const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
                ConvOptions opts = {}) const;
  // Pools over the last kernel.size() axes; an empty stride means the kernel size. avg counts padding.
  Tensor max_pool2d(std::vector<int64_t> kernel = {2, 2}, std::vector<int64_t> stride = {},
                    std::vector<int64_t> dilation = {1}, std::vector<int64_t> padding = {0}) const;
  Tensor avg_pool2d(std::vector<int64_t> kernel = {2, 2}, std::vector<int64_t> stride = {},
                    std::vector<int64_t> dilation = {1}, std::vector<int64_t> padding = {0}) const;
  Tensor softmax(int64_t axis = -1) const;
  Tensor log_softmax(int64_t axis = -1) const;
  Tensor layernorm(int64_t axis = -1, double eps = 1e-5) const;
  Tensor scaled_dot_product_attention(const Tensor& key, const Tensor& value,
                                      const std::optional<Tensor>& attn_mask = std::nullopt,
                                      bool is_causal = false) const;

  // ---- realization ----
  Tensor contiguous() const;
  Tensor to(const std::string& device) const;  // a COPY to another device
  // tinygrad's assign: this tensor becomes ASSIGN(its buffer, x); realize() writes x into the buffer.
  // A tensor that is not yet a buffer is realized first, so it has one.
  Tensor& assign(const Tensor& x);
  Tensor& realize();
  HostBuffer data();  // realizes; the elements in C order
  template <class T>
  std::vector<T> values() {
    HostBuffer b = data();
    std::vector<T> out;
    for (int64_t k = 0; k < b.numel(); k++)
      out.push_back(b.dtype.is_float() ? static_cast<T>(b.get_float(k)) : static_cast<T>(b.get_int(k)));
    return out;
  }

  // A tensor over a graph built elsewhere (a parsed AST, a test): its shape is inferred, and the
  // graph's BUFFERs must all have data in `buffers`.
  static Tensor from_uop(UOp uop, BufferData buffers);

 private:
  Tensor(UOp uop, Shape shape, BufferData buffers);
  // A new node over this tensor (and `others`), its shape checked by the graph's shape rule.
  Tensor apply(Ops op, DType dtype, const Arg& arg, const std::vector<const Tensor*>& others = {}) const;
  Tensor reduce_op(Ops op, const Axes& axes, bool keepdim, const char* name) const;
  Tensor pool(const std::vector<int64_t>& kernel, std::vector<int64_t> stride,
              std::vector<int64_t> dilation) const;
  Tensor pad_flat(const std::vector<int64_t>& flat,
                  ConstType value = 0) const;  // torch order: last dim first
  Tensor cumalu(int64_t axis, Ops op) const;
  std::pair<Tensor, Tensor> broadcasted(const Tensor& y, bool match_dtype = true) const;
  // x op y after broadcasting and promotion; a ShapeError names `name`.
  static Tensor binop(Ops op, const Tensor& x, const Tensor& y, const char* name);
  Tensor broadcast_to(const Shape& shape) const;
  Tensor inverse() const;  // -x for floats, ~x for ints, !x for bool (tinygrad's _inverse)
  // A possibly negative axis as an index; `op` names the caller in the error for one out of range.
  int64_t resolve_dim(int64_t dim, const char* op, int64_t extra = 0) const;

  UOp uop_;
  Shape shape_;
  BufferData buffers_;
};

// Operators, with a scalar on either side (tinygrad's ufix: the scalar takes the tensor's dtype
// when it fits, else promotes).
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a);
Tensor operator+(const Tensor& a, ConstType b);
Tensor operator+(ConstType a, const Tensor& b);
Tensor operator-(const Tensor& a, ConstType b);
Tensor operator-(ConstType a, const Tensor& b);
Tensor operator*(const Tensor& a, ConstType b);
Tensor operator*(ConstType a, const Tensor& b);
Tensor operator/(const Tensor& a, ConstType b);
Tensor operator/(ConstType a, const Tensor& b);
Tensor operator<(const Tensor& a, ConstType b);
Tensor operator>(const Tensor& a, ConstType b);
Tensor& operator+=(Tensor& a, const Tensor& b);
Tensor& operator-=(Tensor& a, const Tensor& b);
Tensor& operator*=(Tensor& a, const Tensor& b);
Tensor& operator/=(Tensor& a, const Tensor& b);

// The scalar `v` as a tensor that combines with `like` (tinygrad's _broadcasted on a ConstType).
Tensor scalar_like(const Tensor& like, ConstType v);

}  // namespace tunebed
