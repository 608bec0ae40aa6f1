// A kernel row written before its cost was known (`tunebed import`, tune's plan) takes the FLOPs
// and bytes of the first later upsert that has them, and never loses known ones.
#include "support.hpp"

namespace tunebed::results::testing {
namespace {

class KernelCostTest : public DbTest {};

TEST_F(KernelCostTest, AKernelStoredWithoutItsCostTakesItFromALaterUpsert) {
  TuningDb db = TuningDb::open(file("t.db"), TuningDb::Mode::create);
  Kernel costed = kernel("matmul");
  Kernel bare = costed;
  bare.flops = bare.bytes = 0;
  const int64_t id = db.upsert_kernel(bare);
  EXPECT_EQ(count(db, "SELECT flops FROM kernels"), 0);
  EXPECT_EQ(db.upsert_kernel(costed), id);
  EXPECT_EQ(count(db, "SELECT flops FROM kernels"), costed.flops);
  EXPECT_EQ(count(db, "SELECT bytes FROM kernels"), costed.bytes);
  // Known figures stay: a later upsert without them, or with others, changes nothing.
  Kernel other = costed;
  other.flops = 1;
  db.upsert_kernel(bare);
  db.upsert_kernel(other);
  EXPECT_EQ(count(db, "SELECT flops FROM kernels"), costed.flops);
  EXPECT_EQ(count(db, "SELECT count(*) FROM kernels"), 1);
}

}  // namespace
}  // namespace tunebed::results::testing
