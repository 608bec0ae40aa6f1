// The tensor-core tables, transcribed as data from tinygrad's opt/tc.py at the seed.
#include "core/opt/tc.hpp"

namespace tunebed {

namespace {

using Swizzle = std::array<std::array<std::vector<std::string>, 3>, 2>;

// Shared by every NVIDIA shape with M=16 N=8. A function, not a global, so that Renderer records
// made during static initialisation elsewhere see it filled in.
std::vector<std::string> cuda_opts() { return {"u0", "l0", "l0", "l1", "l1", "l1", "u1"}; }

std::vector<TensorCore> cuda_81616() {
  const Swizzle swizzle = {{{{{"r1", "r2", "l2", "l3", "l4"}, {"u1", "r3"}, {"l0", "l1", "u0", "r0"}}},
                            {{{"r1", "r2", "u0", "l0", "l1"}, {"r0", "r3"}, {"l2", "l3", "l4", "u1"}}}}};
  std::vector<TensorCore> tcs;
  for (auto [in, out] :
       {std::pair{dtypes::float16, dtypes::float32}, std::pair{dtypes::bfloat16, dtypes::float32},
        std::pair{dtypes::float16, dtypes::float16}})
    tcs.push_back(TensorCore{{8, 16, 16}, 32, {8, 4, 4}, in, out, cuda_opts(), swizzle});
  return tcs;
}

std::vector<TensorCore> cuda_8168_f16() {
  const Swizzle swizzle = {{{{{"r1", "r2", "l2", "l3", "l4"}, {"r0", "u1"}, {"l0", "l1", "u0"}}},
                            {{{"r1", "r2", "u0", "l0", "l1"}, {"u1", "r0"}, {"l2", "l3", "l4"}}}}};
  std::vector<TensorCore> tcs;
  for (auto [in, out] :
       {std::pair{dtypes::float16, dtypes::float32}, std::pair{dtypes::float16, dtypes::float16}})
    tcs.push_back(TensorCore{{8, 16, 8}, 32, {4, 2, 4}, in, out, cuda_opts(), swizzle});
  return tcs;
}

}  // namespace

std::string TensorCore::name() const {
  return "WMMA_" + std::to_string(dims[0]) + "_" + std::to_string(dims[1]) + "_" + std::to_string(dims[2]) +
         "_" + to_string(dtype_in) + "_" + to_string(dtype_out);
}

const std::vector<TensorCore>& cuda_sm80_tensor_cores() {
  static const std::vector<TensorCore> tcs = [] {
    std::vector<TensorCore> all = cuda_81616();
    for (TensorCore& tc : cuda_8168_f16()) all.push_back(tc);
    return all;
  }();
  return tcs;
}

const std::vector<TensorCore>& cuda_sm75_tensor_cores() {
  static const std::vector<TensorCore> tcs = cuda_8168_f16();
  return tcs;
}

}  // namespace tunebed
