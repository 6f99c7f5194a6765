// The routes of `stalesgd serve`: static page files, /api/runs, /api/run/<id>/series and
// /files/<path> (docs/serve.md, "Endpoints").
#include "serve/serve_api.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "serve/safe_path.hpp"
#include "serve/small_file.hpp"

namespace stalesgd::serve {
namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kDefaultRows = 20000;  // per journal per reply
constexpr std::uint64_t kMaxRows = 200000;

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

HttpReply text(int status, std::string body) {
  return {status, "text/plain; charset=utf-8", std::move(body) + "\n", nullptr};
}

HttpReply json_reply(const nlohmann::json& j) {
  // A label or path that is not UTF-8 is sent with U+FFFD rather than failing the reply.
  return {200, "application/json", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
          nullptr};
}

const char* content_type(const fs::path& path) {
  const auto ext = path.extension().string();
  if (ext == ".html") return "text/html; charset=utf-8";
  if (ext == ".js") return "text/javascript; charset=utf-8";
  if (ext == ".css") return "text/css; charset=utf-8";
  if (ext == ".json") return "application/json";
  if (ext == ".csv") return "text/csv; charset=utf-8";
  if (ext == ".png") return "image/png";
  return "text/plain; charset=utf-8";
}

}  // namespace

bool has_chart_library(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "uPlot.iife.min.js", ec) &&
         fs::is_regular_file(dir / "uPlot.min.css", ec);
}

ServeApi::ServeApi(ServeConfig config) : config_(std::move(config)) {}

void ServeApi::set_allowed_hosts(std::vector<std::string> hosts) {
  std::lock_guard lock(mu_);
  allowed_hosts_ = std::move(hosts);
}

Result<std::size_t> ServeApi::rescan() {
  std::lock_guard lock(mu_);
  return rescan_locked();
}

Result<std::size_t> ServeApi::rescan_locked() {
  auto catalog = discover_runs(config_.root);
  if (!catalog) return catalog.error();
  kind_ = catalog->kind;
  order_.clear();
  std::map<std::string, std::unique_ptr<RunWatch>> kept;
  const double now = steady_seconds();
  for (auto& run : catalog->runs) {
    const std::string id = run.id;
    if (kept.count(id)) continue;
    auto it = watches_.find(id);
    std::unique_ptr<RunWatch> w;
    if (it != watches_.end()) {
      w = std::move(it->second);
      w->set_entry(std::move(run));
    } else {
      w = std::make_unique<RunWatch>(std::move(run));
    }
    w->refresh(now);
    order_.push_back(id);
    kept[id] = std::move(w);
  }
  watches_ = std::move(kept);
  return order_.size();
}

HttpReply ServeApi::handle(const HttpRequest& request) {
  std::lock_guard lock(mu_);
  if (!allowed_hosts_.empty() && std::find(allowed_hosts_.begin(), allowed_hosts_.end(),
                                           request.host) == allowed_hosts_.end()) {
    return text(403, fmt::format("Host '{}' is refused: open the page as http://127.0.0.1:PORT/",
                                 request.host));
  }
  const std::string& p = request.path;
  if (p == "/api/runs") return runs_json();
  constexpr std::string_view kRun = "/api/run/", kSeries = "/series";
  if (p.starts_with(kRun) && p.ends_with(kSeries) && p.size() > kRun.size() + kSeries.size()) {
    return series_json(p.substr(kRun.size(), p.size() - kRun.size() - kSeries.size()), request);
  }
  constexpr std::string_view kFiles = "/files/";
  if (p.starts_with(kFiles)) return run_file(p.substr(kFiles.size()));
  return static_file(p);
}

HttpReply ServeApi::runs_json() {
  auto found = rescan_locked();
  if (!found) return text(500, found.error().message);
  nlohmann::json j;
  j["root"] = config_.root.string();
  j["kind"] = kind_;
  j["chart_library"] = has_chart_library(config_.vendor_dir);
  nlohmann::json runs = nlohmann::json::array(), groups = nlohmann::json::array();
  std::vector<std::string> group_order;
  std::map<std::string, nlohmann::json> group_runs;
  for (const auto& id : order_) {
    const auto& w = *watches_.at(id);
    runs.push_back(w.overview());
    const auto& g = w.entry().group;
    if (!group_runs.count(g)) group_order.push_back(g);
    group_runs[g].push_back(id);
  }
  for (const auto& g : group_order) groups.push_back({{"name", g}, {"runs", group_runs[g]}});
  j["runs"] = std::move(runs);
  j["groups"] = std::move(groups);
  return json_reply(j);
}

HttpReply ServeApi::series_json(const std::string& id, const HttpRequest& request) {
  auto it = watches_.find(id);
  if (it == watches_.end()) {
    // A run that started since the last look.
    if (auto found = rescan_locked(); !found) return text(500, found.error().message);
    it = watches_.find(id);
    if (it == watches_.end()) return text(404, fmt::format("no run '{}' here", id));
  }
  it->second->refresh(steady_seconds());
  const auto since = request.query.find("since");
  const auto limit_text = request.query.find("limit");
  std::uint64_t limit = kDefaultRows;
  if (limit_text != request.query.end()) {
    try {
      limit = std::clamp<std::uint64_t>(std::stoull(limit_text->second), 1, kMaxRows);
    } catch (const std::exception&) {
      return text(400, "limit must be a number of rows");
    }
  }
  return json_reply(it->second->series(
      SeriesCursor::parse(since == request.query.end() ? std::string() : since->second), limit));
}

HttpReply ServeApi::static_file(const std::string& path) const {
  // A fixed list: nothing from the request reaches a file name.
  static const std::map<std::string, std::pair<bool, std::string>> kFiles{
      {"/", {false, "index.html"}},
      {"/index.html", {false, "index.html"}},
      {"/app.js", {false, "app.js"}},
      {"/charts.js", {false, "charts.js"}},
      {"/view.js", {false, "view.js"}},
      {"/style.css", {false, "style.css"}},
      {"/vendor/uPlot.iife.min.js", {true, "uPlot.iife.min.js"}},
      {"/vendor/uPlot.min.css", {true, "uPlot.min.css"}},
  };
  const auto it = kFiles.find(path);
  if (it == kFiles.end()) return text(404, "not found");
  const auto& [vendor, name] = it->second;
  const fs::path file = (vendor ? config_.vendor_dir : config_.web_dir) / name;
  auto body = read_regular_file(file, kMaxSmallFileBytes);
  if (body.state != FileState::kOpen) {
    return text(404, vendor ? std::string(kChartLibraryMissing)
                            : fmt::format("{} is missing: reinstall stalesgd", file.string()));
  }
  return {200, content_type(file), std::move(body.bytes), nullptr};
}

HttpReply ServeApi::run_file(const std::string& relative) const {
  const auto r = resolve_inside(config_.root, relative);
  if (r.status != 200) return text(r.status, r.why);
  // Opened here, streamed by the transport: a file of any size costs a chunk of memory, and the
  // reading happens outside mu_.
  auto file = std::make_shared<RegularFile>(RegularFile::open(r.path));
  if (file->state() == FileState::kMissing) return text(404, "no such file");
  if (!file->is_open()) return text(404, file->why());  // swapped since the look above
  return {200, content_type(r.path), {}, std::move(file)};
}

}  // namespace stalesgd::serve
