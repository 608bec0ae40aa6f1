#include "core/rewrite/graph_rewrite.hpp"

#include <unordered_map>

namespace tunebed {

namespace {

class Rewriter {
 public:
  Rewriter(const PatternMatcher& pm, void* ctx, const std::type_info* ctx_type, const RewriteOptions& opts)
      : pm_(pm), ctx_(ctx), ctx_type_(ctx_type), opts_(opts) {}

  UOp run(const UOp& root) {
    root_ = root;
    // Each frame is (original node, stage, node being worked on). Stage 0: visit (and, bottom up,
    // rewrite) the node, then its sources. Stage 1: sources are done; rebuild or rewrite. Stage 2:
    // the replacement is done; link it back to the original.
    struct Frame {
      UOp n;
      int stage;
      UOp work;
    };
    std::vector<Frame> stack{{root, 0, root}};
    while (!stack.empty()) {
      Frame f = std::move(stack.back());
      stack.pop_back();
      if (done_.count(f.n.get())) continue;
      if (f.stage == 0) {
        UOp work = opts_.bottom_up ? to_fixed_point(f.work) : f.work;
        stack.push_back({f.n, 1, work});
        for (auto it = work.src().rbegin(); it != work.src().rend(); ++it) stack.push_back({*it, 0, *it});
      } else if (f.stage == 1) {
        std::vector<UOp> new_src;
        new_src.reserve(f.work.src().size());
        for (const UOp& s : f.work.src()) new_src.push_back(done_.at(s.get()).second);
        UOp next;
        if (new_src == f.work.src()) {
          if (opts_.bottom_up || !(next = apply(f.work))) {
            done_.emplace(f.n.get(), std::make_pair(f.n, f.work));
            continue;
          }
        } else {
          next = f.work.with_src(std::move(new_src));
        }
        stack.push_back({f.n, 2, next});
        stack.push_back({next, 0, next});
      } else {
        UOp result = done_.at(f.work.get()).second;
        done_.emplace(f.n.get(), std::make_pair(f.n, std::move(result)));
      }
    }
    return done_.at(root.get()).second;
  }

 private:
  UOp apply(const UOp& u) {
    PatternMatcher::Applied a = pm_.apply(u, ctx_, ctx_type_);
    if (!a.out) return a.out;
    if (opts_.trace) opts_.trace->push_back({a.rule->name, u, a.out});
    if (++steps_ > step_limit())
      throw RewriteError("graph_rewrite reached no fixed point after " + std::to_string(step_limit()) +
                         " rewrites (last rule: " + a.rule->name + ")");
    return a.out;
  }

  // max_steps, else 100000 plus 1000 per node of the INPUT graph: rules that keep growing the
  // graph must not raise their own limit (they would run until memory ran out). The input is
  // sized only once the first 100000 rewrites are spent.
  size_t step_limit() {
    constexpr size_t kBase = 100000;
    if (opts_.max_steps) return opts_.max_steps;
    if (steps_ <= kBase) return kBase;
    if (!input_nodes_) input_nodes_ = root_.toposort().size();
    return kBase + 1000 * input_nodes_;
  }

  UOp to_fixed_point(UOp u) {
    while (UOp next = apply(u)) u = std::move(next);
    return u;
  }

  const PatternMatcher& pm_;
  void* ctx_;
  const std::type_info* ctx_type_;
  const RewriteOptions& opts_;
  size_t steps_ = 0;
  UOp root_;
  size_t input_nodes_ = 0;
  // node -> (the node itself, kept alive so its address is not reused; its rewrite)
  std::unordered_map<const UOpNode*, std::pair<UOp, UOp>> done_;
};

}  // namespace

UOp graph_rewrite(const UOp& root, const PatternMatcher& pm, void* ctx, const std::type_info* ctx_type,
                  const RewriteOptions& opts) {
  return Rewriter(pm, ctx, ctx_type, opts).run(root);
}

}  // namespace tunebed
