/* One small loop on the CPU, for the FPM_TRACE tests of trace-fifo.sh:
 * its trace holds the loop's name, "trace.fifo.loop". */
#include "fpm/fpm.h"

static int body(int64_t begin, int64_t end, void *context) {
  (void)context;
  (void)begin;
  (void)end;
  return 0;
}

int main(void) {
  fpm_loop loop = {0};
  loop.name = "trace.fifo.loop";
  loop.devices = "cpu";
  return fpm_parallel_for(&loop, 100, body, 0) != FPM_OK;
}
