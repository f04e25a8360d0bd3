/* Old C as a CMake project builds it: C_STANDARD 90, which CMake turns into
   -std=gnu90, where `typeof` is a keyword (strict C90 refuses it). */
#include <stdio.h>

int main() {
  static double a[500];
  int i;
  typeof(a[0]) sum = 0;
#pragma fpm partition out(a[i:1])
  for (i = 0; i < 500; i++)
    a[i] = i;
  for (i = 0; i < 500; i++)
    sum += a[i];
  printf("old_c: %s\n", sum == 124750 ? "ok" : "wrong");
  return 0;
}
