// The two kinds of plot in `tunebed report`, drawn as inline SVG text by hand so that the page
// needs no script, no font and no network: a line chart (best-so-far time against wall time or
// against candidates, one line per run) and a horizontal bar chart whose bars may be stacked
// (speedup per kernel, failures per status, compile and run time per kernel).
//
// Output depends only on the input: numbers are printed with fixed precision, series and bars in
// the order given, and colours by position, so the same database gives the same bytes.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tunebed::cli {

// Escapes &, <, >, " and ' for HTML and SVG text and attributes.
std::string html_escape(std::string_view text);

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), x ascending
};

struct LineChart {
  std::string id;  // the <svg> element's id
  std::string title, x_label, y_label;
  std::vector<Series> series;
  // Draw each series as a step function (the value holds until the next point), as a best-so-far
  // curve is: it only changes when a faster candidate arrives.
  bool steps = true;
};

struct Bar {
  std::string label;
  std::vector<double> segments;  // stacked left to right, one per BarChart::segment_names
  std::string value_text;        // printed after the bar; empty: the total
};

struct BarChart {
  std::string id;
  std::string title, x_label;
  std::vector<std::string> segment_names;  // a legend is drawn when there are two or more
  std::vector<Bar> bars;
  std::optional<double> marker;  // a vertical reference line, e.g. speedup 1
};

std::string render_line_chart(const LineChart& chart);
std::string render_bar_chart(const BarChart& chart);

}  // namespace tunebed::cli
