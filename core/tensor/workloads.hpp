// The workload library: named, parameterised tensor programs that every tool addresses the same
// way, by a spec string `name:param=value,...` such as `matmul:M=512,N=512,K=512,dtype=float32`.
// Parameters left out take their defaults; the canonical spec lists them all, in definition order,
// so it names one program exactly (and can key results).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/tensor/tensor.hpp"

namespace tunebed {

// An unknown workload or parameter, or a bad value: the message lists the valid choices.
struct WorkloadError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

struct WorkloadParam {
  std::string name, default_value, help;
};

// A workload's inputs (named, realized buffers of seeded random data) and its output graph.
struct Workload {
  std::string spec;  // canonical
  std::vector<std::pair<std::string, Tensor>> inputs;
  Tensor output;
};

class WorkloadParams;

struct WorkloadDef {
  std::string name, summary;
  std::vector<WorkloadParam> params;                   // `dtype` is always the last
  std::vector<DType> dtypes;                           // the dtypes it is meaningful for, the default first
  std::function<Tensor(const WorkloadParams&)> build;  // the output; inputs come from params.input
};

// The parsed parameters of one spec, checked against its definition.
class WorkloadParams {
 public:
  WorkloadParams(const WorkloadDef& def, std::map<std::string, std::string> values, uint64_t seed);
  int64_t integer(const std::string& name) const;  // a positive integer
  int64_t non_negative(const std::string& name) const;
  std::string choice(const std::string& name, const std::vector<std::string>& options) const;
  DType dtype() const;
  // A named input of seeded random data: standard normal floats, integers in [-4, 4].
  Tensor input(const std::string& name, const Shape& shape) const;
  const std::vector<std::pair<std::string, Tensor>>& inputs() const { return inputs_; }

 private:
  const std::string& raw(const std::string& name) const;
  const WorkloadDef& def_;
  std::map<std::string, std::string> values_;
  uint64_t seed_;
  mutable std::vector<std::pair<std::string, Tensor>> inputs_;  // in the order the build asks for them
};

const std::vector<WorkloadDef>& workload_library();  // sorted by name
Workload make_workload(std::string_view spec, uint64_t seed = 0);

}  // namespace tunebed
