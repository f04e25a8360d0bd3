/* The Mandelbrot set: rows near the set's centre cost far more than rows at
 * the edge, so an even split is unbalanced and dynamic schedules shine.
 * Checks the image against the same rows computed serially. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_ITERATIONS 2000

static double seconds(void) {
  struct timespec now;
  timespec_get(&now, TIME_UTC);
  return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

static int escapeTime(double cr, double ci) {
  double zr = 0, zi = 0;
  int k = 0;
  while (k < MAX_ITERATIONS && zr * zr + zi * zi < 4.0) {
    double t = zr * zr - zi * zi + cr;
    zi = 2 * zr * zi + ci;
    zr = t;
    ++k;
  }
  return k;
}

static void render(int width, int height, int *image) {
  int row, col; /* C89 style: counters declared at the top */
#pragma fpm partition name(mandelbrot.rows) schedule(fss)                      \
    out(image[row * width : width])
  for (row = 0; row < height; row++)
    for (col = 0; col < width; col++)
      image[row * width + col] =
          escapeTime(-2.0 + 3.0 * col / width, -1.2 + 2.4 * row / height);
}

int main(int argc, char **argv) {
  int width = argc > 1 ? atoi(argv[1]) : 800;
  int height = argc > 2 ? atoi(argv[2]) : 600;
  int *image = malloc(sizeof(int) * width * height);
  int *reference = malloc(sizeof(int) * width * height);
  if (!image || !reference) {
    fprintf(stderr, "mandelbrot: out of memory\n");
    return 1;
  }
  /* Both outputs touched first, so that neither run pays page faults. */
  memset(image, 0xff, sizeof(int) * width * height);
  memset(reference, 0xff, sizeof(int) * width * height);
  double start = seconds();
  render(width, height, image);
  double parallel = seconds() - start;

  start = seconds();
  for (int row = 0; row < height; row++)
    for (int col = 0; col < width; col++)
      reference[row * width + col] =
          escapeTime(-2.0 + 3.0 * col / width, -1.2 + 2.4 * row / height);
  double serial = seconds() - start;
  if (memcmp(image, reference, sizeof(int) * width * height) != 0) {
    fprintf(stderr, "mandelbrot: the image differs from the serial one\n");
    return 1;
  }
  long inside = 0;
  for (int k = 0; k < width * height; ++k)
    inside += image[k] == MAX_ITERATIONS;
  printf("mandelbrot: %d x %d, %ld points inside, matches the serial image\n",
         width, height, inside);
  printf("mandelbrot: fpm %.3f s, serial %.3f s (%.2fx)\n", parallel, serial,
         serial / parallel);
  free(image), free(reference);
  return 0;
}
