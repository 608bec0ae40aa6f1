#include "harness/manifest.hpp"

#include <charconv>
#include <fstream>
#include <sstream>

#include "harness/cli.hpp"

namespace tunebed::cli {
namespace {

std::vector<std::string> tokens(std::string_view line) {
  std::vector<std::string> out;
  std::istringstream in{std::string(line)};
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

template <typename T>
std::optional<T> number(std::string_view text) {
  T v{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

// One line's parse, so each error can carry the origin.
class LineParser {
 public:
  LineParser(std::string origin, const std::filesystem::path& base)
      : origin_(std::move(origin)), base_(base) {}

  ManifestEntry parse(const std::vector<std::string>& t) {
    ManifestEntry e;
    e.origin = origin_;
    size_t next = 1;
    if (t[0] == "ast" || t[0] == "corpus" || t[0] == "kernel") {
      e.kind = t[0] == "ast"      ? ManifestEntry::Kind::ast
               : t[0] == "corpus" ? ManifestEntry::Kind::corpus
                                  : ManifestEntry::Kind::kernel;
      if (t.size() < 2 || is_option(t[1]))
        fail("'" + t[0] + "' needs " + (e.kind == ManifestEntry::Kind::kernel ? "a kernel hash" : "a path"));
      e.value = e.kind == ManifestEntry::Kind::kernel ? t[1] : (base_ / t[1]).lexically_normal().string();
      next = 2;
    } else if (is_option(t[0])) {
      fail("'" + t[0] +
           "' is an option, but a line starts with its entry (a workload, ast, corpus or kernel)");
    } else {
      e.kind = ManifestEntry::Kind::workload;
      e.value = t[0];
    }
    for (size_t i = next; i < t.size(); i++) option(e, t[i]);
    return e;
  }

 private:
  static bool is_option(const std::string& token) {
    const size_t eq = token.find('=');
    return eq != std::string::npos && token.find(':') > eq;  // matmul:M=4 is a workload
  }

  [[noreturn]] void fail(const std::string& what) const { throw UsageError(origin_ + ": " + what); }

  void option(ManifestEntry& e, const std::string& token) {
    const size_t eq = token.find('=');
    if (eq == std::string::npos || eq == 0) fail("expected KEY=VALUE after the entry, got '" + token + "'");
    const std::string key = token.substr(0, eq), value = token.substr(eq + 1);
    auto bad = [&](const std::string& expected) {
      fail("bad " + key + " '" + value + "' (expected " + expected + ")");
    };
    auto corpus_only = [&] {
      if (e.kind != ManifestEntry::Kind::corpus)
        fail("'" + token + "': " + key + "= applies to corpus entries only");
    };
    if (key == "strategy") {
      if (value.empty()) bad("a strategy name");
      e.options.strategy = value;
    } else if (key == "budget") {
      auto n = number<int64_t>(value);
      if (!n || *n < 1) bad("a whole number of candidates, at least 1");
      e.options.budget = n;
    } else if (key == "seconds") {
      auto s = number<double>(value);
      if (!s || !(*s > 0)) bad("a positive number of seconds");
      e.options.seconds = s;
    } else if (key == "width") {
      auto w = number<int>(value);
      if (!w || *w < 1) bad("a beam width, at least 1");
      e.options.width = w;
    } else if (key == "sample") {
      corpus_only();
      auto n = number<int64_t>(value);
      if (!n || *n < 1) bad("a whole number of kernels, at least 1");
      e.sample = n;
    } else if (key == "seed") {
      corpus_only();
      auto s = number<uint64_t>(value);
      if (!s) bad("a whole number");
      e.sample_seed = *s;
    } else if (key == "filter") {
      corpus_only();
      if (value != "reduce") bad("reduce");
      e.reduce_only = true;
    } else {
      fail("unknown option '" + token +
           "' (expected strategy=, budget=, seconds=, width=, or for a corpus sample=, seed=, filter=)");
    }
  }

  const std::string origin_;
  const std::filesystem::path& base_;
};

}  // namespace

std::vector<ManifestEntry> parse_manifest(std::string_view text, const std::string& name,
                                          const std::filesystem::path& base) {
  std::vector<ManifestEntry> entries;
  int number = 0;
  for (size_t start = 0; start <= text.size(); number++) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    line = line.substr(0, line.find('#'));
    std::vector<std::string> t = tokens(line);
    if (t.empty()) continue;
    entries.push_back(LineParser(name + ":" + std::to_string(number + 1), base).parse(t));
  }
  return entries;
}

std::vector<ManifestEntry> read_manifest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot read manifest '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_manifest(text.str(), path, std::filesystem::path(path).parent_path());
}

std::string format_options(const EntryOptions& o) {
  std::ostringstream out;
  if (o.strategy) out << " strategy=" << *o.strategy;
  if (o.budget) out << " budget=" << *o.budget;
  if (o.seconds) {
    char buf[32];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, *o.seconds);  // shortest, exact
    out << " seconds=" << std::string_view(buf, static_cast<size_t>(end - buf));
  }
  if (o.width) out << " width=" << *o.width;
  return out.str();
}

Shard parse_shard(std::string_view text) {
  const std::string shown(text);
  const size_t slash = text.find('/');
  std::optional<int> i, n;
  if (slash != std::string_view::npos) {
    i = number<int>(text.substr(0, slash));
    n = number<int>(text.substr(slash + 1));
  }
  if (!i || !n || *n < 1)
    throw UsageError("--shard '" + shown + "': expected I/N, the I-th of N slices (1 <= I <= N)");
  if (*i < 1 || *i > *n)
    throw UsageError("--shard '" + shown + "': I must be between 1 and " + std::to_string(*n) +
                     " (shards are numbered from 1)");
  return {*i, *n};
}

}  // namespace tunebed::cli
