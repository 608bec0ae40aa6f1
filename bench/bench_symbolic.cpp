// The symbolic simplifier's speed: graph_rewrite of the full rule set over a 10000-node random
// expression DAG with shared subexpressions, and simplify() of the input index of a 4-D
// convolution (the expression a kernel's loads are built from).
#include <benchmark/benchmark.h>

#include <random>

#include "core/rewrite/graph_rewrite.hpp"
#include "core/symbolic/expr_text.hpp"
#include "core/symbolic/symbolic.hpp"

namespace tunebed {
namespace {

// Each node combines two earlier ones, mostly recent ones, so the DAG is deep and shares
// subexpressions; the root is a SINK of every node nothing else uses.
UOp random_dag(size_t nodes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<UOp> pool;
  for (char v = 'a'; v < 'i'; v++) pool.push_back(UOp::variable(std::string(1, v), 0, 1000, dtypes::int64));
  std::vector<bool> used(nodes + pool.size(), false);
  auto pick = [&]() -> size_t {
    size_t n = pool.size();
    size_t back = std::min<size_t>(n, 1 + rng() % 64);
    return rng() % 4 ? n - 1 - rng() % back : rng() % n;
  };
  while (pool.size() < nodes) {
    size_t i = pick(), j = pick();
    used[i] = used[j] = true;
    const UOp &a = pool[i], &b = pool[j];
    int64_t c = static_cast<int64_t>(rng() % 16) + 1;
    switch (rng() % 8) {
      case 0:
        pool.push_back(a + b);
        break;
      case 1:
        pool.push_back(a - b);
        break;
      case 2:
        pool.push_back(a * c + b);
        break;
      case 3:
        pool.push_back(a / c);
        break;
      case 4:
        pool.push_back(a % c);
        break;
      case 5:
        pool.push_back(a.max(b));
        break;
      case 6:
        pool.push_back(a.lt(b).where(a, b + c));
        break;
      default:
        pool.push_back((a + c) * b);
        break;
    }
  }
  std::vector<UOp> roots;
  for (size_t i = 0; i < pool.size(); i++)
    if (!used[i]) roots.push_back(pool[i]);
  return UOp::make(Ops::SINK, dtypes::void_, roots);
}

void BM_GraphRewriteDag10000(benchmark::State& state) {
  UOp dag = random_dag(10000, 42);
  size_t out_nodes = 0;
  for (auto _ : state) {
    UOp out = graph_rewrite(dag, symbolic());
    out_nodes = out.toposort().size();
    benchmark::DoNotOptimize(out);
  }
  state.counters["nodes_in"] = static_cast<double>(dag.toposort().size());
  state.counters["nodes_out"] = static_cast<double>(out_nodes);
}
BENCHMARK(BM_GraphRewriteDag10000)->Unit(benchmark::kMillisecond);

// The NCHW input index of a 3x3 convolution over a (8, 16, 32, 32) input, written as the
// ShapeTracker writes it: the flat position split into (n, c, y, x) and recombined.
void BM_SimplifyConvIndex(benchmark::State& state) {
  ExprOptions o;
  o.vars = {{"n", {0, 7}}, {"c", {0, 15}}, {"oy", {0, 29}}, {"ox", {0, 29}}, {"ky", {0, 2}}, {"kx", {0, 2}}};
  std::string flat = "(n*16384 + c*1024 + (oy+ky)*32 + ox+kx)";
  UOp index = parse_expr("((" + flat + "//16384)%8)*16384 + ((" + flat + "//1024)%16)*1024 + ((" + flat +
                             "//32)%32)*32 + " + flat + "%32",
                         o);
  for (auto _ : state) benchmark::DoNotOptimize(simplify(index));
  state.counters["ops_before"] = static_cast<double>(alu_op_count(index));
  state.counters["ops_after"] = static_cast<double>(alu_op_count(simplify(index)));
}
BENCHMARK(BM_SimplifyConvIndex)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace tunebed
