/* A source without a pragma: compiled as it is. */
int scale_unused(void) { return 0; }
