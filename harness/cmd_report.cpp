// `tunebed report`: writes DIR/index.html, a self-contained page of tables and SVG plots that
// summarizes a tuning database (report_page.hpp says what it shows). Reads only; creates nothing
// but the page.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "harness/db_cli.hpp"
#include "harness/report_page.hpp"

namespace tunebed::cli {
namespace {

int run(const std::vector<std::string>& args) {
  CommandLine cl{
      .synopsis = "tunebed report [--db FILE] [--out DIR] [-q]",
      .description =
          "Writes DIR/index.html: one self-contained HTML page (inline CSS and SVG, no scripts, no\n"
          "network) with the winners and their speedup over a baseline, best-so-far time against wall\n"
          "time and against candidates for each kernel, the failures by status, and where the tuning\n"
          "time went. The same database always gives the same page."};
  add_db_option(cl);
  cl.options.add_options()("out", po::value<std::string>()->default_value("report")->value_name("DIR"),
                           "the directory to write index.html into (created if missing)")(
      "quiet,q", "do not print the page's path");
  cl.examples = {"tunebed report && xdg-open report/index.html",
                 "tunebed report --db shard3.db --out /tmp/shard3"};
  auto vm = parse(cl, args);
  if (!vm) return 0;
  const std::string db_path = (*vm)["db"].as<std::string>();
  std::filesystem::path dir = (*vm)["out"].as<std::string>();
  std::string html;
  try {
    auto db = open_for_reading(db_path);
    html = render_report(db, db_path);
  } catch (const results::DbError& e) {
    throw UsageError(e.what());
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw UsageError("cannot create " + dir.string() + ": " + ec.message());
  const std::filesystem::path page = dir / "index.html";
  std::ofstream out(page, std::ios::binary | std::ios::trunc);
  if (!(out << html) || !out.flush()) throw UsageError("cannot write " + page.string());
  if (!vm->count("quiet")) std::cout << page.string() << "\n";
  return 0;
}

const Registrar reg{"report", "write an HTML report with plots of a tuning database", run};

}  // namespace
}  // namespace tunebed::cli
