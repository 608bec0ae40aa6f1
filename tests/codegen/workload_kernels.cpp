// library_kernels and check_on_device.
#include "tests/codegen/workload_kernels.hpp"

#include <map>
#include <stdexcept>

#include "core/engine/check.hpp"
#include "core/schedule/ast_interpreter.hpp"
#include "core/schedule/schedule.hpp"
#include "core/tensor/workloads.hpp"
#include "tests/codegen/kernel_check.hpp"

namespace tunebed::testing {

namespace {

// Sizes small enough for PoCL and large enough that LOCAL, GROUP and UPCAST have room (powers of
// two, reduce axes of 16 and more), and odd ones where a workload has a natural odd size.
const std::map<std::string, std::string>& small_params() {
  static const std::map<std::string, std::string> params = {
      {"attention", "B=1,H=2,S=8,D=16"},     {"batched_matmul", "B=2,M=8,N=16,K=16"},
      {"conv2d", "N=1,C=4,H=8,W=8,K=8"},     {"depthwise_conv", "N=1,C=8,H=8,W=8"},
      {"elementwise", "N=1024,length=4"},    {"layernorm", "M=8,N=64"},
      {"matmul", "M=16,N=32,K=64"},          {"max", "M=32,N=64,axis=rows"},
      {"mlp", "B=4,IN=32,HIDDEN=64,OUT=16"}, {"softmax", "M=8,N=64"},
      {"sum", "M=16,N=256,axis=full"},       {"transpose", "M=32,N=16"},
  };
  return params;
}

std::vector<LibraryKernel> kernels_of(const Workload& w) {
  std::vector<LibraryKernel> out;
  const Schedule s = create_schedule({w.output.uop()});
  int n = 0;
  for (const ScheduleItem& item : s.items)
    if (!item.is_copy()) out.push_back({w.spec + "#" + std::to_string(n++), item.ast.with_arg(Arg(None{}))});
  return out;
}

const std::string& small_params_of(const WorkloadDef& def) {
  auto it = small_params().find(def.name);
  if (it == small_params().end())
    throw std::logic_error("workload " + def.name +
                           " has no small size in tests/codegen/workload_kernels.cpp");
  return it->second;
}

}  // namespace

std::vector<LibraryKernel> library_float_kernels_in(DType dtype) {
  std::vector<LibraryKernel> out;
  for (const WorkloadDef& library_def : workload_library()) {
    if (std::find(library_def.dtypes.begin(), library_def.dtypes.end(), dtypes::float16) ==
        library_def.dtypes.end())
      continue;
    WorkloadDef def = library_def;
    if (std::find(def.dtypes.begin(), def.dtypes.end(), dtype) == def.dtypes.end())
      def.dtypes.push_back(dtype);
    // The spec's parameters over the defaults, in definition order (make_workload's canonical spec).
    std::map<std::string, std::string> values;
    for (const WorkloadParam& p : def.params) values[p.name] = p.default_value;
    const std::string& small = small_params_of(def);
    for (size_t at = 0; at < small.size();) {
      const size_t comma = std::min(small.find(',', at), small.size()), eq = small.find('=', at);
      values[small.substr(at, eq - at)] = small.substr(eq + 1, comma - eq - 1);
      at = comma + 1;
    }
    values["dtype"] = to_string(dtype);
    std::string spec = def.name + ":";
    for (size_t k = 0; k < def.params.size(); k++)
      spec += (k ? "," : "") + def.params[k].name + "=" + values[def.params[k].name];
    const WorkloadParams params(def, values, 0);
    const Tensor output = def.build(params);
    for (LibraryKernel& k : kernels_of(Workload{spec, params.inputs(), output})) out.push_back(std::move(k));
  }
  return out;
}

std::vector<LibraryKernel> library_kernels(DType dtype) {
  std::vector<LibraryKernel> out;
  for (const WorkloadDef& def : workload_library()) {
    const std::string& small = small_params_of(def);
    if (std::find(def.dtypes.begin(), def.dtypes.end(), dtype) == def.dtypes.end()) continue;
    for (LibraryKernel& k : kernels_of(make_workload(def.name + ":" + small + ",dtype=" + to_string(dtype))))
      out.push_back(std::move(k));
  }
  return out;
}

UOp no_opts(const UOp& ast) { return with_kernel_info(ast, no_opts_info(ast)); }

std::string opts_text(const UOp& optimized) {
  std::string out;
  for (const Opt& o : kernel_info(optimized).applied_opts) out += (out.empty() ? "" : " ") + to_string(o);
  return out.empty() ? "(none)" : out;
}

std::string check_on_device(const UOp& optimized, const UOp& plain, const std::shared_ptr<Device>& device,
                            const Renderer& renderer, uint32_t seed) {
  std::optional<CompiledProgram> exe;
  try {
    exe = compile_program(optimized, device, renderer);
  } catch (const CodegenError& e) {
    return std::string("refused: ") + e.what();
  } catch (const CompileError& e) {
    return std::string(e.what()) + "\n" + e.numbered_source();
  }
  const std::vector<HostBuffer> inputs = random_buffers(plain, seed);
  if (std::string wrong = wrong_output(plain, inputs, exe->run_on_copies(inputs)); !wrong.empty())
    return wrong + "\n" + exe->spec.source;
  return "";
}

}  // namespace tunebed::testing
