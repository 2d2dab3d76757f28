#include "lmm/training/export.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include <toml++/toml.h>

#include "lmm/blob_writer.hpp"
#include "lmm/asset/model.hpp"
#include "lmm/training/tag_targets.hpp"
#include "lmm/training/trainer.hpp"

namespace lmm::training {
namespace {

namespace fs = std::filesystem;

// Appends a torch layer (weight [out, in], bias [out]) to `layer` in input-major order.
void append_layer(LayerValues& layer, const torch::Tensor& weight, const torch::Tensor& bias) {
  layer.in = int(weight.size(1));
  layer.out = int(weight.size(0));
  const std::vector<float> w = float_values(weight.t()), b = float_values(bias);
  layer.weight.insert(layer.weight.end(), w.begin(), w.end());
  layer.bias.insert(layer.bias.end(), b.begin(), b.end());
}

std::vector<LayerValues> mlp_values(const Mlp& mlp) {
  std::vector<LayerValues> layers;
  for (const auto& [weight, bias] : mlp->effective_layers()) {
    layers.emplace_back();
    append_layer(layers.back(), weight, bias);
  }
  return layers;
}

NetworkValues network_values(const Network& net) {
  NetworkValues values;
  if (const Smoe smoe = net->smoe()) {
    values.experts = int(smoe->experts());
    values.top_k = int(smoe->top_k());
    append_layer(values.gate, smoe->gate()->weight, smoe->gate()->bias);
    for (int64_t e = 0; e < smoe->experts(); ++e) {
      const auto layers = smoe->expert(e)->effective_layers();
      values.expert_layers.resize(layers.size());
      for (size_t l = 0; l < layers.size(); ++l) append_layer(values.expert_layers[l], layers[l].first, layers[l].second);
    }
  }
  if (net->mlp()) values.mlp = mlp_values(net->mlp());
  return values;
}

// Folds a standardisation of the input, (x - mean) / std, into `layer` (each of its stacked
// expert blocks), so that the layer reads x itself.
void fold_input_standardisation(LayerValues& layer, const std::vector<float>& mean, const std::vector<float>& scale) {
  const size_t in = size_t(layer.in), out = size_t(layer.out);
  for (size_t block = 0; block * in * out < layer.weight.size(); ++block) {
    float* weight = layer.weight.data() + block * in * out;
    float* bias = layer.bias.data() + block * out;
    for (size_t o = 0; o < out; ++o) {
      double shift = 0.0;
      for (size_t i = 0; i < in; ++i) {
        weight[i * out + o] /= scale[i];
        shift += double(weight[i * out + o]) * mean[i];
      }
      bias[o] = float(double(bias[o]) - shift);
    }
  }
}

// The values of the stepper's network for raw states: its input standardisation folded into the
// layers that read the input (the gate and the experts' first layers, or a plain MLP's first).
NetworkValues stepper_values(const Stepper& stepper) {
  NetworkValues values = network_values(stepper->net);
  const std::vector<float> mean = float_values(stepper->input_mean), scale = float_values(stepper->input_std);
  if (values.experts > 0) {
    fold_input_standardisation(values.gate, mean, scale);
    fold_input_standardisation(values.expert_layers.front(), mean, scale);
  } else {
    fold_input_standardisation(values.mlp.front(), mean, scale);
  }
  return values;
}

// Appends `count` inputs with zero weights to the layers that read a network's input (each
// expert block of them), so that it reads `count` more floats and ignores them.
void append_zero_inputs(NetworkValues& values, int count) {
  if (count == 0) return;
  std::vector<LayerValues*> inputs;
  if (values.experts > 0) inputs = {&values.gate, &values.expert_layers.front()};
  else inputs = {&values.mlp.front()};
  for (LayerValues* layer : inputs) {
    const size_t in = size_t(layer->in), out = size_t(layer->out), blocks = layer->weight.size() / (in * out);
    std::vector<float> weight;
    for (size_t b = 0; b < blocks; ++b) {
      weight.insert(weight.end(), layer->weight.begin() + long(b * in * out), layer->weight.begin() + long((b + 1) * in * out));
      weight.insert(weight.end(), size_t(count) * out, 0.0f);
    }
    layer->weight = std::move(weight);
    layer->in += count;
  }
}

// The foot-plant event of each contact joint of `db`: the event name at most of the frames where
// that joint's contact starts (lmm-import's [events] foot_plants), or none ("" for all: the
// runtime's default names) when some joint has no such event.
std::vector<std::string> foot_plant_names(const Database& db) {
  const size_t contacts = db.contact_joints().size();
  std::vector<std::map<int, int>> counts(contacts);
  std::vector<int> starts(contacts, 0);
  const std::vector<DatabaseEvent>& events = db.annotations().events();
  size_t e = 0;
  for (const DatabaseRange& r : db.ranges()) {
    for (int f = r.start + 1; f < r.stop; ++f) {
      while (e < events.size() && events[e].frame < f) ++e;
      for (size_t k = 0; k < contacts; ++k) {
        if (db.contacts(f)[k] == 0 || db.contacts(f - 1)[k] != 0) continue;
        ++starts[k];
        for (size_t i = e; i < events.size() && events[i].frame == f; ++i) ++counts[k][events[i].name];
      }
    }
  }
  std::vector<std::string> names;
  for (size_t k = 0; k < contacts; ++k) {
    const auto best = std::max_element(counts[k].begin(), counts[k].end(),
                                       [](const auto& a, const auto& b) { return a.second < b.second; });
    if (best == counts[k].end() || 2 * best->second < starts[k]) return {};
    names.push_back(db.annotations().event_names()[size_t(best->first)]);
  }
  return names;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_text(const std::string& path, const std::string& text) {
  std::string error;
  if (!write_file_atomic(path, reinterpret_cast<const uint8_t*>(text.data()), text.size(), error)) {
    throw std::runtime_error(error);
  }
}

// Writes `text` to `path` unless the file exists; then (also after writing, against a concurrent
// writer) requires the file to hold exactly `text`, else throws naming it with `conflict`.
void write_once(const std::string& path, const std::string& text, const std::string& conflict) {
  if (!fs::exists(path)) write_text(path, text);
  if (read_text(path) != text) throw std::runtime_error(path + " " + conflict);
}

}  // namespace

std::vector<float> float_values(const torch::Tensor& t) {
  const torch::Tensor c = t.detach().to(torch::kFloat32).contiguous();
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

TrainedModels initial_models(const TrainingConfig& c, const PoseData& d, uint64_t seed) {
  torch::manual_seed(seed);
  const int64_t features = d.features.size(1), pose = d.layout.size();
  TrainedModels m;
  m.autoencoder = Autoencoder(pose + 3 * d.layout.joints, features, pose, c);
  const int64_t state = c.latent + features + tag_state_width(c);
  m.stepper = Stepper(state, c.stepper);
  m.projector = Projector(features + constraint_code_width(c), state, c.projector);
  return m;
}

TrainedModels load_trained_models(const TrainingConfig& c, const PoseData& d, const std::string& dir) {
  TrainedModels m = initial_models(c, d, 0);
  load_checkpoint_module(*m.autoencoder, checkpoint_path(dir, "autoencoder"));
  load_checkpoint_module(*m.stepper, checkpoint_path(dir, "stepper"));
  load_checkpoint_module(*m.projector, checkpoint_path(dir, "projector"));
  return m;
}

ModelValues model_values(const TrainedModels& m, const TrainingConfig& c, const PoseData& d, bool with_encoder) {
  torch::NoGradGuard no_grad;
  ModelValues v;
  v.preset = c.name;
  v.latent = int(c.latent);
  v.decoder = network_values(m.autoencoder->decoder);
  append_zero_inputs(v.decoder, int(tag_state_width(c)));  // the runtime decodes whole states
  v.tag_names = c.tags;
  v.action_tag_names = c.actions;
  if (!c.enter_actions_freely) v.kept_out_tag_names = c.actions;
  v.stepper = stepper_values(m.stepper);
  v.projector = network_values(m.projector->net);
  v.pose_mean = float_values(d.pose_mean);
  v.pose_std = float_values(d.pose_std);
  v.delta_scale = float_values(m.stepper->delta_scale);
  v.state_mean = float_values(m.projector->state_mean);
  v.state_std = float_values(m.projector->state_std);
  if (with_encoder) {
    v.encoder.mlp = mlp_values(m.autoencoder->encoder);
    torch::Tensor mean, std;
    encoder_inputs(d, mean, std);
    v.encoder_mean = float_values(mean);
    v.encoder_std = float_values(std);
  }
  return v;
}

std::vector<uint8_t> bundle_bytes(const ModelValues& values, const Database& db, bool half) {
  std::vector<uint8_t> bytes;
  std::string error;
  ModelValues with_speeds = values;
  if (db.speeds().valid()) with_speeds.speeds = db.speeds().values();  // for the controller at run time
  if (!values.tag_names.empty()) with_speeds.foot_plant_names = foot_plant_names(db);  // learned events
  if (!build_model_bundle(with_speeds, db.blob(), half, bytes, error)) throw std::runtime_error(error);
  return bytes;
}

void write_run_manifest(const std::string& dir, const TrainingConfig& config, const std::string& database_path) {
  if (config.text.empty()) throw std::runtime_error("the preset has no source file to record in " + dir);
  fs::create_directories(dir);
  write_once((fs::path(dir) / "preset.toml").string(), config.text,
             "holds another preset than " + config.source +
                 ": this folder was trained with another --config (use the same one, or another --out)");
  const std::string database = fs::weakly_canonical(fs::absolute(database_path)).string();
  const toml::table manifest{{"database", database}, {"preset", "preset.toml"}};
  std::ostringstream text;
  text << "# Written by lmm-train: what this folder's checkpoints were trained on (read by lmm-export).\n"
       << manifest << "\n";
  write_once((fs::path(dir) / "run.toml").string(), text.str(),
             "records another database than " + database + " (use the same --db, or another --out)");
}

RunManifest read_run_manifest(const std::string& dir) {
  const std::string path = (fs::path(dir) / "run.toml").string();
  if (!fs::exists(path)) throw std::runtime_error("no " + path + ": is " + dir + " an lmm-train --out folder?");
  toml::table table;
  try {
    table = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    throw std::runtime_error(path + ": " + std::string(e.description()));
  }
  RunManifest m;
  for (const auto& [key, target] : {std::pair<const char*, std::string*>{"database", &m.database}, {"preset", &m.preset}}) {
    const std::optional<std::string> value = table[key].value<std::string>();
    if (!value) throw std::runtime_error(path + ": missing string key '" + key + "'");
    *target = *value;
  }
  m.preset = (fs::path(dir) / m.preset).string();
  return m;
}

ExportSummary export_bundle(const ExportOptions& o) {
  auto log = [&](const std::string& line) {
    if (o.log) o.log(line);
  };
  const RunManifest manifest = read_run_manifest(o.in_dir);
  const TrainingConfig config = load_training_config(manifest.preset, "");
  const std::string db_path = o.database.empty() ? manifest.database : o.database;
  std::string error;
  const std::shared_ptr<const Database> database = Database::load_file(db_path, error);
  if (database == nullptr) throw std::runtime_error(error);
  const Database& db = *database;
  check_preset_tags(config, db);
  log("database " + db_path + ": " + std::to_string(db.frame_count()) + " frames; preset '" + config.name + "'");
  const PoseData data = make_pose_data(db);
  const TrainedModels models = load_trained_models(config, data, o.in_dir);
  const std::vector<uint8_t> bytes = bundle_bytes(model_values(models, config, data, o.with_encoder), db, o.half);
  AlignedBuffer buffer(bytes.size());
  std::copy(bytes.begin(), bytes.end(), buffer.data());
  // bundle_bytes already validated; loaded again for the summary's figures
  const std::shared_ptr<const Model> bundle = Model::load_buffer(buffer.data(), buffer.size(), error);
  if (bundle == nullptr) throw std::runtime_error(o.out_path + ": " + error);
  const Model& model = *bundle;
  if (!write_file_atomic(o.out_path, bytes.data(), bytes.size(), error) ||
      !file_holds(o.out_path, bytes.data(), bytes.size(), error)) {
    throw std::runtime_error(error);
  }
  ExportSummary s;
  s.file_bytes = bytes.size();
  s.weight_bytes = model.weight_bytes();
  s.decoder_macs = model.decoder().macs();
  s.stepper_macs = model.stepper().macs();
  s.projector_macs = model.projector().macs();
  s.preset = config.name;
  return s;
}

}  // namespace lmm::training
