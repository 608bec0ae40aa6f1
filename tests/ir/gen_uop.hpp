// A RapidCheck generator of random UOp graphs: random ops and dtypes (vectors, pointers, address
// spaces), args of every kind (None, bool, int, float incl. inf/-inf/NaN/-0.0, strings of any
// bytes, Ops, DType, UOps, nested tuples and records), DEFINE_VAR, RANGE, SPECIAL, constants, and
// subgraphs shared by later nodes.
//
// A generated value is a recipe, not a graph: `build()` makes the graph from scratch each time,
// so a property can drop a graph and build it again out of fresh nodes. RapidCheck shows a
// failing recipe as the text of its graph.
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "core/ir/text.hpp"
#include "core/ir/uop.hpp"

namespace tunebed::testgen {

using Nodes = std::vector<UOp>;
using ArgMaker = std::function<Arg(const Nodes&)>;  // an arg may refer to nodes built before it

struct RandomGraph {
  std::vector<std::function<UOp(const Nodes&)>> steps;  // step i builds node i from nodes 0..i-1

  // A SINK over every node built, so nothing generated is left out of the graph.
  UOp build() const {
    Nodes nodes;
    for (const auto& step : steps) nodes.push_back(step(nodes));
    return UOp::make(Ops::SINK, dtypes::void_, nodes);
  }
};

inline void showValue(const RandomGraph& g, std::ostream& os) { os << "\n" << print_uop(g.build()); }

inline rc::Gen<DType> gen_dtype() {
  return rc::gen::exec([] {
    DType d(static_cast<Scalar>(*rc::gen::inRange(0, kNumScalars)));
    if (*rc::gen::inRange(0, 4) == 0) d = d.vec(*rc::gen::element(2, 3, 4, 8, 1024));
    if (*rc::gen::inRange(0, 4) == 0) {
      d = d.ptr_to(*rc::gen::inRange<int64_t>(-1, 4096),
                   *rc::gen::element(AddrSpace::Global, AddrSpace::Local, AddrSpace::Reg));
      if (*rc::gen::inRange(0, 4) == 0) d = d.with_v(*rc::gen::element(2, 4));
    }
    return d;
  });
}

// Doubles with the special values made likely: they are where printing and parsing go wrong.
inline rc::Gen<double> gen_double() {
  constexpr double inf = std::numeric_limits<double>::infinity();
  return rc::gen::oneOf(rc::gen::arbitrary<double>(),
                        rc::gen::element(inf, -inf, std::numeric_limits<double>::quiet_NaN(),
                                         -std::numeric_limits<double>::quiet_NaN(), -0.0, 0.1, 5e-324,
                                         std::numeric_limits<double>::max(), 1e16, 123456789.0));
}

// An identifier that cannot be a keyword of the text form (None, True, inf, Ops, ...).
inline rc::Gen<std::string> gen_ident(const std::string& prefix) {
  return rc::gen::exec([prefix] {
    size_t n = *rc::gen::inRange<size_t>(0, 6);
    return prefix + *rc::gen::container<std::string>(n, rc::gen::element('a', 'Z', '_', '0', '9'));
  });
}

inline rc::Gen<Ops> gen_op() {
  return rc::gen::map(rc::gen::inRange(0, kNumOps), [](int i) { return static_cast<Ops>(i); });
}

inline ArgMaker constant(Arg a) {
  return [a](const Nodes&) { return a; };
}

inline rc::Gen<ArgMaker> gen_arg(int depth, size_t n_nodes) {
  return rc::gen::exec([depth, n_nodes]() -> ArgMaker {
    int kinds = depth > 0 ? 11 : 9;
    switch (*rc::gen::inRange(0, kinds)) {
      case 0:
        return constant(Arg());
      case 1:
        return constant(Arg(*rc::gen::arbitrary<bool>()));
      case 2:
        return constant(Arg(*rc::gen::arbitrary<int64_t>()));
      case 3:
        return constant(Arg(*gen_double()));
      case 4:
        return constant(Arg(*rc::gen::container<std::string>(rc::gen::arbitrary<char>())));
      case 5:
        return constant(Arg(*gen_op()));
      case 6:
        return constant(Arg(*gen_dtype()));
      case 7:
      case 8: {
        if (n_nodes == 0) return constant(Arg(*rc::gen::inRange<int64_t>(-4, 4)));
        size_t i = *rc::gen::inRange<size_t>(0, n_nodes);
        return [i](const Nodes& nodes) { return Arg(nodes[i]); };
      }
      case 9: {
        auto items =
            *rc::gen::container<std::vector<ArgMaker>>(*rc::gen::inRange(0, 4), gen_arg(depth - 1, n_nodes));
        return [items](const Nodes& nodes) {
          ArgTuple t;
          for (const ArgMaker& item : items) t.push_back(item(nodes));
          return Arg(std::move(t));
        };
      }
      default: {
        std::string name = *gen_ident("R");
        size_t n = *rc::gen::inRange(0, 4);
        std::vector<std::pair<std::string, ArgMaker>> fields;
        for (size_t i = 0; i < n; i++) fields.emplace_back(*gen_ident("f"), *gen_arg(depth - 1, n_nodes));
        return [name, fields](const Nodes& nodes) {
          Record r{name, {}};
          for (const auto& [k, make] : fields) r.fields.emplace_back(k, make(nodes));
          return Arg(std::move(r));
        };
      }
    }
  });
}

// Node i of a graph: a variable, a constant, a loop or launch index, or any other op with a
// random dtype, random earlier nodes as sources (so subgraphs are shared) and a random arg.
inline rc::Gen<std::function<UOp(const Nodes&)>> gen_step(size_t i) {
  using Step = std::function<UOp(const Nodes&)>;
  return rc::gen::exec([i]() -> Step {
    const std::vector<DType> ints{dtypes::int32, dtypes::int64, dtypes::uint8, dtypes::bool_};
    const std::vector<DType> floats{dtypes::float16, dtypes::bfloat16, dtypes::float32, dtypes::float64};
    // Mostly arbitrary ops (the last kind); a RANGE needs an earlier node as its end.
    int kind =
        *rc::gen::weightedElement<int>({{1, 0}, {1, 1}, {1, 2}, {1, 3}, {i ? 1u : 0u, 4}, {i ? 6u : 0u, 5}});
    switch (kind) {
      case 0: {
        std::string name = *gen_ident("v");
        int64_t lo = *rc::gen::inRange<int64_t>(-1000, 1000);
        int64_t hi = lo + *rc::gen::inRange<int64_t>(0, 1000);
        DType d = *rc::gen::element(dtypes::int32, dtypes::int64);
        return [=](const Nodes&) { return UOp::variable(name, lo, hi, d); };
      }
      case 1: {
        DType d = *rc::gen::elementOf(ints);
        int64_t v = *rc::gen::arbitrary<int64_t>();
        return [=](const Nodes&) { return UOp::const_int(d, v); };
      }
      case 2: {
        DType d = *rc::gen::elementOf(floats);
        double v = *gen_double();
        return [=](const Nodes&) { return UOp::const_float(d, v); };
      }
      case 3: {
        std::string name = *gen_ident("gidx");
        int64_t size = *rc::gen::inRange<int64_t>(1, 1024);
        return [=](const Nodes&) {
          return UOp::make(Ops::SPECIAL, dtypes::int32, {}, Arg::tuple({name, size}));
        };
      }
      case 4: {
        size_t end = *rc::gen::inRange<size_t>(0, i);
        int64_t axis = *rc::gen::inRange<int64_t>(0, 8);
        return
            [=](const Nodes& nodes) { return UOp::make(Ops::RANGE, dtypes::int32, {nodes[end]}, Arg(axis)); };
      }
      default: {
        // Ops whose range analysis reads a particular arg or source are built above instead.
        Ops op = *rc::gen::suchThat(gen_op(), [](Ops o) {
          return o != Ops::DEFINE_VAR && o != Ops::SPECIAL && o != Ops::RANGE && o != Ops::BIND;
        });
        DType d = *gen_dtype();
        auto src =
            *rc::gen::container<std::vector<size_t>>(*rc::gen::inRange(0, 4), rc::gen::inRange<size_t>(0, i));
        ArgMaker arg = *rc::gen::inRange(0, 3) == 0 ? constant(Arg()) : *gen_arg(2, i);
        return [=](const Nodes& nodes) {
          std::vector<UOp> s;
          for (size_t k : src) s.push_back(nodes[k]);
          return UOp::make(op, d, std::move(s), arg(nodes));
        };
      }
    }
  });
}

inline rc::Gen<RandomGraph> gen_graph() {
  return rc::gen::exec([] {
    RandomGraph g;
    size_t n = *rc::gen::inRange<size_t>(1, 30);
    for (size_t i = 0; i < n; i++) g.steps.push_back(*gen_step(i));
    return g;
  });
}

}  // namespace tunebed::testgen

namespace rc {
template <>
struct Arbitrary<tunebed::testgen::RandomGraph> {
  static Gen<tunebed::testgen::RandomGraph> arbitrary() { return tunebed::testgen::gen_graph(); }
};
}  // namespace rc
