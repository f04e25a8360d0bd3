/* Beside quoted.c, found by `#include "quoted.h"`. */
#define QUOTED_N 100
static double quotedValue(int i) { return 2.0 * i + 1.0; }
