#include "core/ir/tinygrad_text.hpp"

#include <utility>

#include "core/ir/text_parser.hpp"

namespace tunebed {

namespace {

class TinygradParser : public Parser {
 public:
  explicit TinygradParser(std::string_view text) : Parser(text) {
    single_quotes_ = true;
    uops_ = &bound_;
  }

  UOp line() {
    UOp u = uop_expr(0);
    expect_end();
    return u;
  }

 protected:
  std::optional<Arg> dialect_arg(std::string_view name, int depth) override {
    if (name == "OptOps") {
      expect(".");
      return Arg(std::string(ident()));
    }
    if (name == "UOp" || peek() == ':') {
      // A UOp inside an arg was printed by its own repr call: its `xN` names are its own.
      auto outer = std::exchange(bound_, {});
      UOp u = uop_after_name(name, depth);
      bound_ = std::move(outer);
      return Arg(u);
    }
    return std::nullopt;
  }

 private:
  UOp uop_expr(int depth) { return uop_after_name(ident(), depth); }

  // The cursor is just past a name: `UOp(...)`, `xN:=UOp(...)` or a reference `xN`.
  UOp uop_after_name(std::string_view name, int depth) {
    if (depth > 512) fail("UOp nested too deeply");
    if (accept(":=")) {
      std::string binding(name);
      if (bound_.count(binding)) fail("'" + binding + "' is bound twice");
      if (ident() != "UOp") fail("expected UOp after " + binding + ":=");
      UOp u = uop_body(depth);
      bound_.emplace(std::move(binding), u);
      return u;
    }
    if (name == "UOp") return uop_body(depth);
    auto it = bound_.find(std::string(name));
    if (it == bound_.end()) fail("'" + std::string(name) + "' is not bound before its use");
    return it->second;
  }

  // `(Ops.X, dtype, arg=..., src=(...))` after the word UOp.
  UOp uop_body(int depth) {
    expect("(");
    expect("Ops");
    expect(".");
    std::string_view opname = ident();
    auto op = op_from_name(opname);
    if (!op) fail("unknown op 'Ops." + std::string(opname) + "'");
    expect(",");
    expect("dtypes");
    expect(".");
    DType dt = dtype();
    Arg a;
    std::vector<UOp> src;
    while (accept(",")) {
      if (accept("arg=")) {
        a = arg(depth + 1);
      } else if (accept("src=")) {
        expect("(");
        while (!accept(")")) {
          src.push_back(uop_expr(depth + 1));
          if (!accept(",")) {
            expect(")");
            break;
          }
        }
      } else if (peek() != ')') {
        fail("expected arg= or src=" + found());
      }
    }
    expect(")");
    try {
      return UOp::make(*op, dt, std::move(src), a);
    } catch (const std::exception& e) {
      fail("invalid " + std::string(opname) + ": " + e.what());
    }
  }

  std::unordered_map<std::string, UOp> bound_;
};

}  // namespace

UOp parse_tinygrad_uop(std::string_view text) { return TinygradParser(text).line(); }

}  // namespace tunebed
