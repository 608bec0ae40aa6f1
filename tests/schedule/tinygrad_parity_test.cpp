// The kernel ASTs tunebed schedules equal tinygrad's, node for node: tinygrad_asts.txt holds what
// tinygrad 7b16fadd schedules for the same graphs (written by tinygrad_asts.py), parsed here with
// parse_tinygrad_uop.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <map>

#include "core/ir/text.hpp"
#include "core/ir/tinygrad_text.hpp"
#include "core/rewrite/graph_rewrite.hpp"
#include "core/schedule/schedule.hpp"
#include "core/tensor/tensor.hpp"

namespace tunebed {
namespace {

Tensor E(Shape s) { return Tensor::empty(std::move(s)); }

// name -> tinygrad's kernel ASTs, in schedule order
std::map<std::string, std::vector<UOp>> tinygrad_asts() {
  const char* root = std::getenv("TUNEBED_SOURCE_DIR");
  std::ifstream f(std::string(root ? root : ".") + "/tests/schedule/tinygrad_asts.txt");
  EXPECT_TRUE(f.good()) << "tests/schedule/tinygrad_asts.txt not found (set TUNEBED_SOURCE_DIR)";
  std::map<std::string, std::vector<UOp>> out;
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t tab = line.find('\t');
    out[line.substr(0, line.find(' '))].push_back(parse_tinygrad_uop(line.substr(tab + 1)));
  }
  return out;
}

// tinygrad keeps a float constant's arg as a Python float (double); tunebed's Tensor rounds it
// to the constant's dtype (core/tensor/README.md). Round tinygrad's the same way to compare.
UOp round_float_consts(const UOp& ast) {
  static const PatternMatcher pm({
      {"round-float-const", UPat::cvar("c"),
       [](const Match& m) -> UOp {
         const UOp& c = m["c"];
         if (!c.dtype().is_float()) return {};
         const double r = round_float(c.arg().as_number(), c.dtype());
         return r == c.arg().as_number() ? UOp{} : c.with_arg(r);
       }},
  });
  return graph_rewrite(ast, pm);
}

TEST(TinygradParity, EveryKernelAstEqualsTinygrads) {
  const std::map<std::string, std::function<Tensor()>> graphs = {
      {"add_const", [] { return E({16}) + 1; }},
      {"pad_add",
       [] {
         return E({4, 4}).pad({{1, 1}, {0, 0}}) + 1;
       }},
      {"matmul",
       [] {
         return E({8, 16}).matmul(E({16, 32}));
       }},
      {"sum_axis1",
       [] {
         return E({8, 16}).sum(1);
       }},
      {"softmax",
       [] {
         return E({8, 16}).softmax(-1);
       }},
      {"permute_contig",
       [] {
         return E({4, 6}).permute({1, 0}).contiguous();
       }},
      {"conv2d",
       [] {
         return E({1, 3, 8, 8}).conv2d(E({4, 3, 3, 3}));
       }},
  };
  const auto want = tinygrad_asts();
  ASSERT_EQ(want.size(), graphs.size());
  for (const auto& [name, build] : graphs) {
    SCOPED_TRACE(name);
    const Schedule s = create_schedule({build().uop()});
    const std::vector<UOp>& tg = want.at(name);
    ASSERT_EQ(s.items.size(), tg.size());
    for (size_t i = 0; i < tg.size(); i++) {
      const UOp expected = round_float_consts(tg[i]);
      EXPECT_EQ(s.items[i].ast, expected) << "kernel " << i << "\ntinygrad:\n"
                                          << print_uop(expected) << "tunebed:\n"
                                          << print_uop(s.items[i].ast);
    }
  }
}

}  // namespace
}  // namespace tunebed
