// check-corpus: every kernel of a corpus compiled and run under several opt sequences, each
// result compared with the AST interpreter's on the same seeded inputs.
//
// For one kernel the variants are: no opts, tinygrad's hand-coded opts, the opts tinygrad
// recorded for it (when the corpus has them; "illegal" when tunebed's rules refuse them, which is
// an outcome, not a failure) and K random legal sequences (core/opt/actions.hpp). Variants that
// render to the same source run once. Inputs are seeded random data (core/engine's fill_random),
// every buffer is compared, inputs included, and DEFINE_VARs take their minimum.
//
// Compiling is where the time goes (one clang run per source, ~0.3 s of fixed cost each), so the
// variants of a batch of kernels are compiled as ONE translation unit (KernelCompiler::
// compile_batch); a unit that fails is split, by kernel then by variant, to place the error.
//
// Isolation: each batch is checked in a fresh child of a Supervisor (search/supervisor.hpp), so
// that a kernel which corrupts memory without crashing cannot taint the next batch. The child
// reports every step as a frame: `variant` for each variant, `begin` before a step that could
// crash or hang, `done` with its outcome. A child that dies names the variant it was in
// (`crash`); one silent past the timeout is killed with its process group, clang included
// (`timeout`); a fresh child takes up the variants not yet settled. Nothing a kernel does ends
// the run.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/imports/corpus.hpp"
#include "results/records.hpp"

namespace tunebed::cli {

using results::CandidateStatus;

// What checking one variant found: a CandidateStatus, as the tuner records a candidate, or an
// outcome only a check has.
enum class Outcome : uint8_t {
  // CandidateStatus's first five, value for value (a check never stops a launch)
  ok,
  compile_error,
  crash,
  timeout,
  wrong,
  // a check's own
  unsupported,   // codegen or the interpreter refuses the kernel
  illegal,       // tinygrad's recorded opts break tunebed's rules: not a failure
  unchecked,     // compiled, not run: past the run limit
  import_error,  // the corpus line did not import
};
static_assert(static_cast<int>(Outcome::wrong) == static_cast<int>(CandidateStatus::wrong));
// Every outcome, in the order of check-corpus's columns.
inline constexpr Outcome kOutcomes[] = {Outcome::ok,      Outcome::wrong,     Outcome::compile_error,
                                        Outcome::crash,   Outcome::timeout,   Outcome::unsupported,
                                        Outcome::illegal, Outcome::unchecked, Outcome::import_error};
std::string outcome_name(Outcome o);  // "ok", "wrong", "compile_error", ...

enum class OptsKind { none, hand_coded, tinygrad, random };
inline constexpr int kOptsKinds = 4;
const char* opts_kind_name(OptsKind k);  // "none", "hand-coded", "tinygrad", "random"
// The inverses; throw std::invalid_argument for a name that is none of them.
Outcome outcome_from_name(const std::string& name);
OptsKind opts_kind_from_name(const std::string& name);

struct VariantResult {
  OptsKind kind = OptsKind::none;
  std::string opts;  // tunebed's opts text (tinygrad's, as recorded, when illegal)
  Outcome outcome = Outcome::ok;
  std::string message;  // empty when ok; one line
};

// Outcomes that are findings: the compiled kernel disagrees with the interpreter, or dies.
inline bool is_finding(Outcome o) { return o == Outcome::wrong || o == Outcome::crash; }

struct CheckOptions {
  int random_opts = 0;    // K
  uint64_t seed = 0;      // inputs and random opts derive from it and the kernel's hash
  double timeout_s = 60;  // a step silent this long (a compile: per 4 variants) is killed
  int jobs = 1;           // checking processes at once
  int batch = 16;         // kernels per process, their variants compiled as one unit
  // A kernel of more iterations than this is checked on a sample of its output elements: the
  // interpreter's exact run (~1 µs an iteration) computes every k-th, k odd, to stay near it.
  int64_t interpreter_limit = int64_t{1} << 22;
  // A kernel of more iterations than this (tinygrad's arange-style kernels reach 10^12) is
  // compiled but not run: its variants are `unchecked`.
  int64_t run_limit = int64_t{1} << 30;
};

// Hears each kernel as it finishes: its index in the list, its results, how many are done so far.
using KernelDone = std::function<void(size_t kernel, const std::vector<VariantResult>& results, int done)>;

// Checks every kernel in forked processes, options.jobs at once; returns each kernel's variant
// results, in kernel order. SIGINT or SIGTERM stops the run: kernels not finished by then come
// back with no results.
std::vector<std::vector<VariantResult>> check_kernels(const std::vector<imports::CorpusKernel>& kernels,
                                                      const CheckOptions& options,
                                                      const KernelDone& on_kernel = {});

}  // namespace tunebed::cli
