// `tunebed simplify EXPR`: run the symbolic simplifier on an integer expression and print the
// result in the same syntax (core/symbolic/expr_text.hpp), or as JSON with op counts.
#include <cctype>
#include <charconv>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "core/symbolic/expr_text.hpp"
#include "core/symbolic/symbolic.hpp"
#include "harness/cli.hpp"

namespace tunebed::cli {
namespace {

bool parse_int(std::string_view s, int64_t& out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

bool is_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char ch : s)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_')) return false;
  return true;
}

// "a:0:7,b:-3:3" -> bounds by name
std::map<std::string, VarBounds> parse_vars(const std::string& spec) {
  std::map<std::string, VarBounds> vars;
  std::stringstream entries(spec);
  std::string entry;
  while (std::getline(entries, entry, ',')) {
    auto bad = [&](const std::string& why) { return UsageError("--vars entry '" + entry + "': " + why); };
    size_t c1 = entry.find(':'), c2 = c1 == std::string::npos ? c1 : entry.find(':', c1 + 1);
    if (c2 == std::string::npos || entry.find(':', c2 + 1) != std::string::npos)
      throw bad("expected NAME:MIN:MAX");
    std::string name = entry.substr(0, c1);
    VarBounds b;
    if (!is_identifier(name)) throw bad("'" + name + "' is not a variable name");
    if (!parse_int(std::string_view(entry).substr(c1 + 1, c2 - c1 - 1), b.min))
      throw bad("MIN is not an integer");
    if (!parse_int(std::string_view(entry).substr(c2 + 1), b.max)) throw bad("MAX is not an integer");
    if (b.min > b.max) throw bad("MIN is greater than MAX");
    if (!vars.emplace(name, b).second) throw bad("'" + name + "' is given twice");
  }
  return vars;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    if (static_cast<unsigned char>(ch) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", ch);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

int run(const std::vector<std::string>& args) {
  CommandLine cl{
      .synopsis = "tunebed simplify EXPR [--vars a:MIN:MAX,...] [--json]",
      .description =
          "Simplify an integer expression with the symbolic rules and print the result in the\n"
          "same syntax: + - * // % (truncating, as C), < == !=, max(a,b), min(a,b),\n"
          "where(c,a,b), parentheses, integer literals and variables. Values are int64;\n"
          "a variable without --vars bounds ranges over [0, 2^31-1]. An expression that\n"
          "starts with '-' goes after `--`, so it is not read as an option.",
  };
  cl.options.add_options()("expr", po::value<std::string>()->required(), "the expression")(
      "vars", po::value<std::string>(), "variable bounds, NAME:MIN:MAX separated by commas")(
      "json", po::bool_switch(), "print {input, simplified, ops_before, ops_after} as JSON");
  cl.positional.add("expr", 1);
  cl.examples = {"tunebed simplify '((i*6+j)//4)%3' --vars i:0:9,j:0:5",
                 "tunebed simplify 'x*4//4+x%1' --json", "tunebed simplify --vars x:-8:8 -- '-x%4'"};
  auto vm = parse(cl, args);
  if (!vm) return 0;

  const std::string& text = (*vm)["expr"].as<std::string>();
  ExprOptions opts;
  if (vm->count("vars")) opts.vars = parse_vars((*vm)["vars"].as<std::string>());
  UOp input;
  try {
    input = parse_expr(text, opts);
  } catch (const ExprError& e) {
    throw UsageError(std::string(e.what()) + " in '" + text + "'");
  }
  UOp out = simplify(input);
  if ((*vm)["json"].as<bool>()) {
    std::cout << "{\"input\": " << json_string(text) << ", \"simplified\": " << json_string(print_expr(out))
              << ", \"ops_before\": " << alu_op_count(input) << ", \"ops_after\": " << alu_op_count(out)
              << "}\n";
  } else {
    std::cout << print_expr(out) << "\n";
  }
  return 0;
}

const Registrar reg{"simplify", "simplify an integer index expression with the symbolic rules", run};

}  // namespace
}  // namespace tunebed::cli
