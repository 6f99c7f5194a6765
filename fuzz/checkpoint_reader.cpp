// Fuzzes the checkpoint reader (src/output/checkpoint.cpp, docs/reliability.md). Input: a whole
// checkpoint.bin, or a bare payload (the CRC would otherwise keep nearly every mutation out of
// the parser). The payload goes through load_header and then the parts a virtual-clock
// checkpoint holds that need no data set: the rule, the round protocol, the round's sum, the
// event queue and the delay streams.
// Property: an Error is one line; a header that parses has as many records as its offsets say,
// a clock that is a time, and every record within it.
#include <cmath>
#include <string>
#include <string_view>

#include "engine/update_accumulator.hpp"
#include "output/checkpoint.hpp"
#include "rules/round_protocol.hpp"
#include "sim/event_simulator.hpp"
#include "stalesgd/straggler/profile.hpp"
#include "support/check.hpp"
#include "util/state_stream.hpp"

using namespace stalesgd;

namespace {

constexpr int kWorkers = 4;

void parse_payload(std::string_view payload) {
  StateReader in(payload);
  const CheckpointHeader h = load_header(in);
  if (!in.ok()) {
    FUZZ_CHECK(fuzz::one_line(in.error()));
    return;
  }
  FUZZ_CHECK(h.rows.updates.size() == h.offsets.update_rows);
  FUZZ_CHECK(h.rows.gradients.size() == h.offsets.gradient_rows);
  FUZZ_CHECK(h.rows.evals.size() == h.offsets.eval_rows);
  // Checked, not only parsed: the clock is a time and every record lies within it.
  FUZZ_CHECK(std::isfinite(h.t) && h.t >= 0.0);
  for (const auto& u : h.rows.updates) {
    FUZZ_CHECK(u.iteration >= 1 && u.iteration <= h.rows.updates.size());
    FUZZ_CHECK(u.wall_s >= 0.0 && u.wall_s <= h.t);
  }
  for (const auto& g : h.rows.gradients) {
    FUZZ_CHECK(g.iteration <= h.rows.updates.size() && g.duration_s >= 0.0);
  }
  for (const auto& e : h.rows.evals) FUZZ_CHECK(e.wall_s >= 0.0 && e.wall_s <= h.t);
  // The engine's part, as a virtual-clock run of kWorkers workers would read it.
  if (in.tag("virtual")) {
    (void)in.f64();
    (void)in.u64();
    const auto params = in.values<float>();
    (void)in.u64();
    for (int i = 0; i < kWorkers + 1 && in.ok() && in.u64() != ~std::uint64_t{0}; ++i) {
      (void)in.values<float>(static_cast<std::int64_t>(params.size()));
    }
    for (int w = 0; w < kWorkers; ++w) {
      (void)in.boolean();
      (void)in.u64();
    }
    auto rule = make_rule({"k-async", kWorkers, 2});
    RoundProtocol protocol(*rule, kWorkers);
    UpdateAccumulator acc(params.size());
    rule->load(in);
    protocol.load(in);
    acc.load(in);
  }
  static const auto profile = StragglerProfile::parse("exp:mean=1ms;w1=x2", kWorkers);
  EventSimulator sim(kWorkers, *profile, 1, DelayMode::kPad, 0.0);
  sim.load(in);
  if (!in.ok()) FUZZ_CHECK(fuzz::one_line(in.error()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto payload = unwrap_checkpoint(bytes, "checkpoint.bin");
  if (payload) {
    parse_payload(*payload);
  } else {
    FUZZ_CHECK(fuzz::one_line(payload.error().message));
  }
  parse_payload(bytes);
  return 0;
}
