// What bench_kernels and bench_beam share: a workload's kernel compiled by tunebed with given opts
// on the CPU device, its buffers filled with seeded data, and the same computation done by Eigen
// on the same data, so that both run in one process and on one set of inputs.
//
// Eigen runs on one thread: it parallelises only under OpenMP, which the build does not enable.
// bench/CMakeLists.txt compiles the bench programs with -march=native, as the CPU device compiles
// kernels, so that both sides may use the same vector instructions.
#pragma once

#include <Eigen/Core>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/codegen/codegen.hpp"
#include "core/engine/check.hpp"
#include "core/opt/cost.hpp"
#include "core/opt/heuristic.hpp"
#include "core/opt/kernel.hpp"
#include "core/runtime/device.hpp"
#include "core/schedule/ast_interpreter.hpp"
#include "core/schedule/schedule.hpp"
#include "core/tensor/tensor.hpp"

namespace tunebed::bench {

// The one kernel OUT schedules into; throws when it is not exactly one.
inline UOp single_kernel(const Tensor& out, const std::string& what) {
  std::vector<UOp> kernels;
  for (const ScheduleItem& item : create_schedule({out.uop()}).items)
    if (!item.is_copy()) kernels.push_back(item.ast);
  if (kernels.size() != 1)
    throw std::runtime_error(what + " schedules into " + std::to_string(kernels.size()) +
                             " kernels, not one");
  return kernels[0];
}

// A kernel compiled with OPTS for the CPU with CORES cores (THREAD's limit).
struct CompiledKernel {
  std::string opts;
  ProgramSpec spec;
  std::unique_ptr<Program> program;
  LaunchDims dims;
};

inline CompiledKernel compile_kernel(Device& device, const UOp& ast, const std::vector<Opt>& opts,
                                     int cores) {
  Renderer renderer = Renderer::cpu(cores);
  Kernel k(ast, renderer);
  k.apply_opts(opts);
  CompiledKernel c{to_string(opts), get_program(k.get_optimized_ast(), renderer), nullptr, {}};
  c.program = device.compile(c.spec.source, c.spec.name);
  c.dims = c.spec.launch_dims();
  return c;
}

inline std::vector<Opt> hand_coded(const UOp& ast, int cores) {
  return hand_coded_optimizations(Kernel(ast, Renderer::cpu(cores)));
}

// The kernel's buffers, on the host (inputs drawn from seeds 1, 2, ...; the output, buffer 0,
// zero) and on the device.
struct KernelData {
  std::vector<HostBuffer> host;
  std::vector<std::unique_ptr<Buffer>> device;
  std::vector<Buffer*> args;

  KernelData(Device& dev, const ProgramSpec& spec) {
    for (size_t i = 0; i < spec.globals.size(); i++) {
      HostBuffer h(spec.globals[i].base(), spec.globals[i].size);
      if (i > 0) fill_random(h, i);
      device.push_back(dev.allocate(h.dtype, h.numel()));
      device.back()->copyin(h);
      args.push_back(device.back().get());
      host.push_back(std::move(h));
    }
  }
  float* f32(int i) { return reinterpret_cast<float*>(host[i].bytes.data()); }
};

// "" when OUT, AST's output computed on DATA's inputs, is within the derived bounds of the AST
// interpreter's exact run (core/engine/check.hpp), sampled to about 2^22 iterations so that a
// 1024^3 matmul takes a second; else why not.
inline std::string off_exact(const UOp& ast, const KernelData& data, const HostBuffer& out) {
  const Expected want = expect_kernel_ast(ast, data.host, {}, int64_t{1} << 22).at(0);
  const Verdict v = check_output(out, want);
  return v.ok ? "" : v.message;
}

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MapMatrix = Eigen::Map<RowMajor>;

// C (M, N) = A (M, K) @ B (K, N), all row-major as tunebed's buffers.
inline void eigen_matmul(float* c, float* a, float* b, int64_t m, int64_t n, int64_t k) {
  MapMatrix(c, m, n).noalias() = MapMatrix(a, m, k) * MapMatrix(b, k, n);
}

// NCHW conv2d (stride 1, no dilation, one group) the way Eigen users write it: im2col into COLS
// (C*R*S, OH*OW) per image, then one GEMM with the (K, C*R*S) filters.
struct ConvShape {
  int64_t n, c, h, w, k, r, s, pad;
  int64_t oh() const { return h + 2 * pad - r + 1; }
  int64_t ow() const { return w + 2 * pad - s + 1; }
};
inline void eigen_conv2d(float* out, const float* x, float* filters, const ConvShape& d,
                         std::vector<float>& cols) {
  const int64_t rows = d.c * d.r * d.s, pixels = d.oh() * d.ow();
  cols.resize(rows * pixels);
  for (int64_t img = 0; img < d.n; img++) {
    const float* xi = x + img * d.c * d.h * d.w;
    for (int64_t ch = 0; ch < d.c; ch++)
      for (int64_t i = 0; i < d.r; i++)
        for (int64_t j = 0; j < d.s; j++) {
          float* row = cols.data() + ((ch * d.r + i) * d.s + j) * pixels;
          for (int64_t y = 0; y < d.oh(); y++)
            for (int64_t xx = 0; xx < d.ow(); xx++) {
              const int64_t sy = y + i - d.pad, sx = xx + j - d.pad;
              const bool inside = sy >= 0 && sy < d.h && sx >= 0 && sx < d.w;
              row[y * d.ow() + xx] = inside ? xi[(ch * d.h + sy) * d.w + sx] : 0.0f;
            }
        }
    MapMatrix(out + img * d.k * pixels, d.k, pixels).noalias() =
        MapMatrix(filters, d.k, rows) * MapMatrix(cols.data(), rows, pixels);
  }
}

// Seconds F takes, by the steady clock.
template <typename F>
double seconds(F&& f) {
  auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace tunebed::bench
