// UPat: a pattern over UOps, as tinygrad's UPat. Patterns are built like the expressions they
// match, so a rule reads like the algebra it states:
//
//   UPat x = UPat::var("x"), c = UPat::cvar("c");
//   x + 0        matches ADD(x, CONST 0) in either source order (ADD is commutative)
//   (x * c) / c  matches IDIV(MUL(x, c), c) where both c's are the same node
//
// A pattern constrains the op (one or a set), the dtype, the arg, and the sources: a fixed list
// (matched in either order for commutative ops), a prefix (allow_any_len), or one pattern that
// every source must match (src_all). A name captures the matched UOp; a name used twice must
// match the same UOp both times. A predicate can check anything else.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/uop.hpp"

namespace tunebed {

struct UPatNode;

class UPat {
 public:
  UPat();  // matches any UOp, captures nothing

  // Any UOp (optionally of one dtype), captured as `name`.
  static UPat var(const std::string& name = "", std::optional<DType> dtype = std::nullopt);
  // Any CONST, captured as `name`.
  static UPat cvar(const std::string& name = "", std::optional<DType> dtype = std::nullopt);
  // A CONST equal to v (compared as numbers, whatever the dtype).
  static UPat cnst(double v);
  // An op, or any of a set of ops, with sources.
  UPat(Ops op, std::vector<UPat> src);
  explicit UPat(Ops op);
  static UPat ops(OpSet ops, std::vector<UPat> src = {});

  // Refinements; each returns a new pattern.
  UPat named(const std::string& name) const;
  UPat dtype(DType d) const;
  UPat dtypes(std::vector<DType> ds) const;
  UPat arg(const Arg& a) const;
  UPat allow_any_len() const;  // the sources given are a prefix
  UPat src_all(const UPat& each) const;  // every source, however many, matches `each`
  UPat ordered() const;  // match sources in the given order only, even for commutative ops
  UPat where(std::function<bool(const UOp&)> pred) const;

  // Expression building (the matched ops are commutative where the op is).
  UPat alu(Ops op, const UPat& b) const;
  UPat lt(const UPat& b) const { return alu(Ops::CMPLT, b); }
  UPat ne(const UPat& b) const { return alu(Ops::CMPNE, b); }
  UPat eq(const UPat& b) const { return alu(Ops::CMPEQ, b); }
  UPat max(const UPat& b) const { return alu(Ops::MAX, b); }
  UPat where(const UPat& a, const UPat& b) const;
  UPat cast(std::optional<DType> d = std::nullopt) const;

  const UPatNode& node() const { return *p_; }
  std::string to_string() const;

 private:
  explicit UPat(std::shared_ptr<UPatNode> p) : p_(std::move(p)) {}
  UPat modified(const std::function<void(UPatNode&)>& f) const;
  std::shared_ptr<const UPatNode> p_;
};

UPat operator+(const UPat& a, const UPat& b);
UPat operator+(const UPat& a, int64_t b);
UPat operator*(const UPat& a, const UPat& b);
UPat operator*(const UPat& a, int64_t b);
UPat operator/(const UPat& a, const UPat& b);  // IDIV
UPat operator/(const UPat& a, int64_t b);
UPat operator%(const UPat& a, const UPat& b);
UPat operator%(const UPat& a, int64_t b);
UPat operator-(const UPat& a);                 // MUL(a, -1), tinygrad's negation
UPat operator&(const UPat& a, const UPat& b);
UPat operator|(const UPat& a, const UPat& b);
UPat operator^(const UPat& a, const UPat& b);

struct UPatNode {
  OpSet ops;                                 // empty: any op
  std::vector<DType> dtypes;                 // empty: any dtype
  std::optional<Arg> arg;
  std::optional<double> const_value;         // for cnst()
  std::string name;
  std::vector<UPat> src;
  enum class SrcMode { Exact, Prefix, All, None } src_mode = SrcMode::None;
  bool any_order = false;                    // commutative: two sources in either order
  std::function<bool(const UOp&)> pred;
};

// Captured UOps by name. Small and linear: a rule captures a handful. The names point into the
// pattern that bound them, so a Captures is valid only while that pattern lives (a rule's does).
class Captures {
 public:
  const UOp* find(std::string_view name) const;
  const UOp& operator[](std::string_view name) const;  // throws if absent
  bool bind(const std::string& name, const UOp& u);     // false if bound to another UOp
  size_t size() const { return items_.size(); }
  void truncate(size_t n) { items_.resize(n); }

 private:
  std::vector<std::pair<const std::string*, UOp>> items_;
};

bool match(const UPat& p, const UOp& u, Captures& caps);

}  // namespace tunebed
