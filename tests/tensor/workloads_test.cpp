// The workload library: spec parsing, canonical specs, errors listing the valid choices, and that
// every workload builds and evaluates at a small size in each of its dtypes.
#include "core/tensor/workloads.hpp"

#include <gtest/gtest.h>

namespace tunebed {
namespace {

std::string error_of(const std::string& spec) {
  try {
    make_workload(spec);
  } catch (const WorkloadError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no WorkloadError for " << spec;
  return "";
}

TEST(Workloads, SpecFillsDefaultsInDefinitionOrder) {
  const Workload w = make_workload("matmul:K=8,M=4,N=2");
  EXPECT_EQ(w.spec, "matmul:M=4,N=2,K=8,dtype=float32");
  ASSERT_EQ(w.inputs.size(), 2u);
  EXPECT_EQ(w.inputs[0].first, "a");
  EXPECT_EQ(w.inputs[0].second.shape(), (Shape{4, 8}));
  EXPECT_EQ(w.output.shape(), (Shape{4, 2}));
  EXPECT_EQ(make_workload("matmul").spec, "matmul:M=512,N=512,K=512,dtype=float32");
}

TEST(Workloads, SameSeedSameInputs) {
  Workload a = make_workload("sum:M=3,N=5", 7), b = make_workload("sum:M=3,N=5", 7),
           c = make_workload("sum:M=3,N=5", 8);
  EXPECT_EQ(a.inputs[0].second.data(), b.inputs[0].second.data());
  EXPECT_NE(a.inputs[0].second.data(), c.inputs[0].second.data());
}

TEST(Workloads, ErrorsListTheValidChoices) {
  EXPECT_EQ(error_of("matmull"),
            "unknown workload 'matmull' (valid: attention, batched_matmul, conv2d, depthwise_conv, "
            "elementwise, layernorm, "
            "matmul, max, mlp, softmax, sum, transpose)");
  EXPECT_EQ(error_of("matmul:Q=3"), "matmul: unknown parameter 'Q' (valid: M, N, K, dtype)");
  EXPECT_EQ(error_of("matmul:M=abc"), "matmul: parameter M must be a non-negative integer, got 'abc'");
  EXPECT_EQ(error_of("matmul:M=0"), "matmul: parameter M must be a positive integer, got '0'");
  EXPECT_EQ(error_of("softmax:dtype=int32"), "softmax: dtype must be one of float32, float16, got 'int32'");
  EXPECT_EQ(error_of("sum:axis=diag"), "sum: parameter axis must be one of full, rows, cols, got 'diag'");
  EXPECT_EQ(error_of("matmul:M"), "matmul: parameter 'M' needs a value (M=...)");
  EXPECT_NE(error_of("conv2d:H=2,W=2,R=3,S=3,padding=0").find("is larger than the input"), std::string::npos);
}

// Small shapes for every workload, so each one builds and runs under the reference in each dtype.
const std::map<std::string, std::string> kSmall = {
    {"attention", "B=1,H=2,S=5,D=3"},
    {"batched_matmul", "B=2,M=3,N=5,K=4"},
    {"conv2d", "N=2,C=4,H=7,W=6,K=6,groups=2,stride=2"},
    {"depthwise_conv", "N=1,C=3,H=5,W=5"},
    {"elementwise", "N=17,length=5"},
    {"layernorm", "M=3,N=7"},
    {"matmul", "M=3,N=5,K=7"},
    {"max", "M=3,N=4,axis=cols"},
    {"mlp", "B=2,IN=5,HIDDEN=7,OUT=3"},
    {"softmax", "M=3,N=7"},
    {"sum", "M=3,N=4,axis=rows"},
    {"transpose", "M=3,N=5"},
};

TEST(Workloads, EveryWorkloadRunsInEachOfItsDtypes) {
  for (const WorkloadDef& def : workload_library()) {
    ASSERT_TRUE(kSmall.count(def.name)) << def.name << " has no small shape in this test";
    EXPECT_EQ(def.params.back().name, "dtype");
    for (const DType& d : def.dtypes) {
      Workload w = make_workload(def.name + ":" + kSmall.at(def.name) + ",dtype=" + to_string(d));
      EXPECT_EQ(w.output.dtype(), d) << w.spec;
      const HostBuffer out = w.output.data();
      EXPECT_EQ(out.numel(), w.output.numel()) << w.spec;
    }
  }
}

TEST(Workloads, ValuesMatchTheirDefinition) {
  Workload w = make_workload("sum:M=2,N=3,axis=cols,dtype=int32");
  const std::vector<int64_t> x = w.inputs[0].second.values<int64_t>();
  EXPECT_EQ(w.output.values<int64_t>(), (std::vector<int64_t>{x[0] + x[3], x[1] + x[4], x[2] + x[5]}));
  Workload t = make_workload("transpose:M=2,N=3,dtype=int32");
  const std::vector<int64_t> y = t.inputs[0].second.values<int64_t>();
  EXPECT_EQ(t.output.values<int64_t>(), (std::vector<int64_t>{y[0], y[3], y[1], y[4], y[2], y[5]}));
}

}  // namespace
}  // namespace tunebed
