void f(int n, double *a) {
#pragma fpm partition devices(cpu)
  for (int i = 0; i < n; i++)
    a[i] = i;
}
