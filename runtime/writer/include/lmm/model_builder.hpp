// Writes model bundles (*.lmmw) from plain weight arrays: used by lmm-export (from LibTorch
// checkpoints), by tests, and by anyone who trains the networks elsewhere. Part of lmm::writer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lmm/asset/blob.hpp"

namespace lmm {

// One dense layer's values, weight input-major ([in][out], the transpose of torch's layout).
// For stacked expert layers both arrays hold every expert's values, expert after expert.
struct LayerValues {
  int in = 0;
  int out = 0;
  std::vector<float> weight;
  std::vector<float> bias;
};

// One network: with experts > 0 a gate, top_k routing and stacked expert layers, then `mlp`
// (post layers); with experts == 0 a plain MLP. The optional encoder is left out when it has
// neither experts nor MLP layers.
struct NetworkValues {
  int experts = 0;
  int top_k = 0;
  LayerValues gate;
  std::vector<LayerValues> expert_layers;
  std::vector<LayerValues> mlp;
};

// Everything a bundle holds besides the database sections.
struct ModelValues {
  std::string preset;
  int latent = 0;
  NetworkValues decoder, stepper, projector, encoder;  // encoder optional
  std::vector<float> pose_mean, pose_std;              // decoder output statistics
  std::vector<float> delta_scale;                      // stepper output scale
  std::vector<float> state_mean, state_std;            // projector output statistics
  std::vector<float> encoder_mean, encoder_std;        // encoder input statistics (with encoder)
  std::vector<float> speeds;  // optional: the training data's SpeedProfile::values() (6 floats)
  std::vector<std::string> tag_names;  // optional: the state's tag dimensions, in order
  std::vector<std::string> action_tag_names;  // optional: those tags with a remaining-seconds dimension, in order
  std::vector<std::string> kept_out_tag_names;  // optional: the tags projections requiring no tag exclude
  std::vector<std::string> foot_plant_names;  // optional: the foot-plant event of each contact joint
};

// Serialises `values` as a bundle, with the skeleton, contact joints, feature schema and
// feature normalisation copied from the motion database blob `database` (the data the model
// was trained on). With `half` the layer weights are stored as f16; SMoE gates and statistics
// stay f32 (f16 gate logits flip near-tied top-k choices and swap whole experts). False with a
// message when a section is missing or sizes disagree; `out` is untouched then.
bool build_model_bundle(const ModelValues& values, const BlobView& database, bool half, std::vector<uint8_t>& out,
                        std::string& error);

}  // namespace lmm
