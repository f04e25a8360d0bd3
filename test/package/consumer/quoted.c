/* A pragma'd source that includes a header beside it by a quoted name: the
   rewritten file, compiled from the build tree, must still find it. */
#include "quoted.h"

#include <stdio.h>

int main(void) {
  double a[QUOTED_N];
  int i;
#pragma fpm partition out(a[i : 1])
  for (i = 0; i < QUOTED_N; i++)
    a[i] = quotedValue(i);
  for (i = 0; i < QUOTED_N; i++)
    if (a[i] != quotedValue(i)) {
      printf("quoted: a[%d] = %g\n", i, a[i]);
      return 1;
    }
  return 0;
}
