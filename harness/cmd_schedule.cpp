// `tunebed schedule WORKLOAD [--json]`: the kernels the scheduler cuts a workload into, each with
// its AST in canonical text, its hash and its buffers, and the kernel count.
#include <iostream>
#include <string>
#include <vector>

#include "core/ir/text.hpp"
#include "core/schedule/schedule.hpp"
#include "core/tensor/workloads.hpp"
#include "harness/cli.hpp"

namespace tunebed::cli {
namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\')
      out += std::string("\\") + ch;
    else if (ch == '\n')
      out += "\\n";
    else
      out += ch;
  }
  return out + "\"";
}

// A buffer as `BUFFER(id) dtype[size] on DEVICE`, its UNIQUE id naming it within this run.
struct BufferInfo {
  int64_t id, size;
  std::string dtype, device;
};
BufferInfo info(const UOp& b) {
  return {b.src(0).arg().as_int(), b.arg().as_int(), std::string(to_string(b.dtype())),
          b.src(1).arg().as_string()};
}

void print_text(const std::string& spec, const Schedule& s) {
  std::cout << "# " << spec << "\n";
  for (size_t k = 0; k < s.items.size(); k++) {
    const ScheduleItem& item = s.items[k];
    std::cout << "kernel " << k << (item.is_copy() ? " (copy)" : "") << "  hash " << kernel_hash(item.ast)
              << "\n";
    for (size_t i = 0; i < item.bufs.size(); i++) {
      const BufferInfo b = info(item.bufs[i]);
      std::cout << "  buf " << i << ": BUFFER(" << b.id << ") " << b.dtype << "[" << b.size << "] on "
                << b.device << (i == 0 ? "  (written)" : "") << "\n";
    }
    std::cout << kernel_text(item.ast) << "\n";
  }
  std::cout << "kernels: " << s.items.size() << "\n";
}

void print_json(const std::string& spec, const Schedule& s) {
  std::cout << "{\"workload\": " << quoted(spec) << ", \"kernels\": [";
  for (size_t k = 0; k < s.items.size(); k++) {
    const ScheduleItem& item = s.items[k];
    std::cout << (k ? ", " : "") << "{\"index\": " << k
              << ", \"copy\": " << (item.is_copy() ? "true" : "false") << ", \"hash\": \""
              << kernel_hash(item.ast) << "\", \"buffers\": [";
    for (size_t i = 0; i < item.bufs.size(); i++) {
      const BufferInfo b = info(item.bufs[i]);
      std::cout << (i ? ", " : "") << "{\"id\": " << b.id << ", \"dtype\": " << quoted(b.dtype)
                << ", \"size\": " << b.size << ", \"device\": " << quoted(b.device) << "}";
    }
    std::cout << "], \"ast\": " << quoted(kernel_text(item.ast)) << "}";
  }
  std::cout << "], \"count\": " << s.items.size() << "}\n";
}

int run(const std::vector<std::string>& args) {
  CommandLine cl{
      .synopsis = "tunebed schedule WORKLOAD [--json]",
      .description =
          "Schedule a workload (see `tunebed workloads`) and print the kernels it becomes, in the\n"
          "order they run: for each, its hash, its buffers (buffer i is DEFINE_GLOBAL i; buffer 0\n"
          "is written) and its AST in canonical text; then the kernel count. --json prints\n"
          "{\"workload\", \"kernels\": [{\"index\", \"copy\", \"hash\", \"buffers\", \"ast\"}], \"count\"}.",
  };
  cl.options.add_options()("workload", po::value<std::string>()->required(),
                           "a workload spec, e.g. softmax:M=64")("json", po::bool_switch(),
                                                                 "print the schedule as JSON");
  cl.positional.add("workload", 1);
  cl.examples = {"tunebed schedule softmax", "tunebed schedule matmul:M=64,N=64,K=64 --json"};
  auto vm = parse(cl, args);
  if (!vm) return 0;

  const Workload w = [&] {
    try {
      return make_workload((*vm)["workload"].as<std::string>());
    } catch (const WorkloadError& e) {
      throw UsageError(e.what());
    }
  }();
  const Schedule s = create_schedule({w.output.uop()});
  if ((*vm)["json"].as<bool>())
    print_json(w.spec, s);
  else
    print_text(w.spec, s);
  return 0;
}

const Registrar reg{"schedule", "cut a workload into kernels and print each kernel's AST and buffers", run};

}  // namespace
}  // namespace tunebed::cli
