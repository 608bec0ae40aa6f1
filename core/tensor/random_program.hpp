// Random tensor programs for property tests and fuzzers: elementwise ops, reductions, movement
// ops, matmuls and casts over seeded inputs, constants and aranges, with random shapes, dtypes
// and depth. The generator reads its choices from an abstract RandomSource, so RapidCheck
// (gen::inRange), libFuzzer (FuzzedDataProvider::ConsumeIntegralInRange) and a plain seed
// (SplitMixSource) can all drive it, and the same choices always build the same program.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor/rng.hpp"
#include "core/tensor/tensor.hpp"

namespace tunebed {

class RandomSource {
 public:
  virtual ~RandomSource() = default;
  virtual int64_t integer(int64_t lo, int64_t hi) = 0;  // uniform in [lo, hi], both included
  bool coin() { return integer(0, 1) == 1; }
  template <class T>
  const T& pick(const std::vector<T>& options) {
    return options[static_cast<size_t>(integer(0, static_cast<int64_t>(options.size()) - 1))];
  }
};

class SplitMixSource final : public RandomSource {
 public:
  explicit SplitMixSource(uint64_t seed) : rng_(seed) {}
  int64_t integer(int64_t lo, int64_t hi) override {
    return lo + static_cast<int64_t>(rng_.next() % (static_cast<uint64_t>(hi - lo) + 1));
  }

 private:
  SplitMix64 rng_;
};

struct RandomProgramOptions {
  int max_depth = 4;  // ops between an input and the output, along any path
  int max_rank = 3;
  int64_t max_dim = 5;
  std::vector<DType> dtypes = {dtypes::float32, dtypes::float16, dtypes::int32};
};

struct RandomProgram {
  std::vector<Tensor> inputs;  // realized buffers
  Tensor output;
};

RandomProgram random_program(RandomSource& rng, const RandomProgramOptions& opts = {});

}  // namespace tunebed
