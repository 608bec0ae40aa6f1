// Every parsable kernel of tests/data/sops-sample.txt, in its unoptimized form (GLOBAL and REDUCE
// axes), rendered, compiled by clang, run on seeded random inputs and checked against the AST
// interpreter's exact run (kernel_check.hpp); and every rendered source compiles without warnings. The kernels codegen refuses
// are counted by reason (only local memory, which the CPU lacks, may be refused); none may fail
// to compile or compute a wrong answer.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

#include "core/engine/compiled_program.hpp"
#include "core/ir/text.hpp"
#include "core/ir/tinygrad_text.hpp"
#include "core/opt/heuristic.hpp"
#include "tests/codegen/clang_check.hpp"
#include "tests/codegen/kernel_check.hpp"
#include "tests/data/sops_sample.hpp"

namespace tunebed {
namespace {

struct Tally {
  int matched = 0, unparsable = 0;
  std::map<std::string, int> refused;
  std::vector<std::string> sources;
  std::string summary(size_t lines) const {
    std::string out = "parsed " + std::to_string(lines - unparsable) + " of " + std::to_string(lines) +
                      ", matched " + std::to_string(matched) + "\n";
    for (const auto& [why, count] : refused) out += "  refused x" + std::to_string(count) + ": " + why + "\n";
    return out;
  }
};

// Compiles and runs `ast` on seeded random inputs and checks it against the exact run of `plain`
// (the same kernel unoptimized).
void check_kernel(const UOp& ast, const UOp& plain, uint32_t seed, Tally& tally) {
  static const std::shared_ptr<Device> device = open_device("cpu");
  std::optional<CompiledProgram> exe;
  try {
    exe = compile_program(ast, device);
  } catch (const CodegenError& e) {
    tally.refused[e.what()]++;
    return;
  } catch (const CompileError& e) {
    ADD_FAILURE() << e.what() << "\n" << e.numbered_source();
    return;
  }
  tally.sources.push_back(exe->spec.source);
  const std::vector<HostBuffer> inputs = testing::random_buffers(plain, seed);
  // Each variable at its minimum (the runner's and the interpreter's default, said here): the
  // dataset sized the buffers for the value it ran with.
  VarVals var_vals;
  for (const UOp& v : exe->spec.vars) var_vals[v.arg().as_tuple().at(0).as_string()] = v.arg().as_tuple().at(1).as_int();
  const std::string wrong = testing::wrong_output(plain, inputs, exe->run_on_copies(inputs, var_vals), var_vals);
  if (!wrong.empty()) ADD_FAILURE() << wrong << "\n" << exe->spec.source;
  const bool ok = wrong.empty();
  tally.matched += ok;
}

// Every parsable sample kernel, passed to `check` with its line number; the rest counted.
template <class F>
Tally for_each_sample(F check) {
  const std::vector<std::string> lines = testing::sops_sample_lines();
  EXPECT_GT(lines.size(), 150u);
  Tally tally;
  for (size_t n = 0; n < lines.size(); n++) {
    SCOPED_TRACE("sops-sample.txt line " + std::to_string(n + 1));
    UOp ast;
    try {
      ast = parse_tinygrad_uop(lines[n]);
    } catch (const ParseError&) {
      tally.unparsable++;  // image dtypes: tunebed has none
      continue;
    }
    check(ast, static_cast<uint32_t>(n), tally);
  }
  std::printf("%s", tally.summary(lines.size()).c_str());
  // Refusals are for local memory only (the CPU has none); the rest run and match.
  for (const auto& [why, count] : tally.refused)
    EXPECT_NE(why.find("local memory"), std::string::npos) << why;
  EXPECT_EQ(testing::clang_warnings(tally.sources), "");
  return tally;
}

TEST(CodegenSamples, NoOptsKernelsCompileAndMatchTheAstInterpreter) {
  Tally t = for_each_sample([](const UOp& ast, uint32_t seed, Tally& tally) {
    UOp plain = with_kernel_info(ast, no_opts_info(ast));
    check_kernel(plain, plain, seed, tally);
  });
  EXPECT_GE(t.matched, 140) << t.summary(166);
}

// The same kernels through core/opt's heuristics (hand-coded opts and THREAD for a 4-core CPU):
// codegen on the optimizer's real output.
TEST(CodegenSamples, HeuristicallyOptimizedKernelsMatchTheAstInterpreter) {
  Tally t = for_each_sample([](const UOp& ast, uint32_t seed, Tally& tally) {
    UOp plain = with_kernel_info(ast, no_opts_info(ast));
    check_kernel(get_optimized_ast(ast.with_arg(Arg(None{})), Renderer::cpu(4)), plain, seed, tally);
  });
  EXPECT_GE(t.matched, 140) << t.summary(166);
}

}  // namespace
}  // namespace tunebed
