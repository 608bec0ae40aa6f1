#include "search/tuned_opts.hpp"

#include <cstdio>
#include <cstdlib>

#include "core/ir/text.hpp"
#include "core/opt/kernel.hpp"
#include "search/kernel_target.hpp"
#include "search/tune.hpp"

namespace tunebed::search {

namespace {

std::string microseconds(double us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g us", us);
  return buf;
}

}  // namespace

TunedOpts::TunedOpts(const std::string& db_path, const Device& device, Renderer renderer, ActionSpaceOptions space)
    : db_(results::TuningDb::open_read_only(db_path)),
      fingerprint_(fingerprint_of(device)),
      renderer_(std::move(renderer)),
      version_(search::action_space_version(space)) {}

TunedChoice TunedOpts::choose(const UOp& ast) {
  const UOp plain = strip_info(ast);  // keyed as tune() keys it
  const results::StoredWinner stored = db_.stored_winner(kernel_hash(plain), fingerprint_, version_);
  if (!stored.winner) {
    if (stored.other_versions.empty()) return {KernelOpts::defaults(), false, "not tuned on this device"};
    return {KernelOpts::defaults(), false,
            "stale: tuned under action space " + stored.other_versions.front() + ", this tunebed searches " +
                version_};
  }
  const results::BestEntry& w = *stored.winner;
  std::vector<Opt> opts;
  try {
    opts = parse_opts(w.opts);
  } catch (const std::invalid_argument& e) {
    return {KernelOpts::defaults(), false, "the stored opts \"" + w.opts + "\" do not parse: " + e.what()};
  }
  Kernel k(plain, renderer_);
  for (const Opt& opt : opts)
    if (std::optional<std::string> why = k.try_apply_opt(opt))
      return {KernelOpts::defaults(), false,
              "the stored opts \"" + w.opts + "\" are not legal here: " + to_string(opt) + ": " + *why};
  return {KernelOpts::given(std::move(opts)), true,
          "run " + w.run_uuid.substr(0, 8) + ", " + microseconds(w.median_us) + " when tuned"};
}

std::shared_ptr<CompiledBackend> make_compiled_backend(std::shared_ptr<Device> device,
                                                       std::function<void(const TunedChoice&)> choices) {
  const char* db = std::getenv(kTunedDbVariable);
  if (!db || !*db) return std::make_shared<CompiledBackend>(std::move(device));
  std::shared_ptr<TunedOpts> tuned;
  try {
    tuned = std::make_shared<TunedOpts>(db, *device, KernelCompiler(device).renderer());
  } catch (const results::DbError& e) {
    throw results::DbError(std::string(kTunedDbVariable) + ": " + e.what());
  }
  auto policy = [tuned, choices = std::move(choices)](int, const UOp& ast) {
    TunedChoice c = tuned->choose(ast);
    if (choices) choices(c);
    return c.opts;
  };
  return std::make_shared<CompiledBackend>(std::move(device), std::move(policy));
}

}  // namespace tunebed::search
