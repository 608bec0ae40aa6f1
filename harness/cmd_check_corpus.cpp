// `tunebed check-corpus FILE[.gz]`: import a corpus of tinygrad kernel ASTs and check every kernel
// compiled under no opts, hand-coded opts, tinygrad's recorded opts and K random opt sequences
// against the AST interpreter (harness/corpus_check.hpp), printing counts by opts kind × outcome.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <iterator>
#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "harness/check_log.hpp"
#include "harness/cli.hpp"
#include "harness/corpus_check.hpp"
#include "harness/table_format.hpp"
#include "results/json_lines.hpp"

namespace tunebed::cli {
namespace {

// The lines to check: all, or a seeded sample of the non-blank ones, then the first LIMIT of
// those. Lines left out become blank, so every kernel keeps its line number in the file.
std::vector<std::string> select_lines(std::vector<std::string> lines, int sample, uint64_t seed, int limit) {
  std::vector<size_t> chosen;
  for (size_t i = 0; i < lines.size(); i++)
    if (lines[i].find_first_not_of(" \t\r") != std::string::npos) chosen.push_back(i);
  if (sample >= 0 && static_cast<size_t>(sample) < chosen.size()) {
    std::mt19937_64 rng(seed);
    std::shuffle(chosen.begin(), chosen.end(), rng);
    chosen.resize(static_cast<size_t>(sample));
    std::sort(chosen.begin(), chosen.end());
  }
  if (limit >= 0 && static_cast<size_t>(limit) < chosen.size()) chosen.resize(static_cast<size_t>(limit));
  std::vector<std::string> out(lines.size());
  for (size_t i : chosen) out[i] = std::move(lines[i]);
  return out;
}

struct Failure {
  int line;
  std::string hash;
  VariantResult v;
};

struct Summary {
  int counts[kOptsKinds][std::size(kOutcomes)] = {};  // by OptsKind and Outcome value
  std::vector<Failure> failures;                      // in line order, then variant order
  bool finding = false;
};

Summary summarize(const imports::CorpusImport& imported,
                  const std::vector<std::vector<VariantResult>>& results) {
  Summary s;
  for (size_t k = 0; k < results.size(); k++)
    for (const VariantResult& v : results[k]) {
      s.counts[static_cast<int>(v.kind)][static_cast<int>(v.outcome)]++;
      s.finding = s.finding || is_finding(v.outcome);
      if (v.outcome != Outcome::ok && v.outcome != Outcome::illegal && v.outcome != Outcome::unchecked)
        s.failures.push_back({imported.kernels[k].line, imported.kernels[k].hash, v});
    }
  std::stable_sort(s.failures.begin(), s.failures.end(),
                   [](const Failure& a, const Failure& b) { return a.line < b.line; });
  return s;
}

Table counts_table(const Summary& s, const imports::CorpusImport& imported) {
  Table t{{{"opts"}}};
  for (Outcome o : kOutcomes) t.columns.push_back({outcome_name(o)});
  for (int k = 0; k < kOptsKinds; k++) {
    std::vector<Cell> row{std::string(opts_kind_name(static_cast<OptsKind>(k)))};
    for (Outcome o : kOutcomes) row.push_back(int64_t{s.counts[k][static_cast<int>(o)]});
    t.add_row(std::move(row));
  }
  // Lines that did not import have no variants: they get a row of their own.
  std::vector<Cell> row{std::string("(import)")};
  for (Outcome o : kOutcomes)
    row.push_back(o == Outcome::import_error ? static_cast<int64_t>(imported.failures.size()) : int64_t{0});
  t.add_row(std::move(row));
  return t;
}

Table failures_table(const Summary& s, const imports::CorpusImport& imported) {
  Table t{{{"line"}, id_column("hash"), {"opts_kind"}, {"opts", 60}, {"outcome"}, {"message", 100}}};
  for (const imports::CorpusFailure& f : imported.failures)
    t.add_row({int64_t{f.line}, std::string(""), std::string("-"), std::string(""),
               std::string(outcome_name(Outcome::import_error)), f.message});
  for (const Failure& f : s.failures)
    t.add_row({int64_t{f.line}, f.hash, std::string(opts_kind_name(f.v.kind)), f.v.opts,
               std::string(outcome_name(f.v.outcome)), f.v.message});
  return t;
}

void write_json(const Table& counts, const Table& failures, const imports::CorpusImport& imported,
                int checked, std::ostream& out) {
  auto rows = [](const Table& t) {
    std::string a = "[";
    for (size_t r = 0; r < t.rows.size(); r++) {
      results::JsonRow row;
      for (size_t c = 0; c < t.columns.size(); c++) row.emplace_back(t.columns[c].name, t.rows[r][c]);
      a += (r ? ",\n  " : "\n  ") + results::to_json(row);
    }
    return a + "]";
  };
  out << "{\"lines\": " << imported.lines << ", \"kernels\": " << imported.kernels.size()
      << ", \"checked\": " << checked << ", \"duplicates\": " << imported.duplicates
      << ", \"import_errors\": " << imported.failures.size() << ",\n\"counts\": " << rows(counts)
      << ",\n\"failures\": " << rows(failures) << "}\n";
}

int run(const std::vector<std::string>& args) {
  CommandLine cl{
      .synopsis =
          "tunebed check-corpus FILE[.gz] [--random-opts K] [--jobs N] [--batch N] [--limit N] [--sample N "
          "--seed S]\n"
          "                     [--timeout S] [--run-limit N] [--format table|json] [-v]",
      .description =
          "Import a corpus of tinygrad kernel ASTs (as `tunebed import`) and check every kernel: compiled\n"
          "with no opts, tinygrad's hand-coded opts, the opts tinygrad recorded for it and K random legal\n"
          "opt sequences, each run on seeded random inputs and checked against the AST interpreter's exact\n"
          "run (float64 values with derived error bounds; sampled past --interpreter-limit). Each\n"
          "kernel is checked in a forked process, so a kernel that crashes or hangs is counted (crash,\n"
          "timeout) and the run goes on. Prints counts by opts kind and outcome: ok, wrong,\n"
          "compile_error, crash, timeout, unsupported (codegen or the interpreter refuses the kernel),\n"
          "illegal (tinygrad's opts break tunebed's rules: not a failure), unchecked (a variant whose\n"
          "program runs more than --run-limit loop iterations, compiled but not run) and import_error.\n"
          "-v and\n"
          "--format json also list every failure: line, kernel hash, opts and error. Ctrl-C or SIGTERM\n"
          "stops early and reports the kernels checked so far. Exit codes: 1 when any variant is wrong\n"
          "or crashed, else 130 when interrupted, 2 for bad usage or input, 0 otherwise.",
  };
  cl.options.add_options()("file", po::value<std::string>()->required(), "the corpus, plain or .gz")(
      "random-opts", po::value<int>()->default_value(0), "K: random legal opt sequences per kernel")(
      "jobs", po::value<int>()->default_value(1), "checking processes at once")(
      "batch", po::value<int>()->default_value(16), "kernels per checking process (one clang run)")(
      "limit", po::value<int>()->default_value(-1), "check only the first N (sampled) lines")(
      "sample", po::value<int>()->default_value(-1), "check N lines drawn at random (with --seed)")(
      "seed", po::value<uint64_t>()->default_value(0), "seed of the sample, the inputs and the random opts")(
      "interpreter-limit", po::value<int64_t>()->default_value(int64_t{1} << 22),
      "kernels of more iterations are checked against their no-opts variant")(
      "run-limit", po::value<int64_t>()->default_value(int64_t{1} << 30),
      "variants whose programs run more loop iterations are compiled, not run (unchecked)")(
      "timeout", po::value<double>()->default_value(60),
      "seconds a step may go without progress (compiling: per 4 variants)")(
      "format", po::value<std::string>()->default_value("table"), "table or json")(
      "log", po::value<std::string>()->default_value(""),
      "append each kernel's results to this JSON-lines file; kernels it has are not checked again")(
      "verbose,v", po::bool_switch(), "list every failure and print progress on stderr");
  cl.positional.add("file", 1);
  cl.examples = {
      "tunebed check-corpus tests/data/sops-sample.txt --random-opts 2 -v",
      "tunebed check-corpus ../shared/data/tinygrad-sops.gz --random-opts 20 --jobs 2 --format json"};
  auto vm = parse(cl, args);
  if (!vm) return 0;
  const Format format = parse_format((*vm)["format"].as<std::string>());
  if (format == Format::csv) throw UsageError("--format: check-corpus writes table or json");
  CheckOptions options{.random_opts = (*vm)["random-opts"].as<int>(),
                       .seed = (*vm)["seed"].as<uint64_t>(),
                       .timeout_s = (*vm)["timeout"].as<double>(),
                       .jobs = (*vm)["jobs"].as<int>(),
                       .batch = (*vm)["batch"].as<int>(),
                       .interpreter_limit = (*vm)["interpreter-limit"].as<int64_t>(),
                       .run_limit = (*vm)["run-limit"].as<int64_t>()};
  if (options.random_opts < 0) throw UsageError("--random-opts must be >= 0");
  if (options.jobs < 1) throw UsageError("--jobs must be >= 1");
  if (options.batch < 1) throw UsageError("--batch must be >= 1");
  if (options.timeout_s <= 0) throw UsageError("--timeout must be > 0");
  const bool verbose = (*vm)["verbose"].as<bool>();

  std::vector<std::string> lines;
  try {
    lines = imports::read_lines((*vm)["file"].as<std::string>());
  } catch (const imports::CorpusError& e) {
    throw UsageError(e.what());
  }
  lines = select_lines(std::move(lines), (*vm)["sample"].as<int>(), options.seed, (*vm)["limit"].as<int>());
  const imports::CorpusImport imported = imports::import_lines(lines);

  // With --log, kernels an earlier run logged (same seed and K) are taken from the log.
  const std::string log_path = (*vm)["log"].as<std::string>();
  std::map<std::string, std::vector<VariantResult>> logged;
  std::optional<CheckLog> log;
  if (!log_path.empty()) {
    try {
      logged = read_check_log(log_path, options.seed, options.random_opts);
      log.emplace(log_path, options.seed, options.random_opts);
    } catch (const std::runtime_error& e) {
      throw UsageError(e.what());
    }
  }
  std::vector<std::vector<VariantResult>> results(imported.kernels.size());
  std::vector<imports::CorpusKernel> pending;
  std::vector<size_t> pending_index;  // into imported.kernels
  for (size_t k = 0; k < imported.kernels.size(); k++) {
    if (auto it = logged.find(imported.kernels[k].hash); it != logged.end()) {
      results[k] = it->second;
    } else {
      pending.push_back(imported.kernels[k]);
      pending_index.push_back(k);
    }
  }

  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  const int total = static_cast<int>(pending.size());
  if (verbose && total < static_cast<int>(imported.kernels.size()))
    std::cerr << imported.kernels.size() - pending.size() << " kernels taken from " << log_path << "\n";
  const auto fresh =
      check_kernels(pending, options, [&](size_t k, const std::vector<VariantResult>& r, int done) {
        if (log) log->write(pending[k].hash, r);
        if (verbose && (done % 50 == 0 || done == total))
          std::cerr << "checked " << done << "/" << total << " kernels, " << static_cast<int>(elapsed())
                    << " s\n";
      });
  const double seconds = elapsed();
  for (size_t j = 0; j < fresh.size(); j++) results[pending_index[j]] = fresh[j];

  int checked = 0, checked_now = 0;
  for (const auto& r : results) checked += !r.empty();
  for (const auto& r : fresh) checked_now += !r.empty();
  const int kernels = static_cast<int>(imported.kernels.size());
  const Summary s = summarize(imported, results);
  const Table counts = counts_table(s, imported), failures = failures_table(s, imported);
  if (format == Format::json) {
    write_json(counts, failures, imported, checked, std::cout);
  } else {
    if (checked < kernels)
      std::cout << "interrupted: " << checked << " of " << kernels << " kernels checked\n";
    std::cout << imported.lines << " lines: " << kernels << " kernels to check, " << imported.duplicates
              << " duplicates, " << imported.failures.size() << " import errors; " << options.random_opts
              << " random opt sequences each, seed " << options.seed << "\n";
    write_table(counts, format, Verbosity::normal, std::cout);
    if (verbose && !failures.rows.empty()) {
      std::cout << "\n";
      write_table(failures, format, Verbosity::verbose, std::cout);
    }
    std::cout << "checked " << checked_now << " in " << static_cast<int64_t>(seconds) << " s ("
              << static_cast<double>(static_cast<int64_t>(checked_now / std::max(seconds, 1e-9) * 100)) / 100
              << " kernels/s)";
    if (checked_now < checked) std::cout << ", " << checked - checked_now << " from the log";
    std::cout << "\n";
  }
  return s.finding ? 1 : checked < kernels ? 130 : 0;
}

const Registrar reg{"check-corpus", "check every kernel of a tinygrad AST corpus compiled under many opts",
                    run};

}  // namespace
}  // namespace tunebed::cli
