// Golden rendered C for four small kernels, compared textually: a change to one must be
// deliberate (rerun with TUNEBED_UPDATE_GOLDEN=1 and say why in the commit). Every golden source
// also compiles with clang -Wall -Werror, and rendering is deterministic.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/codegen/codegen.hpp"
#include "core/ir/text.hpp"
#include "tests/codegen/clang_check.hpp"
#include "tests/codegen/kernels.hpp"

namespace tunebed {
namespace {

std::filesystem::path golden_dir() {
  const char* root = std::getenv("TUNEBED_SOURCE_DIR");
  return std::filesystem::path(root ? root : ".") / "tests" / "codegen" / "golden";
}

struct Golden {
  std::string file;
  UOp ast;
};

std::vector<Golden> goldens() {
  using namespace testing;
  UOp mm = split_axis(split_axis(matmul(8, 8, 8), 1, 4, AxisType::UPCAST), 2, 4, AxisType::UNROLL);
  return {{"add_16.c", elementwise_add(16)},
          {"add_10_padto32.c", with_opts(elementwise_add(10), "PADTO:0:32")},
          {"sum_4x16.c", sum_rows(4, 16)},
          {"matmul_8x8x8_upcast4_unroll4.c", mm}};
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(CodegenGolden, RenderedSourcesMatchTheGoldenFiles) {
  const bool update = std::getenv("TUNEBED_UPDATE_GOLDEN") != nullptr;
  for (const Golden& g : goldens()) {
    const std::string source = get_program(g.ast).source;
    const std::filesystem::path path = golden_dir() / g.file;
    if (update) std::ofstream(path) << source;
    ASSERT_TRUE(std::filesystem::exists(path)) << path << " is missing (TUNEBED_UPDATE_GOLDEN=1 writes it)";
    EXPECT_EQ(source, read_file(path)) << g.file;
  }
}

TEST(CodegenGolden, GoldenKernelsCompileWithoutWarnings) {
  for (const Golden& g : goldens())
    EXPECT_EQ(testing::clang_warnings({get_program(g.ast).source}), "") << g.file;
}

TEST(CodegenGolden, MatmulWithUpcastAndUnrollUsesVectorTypes) {
  const std::string source = get_program(goldens()[3].ast).source;
  EXPECT_NE(source.find("typedef float float4"), std::string::npos) << source;
  EXPECT_NE(source.find("*((float4*)"), std::string::npos) << source;  // a vector load or store
}

// The C renderer reads a gated-off load at index 0 and selects zero after it (no branch per load,
// which clang -O2 once took 15 min over); OpenCL keeps the conditional load the GPU predicates.
TEST(CodegenGolden, GatedLoadsReadUnconditionallyOnlyInC) {
  const UOp padded = goldens()[1].ast;
  const std::string c = get_program(padded).source, cl = get_program(padded, Renderer::opencl()).source;
  EXPECT_EQ(c.find("?*"), std::string::npos) << c;
  EXPECT_NE(c.find("*(data1+(alu"), std::string::npos) << c;
  EXPECT_NE(cl.find("?*"), std::string::npos) << cl;
}

TEST(CodegenGolden, SameAstRendersTheSameText) {
  for (const Golden& g : goldens()) {
    // Through the text form and back: the same AST, built again, renders identically.
    UOp again = parse_uop(print_uop(g.ast));
    EXPECT_EQ(get_program(g.ast).source, get_program(again).source) << g.file;
  }
}

}  // namespace
}  // namespace tunebed
