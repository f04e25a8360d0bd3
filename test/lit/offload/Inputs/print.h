/* What the offload corpus's programs print about an array: its length, an
   FNV-1a hash of its bytes (one flipped bit anywhere shows), its sum in index
   order and three of its elements. Printed after the loops, by the serial
   code, so that the output is the same whichever PEs ran the loops as long
   as every element has the serial program's bits. C89 and C++ alike. */
#ifndef OFFLOAD_PRINT_H
#define OFFLOAD_PRINT_H

#include <stdio.h>

/* A program uses some of these only: no -Wunused-function for the others. */
#if defined(__GNUC__)
#define PRINT_MAYBE_UNUSED __attribute__((unused))
#else
#define PRINT_MAYBE_UNUSED
#endif

PRINT_MAYBE_UNUSED static unsigned long long print_hash(const void *data,
                                                        unsigned long bytes) {
  const unsigned char *p = (const unsigned char *)data;
  unsigned long long h = 14695981039346656037ULL;
  unsigned long k;
  for (k = 0; k < bytes; k++) {
    h ^= p[k];
    h *= 1099511628211ULL;
  }
  return h;
}

PRINT_MAYBE_UNUSED static void print_doubles(const char *name, const double *a,
                                             unsigned long n) {
  double sum = 0;
  unsigned long k;
  for (k = 0; k < n; k++)
    sum += a[k];
  printf("%s: %lu hash %016llx sum %.17g [0] %.17g [%lu] %.17g [%lu] %.17g\n",
         name, n, print_hash(a, n * sizeof *a), sum, a[0], n / 2, a[n / 2],
         n - 1, a[n - 1]);
}

PRINT_MAYBE_UNUSED static void print_floats(const char *name, const float *a,
                                            unsigned long n) {
  double sum = 0;
  unsigned long k;
  for (k = 0; k < n; k++)
    sum += a[k];
  printf("%s: %lu hash %016llx sum %.17g [0] %.9g [%lu] %.9g [%lu] %.9g\n",
         name, n, print_hash(a, n * sizeof *a), sum, a[0], n / 2, a[n / 2],
         n - 1, a[n - 1]);
}

PRINT_MAYBE_UNUSED static void print_ints(const char *name, const int *a,
                                          unsigned long n) {
  long long sum = 0;
  unsigned long k;
  for (k = 0; k < n; k++)
    sum += a[k];
  printf("%s: %lu hash %016llx sum %lld [0] %d [%lu] %d [%lu] %d\n", name, n,
         print_hash(a, n * sizeof *a), sum, a[0], n / 2, a[n / 2], n - 1,
         a[n - 1]);
}

#endif
