// The Ops enum and its groups, as tinygrad's uop/__init__.py. The order is the order of the enum
// in the text form's docs and nothing else depends on it.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>

namespace tunebed {

#define TUNEBED_OPS(X)                                                                              \
  /* graph and buffer ops */                                                                        \
  X(NOOP) X(SINK) X(UNIQUE) X(DEVICE) X(KERNEL) X(COPY) X(BUFFER) X(BUFFER_VIEW) X(MSELECT) X(MSTACK) \
  X(CONTIGUOUS)                                                                                     \
  /* movement ops: only in the tensor graph */                                                      \
  X(RESHAPE) X(PERMUTE) X(EXPAND) X(PAD) X(SHRINK) X(FLIP)                                          \
  /* what movement ops become in kernels */                                                         \
  X(VIEW) X(VALID)                                                                                  \
  X(DEFINE_GLOBAL) X(DEFINE_LOCAL) X(DEFINE_REG) X(DEFINE_VAR) X(BIND) X(SPECIAL)                   \
  X(REDUCE_AXIS) X(REDUCE)                                                                          \
  X(UNROLL) X(CONTRACT) X(GEP) X(VECTORIZE)                                                         \
  /* unary */                                                                                       \
  X(CAST) X(BITCAST) X(EXP2) X(LOG2) X(SIN) X(SQRT) X(RECIP) X(NEG) X(TRUNC)                        \
  X(LOAD) X(STORE) X(ASSIGN) X(WMMA) X(INDEX)                                                       \
  /* binary */                                                                                      \
  X(ADD) X(MUL) X(SHL) X(SHR) X(IDIV) X(MAX) X(MOD) X(CMPLT) X(CMPNE) X(CMPEQ) X(XOR) X(OR) X(AND)  \
  X(SUB) X(FDIV) X(POW) X(THREEFRY)                                                                           \
  /* ternary */                                                                                     \
  X(WHERE) X(MULACC)                                                                                \
  /* control flow */                                                                                \
  X(BARRIER) X(RANGE) X(IF) X(ENDRANGE) X(ENDIF)                                                    \
  X(VCONST) X(CONST) X(CUSTOM)

enum class Ops : uint8_t {
#define TUNEBED_OP_ENUM(name) name,
  TUNEBED_OPS(TUNEBED_OP_ENUM)
#undef TUNEBED_OP_ENUM
};

#define TUNEBED_OP_COUNT(name) +1
inline constexpr int kNumOps = 0 TUNEBED_OPS(TUNEBED_OP_COUNT);
#undef TUNEBED_OP_COUNT

std::string_view op_name(Ops op);                      // "ADD"
std::optional<Ops> op_from_name(std::string_view s);   // "ADD" -> Ops::ADD

// A set of ops as a 128-bit mask: constexpr, cheap to copy and to test.
class OpSet {
 public:
  constexpr OpSet() = default;
  constexpr OpSet(std::initializer_list<Ops> ops) {
    for (Ops o : ops) add(o);
  }
  constexpr OpSet& add(Ops o) {
    bits_[index(o) / 64] |= uint64_t{1} << (index(o) % 64);
    return *this;
  }
  constexpr bool contains(Ops o) const { return bits_[index(o) / 64] >> (index(o) % 64) & 1u; }
  constexpr bool empty() const { return bits_[0] == 0 && bits_[1] == 0; }
  constexpr OpSet operator|(const OpSet& o) const {
    OpSet r;
    r.bits_[0] = bits_[0] | o.bits_[0];
    r.bits_[1] = bits_[1] | o.bits_[1];
    return r;
  }
  constexpr bool operator==(const OpSet&) const = default;

 private:
  static constexpr int index(Ops o) { return static_cast<int>(o); }
  uint64_t bits_[2] = {0, 0};
};

namespace GroupOp {
inline constexpr OpSet Unary{Ops::EXP2, Ops::LOG2, Ops::SIN, Ops::SQRT, Ops::RECIP, Ops::NEG, Ops::TRUNC};
inline constexpr OpSet Binary{Ops::ADD, Ops::MUL,  Ops::IDIV, Ops::MAX, Ops::MOD, Ops::CMPLT, Ops::CMPNE,
                              Ops::CMPEQ, Ops::XOR, Ops::SHL, Ops::SHR, Ops::OR, Ops::AND, Ops::SUB,
                              Ops::FDIV, Ops::POW, Ops::THREEFRY};
inline constexpr OpSet Ternary{Ops::WHERE, Ops::MULACC};
inline constexpr OpSet ALU = Unary | Binary | Ternary;
inline constexpr OpSet Irreducible{Ops::CONST, Ops::DEFINE_VAR, Ops::SPECIAL, Ops::RANGE};
inline constexpr OpSet Movement{Ops::RESHAPE, Ops::EXPAND, Ops::PERMUTE, Ops::PAD, Ops::SHRINK, Ops::FLIP};
inline constexpr OpSet Buffer{Ops::LOAD, Ops::STORE, Ops::VALID, Ops::CONST, Ops::DEFINE_VAR};
inline constexpr OpSet Block{Ops::RANGE, Ops::IF};
// Ops whose two sources may be swapped (a + b == b + a).
inline constexpr OpSet Commutative{Ops::ADD, Ops::MUL, Ops::MAX, Ops::CMPNE, Ops::CMPEQ, Ops::XOR, Ops::AND,
                                   Ops::OR};
// Ops where (a op b) op c == a op (b op c).
inline constexpr OpSet Associative{Ops::ADD, Ops::MUL, Ops::AND, Ops::OR, Ops::MAX};
// Ops with f(0) != 0: a reduce padded with PADTO is wrong through them.
inline constexpr OpSet UnsafePad{Ops::RECIP, Ops::LOG2, Ops::EXP2, Ops::IDIV, Ops::POW};
inline constexpr OpSet Comparison{Ops::CMPLT, Ops::CMPNE, Ops::CMPEQ};
// Ops that only carry metadata through the graph.
inline constexpr OpSet Meta{Ops::COPY, Ops::BUFFER_VIEW, Ops::CONTIGUOUS, Ops::DEVICE, Ops::MSELECT,
                            Ops::MSTACK, Ops::UNIQUE, Ops::NOOP, Ops::KERNEL};
}  // namespace GroupOp

}  // namespace tunebed
