// The UOp intern table: structural equality is identity, nodes die with their last handle,
// concurrent builders agree, and the structural hash is stable.
#include <gtest/gtest.h>

#include <barrier>
#include <cmath>
#include <limits>
#include <thread>
#include <vector>

#include "core/ir/uop.hpp"

namespace tunebed {
namespace {

UOp var(const char* name) { return UOp::variable(name, 0, 10); }

TEST(Intern, StructurallyEqualUOpsAreTheSameNode) {
  UOp a = UOp::const_int(dtypes::int32, 7);
  UOp b = UOp::const_int(dtypes::int32, 7);
  EXPECT_EQ(a.get(), b.get());
  UOp x = var("x");
  EXPECT_EQ((x + 1).get(), (var("x") + 1).get());
  EXPECT_EQ(UOp::make(Ops::SINK, dtypes::void_, {x * x, x}).get(),
            UOp::make(Ops::SINK, dtypes::void_, {x * x, x}).get());
}

TEST(Intern, DifferentArgDtypeOrSourcesAreDifferentNodes) {
  UOp x = var("x"), y = var("y");
  EXPECT_NE(UOp::const_int(dtypes::int32, 7), UOp::const_int(dtypes::int32, 8));
  EXPECT_NE(UOp::const_int(dtypes::int32, 7), UOp::const_int(dtypes::int64, 7));
  EXPECT_NE(UOp::const_int(dtypes::int32, 1), UOp::const_float(dtypes::float32, 1.0));
  EXPECT_NE(x + y, y + x) << "source order is structure";
  EXPECT_NE(x + y, x * y);
  EXPECT_NE(UOp::make(Ops::SINK, dtypes::void_, {x}), UOp::make(Ops::SINK, dtypes::void_, {x, x}));
  // An int arg and a float arg of the same value differ, and so do tuples of different length.
  EXPECT_NE(UOp::make(Ops::NOOP, dtypes::void_, {}, Arg(1)),
            UOp::make(Ops::NOOP, dtypes::void_, {}, Arg(1.0)));
  EXPECT_NE(UOp::make(Ops::NOOP, dtypes::void_, {}, Arg::tuple({1})),
            UOp::make(Ops::NOOP, dtypes::void_, {}, Arg::tuple({1, 1})));
}

TEST(Intern, NanConstantsIntern) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(UOp::const_float(dtypes::float32, nan), UOp::const_float(dtypes::float32, nan));
  EXPECT_EQ(UOp::const_float(dtypes::float32, nan), UOp::const_float(dtypes::float32, -nan));
  // Through make() too: a NaN of another sign or payload is the same constant.
  UOp a = UOp::make(Ops::CONST, dtypes::float32, {}, Arg(nan));
  UOp b = UOp::make(Ops::CONST, dtypes::float32, {}, Arg(-std::nan("7")));
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.hash(), b.hash());
}

TEST(Intern, NegativeZeroAndZeroAreDifferentConstants) {
  UOp pz = UOp::const_float(dtypes::float32, 0.0), nz = UOp::const_float(dtypes::float32, -0.0);
  EXPECT_NE(pz, nz);
  EXPECT_NE(pz.hash(), nz.hash());
  EXPECT_TRUE(std::signbit(nz.const_value()));
}

TEST(Intern, ConstantsAreTruncatedToTheirDtype) {
  EXPECT_EQ(UOp::const_int(dtypes::uint8, 256), UOp::const_int(dtypes::uint8, 0));
  EXPECT_EQ(UOp::const_int(dtypes::int8, 200).const_int(), 200 - 256);
  EXPECT_EQ(UOp::const_float(dtypes::float16, 65519.0).const_value(), 65504.0);
  EXPECT_EQ(UOp::const_int(dtypes::bool_, 3), UOp::const_bool(true));
  EXPECT_EQ(UOp::const_float(dtypes::int32, 2.9).const_int(), 2);
  EXPECT_EQ(UOp::const_float(dtypes::int64, 1e30).const_int(), std::numeric_limits<int64_t>::max());
}

TEST(Intern, LiveCountReturnsToItsStartWhenGraphsAreDropped) {
  size_t start = live_uop_count();
  {
    UOp x = UOp::variable("live_count_x", 0, 100);
    UOp g = (x + 1) * (x + 2) + x;
    EXPECT_GT(live_uop_count(), start);
    UOp again = (x + 1) * (x + 2) + x;  // interning hits add no node
    EXPECT_EQ(again, g);
  }
  EXPECT_EQ(live_uop_count(), start);
}

TEST(Intern, ADroppedNodeIsRebuiltFreshWithTheSameHash) {
  size_t start = live_uop_count();
  uint64_t h;
  {
    UOp g = UOp::variable("rebuilt", 0, 3) * 5;
    h = g.hash();
  }
  EXPECT_EQ(live_uop_count(), start);
  EXPECT_EQ((UOp::variable("rebuilt", 0, 3) * 5).hash(), h);
}

TEST(Intern, ALongChainIsDestroyedWithoutOverflowingTheStack) {
  size_t start = live_uop_count();
  {
    UOp x = UOp::variable("chain", 0, 1);
    UOp u = x;
    for (int i = 0; i < 100000; i++) u = UOp::make(Ops::NEG, dtypes::index, {u});
    EXPECT_EQ(live_uop_count(), start + 100001);
    EXPECT_EQ(u.toposort().size(), 100001u);
  }
  EXPECT_EQ(live_uop_count(), start);
}

// A deterministic graph of ~n nodes with shared subgraphs, the same for every call with the same
// seed: thread k and thread j must build it out of the same nodes.
std::vector<UOp> build_graphs(int seed, int n) {
  std::vector<UOp> nodes{UOp::variable("t", 0, 64), UOp::index(seed % 5)};
  for (int i = 0; i < n; i++) {
    const UOp& a = nodes[(i * 7 + seed) % nodes.size()];
    const UOp& b = nodes[(i * 13 + 1) % nodes.size()];
    Ops op = i % 3 == 0 ? Ops::ADD : i % 3 == 1 ? Ops::MUL : Ops::MAX;
    nodes.push_back(a.alu(op, b));
  }
  return nodes;
}

TEST(Intern, ThreadsBuildingTheSameGraphsGetTheSameNodes) {
  constexpr int kThreads = 8, kNodes = 2000;
  size_t start = live_uop_count();
  {
    std::vector<std::vector<UOp>> built(kThreads);
    std::barrier sync(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; t++)
      threads.emplace_back([&, t] {
        sync.arrive_and_wait();  // start together, so the builds race
        for (int seed = 0; seed < 4; seed++) {
          std::vector<UOp> g = build_graphs(seed, kNodes);
          built[t].insert(built[t].end(), g.begin(), g.end());
        }
      });
    for (std::thread& th : threads) th.join();
    for (int t = 1; t < kThreads; t++) {
      ASSERT_EQ(built[t].size(), built[0].size());
      for (size_t i = 0; i < built[0].size(); i++)
        ASSERT_EQ(built[t][i].get(), built[0][i].get()) << "node " << i;
    }
  }
  EXPECT_EQ(live_uop_count(), start);
}

TEST(Intern, ThreadsBuildingAndDroppingTheSameGraphsLeaveNoNodeBehind) {
  // Nodes die while other threads look them up: a lookup must never revive a dying node.
  size_t start = live_uop_count();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++)
    threads.emplace_back([] {
      for (int round = 0; round < 50; round++) {
        std::vector<UOp> g = build_graphs(round % 3, 200);
        for (const UOp& u : g) ASSERT_EQ(u, u.with_src(u.src())) << "a rebuilt node is the live one";
      }
    });
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(live_uop_count(), start);
}

TEST(Hash, TheSameGraphBuiltTwiceHasTheSameHash) {
  auto build = [] {
    UOp x = UOp::variable("hx", 0, 9);
    return UOp::make(Ops::SINK, dtypes::void_, {(x * 3 + 1) % 4, x.lt(5)});
  };
  uint64_t h1 = build().hash();
  uint64_t h2 = build().hash();
  EXPECT_EQ(h1, h2);
  UOp x = UOp::variable("hx", 0, 9);
  EXPECT_NE(h1, UOp::make(Ops::SINK, dtypes::void_, {(x * 3 + 1) % 5, x.lt(5)}).hash());
}

TEST(Hash, EveryFieldChangesTheHash) {
  UOp x = UOp::variable("hf", 0, 9);
  uint64_t base = (x + 1).hash();
  EXPECT_NE(base, (x * x.const_like(1)).hash());              // op
  EXPECT_NE(base, (x + 1).with_dtype(dtypes::int64).hash());  // dtype
  EXPECT_NE(base, (x + 1).with_arg(Arg("tag")).hash());       // arg
  EXPECT_NE(base, (x + 2).hash());                            // a source
  EXPECT_NE(base, (x.const_like(1) + x).hash());              // source order
}

// Pinned values: the structural hash keys the tuning database, so it must be the same in every
// run and on every platform. These literals were computed once by this test; if the hash function
// (hash.hpp, Arg::hash, hash_value(DType), UOp::make) changes on purpose, update them and say in
// the commit that stored tuning results are invalidated.
TEST(Hash, ValuesArePinnedAcrossRuns) {
  EXPECT_EQ(UOp::const_int(dtypes::int32, 1).hash(), 1956711541090602165ull);
  UOp g = UOp::make(Ops::ADD, dtypes::float32,
                    {UOp::make(Ops::DEFINE_VAR, dtypes::float32, {}, Arg::tuple({"a", 0, 1})),
                     UOp::const_float(dtypes::float32, 1.5)});
  EXPECT_EQ(g.hash(), 3581843422967601753ull);
}

TEST(Toposort, ParentsComeFirstEachNodeOnceInDepthFirstSourceOrder) {
  UOp a = UOp::variable("ta", 0, 3), b = UOp::variable("tb", 0, 3);
  UOp s = a + b;  // shared by both branches
  UOp m = s * a;
  UOp root = UOp::make(Ops::SINK, dtypes::void_, {m, s, b});
  std::vector<UOp> order = root.toposort();
  // Depth first through the sources in order: m visits s (a, b, then s itself), then a, already
  // seen; the root's later sources s and b are seen too.
  std::vector<UOp> want{a, b, s, m, root};
  EXPECT_EQ(order, want);
  EXPECT_EQ(root.toposort(), order) << "deterministic";
  EXPECT_EQ(a.toposort(), std::vector<UOp>{a});
}

}  // namespace
}  // namespace tunebed

namespace tunebed {
namespace {

// Regression: the queue of dying nodes was a thread_local std::vector, destroyed at exit before
// static objects; a UOp held by a static then died into a freed vector (ASan: use after free at
// exit). The queue is now a list through the dying nodes.
UOp& held_until_exit() {
  static UOp u;
  return u;
}

TEST(Intern, AUOpHeldByAStaticCanDieAfterThreadLocalsAtExit) {
  held_until_exit() = (UOp::variable("held", 0, 3) + 1) * 2;
  EXPECT_EQ(held_until_exit().op(), Ops::MUL);
}

}  // namespace
}  // namespace tunebed
