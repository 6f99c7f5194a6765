// MPI ping-pong of an n-float vector between ranks 0 and 1: the round trip one gradient of
// --engine mpi costs at least (parameters out, gradient back). Built when CMake finds MPI; run
// by benchmarks/mpi_engine.sh.
// usage: mpirun -np 2 mpi_pingpong N_FLOATS [REPEATS]  -> prints the mean round trip in seconds
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int n = argc > 1 ? std::atoi(argv[1]) : 7850;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 2000;
  std::vector<float> buf(static_cast<std::size_t>(n), 1.0f);
  double t0 = 0.0;
  for (int i = -repeats / 10; i < repeats; ++i) {  // the first tenth warms up, untimed
    if (i == 0) t0 = MPI_Wtime();
    if (rank == 0) {
      MPI_Send(buf.data(), n, MPI_FLOAT, 1, 0, MPI_COMM_WORLD);
      MPI_Recv(buf.data(), n, MPI_FLOAT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf.data(), n, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf.data(), n, MPI_FLOAT, 0, 0, MPI_COMM_WORLD);
    }
  }
  if (rank == 0) std::printf("%.9f\n", (MPI_Wtime() - t0) / repeats);
  MPI_Finalize();
  return 0;
}
