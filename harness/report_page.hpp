// The page `tunebed report` writes: one self-contained HTML file (inline CSS and SVG; no script,
// no font, no link to fetch) that summarizes a tuning database:
//   - the winners, and their speedup over a baseline (below);
//   - per kernel, best-so-far time against wall time and against candidates, one line per run;
//   - how many candidates ended in each status (the failure breakdown);
//   - where the tuning time went: compilation and timed runs, per kernel.
//
// Baseline: the database has no marker for hand-coded opts, so the baseline of a winner is the
// first candidate its run measured for that kernel and device (for beam search, the root: the
// kernel with no opts). The page says so. Verification time is not stored either; the time split
// says that rather than guess.
//
// The page depends only on the database's contents (no generation time), so it is reproducible.
#pragma once

#include <string>

#include "results/tuning_db.hpp"

namespace tunebed::cli {

// The report's HTML; DB_LABEL names the database in its heading.
std::string render_report(results::TuningDb& db, const std::string& db_label);

}  // namespace tunebed::cli
