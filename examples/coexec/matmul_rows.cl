// Rows of C = A * B on an OpenCL device: work-item k computes row k of C.
// fpm hands the device a chunk of rows as the global offset and size, and
// copies in exactly the rows of A the chunk reads (B whole, once per call),
// and back the rows of C it writes.
__kernel void matmul_rows(__global const float *a, __global const float *b,
                          __global float *c, int n) {
  const size_t i = get_global_id(0);
  __global float *row = c + i * (size_t)n;
  for (int j = 0; j < n; ++j)
    row[j] = 0.0f;
  for (int k = 0; k < n; ++k) {
    const float aik = a[i * (size_t)n + k];
    __global const float *bk = b + (size_t)k * n;
    for (int j = 0; j < n; ++j)
      row[j] += aik * bk[j];
  }
}
