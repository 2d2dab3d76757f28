// Demonstrates using lmm::runtime from another project: load a model bundle, decode one pose.
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "lmm/asset/model.hpp"
#include "lmm/eval/nn.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s BUNDLE.lmmw\n", argv[0]);
    return 2;
  }
  std::string error;
  const std::shared_ptr<const lmm::Model> bundle = lmm::Model::load_file(argv[1], error);
  lmm::ModelEvaluator evaluator;
  if (bundle == nullptr || !evaluator.init(bundle, 1, lmm::KernelPath::Auto, error)) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 1;
  }
  const lmm::Model& model = *bundle;

  // One decoder input: the latent followed by the (normalised) matching features.
  std::vector<float> input(size_t(model.latent() + model.feature_dims()), 0.1f);
  std::vector<float> pose(size_t(model.pose_layout().size()));
  if (!evaluator.decode(input.data(), pose.data())) {
    std::fprintf(stderr, "error: the evaluator refused to run\n");
    return 1;
  }
  for (size_t i = 0; i < pose.size(); ++i) {
    if (!std::isfinite(pose[i])) {
      std::fprintf(stderr, "error: pose value %zu is not finite\n", i);
      return 1;
    }
  }

  std::printf("pose size %zu, first values:", pose.size());
  for (size_t i = 0; i < pose.size() && i < 6; ++i) std::printf(" %g", double(pose[i]));
  std::printf("\n");
  return 0;
}
