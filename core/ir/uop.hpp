// UOp: the one IR node of tunebed, as tinygrad's uop/ops.py. A UOp is (op, dtype, src, arg).
//
// UOps are immutable and interned: building a UOp that is structurally equal to a live one returns
// that same node, so equality is a pointer compare and a graph's hash is a property of its
// structure alone. `UOp` is a handle (one pointer, reference counted); the node lives while any
// handle to it does, and the intern table forgets it when the last handle goes.
//
// The arg is a small dynamically typed value (Arg): none, bool, integer, float, string, an Ops, a
// DType, a UOp, a tuple of args, a record `Name(field=arg, ...)`, or an ArgObject that a higher
// layer defines (a ShapeTracker) and registers so that the text parser can rebuild it.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/ir/dtype.hpp"
#include "core/ir/ops.hpp"

namespace tunebed {

struct UOpNode;

class UOp {
 public:
  UOp() = default;
  UOp(const UOp& o) noexcept;
  UOp(UOp&& o) noexcept : n_(std::exchange(o.n_, nullptr)) {}
  UOp& operator=(const UOp& o) noexcept;
  UOp& operator=(UOp&& o) noexcept;
  ~UOp();

  static UOp make(Ops op, DType dtype, std::vector<UOp> src = {});
  static UOp make(Ops op, DType dtype, std::vector<UOp> src, const struct Arg& arg);
  static UOp const_int(DType dtype, int64_t v);     // an integer or bool constant
  static UOp const_float(DType dtype, double v);    // a float constant
  static UOp const_bool(bool v);
  static UOp index(int64_t v);                      // a constant of the index dtype
  static UOp variable(const std::string& name, int64_t min, int64_t max, DType dtype = dtypes::index);

  Ops op() const;
  const DType& dtype() const;
  const std::vector<UOp>& src() const;
  const UOp& src(size_t i) const;
  const struct Arg& arg() const;
  uint64_t hash() const;           // stable structural hash
  int64_t vmin() const;            // range analysis, meaningful for int and bool dtypes
  int64_t vmax() const;

  bool is_const() const;                       // op == CONST
  bool is_const(int64_t v) const;              // a CONST equal to v (as a number)
  double const_value() const;                  // a CONST's value as a double
  int64_t const_int() const;                   // a CONST's value as an integer

  // Parents before children, root last; each node once. Deterministic (depth-first, src order).
  std::vector<UOp> toposort() const;

  // Copies with one field changed.
  UOp with_src(std::vector<UOp> src) const;
  UOp with_arg(const struct Arg& arg) const;
  UOp with_dtype(DType dtype) const;

  // Expression building, as tinygrad's MathTrait. Integer constants take this UOp's dtype.
  UOp alu(Ops op, const UOp& b) const;
  UOp alu(Ops op) const;
  UOp const_like(int64_t v) const;
  UOp const_like_float(double v) const;
  UOp lt(const UOp& b) const;
  UOp lt(int64_t b) const;
  UOp ne(const UOp& b) const;
  UOp ne(int64_t b) const;
  UOp eq(const UOp& b) const;
  UOp eq(int64_t b) const;
  UOp max(const UOp& b) const;
  UOp min(const UOp& b) const;
  UOp where(const UOp& a, const UOp& b) const;
  UOp cast(DType d) const;
  UOp logical_not() const;

  explicit operator bool() const { return n_ != nullptr; }
  const UOpNode* get() const { return n_; }
  bool operator==(const UOp& o) const { return n_ == o.n_; }

 private:
  explicit UOp(UOpNode* n) : n_(n) {}  // adopts a reference
  UOpNode* n_ = nullptr;
  friend struct UOpTable;
};

UOp operator+(const UOp& a, const UOp& b);
UOp operator+(const UOp& a, int64_t b);
UOp operator+(int64_t a, const UOp& b);
UOp operator-(const UOp& a, const UOp& b);   // a + b*-1, as tinygrad
UOp operator-(const UOp& a, int64_t b);
UOp operator-(int64_t a, const UOp& b);
UOp operator-(const UOp& a);                 // a*-1 (logical not for bools)
UOp operator*(const UOp& a, const UOp& b);
UOp operator*(const UOp& a, int64_t b);
UOp operator*(int64_t a, const UOp& b);
UOp operator/(const UOp& a, const UOp& b);   // IDIV for ints (truncating, as C), FDIV for floats
UOp operator/(const UOp& a, int64_t b);
UOp operator%(const UOp& a, const UOp& b);
UOp operator%(const UOp& a, int64_t b);
UOp operator&(const UOp& a, const UOp& b);
UOp operator|(const UOp& a, const UOp& b);
UOp operator^(const UOp& a, const UOp& b);

struct UOpHash {
  size_t operator()(const UOp& u) const { return std::hash<const void*>()(u.get()); }
};

// ---- Arg ----------------------------------------------------------------------------------

struct Arg;
using ArgTuple = std::vector<Arg>;
struct Record;

// An arg type owned by a higher layer. It prints as a record and is rebuilt from one.
class ArgObject {
 public:
  virtual ~ArgObject() = default;
  virtual std::string_view kind() const = 0;
  virtual uint64_t hash() const = 0;
  virtual bool equals(const ArgObject& o) const = 0;
  virtual Record to_record() const = 0;
};

struct None {
  bool operator==(const None&) const = default;
};

struct Arg {
  using Value = std::variant<None, bool, int64_t, double, std::string, Ops, DType, UOp,
                             std::shared_ptr<const ArgTuple>, std::shared_ptr<const Record>,
                             std::shared_ptr<const ArgObject>>;
  Value v;

  Arg() = default;
  Arg(None) {}                                                     // NOLINT
  Arg(bool b) : v(b) {}                                            // NOLINT
  Arg(int i) : v(int64_t{i}) {}                                    // NOLINT
  Arg(int64_t i) : v(i) {}                                         // NOLINT
  Arg(double d) : v(d) {}                                          // NOLINT
  Arg(std::string s) : v(std::move(s)) {}                          // NOLINT
  Arg(const char* s) : v(std::string(s)) {}                        // NOLINT
  Arg(Ops o) : v(o) {}                                             // NOLINT
  Arg(DType d) : v(d) {}                                           // NOLINT
  Arg(Scalar s) : v(DType(s)) {}                                   // NOLINT
  Arg(UOp u) : v(std::move(u)) {}                                  // NOLINT
  Arg(ArgTuple t) : v(std::make_shared<const ArgTuple>(std::move(t))) {}  // NOLINT
  Arg(Record r);                                                   // NOLINT
  Arg(std::shared_ptr<const ArgObject> o) : v(std::move(o)) {}     // NOLINT
  static Arg tuple(std::initializer_list<Arg> items) { return Arg(ArgTuple(items)); }
  template <class T>
  static Arg ints(const std::vector<T>& xs) {
    ArgTuple t;
    for (const T& x : xs) t.emplace_back(static_cast<int64_t>(x));
    return Arg(std::move(t));
  }

  bool is_none() const { return std::holds_alternative<None>(v); }
  template <class T>
  bool is() const { return std::holds_alternative<T>(v); }
  bool is_tuple() const { return is<std::shared_ptr<const ArgTuple>>(); }
  bool is_record() const { return is<std::shared_ptr<const Record>>(); }
  bool is_object() const { return is<std::shared_ptr<const ArgObject>>(); }

  // Typed access; each throws std::invalid_argument naming what was expected.
  bool as_bool() const;
  int64_t as_int() const;
  double as_number() const;        // int or float
  const std::string& as_string() const;
  Ops as_op() const;
  const DType& as_dtype() const;
  const UOp& as_uop() const;
  const ArgTuple& as_tuple() const;
  const Record& as_record() const;
  std::vector<int64_t> as_ints() const;  // a tuple of ints
  template <class T>
  const T& as_object() const {
    const T* p = dynamic_cast<const T*>(std::get<std::shared_ptr<const ArgObject>>(v).get());
    if (!p) throw_wrong_kind("object");
    return *p;
  }
  template <class T>
  const T* try_object() const {
    if (!is_object()) return nullptr;
    return dynamic_cast<const T*>(std::get<std::shared_ptr<const ArgObject>>(v).get());
  }

  uint64_t hash() const;
  bool operator==(const Arg& o) const;

 private:
  [[noreturn]] void throw_wrong_kind(const char* want) const;
};

struct Record {
  std::string name;
  std::vector<std::pair<std::string, Arg>> fields;
  const Arg* find(std::string_view field) const;
  const Arg& at(std::string_view field) const;  // throws naming the record and the field
  bool operator==(const Record& o) const { return name == o.name && fields == o.fields; }
};

inline Arg::Arg(Record r) : v(std::make_shared<const Record>(std::move(r))) {}

// Rebuilds an ArgObject from its record; a higher layer registers one per kind at start-up.
using ArgObjectParser = std::function<Arg(const Record&)>;
void register_arg_object(const std::string& kind, ArgObjectParser parser);
const ArgObjectParser* find_arg_object_parser(std::string_view kind);

// ---- the node -----------------------------------------------------------------------------

struct UOpNode {
  mutable std::atomic<int32_t> refs{0};
  Ops op;
  DType dtype;
  std::vector<UOp> src;
  Arg arg;
  uint64_t hash;
  int64_t vmin, vmax;
  UOpNode* dead_next;  // the intern table's queue of nodes being freed
};

inline Ops UOp::op() const { return n_->op; }
inline const DType& UOp::dtype() const { return n_->dtype; }
inline const std::vector<UOp>& UOp::src() const { return n_->src; }
inline const UOp& UOp::src(size_t i) const { return n_->src.at(i); }
inline const Arg& UOp::arg() const { return n_->arg; }
inline uint64_t UOp::hash() const { return n_->hash; }
inline int64_t UOp::vmin() const { return n_->vmin; }
inline int64_t UOp::vmax() const { return n_->vmax; }
inline bool UOp::is_const() const { return n_->op == Ops::CONST; }

// How many UOp nodes are alive now (for tests of the intern table and for leak checks).
size_t live_uop_count();

}  // namespace tunebed
