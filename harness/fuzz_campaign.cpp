// Fuzzer binaries, campaign runs, replay, classification and shrinking (fuzz_campaign.hpp).
#include "harness/fuzz_campaign.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <sstream>

#include "core/runtime/subprocess.hpp"
#include "harness/cli.hpp"

namespace tunebed::cli {
namespace {

using Clock = std::chrono::steady_clock;

// argv under coreutils' timeout: a fuzzer that hangs outside libFuzzer's own watchdog (a replay
// build has none) is killed, and the exit status says so (124, or 137 after the -k grace).
std::vector<std::string> with_timeout(int seconds, std::vector<std::string> argv) {
  std::vector<std::string> out{"timeout", "-k", "5", std::to_string(seconds)};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary);
  out << bytes;
  if (!out.flush()) throw std::runtime_error("cannot write " + p.string());
}

// A temporary file that goes away with its holder.
struct TempFile {
  fs::path path;
  explicit TempFile(const std::string& bytes) {
    static std::atomic<int> counter{0};
    path = fs::temp_directory_path() /
           ("tunebed-fuzz-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    write_file(path, bytes);
  }
  ~TempFile() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string tail(const std::string& s, size_t n) {
  return s.size() <= n ? s : "..." + s.substr(s.size() - n);
}

// Numbers that are not part of a name (int32 stays) become N: addresses, sizes and values differ
// between inputs that hit one bug.
std::string normalize(std::string s) {
  static const std::regex number(R"((^|[^A-Za-z_0-9])-?(0x[0-9a-fA-F]+|[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?))");
  s = std::regex_replace(s, number, "$1N");
  return s.size() > 240 ? s.substr(0, 240) : s;
}

// The top frames of the first stack trace after offset FROM, as "f < g < h": function names only
// (no addresses, arguments or paths), skipping the sanitizer, libFuzzer and libc frames.
std::string top_frames(const std::string& output, size_t from) {
  static const std::regex frame(R"(^\s*#\d+ 0x[0-9a-f]+ in (\S+))");
  std::istringstream in(output.substr(from));
  std::string line, out;
  int kept = 0;
  bool in_stack = false;
  while (kept < 3 && std::getline(in, line)) {
    std::smatch m;
    if (!std::regex_search(line, m, frame)) {
      if (in_stack) break;  // the first stack ended
      continue;
    }
    in_stack = true;
    std::string fn = m[1];
    fn = fn.substr(0, fn.find('('));
    for (const char* skip :
         {"__sanitizer", "__asan", "__ubsan", "__lsan", "__interceptor", "fuzzer::", "abort", "raise",
          "__GI_", "__libc", "__cxa", "std::terminate", "std::__terminate", "malloc", "operator new",
          "calloc", "realloc", "tunebed::fuzz::report_finding"})
      if (fn.rfind(skip, 0) == 0) fn.clear();
    if (fn.empty()) continue;
    out += (kept++ ? " < " : "") + fn;
  }
  return out.empty() ? "no stack" : out;
}

}  // namespace

fs::path default_fuzzer_dir() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "fuzz";
  return (self.parent_path().parent_path() / "fuzz").lexically_normal();
}

std::vector<std::string> list_fuzz_targets(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("fuzz_", 0) == 0 && e.is_regular_file() && access(e.path().c_str(), X_OK) == 0)
      out.push_back(name.substr(5));
  }
  std::sort(out.begin(), out.end());
  return out;
}

FuzzerBinary find_fuzzer(const fs::path& dir, const std::string& target) {
  const std::string name = target.rfind("fuzz_", 0) == 0 ? target.substr(5) : target;
  const fs::path exe = dir / ("fuzz_" + name);
  if (!fs::is_regular_file(exe)) {
    std::string known;
    for (const std::string& t : list_fuzz_targets(dir)) known += (known.empty() ? "" : ", ") + t;
    throw UsageError("no fuzz target '" + target + "' in " + dir.string() +
                     (known.empty() ? " (no fuzz_* binaries there; build them, or give --fuzzers DIR)"
                                    : " (there: " + known + ")"));
  }
  // libFuzzer answers -help=1 with its usage; the replay main takes it for a missing file.
  const ProcessResult help = run_process(with_timeout(30, {exe.string(), "-help=1"}));
  return {name, exe, help.output.find("Usage:") != std::string::npos};
}

Outcome classify(const std::string& output, int exit_code) {
  Outcome o;
  o.detail = tail(output, 6000);
  if (exit_code == 0) return o;
  o.failed = true;
  static const std::regex own(R"(tunebed-finding: (\w+): ([^\n]*))"), max_error(R"(\nmax_error: (\S+))"),
      asan(R"(ERROR: AddressSanitizer: ([\w-]+))"), ubsan(R"(([\w.+-]+):(\d+):\d+: runtime error: ([^\n]*))"),
      uncaught(R"(terminate called after throwing an instance of '([^']*)'\s*\n\s*what\(\):\s*([^\n]*))");
  std::smatch m;
  if (std::regex_search(output, m, own)) {
    o.kind = m[1];
    o.signature = normalize(m[2]);
    if (std::regex_search(output, m, max_error)) o.max_error = std::stod(m[1]);
  } else if (output.find("ERROR: libFuzzer: timeout") != std::string::npos || exit_code == 124 ||
             exit_code == 137) {
    o.kind = "timeout";
    o.signature = "timeout";
  } else if (size_t at = output.find("ERROR: LeakSanitizer"); at != std::string::npos) {
    o.kind = "leak";
    o.signature = "LeakSanitizer: " + top_frames(output, at);
  } else if (std::regex_search(output, m, asan)) {
    o.kind = "crash";
    o.signature = "AddressSanitizer " + m[1].str() + ": " + top_frames(output, m.position(0));
  } else if (std::regex_search(output, m, ubsan)) {
    o.kind = "crash";
    o.signature = normalize("UBSan " + m[1].str() + ":" + m[2].str() + ": " + m[3].str());
  } else if (std::regex_search(output, m, uncaught)) {
    o.kind = "crash";
    o.signature = normalize("uncaught " + m[1].str() + ": " + m[2].str());
  } else if (size_t at = output.find("deadly signal"); at != std::string::npos) {
    o.kind = "crash";
    o.signature = "deadly signal: " + top_frames(output, at);
  } else {
    o.kind = "crash";
    o.signature = "exit status " + std::to_string(exit_code);
  }
  return o;
}

Outcome replay(const FuzzerBinary& fuzzer, const std::string& input, int timeout_s) {
  const TempFile file(input);
  std::vector<std::string> argv{fuzzer.exe.string()};
  if (fuzzer.libfuzzer) argv.push_back("-timeout=" + std::to_string(timeout_s));
  argv.push_back(file.path.string());
  const ProcessResult r = run_process(with_timeout(timeout_s + 30, argv));
  return classify(r.output, r.exit_code);
}

TargetRun run_target(const FuzzerBinary& fuzzer, const CampaignOptions& opt) {
  if (!fuzzer.libfuzzer)
    throw UsageError(fuzzer.exe.string() +
                     " is a replay-only binary (a build without libFuzzer); configure a build with "
                     "-DTUNEBED_SANITIZE=ON -DTUNEBED_LIBFUZZER=ON and give its fuzz/ folder with --fuzzers");
  const fs::path corpus = opt.corpus_dir / fuzzer.target, artifacts = opt.findings_dir / fuzzer.target,
                 seeds = opt.seeds_dir / "corpus" / fuzzer.target,
                 dict = opt.seeds_dir / (fuzzer.target + ".dict");
  fs::create_directories(corpus);
  fs::create_directories(artifacts);
  std::set<fs::path> before;
  for (const auto& e : fs::directory_iterator(artifacts)) before.insert(e.path());

  std::vector<std::string> argv{fuzzer.exe.string(), "-max_total_time=" + std::to_string(opt.seconds),
                                "-timeout=" + std::to_string(opt.timeout_s), "-print_final_stats=1",
                                "-artifact_prefix=" + artifacts.string() + "/"};
  if (fs::is_regular_file(dict)) argv.push_back("-dict=" + dict.string());
  if (opt.jobs > 1)
    argv.insert(argv.end(), {"-fork=" + std::to_string(opt.jobs), "-ignore_crashes=1", "-ignore_timeouts=1",
                             "-ignore_ooms=1"});
  argv.push_back(corpus.string());
  if (fs::is_directory(seeds)) argv.push_back(seeds.string());  // read only: new inputs go to the first

  TargetRun run{.target = fuzzer.target};
  const auto t0 = Clock::now();
  const ProcessResult r = run_process(with_timeout(opt.seconds + opt.timeout_s + 120, argv));
  run.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  run.exit_code = r.exit_code;
  static const std::regex executed(R"((?:stat::number_of_executed_units: |\n#)(\d+))");
  for (auto it = std::sregex_iterator(r.output.begin(), r.output.end(), executed);
       it != std::sregex_iterator(); ++it)
    run.execs = std::max<int64_t>(run.execs, std::stoll((*it)[1]));

  // Keep only the inputs that add coverage: merge the corpus into an empty folder, swap it in.
  const fs::path merged = corpus.string() + ".merge";
  fs::remove_all(merged);
  fs::create_directories(merged);
  const ProcessResult m = run_process(
      with_timeout(600, {fuzzer.exe.string(), "-merge=1", "-timeout=" + std::to_string(opt.timeout_s),
                         merged.string(), corpus.string()}));
  if (m.exit_code == 0) {
    fs::remove_all(corpus);
    fs::rename(merged, corpus);
  } else {
    fs::remove_all(merged);
  }
  for (const auto& e : fs::directory_iterator(artifacts))
    if (!before.count(e.path())) run.artifacts.push_back(e.path());
  std::sort(run.artifacts.begin(), run.artifacts.end());
  return run;
}

std::pair<std::string, Outcome> minimize(const FuzzerBinary& fuzzer, const std::string& input,
                                         const Outcome& expected, int seconds, int timeout_s) {
  const auto deadline = Clock::now() + std::chrono::seconds(seconds);
  std::string best = input;
  Outcome best_outcome = expected;
  auto try_input = [&](const std::string& candidate) {
    Outcome o = replay(fuzzer, candidate, timeout_s);
    if (!o.failed || o.kind != expected.kind || o.signature != expected.signature) return false;
    best = candidate;
    best_outcome = std::move(o);
    return true;
  };
  // libFuzzer's own minimiser first: fast, but it accepts any crash, so its result is checked.
  if (fuzzer.libfuzzer && expected.kind != "timeout" && expected.kind != "leak") {
    const TempFile in(input), out("");
    run_process(with_timeout(
        seconds / 2 + timeout_s + 30,
        {fuzzer.exe.string(), "-minimize_crash=1", "-max_total_time=" + std::to_string(seconds / 2),
         "-timeout=" + std::to_string(timeout_s), "-exact_artifact_path=" + out.path.string(),
         in.path.string()}));
    const std::string shrunk = read_file(out.path);
    if (!shrunk.empty() && shrunk.size() < best.size()) try_input(shrunk);
  }
  // Structural: drop chunks, then zero them (halving the chunk), while the bug stays the same.
  for (bool zeroing : {false, true}) {
    for (size_t chunk = std::max<size_t>(1, best.size() / 2);; chunk /= 2) {
      for (size_t pos = 0; pos < best.size() && Clock::now() < deadline;) {
        const size_t n = std::min(chunk, best.size() - pos);
        std::string candidate = best;
        if (zeroing) {
          if (std::all_of(best.begin() + pos, best.begin() + pos + n, [](char c) { return c == 0; })) {
            pos += n;
            continue;
          }
          std::fill(candidate.begin() + pos, candidate.begin() + pos + n, '\0');
        } else {
          candidate.erase(pos, n);
        }
        if (!try_input(candidate) || zeroing) pos += n;
      }
      if (chunk <= 1 || Clock::now() >= deadline) break;
    }
  }
  return {best, best_outcome};
}

}  // namespace tunebed::cli
