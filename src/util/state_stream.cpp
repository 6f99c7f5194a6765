// StateWriter / StateReader: the parts that are more than a memcpy.
#include "util/state_stream.hpp"

#include <sstream>

namespace stalesgd {

void StateWriter::rng(const Rng& engine) {
  std::ostringstream text;
  text << engine;
  str(text.str());
}

void StateReader::fail(std::string_view what) {
  if (!ok_) return;
  ok_ = false;
  error_ = part_.empty() ? std::string(what) : "part '" + part_ + "': " + std::string(what);
}

bool StateReader::tag(std::string_view name) {
  const std::string got = str();
  if (!ok_) return false;
  if (got != name) {
    fail("expected part '" + std::string(name) + "'");
    return false;
  }
  part_ = got;
  return true;
}

std::string StateReader::str() {
  const std::uint64_t n = u64();
  if (!ok_ || n > left()) {
    fail("a string longer than the data");
    return {};
  }
  std::string s(in_.substr(pos_, n));
  pos_ += n;
  return s;
}

void StateReader::rng(Rng& engine) {
  std::istringstream text(str());
  if (!ok_) return;
  Rng read;
  text >> read;
  if (text.fail()) {
    fail("a random engine that does not parse");
    return;
  }
  engine = read;
}

}  // namespace stalesgd
