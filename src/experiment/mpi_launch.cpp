// run_under_mpirun: spawn, wait, read back (why: mpi_launch.hpp).
#include "experiment/mpi_launch.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wordexp.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "config/option_table.hpp"
#include "output/folder_lock.hpp"
#include "stalesgd/data/catalog.hpp"

extern char** environ;

namespace stalesgd {
namespace fs = std::filesystem;

namespace {

// The launcher's words: STALESGD_MPIRUN split as a shell would (quotes and backslashes; no
// command substitution), or mpirun with what tools/mpirun.sh adds.
Result<std::vector<std::string>> launcher() {
  std::vector<std::string> words;
  if (const char* custom = std::getenv("STALESGD_MPIRUN"); custom != nullptr && *custom) {
    wordexp_t split{};
    const int failed = wordexp(custom, &split, WRDE_NOCMD | WRDE_UNDEF);
    if (failed != 0) {
      if (failed == WRDE_NOSPACE) wordfree(&split);
      return Error{
          fmt::format("STALESGD_MPIRUN='{}' is not a command line (unbalanced quotes, a command "
                      "substitution or an unset variable); write it as for a shell, e.g. "
                      "STALESGD_MPIRUN=\"mpirun --hostfile hosts\"",
                      custom)};
    }
    for (std::size_t i = 0; i < split.we_wordc; ++i) words.emplace_back(split.we_wordv[i]);
    wordfree(&split);
    if (words.empty()) return Error{"STALESGD_MPIRUN is blank; unset it or name an mpirun"};
    return words;
  }
  words = {"mpirun", "--oversubscribe", "--quiet"};
  if (geteuid() == 0) words.push_back("--allow-run-as-root");
  return words;
}

// The job's own error line (rank 0 prints one, "stalesgd: error: ..."), without the prefix; or a
// general one when there is none (a crash: the log has Open MPI's account).
std::string job_error(const fs::path& log) {
  std::ifstream in(log);
  constexpr std::string_view kPrefix = "stalesgd: error: ";
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(kPrefix)) return line.substr(kPrefix.size());
  }
  return "the mpi job failed";
}

}  // namespace

std::vector<std::pair<std::string, std::string>> mpi_settings() {
  return {{"mpi_yield_when_idle", "1"},      {"odls_base_sigkill_timeout", "3"},
          {"oob_tcp_keepalive_time", "4"},   {"oob_tcp_keepalive_intvl", "1"},
          {"oob_tcp_keepalive_probes", "4"}, {"btl_tcp_eager_limit", "1048576"}};
}

Result<nlohmann::json> run_under_mpirun(const ExperimentRun& run, const fs::path& dir,
                                        const std::atomic<bool>* interrupt) {
  TrainerOptions o = run.options();  // workers: a multiple of workers_per_rank (check_race)
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return Error{fmt::format("cannot find the stalesgd binary ({})", ec.message())};
  // The job runs in the directory trace files resolve against; paths it gets are absolute
  // (an npz:PATH data set's too).
  o.data_dir = fs::absolute(o.data_dir);
  o.dataset = absolute_dataset_name(o.dataset);
  const fs::path out = fs::absolute(dir);
  const fs::path cwd = fs::absolute(o.delay_base_dir.empty() ? fs::path(".") : o.delay_base_dir);

  auto launched = launcher();
  if (!launched) return launched.error();
  std::vector<std::string> words = std::move(launched).value();
  // Rank 0 locks the run's folder inside the race's, which this process holds: the job is
  // told so (FolderLock::kOuterVariable), on a remote first host too (-x).
  const std::string outer =
      fmt::format("{}={}:{}", FolderLock::kOuterVariable, ::getpid(), out.parent_path().string());
  for (const auto& w :
       {std::string("-x"), std::string(FolderLock::kOuterVariable), std::string("-np"),
        std::to_string(o.workers / o.workers_per_rank + 1), self.string(), std::string("train")}) {
    words.push_back(w);
  }
  for (auto& a : options_to_args(o)) words.push_back(std::move(a));
  for (const auto& w : {std::string("--no-progress"), std::string("--out"), out.string()}) {
    words.push_back(w);
  }
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);

  // Open MPI refuses to run as root without both variables (with --allow-run-as-root).
  if (geteuid() == 0) {
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
  }
  // Open MPI's settings for stalesgd's ranks, as tools/mpirun.sh sets them (why: there), where
  // the environment does not set them already.
  for (const auto& [key, value] : mpi_settings()) {
    setenv(fmt::format("OMPI_MCA_{}", key).c_str(), value.c_str(), 0);
  }
  if (std::getenv("STALESGD_MPIRUN") == nullptr &&
      std::getenv("OMPI_MCA_plm_rsh_agent") == nullptr) {
    setenv("OMPI_MCA_plm_rsh_args", kSshArgs, 0);
  }
  // Open MPI writes its own messages (banners, libevent warnings on an interrupt) to stderr
  // too; the job's stderr goes to a log in the run's folder, and an error is read back from it.
  fs::create_directories(out, ec);
  if (ec) return Error{fmt::format("cannot create {} ({})", out.string(), ec.message())};
  // The summary read back below must be this job's, not one an earlier race (--force) left.
  fs::remove(out / "summary.json", ec);
  if (ec)
    return Error{
        fmt::format("cannot replace {} ({})", (out / "summary.json").string(), ec.message())};
  const fs::path log = out / "mpirun.log";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  // Its own process group: a Ctrl-C in the terminal reaches the race alone, which passes it on
  // once (a second SIGINT makes mpirun kill the ranks before rank 0 has written anything).
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  // The job's environment: this process's, with the race's folder named.
  std::vector<char*> env;
  const std::string name = std::string(FolderLock::kOuterVariable) + "=";
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string_view(*e).starts_with(name)) continue;
    env.push_back(*e);
  }
  std::string outer_entry = outer;  // posix_spawn takes char*
  env.push_back(outer_entry.data());
  env.push_back(nullptr);
  pid_t child = 0;
  const int spawned = posix_spawnp(&child, argv[0], &actions, &attributes, argv.data(), env.data());
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    return Error{
        fmt::format("cannot start {} ({}); install openmpi-bin (tools/setup.sh does) or "
                    "set STALESGD_MPIRUN",
                    words[0], std::strerror(spawned))};
  }
  int status = 0;
  bool forwarded = false;
  for (;;) {
    const pid_t done = waitpid(child, &status, WNOHANG);
    if (done == child) break;
    if (done < 0 && errno != EINTR) {
      return Error{fmt::format("waiting for {}: {}", words[0], std::strerror(errno))};
    }
    // Passed on once; mpirun sends every rank SIGTERM, and rank 0 stops the run and writes.
    if (!forwarded && interrupt != nullptr && interrupt->load()) {
      kill(child, SIGINT);
      forwarded = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    // An interrupted job exits non-zero (mpirun's own code for an aborted job) after rank 0
    // wrote its outputs: keep them, as for the other engines.
    if (!forwarded) {
      return Error{fmt::format("{} (the job's output: {}, {})", job_error(log), log.string(),
                               WIFEXITED(status) ? fmt::format("exit {}", WEXITSTATUS(status))
                                                 : fmt::format("signal {}", WTERMSIG(status)))};
    }
  }
  std::ifstream in(out / "summary.json");
  if (!in) return Error{fmt::format("the mpi run wrote no {}", (out / "summary.json").string())};
  try {
    auto summary = nlohmann::json::parse(in);
    // Rank 0 wrote it at the start and did not replace it: the job ended mid-run.
    if (summary.value("status", "") == std::string("running")) {
      return Error{
          fmt::format("the mpi job ended before its run did ({} says running; the "
                      "job's output: {})",
                      (out / "summary.json").string(), log.string())};
    }
    return summary;
  } catch (const nlohmann::json::exception& e) {
    return Error{fmt::format("{}: {}", (out / "summary.json").string(), e.what())};
  }
}

}  // namespace stalesgd
