#include "lmm/plot/svg_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

namespace lmm::pipeline {
namespace {

constexpr double kFontSize = 12.0;         // tick labels, legend, axis titles
constexpr double kTitleFontSize = 14.0;
constexpr double kCharWidth = 7.2;         // estimated width of a 12 px sans-serif character
constexpr double kLargestValue = 1e15;     // axis bounds are clamped to +-this
constexpr double kTickLength = 5.0;
constexpr double kLegendTop = 42.0;        // baseline of the first legend row
constexpr double kLegendRow = 18.0;
constexpr double kSwatch = 26.0;           // length of a legend entry's line
constexpr double kRightMargin = 32.0;
constexpr double kValueBottom = 48.0;      // tick labels and the axis title
constexpr double kGroundBottom = 72.0;     // ... and the scale bar
constexpr double kMinGroundCanvas = 440.0; // narrowest ground-plane canvas (room for title and legend)
constexpr double kMinGroundAspect = 0.4;   // the shorter ground axis spans at least this share of the longer

struct Range {
  double lo = 0.0, hi = 0.0;
};

// Finite, ordered, clamped and at least a little wide.
Range normalised(double lo, double hi) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) return {0.0, 1.0};
  lo = std::clamp(lo, -kLargestValue, kLargestValue);
  hi = std::clamp(hi, -kLargestValue, kLargestValue);
  if (lo > hi) std::swap(lo, hi);
  const double magnitude = std::max(std::abs(lo), std::abs(hi));
  if (hi - lo <= magnitude * 1e-9) {
    const double half = magnitude > 0.0 ? 0.1 * magnitude : 0.5;
    lo -= half, hi += half;
  }
  return {lo, hi};
}

// Ticks at multiples of `step` from the last one <= lo to the first one >= hi.
std::vector<double> ticks_at_step(Range r, double step) {
  const double first = std::floor(r.lo / step), last = std::ceil(r.hi / step);
  std::vector<double> ticks;
  for (double i = first; i <= last; i += 1.0) ticks.push_back(i == 0.0 ? 0.0 : i * step);
  return ticks;
}

// The smallest step of 1, 2 or 5 x 10^k whose ticks covering `r` are at most 8 (then at least 4).
double nice_step(Range r) {
  const double base = std::pow(10.0, std::floor(std::log10(r.hi - r.lo)) - 1.0);
  for (double decade = base;; decade *= 10.0) {
    for (double factor : {1.0, 2.0, 5.0}) {
      const double step = decade * factor;
      if (std::ceil(r.hi / step) - std::floor(r.lo / step) + 1.0 <= 8.0) return step;
    }
  }
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", value);
  return text;
}

double text_width(const std::string& text, double font_size = kFontSize) {
  return double(text.size()) * kCharWidth * font_size / kFontSize;
}

std::string axis_title(const PlotAxis& axis) {
  return axis.unit.empty() ? axis.title : axis.title + " (" + axis.unit + ")";
}

// The finite range of the series' x (or y) values; empty series give {0, 0}.
Range data_range(const std::vector<PlotSeries>& series, bool x) {
  Range r{1e300, -1e300};
  for (const PlotSeries& s : series) {
    for (const auto* points : {&s.line, &s.dots}) {
      for (const PlotPoint& p : *points) {
        const double v = x ? p.x : p.y;
        if (!std::isfinite(v)) continue;
        r.lo = std::min(r.lo, v), r.hi = std::max(r.hi, v);
      }
    }
  }
  return r.lo <= r.hi ? r : Range{0.0, 0.0};
}

// The axis range for data range `r`: widened to include 0 (from_zero) and to span the axis's
// min_span and `min_span`, then normalised.
Range axis_range(Range r, const PlotAxis& axis, double min_span) {
  if (axis.from_zero) r.lo = std::min(r.lo, 0.0), r.hi = std::max(r.hi, 0.0);
  min_span = std::max(min_span, axis.min_span);
  if (r.hi - r.lo < min_span) {
    const double centre = 0.5 * (r.lo + r.hi);
    if (axis.from_zero && r.lo == 0.0) {
      r.hi = min_span;
    } else if (axis.from_zero && r.hi == 0.0) {
      r.lo = -min_span;
    } else {
      r = {centre - 0.5 * min_span, centre + 0.5 * min_span};
    }
  }
  return normalised(r.lo, r.hi);
}

struct AxisTicks {
  std::vector<double> values;
  double step = 1.0;
};

// Legend entries laid out in rows within `width`: (row, x) per labelled series.
struct LegendLayout {
  std::vector<std::pair<int, double>> places;  // per series; row -1: not shown
  int rows = 0;
};

LegendLayout layout_legend(const std::vector<PlotSeries>& series, double left, double width) {
  LegendLayout legend;
  double x = left;
  int row = 0;
  std::vector<std::string> shown;
  for (const PlotSeries& s : series) {
    const bool repeated = std::find(shown.begin(), shown.end(), s.label) != shown.end();
    if (s.label.empty() || repeated) {
      legend.places.push_back({-1, 0.0});
      continue;
    }
    shown.push_back(s.label);
    const double entry = kSwatch + 6.0 + text_width(s.label) + 18.0;
    if (x > left && x + entry > width) x = left, ++row;
    legend.places.push_back({row, x});
    x += entry;
  }
  legend.rows = shown.empty() ? 0 : row + 1;
  return legend;
}

std::string stroke_style(const PlotSeries& s) {
  std::string style = "fill=\"none\" stroke=\"" + svg_escape(s.colour) + "\" stroke-width=\"" + number(s.line_width) +
                      "\" stroke-linejoin=\"round\"";
  return s.dashed ? style + " stroke-dasharray=\"6,4\"" : style;
}

std::string circle_svg(double x, double y, double radius, const std::string& colour) {
  return "<circle cx=\"" + number(x) + "\" cy=\"" + number(y) + "\" r=\"" + number(radius) + "\" fill=\"" +
         svg_escape(colour) + "\"/>\n";
}

std::string legend_svg(const std::vector<PlotSeries>& series, const LegendLayout& legend) {
  std::string svg = "<g class=\"legend\">\n";
  for (size_t i = 0; i < series.size(); ++i) {
    const auto [row, x] = legend.places[i];
    if (row < 0) continue;
    const PlotSeries& s = series[i];
    const double y = kLegendTop + row * kLegendRow, mid = y - 4.0;
    if (s.line_width > 0.0) {
      svg += "<line x1=\"" + number(x) + "\" y1=\"" + number(mid) + "\" x2=\"" + number(x + kSwatch) + "\" y2=\"" +
             number(mid) + "\" " + stroke_style(s) + "/>\n";
    }
    if (!s.dots.empty()) svg += circle_svg(x + kSwatch / 2, mid, s.dot_radius, s.colour);
    svg += svg_text(x + kSwatch + 6.0, y, s.label);
  }
  return svg + "</g>\n";
}

bool finite(PlotPoint p) { return std::isfinite(p.x) && std::isfinite(p.y); }

// The line as polylines between non-finite points (a lone point as a dot), then the dots.
std::string series_svg(const PlotSeries& s, const PlotFrame& frame) {
  std::string svg;
  for (size_t begin = 0; begin < s.line.size() && s.line_width > 0.0;) {
    size_t end = begin;
    while (end < s.line.size() && finite(s.line[end])) ++end;
    const PlotPoint first = s.line[begin];
    if (end - begin == 1) svg += circle_svg(frame.px(first.x), frame.py(first.y), s.line_width, s.colour);
    if (end - begin > 1) {
      svg += "<polyline " + stroke_style(s) + " points=\"";
      for (size_t i = begin; i < end; ++i) {
        svg += number(frame.px(s.line[i].x)) + "," + number(frame.py(s.line[i].y)) + " ";
      }
      svg += "\"/>\n";
    }
    begin = end + 1;
  }
  for (const PlotPoint& p : s.dots) {
    if (finite(p)) svg += circle_svg(frame.px(p.x), frame.py(p.y), s.dot_radius, s.colour);
  }
  return svg;
}

std::string line_svg(double x1, double y1, double x2, double y2) {
  return "<line x1=\"" + number(x1) + "\" y1=\"" + number(y1) + "\" x2=\"" + number(x2) + "\" y2=\"" + number(y2) +
         "\"/>\n";
}

// Every how many ticks a label fits: labels `widest` pixels wide, ticks `spacing` apart.
size_t label_stride(double widest, double spacing) {
  return spacing <= 0.0 ? 1 : size_t(std::max(1.0, std::ceil((widest + 10.0) / spacing)));
}

std::string axes_svg(const PlotSpec& spec, const PlotFrame& f, const AxisTicks& x, const AxisTicks& y) {
  const double bottom = f.top + f.height, right = f.left + f.width;
  std::string svg = "<g class=\"grid\" stroke=\"#e2e2e2\" stroke-width=\"1\">\n";
  for (double v : x.values) svg += line_svg(f.px(v), f.top, f.px(v), bottom);
  for (double v : y.values) svg += line_svg(f.left, f.py(v), right, f.py(v));
  svg += "</g>\n<rect class=\"frame\" x=\"" + number(f.left) + "\" y=\"" + number(f.top) + "\" width=\"" +
         number(f.width) + "\" height=\"" + number(f.height) + "\" fill=\"none\" stroke=\"black\"/>\n";
  svg += "<g class=\"ticks\" stroke=\"black\">\n";
  for (double v : x.values) svg += line_svg(f.px(v), bottom, f.px(v), bottom + kTickLength);
  for (double v : y.values) svg += line_svg(f.left - kTickLength, f.py(v), f.left, f.py(v));
  svg += "</g>\n";
  double widest = 0.0;
  for (double v : x.values) widest = std::max(widest, text_width(tick_label(v, x.step, spec.x.unit)));
  const double x_spacing = x.values.size() > 1 ? std::abs(f.px(x.values[1]) - f.px(x.values[0])) : 0.0;
  const size_t x_stride = label_stride(widest, x_spacing);
  for (size_t i = 0; i < x.values.size(); i += x_stride) {
    svg += "<text class=\"x-tick\" x=\"" + number(f.px(x.values[i])) + "\" y=\"" + number(bottom + 19.0) +
           "\" text-anchor=\"middle\">" + svg_escape(tick_label(x.values[i], x.step, spec.x.unit)) + "</text>\n";
  }
  const double y_spacing = y.values.size() > 1 ? std::abs(f.py(y.values[1]) - f.py(y.values[0])) : 0.0;
  const size_t y_stride = label_stride(kFontSize, y_spacing);
  for (size_t i = 0; i < y.values.size(); i += y_stride) {
    svg += "<text class=\"y-tick\" x=\"" + number(f.left - kTickLength - 3.0) + "\" y=\"" +
           number(f.py(y.values[i]) + 4.0) + "\" text-anchor=\"end\">" +
           svg_escape(tick_label(y.values[i], y.step, spec.y.unit)) + "</text>\n";
  }
  svg += "<text class=\"x-title\" x=\"" + number(f.left + f.width / 2) + "\" y=\"" + number(bottom + 38.0) +
         "\" text-anchor=\"middle\">" + svg_escape(axis_title(spec.x)) + "</text>\n";
  svg += "<text class=\"y-title\" transform=\"translate(16," + number(f.top + f.height / 2) +
         ") rotate(-90)\" text-anchor=\"middle\">" + svg_escape(axis_title(spec.y)) + "</text>\n";
  return svg;
}

// Widest y tick label, for the left margin.
double left_margin(const AxisTicks& y, const PlotAxis& axis) {
  double widest = 0.0;
  for (double v : y.values) widest = std::max(widest, text_width(tick_label(v, y.step, axis.unit)));
  return std::max(56.0, 34.0 + widest);
}

// The ticks of both axes. A value plot steps each axis on its own; a ground plane uses one step
// for both and widens the shorter axis so that the plot is not a sliver.
void choose_ticks(const PlotSpec& spec, AxisTicks& x, AxisTicks& y) {
  Range xr = data_range(spec.series, true), yr = data_range(spec.series, false);
  if (!spec.ground_plane) {
    xr = axis_range(xr, spec.x, 0.0), yr = axis_range(yr, spec.y, 0.0);
    x = {ticks_at_step(xr, nice_step(xr)), nice_step(xr)}, y = {ticks_at_step(yr, nice_step(yr)), nice_step(yr)};
    return;
  }
  const double longest = std::max({xr.hi - xr.lo, yr.hi - yr.lo, spec.x.min_span, spec.y.min_span});
  xr = axis_range(xr, spec.x, kMinGroundAspect * longest), yr = axis_range(yr, spec.y, kMinGroundAspect * longest);
  const double step = nice_step(xr.hi - xr.lo >= yr.hi - yr.lo ? xr : yr);
  x = {ticks_at_step(xr, step), step}, y = {ticks_at_step(yr, step), step};
}

// The canvas, the data area (spanning the ticks) and the legend's rows of `spec`; the body is left empty.
RenderedPlot layout_plot(const PlotSpec& spec, const AxisTicks& x, const AxisTicks& y, LegendLayout& legend) {
  RenderedPlot plot;
  PlotFrame& f = plot.frame;
  f.x_lo = x.values.front(), f.x_hi = x.values.back(), f.y_lo = y.values.front(), f.y_hi = y.values.back();
  f.x_reversed = spec.x.reversed, f.y_reversed = spec.y.reversed;
  f.left = left_margin(y, spec.y);
  const double bottom_margin = spec.ground_plane ? kGroundBottom : kValueBottom;
  if (spec.ground_plane) {
    const double pixels_per_metre = std::min(spec.width / (f.x_hi - f.x_lo), spec.height / (f.y_hi - f.y_lo));
    f.width = (f.x_hi - f.x_lo) * pixels_per_metre, f.height = (f.y_hi - f.y_lo) * pixels_per_metre;
    plot.width = std::max(f.left + f.width + kRightMargin, kMinGroundCanvas);
  } else {
    f.width = spec.width - f.left - kRightMargin;
    f.height = std::max(40.0, spec.height - (kLegendTop + 16.0) - bottom_margin);
    plot.width = spec.width;
  }
  plot.width = std::max(plot.width, 24.0 + text_width(spec.title, kTitleFontSize));
  legend = layout_legend(spec.series, f.left, plot.width - kRightMargin);
  f.top = kLegendTop + std::max(0, legend.rows - 1) * kLegendRow + 16.0;
  plot.height = f.top + f.height + bottom_margin;
  return plot;
}

}  // namespace

double PlotFrame::px(double x) const {
  const double share = x_reversed ? (x_hi - x) / (x_hi - x_lo) : (x - x_lo) / (x_hi - x_lo);
  return left + share * width;
}

double PlotFrame::py(double y) const {
  const double share = y_reversed ? (y - y_lo) / (y_hi - y_lo) : (y_hi - y) / (y_hi - y_lo);
  return top + share * height;
}

std::vector<double> nice_ticks(double lo, double hi) {
  const Range r = normalised(lo, hi);
  return ticks_at_step(r, nice_step(r));
}

std::string tick_label(double value, double step, const std::string& unit) {
  const int decimals = step >= 1.0 ? 0 : int(std::ceil(-std::log10(step) - 1e-9));
  if (std::abs(value) < 1e-6 * step) value = 0.0;
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", std::min(decimals, 15), value);
  return unit.empty() ? std::string(text) : std::string(text) + " " + unit;
}

std::string svg_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string svg_text(double x, double y, const std::string& text, const std::string& anchor) {
  const std::string anchored = anchor == "start" ? "" : " text-anchor=\"" + anchor + "\"";
  return "<text x=\"" + number(x) + "\" y=\"" + number(y) + "\"" + anchored + ">" + svg_escape(text) + "</text>\n";
}

std::string svg_scale_bar(double x, double y, double metres, double pixels_per_metre) {
  const double end = x + metres * pixels_per_metre;
  std::string svg = "<g class=\"scale-bar\" stroke=\"black\" stroke-width=\"2\">\n";
  svg += "<line class=\"scale-bar\" x1=\"" + number(x) + "\" y1=\"" + number(y) + "\" x2=\"" + number(end) +
         "\" y2=\"" + number(y) + "\"/>\n";
  svg += line_svg(x, y - 4.0, x, y + 4.0) + line_svg(end, y - 4.0, end, y + 4.0) + "</g>\n";
  const std::string label = tick_label(metres, metres, "m");
  return svg + "<text class=\"scale-bar-label\" x=\"" + number(end + 8.0) + "\" y=\"" + number(y + 4.0) + "\">" +
         label + "</text>\n";
}

RenderedPlot render_plot(const PlotSpec& spec) {
  AxisTicks x, y;
  choose_ticks(spec, x, y);
  LegendLayout legend;
  RenderedPlot plot = layout_plot(spec, x, y, legend);
  const PlotFrame& f = plot.frame;
  plot.body = "<text class=\"title\" x=\"12\" y=\"20\" font-size=\"" + number(kTitleFontSize) +
              "\" font-weight=\"bold\">" + svg_escape(spec.title) + "</text>\n";
  plot.body += legend_svg(spec.series, legend) + axes_svg(spec, f, x, y);
  for (const PlotSeries& s : spec.series) plot.body += series_svg(s, f);
  if (spec.ground_plane) {
    plot.body += svg_scale_bar(f.left, f.top + f.height + 60.0, x.step, f.width / (f.x_hi - f.x_lo));
  }
  return plot;
}

PlotSeries line_series(const std::string& label, const std::string& colour, double width, std::vector<PlotPoint> line,
                       bool dashed) {
  PlotSeries series;
  series.label = label, series.colour = colour, series.line_width = width, series.dashed = dashed;
  series.line = std::move(line);
  return series;
}

PlotSpec ground_plane_spec(const std::string& title) {
  PlotSpec spec;
  spec.title = title;
  spec.ground_plane = true;
  spec.x = PlotAxis{"x, growing to the left", "m", true, false, 1.0};
  spec.y = PlotAxis{"z", "m", false, false, 1.0};
  spec.width = spec.height = 600.0;
  return spec;
}

std::vector<PlotPoint> ground_points(const std::vector<Vec3>& points) {
  std::vector<PlotPoint> plotted;
  plotted.reserve(points.size());
  for (const Vec3& p : points) plotted.push_back({p.x, p.z});
  return plotted;
}

std::string svg_document(double width, double height, const std::string& body) {
  const std::string w = std::to_string(int(std::ceil(width))), h = std::to_string(int(std::ceil(height)));
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + w + "\" height=\"" + h + "\" viewBox=\"0 0 " + w + " " +
         h + "\" font-family=\"sans-serif\" font-size=\"" + number(kFontSize) + "\">\n" +
         "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n" + body + "</svg>\n";
}

}  // namespace lmm::pipeline
