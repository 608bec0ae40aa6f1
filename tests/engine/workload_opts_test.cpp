// Every workload of the library, at two shapes each (odd and prime sizes among them), computes the
// reference interpreter's answer when every kernel of its schedule runs compiled with no opts,
// with the hand-coded opts, and with 100 random legal opt sequences (core/opt/actions.hpp; 10 under
// the sanitizers, tests/test_scale.hpp).
//
// Compiling dominates: a workload's kernels times 102 variants is thousands of C functions. So
// identical opt sequences are compiled once, and all the variants of a workload are rendered into
// one translation unit (KernelCompiler::compile_batch), one clang run per workload.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <map>
#include <set>

#include "core/engine/check.hpp"
#include "core/engine/compiled_kernel.hpp"
#include "core/opt/actions.hpp"
#include "core/opt/heuristic.hpp"
#include "core/reference/reference.hpp"
#include "core/schedule/ast_interpreter.hpp"
#include "core/schedule/schedule.hpp"
#include "core/tensor/workloads.hpp"
#include "tests/test_scale.hpp"

namespace tunebed {
namespace {

constexpr int64_t kRandomSequences = testing::scaled(100);

// Two specs per workload; WorkloadLibraryIsCovered keeps this list complete.
const std::vector<std::string>& specs() {
  static const std::vector<std::string> s = {
      "attention:B=1,H=2,S=5,D=3",
      "attention:B=1,H=1,S=7,D=4,causal=1",
      "batched_matmul:B=2,M=3,N=5,K=7",
      "batched_matmul:B=3,M=4,N=8,K=4",
      "conv2d:C=2,H=5,W=5,K=3",
      "conv2d:N=2,C=4,H=6,W=7,K=2,R=1,S=3,stride=2,padding=0",
      "depthwise_conv:C=3,H=5,W=5",
      "depthwise_conv:N=2,C=4,H=8,W=6,stride=2",
      "elementwise:N=13,length=5",
      "elementwise:N=64,length=3,dtype=int32",
      "layernorm:M=3,N=7",
      "layernorm:M=8,N=16",
      "matmul:M=7,N=5,K=13",
      "matmul:M=16,N=16,K=16",
      "max:M=5,N=7,axis=rows",
      "max:M=11,N=4,axis=full",
      "mlp:B=3,IN=5,HIDDEN=7,OUT=2",
      "mlp:B=4,IN=8,HIDDEN=16,OUT=4",
      "softmax:M=3,N=11",
      "softmax:M=8,N=16",
      "sum:M=9,N=7,axis=cols",
      "sum:M=16,N=17,axis=full",
      "transpose:M=5,N=3",
      "transpose:M=16,N=32",
  };
  return s;
}

TEST(EngineWorkloads, WorkloadLibraryIsCovered) {
  std::map<std::string, int> count;
  for (const std::string& s : specs()) count[s.substr(0, s.find(':'))]++;
  for (const WorkloadDef& def : workload_library())
    EXPECT_GE(count[def.name], 2) << def.name << " needs two specs";
}

BufferData deep_copy(const BufferData& b) {
  BufferData out;
  for (const auto& [id, buf] : b) out[id] = std::make_shared<HostBuffer>(*buf);
  return out;
}

// RapidCheck with at most `cases` cases and no shrinking: one case here compiles and runs
// thousands of kernels, and shrinking a seed finds nothing smaller. RC_PARAMS still sets the seed,
// and a failure prints it.
template <class Property>
void check_property(Property property, int cases) {
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  params.maxSuccess = std::min(params.maxSuccess, cases);
  params.disableShrinking = true;
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  rc::detail::TestMetadata metadata;
  metadata.id = std::string(info->test_suite_name()) + "/" + info->name();
  metadata.description = info->name();
  const rc::detail::TestResult result = rc::detail::checkTestable(property, metadata, params);
  if (!result.template is<rc::detail::SuccessResult>()) {
    std::ostringstream message;
    rc::detail::printResultMessage(result, message);
    FAIL() << message.str() << "\n(seed " << params.seed << ": rerun with RC_PARAMS=\"seed=" << params.seed
           << "\")";
  }
}

// Runs the schedule with kernel i's compiled variant pick(i), and compares with the reference.
struct WorkloadUnderTest {
  Workload workload;
  Schedule schedule;
  Expected want;
  std::vector<UOp> kernels;  // the schedule's kernel ASTs, in order

  explicit WorkloadUnderTest(const std::string& spec)
      : workload(make_workload(spec)), schedule(create_schedule({workload.output.uop()})) {
    want = expect_output(schedule, workload.output.buffers());
    for (const ScheduleItem& item : schedule.items)
      if (!item.is_copy()) kernels.push_back(item.ast);
  }

  Verdict run(const std::function<const CompiledKernel&(size_t)>& pick) const {
    BufferData data = deep_copy(workload.output.buffers());
    size_t index = 0;
    run_schedule(schedule, data,
                 [&](const ScheduleItem&, const std::vector<HostBuffer*>& bufs) { pick(index++).run(bufs); });
    return check_output(read_output(schedule.outputs.at(0), data), want);
  }
};

class EngineWorkloadOpts : public ::testing::TestWithParam<std::string> {};

TEST_P(EngineWorkloadOpts, matches_the_reference_with_no_hand_coded_and_random_legal_opts) {
  const WorkloadUnderTest w(GetParam());
  const KernelCompiler compiler(open_device("cpu"));
  check_property(
      [&] {
        const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
        // Per kernel: the opt sequences to try (none, hand-coded, random), deduplicated.
        std::vector<std::vector<std::vector<Opt>>> sequences(w.kernels.size());
        std::vector<std::pair<UOp, KernelOpts>> batch;
        std::vector<std::map<std::string, size_t>> slot(w.kernels.size());  // opts text -> batch index
        for (size_t i = 0; i < w.kernels.size(); i++) {
          const Kernel k(w.kernels[i], compiler.renderer());
          sequences[i] = {{}, hand_coded_optimizations(k)};
          for (int j = 0; j < kRandomSequences; j++) sequences[i].push_back(random_opts(k, seed + j));
          for (const std::vector<Opt>& opts : sequences[i])
            if (slot[i].emplace(to_string(opts), batch.size()).second)
              batch.emplace_back(w.kernels[i], KernelOpts::given(opts));
        }
        const std::vector<CompiledKernel> compiled = compiler.compile_batch(batch);
        for (size_t v = 0; v < sequences.at(0).size(); v++) {
          const auto pick = [&](size_t i) -> const CompiledKernel& {
            return compiled.at(slot[i].at(to_string(sequences[i][v])));
          };
          const Verdict verdict = w.run(pick);
          if (!verdict.ok) {
            std::string opts;
            for (size_t i = 0; i < w.kernels.size(); i++)
              opts +=
                  "\n  kernel " + std::to_string(i) + " " + pick(i).name + ": " + to_string(sequences[i][v]);
            RC_FAIL(GetParam() + ", variant " + std::to_string(v) + " (0: none, 1: hand-coded, else random " +
                    "seed + " + std::to_string(static_cast<int>(v) - 2) + "): " + verdict.message + opts);
          }
        }
        RC_TAG(w.kernels.size() == 1 ? "one kernel" : "several kernels");
      },
      1);
}

INSTANTIATE_TEST_SUITE_P(Library, EngineWorkloadOpts, ::testing::ValuesIn(specs()),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           std::string name;
                           for (char c : p.param)
                             name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

}  // namespace
}  // namespace tunebed
