// `tunebed import FILE[.gz] [--db F] [--out DIR] [-v]`: import a corpus of tinygrad kernel ASTs
// (tinygrad's sops.gz, process-replay captures) as tunebed kernels, deduplicated by kernel hash,
// into the tuning database's kernels table and/or as canonical AST files DIR/<hash>.uop.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "core/imports/corpus.hpp"
#include "core/ir/text.hpp"
#include "core/opt/cost.hpp"
#include "harness/cli.hpp"
#include "results/tuning_db.hpp"

namespace tunebed::cli {
namespace {

namespace fs = std::filesystem;

void write_db(const std::string& path, const std::string& file, const imports::CorpusImport& r) {
  std::optional<results::TuningDb> db;
  try {
    db.emplace(results::TuningDb::open(path, results::TuningDb::Mode::create));
  } catch (const results::DbError& e) {
    throw UsageError(e.what());
  }
  for (const imports::CorpusKernel& k : r.kernels) {
    // core/imports sits under core/opt, which counts the work: the cost is added here.
    KernelCost cost;
    try {
      cost = kernel_cost(parse_uop(k.text));
    } catch (const std::invalid_argument& e) {
      std::cerr << "warning: line " << k.line << ": no flops/bytes: " << e.what() << "\n";
    }
    db->upsert_kernel({.hash = k.hash,
                       .ast = k.text,
                       .shape = k.shape,
                       .flops = cost.flops,
                       .bytes = cost.bytes,
                       .source = file + ":" + std::to_string(k.line)});
  }
}

void write_files(const fs::path& dir, const imports::CorpusImport& r) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw UsageError("--out: cannot create '" + dir.string() + "': " + ec.message());
  for (const imports::CorpusKernel& k : r.kernels) {
    const fs::path p = dir / (k.hash + ".uop");
    std::ofstream out(p);
    out << k.text;
    if (!k.text.ends_with('\n')) out << '\n';
    if (!out) throw UsageError("--out: cannot write '" + p.string() + "'");
  }
}

int run(const std::vector<std::string>& args) {
  CommandLine cl{
      .synopsis = "tunebed import FILE[.gz] [--db FILE] [--out DIR] [-v]",
      .description =
          "Import tinygrad kernel ASTs, one repr(UOp) per line (plain or gzip text, as tinygrad's\n"
          "extra/datasets/sops.gz), as tunebed kernels. Each is mapped onto tunebed's kernel-AST\n"
          "form, its KernelInfo stripped (its applied_opts are tinygrad's opts for the kernel), and\n"
          "kernels with the same canonical text are imported once. --db adds them to the tuning\n"
          "database's kernels table (created if missing; source FILE:LINE), --out writes each as\n"
          "DIR/<hash>.uop. Prints how many were imported, skipped as duplicates and failed, then\n"
          "one line per failure: `line N: column C: what was wrong`. Failures are reported, not\n"
          "fatal: the exit code is 0 once every line was handled.",
  };
  cl.options.add_options()("file", po::value<std::string>()->required(), "the corpus, plain or .gz")(
      "db", po::value<std::string>(), "tuning database to add the kernels to")(
      "out", po::value<std::string>(), "folder for the canonical AST files <hash>.uop")(
      "verbose,v", po::bool_switch(), "also print the import rate");
  cl.positional.add("file", 1);
  cl.examples = {"tunebed import ../shared/data/tinygrad-sops.gz --db results/tuning.db",
                 "tunebed import tests/data/sops-sample.txt --out /tmp/kernels -v"};
  auto vm = parse(cl, args);
  if (!vm) return 0;
  const std::string file = (*vm)["file"].as<std::string>();

  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> lines;
  try {
    lines = imports::read_lines(file);
  } catch (const imports::CorpusError& e) {
    throw UsageError(e.what());
  }
  const imports::CorpusImport r = imports::import_lines(lines);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (vm->count("db")) write_db((*vm)["db"].as<std::string>(), file, r);
  if (vm->count("out")) write_files((*vm)["out"].as<std::string>(), r);

  std::cout << "imported " << r.kernels.size() << ", duplicates " << r.duplicates << ", failed "
            << r.failures.size() << " (of " << r.lines << " lines)\n";
  for (const imports::CorpusFailure& f : r.failures)
    std::cout << "line " << f.line << ": " << f.message << "\n";
  if ((*vm)["verbose"].as<bool>())
    std::cout << "parsed and mapped " << r.lines << " lines in " << seconds
              << " s: " << static_cast<int64_t>(r.lines / std::max(seconds, 1e-9)) << " kernels/s\n";
  return 0;
}

const Registrar reg{"import", "import tinygrad kernel ASTs (sops.gz) into the tuning DB and/or as .uop files",
                    run};

}  // namespace
}  // namespace tunebed::cli
