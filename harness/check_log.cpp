#include "harness/check_log.hpp"

#include <optional>
#include <stdexcept>

#include "results/json_lines.hpp"

namespace tunebed::cli {

namespace {

const results::Value& field(const results::JsonRow& row, const std::string& key) {
  for (const auto& [k, v] : row)
    if (k == key) return v;
  throw std::invalid_argument("no \"" + key + "\"");
}

std::string text(const results::JsonRow& row, const std::string& key) {
  const results::Value& v = field(row, key);
  if (!std::holds_alternative<std::string>(v)) throw std::invalid_argument("\"" + key + "\" is not a string");
  return std::get<std::string>(v);
}

int64_t number(const results::JsonRow& row, const std::string& key) {
  const results::Value& v = field(row, key);
  if (!std::holds_alternative<int64_t>(v)) throw std::invalid_argument("\"" + key + "\" is not an integer");
  return std::get<int64_t>(v);
}

}  // namespace

std::map<std::string, std::vector<VariantResult>> read_check_log(const std::string& path, uint64_t seed,
                                                                 int random_opts) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  // hash -> its variants so far; a kernel logged again (an earlier run's partial kernel) starts over
  std::map<std::string, std::vector<std::optional<VariantResult>>> seen;
  std::string line;
  for (int at = 1; std::getline(in, line); at++) {
    if (in.eof()) break;  // no newline after it: cut short by a kill, and checked again this run
    try {
      const results::JsonRow row = results::parse_json_object(line);
      if (text(row, "seed") != std::to_string(seed) || number(row, "random_opts") != random_opts) continue;
      const int64_t i = number(row, "variant"), n = number(row, "variants");
      if (n < 1 || i < 0 || i >= n)
        throw std::invalid_argument("variant " + std::to_string(i) + " of " + std::to_string(n));
      std::vector<std::optional<VariantResult>>& vs = seen[text(row, "hash")];
      if (i == 0 || vs.size() != static_cast<size_t>(n)) vs.assign(static_cast<size_t>(n), std::nullopt);
      vs[static_cast<size_t>(i)] =
          VariantResult{opts_kind_from_name(text(row, "kind")), text(row, "opts"),
                        outcome_from_name(text(row, "outcome")), text(row, "message")};
    } catch (const std::exception& e) {
      throw std::runtime_error("--log " + path + ":" + std::to_string(at) +
                               ": not a check-corpus log line: " + e.what());
    }
  }
  std::map<std::string, std::vector<VariantResult>> logged;
  for (const auto& [hash, vs] : seen) {
    std::vector<VariantResult> complete;
    for (const auto& v : vs)
      if (v) complete.push_back(*v);
    if (complete.size() == vs.size()) logged.emplace(hash, std::move(complete));
  }
  return logged;
}

CheckLog::CheckLog(const std::string& path, uint64_t seed, int random_opts)
    : out_(path, std::ios::binary | std::ios::app), path_(path), seed_(seed), random_opts_(random_opts) {
  if (!out_) throw std::runtime_error("--log: cannot open '" + path + "' for appending");
}

void CheckLog::write(const std::string& hash, const std::vector<VariantResult>& results) {
  std::string lines;
  for (size_t i = 0; i < results.size(); i++) {
    const VariantResult& v = results[i];
    lines += results::to_json({{"hash", hash},
                               {"seed", std::to_string(seed_)},
                               {"random_opts", int64_t{random_opts_}},
                               {"variant", static_cast<int64_t>(i)},
                               {"variants", static_cast<int64_t>(results.size())},
                               {"kind", std::string(opts_kind_name(v.kind))},
                               {"opts", v.opts},
                               {"outcome", std::string(outcome_name(v.outcome))},
                               {"message", v.message}}) +
             "\n";
  }
  out_ << lines << std::flush;
  if (!out_) throw std::runtime_error("--log: cannot write to '" + path_ + "'");
}

}  // namespace tunebed::cli
