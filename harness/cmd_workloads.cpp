// `tunebed workloads`: the workload library, with each workload's parameters and defaults.
#include <iostream>
#include <string>
#include <vector>

#include "core/tensor/workloads.hpp"
#include "harness/cli.hpp"

namespace tunebed::cli {
namespace {

std::string dtype_list(const WorkloadDef& def) {
  std::string out;
  for (size_t k = 0; k < def.dtypes.size(); k++) out += (k ? ", " : "") + to_string(def.dtypes[k]);
  return out;
}

void print_one(const WorkloadDef& def, bool detailed) {
  std::cout << def.name << std::string(def.name.size() < 16 ? 16 - def.name.size() : 1, ' ') << def.summary
            << "\n";
  if (!detailed) {
    std::string defaults;
    for (const WorkloadParam& p : def.params) defaults += " " + p.name + "=" + p.default_value;
    std::cout << "               " << defaults << "   (dtypes: " << dtype_list(def) << ")\n";
    return;
  }
  for (const WorkloadParam& p : def.params) {
    const std::string help = p.name == "dtype" ? "one of " + dtype_list(def) : p.help;
    std::cout << "  " << p.name << "=" << p.default_value << (help.empty() ? "" : "  " + help) << "\n";
  }
}

int run(const std::vector<std::string>& args) {
  CommandLine cl{
      .synopsis = "tunebed workloads [NAME]",
      .description =
          "List the workload library: each workload, what it computes, its parameters with their\n"
          "defaults and the dtypes it takes; or describe the workload NAME. A workload is named by a\n"
          "spec, `name:param=value,...`; parameters left out take their defaults.",
  };
  cl.options.add_options()("name", po::value<std::string>(), "describe only this workload");
  cl.positional.add("name", 1);
  cl.examples = {"tunebed workloads", "tunebed workloads conv2d",
                 "tunebed run matmul:M=64,N=64,K=64 --reference"};
  auto vm = parse(cl, args);
  if (!vm) return 0;

  const auto& lib = workload_library();
  if (vm->count("name")) {
    const std::string& name = (*vm)["name"].as<std::string>();
    for (const WorkloadDef& def : lib)
      if (def.name == name) {
        print_one(def, true);
        return 0;
      }
    std::string names;
    for (const WorkloadDef& def : lib) names += (names.empty() ? "" : ", ") + def.name;
    throw UsageError("unknown workload '" + name + "' (valid: " + names + ")");
  }
  for (const WorkloadDef& def : lib) print_one(def, false);
  return 0;
}

const Registrar reg{"workloads", "list the builtin workloads with their parameters and defaults", run};

}  // namespace
}  // namespace tunebed::cli
