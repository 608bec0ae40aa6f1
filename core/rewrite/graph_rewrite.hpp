// graph_rewrite: apply a PatternMatcher to every node of a graph until no rule fires, as
// tinygrad's graph_rewrite (uop/ops.py, RewriteContext.unified_rewrite).
//
// Default order (bottom_up = false): a node is rewritten after its sources, so a rule sees
// sources that are already in normal form, and each result is itself rewritten again.
// bottom_up = true (tinygrad's name): a node is rewritten to a fixed point before its sources are
// visited, then its rewritten sources are put back and the new node is visited again.
//
// The walk is iterative (no recursion on graph depth) and memoised per node, so a DAG with
// shared subgraphs is rewritten once per distinct node. A rule set that never reaches a fixed
// point is stopped with RewriteError after a generous number of steps, naming the last rule.
#pragma once

#include <stdexcept>
#include <type_traits>
#include <typeinfo>

#include "core/rewrite/pattern_matcher.hpp"

namespace tunebed {

class RewriteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct RewriteOptions {
  bool bottom_up = false;
  RewriteTrace* trace = nullptr;  // every applied rule, in order
  size_t max_steps = 0;           // 0: 100000 plus 1000 per node of the input graph
};

UOp graph_rewrite(const UOp& root, const PatternMatcher& pm, void* ctx, const std::type_info* ctx_type,
                  const RewriteOptions& opts = {});

inline UOp graph_rewrite(const UOp& root, const PatternMatcher& pm, const RewriteOptions& opts = {}) {
  return graph_rewrite(root, pm, nullptr, nullptr, opts);
}

// With a context object that rules reach through Match::ctx<Ctx>().
template <class Ctx>
  requires(!std::is_same_v<std::remove_cv_t<Ctx>, RewriteOptions>)
UOp graph_rewrite(const UOp& root, const PatternMatcher& pm, Ctx& ctx, const RewriteOptions& opts = {}) {
  return graph_rewrite(root, pm, static_cast<void*>(&ctx), &typeid(Ctx), opts);
}

}  // namespace tunebed
