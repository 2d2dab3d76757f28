// lmm-export: turn a training folder's checkpoints into one runtime model bundle (*.lmmw), its
// DirectionNet checkpoint into a DirectionNet bundle (*.lmdn), or its periodic autoencoder's
// phases into a re-featured database (*.mmdb).
#include <cstdio>

#include <cxxopts.hpp>
#include <spdlog/spdlog.h>

#include "lmm/common/errors.hpp"
#include "lmm/common/report.hpp"
#include "lmm/import/config.hpp"
#include "lmm/import/phase_features.hpp"
#include "lmm/training/direction.hpp"
#include "lmm/training/export.hpp"
#include "lmm/training/phase.hpp"

using namespace lmm;
using namespace lmm::pipeline;
using namespace lmm::training;

namespace {

// The phase embedding of every frame of `db` by the periodic autoencoder in `dir`.
PhaseArray database_phases(const std::string& dir, const Database& db) {
  const PhaseData data = make_phase_data(db);
  PhaseModel model = load_phase_model(dir, data);
  const torch::Tensor embedding = phase_embedding(frame_phases(model, data)).to(torch::kFloat32).contiguous();
  PhaseArray phases;
  phases.frames = int(embedding.size(0));
  phases.channels = int(embedding.size(1) / 2);
  phases.values.assign(embedding.data_ptr<float>(), embedding.data_ptr<float>() + embedding.numel());
  return phases;
}

// lmm-export --phase: DIR's phases for every frame of --db, the database re-featured with
// --features (phase groups filled from them) and written to --out.
int export_phases(const cxxopts::ParseResult& args) {
  if (!args.count("db")) throw InputError("lmm-export --phase: need --db X.mmdb (the database to re-feature)");
  const std::string db_path = args["db"].as<std::string>(), out = args["out"].as<std::string>();
  std::string error;
  const std::shared_ptr<const Database> db = Database::load_file(db_path, error);
  if (db == nullptr) throw InputError(error);
  const FeatureSchemaConfig schema = load_feature_config(args["features"].as<std::string>());
  const PhaseArray phases = database_phases(args["in"].as<std::string>(), *db);
  const RefeatureSummary s = refeature_database(*db, schema, phases, out);
  spdlog::info("wrote {}: {} frames, {} feature dims ({}), {} phase channels, {} bytes", out, s.frames, s.feature_dims,
               schema.name, s.phase_channels, s.bytes);
  if (args.count("json")) {
    write_json(args["json"].as<std::string>(), JsonObject()
                                                   .text("file", out)
                                                   .text("schema", schema.name)
                                                   .number("frames", s.frames)
                                                   .number("feature_dims", s.feature_dims)
                                                   .number("phase_channels", s.phase_channels)
                                                   .number("file_bytes", double(s.bytes)));
  }
  return 0;
}

int run(int argc, char** argv) {
  cxxopts::Options options(
      "lmm-export",
      "Export the decoder, stepper and projector trained in DIR (by lmm-train --out DIR) as one runtime "
      "bundle: Lipschitz scales folded into the weights, normalisation statistics, skeleton, feature schema, "
      "frame rate and preset name included. The database and preset are read from DIR/run.toml.\n"
      "  lmm-export --in DIR --out model.lmmw [--half] [--with-encoder] [--db X.mmdb]\n"
      "  lmm-export --in DIR --direction --out direction.lmdn   (DirectionNet, from lmm-train direction)\n"
      "  lmm-export --in DIR --phase --db X.mmdb [--features lipschitz41.toml] --out Y.mmdb   (phases of every frame "
      "by the periodic autoencoder of lmm-train phase, X re-featured with them)");
  options.add_options()
      ("in", "training folder (checkpoints + run.toml)", cxxopts::value<std::string>())
      ("out", "bundle to write (*.lmmw, written atomically)", cxxopts::value<std::string>())
      ("half", "store layer weights as f16 (about half the size; SMoE gates and statistics stay f32)")
      ("with-encoder", "also export the encoder (not needed at run time)")
      ("direction", "export DIR/direction.pt (lmm-train direction) as a DirectionNet bundle instead")
      ("phase", "compute every --db frame's phases with DIR/phase.pt (lmm-train phase) and write --db "
                "re-featured with --features to --out")
      ("features", "--phase: feature schema (TOML) with a phase group",
       cxxopts::value<std::string>()->default_value(default_config_dir() + "/features/lipschitz41.toml"))
      ("db", "use this database instead of the one in DIR/run.toml (--phase: the database to re-feature)",
       cxxopts::value<std::string>())
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
  if (args.count("phase")) return export_phases(args);
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
