// A second, deliberately different evaluator of tensor-level graphs, for the property test: it
// computes one output element at a time by walking the graph backwards from that element's index
// (a movement op maps the index, a reduce loops over its window), with per-element scalar
// arithmetic. It shares nothing with core/reference but core/ir's dtype rounding rules.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "core/ir/host_buffer.hpp"
#include "core/ir/uop.hpp"

namespace tunebed::testing {

struct ScalarValue {
  double f = 0;   // float dtypes
  int64_t i = 0;  // integers and bool
};

class ScalarEvaluator {
 public:
  explicit ScalarEvaluator(const BufferData& buffers) : buffers_(buffers) {}
  std::vector<int64_t> shape(const UOp& u);
  ScalarValue at(const UOp& u, const std::vector<int64_t>& index);

 private:
  ScalarValue compute(const UOp& u, const std::vector<int64_t>& index);
  ScalarValue reduce(const UOp& u, const std::vector<int64_t>& index);
  const BufferData& buffers_;
  std::map<const UOpNode*, std::vector<int64_t>> shapes_;
  std::map<std::pair<const UOpNode*, std::vector<int64_t>>, ScalarValue> memo_;
};

}  // namespace tunebed::testing
