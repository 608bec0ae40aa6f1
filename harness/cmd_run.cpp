// `tunebed run WORKLOAD --reference`: evaluates a workload with the reference interpreter, and with
// --save writes every input and the output as .npy files for NumPy to check. The compiled path
// (schedule, optimize, render, compile, run) joins here with the CPU backend.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "core/ir/npy.hpp"
#include "core/reference/reference.hpp"
#include "core/tensor/graph.hpp"
#include "core/tensor/workloads.hpp"
#include "harness/cli.hpp"

namespace tunebed::cli {
namespace {

std::string format_double(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

void save(const std::filesystem::path& dir, const std::string& name, const Shape& shape,
          const HostBuffer& data) {
  const std::string path = (dir / (name + ".npy")).string();
  write_npy(path, shape, data);
  std::cout << "saved     " << path << "\n";
}

int run(const std::vector<std::string>& args) {
  CommandLine cl{
      .synopsis = "tunebed run WORKLOAD --reference [--seed N] [--save DIR]",
      .description =
          "Evaluate the workload WORKLOAD (a spec such as matmul:M=512,N=512,K=512,dtype=float32; see\n"
          "`tunebed workloads`) on seeded random inputs with the reference interpreter, and print its\n"
          "output's shape, dtype and checksums. With --save, write each input and the output to DIR as\n"
          ".npy files (NumPy format 1.0, little-endian, C order).\n"
          "Only the reference path exists until the CPU backend lands, so --reference is required.",
  };
  cl.options.add_options()("workload", po::value<std::string>()->required(), "the workload spec")(
      "reference", po::bool_switch(), "evaluate with the reference interpreter (required for now)")(
      "seed", po::value<uint64_t>()->default_value(0), "seed of the random inputs")(
      "save", po::value<std::string>(), "write the inputs and the output as .npy files into this directory");
  cl.positional.add("workload", 1);
  cl.examples = {"tunebed run matmul:M=64,N=64,K=64 --reference",
                 "tunebed run conv2d:dtype=float16 --reference --seed 3 --save /tmp/conv"};
  auto vm = parse(cl, args);
  if (!vm) return 0;
  if (!(*vm)["reference"].as<bool>())
    throw UsageError(
        "only the reference interpreter can run workloads until the CPU backend lands; pass --reference");

  Workload w = [&] {
    try {
      return make_workload((*vm)["workload"].as<std::string>(), (*vm)["seed"].as<uint64_t>());
    } catch (const WorkloadError& e) {
      throw UsageError(e.what());
    }
  }();
  std::filesystem::path dir;
  if (vm->count("save")) {
    dir = (*vm)["save"].as<std::string>();
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec || !std::filesystem::is_directory(dir))
      throw UsageError("cannot create directory '" + dir.string() + "' for --save");
  }

  std::cout << "workload  " << w.spec << "\nbackend   reference\n";
  for (const auto& [name, t] : w.inputs)
    std::cout << "input     " << name << " " << shape_to_string(t.shape()) << " " << to_string(t.dtype())
              << "\n";
  const auto start = std::chrono::steady_clock::now();
  const reference::Array out = reference::evaluate(w.output.uop(), w.output.buffers());
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  double sum = 0, lo = INFINITY, hi = -INFINITY;
  for (int64_t k = 0; k < out.numel(); k++) {
    const double v = out.as_double(k);
    sum += v, lo = std::min(lo, v), hi = std::max(hi, v);
  }
  std::cout << "output    " << shape_to_string(out.shape) << " " << to_string(out.dtype) << "\n"
            << "checksum  sum=" << format_double(sum) << " min=" << format_double(lo)
            << " max=" << format_double(hi) << "\n"
            << "time      " << format_double(ms) << " ms\n";
  if (vm->count("save")) {
    for (auto& [name, t] : w.inputs) save(dir, name, t.shape(), t.data());
    save(dir, "output", out.shape, reference::to_host(out));
  }
  return 0;
}

const Registrar reg{"run", "evaluate a workload (with --reference: the reference interpreter)", run};

}  // namespace
}  // namespace tunebed::cli
