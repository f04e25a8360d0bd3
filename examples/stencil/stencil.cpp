// A 2-D five-point Jacobi stencil iterated in time: every sweep is one
// partitioned loop over rows, called again and again as an iterative solver
// does. Checks the result against the same sweeps run serially.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

namespace {

void sweep(int n, const std::vector<double> &in, std::vector<double> &out) {
  const double *src = in.data();
  double *dst = out.data();
  // Row i writes columns 1 .. n-2 only: an out section must name exactly
  // what is written, since a device copies back all of it.
#pragma fpm partition name(stencil.sweep) schedule(gss)                        \
    in(src[(i - 1) * n : 3 * n]) out(dst[i * n + 1 : n - 2])
  for (int i = 1; i < n - 1; ++i)
    for (int j = 1; j < n - 1; ++j)
      dst[i * n + j] = 0.25 * (src[(i - 1) * n + j] + src[(i + 1) * n + j] +
                               src[i * n + j - 1] + src[i * n + j + 1]);
}

void serialSweep(int n, const std::vector<double> &in,
                 std::vector<double> &out) {
  for (int i = 1; i < n - 1; ++i)
    for (int j = 1; j < n - 1; ++j)
      out[i * n + j] = 0.25 * (in[(i - 1) * n + j] + in[(i + 1) * n + j] +
                               in[i * n + j - 1] + in[i * n + j + 1]);
}

std::vector<double> initial(int n) {
  std::vector<double> grid(static_cast<std::size_t>(n) * n, 0.0);
  for (int j = 0; j < n; ++j)
    grid[j] = 1.0; // a hot top edge
  return grid;
}

} // namespace

int main(int argc, char **argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 512;
  int steps = argc > 2 ? std::atoi(argv[2]) : 50;
  std::vector<double> a = initial(n), b = a;
  std::vector<double> ra = initial(n), rb = ra;
  for (int t = 0; t < steps; ++t) {
    sweep(n, a, b);
    std::swap(a, b);
    serialSweep(n, ra, rb);
    std::swap(ra, rb);
  }
  for (std::size_t k = 0; k < a.size(); ++k)
    if (a[k] != ra[k]) {
      std::fprintf(stderr, "stencil: cell %zu is %.17g, expected %.17g\n", k,
                   a[k], ra[k]);
      return 1;
    }
  std::printf("stencil: %d x %d, %d sweeps, result matches the serial run\n", n,
              n, steps);
  return 0;
}
