// stalesgd(1) in roff (cli/man_page.hpp): each command's --help, run in man-page mode, adds a
// section built from its cxxopts groups; the page around them says what, where and exit codes.
#include "cli/man_page.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "cli/args.hpp"
#include "stalesgd/version.hpp"

namespace stalesgd::cli {
namespace {

bool g_writing = false;
std::string g_sections;  // the commands' sections, in the order their --help ran

// Text as roff reads it: backslashes escaped, '-' as a minus (so that flags copy and search as
// typed), and a line starting with '.' or '\'' kept as text.
std::string roff(const std::string& text) {
  std::string out;
  bool line_start = true;
  for (const char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
    line_start = c == '\n';
  }
  return out;
}

// cxxopts' help text starts with the description the command was built with, then its usage
// line ("stalesgd serve [OPTION...] DIR").
struct Heading {
  std::string usage, description;
};
Heading heading(const cxxopts::Options& options) {
  const std::string help = options.help({""});
  const std::string mark = "\nUsage:\n  ";
  const auto at = help.find(mark);
  if (at == std::string::npos) return {options.program(), {}};
  const auto from = at + mark.size();
  return {help.substr(from, help.find('\n', from) - from), help.substr(0, at)};
}

std::string flag_names(const cxxopts::HelpOptionDetails& o) {
  std::string names;
  // A one-letter name alone is a long flag spelt short for cxxopts: K is --k (flag_parsing.hpp).
  if (!o.s.empty())
    names = o.l.empty() ? "\\fB\\-\\-" + roff(o.s) + "\\fR" : "\\fB\\-" + roff(o.s) + "\\fR, ";
  for (const auto& l : o.l) {
    names += "\\fB\\-\\-" + roff(l) + "\\fR";
    if (&l != &o.l.back()) names += ", ";
  }
  if (!o.is_boolean) {
    names += " \\fI" + roff(o.arg_help.empty() ? std::string("VALUE") : o.arg_help) + "\\fR";
  }
  return names;
}

}  // namespace

bool writing_man_page() {
  return g_writing;
}

void add_man_section(const cxxopts::Options& options, const std::vector<std::string>& groups) {
  const Heading h = heading(options);
  std::string s = fmt::format(".SS \"{}\"\n", roff(h.usage));
  if (!h.description.empty()) s += roff(h.description) + "\n";
  for (const auto& group : groups.empty() ? options.groups() : groups) {
    const auto help = options.group_help(group);
    if (help.options.empty()) continue;
    if (!group.empty()) s += fmt::format(".PP\n\\fI{}\\fR\n", roff(group));
    for (const auto& o : help.options) {
      s += ".TP\n" + flag_names(o) + "\n" + roff(o.desc);
      if (o.has_default && !o.is_boolean && !o.default_value.empty()) {
        s += " (default: " + roff(o.default_value) + ")";
      }
      s += "\n";
    }
  }
  g_sections += s;
}

int print_man_page(const std::string& usage) {
  g_writing = true;
  g_sections.clear();
  // Each command's --help, in man-page mode: its own parser lists its flags.
  for (std::vector<std::string> words : {std::vector<std::string>{"train"},
                                         {"race"},
                                         {"theory"},
                                         {"theory", "--error"},
                                         {"eval"},
                                         {"export"},
                                         {"serve"},
                                         {"data", "fetch"},
                                         {"data", "info"}}) {
    words.insert(words.begin(), "stalesgd");
    words.emplace_back("--help");
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    if (const int status = run_cli(static_cast<int>(words.size()), argv.data()); status != 0) {
      return status;
    }
  }
  g_writing = false;
  fmt::print(".TH STALESGD 1 \"\" \"stalesgd {}\" \"User Commands\"\n", version());
  fmt::print(".SH NAME\nstalesgd \\- a parameter-server trainer for the K-of-P SGD rules\n");
  // The synopsis: the usage lines of `stalesgd --help`, without the text around them.
  std::string synopsis;
  for (std::size_t at = 0; at < usage.size();) {
    const auto end = std::min(usage.find('\n', at), usage.size());
    const std::string line = usage.substr(at, end - at);
    if (line.rfind("  stalesgd", 0) == 0 || line.rfind("        ", 0) == 0) {
      synopsis += line.substr(2) + "\n";
    }
    at = end + 1;
  }
  fmt::print(".SH SYNOPSIS\n.nf\n{}.fi\n", roff(synopsis));
  fmt::print(
      ".SH DESCRIPTION\n"
      "A server owns the model; worker threads (or MPI ranks) compute minibatch gradients "
      "with injected straggler delays; the server applies the K\\-of\\-P rules of Dutta et "
      "al., \"Slow and Stale Gradients Can Win the Race\" (AISTATS 2018) and records the "
      "staleness of every gradient. A run writes its journal, checkpoints and summary into "
      "its \\fB\\-\\-out\\fR folder; a race runs an experiment file's runs and compares "
      "them.\n");
  fmt::print(".SH COMMANDS\n{}", g_sections);
  fmt::print(
      ".SH EXIT STATUS\n"
      ".TP\n0\nsuccess\n"
      ".TP\n1\na run or command failed: one line on stderr says why\n"
      ".TP\n2\na usage error: a bad flag, value or file, before anything ran\n"
      ".TP\n128 + signal\nstopped by SIGINT (130), SIGTERM (143), SIGHUP (129), SIGUSR1 (138) or "
      "SIGUSR2 (140), after writing what was recorded\n");
  fmt::print(
      ".SH FILES\n"
      ".TP\n\\fIshare/doc/stalesgd/\\fR\n"
      "the documentation beside the installed program (cli.md: every command and flag; "
      "outputs.md: the files of a run)\n");
  fmt::print(".SH SEE ALSO\n\\fBmpirun\\fR(1)\n");
  return 0;
}

}  // namespace stalesgd::cli
