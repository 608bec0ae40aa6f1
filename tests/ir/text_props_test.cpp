// Properties of the text form and of interning over random graphs (gen_uop.hpp).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/ir/text.hpp"
#include "tests/ir/gen_uop.hpp"

namespace tunebed {
namespace {

using testgen::RandomGraph;

RC_GTEST_PROP(TextProps, parse_of_print_is_the_same_node, (const RandomGraph& g)) {
  UOp u = g.build();
  RC_ASSERT(parse_uop(print_uop(u)) == u);
}

RC_GTEST_PROP(TextProps, parse_of_print_prints_the_same_text, (const RandomGraph& g)) {
  std::string text = print_uop(g.build());
  RC_ASSERT(print_uop(parse_uop(text)) == text);
}

// The text and the hash depend on structure alone: a graph dropped and built again out of fresh
// nodes, at other addresses, prints and hashes the same. Dropping it must free every node.
RC_GTEST_PROP(TextProps, print_and_hash_are_the_same_for_a_fresh_build, (const RandomGraph& g)) {
  size_t live = live_uop_count();
  std::string text;
  uint64_t hash;
  {
    UOp u = g.build();
    text = print_uop(u);
    hash = u.hash();
  }
  RC_ASSERT(live_uop_count() == live);
  std::vector<std::unique_ptr<char[]>> move_the_heap;
  for (int i = 0; i < 64; i++)
    move_the_heap.push_back(std::make_unique<char[]>(static_cast<size_t>(i) * 24 + 8));
  UOp again = g.build();
  RC_ASSERT(print_uop(again) == text);
  RC_ASSERT(again.hash() == hash);
}

RC_GTEST_PROP(TextProps, toposort_lists_every_source_before_its_user_once, (const RandomGraph& g)) {
  UOp root = g.build();
  std::vector<UOp> order = root.toposort();
  std::unordered_set<const UOpNode*> seen;
  for (const UOp& u : order) {
    for (const UOp& s : u.src()) RC_ASSERT(seen.count(s.get()) == 1u);
    RC_ASSERT(seen.insert(u.get()).second);
  }
  RC_ASSERT(order.back() == root);
}

}  // namespace
}  // namespace tunebed
