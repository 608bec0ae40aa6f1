#include "harness/report_svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tunebed::cli {
namespace {

// Colour-blind-safe (Okabe-Ito), assigned by position.
constexpr const char* kPalette[] = {"#0072b2", "#e69f00", "#009e73", "#cc79a7",
                                    "#56b4e9", "#d55e00", "#f0e442", "#000000"};
constexpr std::size_t kColours = std::size(kPalette);

std::string num(double v, const char* format = "%.1f") {
  char buf[48];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// A tick label: four significant digits at most, "%g"-style.
std::string tick_label(double v) { return num(std::abs(v) < 1e-12 ? 0.0 : v, "%.4g"); }

// Ticks at 1, 2 or 5 times a power of ten, about five of them, covering [0, hi].
std::vector<double> ticks(double hi) {
  if (!(hi > 0)) hi = 1;
  double raw = hi / 5, power = std::pow(10.0, std::floor(std::log10(raw)));
  double step = power * (raw / power <= 1 ? 1 : raw / power <= 2 ? 2 : raw / power <= 5 ? 5 : 10);
  std::vector<double> out{0};
  while (out.back() < hi * (1 - 1e-9)) out.push_back(static_cast<double>(out.size()) * step);
  return out;
}

std::string text(double x, double y, std::string_view body, std::string_view attrs = "") {
  return "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\"" + (attrs.empty() ? "" : " ") + std::string(attrs) +
         ">" + html_escape(body) + "</text>\n";
}

std::string line(double x1, double y1, double x2, double y2, std::string_view stroke) {
  return "<line x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) + "\" y2=\"" + num(y2) +
         "\" stroke=\"" + std::string(stroke) + "\"/>\n";
}

std::string open_svg(const std::string& id, double width, double height, const std::string& title) {
  return "<svg id=\"" + html_escape(id) + "\" class=\"plot\" width=\"" + num(width, "%.0f") + "\" height=\"" +
         num(height, "%.0f") + "\" viewBox=\"0 0 " + num(width, "%.0f") + " " + num(height, "%.0f") +
         "\" role=\"img\" aria-label=\"" + html_escape(title) + "\">\n" +
         text(8, 18, title, "class=\"title\"");
}

std::string legend_entry(double x, double y, std::size_t colour, std::string_view name) {
  return "<rect x=\"" + num(x) + "\" y=\"" + num(y - 9) + "\" width=\"12\" height=\"10\" fill=\"" +
         kPalette[colour % kColours] + "\"/>\n" + text(x + 18, y, name);
}

}  // namespace

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string render_line_chart(const LineChart& chart) {
  constexpr double kWidth = 600, kPlotHeight = 240, kLeft = 70, kRight = 20, kTop = 32, kLegendRow = 18;
  double x_max = 0, y_max = 0;
  for (const auto& s : chart.series) {
    for (const auto& [x, y] : s.points) {
      x_max = std::max(x_max, x);
      y_max = std::max(y_max, y);
    }
  }
  std::vector<double> xt = ticks(x_max), yt = ticks(y_max);
  double x_hi = xt.back(), y_hi = yt.back();
  const double plot_w = kWidth - kLeft - kRight, bottom = kTop + kPlotHeight;
  auto px = [&](double x) { return kLeft + x / x_hi * plot_w; };
  auto py = [&](double y) { return bottom - y / y_hi * kPlotHeight; };

  double height = bottom + 44 + kLegendRow * static_cast<double>(chart.series.size());
  std::string svg = open_svg(chart.id, kWidth, height, chart.title);
  for (double t : yt) {
    svg += line(kLeft, py(t), kLeft + plot_w, py(t), "#e4e4e4");
    svg += text(kLeft - 6, py(t) + 4, tick_label(t), "text-anchor=\"end\"");
  }
  for (double t : xt) svg += text(px(t), bottom + 16, tick_label(t), "text-anchor=\"middle\"");
  svg += line(kLeft, bottom, kLeft + plot_w, bottom, "#444") + line(kLeft, kTop, kLeft, bottom, "#444");
  svg += text(kLeft + plot_w / 2, bottom + 34, chart.x_label, "text-anchor=\"middle\"");
  svg += text(14, kTop + kPlotHeight / 2, chart.y_label,
              "text-anchor=\"middle\" transform=\"rotate(-90 14 " + num(kTop + kPlotHeight / 2) + ")\"");
  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    const Series& s = chart.series[i];
    std::string points;
    for (std::size_t p = 0; p < s.points.size(); ++p) {
      auto [x, y] = s.points[p];
      if (chart.steps && p > 0) points += num(px(x)) + "," + num(py(s.points[p - 1].second)) + " ";
      points += num(px(x)) + "," + num(py(y)) + " ";
    }
    if (!points.empty()) points.pop_back();
    const char* colour = kPalette[i % kColours];
    svg += "<polyline class=\"series\" fill=\"none\" stroke-width=\"2\" stroke=\"" + std::string(colour) +
           "\" points=\"" + points + "\"/>\n";
    for (const auto& [x, y] : s.points) {
      svg +=
          "<circle cx=\"" + num(px(x)) + "\" cy=\"" + num(py(y)) + "\" r=\"2.5\" fill=\"" + colour + "\"/>\n";
    }
    svg += legend_entry(kLeft, bottom + 56 + kLegendRow * static_cast<double>(i), i, s.name);
  }
  return svg + "</svg>\n";
}

std::string render_bar_chart(const BarChart& chart) {
  constexpr double kWidth = 640, kLabel = 210, kValue = 90, kTop = 32, kRow = 24, kBar = 16;
  const double plot_w = kWidth - kLabel - kValue;
  double total_max = chart.marker.value_or(0);
  for (const auto& bar : chart.bars) {
    double total = 0;
    for (double v : bar.segments) total += v;
    total_max = std::max(total_max, total);
  }
  std::vector<double> xt = ticks(total_max);
  const double x_hi = xt.back();
  const double bottom = kTop + kRow * static_cast<double>(chart.bars.size());
  auto px = [&](double x) { return kLabel + x / x_hi * plot_w; };
  const bool legend = chart.segment_names.size() > 1;
  double height = bottom + 40 + (legend ? 22 : 0);

  std::string svg = open_svg(chart.id, kWidth, height, chart.title);
  for (double t : xt) {
    svg += line(px(t), kTop, px(t), bottom, "#e4e4e4");
    svg += text(px(t), bottom + 16, tick_label(t), "text-anchor=\"middle\"");
  }
  svg += text(kLabel + plot_w / 2, bottom + 34, chart.x_label, "text-anchor=\"middle\"");
  for (std::size_t b = 0; b < chart.bars.size(); ++b) {
    const Bar& bar = chart.bars[b];
    double y = kTop + kRow * static_cast<double>(b) + (kRow - kBar) / 2, x = 0;
    std::string label = bar.label.size() > 32 ? bar.label.substr(0, 31) + "\u2026" : bar.label;
    svg += text(kLabel - 8, y + kBar - 4, label, "text-anchor=\"end\"");
    for (std::size_t s = 0; s < bar.segments.size(); ++s) {
      double v = bar.segments[s];
      svg += "<rect class=\"bar\" x=\"" + num(px(x)) + "\" y=\"" + num(y) + "\" width=\"" +
             num(px(x + v) - px(x)) + "\" height=\"" + num(kBar) + "\" fill=\"" + kPalette[s % kColours] +
             "\"/>\n";
      x += v;
    }
    svg += text(px(x) + 6, y + kBar - 4, bar.value_text.empty() ? tick_label(x) : bar.value_text);
  }
  svg += line(kLabel, kTop, kLabel, bottom, "#444");
  if (chart.marker) svg += line(px(*chart.marker), kTop - 4, px(*chart.marker), bottom, "#d55e00");
  if (legend) {
    double lx = kLabel;
    for (std::size_t s = 0; s < chart.segment_names.size(); ++s) {
      svg += legend_entry(lx, bottom + 58, s, chart.segment_names[s]);
      lx += 30 + 7.0 * static_cast<double>(chart.segment_names[s].size());
    }
  }
  return svg + "</svg>\n";
}

}  // namespace tunebed::cli
