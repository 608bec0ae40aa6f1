// Importing a corpus (core/imports/corpus.hpp) on the checked-in sample of tinygrad's dataset.
#include "core/imports/corpus.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "core/ir/text.hpp"
#include "core/ir/tinygrad_text.hpp"
#include "core/shape/shapetracker.hpp"
#include "tests/data/sops_sample.hpp"

namespace tunebed::imports {
namespace {

using testing::sops_sample_path;

TEST(Corpus, SampleCountsAddUpAndOnlyImagesFail) {
  const std::vector<std::string> lines = read_lines(sops_sample_path());
  ASSERT_GT(lines.size(), 150u);
  CorpusImport r = import_lines(lines);
  EXPECT_EQ(r.lines, static_cast<int>(lines.size()));
  EXPECT_EQ(static_cast<int>(r.kernels.size()) + r.duplicates + static_cast<int>(r.failures.size()), r.lines);
  EXPECT_GT(r.duplicates, 0);
  int image_lines = 0;
  for (const std::string& l : lines) image_lines += l.find("dtypes.image") != std::string::npos;
  EXPECT_GT(image_lines, 0);
  for (const CorpusFailure& f : r.failures) {
    EXPECT_EQ(f.message.rfind("column ", 0), 0u) << f.message;
    EXPECT_NE(lines[f.line - 1].find("dtypes.image"), std::string::npos) << f.line << ": " << f.message;
    EXPECT_NE(f.message.find("image dtypes"), std::string::npos) << f.message;
  }
  EXPECT_EQ(static_cast<int>(r.failures.size()), image_lines);
}

TEST(Corpus, CanonicalTextReparsesToTheSameUOps) {
  CorpusImport r = import_lines(read_lines(sops_sample_path()));
  ASSERT_FALSE(r.kernels.empty());
  for (const CorpusKernel& k : r.kernels) {
    UOp u = parse_uop(k.text);
    EXPECT_EQ(print_uop(u), k.text) << "line " << k.line;
    EXPECT_EQ(kernel_hash(u), k.hash) << "line " << k.line;
    EXPECT_EQ(u, parse_tinygrad_kernel(read_lines(sops_sample_path())[k.line - 1]).ast) << "line " << k.line;
  }
}

// Lines 1 and 3 of the sample are one kernel (a+b over 3 floats) captured with different opts.
TEST(Corpus, SameKernelWithOtherOptsIsADuplicate) {
  const std::vector<std::string> lines = read_lines(sops_sample_path());
  ASSERT_NE(lines[0], lines[2]);
  ImportedKernel a = parse_tinygrad_kernel(lines[0]), b = parse_tinygrad_kernel(lines[2]);
  EXPECT_EQ(kernel_hash(a.ast), kernel_hash(b.ast));
  EXPECT_EQ(a.tinygrad_opts, "LOCAL:0:3,UPCAST:0:0");
  EXPECT_EQ(b.tinygrad_opts, "UPCAST:0:0");
  CorpusImport r = import_lines({lines[0], lines[1], lines[2]});
  EXPECT_EQ(r.kernels.size(), 2u);
  EXPECT_EQ(r.duplicates, 1);
  EXPECT_EQ(r.kernels[0].line, 1);
  EXPECT_EQ(r.kernels[0].shape, "3 float32");
}

// The opts tinygrad recorded are tuning state, not the kernel: any KernelInfo on any sample line
// leaves the kernel's hash as it was, and comes back as tunebed's opts text.
RC_GTEST_PROP(Corpus, kernel_info_never_changes_the_hash, ()) {
  static const std::vector<std::string> lines = read_lines(sops_sample_path());
  const std::string& line = lines[*rc::gen::inRange<size_t>(0, lines.size())];
  RC_PRE(line.find("dtypes.image") == std::string::npos);
  const std::vector<std::string> names = {"UPCAST", "UNROLL", "LOCAL", "GROUP", "GROUPTOP", "PADTO"};
  const auto opts = *rc::gen::container<std::vector<std::tuple<size_t, int, int>>>(rc::gen::tuple(
      rc::gen::inRange<size_t>(0, names.size()), rc::gen::inRange(0, 6), rc::gen::inRange(0, 33)));
  std::string records, expected;
  for (const auto& [op, axis, arg] : opts) {
    records +=
        "Opt(op=OptOps." + names[op] + ",axis=" + std::to_string(axis) + ",arg=" + std::to_string(arg) + "),";
    expected +=
        (expected.empty() ? "" : ",") + names[op] + ":" + std::to_string(axis) + ":" + std::to_string(arg);
  }
  const std::string head = "UOp(Ops.SINK,dtypes.void,arg=";
  const size_t src = line.find(",src=(");  // a KernelInfo holds no "src=": this ends the SINK's arg
  RC_ASSERT(line.rfind(head, 0) == 0u);
  const std::string relabelled =
      head +
      "KernelInfo(name='test',global_dims=0,local_dims=0,upcasted=0,dont_use_locals=False,"
      "applied_opts=(" +
      records + "),opts_to_apply=None)" + line.substr(src);
  const ImportedKernel k = parse_tinygrad_kernel(relabelled);
  RC_ASSERT(kernel_hash(k.ast) == kernel_hash(parse_tinygrad_kernel(line).ast));
  RC_ASSERT(k.tinygrad_opts == expected);
}

// The sample holds every form the dataset's kernels take, and each of them imports: reductions,
// loads through several views with a mask (padding after a reshape), symbolic (DEFINE_VAR) shapes,
// and constants that are not finite numbers.
TEST(Corpus, SampleImportsEveryKernelForm) {
  int reductions = 0, multi_view_masked = 0, symbolic = 0, inf = 0, minus_inf = 0, nan = 0;
  for (const CorpusKernel& k : import_lines(read_lines(sops_sample_path())).kernels) {
    const UOp ast = parse_uop(k.text);
    bool reduce = false, masked = false, var = false, pinf = false, ninf = false, isnan = false;
    for (const UOp& u : ast.toposort()) {
      reduce = reduce || u.op() == Ops::REDUCE_AXIS;
      if (u.op() == Ops::VIEW) {
        const auto& views = u.arg().as_object<ShapeTracker>().views();
        masked = masked || (views.size() > 1 && std::any_of(views.begin(), views.end(), [](const View& v) {
                              return v.mask().has_value();
                            }));
      }
      if (u.op() == Ops::CONST && u.dtype().is_float()) {
        const double c = u.const_value();
        pinf = pinf || c == std::numeric_limits<double>::infinity();
        ninf = ninf || c == -std::numeric_limits<double>::infinity();
        isnan = isnan || std::isnan(c);
      }
    }
    var = k.text.find("DEFINE_VAR") != std::string::npos;
    reductions += reduce;
    multi_view_masked += masked;
    symbolic += var;
    inf += pinf;
    minus_inf += ninf;
    nan += isnan;
  }
  EXPECT_GT(reductions, 20);
  EXPECT_GT(multi_view_masked, 5);
  EXPECT_GT(symbolic, 3);
  EXPECT_GT(inf, 0);
  EXPECT_GT(minus_inf, 0);
  EXPECT_GT(nan, 0);
}

TEST(Corpus, MalformedLineFailsNamingItsLineAndToken) {
  const std::vector<std::string> lines = read_lines(sops_sample_path());
  CorpusImport r = import_lines(
      {lines[0], "", "UOp(Ops.SINK,dtypes.void,arg=None,src=(UOp(Ops.FROB,dtypes.void,arg=None,src=()),))"});
  EXPECT_EQ(r.lines, 2);  // the blank line is not a kernel
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0].line, 3);
  EXPECT_NE(r.failures[0].message.find("Ops.FROB"), std::string::npos) << r.failures[0].message;
}

TEST(Corpus, MissingFileIsACorpusError) { EXPECT_THROW(read_lines("/nonexistent/sops.gz"), CorpusError); }

TEST(Corpus, ReadsGzipAndPlainAlike) {
  const std::string plain = sops_sample_path();
  const std::filesystem::path gz = std::filesystem::temp_directory_path() / "tunebed-corpus-test.txt.gz";
  ASSERT_EQ(std::system(("gzip -c '" + plain + "' > '" + gz.string() + "'").c_str()), 0);
  EXPECT_EQ(read_lines(gz.string()), read_lines(plain));
  std::filesystem::remove(gz);
}

}  // namespace
}  // namespace tunebed::imports
