// The composable stages (stages.hpp): every job refuses missing or mis-sized spans without
// touching its output, and computes what the function it wraps computes.
#include <gtest/gtest.h>

#include <random>

#include "lmm/asset/skeleton.hpp"
#include "lmm/motion/stages.hpp"
#include "support/synthetic_database.hpp"
#include "support/synthetic_model.hpp"

using namespace lmm;

namespace {

struct Loaded {
  AlignedBuffer db_buffer, model_buffer;
  std::shared_ptr<const Database> db;
  std::shared_ptr<const Model> model;
};

void load(Loaded& out) {
  test::SyntheticDatabase synthetic;
  synthetic.randomize({80, 120, 90}, 7);
  out.db_buffer = test::aligned_copy(synthetic.build());
  std::string error;
  out.db = Database::load_buffer(out.db_buffer.data(), out.db_buffer.size(), error);
  ASSERT_NE(out.db, nullptr) << error;
  const std::vector<uint8_t> bytes = test::synthetic_bundle(test::random_model_values(4, 3), false, error);
  ASSERT_FALSE(bytes.empty()) << error;
  out.model_buffer = test::aligned_copy(bytes);
  out.model = Model::load_buffer(out.model_buffer.data(), out.model_buffer.size(), error);
  ASSERT_NE(out.model, nullptr) << error;
}

std::vector<RootSample> some_trajectory(size_t n) {
  std::vector<RootSample> t(n);
  for (size_t i = 0; i < n; ++i) t[i] = RootSample{Vec3{0.3f * float(i), 0, 1.0f + float(i)}, quat_from_heading(Vec3{0.2f, 0, 1})};
  return t;
}

// A query job over frame `frame` of `db` writing into `query`.
QueryJob query_over(const Database& db, int frame, const std::vector<RootSample>& trajectory, std::vector<float>& query) {
  QueryJob job = query_job_for(db);
  job.pose_features = Span<const float>(db.features(frame), size_t(db.schema().dims));
  job.trajectory = trajectory;
  job.query = query;
  return job;
}

TEST(QueryJob, CopiesThePoseFeaturesAndWritesTheTrajectoryGroups) {
  Loaded l;
  load(l);
  const Database& db = *l.db;
  const std::vector<RootSample> trajectory = some_trajectory(db.schema().trajectory_offsets.size());
  std::vector<float> query(size_t(db.schema().dims), 0.0f);
  QueryJob job = query_over(db, 17, trajectory, query);
  job.root = RootSample{Vec3{0.5f, 0, 0.2f}, quat_from_heading(Vec3{1, 0, 1})};
  ASSERT_TRUE(job.validate());
  ASSERT_TRUE(job.run());
  std::vector<float> expected(db.features(17), db.features(17) + db.schema().dims);
  compute_trajectory_features(db.schema(), job.root, trajectory.data(), db.feature_offset(), db.feature_scale(),
                              expected.data());
  EXPECT_EQ(query, expected);
  int trajectory_dims = 0;
  for (const FeatureGroup& g : db.schema().groups) {
    if (g.kind == FeatureKind::TrajectoryPosition || g.kind == FeatureKind::TrajectoryDirection) {
      trajectory_dims += feature_group_dims(g);
      for (int d = 0; d < feature_group_dims(g); ++d) {
        EXPECT_NE(query[size_t(g.first_dim + d)], db.features(17)[g.first_dim + d]) << g.name << " dim " << d;
      }
    }
  }
  EXPECT_GT(trajectory_dims, 0);
}

// Issue 17: phase features are pose features: the database controller's query (QueryJob over
// the playing frame) takes them from that frame, like the bone groups.
TEST(QueryJob, TakesThePhaseDimsFromThePlayingFrame) {
  test::SyntheticDatabase synthetic;
  synthetic.randomize({80, 120, 90}, 7);
  synthetic.add_phase_group(5);
  const AlignedBuffer buffer = test::aligned_copy(synthetic.build());
  std::string error;
  const std::shared_ptr<const Database> loaded = Database::load_buffer(buffer.data(), buffer.size(), error);
  ASSERT_NE(loaded, nullptr) << error;
  const Database& db = *loaded;
  const FeatureGroup& phase = db.schema().groups.back();
  ASSERT_EQ(phase.kind, FeatureKind::Phase);
  ASSERT_EQ(feature_group_dims(phase), 10);
  const std::vector<RootSample> trajectory = some_trajectory(db.schema().trajectory_offsets.size());
  for (int frame : {17, 150}) {
    std::vector<float> query(size_t(db.schema().dims), 0.0f);
    QueryJob job = query_over(db, frame, trajectory, query);
    job.root = RootSample{Vec3{0.5f, 0, 0.2f}, quat_from_heading(Vec3{1, 0, 1})};
    ASSERT_TRUE(job.run());
    for (int d = 0; d < 10; ++d) {
      EXPECT_EQ(query[size_t(phase.first_dim + d)], db.phase(frame)[d]) << "frame " << frame << " dim " << d;
    }
  }
}

TEST(QueryJob, RefusesMissingOrMisSizedSpansAndLeavesTheOutput) {
  Loaded l;
  load(l);
  const Database& db = *l.db;
  const std::vector<RootSample> trajectory = some_trajectory(db.schema().trajectory_offsets.size());
  std::vector<float> query(size_t(db.schema().dims), 42.0f);
  const QueryJob good = query_over(db, 3, trajectory, query);
  ASSERT_TRUE(good.validate());
  std::vector<QueryJob> bad(5, good);
  bad[0].schema = nullptr;
  bad[1].query = Span<float>(query.data(), query.size() - 1);
  bad[2].trajectory = Span<const RootSample>(trajectory.data(), trajectory.size() - 1);
  bad[3].pose_features = Span<const float>();
  bad[4].scale = Span<const float>();
  for (size_t i = 0; i < bad.size(); ++i) {
    EXPECT_FALSE(bad[i].validate()) << "case " << i;
    EXPECT_FALSE(bad[i].run()) << "case " << i;
  }
  for (float v : query) ASSERT_EQ(v, 42.0f);
  QueryJob from_model = query_job_for(*l.model);
  EXPECT_EQ(from_model.schema, &l.model->schema());
  EXPECT_EQ(from_model.offset.size, size_t(l.model->feature_dims()));
}

TEST(SearchMatchJob, FindsWhatTheSearchFindsAndRefusesBadInput) {
  Loaded l;
  load(l);
  FeatureSearch index;
  std::string error;
  ASSERT_TRUE(index.build(l.db, error)) << error;
  SearchScratch scratch = index.make_scratch();
  std::vector<float> query(l.db->features(40), l.db->features(40) + index.dims());
  query[0] += 0.3f;
  SearchResult result, expected;
  const SearchMatchJob job{&index, query, 40, SearchParams{}, &scratch, &result};
  ASSERT_TRUE(job.run());
  ASSERT_EQ(index.brute_force(query.data(), 40, SearchParams{}, &expected, 1), 1);
  EXPECT_EQ(result.frame, expected.frame);
  EXPECT_FLOAT_EQ(result.cost, expected.cost);

  SearchMatchJob no_scratch = job;
  no_scratch.scratch = nullptr;
  SearchMatchJob short_query = job;
  short_query.query = Span<const float>(query.data(), query.size() - 1);
  FeatureSearch unbuilt;
  SearchMatchJob no_index = job;
  no_index.index = &unbuilt;
  for (const SearchMatchJob& bad : {no_scratch, short_query, no_index}) EXPECT_FALSE(bad.run());
  query[2] = std::nanf("");
  EXPECT_FALSE(job.run()) << "a non-finite query has no answer";
  EXPECT_EQ(result.frame, -1);
}

TEST(ProjectMatchJob, ProjectsLikeTheEvaluatorAndRefusesBadInput) {
  Loaded l;
  load(l);
  ModelEvaluator evaluator, expected_evaluator, uninitialised;
  std::string error;
  ASSERT_TRUE(evaluator.init(l.model, 1, KernelPath::Auto, error)) << error;
  ASSERT_TRUE(expected_evaluator.init(l.model, 1, KernelPath::Auto, error)) << error;
  std::vector<float> query(size_t(l.model->feature_dims()), 0.25f);
  std::vector<float> state(size_t(l.model->state_size())), expected(state.size());
  const ProjectMatchJob job{&evaluator, query, state};
  ASSERT_TRUE(job.run());
  ASSERT_TRUE(expected_evaluator.project(query.data(), expected.data()));
  EXPECT_EQ(state, expected);
  ProjectMatchJob no_model = job;
  no_model.evaluator = &uninitialised;
  ProjectMatchJob short_state = job;
  short_state.state = Span<float>(state.data(), state.size() - 1);
  for (const ProjectMatchJob& bad : {no_model, short_state}) EXPECT_FALSE(bad.run());
  query[0] = std::nanf("");
  EXPECT_FALSE(job.run()) << "a non-finite state is reported";
}

TEST(ForwardKinematicsJob, MatchesForwardKinematicsAndRefusesBadHierarchies) {
  const std::vector<int> parents{-1, 0, 1, 1, 3};
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<Vec3> local_p(parents.size()), global_p(parents.size()), expected_p(parents.size());
  std::vector<Quat> local_r(parents.size()), global_r(parents.size()), expected_r(parents.size());
  for (size_t j = 0; j < parents.size(); ++j) {
    local_p[j] = Vec3{u(rng), u(rng), u(rng)};
    local_r[j] = normalize(Quat{u(rng), u(rng), u(rng), u(rng)});
  }
  const ForwardKinematicsJob job{parents, local_p, local_r, global_p, global_r};
  ASSERT_TRUE(job.run());
  forward_kinematics(parents.data(), int(parents.size()), local_p.data(), local_r.data(), expected_p.data(),
                     expected_r.data());
  for (size_t j = 0; j < parents.size(); ++j) {
    EXPECT_EQ(length(global_p[j] - expected_p[j]), 0.0f);
    EXPECT_EQ(dot(global_r[j], expected_r[j]), dot(expected_r[j], expected_r[j]));
  }
  const std::vector<int> child_first{-1, 2, 0, 1, 3}, out_of_range{-1, 0, 1, 1, -7};
  ForwardKinematicsJob bad_order = job, bad_parent = job, short_output = job;
  bad_order.parents = child_first;
  bad_parent.parents = out_of_range;
  short_output.global_positions = Span<Vec3>(global_p.data(), global_p.size() - 1);
  for (const ForwardKinematicsJob& bad : {bad_order, bad_parent, short_output}) EXPECT_FALSE(bad.run());
}

}  // namespace
