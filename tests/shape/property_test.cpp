// Random movement-op sequences (all six ops, bounded sizes) on random base shapes, checked against
// the naive reference map. The bytes decode exactly as fuzz/fuzz_shapetracker.cpp decodes them, so
// a fuzzer finding and a property failure are the same input.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "fuzz/shape_op_sequence.hpp"

namespace tunebed {
namespace {

naive::Case random_case(const std::vector<uint8_t>& bytes) {
  return naive::decode_case(bytes.data(), bytes.size());
}
naive::Applied applied(const std::vector<uint8_t>& bytes) { return naive::apply_case(random_case(bytes)); }

RC_GTEST_PROP(ShapeTrackerProperty, movement_ops_read_what_the_naive_map_reads,
              (const std::vector<uint8_t>& bytes)) {
  RC_ASSERT(naive::check_map(applied(bytes)) == "");
}

RC_GTEST_PROP(ShapeTrackerProperty, simplify_keeps_the_map_and_never_adds_views,
              (const std::vector<uint8_t>& bytes)) {
  naive::Applied a = applied(bytes);
  RC_ASSERT(naive::check_simplify(a) == "");
  // The distribution printed with the result: how many views before and after simplify.
  RC_TAG(a.st.views().size(), a.st.simplify().views().size());
}

RC_GTEST_PROP(ShapeTrackerProperty, index_and_valid_uops_evaluate_to_the_naive_map,
              (const std::vector<uint8_t>& bytes)) {
  RC_ASSERT(naive::check_index_uops(applied(bytes)) == "");
}

RC_GTEST_PROP(ShapeTrackerProperty, view_uop_text_parses_back_to_the_same_tracker,
              (const std::vector<uint8_t>& bytes)) {
  RC_ASSERT(naive::check_text_round_trip(applied(bytes)) == "");
}

// The decoder reaches every op, so the properties above exercise all six.
TEST(ShapeTrackerProperty, DecoderProducesEverySixOps) {
  std::vector<bool> seen(6);
  const Ops kinds[] = {Ops::RESHAPE, Ops::PERMUTE, Ops::EXPAND, Ops::PAD, Ops::SHRINK, Ops::FLIP};
  for (uint8_t k = 0; k < 6; k++) {
    std::vector<uint8_t> bytes = {2, 3, 3, 3, 3, k, 1, 1, 1, 1};  // a 4x4 base, then op k
    naive::Case c = random_case(bytes);
    ASSERT_FALSE(c.ops.empty());
    for (int i = 0; i < 6; i++) seen[i] = seen[i] || c.ops[0].op == kinds[i];
  }
  EXPECT_EQ(seen, std::vector<bool>(6, true));
}

}  // namespace
}  // namespace tunebed
