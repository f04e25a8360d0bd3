#include <stdio.h>

#include "scale.h"

int main(void) {
  static double a[1000];
  double sum = 0;
  int i;
#pragma fpm partition out(a[i:1])
  for (i = 0; i < 1000; i++)
    a[i] = scale(i);
  for (i = 0; i < 1000; i++)
    sum += a[i];
  printf("make-consumer: %s\n", sum == 3 * 499500.0 ? "ok" : "wrong");
  return 0;
}
