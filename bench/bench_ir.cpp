// core/ir throughput: UOp creation (fresh nodes and intern hits, the aim is >= 2 M nodes/s for
// fresh ones), and the canonical text form of a 1000-node graph (print, and parse with and
// without the graph alive: parsing a live graph is all intern hits).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/text.hpp"

namespace {

using namespace tunebed;

constexpr int kChain = 1000;

// kChain fresh nodes: each ADD has a new source, so none is an intern hit.
UOp chain(const UOp& x) {
  UOp u = x;
  for (int i = 0; i < kChain; i++) u = UOp::make(Ops::ADD, dtypes::int32, {u, x});
  return u;
}

void BM_UOpCreateFresh(benchmark::State& state) {
  UOp x = UOp::variable("x", 0, 100);
  for (auto _ : state) {
    UOp u = chain(x);
    benchmark::DoNotOptimize(u.get());
    state.PauseTiming();  // freeing the chain is measured below, with creation
    u = UOp();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * kChain);
}
BENCHMARK(BM_UOpCreateFresh);

void BM_UOpCreateAndFree(benchmark::State& state) {
  UOp x = UOp::variable("x", 0, 100);
  for (auto _ : state) benchmark::DoNotOptimize(chain(x).get());
  state.SetItemsProcessed(state.iterations() * kChain);
}
BENCHMARK(BM_UOpCreateAndFree);

void BM_UOpInternHit(benchmark::State& state) {
  UOp x = UOp::variable("x", 0, 100);
  UOp alive = chain(x);  // every node of the rebuilt chain exists already
  for (auto _ : state) benchmark::DoNotOptimize(chain(x).get());
  state.SetItemsProcessed(state.iterations() * kChain);
}
BENCHMARK(BM_UOpInternHit);

// A 1000-node index expression with shared subexpressions: variables, ranges, constants and
// the ALU ops of kernel indexing, chosen by a fixed LCG so every run builds the same graph.
UOp index_graph() {
  std::vector<UOp> nodes;
  for (int i = 0; i < 4; i++) nodes.push_back(UOp::variable("v" + std::to_string(i), 0, 64 << i));
  nodes.push_back(UOp::make(Ops::RANGE, dtypes::int32, {UOp::index(16)}, Arg(0)));
  uint64_t s = 12345;
  auto next = [&s](uint64_t n) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return (s >> 33) % n;
  };
  while (nodes.size() < 1000) {
    const UOp& a = nodes[next(nodes.size())];
    const UOp& b = nodes[next(nodes.size())];
    switch (next(7)) {
      case 0:
        nodes.push_back(a + b);
        break;
      case 1:
        nodes.push_back(a * static_cast<int64_t>(next(9) + 1));
        break;
      case 2:
        nodes.push_back(a % static_cast<int64_t>(next(9) + 2));
        break;
      case 3:
        nodes.push_back(a / static_cast<int64_t>(next(9) + 2));
        break;
      case 4:
        nodes.push_back(a.max(b));
        break;
      case 5:
        nodes.push_back(a.lt(b).where(a, b));
        break;
      default:
        nodes.push_back(a + static_cast<int64_t>(next(100)));
        break;
    }
  }
  return UOp::make(Ops::SINK, dtypes::void_, nodes);
}

void BM_PrintUop1000(benchmark::State& state) {
  UOp g = index_graph();
  size_t bytes = 0, nodes = g.toposort().size();
  for (auto _ : state) {
    std::string text = print_uop(g);
    bytes += text.size();
    benchmark::DoNotOptimize(text.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * nodes));
  state.counters["nodes"] = static_cast<double>(nodes);
}
BENCHMARK(BM_PrintUop1000);

// range(0): 1 keeps the graph alive while parsing (every node an intern hit), 0 builds it fresh.
void BM_ParseUop1000(benchmark::State& state) {
  UOp g = index_graph();
  const std::string text = print_uop(g);
  size_t nodes = g.toposort().size();
  if (state.range(0) == 0) g = UOp();
  for (auto _ : state) benchmark::DoNotOptimize(parse_uop(text).get());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * nodes));
}
BENCHMARK(BM_ParseUop1000)->ArgName("alive")->Arg(0)->Arg(1);

}  // namespace
