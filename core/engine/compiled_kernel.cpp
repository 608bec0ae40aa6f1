// Kernel AST -> opts -> optimized AST -> C -> Program; batches of kernels in one C unit.
#include "core/engine/compiled_kernel.hpp"

#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string_view>

#include "core/codegen/kernel_ast.hpp"
#include "core/opt/heuristic.hpp"

namespace tunebed {

Kernel optimize_kernel(const UOp& ast, const Renderer& renderer, const KernelOpts& opts) {
  Kernel k(ast, renderer);
  switch (opts.mode) {
    case KernelOpts::Mode::default_opts:
      k.apply_opts(default_opts(k));
      break;
    case KernelOpts::Mode::hand_coded:
      k.apply_opts(hand_coded_optimizations(k));
      break;
    case KernelOpts::Mode::none:
      break;
    case KernelOpts::Mode::given:
      k.apply_opts(opts.opts);
      break;
  }
  return k;
}

namespace {

// The top-level declarations (typedefs, helper functions) of the C text before a kernel, so a
// batch declares each once: C allows a typedef to be repeated, but not a function definition.
std::vector<std::string> top_level_items(std::string_view text) {
  std::vector<std::string> items;
  std::string item;
  int depth = 0;
  for (char c : text) {
    item += c;
    depth += c == '{' ? 1 : c == '}' ? -1 : 0;
    if (c == '\n' && depth == 0 && (item.ends_with(";\n") || item.ends_with("}\n")))
      items.push_back(std::move(item)), item.clear();
  }
  if (!item.empty()) items.push_back(std::move(item));
  return items;
}

std::string format(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

}  // namespace

std::string report_line(const CompiledKernel& k, const Timing& timing) {
  const double s = timing.median;
  std::ostringstream out;
  out << k.name << "  " << k.shape << "  " << (k.applied_opts.empty() ? "-" : to_string(k.applied_opts))
      << "  " << (s < 1e-4 ? format("%.2f us", s * 1e6) : format("%.3f ms", s * 1e3)) << "  "
      << format("%.2f GFLOP/s", s > 0 ? k.cost.flops / s * 1e-9 : 0) << "  "
      << format("%.2f GB/s", s > 0 ? k.cost.bytes / s * 1e-9 : 0);
  return out.str();
}

// On the CPU the renderer gets every core, so the hand-coded opts may add THREAD.
KernelCompiler::KernelCompiler(std::shared_ptr<Device> device)
    : device_(std::move(device)),
      renderer_(device_->fingerprint().name == "cpu" ? Renderer::cpu(device_->capabilities().compute_units)
                                                     : renderer_for(*device_)) {}

std::shared_ptr<Program> KernelCompiler::program(const std::string& source, const std::string& entry) const {
  // Programs outlive the compiler that made them; the key names the device so two CPU devices
  // never share one (there is one CPU device per process, but the cache should not rely on it).
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<Program>> cache;
  const std::string key = device_->name() + '\0' + entry + '\0' + source;
  std::lock_guard lock(mutex);
  std::shared_ptr<Program>& p = cache[key];
  if (!p) p = device_->compile(source, entry);
  return p;
}

CompiledKernel KernelCompiler::compile(const UOp& ast, const KernelOpts& opts) const {
  return compile_batch({{ast, opts}}).at(0);
}

std::vector<CompiledKernel> KernelCompiler::compile_batch(
    const std::vector<std::pair<UOp, KernelOpts>>& kernels) const {
  // CPU kernels share one translation unit; the GPU dialects' preludes (includes, macros) are not
  // split apart here, so each of their kernels compiles alone.
  const bool one_unit = renderer_.device == "CPU" && kernels.size() > 1;
  std::vector<CompiledKernel> out;
  std::string prelude, kernels_text;
  std::set<std::string> declared;
  for (size_t i = 0; i < kernels.size(); i++) {
    const Kernel k = optimize_kernel(kernels[i].first, renderer_, kernels[i].second);
    UOp optimized = k.get_optimized_ast();
    if (one_unit) {
      KernelInfo info = kernel_info(optimized);
      info.name += "_b" + std::to_string(i);
      optimized = with_kernel_info(optimized, info);
    }
    CompiledKernel c;
    c.name = k.name();
    c.shape = k.colored_shape();
    c.applied_opts = k.applied_opts();
    c.cost = kernel_cost(kernels[i].first);
    c.device = device_;
    try {
      c.spec = get_program(optimized, renderer_);
    } catch (const CodegenError& e) {
      throw CodegenError(c.name + " with opts \"" + to_string(c.applied_opts) + "\": " + e.what());
    }
    if (one_unit) {
      const size_t start = c.spec.source.find("void " + c.spec.name + "(");
      if (start == std::string::npos)
        throw CodegenError("the source of " + c.spec.name + " does not define it");
      for (std::string& item : top_level_items(std::string_view(c.spec.source).substr(0, start)))
        if (declared.insert(item).second) prelude += item;
      kernels_text += c.spec.source.substr(start) + "\n";
    }
    out.push_back(std::move(c));
  }
  // A batch's unit is compiled (and cached on disk by the compiler) but not kept in the
  // in-process cache: its key would hold the whole unit once per kernel.
  for (CompiledKernel& c : out)
    c.program = one_unit ? std::shared_ptr<Program>(device_->compile(prelude + kernels_text, c.spec.name))
                         : program(c.spec.source, c.spec.name);
  return out;
}

}  // namespace tunebed
