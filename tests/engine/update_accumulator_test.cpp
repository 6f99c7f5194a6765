// UpdateAccumulator: a round's update is w - (sum lr_i g_i) / K against a double-precision
// reference, rounds do not leak into each other, and K = 1 rounds are bit-identical whichever
// way they are applied (the sequential reference depends on it).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "engine/update_accumulator.hpp"

using namespace stalesgd;

namespace {

// An odd size, so that the vectorised kernels' scalar tail is covered too.
constexpr std::size_t kN = 1003;

struct Grad {
  std::vector<float> g;
  float lr;
};

std::vector<float> random_vector(std::mt19937& rng, std::size_t n) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

std::vector<Grad> random_round(std::mt19937& rng, int k) {
  std::uniform_real_distribution<float> lr(0.01f, 0.5f);
  std::vector<Grad> round;
  for (int i = 0; i < k; ++i) round.push_back({random_vector(rng, kN), lr(rng)});
  return round;
}

// w - (sum lr_i g_i) / K in double precision.
std::vector<double> reference(const std::vector<float>& w, const std::vector<Grad>& round) {
  std::vector<double> out(w.size());
  for (std::size_t j = 0; j < w.size(); ++j) {
    double sum = 0.0;
    for (const auto& [g, lr] : round) sum += static_cast<double>(lr) * g[j];
    out[j] = w[j] - sum / static_cast<double>(round.size());
  }
  return out;
}

// The largest |out - ref|; float rounding of a few terms of magnitude <= 1 stays under 1e-6.
double max_error(const std::vector<float>& out, const std::vector<double>& ref) {
  double e = 0.0;
  for (std::size_t j = 0; j < out.size(); ++j) e = std::max(e, std::abs(out[j] - ref[j]));
  return e;
}

// Adds all but the last gradient, then applies the round with the last.
std::vector<float> run_round(UpdateAccumulator& acc, const std::vector<float>& w,
                             const std::vector<Grad>& round) {
  for (std::size_t i = 0; i + 1 < round.size(); ++i) acc.add(round[i].g, round[i].lr);
  std::vector<float> out(w.size());
  acc.add_and_apply(round.back().g, round.back().lr, w, out);
  return out;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("UpdateAccumulator applies w - (sum lr_i g_i) / K for a round of K gradients",
          "[engine][update_accumulator]") {
  const int k = GENERATE(1, 2, 3, 5, 8);
  INFO("K = " << k);
  std::mt19937 rng(1000 + static_cast<unsigned>(k));
  const auto w = random_vector(rng, kN);
  const auto round = random_round(rng, k);
  UpdateAccumulator acc(kN);
  const auto out = run_round(acc, w, round);
  CHECK(max_error(out, reference(w, round)) < 1e-6);
  CHECK(acc.count() == 0);
}

TEST_CASE("UpdateAccumulator counts the gradients added in a round and restarts at 0",
          "[engine][update_accumulator]") {
  std::mt19937 rng(7);
  const auto w = random_vector(rng, kN);
  const auto round = random_round(rng, 4);
  UpdateAccumulator acc(kN);
  CHECK(acc.count() == 0);
  for (int i = 0; i < 3; ++i) {
    acc.add(round[static_cast<std::size_t>(i)].g, round[static_cast<std::size_t>(i)].lr);
    CHECK(acc.count() == i + 1);
  }
  std::vector<float> out(kN);
  acc.add_and_apply(round[3].g, round[3].lr, w, out);
  CHECK(acc.count() == 0);
}

TEST_CASE("UpdateAccumulator starts each round afresh: an earlier round's sum does not leak in",
          "[engine][update_accumulator]") {
  std::mt19937 rng(11);
  const auto w = random_vector(rng, kN);
  UpdateAccumulator acc(kN);
  const auto first = random_round(rng, 3);
  const auto out1 = run_round(acc, w, first);
  CHECK(max_error(out1, reference(w, first)) < 1e-6);
  // The next rounds start from the new parameters, as the server's do.
  const auto second = random_round(rng, 2);
  const auto out2 = run_round(acc, out1, second);
  CHECK(max_error(out2, reference(out1, second)) < 1e-6);
  const auto third = random_round(rng, 1);
  const auto out3 = run_round(acc, out2, third);
  CHECK(max_error(out3, reference(out2, third)) < 1e-6);
}

TEST_CASE("UpdateAccumulator::apply_single is w - lr g, also in place",
          "[engine][update_accumulator]") {
  std::mt19937 rng(23);
  const auto w = random_vector(rng, kN);
  const auto round = random_round(rng, 1);
  std::vector<float> out(kN);
  UpdateAccumulator::apply_single(w, round[0].g, round[0].lr, out);
  CHECK(max_error(out, reference(w, round)) < 1e-6);

  std::vector<float> in_place = w;
  UpdateAccumulator::apply_single(in_place, round[0].g, round[0].lr, in_place);
  CHECK(same_bits(in_place, out));
}

TEST_CASE("UpdateAccumulator: a one-gradient add_and_apply round is bit-identical to apply_single",
          "[engine][update_accumulator]") {
  std::mt19937 rng(31);
  const auto w = random_vector(rng, kN);
  UpdateAccumulator acc(kN);
  for (int r = 0; r < 3; ++r) {
    INFO("round " << r);
    const auto one = random_round(rng, 1);
    std::vector<float> single(kN);
    UpdateAccumulator::apply_single(w, one[0].g, one[0].lr, single);
    CHECK(same_bits(run_round(acc, w, one), single));
    // A round of several in between leaves a stale sum behind, which must not be read.
    run_round(acc, w, random_round(rng, 3));
  }
}

TEST_CASE("UpdateAccumulator::apply ends a round with no further gradient",
          "[engine][update_accumulator][failures]") {
  // A sync round that a failed worker's departure completes (docs/rules.md, "Failed workers").
  const int k = GENERATE(1, 3, 7);
  INFO("K = " << k);
  std::mt19937 rng(2000 + static_cast<unsigned>(k));
  const auto w = random_vector(rng, kN);
  const auto round = random_round(rng, k);
  UpdateAccumulator acc(kN);
  for (const auto& [g, lr] : round) acc.add(g, lr);
  std::vector<float> out(kN);
  acc.apply(w, out);
  CHECK(max_error(out, reference(w, round)) < 1e-6);
  CHECK(acc.count() == 0);
}

TEST_CASE("update accumulator: a model's state is folded with weight 1, not the learning rate",
          "[engine]") {
  // Four entries, the last two state (Model::num_state): their "gradients" are the buffers'
  // changes old - new, averaged over the round like gradients but never scaled by lr.
  const std::vector<float> w{1.0f, 2.0f, 10.0f, 20.0f};
  const std::vector<float> g1{1.0f, 1.0f, -2.0f, 4.0f}, g2{3.0f, -1.0f, -4.0f, 0.0f};
  std::vector<float> out(4);
  UpdateAccumulator::apply_single(w, g1, 0.5f, out, 2);
  CHECK(out == std::vector<float>{0.5f, 1.5f, 12.0f, 16.0f});
  UpdateAccumulator acc(4, 2);
  acc.add(g1, 0.5f);
  acc.add_and_apply(g2, 0.25f, w,
                    out);  // head: w - (0.5 g1 + 0.25 g2) / 2; tail: w - (g1 + g2) / 2
  CHECK(out == std::vector<float>{1.0f - 1.25f / 2, 2.0f - 0.25f / 2, 13.0f, 18.0f});
  acc.add(g1, 0.5f);
  acc.add(g2, 0.25f);
  acc.apply(w, out);
  CHECK(out == std::vector<float>{1.0f - 1.25f / 2, 2.0f - 0.25f / 2, 13.0f, 18.0f});
  // Without state it is the plain update.
  UpdateAccumulator::apply_single(w, g1, 0.5f, out);
  CHECK(out == std::vector<float>{0.5f, 1.5f, 11.0f, 18.0f});
}
