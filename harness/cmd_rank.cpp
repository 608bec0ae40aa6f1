// `tunebed rank`: how well the cost model ranks each kernel's stored candidates, with no search
// (search/ranking.hpp). Per kernel: the model, fitted on every other kernel, orders every stored
// correct candidate, and the stored times of its favourites are compared with the best.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "core/opt/kernel.hpp"
#include "harness/cli.hpp"
#include "harness/db_cli.hpp"
#include "harness/table_format.hpp"
#include "harness/tune_batch.hpp"
#include "search/kernel_space.hpp"
#include "search/ranking.hpp"
#include "search/stored.hpp"

namespace tunebed::cli {
namespace {

Cell finite(double x) { return std::isfinite(x) ? Cell(x) : Cell(); }

double geometric_mean(const std::vector<double>& xs) {
  double log_sum = 0;
  for (double x : xs) log_sum += std::log(x);
  return std::exp(log_sum / static_cast<double>(xs.size()));
}

int rank_cmd(const std::vector<std::string>& args) {
  CommandLine cl{
      .synopsis = "tunebed rank [--cost-model M] [--train-db FILE] [--kernel HASH] [--device D] [options]",
      .description =
          "How well the cost model ranks the candidates the tuning database stored, with no search.\n"
          "Per kernel, the model is fitted on every other kernel measured on the same device (of\n"
          "--train-db, default this database), never on the kernel itself, as the model strategy is;\n"
          "it then orders every stored correct candidate of the kernel. first_x is the stored time of\n"
          "its favourite over the best stored time, top5_x the same for the best of its first five,\n"
          "best_rank where the best stands in its order (1: first), spearman the rank correlation of\n"
          "its scores with the stored times (1: the machine's order). Ties in score keep the opts'\n"
          "order.\n"
          "\n"
          "Unlike `tunebed replay --strategy model`, which follows one search path, this judges every\n"
          "stored candidate, so its figures move far less between databases: compare cost models and\n"
          "their settings here, and what a search with one costs with replay. The summary gives the\n"
          "geometric means of first_x and top5_x, the median best_rank and the mean spearman."};
  add_stored_kernel_options(cl);
  add_cost_model_options(cl);
  add_db_option(cl);
  add_output_options(cl);
  cl.examples = {"tunebed rank --db full.db", "tunebed rank --db full.db --train-db other.db --cost-model ridge",
                 "tunebed rank --db full.db --format csv"};
  auto vm = parse(cl, args);
  if (!vm) return 0;
  const Output out = output_options(*vm);
  const StrategyOptions options = cost_model_options(*vm);
  auto db = open_for_reading((*vm)["db"].as<std::string>());
  const std::vector<search::StoredKernel> kernels = stored_kernels_of(*vm, db, "rank");

  Table table{{id_column("kernel"), {"device"}, {"ranked"}, {"best_us"}, {"first_us"}, {"first_x"}, {"top5_x"},
               {"best_rank"}, {"spearman"}}};
  HeldOutTraining training(options);
  std::vector<double> first_x, top5_x, spearman;
  std::vector<int64_t> best_rank;
  for (const search::StoredKernel& k : kernels) {
    const search::TrainingSet others = training.without(k, db);
    if (others.rows() == 0) {
      std::cerr << "rank: kernel " << k.hash << ": no other kernel measured on its device to learn from\n";
      continue;
    }
    std::unique_ptr<search::CostModel> model = search::make_cost_model(options.cost_model, options.seed);
    model->fit(others);
    search::KernelSpace space(Kernel(k.ast, Renderer::for_device(k.device)));
    search::Ranking r;
    try {
      r = search::rank_stored(*model, space, k.costs);
    } catch (const std::invalid_argument& e) {
      std::cerr << "rank: kernel " << k.hash << ": " << e.what() << "\n";
      continue;
    }
    first_x.push_back(r.first / r.best);
    top5_x.push_back(r.top5 / r.best);
    best_rank.push_back(r.best_rank);
    if (std::isfinite(r.spearman)) spearman.push_back(r.spearman);
    table.add_row({k.hash, k.device, r.ranked, Cell(r.best * 1e6), Cell(r.first * 1e6), Cell(first_x.back()),
                   Cell(top5_x.back()), r.best_rank, finite(r.spearman)});
  }
  write_table(table, out.format, out.verbosity, std::cout);
  if (out.format != Format::table || out.verbosity == Verbosity::quiet || first_x.empty()) return 0;
  std::ranges::sort(best_rank);
  std::cout << std::fixed << std::setprecision(2) << options.cost_model << " ranked " << first_x.size()
            << " kernel(s): favourite " << geometric_mean(first_x) << "x the best, best of its first five "
            << geometric_mean(top5_x) << "x (geometric means); the best is its pick number "
            << best_rank[best_rank.size() / 2] << " (median)";
  if (!spearman.empty())
    std::cout << "; spearman " << std::accumulate(spearman.begin(), spearman.end(), 0.0) / static_cast<double>(spearman.size())
              << " (mean)";
  std::cout << "\n";
  return 0;
}

const Registrar reg{"rank", "how well the cost model ranks each kernel's stored candidates, with no search",
                    rank_cmd};

}  // namespace
}  // namespace tunebed::cli
