// PatternMatcher: a table of named rules {name, pattern, replacement[, guard]}, as tinygrad's
// PatternMatcher and egg's named rewrites. The replacement is a pattern over the captured names
// when it can be (`{"add-zero", x + 0, x}`) and a function when it has to compute. Rules are
// indexed by the op of their root, so a rewrite tries only the rules that can match; tables
// compose with `+`, and the first rule (in table order) that fires wins.
//
// Each rule counts its hits; `rule_stats()` reports them, and a rewrite trace records every
// step (rule name, before, after) for DEBUG output and a viewer.
#pragma once

#include <array>
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <typeinfo>
#include <vector>

#include "core/rewrite/upat.hpp"

namespace tunebed {

// What a rule's replacement and guard see: the matched root, the captures and the context.
struct Match {
  const UOp& root;
  const Captures& caps;
  void* ctx_ptr;
  const std::type_info* ctx_type;

  const UOp& operator[](std::string_view name) const { return caps[name]; }
  template <class T>
  T& ctx() const {
    if (!ctx_ptr || *ctx_type != typeid(T))
      throw std::logic_error(std::string("rewrite context is not a ") + typeid(T).name());
    return *static_cast<T*>(ctx_ptr);
  }
};

using RewriteFn = std::function<UOp(const Match&)>;  // a null UOp means "no rewrite"
using Guard = std::function<bool(const Match&)>;

struct Rule {
  std::string name;
  UPat pattern;
  RewriteFn fn;
  Rule(std::string name, UPat pattern, RewriteFn fn, Guard guard = {});
  Rule(std::string name, UPat pattern, const UPat& replacement, Guard guard = {});
};

struct RewriteStep {
  std::string rule;
  UOp before, after;
};
using RewriteTrace = std::vector<RewriteStep>;

class PatternMatcher {
 public:
  PatternMatcher() = default;
  PatternMatcher(std::initializer_list<Rule> rules);
  explicit PatternMatcher(std::vector<Rule> rules);
  PatternMatcher operator+(const PatternMatcher& o) const;

  // The first rule that rewrites u, applied once; a null UOp if none does.
  UOp rewrite(const UOp& u, void* ctx = nullptr, const std::type_info* ctx_type = nullptr,
              RewriteTrace* trace = nullptr) const;
  // The same, also naming the rule that fired.
  struct Applied {
    UOp out;
    const Rule* rule = nullptr;
  };
  Applied apply(const UOp& u, void* ctx, const std::type_info* ctx_type) const;

  struct Entry {
    Rule rule;
    mutable std::atomic<uint64_t> hits{0};
    explicit Entry(Rule r) : rule(std::move(r)) {}
  };
  const std::vector<std::shared_ptr<const Entry>>& entries() const { return entries_; }

 private:
  void index();
  std::vector<std::shared_ptr<const Entry>> entries_;
  std::array<std::vector<uint32_t>, kNumOps> by_op_;
};

// "rule-name: hits" per rule with hits, in table order, one per line.
std::string rule_stats(const PatternMatcher& pm);

// Build the UOp a replacement pattern describes from the captures. Sources that are constants
// in the pattern take the dtype of a non-constant sibling; a comparison is bool.
UOp instantiate(const UPat& tpl, const Match& m);

}  // namespace tunebed
