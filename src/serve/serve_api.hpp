// ServeApi: what `stalesgd serve` answers, apart from how requests arrive (the CLI's HTTP
// server, tools/cli/serve_command.cpp, hands each GET here): the page's static files, the JSON
// endpoints over the runs and the runs' own files, read-only and confined to the served folder
// (docs/serve.md, "Endpoints").
//
// Thread safety: handle() and set_allowed_hosts() may be called from any thread; one mutex
// serialises them (a request reads a few files; the page polls every second or two). A file
// reply is only opened under it: its bytes are read by the transport, outside it.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "serve/run_watch.hpp"
#include "stalesgd/util/result.hpp"
#include "util/regular_file.hpp"

namespace stalesgd::serve {

struct HttpRequest {
  std::string path;                          // percent-decoded, without the query
  std::map<std::string, std::string> query;  // decoded
  std::string host;                          // the Host header
};

struct HttpReply {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  // When set, the reply's body instead: the whole file (size() bytes from its open), for the
  // transport to send in chunks (/files/ replies; the file is already open and checked).
  std::shared_ptr<const RegularFile> file;
};

struct ServeConfig {
  std::filesystem::path root;        // the served folder, canonical
  std::filesystem::path web_dir;     // the page: index.html, app.js, style.css
  std::filesystem::path vendor_dir;  // the chart library's files (uPlot); may be missing
};

// The one line that says how to get the chart library when vendor_dir lacks it.
inline constexpr const char* kChartLibraryMissing =
    "the chart library (uPlot) is not fetched: run tools/setup.sh serve (npm pack uplot into "
    "data/web/uplot/)";

// Whether `dir` holds the chart library's files.
bool has_chart_library(const std::filesystem::path& dir);

class ServeApi {
 public:
  explicit ServeApi(ServeConfig config);

  // Finds the runs again (a race adds folders as it goes) and reads what they gained; returns
  // how many runs there are. An Error when the served folder is gone.
  Result<std::size_t> rescan();

  // Requests whose Host header is not one of `hosts` are refused (403), so that a web page
  // elsewhere cannot read the runs through a DNS name rebound to 127.0.0.1. Empty: any host.
  void set_allowed_hosts(std::vector<std::string> hosts);

  HttpReply handle(const HttpRequest& request);

 private:
  Result<std::size_t> rescan_locked();
  HttpReply runs_json();
  HttpReply series_json(const std::string& id, const HttpRequest& request);
  HttpReply static_file(const std::string& path) const;
  HttpReply run_file(const std::string& relative) const;

  const ServeConfig config_;
  std::mutex mu_;
  std::vector<std::string> allowed_hosts_;                    // guarded by mu_
  std::string kind_;                                          // guarded by mu_
  std::vector<std::string> order_;                            // run ids; guarded by mu_
  std::map<std::string, std::unique_ptr<RunWatch>> watches_;  // guarded by mu_
};

}  // namespace stalesgd::serve
