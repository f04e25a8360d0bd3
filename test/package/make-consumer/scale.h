/* SCALE comes from the Makefile's CPPFLAGS: the rewriter must see it too. */
static inline double scale(int i) { return (double)SCALE * i; }
