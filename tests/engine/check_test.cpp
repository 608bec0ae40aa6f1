// The result check: derived error bounds (core/ir/error_bound.hpp) against the dtype-only
// tolerance they replaced. Each planted precision bug here passed the old check and fails the new.
#include "core/engine/check.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>

#include "core/engine/compiled_kernel.hpp"
#include "core/imports/tinygrad_ast.hpp"
#include "core/opt/kernel.hpp"
#include "core/runtime/device.hpp"
#include "core/schedule/ast_interpreter.hpp"
#include "core/tensor/tensor.hpp"
#include "tests/data/sops_sample.hpp"

namespace tunebed {
namespace {

// The check before issue 17: |out - ref| <= atol + rtol |ref| by dtype, against an output
// computed in the dtypes (the AST interpreter's, or the unoptimized kernel's).
bool old_check_accepts(const HostBuffer& out, const HostBuffer& ref) {
  const double tol = ref.dtype == dtypes::float32    ? 1e-3
                     : ref.dtype == dtypes::float16  ? 1e-2
                     : ref.dtype == dtypes::bfloat16 ? 5e-2
                                                     : 0;
  for (int64_t i = 0; i < ref.numel(); i++)
    if (std::abs(out.get_float(i) - ref.get_float(i)) > tol + tol * std::abs(ref.get_float(i))) return false;
  return true;
}

Tensor input(const Shape& shape, uint64_t seed, double scale = 1) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  HostBuffer b(dtypes::float32, n);
  fill_random(b, seed);
  for (int64_t i = 0; i < n; i++) b.set_float(i, b.get_float(i) * scale);
  return Tensor::from_host(b, shape);
}

// T's schedule run by the AST interpreter in its dtypes: what a kernel computing T gives.
HostBuffer computed(const Tensor& t) {
  const Schedule s = create_schedule({t.uop()});
  BufferData data;
  for (const auto& [id, b] : t.buffers()) data[id] = std::make_shared<HostBuffer>(*b);
  run_schedule(s, data);
  return read_output(s.outputs.at(0), data);
}

Expected exact_of(const Tensor& t) { return expect_output(create_schedule({t.uop()}), t.buffers()); }

TEST(DerivedTolerance, TheHeaderTableIsWhatTheRulesGive) {
  struct Row {
    DType d;
    double one_rounding[3], sum_1024[3];
  };
  // check.hpp's table, to its two significant digits
  const Row rows[] = {{dtypes::float32, {6.0e-8, 6.0e-10, 6.0e-12}, {3.0e-4, 3.0e-6, 3.0e-8}},
                      {dtypes::float16, {4.9e-4, 4.9e-6, 7.9e-8}, {2.5, 2.5e-2, 2.5e-4}},
                      {dtypes::bfloat16, {3.9e-3, 3.9e-5, 3.9e-7}, {20, 0.20, 2.0e-3}}};
  const double r[] = {1, 0.01, 1e-4};
  for (const Row& row : rows)
    for (int k = 0; k < 3; k++) {
      SCOPED_TRACE(to_string(row.d) + " at |r| = " + std::to_string(r[k]));
      EXPECT_NEAR(rounding_bound(row.d, r[k]) / row.one_rounding[k], 1, 0.05);
      SumBound sum;  // distinct terms, from 16 |r| / 1024 to 48 |r| / 1024
      for (int i = 0; i < 1024; i++) sum.add(32 * r[k] / 1024 * (0.5 + i / 1023.0), 0);
      EXPECT_NEAR(sum.bound(row.d) / row.sum_1024[k], 1, 0.05);
    }
}

TEST(DerivedTolerance, Float32ComputedInFloat16IsRejected) {
  const Tensor a = input({256}, 1), b = input({256}, 2), c = input({256}, 3);
  const Tensor right = a * b + c;
  const Tensor in_half =
      (a.cast(dtypes::float16) * b.cast(dtypes::float16) + c.cast(dtypes::float16)).cast(dtypes::float32);
  const HostBuffer planted = computed(in_half);
  EXPECT_TRUE(old_check_accepts(planted, computed(right)));
  EXPECT_TRUE(check_output(computed(right), exact_of(right)).ok);
  const Verdict v = check_output(planted, exact_of(right));
  EXPECT_FALSE(v.ok);
  EXPECT_GT(v.worst_ratio, 100) << v.message;  // not a near miss: eps(half) / eps(float) = 8192

  // A float32 matmul whose products and sums are carried in half: an 8-long sum
  const Tensor x = input({8, 8}, 4), w = input({8, 8}, 5);
  const Tensor mm = x.matmul(w);
  const Tensor mm_half = x.cast(dtypes::float16).matmul(w.cast(dtypes::float16)).cast(dtypes::float32);
  EXPECT_TRUE(old_check_accepts(computed(mm_half), computed(mm)));
  EXPECT_TRUE(check_output(computed(mm), exact_of(mm)).ok);
  EXPECT_FALSE(check_output(computed(mm_half), exact_of(mm)).ok);
}

TEST(DerivedTolerance, OneUlpOffInASmallExactOutputIsRejected) {
  // A transpose and a relu of values near 1e-4 are exact: their bound is 0.
  const Tensor x = input({16, 16}, 6, 1e-4);
  const Tensor moved = x.transpose().relu().contiguous();
  const Expected want = exact_of(moved);
  HostBuffer planted = computed(moved);
  ASSERT_TRUE(check_output(planted, want).ok);
  int64_t at = 0;
  while (planted.get_float(at) == 0) at++;  // a positive element
  const float v = static_cast<float>(planted.get_float(at));
  planted.set_float(at, std::nextafter(v, 1.0f));
  EXPECT_TRUE(old_check_accepts(planted, computed(moved)));
  const Verdict one_ulp = check_output(planted, want);
  EXPECT_FALSE(one_ulp.ok);
  EXPECT_NE(one_ulp.message.find("element " + std::to_string(at)), std::string::npos) << one_ulp.message;

  // An off-by-one read: out[i] = x[i + 1] for the last row, a difference of ~1e-4
  HostBuffer shifted = computed(x.contiguous());
  for (int64_t i = 240; i < 255; i++) shifted.set_float(i, shifted.get_float(i + 1));
  EXPECT_TRUE(old_check_accepts(shifted, computed(x.contiguous())));
  EXPECT_FALSE(check_output(shifted, exact_of(x.contiguous())).ok);
}

// Dataset line 3719 (tests/data/precision-kernels.txt): 1024 outputs, each a half sum of 1024
// one-hot terms with ~50 nonzero. Unrolled 64 ways, the compiled sum adds in another order than the
// interpreter's sequential half sum; the two differ by more than the old tolerance (check-corpus's
// one `wrong` of the whole dataset), and both lie within the bound of the exact sum, which grows
// with the half eps and the nonzero terms' count and magnitudes, not a hand-set slack.
TEST(DerivedTolerance, TheDatasetsHalfSumUnrolled64WaysIsAcceptedByItsBound) {
  const UOp ast = imports::parse_kernel_text(testing::test_data_lines("precision-kernels.txt").at(0)).ast;
  const KernelCompiler compiler(open_device("cpu"));
  const CompiledKernel unrolled =
      compiler.compile(ast, KernelOpts::given(parse_opts("UNROLL:0:16,UNROLL:0:4")));
  int rejected_by_old = 0;
  for (uint64_t seed = 0; seed < 2; seed++) {  // of seeds 0-7, the old check rejected 0, 1, 5 and 6
    std::vector<HostBuffer> bufs = unrolled.make_buffers();
    for (size_t i = 0; i < bufs.size(); i++) fill_random(bufs[i], seed * 16 + i);
    const std::vector<Expected> want = expect_kernel_ast(ast, bufs);
    std::vector<HostBuffer> interpreted = bufs;
    std::vector<HostBuffer*> ptrs, interpreted_ptrs;
    for (size_t i = 0; i < bufs.size(); i++)
      ptrs.push_back(&bufs[i]), interpreted_ptrs.push_back(&interpreted[i]);
    run_kernel_ast(ast, interpreted_ptrs);
    unrolled.run(ptrs);
    rejected_by_old += !old_check_accepts(bufs[0], interpreted[0]);
    const Verdict compiled = check_output(bufs[0], want[0]),
                  sequential = check_output(interpreted[0], want[0]);
    EXPECT_TRUE(compiled.ok) << compiled.message;
    EXPECT_TRUE(sequential.ok) << sequential.message;
    EXPECT_EQ(compiled.unverified, 0);
  }
  EXPECT_EQ(rejected_by_old, 2);  // the old check called both wrong
}

// Equal terms break the independence Higham and Mary's bound assumes (error_bound.hpp): 6400 of
// 12800 float32 terms are the same c, and each addition of c to a partial sum in one binade rounds
// off the same residue, so the sum errs with their count, not its square root. The sum bound
// counts equal terms (g = n-1 here); with distinct terms it is the independent 5 sqrt(n-1).
TEST(DerivedTolerance, EqualTermsErrTogetherAndTheSumBoundCountsThem) {
  const DType f32 = dtypes::float32;
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<float> uniform(0, 1);
  float sum = 0;
  double exact_sum = 0, sum_abs = 0;
  SumBound bound;
  for (int i = 0; i < 12800; i++) {
    const float t = i % 2 ? 0.1f : uniform(rng);
    sum += t;
    exact_sum += t;  // exact: float64 holds every partial sum of these float32 terms to 2^-53
    sum_abs += t;
    bound.add(t, 0);
  }
  const double error = std::abs(sum - exact_sum);
  const double independent = 5 * std::sqrt(12799.0) * unit_roundoff(f32) * sum_abs;
  EXPECT_GT(error, independent);  // the old g: sops line 2191 was `wrong` under it
  EXPECT_LE(error, bound.bound(f32));
  EXPECT_NEAR(bound.bound(f32), 12799 * unit_roundoff(f32) * sum_abs, 1e-9);

  SumBound distinct;
  double distinct_abs = 0;
  for (int i = 0; i < 1024; i++) distinct.add(1 + i / 1024.0, 0), distinct_abs += 1 + i / 1024.0;
  EXPECT_NEAR(distinct.bound(f32), 5 * std::sqrt(1023.0) * unit_roundoff(f32) * distinct_abs, 1e-12);
  SumBound zeros_do_not_count;
  for (int i = 0; i < 1024; i++) zeros_do_not_count.add(i == 7 || i == 9 ? 1 : 0, 0);
  EXPECT_NEAR(zeros_do_not_count.bound(f32), 2 * unit_roundoff(f32), 1e-20);  // one rounding, of 1 + 1
  SumBound signed_zeros;  // inexact zeros: +0 and -0 are one value, a run of 20 (m^2 = 400)
  double held = 0, bounds = 0;
  for (int i = 0; i < 980; i++) signed_zeros.add(1 + i / 1024.0, 0), held += 1 + i / 1024.0;
  for (int i = 0; i < 20; i++) signed_zeros.add(i % 2 ? 0.0 : -0.0, 1e-9), bounds += 1e-9;
  const double g = 5 * std::sqrt(980.0 + 400.0 - 1);
  EXPECT_NEAR(signed_zeros.bound(f32), bounds + g * (unit_roundoff(f32) * (held + bounds) + rounding_bound(f32, 0)),
              1e-15);
  SumBound with_nan;  // a NaN term: no run of equal values (NaN != NaN) to count; a NaN bound
  for (double t : {1.0, double{NAN}, 1.0}) with_nan.add(t, 0);
  EXPECT_TRUE(std::isnan(with_nan.bound(f32)));
}

// Overflow is a dtype's, not tinygrad's dtypes.max (infinity for floats): a float16 exp2 past 65504
// is infinite in the kernel whatever the exact value, so its bound is infinite and the element is
// counted unverified. Dataset line 3747 (precision-kernels.txt line 3), silu(x) * y in half, computes
// exp2(-1.44 x) for sums x of 1024 products near -14: before, the kernel's 0 met the exact 5e-6 with
// a finite bound and check-corpus called the plain kernel wrong.
TEST(DerivedTolerance, AFloatPastItsDtypesLargestValueIsUnverified) {
  const DType half = dtypes::float16;
  const std::array<double, 1> none{0};
  const auto exp2_bound = [&](double x) {
    const std::array<ConstValue, 1> in{ConstValue::real(dtypes::float64, x)};
    return alu_error_bound(Ops::EXP2, half, half, in, none, ConstValue::real(dtypes::float64, std::exp2(x)));
  };
  EXPECT_TRUE(std::isfinite(exp2_bound(15.9)));  // 61147: finite in half
  EXPECT_TRUE(std::isinf(exp2_bound(16.1)));     // 70239
  SumBound past;
  for (int i = 0; i < 3; i++) past.add(30000, 0);
  EXPECT_TRUE(std::isinf(past.bound(half)));
  EXPECT_TRUE(std::isfinite(past.bound(dtypes::float32)));

  const UOp ast = imports::parse_kernel_text(testing::test_data_lines("precision-kernels.txt").at(2)).ast;
  const CompiledKernel plain = KernelCompiler(open_device("cpu")).compile(ast, KernelOpts::given({}));
  std::vector<HostBuffer> bufs = plain.make_buffers();
  for (size_t i = 0; i < bufs.size(); i++) fill_random(bufs[i], i);
  const std::vector<Expected> want = expect_kernel_ast(ast, bufs, {}, int64_t{1} << 20);
  std::vector<HostBuffer*> ptrs;
  for (HostBuffer& b : bufs) ptrs.push_back(&b);
  plain.run(ptrs);
  const Verdict v = check_output(bufs[0], want[0]);
  EXPECT_TRUE(v.ok) << v.message;
  int64_t overflowed = 0;  // sampled elements whose exact exp2 passes 65504
  for (size_t i = 0; i < want[0].bound.size(); i++) overflowed += std::isinf(want[0].bound[i]);
  EXPECT_GT(overflowed, 0);
}

HostBuffer floats(std::vector<double> v) {
  HostBuffer b(dtypes::float32, static_cast<int64_t>(v.size()));
  for (size_t i = 0; i < v.size(); i++) b.set_float(static_cast<int64_t>(i), v[i]);
  return b;
}

Expected exactly(std::vector<double> v, std::vector<double> bound = {}) {
  Expected e = exact(floats(v));
  if (!bound.empty()) e.bound = bound;
  for (size_t i = 0; i < v.size(); i++) e.value.set_float(static_cast<int64_t>(i), v[i]);
  return e;
}

TEST(CheckOutput, NaNAndInfinityAreWrongOnlyWhereTheExactValueDiffers) {
  EXPECT_TRUE(check_output(floats({NAN, INFINITY, 1}), exactly({NAN, INFINITY, 1})).ok);
  const Verdict nan = check_output(floats({NAN, 1}), exactly({0, 1}, {1, 1}));
  EXPECT_FALSE(nan.ok);
  EXPECT_TRUE(std::isinf(nan.max_error));
  EXPECT_NE(nan.message.find("element 0: nan vs exact 0"), std::string::npos) << nan.message;
  EXPECT_FALSE(check_output(floats({-INFINITY}), exactly({INFINITY})).ok);
  EXPECT_FALSE(check_output(floats({1}), exactly({NAN})).ok);
}

TEST(CheckOutput, TheBoundIsPerElementAndInfiniteOrMissingBoundsAreCountedUnverified) {
  EXPECT_TRUE(check_output(floats({1.5, 10}), exactly({1, 10}, {0.5, 0})).ok);
  const Verdict off = check_output(floats({1, 10.5}), exactly({1, 10}, {0.5, 0.25}));
  EXPECT_FALSE(off.ok);
  EXPECT_DOUBLE_EQ(off.worst_ratio, 2);
  EXPECT_NE(off.message.find("element 1"), std::string::npos) << off.message;
  const Verdict skipped = check_output(floats({5, 7, 1}), exactly({1, 2, 1}, {INFINITY, NAN, 0}));
  EXPECT_TRUE(skipped.ok);
  EXPECT_EQ(skipped.unverified, 2);
  HostBuffer a(dtypes::int32, 2), b(dtypes::int32, 2);
  a.set_int(1, 1);
  EXPECT_FALSE(check_output(a, exact(b)).ok);  // integers are exact
  EXPECT_FALSE(check_output(HostBuffer(dtypes::float32, 3), exact(HostBuffer(dtypes::float32, 2))).ok);
  EXPECT_FALSE(check_output(HostBuffer(dtypes::float16, 2), exact(HostBuffer(dtypes::float32, 2))).ok);
}

// An element still holding the poison was never written: wrong where the exact run did not sample
// it (its bound is NaN) and where the exact value is NaN, which any other NaN would meet.
TEST(CheckOutput, AnElementNeverWrittenIsWrongSampledOrNot) {
  for (const DType& d : {dtypes::float16, dtypes::bfloat16, dtypes::float32, dtypes::float64}) {
    HostBuffer out = poisoned(d, 4);
    ASSERT_TRUE(std::isnan(out.get_float(3))) << to_string(d);
    Expected want = exact(HostBuffer(d, 4));
    want.value.set_float(2, NAN);
    want.bound = {0, 0, 0, NAN};  // element 3 was not sampled
    out.set_float(0, 0);
    out.set_float(1, 0);
    out.set_float(2, 0.0 / std::sin(0.0));  // a NaN the kernel computed: meets the exact NaN
    const Verdict v = check_output(out, want);
    EXPECT_FALSE(v.ok) << to_string(d);
    EXPECT_NE(v.message.find("element 3 was never written"), std::string::npos) << v.message;
    out.set_float(3, 5);  // written, and not sampled: nothing is known of it
    EXPECT_TRUE(check_output(out, want).ok) << to_string(d);
    out.bytes = poisoned(d, 4).bytes;
    out.set_float(0, 0);
    out.set_float(1, 0);
    out.set_float(3, 5);
    const Verdict nan = check_output(out, want);  // element 2 left as poison, exact NaN
    EXPECT_FALSE(nan.ok) << to_string(d);
    EXPECT_NE(nan.message.find("element 2 was never written"), std::string::npos) << nan.message;
  }
  HostBuffer bytes = poisoned(dtypes::int8, 3);
  EXPECT_EQ(bytes.get_int(2), 1);  // no value of an int8 is rare: the poison is only likely wrong
}

// A 32- or 64-bit integer element still holding the poison was never written, unless the exact
// run computed that very value there.
TEST(CheckOutput, AnIntegerElementNeverWrittenIsWrongUnlessItsExactValueIsThePoisons) {
  for (const DType& d : {dtypes::int32, dtypes::uint32, dtypes::int64, dtypes::uint64}) {
    const HostBuffer poison = poisoned(d, 3);
    const int64_t p = poison.get_int(0);
    EXPECT_EQ(p, d.itemsize() == 4 ? 0x5a5a5a5a : 0x5a5a5a5a5a5a5a5a) << to_string(d);
    Expected want = exact(HostBuffer(d, 3));
    want.value.set_int(1, p);  // a kernel may compute the poison's value...
    want.bound = {0, 0, NAN};  // ...and element 2 was not sampled
    HostBuffer out = poison;
    out.set_int(0, 0);
    EXPECT_TRUE(check_output(out, [&] {
                  Expected sampled = want;
                  sampled.bound[2] = 0;
                  sampled.value.set_int(2, p);
                  return sampled;
                }()).ok)
        << "elements 1 and 2 computed as the poison's value: " << to_string(d);
    const Verdict v = check_output(out, want);
    EXPECT_FALSE(v.ok) << to_string(d);
    EXPECT_NE(v.message.find("element 2 was never written (it still holds the poison"), std::string::npos)
        << v.message;
    out.set_int(2, 7);  // written, not sampled: nothing is known of it
    EXPECT_TRUE(check_output(out, want).ok) << to_string(d);
  }
}

TEST(CheckOutput, ASampledExactRunBoundsItsSampleAndLeavesTheRestUnverified) {
  const Tensor x = input({64, 64}, 7), w = input({64, 64}, 8);
  const UOp ast = create_schedule({x.matmul(w).uop()}).items.at(0).ast;
  std::vector<HostBuffer> bufs;
  for (const auto& [dtype, n] : ast_buffer_specs(ast)) fill_random(bufs.emplace_back(dtype, n), bufs.size());
  const int64_t work = ast_iterations(ast);
  ASSERT_EQ(work, 64 * 64 * 64);
  const Expected all = expect_kernel_ast(ast, bufs).at(0),
                 sampled = expect_kernel_ast(ast, bufs, {}, work / 8).at(0);
  int64_t known = 0;
  for (int64_t i = 0; i < sampled.numel(); i++) {
    if (std::isnan(sampled.bound[static_cast<size_t>(i)])) continue;
    known++;
    EXPECT_EQ(sampled.value.get_float(i), all.value.get_float(i));
    EXPECT_EQ(sampled.bound[static_cast<size_t>(i)], all.bound[static_cast<size_t>(i)]);
  }
  EXPECT_EQ(known, (64 * 64 + 8) / 9);  // every 9th element: the stride 8 made odd
}

}  // namespace
}  // namespace tunebed
