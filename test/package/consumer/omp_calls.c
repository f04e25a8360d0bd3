/* A converted OpenMP program that still calls the OpenMP API: it links with
   fpm::fpmrt alone, no OpenMP flag (none would turn its pragmas on). */
#include <omp.h>
#include <stdio.h>

int main(void) {
  static double a[1000];
  const double start = omp_get_wtime();
  int i;
  omp_set_num_threads(2);
#pragma fpm partition out(a[i:1])
  for (i = 0; i < 1000; i++)
    a[i] = i;
  if (a[999] != 999 || omp_get_wtime() < start) {
    printf("omp_calls: wrong\n");
    return 1;
  }
  printf("omp_calls: ok\n");
  return 0;
}
