/* A function called before any declaration: an error in C99 and later,
   unless the target's compile options say -Wno-error=implicit-function-
   declaration, as old code's builds do. */
int main(void) {
  static double a[500];
  int i;
#pragma fpm partition out(a[i:1])
  for (i = 0; i < 500; i++)
    a[i] = i;
  report(a[499]);
  return 0;
}
