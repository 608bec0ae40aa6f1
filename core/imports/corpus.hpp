// A corpus of tinygrad kernel ASTs, one per line, plain or gzip-compressed (tinygrad's sops.gz),
// imported as tunebed kernels: deduplicated by kernel_hash, each failure kept with its line.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/imports/tinygrad_ast.hpp"

namespace tunebed::imports {

// The corpus file cannot be read at all (missing, unreadable, corrupt gzip).
class CorpusError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CorpusKernel {
  int line = 0;               // 1-based line of its first occurrence
  std::string hash;           // kernel_hash(ast)
  std::string text;           // print_uop(ast): the canonical text
  std::string tinygrad_opts;  // as recorded on that first line
  std::string shape;          // kernel_shape(ast)
};

struct CorpusFailure {
  int line = 0;
  std::string message;  // "column C: ..." for a parse error, else the ImportError's message
};

struct CorpusImport {
  std::vector<CorpusKernel> kernels;  // in line order
  int lines = 0;                      // non-blank lines; == kernels + duplicates + failures
  int duplicates = 0;
  std::vector<CorpusFailure> failures;  // in line order
};

// The lines of PATH, gunzipped if it is gzip (zlib reads plain files through unchanged).
std::vector<std::string> read_lines(const std::string& path);
CorpusImport import_lines(const std::vector<std::string>& lines);

// A short summary for the database: the kernel's full shape (per axis the largest size over its
// VIEWs, as tinygrad's Kernel.full_shape; a symbolic size by its variable's name) and the dtype
// stored, e.g. "16x4x4 float32".
std::string kernel_shape(const UOp& ast);

}  // namespace tunebed::imports
