// lmm-export: turn a training folder's checkpoints into one runtime model bundle (*.lmmw), or its
// DirectionNet checkpoint into a DirectionNet bundle (*.lmdn).
#include <cstdio>

#include <cxxopts.hpp>
#include <spdlog/spdlog.h>

#include "lmm/pipeline/report.hpp"
#include "lmm/training/direction.hpp"
#include "lmm/training/export.hpp"

using namespace lmm;
using namespace lmm::pipeline;
using namespace lmm::training;

namespace {

int run(int argc, char** argv) {
  cxxopts::Options options(
      "lmm-export",
      "Export the decoder, stepper and projector trained in DIR (by lmm-train --out DIR) as one runtime "
      "bundle: Lipschitz scales folded into the weights, normalisation statistics, skeleton, feature schema, "
      "frame rate and preset name included. The database and preset are read from DIR/run.toml.\n"
      "  lmm-export --in DIR --out model.lmmw [--half] [--with-encoder] [--db X.mmdb]\n"
      "  lmm-export --in DIR --direction --out direction.lmdn   (DirectionNet, from lmm-train direction)");
  options.add_options()
      ("in", "training folder (checkpoints + run.toml)", cxxopts::value<std::string>())
      ("out", "bundle to write (*.lmmw, written atomically)", cxxopts::value<std::string>())
      ("half", "store layer weights as f16 (about half the size; SMoE gates and statistics stay f32)")
      ("with-encoder", "also export the encoder (not needed at run time)")
      ("direction", "export DIR/direction.pt (lmm-train direction) as a DirectionNet bundle instead")
      ("db", "use this database instead of the one in DIR/run.toml", cxxopts::value<std::string>())
      ("json", "write a summary as JSON to this path", cxxopts::value<std::string>())
      ("h,help", "show this help");
  const cxxopts::ParseResult args = options.parse(argc, argv);
  if (args.count("help")) {
    std::puts(options.help().c_str());
    return 0;
  }
  if (!args.count("in") || !args.count("out")) {
    spdlog::error("lmm-export: need --in DIR and --out FILE (see --help)");
    return 2;
  }
  if (args.count("direction")) {
    export_direction(args["in"].as<std::string>(), args["out"].as<std::string>());
    spdlog::info("wrote {}: DirectionNet", args["out"].as<std::string>());
    return 0;
  }
  ExportOptions o;
  o.in_dir = args["in"].as<std::string>();
  o.out_path = args["out"].as<std::string>();
  if (args.count("db")) o.database = args["db"].as<std::string>();
  o.half = args.count("half") > 0;
  o.with_encoder = args.count("with-encoder") > 0;
  o.log = [](const std::string& line) { spdlog::info("{}", line); };
  const ExportSummary s = export_bundle(o);
  spdlog::info("wrote {}: {} bytes ({} bytes of weights, {}), preset '{}'", o.out_path, s.file_bytes, s.weight_bytes,
               o.half ? "f16 layers, f32 gates" : "f32", s.preset);
  spdlog::info("multiply-accumulates per call: decoder {}, stepper {}, projector {}", s.decoder_macs, s.stepper_macs,
               s.projector_macs);
  if (args.count("json")) {
    write_json(args["json"].as<std::string>(), JsonObject()
                                                   .text("file", o.out_path)
                                                   .text("preset", s.preset)
                                                   .boolean("half", o.half)
                                                   .boolean("with_encoder", o.with_encoder)
                                                   .number("file_bytes", double(s.file_bytes))
                                                   .number("weight_bytes", double(s.weight_bytes))
                                                   .number("decoder_macs", double(s.decoder_macs))
                                                   .number("stepper_macs", double(s.stepper_macs))
                                                   .number("projector_macs", double(s.projector_macs)));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run_cli("lmm-export", [&] { return run(argc, argv); });
}
