#include <stdio.h>

void report(double last) {
  printf("implicit_c: %s\n", last == 499 ? "ok" : "wrong");
}
