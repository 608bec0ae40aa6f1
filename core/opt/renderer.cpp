// The capability records of tunebed's three targets.
#include "core/opt/renderer.hpp"

#include <algorithm>
#include <stdexcept>
#include <thread>

namespace tunebed {

Renderer Renderer::cpu(int cores) {
  if (cores < 1)
    throw std::invalid_argument("Renderer::cpu: cores must be at least 1, got " + std::to_string(cores));
  Renderer r;
  r.device = "CPU";
  r.has_local = false;  // tinygrad's ClangRenderer: GLOBAL axes become plain LOOPs
  r.global_max = std::nullopt;
  r.local_max = std::nullopt;
  r.vector_widths = {4, 8};
  r.tensor_cores = cpu_tensor_cores();  // register blocks (tc.hpp)
  r.threads = cores;
  return r;
}

Renderer Renderer::cpu() { return cpu(static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))); }

Renderer Renderer::opencl() {
  Renderer r;
  r.device = "GPU";
  r.vector_widths = {4};
  return r;
}

Renderer Renderer::cuda(int sm) {
  Renderer r;
  r.device = "CUDA";
  r.global_max = std::array<int64_t, 3>{2147483647, 65535, 65535};
  r.local_max = std::array<int64_t, 3>{1024, 1024, 64};
  r.shared_max = 49152;
  r.vector_widths = {4};
  if (sm >= 80)
    r.tensor_cores = cuda_sm80_tensor_cores();
  else if (sm >= 75)
    r.tensor_cores = cuda_sm75_tensor_cores();
  return r;
}

Renderer Renderer::for_device(std::string_view name) {
  if (name == "cpu") return cpu();
  if (name == "opencl") return opencl();
  if (name == "cuda") return cuda();
  throw std::invalid_argument("unknown device \"" + std::string(name) + "\" (one of cpu, opencl, cuda)");
}

}  // namespace tunebed
