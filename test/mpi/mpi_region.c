/* A heat time loop in a data region, its two sweeps split across the MPI
   ranks (the pragma program, routed: fpm_rewrite_sources MPI), with an
   `update host` and `update device` in the middle; then a second region
   whose sweep swaps two pointers and runs over fewer rows each step; then
   an FDTD-like time loop of three fields and three loops. Inside
   a region each rank keeps what it wrote and receives only the rows it
   reads. Every rank checks its grids against the serial loop's, computed
   apart: "mpi_region: ok", or exit 1. */
#include <stdio.h>
#include <string.h>

#define N 96
static double a[N][N], b[N][N], sa[N][N], sb[N][N];
static double ex[N][N], ey[N][N], hz[N][N], sex[N][N], sey[N][N], shz[N][N];

/* One step of the fields (as PolyBench's fdtd-2d, without its source
   row), serial. */
static void fdtdSerial(void) {
  int i, j;
  for (i = 1; i < N; i++)
    for (j = 0; j < N; j++)
      sey[i][j] = sey[i][j] - 0.5 * (shz[i][j] - shz[i - 1][j]);
  for (i = 0; i < N; i++)
    for (j = 1; j < N; j++)
      sex[i][j] = sex[i][j] - 0.5 * (shz[i][j] - shz[i][j - 1]);
  for (i = 0; i < N - 1; i++)
    for (j = 0; j < N - 1; j++)
      shz[i][j] = shz[i][j] -
                  0.7 * (sex[i][j + 1] - sex[i][j] + sey[i + 1][j] - sey[i][j]);
}

static void sweepSerial(double (*from)[N], double (*to)[N]) {
  int i, j;
  for (i = 1; i < N - 1; i++)
    for (j = 1; j < N - 1; j++)
      to[i][j] = 0.25 * (from[i - 1][j] + from[i + 1][j] + from[i][j - 1] +
                         from[i][j + 1]);
}

int main(void) {
  int t, i, j;
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      a[i][j] = b[i][j] = sa[i][j] = sb[i][j] = (i * 7 + j * 3) % 17;
#pragma fpm data inout(a[0 : N], b[0 : N])
  {
    for (t = 0; t < 8; t++) {
#pragma fpm partition name(mpi.region.ab) in(a[i - 1 : 3][0 : N])              \
    out(b[i : 1][1 : N - 2])
      for (i = 1; i < N - 1; i++)
        for (j = 1; j < N - 1; j++)
          b[i][j] =
              0.25 * (a[i - 1][j] + a[i + 1][j] + a[i][j - 1] + a[i][j + 1]);
#pragma fpm partition name(mpi.region.ba) in(b[i - 1 : 3][0 : N])              \
    out(a[i : 1][1 : N - 2])
      for (i = 1; i < N - 1; i++)
        for (j = 1; j < N - 1; j++)
          a[i][j] =
              0.25 * (b[i - 1][j] + b[i + 1][j] + b[i][j - 1] + b[i][j + 1]);
      if (t == 3) {
#pragma fpm update host(a[0 : N])
        a[N / 2][N / 2] += 1;
#pragma fpm update device(a[0 : N])
      }
    }
  }
  {
    double(*p)[N] = a, (*q)[N] = b, (*swap)[N];
    int rows;
#pragma fpm data inout(a[0 : N], b[0 : N])
    {
      for (t = 0; t < 6; t++) {
        rows = N - 2 - 5 * (t % 3);
#pragma fpm partition name(mpi.region.swap) in(p[i - 1 : 3][0 : N])            \
    out(q[i : 1][1 : N - 2])
        for (i = 1; i < rows + 1; i++)
          for (j = 1; j < N - 1; j++)
            q[i][j] =
                0.25 * (p[i - 1][j] + p[i + 1][j] + p[i][j - 1] + p[i][j + 1]);
        swap = p;
        p = q;
        q = swap;
      }
    }
  }
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) {
      ex[i][j] = sex[i][j] = (i * j % 11) / 10.0;
      ey[i][j] = sey[i][j] = ((i + 2 * j) % 7) / 6.0;
      hz[i][j] = shz[i][j] = ((3 * i + j) % 5) / 4.0;
    }
#pragma fpm data inout(ex[0 : N], ey[0 : N], hz[0 : N])
  {
    for (t = 0; t < 5; t++) {
#pragma fpm partition name(mpi.fdtd.ey) inout(ey[i : 1][0 : N])                \
    in(hz[i - 1 : 2][0 : N])
      for (i = 1; i < N; i++)
        for (j = 0; j < N; j++)
          ey[i][j] = ey[i][j] - 0.5 * (hz[i][j] - hz[i - 1][j]);
#pragma fpm partition name(mpi.fdtd.ex) inout(ex[i : 1][0 : N])                \
    in(hz[i : 1][0 : N])
      for (i = 0; i < N; i++)
        for (j = 1; j < N; j++)
          ex[i][j] = ex[i][j] - 0.5 * (hz[i][j] - hz[i][j - 1]);
#pragma fpm partition name(mpi.fdtd.hz) inout(hz[i : 1][0 : N])                \
    in(ex[i : 1][0 : N], ey[i : 2][0 : N])
      for (i = 0; i < N - 1; i++)
        for (j = 0; j < N - 1; j++)
          hz[i][j] = hz[i][j] -
                     0.7 * (ex[i][j + 1] - ex[i][j] + ey[i + 1][j] - ey[i][j]);
    }
  }
  for (t = 0; t < 5; t++)
    fdtdSerial();
  for (t = 0; t < 8; t++) {
    sweepSerial(sa, sb);
    sweepSerial(sb, sa);
    if (t == 3)
      sa[N / 2][N / 2] += 1;
  }
  {
    double(*p)[N] = sa, (*q)[N] = sb, (*swap)[N];
    int rows;
    for (t = 0; t < 6; t++) {
      rows = N - 2 - 5 * (t % 3);
      for (i = 1; i < rows + 1; i++)
        for (j = 1; j < N - 1; j++)
          q[i][j] =
              0.25 * (p[i - 1][j] + p[i + 1][j] + p[i][j - 1] + p[i][j + 1]);
      swap = p;
      p = q;
      q = swap;
    }
  }
  if (memcmp(ex, sex, sizeof ex) || memcmp(ey, sey, sizeof ey) ||
      memcmp(hz, shz, sizeof hz)) {
    printf("mpi_region: the fields differ from the serial loop's\n");
    return 1;
  }
  if (memcmp(a, sa, sizeof a) || memcmp(b, sb, sizeof b)) {
    printf("mpi_region: the grids differ from the serial loop's\n");
    return 1;
  }
  printf("mpi_region: ok\n");
  return 0;
}
