// The parser behind the canonical text form (text.hpp), shared with the parser of tinygrad's
// kernel-AST text (tinygrad_text.hpp): a cursor over the text, tokens, the arg grammar and
// dtypes. A dialect extends the arg grammar through `dialect_arg`.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/ir/text.hpp"

namespace tunebed {

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}
  virtual ~Parser() = default;

  [[noreturn]] void fail(const std::string& msg) const;  // throws ParseError at the cursor
  void skip_spaces();
  bool at_end() const { return pos_ >= s_.size(); }
  char peek();
  bool accept(std::string_view tok);
  void expect(std::string_view tok);
  std::string found();  // ", found 'xyz'" for error messages
  static bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
  std::string_view ident();
  int64_t integer();
  DType dtype();
  Arg number();
  std::string string_literal();
  Arg arg(int depth = 0);
  Arg record(std::string name, int depth);
  UOp uop_list();  // the canonical form: `uN = OP dtype arg=... src=(...)` lines
  void expect_end();

 protected:
  // A dialect's own arg forms, tried for a name the arg grammar does not know; the cursor is
  // just past the name. nullopt: not the dialect's either.
  virtual std::optional<Arg> dialect_arg(std::string_view name, int depth) {
    (void)name;
    (void)depth;
    return std::nullopt;
  }

  std::string_view s_;
  size_t pos_ = 0;
  bool single_quotes_ = false;  // Python's 'text' strings
  const std::unordered_map<std::string, UOp>* uops_ = nullptr;  // names an arg may refer to
};

}  // namespace tunebed
