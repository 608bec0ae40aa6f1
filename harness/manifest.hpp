// The manifest of `tunebed tune --manifest FILE`: what a batch tunes, one entry per line.
//
//   # A manifest: one entry per line, `#` starts a comment, blank lines are skipped.
//   matmul:M=256,N=256,K=256                      a workload spec, as `tunebed workloads` lists
//   softmax:M=512,N=512 strategy=random budget=50 ...with per-entry options after it
//   ast kernels/f96cead6cd56ab83.uop              a kernel AST file: canonical text, as
//                                                 `tunebed import --out` writes, or one
//                                                 tinygrad AST line
//   corpus sops.gz sample=20 seed=1 filter=reduce tinygrad's kernel dataset (plain or .gz), all of
//                                                 it or a seeded sample of N kernels, optionally
//                                                 only those that reduce
//   kernel f96cead6cd56ab83                       a kernel already in the tuning database, by hash
//
// Per-entry options override the command line's for that entry's kernels: strategy=NAME,
// budget=N (candidates), seconds=S (wall seconds), width=W (beam width). sample=, seed= and
// filter= belong to corpus entries. Relative paths are resolved against the manifest's folder.
//
// Parsing checks the syntax only; what an entry names (a workload, a file, a strategy) is checked
// when the batch is expanded, and every error, early or late, starts with the entry's origin
// `FILE:LINE:` so a person can go straight to the line.
//
// Sharding (--shard I/N) splits the expanded kernel list round-robin: kernel k (0-based) belongs to
// shard k mod N + 1, so I runs from 1 to N (a Slurm array --array=1-N) and shards differ in size by
// at most one kernel.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tunebed::cli {

// The tuning knobs an entry may set; unset ones come from the command line.
struct EntryOptions {
  std::optional<std::string> strategy;
  std::optional<int64_t> budget;
  std::optional<double> seconds;
  std::optional<int> width;
};

struct ManifestEntry {
  enum class Kind { workload, ast, corpus, kernel };
  Kind kind = Kind::workload;
  std::string value;   // the workload spec, the resolved path, or the kernel hash
  std::string origin;  // "FILE:LINE", the prefix of every error about this entry
  // corpus entries only
  std::optional<int64_t> sample;  // this many kernels drawn with sample_seed; all when unset
  uint64_t sample_seed = 0;
  bool reduce_only = false;
  EntryOptions options;
};

// Parses TEXT, named NAME in errors, with relative paths resolved against BASE. Throws UsageError
// "NAME:LINE: ..." naming the bad token.
std::vector<ManifestEntry> parse_manifest(std::string_view text, const std::string& name,
                                          const std::filesystem::path& base);
// Reads and parses the file PATH; a missing or unreadable file is a UsageError naming it.
std::vector<ManifestEntry> read_manifest(const std::string& path);

// The options as manifest text, " strategy=beam budget=6 ..." (set ones only, each after a space).
std::string format_options(const EntryOptions& options);

struct Shard {
  int index = 1;  // 1..count
  int count = 1;
  bool contains(size_t position) const {
    return static_cast<int>(position % static_cast<size_t>(count)) == index - 1;
  }
};
// "I/N" with 1 <= I <= N; anything else is a UsageError that says what was expected.
Shard parse_shard(std::string_view text);

}  // namespace tunebed::cli
