// `tunebed fuzz`: fuzzing campaigns over the libFuzzer targets of a sanitizer build, with every
// finding recorded in the tuning database (results/findings.hpp); `fuzz repro ID` and
// `fuzz minimize ID` work on a stored finding. fuzz/README.md describes the nightly mode.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <iterator>

#include "harness/db_cli.hpp"
#include "harness/fuzz_campaign.hpp"
#include "results/findings.hpp"

namespace tunebed::cli {
namespace {

void add_fuzzers_option(CommandLine& cl) {
  cl.options.add_options()("fuzzers", po::value<std::string>()->value_name("DIR"),
                           "the fuzz_* binaries (default: the fuzz/ folder of this tunebed's build tree)")(
      "timeout", po::value<int>()->default_value(25)->value_name("S"),
      "one input running longer is a timeout");
}

fs::path fuzzers_dir(const po::variables_map& vm) {
  return vm.count("fuzzers") ? fs::path(vm["fuzzers"].as<std::string>()) : default_fuzzer_dir();
}

int positive(const po::variables_map& vm, const char* name) {
  const int v = vm[name].as<int>();
  if (v < 1) throw UsageError("--" + std::string(name) + " must be at least 1, got " + std::to_string(v));
  return v;
}

std::string size_text(size_t bytes) { return std::to_string(bytes) + " bytes"; }

results::Finding stored_finding(results::TuningDb& db, const std::string& id_text) {
  int64_t id = 0;
  try {
    size_t used = 0;
    id = std::stoll(id_text, &used);
    if (used != id_text.size()) throw std::invalid_argument(id_text);
  } catch (const std::exception&) {
    throw UsageError("a finding id is a number, got '" + id_text + "'");
  }
  auto f = db.findings().get(id);
  if (!f)
    throw UsageError("no finding " + id_text + " in " + db.path() + " (tunebed query findings lists them)");
  return *f;
}

void print_outcome(const Outcome& o) {
  if (!o.failed) {
    std::cout << "runs clean\n";
    return;
  }
  std::cout << o.kind << ": " << o.signature << "\n";
  if (o.max_error) std::cout << "max_error: " << *o.max_error << "\n";
}

int repro(const std::vector<std::string>& args) {
  CommandLine cl{.synopsis = "tunebed fuzz repro ID [--db F] [--fuzzers DIR]",
                 .description =
                     "Run finding ID's stored input through its fuzz target once and print what\n"
                     "happens: exit 1 if it still fails, 0 if it now runs clean (fixed)."};
  cl.options.add_options()("id", po::value<std::string>()->required(),
                           "the finding (tunebed query findings)");
  cl.positional.add("id", 1);
  add_db_option(cl);
  add_fuzzers_option(cl);
  cl.options.add_options()("verbose,v", "print the fuzzer's output too");
  cl.examples = {"tunebed fuzz repro 3", "tunebed fuzz repro 3 --fuzzers build-asan/fuzz -v"};
  auto vm = parse(cl, args);
  if (!vm) return 0;
  auto db = open_for_reading((*vm)["db"].as<std::string>());
  const results::Finding f = stored_finding(db, (*vm)["id"].as<std::string>());
  const FuzzerBinary fuzzer = find_fuzzer(fuzzers_dir(*vm), f.target);
  std::cout << "finding " << f.id << ": fuzz_" << f.target << " " << f.kind << ": " << f.signature << " ("
            << size_text(f.input.size()) << ")\n";
  const Outcome o = replay(fuzzer, f.input, positive(*vm, "timeout"));
  print_outcome(o);
  if (vm->count("verbose")) std::cout << o.detail << "\n";
  if (o.failed && (o.kind != f.kind || o.signature != f.signature))
    std::cout << "(fails another way than recorded)\n";
  return o.failed ? 1 : 0;
}

int minimize_cmd(const std::vector<std::string>& args) {
  CommandLine cl{.synopsis = "tunebed fuzz minimize ID [--time S] [--db F] [--fuzzers DIR]",
                 .description =
                     "Shrink finding ID's input while it fails the same way (kind and signature):\n"
                     "libFuzzer's -minimize_crash, then dropping and zeroing bytes, which the generators\n"
                     "read as fewer ops, smaller shapes and fewer opts. The smaller input replaces the\n"
                     "stored one."};
  cl.options.add_options()("id", po::value<std::string>()->required(), "the finding")(
      "time", po::value<int>()->default_value(60)->value_name("S"), "budget in seconds");
  cl.positional.add("id", 1);
  add_db_option(cl);
  add_fuzzers_option(cl);
  cl.examples = {"tunebed fuzz minimize 3 --time 30"};
  auto vm = parse(cl, args);
  if (!vm) return 0;
  auto db = open_for_writing((*vm)["db"].as<std::string>());
  const results::Finding f = stored_finding(db, (*vm)["id"].as<std::string>());
  const FuzzerBinary fuzzer = find_fuzzer(fuzzers_dir(*vm), f.target);
  const int timeout = positive(*vm, "timeout");
  const Outcome now = replay(fuzzer, f.input, timeout);
  if (!now.failed || now.kind != f.kind || now.signature != f.signature) {
    std::cout << "finding " << f.id << " does not reproduce as recorded: ";
    print_outcome(now);
    return 1;
  }
  const auto [input, outcome] = minimize(fuzzer, f.input, now, positive(*vm, "time"), timeout);
  const auto nonzero = [](const std::string& s) {
    return std::count_if(s.begin(), s.end(), [](char c) { return c != 0; });
  };
  std::cout << "finding " << f.id << ": " << size_text(f.input.size()) << " (" << nonzero(f.input)
            << " nonzero) -> " << size_text(input.size()) << " (" << nonzero(input) << " nonzero)\n";
  if (input != f.input) db.findings().replace_input(f.id, input, outcome.detail);
  return 0;
}

int run_campaign(const std::vector<std::string>& args) {
  CommandLine cl{
      .synopsis =
          "tunebed fuzz [TARGET...] --time S [--jobs N] [--db F] [--corpus-dir D] [--campaign]\n"
          "       tunebed fuzz repro ID | tunebed fuzz minimize ID",
      .description =
          "Fuzz each TARGET (default: every fuzz_* binary found) for S seconds on its kept corpus in\n"
          "D/<target> (seeded from fuzz/corpus/<target>, then merged with -merge=1 so only inputs\n"
          "adding coverage stay), replay every input it stops on, and record each finding in the\n"
          "database, deduplicated by target, kind and signature. Needs a libFuzzer build\n"
          "(-DTUNEBED_SANITIZE=ON -DTUNEBED_LIBFUZZER=ON). With --jobs N > 1 libFuzzer's fork mode\n"
          "runs N processes and keeps going after a finding; with one job a target stops at its first.\n"
          "--campaign is the nightly mode: the inputs stay in the findings folder and the exit status\n"
          "is 1 when any finding is new to the database."};
  cl.options.add_options()("target", po::value<std::vector<std::string>>()->value_name("TARGET"),
                           "fuzz targets")("time", po::value<int>()->required()->value_name("S"),
                                           "seconds per target")(
      "jobs", po::value<int>()->default_value(1)->value_name("N"), "fuzzing processes per target")(
      "corpus-dir", po::value<std::string>()->default_value("fuzz/work")->value_name("D"), "kept corpora")(
      "seeds", po::value<std::string>()->default_value("fuzz")->value_name("DIR"),
      "where corpus/<target>/ and <target>.dict are (the source tree's fuzz/)")(
      "findings-dir", po::value<std::string>()->default_value("fuzz/findings")->value_name("DIR"),
      "where the inputs a fuzzer stops on go")("campaign",
                                               "nightly mode: keep the inputs, exit 1 on a new finding");
  cl.positional.add("target", -1);
  add_db_option(cl);
  add_fuzzers_option(cl);
  cl.examples = {"tunebed fuzz kernel opts --time 60 --fuzzers build-asan/fuzz",
                 "tunebed fuzz --time 600 --jobs 2 --campaign --db nightly.db --fuzzers build-asan/fuzz"};
  auto vm = parse(cl, args);
  if (!vm) return 0;
  const fs::path dir = fuzzers_dir(*vm);
  std::vector<std::string> targets =
      vm->count("target") ? (*vm)["target"].as<std::vector<std::string>>() : list_fuzz_targets(dir);
  if (targets.empty()) throw UsageError("no fuzz_* binaries in " + dir.string() + "; give --fuzzers DIR");
  const CampaignOptions opt{.seconds = positive(*vm, "time"),
                            .jobs = positive(*vm, "jobs"),
                            .timeout_s = positive(*vm, "timeout"),
                            .corpus_dir = (*vm)["corpus-dir"].as<std::string>(),
                            .seeds_dir = (*vm)["seeds"].as<std::string>(),
                            .findings_dir = (*vm)["findings-dir"].as<std::string>()};
  std::vector<FuzzerBinary> fuzzers;
  for (const std::string& t : targets) fuzzers.push_back(find_fuzzer(dir, t));
  for (const FuzzerBinary& f : fuzzers)
    if (!f.libfuzzer)
      throw UsageError(
          f.exe.string() +
          " is replay-only (built without libFuzzer): it can replay inputs but not "
          "fuzz; build with -DTUNEBED_SANITIZE=ON -DTUNEBED_LIBFUZZER=ON and pass its fuzz/ with --fuzzers");
  const bool campaign = vm->count("campaign") > 0;
  auto db = results::TuningDb::open((*vm)["db"].as<std::string>(), results::TuningDb::Mode::create);
  results::Findings findings = db.findings();
  int new_findings = 0;
  for (const FuzzerBinary& fuzzer : fuzzers) {
    const TargetRun run = run_target(fuzzer, opt);
    std::cout << "fuzz_" << run.target << ": " << static_cast<int>(run.seconds) << " s, " << run.execs
              << " execs (" << static_cast<int64_t>(run.execs / std::max(run.seconds, 1e-3)) << "/s), "
              << run.artifacts.size() << " inputs stopped on\n";
    for (const fs::path& artifact : run.artifacts) {
      std::ifstream in(artifact, std::ios::binary);
      const std::string input((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      Outcome o = replay(fuzzer, input, opt.timeout_s);
      if (!o.failed) {  // it failed only after the inputs before it: keep what libFuzzer said
        const std::string prefix =
            artifact.filename().string().substr(0, artifact.filename().string().find('-'));
        o.kind = prefix == "leak" || prefix == "timeout" ? prefix : "crash";
        o.signature = "does not reproduce alone (" + prefix + ")";
      }
      const auto rec = findings.record({run.target, o.kind, o.signature, input, o.detail, o.max_error});
      new_findings += rec.is_new;
      std::cout << "  finding " << rec.id << (rec.is_new ? " NEW " : " seen ") << o.kind << ": "
                << o.signature << " (" << size_text(input.size()) << ")"
                << (campaign ? " " + artifact.string() : "") << "\n";
      if (!campaign) fs::remove(artifact);  // the database has it
    }
  }
  return campaign && new_findings > 0 ? 1 : 0;
}

int run(const std::vector<std::string>& args) {
  if (!args.empty() && (args[0] == "repro" || args[0] == "minimize"))
    return run_subcommand("fuzz",
                          {{"repro", "replay a finding's input", repro},
                           {"minimize", "shrink a finding's input", minimize_cmd}},
                          args);
  try {
    return run_campaign(args);
  } catch (const results::DbError& e) {
    throw UsageError(e.what());
  }
}

const Registrar reg{"fuzz", "run fuzzing campaigns, record findings; repro and minimize them", run};

}  // namespace
}  // namespace tunebed::cli
