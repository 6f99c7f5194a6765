// docs/stragglers.md, checked against the code. Every example spec in that doc must appear in
// a test; this file guarantees it by reading the doc itself: each line of a ```delay-spec
// block, each inline `spec` or `clause` code span, each --delay '...' in a shell block, the
// trace files (a ```csv block after <!-- file: NAME -->), and the error table (messages
// compared exactly). The C++ snippet of the doc is copied verbatim into doc_snippet() below.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "straggler/straggler_test_util.hpp"
#include "support/delay_families.hpp"
#include "support/fixtures.hpp"

using namespace stalesgd;
using namespace stalesgd::test;

namespace {

constexpr int kDocWorkers = 8;  // the doc's examples and messages are for 8 workers

struct ErrorRow {
  std::string spec;
  std::string message;
};

struct Doc {
  std::vector<std::string> block_specs;   // ```delay-spec lines, comments stripped
  std::vector<std::string> inline_specs;  // `...` spans that are whole specs
  std::vector<std::string> inline_clauses;
  std::vector<std::string> shell_specs;  // --delay '...'
  std::map<std::string, std::string> files;
  std::vector<ErrorRow> errors;
};

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  const auto e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::string strip_ticks(std::string cell) {
  cell = trim(cell);
  if (cell == "(empty)") return "";
  if (cell.size() >= 2 && cell.front() == '`' && cell.back() == '`')
    cell = cell.substr(1, cell.size() - 2);
  return cell;
}

bool is_spec_like(const std::string& s) {
  static const char* const kPrefixes[] = {
      "const:", "uniform:", "exp:", "shifted-exp:", "pareto:", "lognormal:", "mix:", "trace:"};
  // Grammar placeholders (<time>, ...) and bare family names ("mix:") are not examples.
  if (s.find('<') != std::string::npos || s.find("...") != std::string::npos || s.back() == ':') {
    return false;
  }
  if (s == "none" || s.rfind("none;", 0) == 0) return true;
  for (const char* p : kPrefixes) {
    if (s.rfind(p, 0) == 0) return true;
  }
  return false;
}

bool is_clause_like(const std::string& s) {
  if (s.find('=') == std::string::npos || s.find('<') != std::string::npos) return false;
  return s.front() == '*' ||
         (s.size() >= 2 && s[0] == 'w' && std::isdigit(static_cast<unsigned char>(s[1])));
}

Doc read_doc() {
  std::ifstream in(std::string(STALESGD_SOURCE_DIR) + "/docs/stragglers.md");
  REQUIRE(in);
  Doc doc;
  std::string line, fence, pending_file, file_text;
  const std::regex shell_delay("--delay '([^']*)'");
  const std::regex span("`([^`]+)`");
  while (std::getline(in, line)) {
    if (line.rfind("```", 0) == 0) {
      if (fence.empty()) {
        fence = trim(line.substr(3));
        fence = fence.empty() ? "plain" : fence;
        file_text.clear();
      } else {
        if (fence == "csv" && !pending_file.empty()) doc.files[pending_file] = file_text;
        pending_file.clear();
        fence.clear();
      }
      continue;
    }
    if (fence == "delay-spec") {
      const std::string spec = trim(line.substr(0, line.find('#')));
      if (!spec.empty()) doc.block_specs.push_back(spec);
    } else if (fence == "csv") {
      file_text += line + "\n";
    } else if (fence == "sh") {
      for (std::sregex_iterator it(line.begin(), line.end(), shell_delay), end; it != end; ++it) {
        doc.shell_specs.push_back((*it)[1]);
      }
    } else if (fence.empty()) {
      if (line.rfind("<!-- file: ", 0) == 0) {
        pending_file = trim(line.substr(11, line.find("-->") - 11));
        continue;
      }
      // An error-table row: | `spec` | `delay spec ...` |
      if (line.rfind("| ", 0) == 0 && line.find("| `delay spec") != std::string::npos) {
        const auto mid = line.find("| `delay spec");
        doc.errors.push_back({strip_ticks(line.substr(2, mid - 2)),
                              strip_ticks(line.substr(mid + 2, line.rfind('|') - mid - 2))});
        continue;
      }
      for (std::sregex_iterator it(line.begin(), line.end(), span), end; it != end; ++it) {
        const std::string s = (*it)[1];
        if (is_spec_like(s)) doc.inline_specs.push_back(s);
        if (is_clause_like(s)) doc.inline_clauses.push_back(s);
      }
    }
  }
  return doc;
}

// A temp dir holding the doc's trace files, the base directory of every doc example.
struct DocFixture {
  Doc doc = read_doc();
  TempDir dir;
  DocFixture() {
    for (const auto& [name, text] : doc.files) std::ofstream(dir / name) << text;
  }
};

void check_parses_and_round_trips(const std::string& spec, const std::filesystem::path& base) {
  INFO("doc example: " << spec);
  const auto p = profile_ok(spec, kDocWorkers, base);
  CHECK(profile_ok(p.describe(), kDocWorkers, base).describe() == p.describe());
}

// Verbatim from the doc's "The C++ interface" section.
Status doc_snippet(double& x_out, const Distribution*& iid_out) {
  auto profile = stalesgd::StragglerProfile::parse("exp:mean=10ms;w3=x5", /*workers=*/8);
  if (!profile) return profile.error();  // one line: the problem and the fix
  stalesgd::DelaySampler worker3(*profile, /*worker=*/3, /*run_seed=*/42);
  double x = worker3.next(/*now_s=*/0.0);              // seconds; five times an exp:mean=10ms draw
  const stalesgd::Distribution* iid = profile->iid();  // nullptr here: worker 3 differs
  x_out = x;
  iid_out = iid;
  return {};
}

}  // namespace

TEST_CASE("every example spec in docs/stragglers.md parses and round-trips", "[straggler][docs]") {
  DocFixture f;
  CHECK(f.doc.block_specs.size() >= 12);
  CHECK(f.doc.inline_specs.size() >= 10);
  CHECK(f.doc.inline_clauses.size() >= 6);
  CHECK(f.doc.shell_specs.size() >= 2);
  REQUIRE(f.doc.files.count("delays.csv") == 1);
  for (const auto& s : f.doc.block_specs) check_parses_and_round_trips(s, f.dir.path());
  for (const auto& s : f.doc.inline_specs) check_parses_and_round_trips(s, f.dir.path());
  for (const auto& s : f.doc.shell_specs) check_parses_and_round_trips(s, f.dir.path());
  for (const auto& c : f.doc.inline_clauses)
    check_parses_and_round_trips("exp:mean=10ms;" + c, f.dir.path());
}

TEST_CASE("every message in the doc's error table is exactly what the parser says",
          "[straggler][docs]") {
  DocFixture f;
  CHECK(f.doc.errors.size() >= 20);
  REQUIRE(f.doc.files.count("bad.csv") == 1);
  for (const auto& row : f.doc.errors) {
    std::string expected = row.message;
    for (auto at = expected.find("<dir>"); at != std::string::npos; at = expected.find("<dir>")) {
      expected.replace(at, 5, f.dir.path().string());
    }
    CHECK(profile_error(row.spec, kDocWorkers, f.dir.path()) ==
          test::with_registered_families(expected));
  }
}

TEST_CASE("the doc's precedence and replay examples do what their comments say",
          "[straggler][docs]") {
  DocFixture f;
  const auto in_doc = [&](const std::string& spec) {
    INFO(spec);
    REQUIRE(std::find(f.doc.block_specs.begin(), f.doc.block_specs.end(), spec) !=
            f.doc.block_specs.end());
    return profile_ok(spec, kDocWorkers, f.dir.path());
  };
  const auto draw_at = [](const StragglerProfile& p, int w, double t) {
    return DelaySampler(p, w, 1).next(t);
  };
  const auto base10 = profile_ok("exp:mean=10ms", kDocWorkers);
  const auto base40 = profile_ok("exp:mean=40ms", kDocWorkers);

  const auto a = in_doc("exp:mean=10ms;w3=x5;*@60s=exp:mean=40ms");
  CHECK(draw_at(a, 3, 0) == 5 * draw_at(base10, 3, 0));
  CHECK(draw_at(a, 3, 61) == draw_at(base40, 3, 61));
  const auto b = in_doc("exp:mean=10ms;*@60s=exp:mean=40ms;w3=x5");
  CHECK(draw_at(b, 3, 0) == 5 * draw_at(base10, 3, 0));
  CHECK(draw_at(b, 3, 61) == 5 * draw_at(base40, 3, 61));
  const auto c = in_doc("exp:mean=10ms;w3=x5;w3@30s=x10");
  CHECK(draw_at(c, 3, 31) == 10 * draw_at(base10, 3, 31));
  const auto d = in_doc("exp:mean=10ms;w0-3=const:50ms");
  CHECK(draw_at(d, 3, 0) == 0.05);
  CHECK(draw_at(d, 4, 0) == draw_at(base10, 4, 0));
  const auto e = in_doc("exp:mean=10ms;w7=pareto:scale=5ms,shape=1.5;w7@120s=none");
  CHECK(draw_at(e, 7, 0) >= 0.005);
  CHECK(draw_at(e, 7, 120) == 0.0);
  const auto g = in_doc("none;*@10s=exp:mean=20ms");
  CHECK(draw_at(g, 0, 9) == 0.0);
  CHECK(draw_at(g, 0, 10) > 0.0);

  // "With the file above and 4 workers, worker 3 replays column w0[ms]: 12.5, 8, 10.1, 12.5 ms."
  DelaySampler w3(in_doc("trace:delays.csv"), 3, 1);
  for (const double ms : {12.5, 8.0, 10.1, 12.5})
    CHECK(w3.next(0) == Approx(ms / 1000).epsilon(1e-15));
  DelaySampler w1(in_doc("trace:delays.csv;w1=x2"), 1, 1);
  CHECK(w1.next(0) == Approx(0.060).epsilon(1e-15));
  DelaySampler w5(in_doc("exp:mean=10ms;w5@30s=trace:delays.csv"), 5, 1);
  CHECK(w5.next(30) == Approx(0.009).epsilon(1e-15));  // column 5 mod 3 = 2, 9000us
}

TEST_CASE("the doc's C++ snippet compiles and behaves as its comments say", "[straggler][docs]") {
  double x = -1;
  const Distribution* iid = nullptr;
  REQUIRE(doc_snippet(x, iid).ok());
  DelaySampler plain(profile_ok("exp:mean=10ms", 8), 3, 42);
  CHECK(x == 5 * plain.next(0.0));
  CHECK(iid == nullptr);
}
