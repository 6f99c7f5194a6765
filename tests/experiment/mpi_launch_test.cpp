// The race's mpirun launcher (src/experiment/mpi_launch.cpp): its Open MPI settings are
// tools/mpirun.sh's, so a race's mpi runs behave as the documented command does.
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "experiment/mpi_launch.hpp"

using namespace stalesgd;

TEST_CASE("mpi launch: the race sets Open MPI as tools/mpirun.sh does", "[experiment][mpi]") {
  std::ifstream in(STALESGD_SOURCE_DIR "/tools/mpirun.sh");
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  const std::string script = text.str();
  const auto settings = mpi_settings();
  REQUIRE(settings.size() >= 4);
  for (const auto& [key, value] : settings) {
    INFO(key << " = " << value);
    const std::string line = "export OMPI_MCA_" + key + "=${OMPI_MCA_" + key + ":-" + value + "}";
    CHECK(script.find(line) != std::string::npos);
  }
  // And the script sets no other unconditionally (plm_rsh_args goes to ssh alone: both set it
  // only when no other launch agent is named).
  const std::string ssh = "export OMPI_MCA_plm_rsh_args=";
  std::size_t exports = 0;
  for (std::size_t at = script.find("export OMPI_MCA_"); at != std::string::npos;
       at = script.find("export OMPI_MCA_", at + 1)) {
    exports += script.compare(at, ssh.size(), ssh) != 0;
  }
  CHECK(exports == settings.size());
  CHECK(script.find("export OMPI_MCA_plm_rsh_args=${OMPI_MCA_plm_rsh_args:-" +
                    std::string(kSshArgs) + "}") != std::string::npos);
}
