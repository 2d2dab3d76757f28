// Learned motion matching model bundle (*.lmmw, Kleanthous & Martini 2023 Sec. 3-4): decoder, stepper, projector
// (and optionally the encoder) as flat weights, with the skeleton, feature schema and
// normalisation statistics they were trained with. Loaded and validated before any use.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "lmm/asset/blob.hpp"
#include "lmm/asset/features.hpp"
#include "lmm/asset/frame_annotations.hpp"
#include "lmm/asset/skeleton.hpp"
#include "lmm/asset/speed_profile.hpp"

namespace lmm {

constexpr char kModelKind[5] = "LMMW";  // blob kind tag of model bundles
constexpr uint32_t kModelVersion = 1;   // current (and oldest supported) version
constexpr int kMaxTopK = 8;             // largest supported experts-per-sample
// Projector inputs per state tag: whether a constraint requires it, requires any of a set holding
// it, and excludes it (Model::constraint_code); then one per action tag: whether the projection
// must start its run (within kActionStartSeconds of the run's first frame).
constexpr int kConstraintCodeWidth = 3;
constexpr float kActionStartSeconds = 0.25f;

// Tensor names of the bundle format besides the database sections it shares (meta.fps,
// skeleton.*, features.* without features.values, contacts.joints). Per network N:
//   N.config     i32 [4]  experts (0 = plain MLP), top_k, expert layers, MLP layers
//   N.gate.weight [in, experts], N.gate.bias [experts]              (experts > 0)
//   N.expertL.weight [experts, in, out], N.expertL.bias [experts, out] (L = 0..expert layers-1)
//   N.mlpL.weight [in, out], N.mlpL.bias [out]   (post layers, or the whole plain network)
// Weights are stored input-major (the transpose of torch's [out, in]) in f32 or f16; GELU
// follows every layer of an MLP or expert but its last.
namespace model_tensor {
constexpr const char* kPreset = "meta.preset";              // u8 text: training preset name
constexpr const char* kActivation = "meta.activation";      // u8 text: "gelu_erf"
constexpr const char* kLayout = "model.layout";             // i32 [4]: latent, features, pose joints, contacts
constexpr const char* kPoseMean = "decoder.pose_mean";      // f32 [pose]
constexpr const char* kPoseStd = "decoder.pose_std";        // f32 [pose]
constexpr const char* kDeltaScale = "stepper.delta_scale";  // f32 [state]
constexpr const char* kStateMean = "projector.state_mean";  // f32 [state]
constexpr const char* kStateStd = "projector.state_std";    // f32 [state]
constexpr const char* kEncoderMean = "encoder.input_mean";  // f32 [pose + 3 x pose joints]
constexpr const char* kEncoderStd = "encoder.input_std";    // f32 [pose + 3 x pose joints]
// u8 text, optional: the names of the state's tag dimensions, one per line (bundles trained with
// [tags]; without it the state has none and the projector reads the feature query alone)
constexpr const char* kTagNames = "model.tag_names";
// u8 text, optional: those tags that one-shot actions play, one per line; each adds a state
// dimension after the tags: the seconds left in the run of the tag (0 on its last frame)
constexpr const char* kActionTagNames = "model.action_tag_names";
// u8 text, optional: the tags a projection whose constraint requires no tag excludes, one per line
// (the preset's actions unless it enters them freely): their frames are entered only by
// play_action or a constraint that requires a tag
constexpr const char* kKeptOutTagNames = "model.kept_out_tag_names";
// u8 text, optional: the foot-plant event name of each contact joint, one per line (the training
// database's event at that joint's contact starts; default "foot_plant_" + the joint's name)
constexpr const char* kFootPlantNames = "model.foot_plant_names";
// f32 [6], optional: the training data's walk forward / side / back, run forward / side / back
// speeds (SpeedProfile, m/s)
constexpr const char* kSpeeds = "controller.speeds";
}  // namespace model_tensor

// Writes the projector's constraint inputs for `constraint` over `tags` tags (kConstraintCodeWidth
// x tags floats: per tag 1/0 for required, one of the required-any set, excluded).
void write_constraint_code(const TagConstraint& constraint, int tags, float* code);

// The only activation the format knows: GELU with the exact erf (torch::gelu's default).
constexpr const char* kActivationGeluErf = "gelu_erf";

// One dense layer y = x W + b with W stored input-major: weight[i * out + o]. Exactly one of
// weight (f32) and weight_half (IEEE binary16 bits, f16 bundles) is set; kernels widen f16
// weights to f32 in registers, so both give the same sums for the same values.
struct DenseLayer {
  const float* weight = nullptr;
  const uint16_t* weight_half = nullptr;
  const float* bias = nullptr;
  int in = 0;
  int out = 0;
};

// One network: an optional sparse mixture of experts (gate, top-k routing, experts whose
// layers are stacked per expert) followed by an MLP. Pointers refer to the owning Model.
struct NetworkWeights {
  int in = 0;
  int out = 0;
  int experts = 0;  // 0: a plain MLP
  int top_k = 0;
  DenseLayer gate;                        // in -> experts
  std::vector<DenseLayer> expert_layers;  // expert 0's layers; expert e adds e * in * out / e * out
  std::vector<DenseLayer> mlp;            // post layers (or the whole plain network)

  // Output size of the experts (the MLP's input), 0 for a plain MLP.
  int expert_out() const { return expert_layers.empty() ? 0 : expert_layers.back().out; }
  // Widest activation vector any layer reads or writes.
  int max_width() const;
  // Multiply-accumulates per evaluated sample (gate + top_k experts + MLP).
  int64_t macs() const;
  // Number of stored weight and bias values.
  int64_t parameter_count() const;
};

// Where each part lives in a decoded pose vector (Kleanthous & Martini 2023 Sec. 4.1), for `joints` animated
// joints (skeleton joints without the simulation bone) and `contacts` contact labels.
struct PoseVectorLayout {
  int joints = 0;
  int contacts = 0;
  int positions() const { return 0; }                  // joints x 3 local positions
  int rotations() const { return 3 * joints; }         // joints x 6 (two rotation-matrix columns)
  int root_velocity() const { return 9 * joints; }     // 3: root linear velocity, character space
  int root_angular() const { return 9 * joints + 3; }  // 3: root angular velocity
  int contact() const { return 9 * joints + 6; }       // contacts (probabilities after decoding)
  int size() const { return 9 * joints + 6 + contacts; }
};

// A loaded, validated model bundle: an immutable asset, created only by the factories below
// and shared by whatever uses it (evaluators and characters hold the shared_ptr), so it can be
// neither reloaded, moved nor freed under a user. Safe to share between threads.
class Model {
 public:
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;
  Model(Model&&) = delete;
  Model& operator=(Model&&) = delete;

  // Reads and validates `path`; nullptr with a message naming the file on failure.
  static std::shared_ptr<const Model> load_file(const std::string& path, std::string& error);
  // Validates a caller-owned buffer (16-byte aligned, e.g. a memory map) that must stay valid
  // and unchanged as long as the returned model (or any copy of the pointer) lives: weights
  // (f32 or f16) are used in place, f16 biases are converted to f32 once here. nullptr with a
  // message on failure.
  static std::shared_ptr<const Model> load_buffer(const uint8_t* data, size_t size, std::string& error);

  // Decoder: the state -> normalised pose (denormalised by evaluators). Its tag inputs, if any,
  // carry zero weights: the pose depends on the latent and features alone.
  const NetworkWeights& decoder() const { return decoder_; }
  // Stepper: state -> state change / delta_scale.
  const NetworkWeights& stepper() const { return stepper_; }
  // Projector: normalised feature query ++ constraint code (projector_input_size() floats) ->
  // standardised state.
  const NetworkWeights& projector() const { return projector_; }
  // Encoder (present only in bundles exported with it): standardised pose ++ positions -> latent.
  const NetworkWeights& encoder() const { return encoder_; }
  // Whether the bundle holds the encoder.
  bool has_encoder() const { return encoder_.out > 0; }

  // Latent size.
  int latent() const { return latent_; }
  // Matching feature dimensions.
  int feature_dims() const { return schema_.dims; }
  // State size (latent + features + tags + action tags): the stepper's and projector's output,
  // the decoder's input.
  int state_size() const { return latent_ + schema_.dims + tags_.size() + int(action_tags_.size()); }
  // Tag dimensions at the end of the state: 1 where the state's frame has the tag, else 0
  // (Holden et al. 2020 Sec. 3: what the matching must keep becomes part of the features).
  int tag_count() const { return tags_.size(); }
  // The state's tag names and their lookups (a TagConstraint over them has bit t for tag t).
  const TagNames& tags() const { return tags_; }
  // The tags one-shot actions play (bits over tags()): each has a remaining-seconds dimension.
  TagMask action_tags() const { return action_mask_; }
  // The tags a projection whose constraint requires no tag excludes (model.kept_out_tag_names).
  TagMask kept_out_tags() const { return kept_out_mask_; }
  // The tag (an index into tags()) of each remaining-seconds dimension, in state order.
  const std::vector<int>& action_tag_order() const { return action_tags_; }
  // Seconds left in the run of action tag `tag` (a tags() bit index) that `state` is in (0 on its
  // last frame or without the tag); -1 when `tag` is not an action tag. No allocation.
  float seconds_left(const float* state, int tag) const;
  // Names of the events a learned character reports (CharacterEvent::name indexes them): the
  // foot plant of each contact joint, then per tag t its entering ("enter_" + name) at 2t and its
  // leaving ("leave_" + name) at 2t + 1 after the foot plants.
  const std::vector<std::string>& event_names() const { return event_names_; }
  // Event name index of tag t's entering (leaving: one more).
  int tag_event(int t) const { return layout_.contacts + 2 * t; }
  // Projector input size: feature query, kConstraintCodeWidth per tag, one per action tag.
  int projector_input_size() const {
    return schema_.dims + kConstraintCodeWidth * tags_.size() + int(action_tags_.size());
  }
  // Writes the projector's constraint inputs for `constraint` (write_constraint_code), then per
  // action tag 1 when `starts` has it (the projection starts a run of it), else 0. No allocation.
  void constraint_code(const TagConstraint& constraint, TagMask starts, float* code) const;
  // The tags a state holds: bit t set when its tag dimension t is over one half. No allocation.
  TagMask state_tags(const float* state) const;
  // Layout of the decoder's pose vector.
  const PoseVectorLayout& pose_layout() const { return layout_; }
  // Per pose dimension mean and standard deviation (decoder output normalisation).
  const float* pose_mean() const { return pose_mean_; }
  const float* pose_std() const { return pose_std_; }
  // Per state dimension scale of the stepper's output.
  const float* delta_scale() const { return delta_scale_; }
  // Projector output statistics per state dimension.
  const float* state_mean() const { return state_mean_; }
  const float* state_std() const { return state_std_; }
  // Encoder input statistics (nullptr without the encoder).
  const float* encoder_mean() const { return encoder_mean_; }
  const float* encoder_std() const { return encoder_std_; }

  // Skeleton the model was trained on (joint 0 = simulation bone).
  const Skeleton& skeleton() const { return skeleton_; }
  // Named joint roles of the skeleton.
  const std::vector<std::pair<std::string, int>>& roles() const { return roles_; }
  // Joints that carry the contact labels (skeleton indices).
  const std::vector<int>& contact_joints() const { return contact_joints_; }
  // Matching feature schema and its normalisation (offset = mean, scale = std / weight).
  const FeatureSchema& schema() const { return schema_; }
  const float* feature_offset() const { return feature_offset_; }
  const float* feature_scale() const { return feature_scale_; }
  // Frames per second of the training data.
  float fps() const { return fps_; }
  // Metres per unit of the BVH files the training database was imported from; 0 when the
  // database or bundle predates meta.unit_scale.
  float source_unit_scale() const { return source_unit_scale_; }
  // Walk and run speeds of the training data (not valid() for bundles exported without them).
  const SpeedProfile& speeds() const { return speeds_; }
  // Training preset name.
  const std::string& preset() const { return preset_; }
  // Identity of this asset: unique in the process (from 1), assigned at load.
  uint64_t id() const { return id_; }
  // Bytes the weights (and biases) occupy in the file (f16 layers: 2 per value).
  uint64_t weight_bytes() const { return weight_bytes_; }
  // Whether the file stores weights as f16.
  bool half_precision() const { return half_; }

 private:
  template <typename T>
  friend std::shared_ptr<const T> detail::load_blob_file(const std::string&, std::string&);
  template <typename T>
  friend std::shared_ptr<const T> detail::load_blob_buffer(const uint8_t*, size_t, std::string&);
  Model() = default;
  bool parse(const uint8_t* data, size_t size, std::string& error);
  bool read_layout(std::string& error);
  bool read_statistics(std::string& error);
  bool read_network(const std::string& name, int in, int out, bool required, NetworkWeights& net, std::string& error);
  bool read_layer(const std::string& name, int expected_in, int stack, DenseLayer& layer, std::string& error);
  const float* statistic(const char* name, int size, bool positive, std::string& error);
  bool read_speeds(std::string& error);
  bool read_tags(std::string& error);
  // The tags named by optional text tensor `tensor` (each one of tags_) into `mask` and, when
  // given, their indices in tensor order into `order`.
  bool read_tag_subset(const char* tensor, TagMask& mask, std::vector<int>* order, std::string& error);
  bool read_event_names(std::string& error);

  AlignedBuffer owned_;           // the file (load_file)
  std::vector<float> converted_;  // f16 biases as f32
  BlobView view_;
  NetworkWeights decoder_, stepper_, projector_, encoder_;
  PoseVectorLayout layout_;
  TagNames tags_{"model"};
  std::vector<int> action_tags_;  // tag index of each remaining-seconds dimension
  std::vector<std::string> event_names_;
  TagMask action_mask_ = 0;
  TagMask kept_out_mask_ = 0;
  int latent_ = 0;
  const float* pose_mean_ = nullptr;
  const float* pose_std_ = nullptr;
  const float* delta_scale_ = nullptr;
  const float* state_mean_ = nullptr;
  const float* state_std_ = nullptr;
  const float* encoder_mean_ = nullptr;
  const float* encoder_std_ = nullptr;
  Skeleton skeleton_;
  std::vector<std::pair<std::string, int>> roles_;
  std::vector<int> contact_joints_;
  FeatureSchema schema_;
  const float* feature_offset_ = nullptr;
  const float* feature_scale_ = nullptr;
  float fps_ = 0.0f;
  float source_unit_scale_ = 0.0f;
  SpeedProfile speeds_;
  std::string preset_;
  uint64_t weight_bytes_ = 0;
  uint64_t id_ = 0;
  bool half_ = false;
};

}  // namespace lmm
