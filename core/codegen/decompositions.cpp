// Ops the C target has no instruction for, rewritten into ones it has: THREEFRY (tinygrad's
// threefry2x32 in uop/symbolic.py, applied there with the symbolic rules).
#include "core/codegen/passes.hpp"

namespace tunebed::codegen_detail {

namespace {

// Threefry-2x32 with 20 rounds (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
// SC'11), on the two 32-bit halves of x, keyed by the two halves of key; the result packs the
// two output words back into 64 bits, the second word high.
UOp threefry2x32(const UOp& x, const UOp& key) {
  const DType u32 = dtypes::uint32, u64 = dtypes::uint64;
  const UOp low_mask = UOp::const_int(u64, 0xffffffff), two_32 = UOp::const_int(u64, int64_t{1} << 32);
  auto lo = [&](const UOp& v) { return (v & low_mask).cast(u32); };
  auto hi = [&](const UOp& v) { return ((v / two_32) & low_mask).cast(u32); };
  const UOp key0 = lo(key), key1 = hi(key);
  const UOp ks[3] = {key1, key0 ^ key1 ^ UOp::const_int(u32, 0x1BD11BDA), key0};
  static constexpr int rotations[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  UOp xr0 = lo(x) + ks[2], xr1 = hi(x) + ks[0];
  for (int i = 0; i < 5; i++) {
    for (int r : rotations[i % 2]) {
      // rotate-left by r as a multiply and a divide: the ops every target has
      const UOp sum = xr0 + xr1;
      xr1 = sum ^ (xr1 * (int64_t{1} << r) + xr1 / (int64_t{1} << (32 - r)));
      xr0 = sum;
    }
    xr0 = xr0 + ks[i % 3];
    xr1 = xr1 + ks[(i + 1) % 3] + (i + 1);
  }
  return (xr1.cast(u64) * two_32) | xr0.cast(u64);
}

}  // namespace

const PatternMatcher& pm_decompositions() {
  static const PatternMatcher pm = {
      {"threefry2x32",
       UPat(Ops::THREEFRY, {UPat::var("x", dtypes::uint64), UPat::var("key", dtypes::uint64)}),
       [](const Match& m) { return threefry2x32(m["x"], m["key"]); }},
  };
  return pm;
}

}  // namespace tunebed::codegen_detail
