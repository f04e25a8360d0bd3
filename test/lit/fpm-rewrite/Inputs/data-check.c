/* Stands in for fpm_parallel_for and fpm_parallel_for_kernel in a rewritten
 * program compiled with -Dfpm_parallel_for=fpm_check
 * -Dfpm_parallel_for_kernel=fpm_check_kernel (this file is compiled without
 * them): prints the sections the rewriter put in fpm_loop.data, each with
 * where its `data` is, as an element of one of the arrays the program lists
 * in check_name, check_base and check_bytes (and its origin, where the
 * array's element 0 is from there, when that is not `data`), checks that
 * the section of every iteration lies in [0, length) and inside that array,
 * then runs the loop with the real runtime. */
#include <fpm/fpm.h>
#include <stdio.h>

extern const char *check_name[16];
extern const void *check_base[16];
extern unsigned long check_bytes[16];

static void print_sections(const fpm_loop *loop, int64_t trip_count) {
  static const char *const kinds[] = {"scalar", "in", "out", "inout", "local"};
  int j;
  printf("%s: trip %lld, data_count %d%s\n", loop->name, (long long)trip_count,
         loop->data_count,
         loop->data_count > 0 && !loop->data ? ", no data" : "");
  for (j = 0; j < loop->data_count && loop->data; ++j) {
    const fpm_arg *a = &loop->data[j];
    const char *data = (const char *)a->data;
    const char *name = "(unknown array)";
    long long at = 0;
    int k, inside = a->size > 0;
    int64_t i;
    for (k = 0; k < 16 && check_name[k]; ++k) {
      const char *base = (const char *)check_base[k];
      if (data >= base && data < base + check_bytes[k]) {
        name = check_name[k];
        at = (long long)(data - base);
        inside =
            inside && at % (long long)a->size == 0 &&
            at + a->length * (long long)a->size <= (long long)check_bytes[k];
        at /= a->size ? (long long)a->size : 1;
        break;
      }
    }
    for (i = 0; i < trip_count && inside; ++i) {
      int64_t lower = a->offset + i * a->stride;
      inside = lower >= 0 && lower + a->count <= a->length;
    }
    printf("  %s %s+%lld size %zu length %lld offset %lld stride %lld "
           "count %lld",
           a->kind >= 0 && a->kind <= 4 ? kinds[a->kind] : "?", name, at,
           a->size, (long long)a->length, (long long)a->offset,
           (long long)a->stride, (long long)a->count);
    if (a->origin != 0)
      printf(" origin %lld", (long long)a->origin);
    printf("%s\n", inside ? "" : " OUT OF RANGE");
  }
}

int fpm_check(const fpm_loop *loop, int64_t trip_count, fpm_body_fn body,
              void *context) {
  print_sections(loop, trip_count);
  return fpm_parallel_for(loop, trip_count, body, context);
}

int fpm_check_kernel(const fpm_loop *loop, int64_t trip_count, fpm_body_fn body,
                     void *context, const fpm_kernel *kernel) {
  print_sections(loop, trip_count);
  return fpm_parallel_for_kernel(loop, trip_count, body, context, kernel);
}
