// run.log's sink: whole lines, every write checked (util/log_file_sink.hpp).
#include "util/log_file_sink.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "util/atomic_file.hpp"

namespace stalesgd::logging {

Result<std::shared_ptr<LogFileSink>> LogFileSink::open(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return file_error("cannot write", path, errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return file_error("cannot write", path, err);
  }
  return std::shared_ptr<LogFileSink>(new LogFileSink(path, fd, st.st_size));
}

LogFileSink::~LogFileSink() {
  ::close(fd_);  // nothing is buffered: every line was written, or the failure kept
}

void LogFileSink::sink_it_(const spdlog::details::log_msg& msg) {
  if (failed_.load(std::memory_order_relaxed)) return;
  spdlog::memory_buf_t line;
  formatter_->format(msg, line);
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : ENOSPC;
      // The part of the line that was written is cut: the file ends at a whole line.
      if (done > 0) (void)!::ftruncate(fd_, size_);
      failure_ = file_error("cannot write", path_, err).message;
      failed_.store(true, std::memory_order_release);
      return;
    }
    done += static_cast<std::size_t>(n);
  }
  size_ += static_cast<off_t>(done);
}

}  // namespace stalesgd::logging
