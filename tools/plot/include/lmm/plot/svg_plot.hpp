// Plain SVG plots with readable axes for the reports of lmm-sim, lmm-path and lmm-eval: a frame,
// "nice" ticks (1, 2 or 5 x 10^k) labelled with their unit, axis titles, a grid, a legend, and for
// top-down ground-plane plots an equal x/z scale with a scale bar. No scripts, no external fonts.
#pragma once

#include <string>
#include <vector>

#include "lmm/core/math.hpp"

namespace lmm::pipeline {

// A point of a plotted series, in axis units.
struct PlotPoint {
  double x = 0.0, y = 0.0;
};

// One series: a polyline (broken at non-finite points) and dots drawn over it.
struct PlotSeries {
  std::string label;             // legend text; empty: not in the legend
  std::string colour = "#1f77b4";
  double line_width = 1.5;       // 0: no line
  bool dashed = false;
  std::vector<PlotPoint> line;
  std::vector<PlotPoint> dots;   // markers, e.g. the path's samples every 0.5 s
  double dot_radius = 3.0;
};

// A line series without dots.
PlotSeries line_series(const std::string& label, const std::string& colour, double width, std::vector<PlotPoint> line,
                       bool dashed = false);

// An axis: its title and unit ("s", "m", "cm"; shown on every tick label and in the title).
struct PlotAxis {
  std::string title, unit;
  bool reversed = false;      // values grow to the left (x) or down the page (y)
  bool from_zero = false;     // the range includes 0
  double min_span = 0.0;      // the range spans at least this much (axis units)
};

// What to plot. A ground-plane plot shows metres on both axes at one scale (pixels per metre),
// with a grid and a scale bar; a value plot scales each axis to the data area on its own.
struct PlotSpec {
  std::string title;
  PlotAxis x, y;
  std::vector<PlotSeries> series;
  bool ground_plane = false;
  // Value plot: the canvas (taller by the legend rows past the first); ground plane: the largest data area.
  double width = 640.0, height = 400.0;
};

// Where the data area lies (pixels) and which axis ranges its edges stand for.
struct PlotFrame {
  double left = 0.0, top = 0.0, width = 1.0, height = 1.0;
  double x_lo = 0.0, x_hi = 1.0, y_lo = 0.0, y_hi = 1.0;
  bool x_reversed = false, y_reversed = false;

  // Pixel column of axis value `x`.
  double px(double x) const;
  // Pixel row of axis value `y`.
  double py(double y) const;
};

// A drawn plot: SVG elements without the <svg> wrapper, the canvas they need, and their frame.
struct RenderedPlot {
  std::string body;
  double width = 0.0, height = 0.0;
  PlotFrame frame;
};

// Tick values at a step of 1, 2 or 5 x 10^k, 4 to 8 of them, the first <= lo and the last >= hi.
// A degenerate range (lo == hi) is widened around its value; non-finite bounds give [0, 1].
std::vector<double> nice_ticks(double lo, double hi);
// `value` written with as many decimals as `step` needs, then " " and `unit` (when not empty).
std::string tick_label(double value, double step, const std::string& unit);
// `text` with &, <, > and " escaped for SVG text and attributes.
std::string svg_escape(const std::string& text);
// A scale bar: a line of `metres` x `pixels_per_metre` starting at (x, y), end caps, and its label.
std::string svg_scale_bar(double x, double y, double metres, double pixels_per_metre);
// Text at (x, y), escaped, with an optional `anchor` ("start", "middle", "end").
std::string svg_text(double x, double y, const std::string& text, const std::string& anchor = "start");
// Draws `spec`: title, legend, grid, axes with ticks, series, and for a ground plane a scale bar.
RenderedPlot render_plot(const PlotSpec& spec);
// A top-down ground-plane plot titled `title`: x (metres, growing to the left, the character's left
// when it faces +z) across, z (metres) up the page, at least 1 m each; series still to be added.
PlotSpec ground_plane_spec(const std::string& title);
// The (x, z) ground-plane coordinates of `points`.
std::vector<PlotPoint> ground_points(const std::vector<Vec3>& points);
// A complete SVG document of `width` x `height` pixels, white background, holding `body`.
std::string svg_document(double width, double height, const std::string& body);

}  // namespace lmm::pipeline
