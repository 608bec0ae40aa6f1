// Fuzzes the optimizer's action space on the workload library: the fuzzer's bytes choose a
// workload at small shapes (every size parameter 1..8), one of its kernels, and a sequence of
// arbitrary opts (any OptOp, axis and amount, legal or not). Each opt is applied in turn:
//   - an illegal one must be refused with KernelOptError and leave the kernel as it was, and
//     why_illegal, asked first, must give the same verdict and the same message;
//   - the kernel after the legal ones must code generate, compile, and compute on seeded inputs
//     what the AST interpreter computes for the unoptimized kernel (core/schedule/ast_interpreter).
// Any other exception, a changed kernel after a refusal, or a wrong value is a finding.
#include <cctype>
#include <sstream>

#include "core/engine/check.hpp"
#include "core/opt/kernel.hpp"
#include "core/schedule/ast_interpreter.hpp"
#include "core/schedule/schedule.hpp"
#include "core/tensor/workloads.hpp"
#include "fuzz/fuzz_support.hpp"

namespace {

using namespace tunebed;

// "name:M=3,N=5,dtype=float32": size parameters (one capital letter, as M, N, K, C, H) small,
// the others at their defaults, a dtype the workload is meant for.
std::string small_spec(FuzzedDataProvider& fdp) {
  const std::vector<WorkloadDef>& lib = workload_library();
  const WorkloadDef& def = lib[fdp.ConsumeIntegralInRange<size_t>(0, lib.size() - 1)];
  std::string spec = def.name + ":";
  for (const WorkloadParam& p : def.params) {
    if (p.name == "dtype") continue;
    if (p.name.size() == 1 && std::isupper(static_cast<unsigned char>(p.name[0])))
      spec += p.name + "=" + std::to_string(fdp.ConsumeIntegralInRange<int>(1, 8)) + ",";
  }
  return spec +
         "dtype=" + to_string(def.dtypes[fdp.ConsumeIntegralInRange<size_t>(0, def.dtypes.size() - 1)]);
}

// Any opt, legal or not: the op, an axis in [-1, 6] or none, and an amount among those search
// tries and some it never does (0 is the whole axis, 1 and 7 are odd ones out).
Opt random_opt(FuzzedDataProvider& fdp) {
  static constexpr int kAmounts[] = {0, 2, 3, 4, 1, 5, 7, 8, 16, 32};
  const auto op = static_cast<OptOps>(fdp.ConsumeIntegralInRange<int>(0, static_cast<int>(OptOps::THREAD)));
  Opt opt{op, std::nullopt, std::monostate{}};
  if (op == OptOps::NOLOCALS) return opt;
  if (fdp.ConsumeIntegralInRange<int>(0, 15) != 0) opt.axis = fdp.ConsumeIntegralInRange<int>(-1, 6);
  if (op == OptOps::TC)
    opt.arg = TCArg{fdp.ConsumeIntegralInRange<int>(-1, 2), fdp.ConsumeIntegralInRange<int>(0, 2),
                    fdp.ConsumeIntegralInRange<int>(1, 2)};
  else
    opt.arg = kAmounts[fdp.ConsumeIntegralInRange<size_t>(0, std::size(kAmounts) - 1)];
  return opt;
}

std::string describe(const std::string& spec, const UOp& ast, const std::vector<Opt>& tried,
                     const std::vector<Opt>& applied) {
  std::ostringstream out;
  out << "workload " << spec << ", kernel " << kernel_hash(ast) << "\ntried   [" << to_string(tried)
      << "]\napplied [" << to_string(applied) << "]\n"
      << print_uop(ast);
  return out.str();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static auto& cache =
      *new fuzz::ProgramCache;  // never destroyed: its UOps outlive the intern table at exit
  FuzzedDataProvider fdp(data, size);
  const std::string spec = small_spec(fdp);
  Schedule s;
  try {
    s = create_schedule({make_workload(spec).output.uop()});
  } catch (const WorkloadError&) {
    return 0;  // sizes the workload does not accept (a kernel larger than its image)
  }
  std::vector<UOp> kernels;
  for (const ScheduleItem& item : s.items)
    if (!item.is_copy()) kernels.push_back(item.ast);
  if (kernels.empty()) return 0;
  const UOp ast = kernels[fdp.ConsumeIntegralInRange<size_t>(0, kernels.size() - 1)];

  Kernel k(ast, Renderer::cpu(2));
  std::vector<Opt> tried;
  for (int n = fdp.ConsumeIntegralInRange<int>(0, 6); n > 0; n--) {
    tried.push_back(random_opt(fdp));
    const std::vector<std::string> shape_before = k.shape_str();
    const size_t applied_before = k.applied_opts().size();
    const std::optional<std::string> why = k.why_illegal(tried.back());
    try {
      k.apply_opt(tried.back());
      if (why)
        fuzz::report_finding("wrong", "why_illegal refused an opt apply_opt took: " + *why,
                             describe(spec, ast, tried, k.applied_opts()));
    } catch (const KernelOptError& e) {
      if (k.shape_str() != shape_before || k.applied_opts().size() != applied_before)
        fuzz::report_finding("wrong", "a refused opt changed the kernel",
                             describe(spec, ast, tried, k.applied_opts()));
      if (why != std::string(e.what()))
        fuzz::report_finding("wrong", std::string("apply_opt refused an opt with another reason than why_illegal's: ") +
                                          e.what() + " / " + why.value_or("(legal)"),
                             describe(spec, ast, tried, k.applied_opts()));
    } catch (const std::exception& e) {
      fuzz::report_finding("crash", std::string("apply_opt threw a non-KernelOptError: ") + e.what(),
                           describe(spec, ast, tried, k.applied_opts()));
    }
  }

  // Seeded contents in every buffer, outputs too: both runs start from the same bytes.
  const uint64_t seed = fdp.ConsumeIntegral<uint64_t>();
  std::vector<HostBuffer> inputs;
  for (const auto& [dtype, n] : ast_buffer_specs(ast)) {
    inputs.emplace_back(dtype, n);
    fill_random(inputs.back(), seed + inputs.size());
  }
  const std::vector<Expected> want = expect_kernel_ast(ast, inputs);
  std::vector<HostBuffer> got;
  try {
    got = cache.get(k.get_optimized_ast()).run_on_copies(inputs);
  } catch (const std::exception& e) {
    fuzz::report_finding("crash", std::string("legal opts failed to run: ") + e.what(),
                         describe(spec, ast, tried, k.applied_opts()));
  }
  for (size_t i = 0; i < want.size(); i++) {
    const Verdict v = check_output(got.at(i), want[i]);
    if (!v.ok)
      fuzz::report_finding("wrong", "legal opts compute a wrong value",
                           "buffer " + std::to_string(i) + ": " + v.message + "\n" +
                               describe(spec, ast, tried, k.applied_opts()),
                           v.max_error);
  }
  return 0;
}
