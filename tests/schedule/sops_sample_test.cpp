// tinygrad's dataset kernels (tests/data/sops-sample.txt) run through the AST interpreter: every
// line that parses runs on random inputs without error.
#include <gtest/gtest.h>

#include "core/ir/tinygrad_text.hpp"
#include "core/schedule/ast_interpreter.hpp"
#include "core/tensor/rng.hpp"
#include "tests/data/sops_sample.hpp"
#include "tests/test_scale.hpp"

namespace tunebed {
namespace {

// Both of the interpreter's runs: in the kernel's dtypes (what the scheduler's tests and the
// fuzzers compare with) and exact (what every check compares with). Kernels past the budget (a
// second of the interpreter; a tenth of it under the sanitizers, tests/test_scale.hpp) take only
// the exact run, sampled.
TEST(SopsSample, EveryParsedKernelRunsOnRandomInputs) {
  constexpr int64_t kBudget = testing::scaled(int64_t{1} << 20);
  int lines = 0, parsed = 0, ran = 0, sampled = 0;
  SplitMix64 rng(5);
  for (const std::string& line : testing::sops_sample_lines()) {
    lines++;
    UOp ast;
    try {
      ast = parse_tinygrad_uop(line);
    } catch (const std::exception&) {
      continue;  // the parser's own tests cover what it rejects
    }
    parsed++;
    SCOPED_TRACE("sops-sample.txt line " + std::to_string(lines));
    std::vector<HostBuffer> data;
    for (const auto& [dtype, size] : ast_buffer_specs(ast)) {
      HostBuffer b(dtype.is_void() ? dtypes::uint8 : dtype, std::max<int64_t>(size, 1));
      for (int64_t k = 0; k < b.numel(); k++)
        dtype.is_float() ? b.set_float(k, static_cast<double>(rng.next() % 2001) / 1000 - 1)
                         : b.set_int(k, static_cast<int64_t>(rng.next() % 9) - 4);
      data.push_back(std::move(b));
    }
    try {
      expect_kernel_ast(ast, data, {}, kBudget);
      if (ast_iterations(ast) <= kBudget) {
        std::vector<HostBuffer*> ptrs;
        for (HostBuffer& b : data) ptrs.push_back(&b);
        run_kernel_ast(ast, ptrs);
      } else {
        sampled++;
      }
      ran++;
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
  }
  RecordProperty("parsed", parsed);
  RecordProperty("ran", ran);
  std::cout << "sops-sample: " << lines << " lines, " << parsed << " parsed, " << ran << " ran ("
            << sampled << " past " << kBudget << " iterations: exact run only, sampled)\n";
  EXPECT_GT(parsed, 100);
  EXPECT_EQ(ran, parsed);
}

}  // namespace
}  // namespace tunebed
