// Test kernels for core/opt: the dataset sample, a few named kernels made by tinygrad's
// scheduler (tests/opt/data/kernels.txt), what tinygrad computed for them
// (tests/opt/data/*-golden.txt, from tests/opt/tinygrad_golden.py) and small ASTs built here.
#pragma once

#include <cstdlib>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/ir/text.hpp"
#include "core/ir/tinygrad_text.hpp"
#include "core/opt/kernel.hpp"

namespace tunebed::test {

inline std::string source_path(const std::string& rel) {
  const char* root = std::getenv("TUNEBED_SOURCE_DIR");
  return std::string(root ? root : ".") + "/" + rel;
}

inline std::vector<std::string> read_lines(const std::string& rel) {
  std::ifstream f(source_path(rel));
  if (!f) throw std::runtime_error("cannot open " + source_path(rel));
  std::vector<std::string> lines;
  for (std::string line; std::getline(f, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

inline std::vector<std::string> split(const std::string& s, const std::string& sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t at; (at = s.find(sep, start)) != std::string::npos; start = at + sep.size())
    parts.push_back(s.substr(start, at - start));
  parts.push_back(s.substr(start));
  return parts;
}

// A tinygrad AST without its SINK arg (the dataset's is an older KernelInfo).
inline UOp strip_sink_arg(const UOp& ast) { return ast.with_arg(Arg()); }

// The test kernels live until the process ends and are never destroyed: a static holding UOps
// would be torn down after core/ir's intern table at exit.

// The dataset sample, by 1-based line number; lines tunebed cannot parse (image dtypes) are
// left out.
inline const std::map<int, UOp>& dataset_kernels() {
  static const auto& kernels = *new std::map<int, UOp>([] {
    std::map<int, UOp> ks;
    int n = 0;
    for (const std::string& line : read_lines("tests/data/sops-sample.txt")) {
      n++;
      try {
        ks[n] = strip_sink_arg(parse_tinygrad_uop(line));
      } catch (const ParseError&) {
      }
    }
    return ks;
  }());
  return kernels;
}

// tests/opt/data/kernels.txt: "name UOp(...)" per line.
inline const std::map<std::string, UOp>& named_kernels() {
  static const auto& kernels = *new std::map<std::string, UOp>([] {
    std::map<std::string, UOp> ks;
    for (const std::string& line : read_lines("tests/opt/data/kernels.txt")) {
      size_t space = line.find(' ');
      ks[line.substr(0, space)] = parse_tinygrad_uop(line.substr(space + 1));
    }
    return ks;
  }());
  return kernels;
}

inline const UOp& named(const std::string& name) { return named_kernels().at(name); }

// Golden lines by their first field (a line number or a kernel name).
inline std::map<std::string, std::vector<std::string>> golden(const std::string& rel) {
  std::map<std::string, std::vector<std::string>> g;
  for (const std::string& line : read_lines(rel)) {
    std::vector<std::string> f = split(line, " | ");
    g[f[0]] = f;
  }
  return g;
}

// "LLR": the axis types as tinygrad's letters.
inline std::string letters(const Kernel& k) {
  std::string s;
  for (AxisType t : k.axis_types()) s += axis_letter(t);
  return s;
}

}  // namespace tunebed::test
