// What the fuzz targets that run kernels share: a RandomSource over the fuzzer's bytes, and
// compiled kernels kept per process. (How every target reports a finding: finding_report.hpp.)
#pragma once

#include <fuzzer/FuzzedDataProvider.h>

#include <memory>
#include <unordered_map>

#include "core/engine/compiled_program.hpp"
#include "core/ir/text.hpp"
#include "core/tensor/random_program.hpp"
#include "fuzz/finding_report.hpp"

namespace tunebed::fuzz {

// The generators' choices read from the fuzzer's bytes. FuzzedDataProvider gives the lowest
// choice once the bytes run out, and an all-zero input makes every choice the lowest: so the
// generators list their smallest option first, and zeroing bytes shrinks a program structurally.
class FdpSource final : public RandomSource {
 public:
  explicit FdpSource(FuzzedDataProvider& fdp) : fdp_(fdp) {}
  int64_t integer(int64_t lo, int64_t hi) override { return fdp_.ConsumeIntegralInRange<int64_t>(lo, hi); }

 private:
  FuzzedDataProvider& fdp_;
};

// A copy of every buffer, so that running a schedule leaves the program's own inputs alone.
inline BufferData deep_copy(const BufferData& b) {
  BufferData out;
  for (const auto& [id, buf] : b) out[id] = std::make_shared<HostBuffer>(*buf);
  return out;
}

// Compiled kernels by optimized AST, for the life of the fuzzing process. Mutations of one input
// mostly keep its kernels, and clang (a process per kernel, ~0.1 s) dominates an exec otherwise;
// the on-disk cache of the CPU device still saves the compile but not the render and dlopen.
class ProgramCache {
 public:
  const CompiledProgram& get(const UOp& optimized_ast) {
    auto it = cache_.find(optimized_ast);
    if (it != cache_.end()) return *it->second;
    if (cache_.size() >= kMaxEntries) cache_.clear();  // bounded: a long campaign sees many kernels
    if (!device_) device_ = open_device("cpu");
    auto exe = std::make_unique<CompiledProgram>(compile_program(optimized_ast, device_));
    return *cache_.emplace(optimized_ast, std::move(exe)).first->second;
  }

 private:
  static constexpr size_t kMaxEntries = 4096;
  std::shared_ptr<Device> device_;
  std::unordered_map<UOp, std::unique_ptr<CompiledProgram>, UOpHash> cache_;  // looked up, never listed
};

}  // namespace tunebed::fuzz
