// tinygrad's dataset kernels (tests/data/sops-sample.txt) run through the AST interpreter: every
// line that parses runs on random inputs without error.
#include <gtest/gtest.h>

#include "core/ir/tinygrad_text.hpp"
#include "core/schedule/ast_interpreter.hpp"
#include "core/tensor/rng.hpp"
#include "tests/data/sops_sample.hpp"

namespace tunebed {
namespace {

TEST(SopsSample, EveryParsedKernelRunsOnRandomInputs) {
  int lines = 0, parsed = 0, ran = 0;
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
    std::vector<HostBuffer*> ptrs;
    for (HostBuffer& b : data) ptrs.push_back(&b);
    try {
      run_kernel_ast(ast, ptrs);
      ran++;
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
  }
  RecordProperty("parsed", parsed);
  RecordProperty("ran", ran);
  std::cout << "sops-sample: " << lines << " lines, " << parsed << " parsed, " << ran << " ran\n";
  EXPECT_GT(parsed, 100);
  EXPECT_EQ(ran, parsed);
}

}  // namespace
}  // namespace tunebed
