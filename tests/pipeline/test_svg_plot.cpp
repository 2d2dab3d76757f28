// Issue 18 item 4: the SVG plots of lmm-sim, lmm-path and lmm-eval have axes with nice ticks
// labelled in units, axis titles, and (ground plane) one scale for x and z with a scale bar. The
// SVGs are read back by parsing their text elements, never compared as whole files.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "lmm/engines/evaluation.hpp"
#include "lmm/engines/path_run.hpp"
#include "lmm/engines/simulation.hpp"
#include "lmm/plot/svg_plot.hpp"
#include "support/synthetic_bvh.hpp"

using namespace lmm;
using namespace lmm::pipeline;

namespace {

// A text element of a given class: its x and y attributes and its content.
struct SvgText {
  double x = 0.0, y = 0.0;
  std::string text;
};

std::vector<SvgText> texts_of_class(const std::string& svg, const std::string& cls) {
  const std::regex element("<text class=\"" + cls + "\" x=\"([^\"]*)\" y=\"([^\"]*)\"[^>]*>([^<]*)</text>");
  std::vector<SvgText> found;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), element); it != std::sregex_iterator(); ++it) {
    found.push_back({std::stod((*it)[1]), std::stod((*it)[2]), (*it)[3]});
  }
  return found;
}

// The content of the first text element of class `cls` (axis titles are rotated: no x/y).
std::string text_of_class(const std::string& svg, const std::string& cls) {
  std::smatch match;
  if (!std::regex_search(svg, match, std::regex("<text class=\"" + cls + "\"[^>]*>([^<]*)</text>"))) return "";
  return match[1];
}

bool ends_with(const std::string& text, const std::string& tail) {
  return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

// Well-formed enough to render: one <svg> root, every element closed in order, no NaN or inf in
// the markup.
void expect_valid_svg(const std::string& svg) {
  ASSERT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  std::vector<std::string> open;
  const std::regex tag("<(/?)([a-z]+)([^>]*?)(/?)>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), tag); it != std::sregex_iterator(); ++it) {
    const std::string name = (*it)[2];
    if ((*it)[1] == "/") {
      ASSERT_FALSE(open.empty()) << "</" << name << "> closes nothing";
      ASSERT_EQ(open.back(), name);
      open.pop_back();
    } else if ((*it)[4] != "/") {
      open.push_back(name);
    }
  }
  EXPECT_TRUE(open.empty()) << open.size() << " elements left open";
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  for (const char* bad : {"nan", "inf", "NaN", "Inf"}) EXPECT_EQ(svg.find(bad), std::string::npos) << bad;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The number a tick label starts with.
double label_value(const std::string& label) { return std::strtod(label.c_str(), nullptr); }

// Pixels per unit along ticks placed at `position` (x or y), from their first and last label.
double pixels_per_unit(const std::vector<SvgText>& ticks, bool along_x) {
  const SvgText& a = ticks.front();
  const SvgText& b = ticks.back();
  const double pixels = along_x ? b.x - a.x : b.y - a.y;
  return std::abs(pixels / (label_value(b.text) - label_value(a.text)));
}

void expect_nice_ticks(double lo, double hi) {
  SCOPED_TRACE("range " + std::to_string(lo) + " .. " + std::to_string(hi));
  const std::vector<double> ticks = nice_ticks(lo, hi);
  ASSERT_GE(ticks.size(), 4u);
  ASSERT_LE(ticks.size(), 8u);
  const double step = ticks[1] - ticks[0];
  const double tolerance = 1e-9 * step;
  for (size_t i = 1; i < ticks.size(); ++i) EXPECT_NEAR(ticks[i] - ticks[i - 1], step, tolerance);
  const double mantissa = step / std::pow(10.0, std::floor(std::log10(step) + 1e-9));
  EXPECT_TRUE(std::abs(mantissa - 1.0) < 1e-6 || std::abs(mantissa - 2.0) < 1e-6 || std::abs(mantissa - 5.0) < 1e-6)
      << "step " << step;
  if (std::isfinite(lo) && std::isfinite(hi)) {
    EXPECT_LE(ticks.front(), std::min(lo, hi) + tolerance);
    EXPECT_GE(ticks.back(), std::max(lo, hi) - tolerance);
  }
  for (double t : ticks) {
    EXPECT_TRUE(std::isfinite(t));
    // The label reads back as the tick.
    EXPECT_NEAR(label_value(tick_label(t, step, "m")), t, 1e-6 * step);
  }
}

// A circle of radius `radius` about (cx, cz) in the ground plane.
std::vector<Vec3> circle(float cx, float cz, float radius, int points) {
  std::vector<Vec3> ring;
  for (int i = 0; i <= points; ++i) {
    const float a = 6.2831853f * float(i) / float(points);
    ring.push_back(Vec3{cx + radius * std::cos(a), 0.0f, cz + radius * std::sin(a)});
  }
  return ring;
}

// Axis titles carry `x_unit` and `y_unit`, and every tick label ends with its unit.
void expect_axis_units(const std::string& svg, const std::string& x_unit, const std::string& y_unit) {
  EXPECT_TRUE(ends_with(text_of_class(svg, "x-title"), "(" + x_unit + ")")) << text_of_class(svg, "x-title");
  EXPECT_TRUE(ends_with(text_of_class(svg, "y-title"), "(" + y_unit + ")")) << text_of_class(svg, "y-title");
  const auto x_ticks = texts_of_class(svg, "x-tick"), y_ticks = texts_of_class(svg, "y-tick");
  EXPECT_GE(x_ticks.size(), 2u);
  EXPECT_GE(y_ticks.size(), 2u);
  for (const SvgText& t : x_ticks) EXPECT_TRUE(ends_with(t.text, " " + x_unit)) << t.text;
  for (const SvgText& t : y_ticks) EXPECT_TRUE(ends_with(t.text, " " + y_unit)) << t.text;
}

// The (first) scale bar's pixel length is its stated metres at the plot's x scale, which equals its
// z scale.
void expect_scale_bar_true(const std::string& svg) {
  const auto x_ticks = texts_of_class(svg, "x-tick"), y_ticks = texts_of_class(svg, "y-tick");
  ASSERT_GE(x_ticks.size(), 2u);
  ASSERT_GE(y_ticks.size(), 2u);
  const double x_scale = pixels_per_unit(x_ticks, true), y_scale = pixels_per_unit(y_ticks, false);
  EXPECT_NEAR(x_scale, y_scale, 0.01 * x_scale);
  std::smatch bar;
  const std::regex bar_line("<line class=\"scale-bar\" x1=\"([^\"]*)\" y1=\"[^\"]*\" x2=\"([^\"]*)\"");
  ASSERT_TRUE(std::regex_search(svg, bar, bar_line));
  const auto label = texts_of_class(svg, "scale-bar-label");
  ASSERT_GE(label.size(), 1u);
  ASSERT_TRUE(ends_with(label[0].text, " m")) << label[0].text;
  const double metres = label_value(label[0].text);
  EXPECT_GT(metres, 0.0);
  EXPECT_NEAR(std::stod(bar[2]) - std::stod(bar[1]), metres * x_scale, 0.05);
}

CharacterTrack ground_track(const std::vector<Vec3>& root) {
  CharacterTrack track;
  track.root = root;
  track.desired = root;
  return track;
}

}  // namespace

TEST(SvgPlot, TicksAreNiceStepsCoveringTheRange) {
  const std::pair<double, double> ranges[] = {{0.0, 1.0},     {0.0, 0.25},     {-3.7, 12.2},   {0.001, 0.0013},
                                              {-1e6, 3e6},    {5.0, 5.0001},   {-0.3, -0.1},   {123.4, 123.9},
                                              {1e-7, 3e-7},   {12.2, -3.7},    {0.0, 99.0},    {-7.0, 7.0}};
  for (const auto& [lo, hi] : ranges) expect_nice_ticks(lo, hi);
}

TEST(SvgPlot, DegenerateRangesStillGiveFiniteTicks) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (double v : {0.0, 3.2, -1e6, 1e-9, 1e12}) expect_nice_ticks(v, v);
  for (double t : nice_ticks(-1e300, 1e300)) EXPECT_TRUE(std::isfinite(t));
  expect_nice_ticks(nan, 1.0);
  expect_nice_ticks(-inf, inf);
}

TEST(SvgPlot, ScaleBarMatchesTheGroundScale) {
  for (float radius : {0.3f, 3.0f, 40.0f}) {
    SCOPED_TRACE("radius " + std::to_string(radius));
    PlotSpec spec = ground_plane_spec("circle");
    const std::vector<Vec3> ring = circle(2.0f, -1.0f, radius, 64);
    spec.series.push_back(line_series("ring", "#1f77b4", 1.5, ground_points(ring)));
    const RenderedPlot plot = render_plot(spec);
    const std::string svg = svg_document(plot.width, plot.height, plot.body);
    expect_valid_svg(svg);
    expect_scale_bar_true(svg);
    // The ticks cover the data: x from 2 - r to 2 + r, z from -1 - r to -1 + r.
    double x_lo = 1e9, x_hi = -1e9;
    for (const SvgText& t : texts_of_class(svg, "x-tick")) {
      x_lo = std::min(x_lo, label_value(t.text)), x_hi = std::max(x_hi, label_value(t.text));
    }
    EXPECT_LE(x_lo, 2.0 - radius + 1e-6);
    EXPECT_GE(x_hi, 2.0 + radius - 1e-6);
    // x grows to the left.
    const auto x_ticks = texts_of_class(svg, "x-tick");
    EXPECT_LT(x_ticks.back().x, x_ticks.front().x);
  }
}

TEST(SvgPlot, PathPlotHasMetreAxesAndAScaleBar) {
  const std::string dir = test::temp_folder("path");
  Path path;
  path.points = circle(0.0f, 4.0f, 4.0f, 240);
  write_path_svg(dir + "/plot.svg", path, ground_track(circle(0.1f, 4.0f, 3.9f, 240)), "walk & run, <circle>");
  const std::string svg = read_file(dir + "/plot.svg");
  expect_valid_svg(svg);
  expect_axis_units(svg, "m", "m");
  expect_scale_bar_true(svg);
  EXPECT_NE(svg.find("walk &amp; run, &lt;circle&gt;"), std::string::npos);
  EXPECT_NE(svg.find(">character root</text>"), std::string::npos);
}

TEST(SvgPlot, SimPlotHasMetreAxesAScaleBarAndFilmstripTimes) {
  const std::string dir = test::temp_folder("sim");
  Skeleton skeleton;
  skeleton.names = {"root", "hips", "foot"};
  skeleton.parents = {-1, 0, 1};
  skeleton.offsets = {Vec3{}, Vec3{0.0f, 1.0f, 0.0f}, Vec3{0.0f, -0.9f, 0.1f}};
  const float dt = 1.0f / 60.0f;
  CharacterTrack track = ground_track(circle(0.0f, 0.0f, 2.0f, 119));
  track.clip.fps = 60.0f, track.clip.frames = 120, track.clip.joints = 3;
  for (int f = 0; f < track.clip.frames; ++f) {
    for (int j = 0; j < 3; ++j) {
      track.clip.positions.push_back(j == 0 ? track.root[size_t(f)] : skeleton.offsets[size_t(j)]);
      track.clip.rotations.push_back(Quat{});
    }
  }
  write_svg(dir + "/plot.svg", skeleton, {track}, dt);
  const std::string svg = read_file(dir + "/plot.svg");
  expect_valid_svg(svg);
  expect_axis_units(svg, "m", "m");
  expect_scale_bar_true(svg);
  // The filmstrip: one figure every 0.5 s, its time in seconds under it, and a 1 m bar at 40 px / m.
  const int cells = int(track.clip.frames / std::lround(0.5f / dt));
  int times = 0;
  const std::regex time_label("<text x=\"[^\"]*\" y=\"[^\"]*\" text-anchor=\"middle\">[0-9.]+ s</text>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), time_label); it != std::sregex_iterator(); ++it) ++times;
  EXPECT_EQ(times, cells);
  EXPECT_EQ(texts_of_class(svg, "scale-bar-label").size(), 2u);
}

TEST(SvgPlot, RolloutPlotHasSecondAndCentimetreAxes) {
  const std::string dir = test::temp_folder("eval");
  Evaluation model, baseline;
  for (int i = 0; i <= 20; ++i) {
    model.curve.seconds.push_back(i / 60.0);
    model.curve.clean_cm.push_back(0.4 * i);
    model.curve.noisy_cm.push_back(i == 7 ? std::numeric_limits<double>::quiet_NaN() : 0.6 * i);
  }
  baseline.curve = model.curve;
  for (double& v : baseline.curve.clean_cm) v *= 2.0;
  write_rollout_svg(dir + "/rollout.svg", model, "model.lmmw", &baseline, "baseline.lmmw");
  const std::string svg = read_file(dir + "/rollout.svg");
  expect_valid_svg(svg);
  expect_axis_units(svg, "s", "cm");
  // The ticks cover the curves: the largest error is the baseline's last clean one.
  double top = 0.0;
  for (const SvgText& t : texts_of_class(svg, "y-tick")) top = std::max(top, label_value(t.text));
  EXPECT_GE(top, baseline.curve.clean_cm.back());
  EXPECT_NE(svg.find(">model.lmmw, noisy starts</text>"), std::string::npos);
  EXPECT_NE(svg.find("stroke-dasharray"), std::string::npos);
}

TEST(SvgPlot, DegenerateInputsStillGiveValidPlots) {
  const std::string dir = test::temp_folder("degenerate");
  Path one_point;
  one_point.points = {Vec3{1.5f, 0.0f, -2.0f}};
  write_path_svg(dir + "/path.svg", one_point, ground_track(one_point.points), "one point");
  write_path_svg(dir + "/empty-path.svg", Path{}, CharacterTrack{}, "empty");
  write_svg(dir + "/sim.svg", Skeleton{}, {CharacterTrack{}}, 1.0f / 60.0f);
  write_svg(dir + "/no-sim.svg", Skeleton{}, {}, 1.0f / 60.0f);
  Evaluation empty, one;
  one.curve = {{0.0}, {2.0}, {3.0}};
  write_rollout_svg(dir + "/empty-eval.svg", empty, "model", nullptr, "");
  write_rollout_svg(dir + "/one-eval.svg", one, "model", nullptr, "");
  for (const char* file : {"path", "empty-path", "sim", "no-sim"}) {
    SCOPED_TRACE(file);
    const std::string svg = read_file(dir + "/" + file + ".svg");
    expect_valid_svg(svg);
    expect_axis_units(svg, "m", "m");
    expect_scale_bar_true(svg);
  }
  for (const char* file : {"empty-eval", "one-eval"}) {
    SCOPED_TRACE(file);
    const std::string svg = read_file(dir + "/" + file + ".svg");
    expect_valid_svg(svg);
    expect_axis_units(svg, "s", "cm");
  }
}
