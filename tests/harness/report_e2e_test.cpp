// `tunebed report` through the real program, on the fixture database (db_fixture.hpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/harness/db_fixture.hpp"

namespace tunebed::testing {
namespace {

class ReportE2E : public DbFixture {
 protected:
  std::string report(const std::string& out_dir) {
    Result r = tunebed("report --db " + db_ + " --out " + out_dir);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, out_dir + "/index.html\n");
    return read_file(out_dir + "/index.html");
  }
};

TEST_F(ReportE2E, PageHasEveryPlot) {
  std::string html = report(path("report"));
  for (const std::string& id :
       {std::string("speedup"), std::string("failures"), std::string("time-split"),
        "convergence-time-" + kMatmul.substr(0, 12), "convergence-candidates-" + kMatmul.substr(0, 12),
        "convergence-time-" + kReduce.substr(0, 12),
        "convergence-candidates-" + kElementwise.substr(0, 12)}) {
    EXPECT_EQ(count(html, "<svg id=\"" + id + "\""), 1) << id;
  }
  EXPECT_EQ(count(html, "<svg "), 9);  // 3 kernels x 2 convergence plots + 3 bar charts
  EXPECT_EQ(count(html, "</svg>"), 9);
  // Matmul's convergence plots: one line per (run, device) that tuned it: beam and random on cpu0, beam on
  // cpu1.
  auto plot = html.find("<svg id=\"convergence-time-" + kMatmul.substr(0, 12));
  EXPECT_EQ(count(html.substr(plot, html.find("</svg>", plot) - plot), "<polyline"), 3);
}

TEST_F(ReportE2E, PageIsSelfContained) {
  std::string html = report(path("report"));
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http"), std::string::npos);  // no link, stylesheet, font or image to fetch
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
}

TEST_F(ReportE2E, PageSaysWhatItCannotShow) {
  std::string html = report(path("report"));
  EXPECT_NE(html.find("Verification time is not stored"), std::string::npos);
  EXPECT_NE(html.find("no marker for hand-coded opts"), std::string::npos);
  // 5 of 20 candidates failed, the crash and the timeout quarantined.
  EXPECT_NE(html.find("5 of 20 candidates failed; 2 of those"), std::string::npos);
  // matmul on cpu0: baseline 420 us (no opts), winner 92 us.
  EXPECT_NE(
      html.find("<td class=\"n\">92.00</td><td><code>(no opts)</code></td><td class=\"n\">420.00</td><td "
                "class=\"n\">4.57x</td>"),
      std::string::npos);
}

TEST_F(ReportE2E, SameDatabaseGivesTheSameBytes) { EXPECT_EQ(report(path("a")), report(path("b"))); }

TEST_F(ReportE2E, MissingDatabaseWritesNothing) {
  Result r = tunebed("report --db " + path("absent.db") + " --out " + path("report"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: no tuning database at " + path("absent.db") + "\n");
  EXPECT_FALSE(std::filesystem::exists(path("report")));
  EXPECT_FALSE(std::filesystem::exists(path("absent.db")));
}

}  // namespace
}  // namespace tunebed::testing
