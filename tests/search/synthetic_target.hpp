// A synthetic tuning target for tune()'s tests: a space of hand-written C kernels, the root and
// one level of named variants (each a body that fills out[0..256) from in[]), instead of a real
// kernel, so a test can plant a segfault, a hang, a wrong answer or a slow kernel by name, and
// price each launch by the kernel's repeat count instead of the clock (repeat_seconds).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "search/tune.hpp"

namespace tunebed::search::test {

constexpr int kN = 256;

// out[i] = 2 in[i], REPEAT times over: a correct kernel whose time grows with REPEAT.
inline std::string doubling(int repeat) {
  return "for (int r = 0; r < " + std::to_string(repeat) +
         "; r++) for (int i = 0; i < 256; i++) ((volatile float*)out)[i] = in[i] * 2.0f;";
}

// A synthetic cost for set_launch_price (search/measure.hpp): REPEAT microseconds for a kernel
// whose source has `r < REPEAT` (doubling's loop), 1 us for one without. With it installed, which
// candidate wins follows the repeat counts, never the machine's load.
inline double repeat_seconds(const std::string& source) {
  const size_t at = source.find("r < ");
  return (at == std::string::npos ? 1 : std::stoi(source.substr(at + 4))) * 1e-6;
}

// Installs a launch price for the life of the scope (a test), and restores the device's clock.
struct ScopedLaunchPrice {
  explicit ScopedLaunchPrice(LaunchPrice price) { set_launch_price(std::move(price)); }
  ~ScopedLaunchPrice() { set_launch_price({}); }
  ScopedLaunchPrice(const ScopedLaunchPrice&) = delete;
  ScopedLaunchPrice& operator=(const ScopedLaunchPrice&) = delete;
};

struct Variant {
  std::string name, body;
};

// The root and one level below it: one action per variant, keyed "V:<name>".
struct VariantSpace : SearchSpace {
  std::vector<Variant> variants;
  VariantSpace() = default;
  explicit VariantSpace(std::vector<Variant> v) : variants(std::move(v)) {}
  std::vector<int> actions(const Path& state) override {
    std::vector<int> all;
    for (int i = 0; state.empty() && i < static_cast<int>(variants.size()); i++) all.push_back(i);
    return all;
  }
  std::string key(const Path& state) override { return state.empty() ? "" : "V:" + variants[state[0]].name; }
};

inline std::string kernel_source(const std::string& body) {
  return "#include <stdint.h>\n#include <unistd.h>\n"
         "void k(void* const* bufs, const int32_t* vars, int32_t core_id, int32_t num_cores) {\n"
         "  float* out = (float*)bufs[0];\n  const float* in = (const float*)bufs[1];\n  " +
         body + "\n}\n";
}

// A target over SPACE whose root renders ROOT (read when rendered, so a test may change it);
// `kernel` is left for the test to fill.
inline TuneTarget synthetic_target(VariantSpace& space, const std::string& root) {
  TuneTarget target;
  target.space = &space;
  target.action_space_version = "test-v1";
  target.render = [&space, &root](const Path& p) {
    return KernelSource{kernel_source(p.empty() ? root : space.variants[p[0]].body), "k", {}};
  };
  target.parse = [&space](const std::string& opts) -> std::optional<Path> {
    if (opts.empty()) return Path{};
    for (int i = 0; i < static_cast<int>(space.variants.size()); i++)
      if (opts == space.key({i})) return Path{i};
    return std::nullopt;
  };
  target.buffers = {HostBuffer(dtypes::float32, kN), HostBuffer(dtypes::float32, kN)};
  // Every correct kernel here doubles its input, which float32 does exactly.
  target.expect = [](const std::vector<HostBuffer>& bufs) {
    Expected doubled = exact(bufs.at(1));
    doubled.dtype = bufs.at(0).dtype;
    for (int64_t i = 0; i < doubled.numel(); i++) doubled.value.set_float(i, 2 * doubled.value.get_float(i));
    return doubled;
  };
  return target;
}

}  // namespace tunebed::search::test
