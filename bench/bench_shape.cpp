// ShapeTracker throughput: movement ops per second on a small tracker, and the cost of turning a
// 4-view tracker into simplified (index, valid) UOps, the step every load and store of a kernel
// goes through.
#include <benchmark/benchmark.h>

#include "core/shape/shapetracker.hpp"

namespace tunebed {
namespace {

// pad, reshape across the padding, permute, reshape, permute, reshape: four views, none merge.
ShapeTracker four_views() {
  return ShapeTracker::from_shape({4, 6})
      .pad({{1, 1}, {0, 2}})
      .reshape({48})
      .reshape({6, 8})
      .permute({1, 0})
      .reshape({4, 12})
      .permute({1, 0})
      .reshape({48});
}

// One of each movement op, on a tracker that stays one view.
void BM_MovementOps(benchmark::State& state) {
  ShapeTracker base = ShapeTracker::from_shape({4, 6});
  for (auto _ : state) {
    ShapeTracker st = base.reshape({4, 1, 6})
                          .expand({4, 3, 6})
                          .permute({2, 0, 1})
                          .pad({{1, 1}, {0, 0}, {0, 2}})
                          .shrink({{0, 7}, {1, 4}, {0, 5}})
                          .flip({true, false, true});
    benchmark::DoNotOptimize(st);
  }
  state.SetItemsProcessed(state.iterations() * 6);
}
BENCHMARK(BM_MovementOps);

// A reshape that must be worked out against a mask (merge_dims and the mask reshape).
void BM_ReshapeMasked(benchmark::State& state) {
  ShapeTracker st = ShapeTracker::from_shape({4, 6}).pad({{0, 0}, {0, 6}});
  for (auto _ : state) benchmark::DoNotOptimize(st.reshape({2, 4, 3, 2}));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ReshapeMasked);

void BM_SimplifyFourViews(benchmark::State& state) {
  ShapeTracker st = four_views();
  for (auto _ : state) benchmark::DoNotOptimize(st.simplify());
  state.counters["views_before"] = static_cast<double>(st.views().size());
  state.counters["views_after"] = static_cast<double>(st.simplify().views().size());
}
BENCHMARK(BM_SimplifyFourViews);

void BM_IndexUOpsFourViews(benchmark::State& state) {
  ShapeTracker st = four_views();
  for (auto _ : state) benchmark::DoNotOptimize(st.to_indexed_uops());
  state.counters["views"] = static_cast<double>(st.views().size());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_IndexUOpsFourViews);

void BM_IndexUOpsOneView(benchmark::State& state) {
  ShapeTracker st = ShapeTracker::from_shape({4, 6}).pad({{1, 1}, {0, 2}}).permute({1, 0});
  for (auto _ : state) benchmark::DoNotOptimize(st.to_indexed_uops());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_IndexUOpsOneView);

}  // namespace
}  // namespace tunebed
