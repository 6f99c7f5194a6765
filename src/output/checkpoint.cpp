// checkpoint.bin: the envelope (magic, format, length, CRC-32) and the part every engine shares.
#include "output/checkpoint.hpp"

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "config/option_table.hpp"
#include "stalesgd/data/catalog.hpp"
#include "util/atomic_file.hpp"
#include "util/crc32.hpp"
#include "util/state_stream.hpp"

namespace stalesgd {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kMagic = "stalesgd checkpoint\n";
// 2: gradient rows carry duration_s; 3: eval rows carry train_objective; 4: the run's identity
// (run id, options and data digests, the journal files' CRCs).
// 5: updates' drift_sq and grad_sq; 6: evals' val_*; 7: the samplers' draw counts (minibatch
// seeds); 8: evals' scored_s, test_samples and train_samples; 9: the rule's state as named
// fields behind its name and state version (rule_state.hpp)
constexpr std::uint64_t kFormat = 9;

}  // namespace

void save_header(StateWriter& out, const CheckpointHeader& h) {
  out.tag("run");
  out.u64(h.args.size());
  for (const auto& a : h.args) out.str(a);
  out.str(h.engine);
  out.str(h.run_id);
  out.str(h.options_digest);
  out.str(h.data_digest);
  out.f64(h.t);
  const JournalOffsets& o = h.offsets;
  for (std::uint64_t v : {o.update_rows, o.update_bytes, o.gradient_rows, o.gradient_bytes,
                          o.eval_rows, o.eval_bytes}) {
    out.u64(v);
  }
  for (std::uint32_t c : {o.update_crc, o.gradient_crc, o.eval_crc}) out.u64(c);
  out.u64(h.snapshots);
  out.u64(h.evals_skipped);
  out.tag("records");
  out.u64(h.rows.updates.size());
  for (const auto& u : h.rows.updates) {
    out.u64(u.iteration);
    out.f64(u.wall_s);
    out.i64(u.n_grads);
    out.f64(u.mean_staleness);
    out.u64(u.max_staleness);
    out.f64(u.lr);
    out.f64(u.minibatch_loss);
    out.f64(u.drift_sq);
    out.f64(u.grad_sq);
  }
  out.u64(h.rows.gradients.size());
  for (const auto& g : h.rows.gradients) {
    out.u64(g.iteration);
    out.i64(g.worker);
    out.u64(g.computed_on);
    out.u64(g.staleness);
    out.f64(g.duration_s);
  }
  out.u64(h.rows.evals.size());
  for (const auto& e : h.rows.evals) {
    out.f64(e.wall_s);
    out.u64(e.iteration);
    out.f64(e.train_loss);
    out.f64(e.test_loss);
    out.f64(e.test_error);
    out.f64(e.train_objective);
    out.f64(e.val_loss);
    out.f64(e.val_error);
    out.f64(e.scored_s);
    out.u64(e.test_samples);
    out.u64(e.train_samples);
  }
}

CheckpointHeader load_header(StateReader& in) {
  CheckpointHeader h;
  if (!in.tag("run")) return h;
  // Each element takes at least 8 bytes: a count beyond what is left is corrupt, and stopping
  // at the first failure keeps a corrupt count from looping long.
  const auto count = [&](std::uint64_t per_row) {
    const std::uint64_t n = in.u64();
    if (n > (std::uint64_t{1} << 40) / per_row) in.fail("a count larger than the file");
    return in.ok() ? n : 0;
  };
  for (std::uint64_t i = 0, n = count(8); i < n && in.ok(); ++i) h.args.push_back(in.str());
  h.engine = in.str();
  h.run_id = in.str();
  h.options_digest = in.str();
  h.data_digest = in.str();
  h.t = in.f64();
  JournalOffsets& o = h.offsets;
  for (std::uint64_t* v : {&o.update_rows, &o.update_bytes, &o.gradient_rows, &o.gradient_bytes,
                           &o.eval_rows, &o.eval_bytes}) {
    *v = in.u64();
  }
  for (std::uint32_t* c : {&o.update_crc, &o.gradient_crc, &o.eval_crc}) {
    const std::uint64_t v = in.u64();
    if (v > 0xffffffffu) in.fail("a journal CRC above 32 bits");
    *c = static_cast<std::uint32_t>(v);
  }
  h.snapshots = in.u64();
  h.evals_skipped = in.u64();
  if (!in.tag("records")) return h;
  for (std::uint64_t i = 0, n = count(56); i < n && in.ok(); ++i) {
    UpdateRecord u;
    u.iteration = in.u64();
    u.wall_s = in.f64();
    u.n_grads = static_cast<int>(in.i64());
    u.mean_staleness = in.f64();
    u.max_staleness = in.u64();
    u.lr = in.f64();
    u.minibatch_loss = in.f64();
    u.drift_sq = in.f64();
    u.grad_sq = in.f64();
    h.rows.updates.push_back(u);
  }
  for (std::uint64_t i = 0, n = count(40); i < n && in.ok(); ++i) {
    GradientRecord g;
    g.iteration = in.u64();
    g.worker = static_cast<int>(in.i64());
    g.computed_on = in.u64();
    g.staleness = in.u64();
    g.duration_s = in.f64();
    h.rows.gradients.push_back(g);
  }
  for (std::uint64_t i = 0, n = count(64); i < n && in.ok(); ++i) {
    EvalRecord e;
    e.wall_s = in.f64();
    e.iteration = in.u64();
    e.train_loss = in.f64();
    e.test_loss = in.f64();
    e.test_error = in.f64();
    e.train_objective = in.f64();
    e.val_loss = in.f64();
    e.val_error = in.f64();
    e.scored_s = in.f64();
    e.test_samples = in.u64();
    e.train_samples = in.u64();
    h.rows.evals.push_back(e);
  }
  if (in.ok() &&
      (o.update_rows != h.rows.updates.size() || o.gradient_rows != h.rows.gradients.size() ||
       o.eval_rows != h.rows.evals.size())) {
    in.fail("the journal offsets do not match the records");
  }
  // Checked, not only checksummed (a forged file can carry a right CRC): the clock is a time,
  // and what the checkpoint holds happened at or before it, so a resumed run's clock never
  // steps back.
  const auto when = [&](double s) { return std::isfinite(s) && s >= 0.0 && s <= h.t; };
  if (in.ok() && !(std::isfinite(h.t) && h.t >= 0.0)) {
    in.fail(fmt::format("its clock {} s is not a time", h.t));
  }
  const std::uint64_t updates = h.rows.updates.size();
  for (const auto& u : h.rows.updates) {
    if (!in.ok()) break;
    if (u.iteration < 1 || u.iteration > updates) {
      in.fail(fmt::format("update {} of {} recorded", u.iteration, updates));
    } else if (!when(u.wall_s)) {
      in.fail(fmt::format("update {} at {} s, not within the checkpoint's 0 to {} s", u.iteration,
                          u.wall_s, h.t));
    }
  }
  for (const auto& g : h.rows.gradients) {
    if (!in.ok()) break;
    if (g.iteration > updates || !(std::isfinite(g.duration_s) && g.duration_s >= 0.0)) {
      in.fail(fmt::format("a gradient of update {} (of {}) lasting {} s", g.iteration, updates,
                          g.duration_s));
    }
  }
  for (const auto& e : h.rows.evals) {
    if (!in.ok()) break;
    if (!when(e.wall_s)) {
      in.fail(fmt::format("an evaluation at {} s, not within the checkpoint's 0 to {} s", e.wall_s,
                          h.t));
    } else if (!(std::isfinite(e.scored_s) && e.scored_s >= 0.0)) {
      // Not bounded by the clock: a row scored after the checkpoint's clock was read is in it.
      in.fail(fmt::format("an evaluation scored at {} s, not a time", e.scored_s));
    }
  }
  return h;
}

bool outside_the_run(std::string_view key) {
  return key == "data_dir" || key == "progress" || key == "progress_every" ||
         key == "checkpoint_every";
}

std::string options_digest(const TrainerOptions& options) {
  const nlohmann::json all = options_to_json(options);  // named: items() is a view of it
  nlohmann::json j;
  for (const auto& [key, value] : all.items()) {
    if (!outside_the_run(key)) j[key] = value;
  }
  return fmt::format("{:08x}", crc32_of(j.dump()));
}

Status check_identity(const CheckpointHeader& header, const TrainerOptions& options,
                      const Dataset& data) {
  if (const std::string now = options_digest(options); header.options_digest != now) {
    return Error{fmt::format(
        "checkpoint: the run's options as this stalesgd reads them are not the ones it was "
        "started with (digest {}, recorded {}); resume it with the stalesgd that started it, or "
        "start it again with --force",
        now, header.options_digest)};
  }
  if (!header.data_digest.empty() && !data.digest.empty() && header.data_digest != data.digest) {
    if (is_npz_name(data.name)) {
      return Error{fmt::format(
          "the arrays of {} are not the ones this run started on (digest {}, recorded {}); give "
          "the file it used, or start it again with --force",
          data.name.substr(4), data.digest, header.data_digest)};
    }
    return Error{fmt::format(
        "the {} files under --data-dir {} are not the ones this run started on (digest {}, "
        "recorded {}); give the --data-dir it used, or start it again with --force",
        data.name, options.data_dir.string(), data.digest, header.data_digest)};
  }
  if (options.time_s > 0.0 && header.t > options.time_s) {
    return Error{fmt::format("checkpoint: its time {} s is past the run's --time {} s", header.t,
                             options.time_s)};
  }
  return {};
}

Status write_checkpoint(const fs::path& dir, const std::string& payload) {
  std::string file(kMagic);
  const std::uint64_t format = kFormat, size = payload.size();
  file.append(reinterpret_cast<const char*>(&format), sizeof format);
  file.append(reinterpret_cast<const char*>(&size), sizeof size);
  file += payload;
  const std::uint32_t c = crc32_of(payload);
  file.append(reinterpret_cast<const char*>(&c), sizeof c);
  return write_file_atomically(dir / kCheckpointFile, file);
}

Result<std::string> unwrap_checkpoint(std::string_view bytes, const std::string& name) {
  const std::size_t head = kMagic.size() + 16;
  if (bytes.size() < kMagic.size() || bytes.substr(0, kMagic.size()) != kMagic) {
    return Error{fmt::format("{} is not a stalesgd checkpoint", name)};
  }
  if (bytes.size() < head + 4) return Error{fmt::format("{} is truncated", name)};
  std::uint64_t format = 0, size = 0;
  std::memcpy(&format, bytes.data() + kMagic.size(), sizeof format);
  std::memcpy(&size, bytes.data() + kMagic.size() + 8, sizeof size);
  if (format != kFormat) {
    return Error{fmt::format("{} has checkpoint format {}; this stalesgd reads format {}", name,
                             format, kFormat)};
  }
  if (size != bytes.size() - head - 4) {
    return Error{fmt::format("{} is truncated or padded: {} payload bytes for {} recorded", name,
                             bytes.size() - head - 4, size)};
  }
  const std::string_view payload = bytes.substr(head, size);
  std::uint32_t stored = 0;
  std::memcpy(&stored, bytes.data() + head + size, sizeof stored);
  if (crc32_of(payload) != stored) {
    return Error{fmt::format("{} is corrupt (its checksum does not match)", name)};
  }
  return std::string(payload);
}

Result<std::string> read_checkpoint(const fs::path& dir) {
  const fs::path path = dir / kCheckpointFile;
  // A FIFO would block the read forever and a symlink loop throws: only a regular file (or a
  // link to one) is read.
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec && st.type() != fs::file_type::not_found)
    return file_error("cannot read", path, ec.value());
  if (st.type() != fs::file_type::not_found && st.type() != fs::file_type::regular) {
    return Error{
        fmt::format("{} is not a regular file; a checkpoint is the file a run wrote: "
                    "restore it, or start the run again with --force",
                    path.string())};
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (!fs::exists(path)) {
      return Error{
          fmt::format("{} has no {}: only a run started with --checkpoint-every can be resumed, "
                      "from its first checkpoint on; start it again with --force --out {}",
                      dir.string(), kCheckpointFile, dir.string())};
    }
    return file_error("cannot read", path, errno);
  }
  std::stringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) return file_error("cannot read", path, errno);
  return unwrap_checkpoint(bytes.str(), path.string());
}

}  // namespace stalesgd
