#!/usr/bin/env python3
"""Differential test of generated DOALL loops.

Generates COUNT random but valid programs, numbered FIRST to FIRST+COUNT-1,
each with one `#pragma fpm partition` loop made of a random base and
shapes. The base: the loop variable's type, where it is declared, its
direction, step, comparison and bounds (constants or parameters); arrays of
int, long, float and double; a body of random expressions over them, with
sometimes a private scalar, an inner loop (whose variable is declared
outside), a conditional write or a read of the element it writes
(`inout`); data clauses or none; a schedule, a devices clause and a grain,
or not; C99 or C++17.

The shapes (SHAPES below; `--help` lists them) are what broke fpm on code
written by others: local structs, atomics, types and macros of the
enclosing function, sections that reach below an array's element 0,
helpers that share a name or have that of an OpenCL C built-in,
data-dependent subscripts, reductions and flags, repeated clauses,
preprocessor lines between the pragma and its loop, loops without data
clauses (fpm works them out). --shapes chooses them
(default: all but those in NOT_YET). Program k has shape number k of the
list (modulo its length), and every other one with probability
SHAPE_CHANCE, never atomic (C11) with overloads (C++). A program whose
shape k lets a loop run on an OpenCL device is, with probability
OFFLOAD_CHANCE, one whose loop can: data clauses, none of HOST_SHAPES.
Every loop is a valid DOALL loop whose serial answer is deterministic:
integer or exactly representable arithmetic wherever an order may differ
(reductions, atomics).

Each program is compiled and run serially; rewritten by fpm-rewrite,
compiled (both with -DUSE_FPM) and run on the OpenCL devices only
(FPM_DEVICES=gpu: PoCL here; a loop they cannot run runs on the CPU), on
every PE, then on the CPU only or every PE again, with 1 to 3 CPU threads.
Its output must be the serial program's, byte for byte, and nothing may be
written on stderr. A program of the shape refused-section is not run:
fpm-rewrite must refuse it (a non-zero exit, `error:` on stderr, no output
file); those are counted apart.

Usage (the lit tests pass the build's tools):
  differential.py --seed S --count N [--first K] [--shapes LIST]
                  --work DIR --rewrite FPM_REWRITE --cc CC --cxx CXX
                  --cflags FLAGS --ldflags FLAGS [--jobs J] [--minimize]

Program k depends on S, k and the --shapes list only: `--first k --count 1`
makes it again. A failure prints what failed (the end of the failing
command's stderr, or the first line where the outputs differ and how the
program ran) and the program, kept in DIR (p<k>.c or .cpp, with its
rewrite); with --minimize, then the program without each shape and base
feature whose absence keeps the same kind of failure (DIR/p<k>.min.c).
Then, for each shape, how many programs had it and which failed, and a
last line `differential: P programs, R of R' match the serial build, F of
F' refused as expected`; the exit status is 1 after any failure. A longer
run by hand: --count 300 --shapes all with other seeds (--jobs 2 checks
two programs at once).
"""

import argparse
import concurrent.futures
import os
import random
import shlex
import subprocess
import sys

N = 600  # elements of every array
M = 5  # columns of the 2-D output

SCHEDULES = ["auto", "equal", "cpm", "geometric", "numerical", "hpopta",
             "optimal", "wdah", "wdah, 10", "wdah_heuristic", "pss", "css(3)",
             "gss", "gss, 80", "fss", "fss, 50", "tss", "tss, 30"]

# The shapes, in the order of the rotation (program k has shape k).
SHAPES = {
    "struct-member":
        "a local struct's member array written in the body (`rec.v[v] = "
        "...`), its type a file-scope typedef or declared in the function; "
        "sometimes a local struct the body only reads",
    "struct-helper":
        "a local struct passed by address to a helper that writes "
        "`p->v[i]`",
    "atomic":
        "a local atomic_int or _Atomic long counter updated with "
        "atomic_fetch_add (C11)",
    "cell-helper":
        "a helper that writes through a pointer into an array element, a "
        "local array's or the output's (`store(&a[v], x)`)",
    "local-types":
        "typedefs, an enum and a struct declared in the function before the "
        "loop (one using another) and used in the body: in declarations, "
        "casts, an enum-sized local array, sizeof",
    "macros":
        "macros defined in the function before the loop, used in the body "
        "(an #ifdef there too), in a clause and as the written element, "
        "undefined or redefined after the loop; a #define in the body",
    "offset-pointer":
        "a pointer into the middle of an array (`src = b + 1`) read at "
        "`src[v - 1]`, `src[v]`, `src[v + 1]` with `in(src[v - 1:3])`, "
        "mostly from loops that start at 0",
    "guarded-stencil":
        "`in(D[v - 1:3])` on a file-scope array, read under "
        "`if (v > lo && v < n - 1)`, from loops that start at 0",
    "overloads":
        "C++ helpers that share a name: overloads on float and double, two "
        "instantiations of a template, one name in two namespaces",
    "builtin-names":
        "helpers named like OpenCL C built-ins (sign, clamp, max, min, "
        "rotate, dot, mix, select, step, degrees) that compute something "
        "else, called with arguments converted to their parameters' types",
    "abs":
        "abs, labs, fabs, fabsf (C) or std::abs, abs, fabs (C++) on int, "
        "long, float and double, converting arguments",
    "gather":
        "a data-dependent read `c[idx[v]]`, the clauses naming whole arrays",
    "scatter":
        "writes through a permutation, `a[perm[v]] = ...` (and "
        "`g[perm[v]][j]`), with `out(a[0:N])` or `inout(a[0:N])`",
    "refused-section":
        "a data-dependent section, `out(a[perm[v]:1])`: fpm-rewrite must "
        "refuse the program (it is not run)",
    "reduction":
        "reduction(op: ...) over integers (+, *, min, max, &, |, ^) and exact "
        "double sums, of local or file-scope variables",
    "flags":
        "`if (cond) found = 1;` with reduction(||: found), and the like with "
        "reduction(max: ...) and reduction(&&: ...)",
    "repeated-clauses":
        "a clause repeated: `private(t) private(u)`, `in(b[...]) in(c[...])`, "
        "one reduction clause per variable",
    "preprocessor-lines":
        "`#ifdef USE_FPM` / the pragma / [`#else` / `#pragma omp parallel "
        "for` /] `#endif` / the loop, or a #define between the pragma and "
        "the loop",
    "columns":
        "a column per iteration of a file-scope matrix, `H[0:R][v:1]` "
        "(inout or out) or a plane of a component-first one, "
        "`U[0:2][v:1][0:3]`: sections that move in a later dimension",
    "in-place":
        "one array in two sections, read wide and written narrow: "
        "`in(P[0:1][0:N]) out(P[1:1][v:1])` (a table filled row by row)",
    "derived":
        "no in, out or inout clause: fpm works them out from the body's "
        "subscripts (the clauses the program would have, left out)",
}

# The shapes that fpm does not handle yet, left out of the default
# --shapes so that the lit tests pass until their fix lands.
NOT_YET = []
DEFAULT_SHAPES = [name for name in SHAPES if name not in NOT_YET]

SHAPE_CHANCE = 0.25
C_ONLY = {"atomic"}
CXX_ONLY = {"overloads"}
# Shapes that keep a loop on the CPU (OpenCL C has no structs, atomics of
# C11 or pointers to host memory). A program whose shape k is none of these
# is, with probability OFFLOAD_CHANCE, one that an OpenCL device can run:
# data clauses, no devices(cpu), none of these shapes, no array of the
# function written by a helper (cell-helper) and no struct variable in the
# body (local-types).
HOST_SHAPES = {"struct-member", "struct-helper", "atomic"}
OFFLOAD_CHANCE = 0.6

# Helpers named like OpenCL C built-ins, with other semantics than the
# built-in's, and a call that converts an argument (a double to an int
# parameter, an int to a double one). {b}, {c}, {v}: an element of b and c
# and the loop variable, as long or double.
BUILTINS = {
    "sign": ("static long sign(long x) { return x < 0 ? -2 : 3; }",
             "sign((double){b} * 0.5)"),
    "clamp": ("static long clamp(long x, int low, int high) "
              "{ return x < low ? high : x > high ? low : x; }",
              "clamp({c}, 1.5, 20.0)"),
    "max": ("static long max(int p, int q) { return p > q ? p - q : q - p; }",
            "max((double){b} / 4.0, {v})"),
    "min": ("static double min(double p, double q) { return p < q ? q : p; }",
            "min({b}, 3)"),
    "rotate": ("static long rotate(long x, int k) { return x * k + 1; }",
               "rotate({v}, (double){c} * 0.5)"),
    "dot": ("static double dot(double p, double q) { return p * q + 1.0; }",
            "dot((float){b}, 2)"),
    "mix": ("static double mix(double p, double q, int t) "
            "{ return t ? p : q; }",
            "mix({b}, {c}, (double){v} * 0.25)"),
    "select": ("static long select(long p, long q, int c) "
               "{ return c > 0 ? p : q; }",
               "select({v}, s, (double){b} * 0.5)"),
    "step": ("static double step(int edge, double x) { return x - edge; }",
             "step((double){v} / 3.0, {c})"),
    "degrees": ("static double degrees(int r) { return r * 2.5; }",
                "degrees((double){b} / 4.0)"),
}

FORMATS = {"int": ("%d", ""), "long": ("%ld", ""),
           "unsigned long": ("%lu", ""), "float": ("%a", "(double)"),
           "double": ("%a", ""), "_Bool": ("%d", "(int)"),
           "bool": ("%d", "(int)")}


def indented(prefix, lines):
    """Lines of C; a preprocessor line stays at the start of its line."""
    return [(prefix if not line.startswith("#") else "") + line
            for line in lines]


class Program:
    """One generated program and what it needs to be checked.

    Each decision draws from a stream of its own (stream()), so that
    leaving out one feature (`off`, which --minimize fills) leaves the
    others as they were."""

    def __init__(self, seed, index, shapes, off=frozenset()):
        self.seed = seed
        self.index = index
        self.off = frozenset(off)
        forced = shapes[index % len(shapes)] if shapes else None
        self.offload = (forced not in HOST_SHAPES and
                        self.stream("offload").random() < OFFLOAD_CHANCE)
        # A program to be refused is not run: only the program whose number
        # names that shape has it, so that it costs no other program its run.
        chosen = [s for s in shapes if s not in self.off and
                  (s == forced or s != "refused-section" and
                   self.stream("has " + s).random() < SHAPE_CHANCE and
                   not (self.offload and s in HOST_SHAPES))]
        if set(chosen) & C_ONLY and set(chosen) & CXX_ONLY:
            keep = (C_ONLY if forced in C_ONLY else CXX_ONLY
                    if forced in CXX_ONLY else
                    self.stream("language").choice([C_ONLY, CXX_ONLY]))
            chosen = [s for s in chosen if s in keep or
                      s not in C_ONLY | CXX_ONLY]
        self.shapes = chosen
        self.base = []  # the base features this program has (for --minimize)
        self.cxx = bool(set(chosen) & CXX_ONLY) or (
            not set(chosen) & C_ONLY and self.chance("c++", 0.3))
        self.refused = "refused-section" in chosen
        self.includes = ["<stdio.h>"]
        self.file_lines = []  # types and helpers at file scope
        self.arrays = []  # more file-scope arrays: (declaration, init)
        self.params = []  # more parameters of run(): (declaration, argument)
        self.local_types = []
        self.locals = ["int j, k;"]
        self.setup = []  # statements of run() before the loop
        self.body = []
        self.terms = []  # added to the value the body writes: (text, floating)
        self.after = []  # lines of run() after the loop
        self.private = []
        self.reductions = []  # (op, variable)
        self.ins = []
        self.outs = []
        self.inouts = []
        self.generate()

    def stream(self, name):
        return random.Random("%d.%d.%s" % (self.seed, self.index, name))

    def chance(self, feature, p):
        """Whether the base has `feature` (drawn with probability p)."""
        if feature in self.off or self.stream(feature).random() >= p:
            return False
        self.base.append(feature)
        return True

    def features(self):
        return self.shapes + self.base

    def has(self, shape):
        return shape in self.shapes

    # Expressions --------------------------------------------------------

    def names(self, floating):
        cast = "(double)" if floating else "(long)"
        return [cast + "b[v]", cast + "c[N - 1 - v]"]

    def leaf(self, rng, floating, names):
        r = rng.random()
        if r < 0.45:
            return rng.choice(names)
        if r < 0.6:
            return "(%s)v" % ("double" if floating else "long")
        if r < 0.75:
            return "s" if not floating else "x"
        return str(rng.randint(1, 9)) + (".5" if floating else "")

    def expr(self, rng, floating, names, depth):
        if depth == 0 or rng.random() < 0.3:
            return self.leaf(rng, floating, names)
        a = self.expr(rng, floating, names, depth - 1)
        b = self.expr(rng, floating, names, depth - 1)
        r = rng.random()
        if r < 0.3:
            return "(%s + %s)" % (a, b)
        if r < 0.5:
            return "(%s - %s)" % (a, b)
        if r < 0.75:
            return "(%s * %s)" % (a, b)
        if r < 0.85 and a != b:
            # Not `s < s`: clang warns about it, and PoCL then writes
            # "1 warning generated." on stderr when it builds the kernel.
            return "(%s < %s ? %s : %s)" % (a, b, a, b)
        if r < 0.85:
            return "(%s + %s)" % (a, b)
        if floating:
            return "(%s / %d.0)" % (a, rng.randint(2, 7))
        return "(%s %% %d)" % (a, rng.randint(2, 7))

    def condition(self, rng):
        return rng.choice(["(long)b[v] > %d" % rng.randint(20, 48),
                           "(long)c[N - 1 - v] < s",
                           "v %% %d == %d" % (rng.choice([7, 97, 1000]),
                                              rng.randint(0, 6))])

    def print_array(self, label, element, ctype):
        fmt, cast = FORMATS[ctype]
        return ["for (k = 0; k < N; k++)",
                '  printf("%s %%d %s\\n", k, %s%s);'
                % (label, fmt, cast, element)]

    def print_scalar(self, name, ctype):
        fmt, cast = FORMATS[ctype]
        return ['printf("%s %s\\n", %s%s);' % (name, fmt, cast, name)]

    # The loop ----------------------------------------------------------

    def header(self, rng):
        """The for header, and the values of the bounds' parameters."""
        self.vtype = rng.choice(["int", "long", "unsigned", "int", "long"])
        self.declared_outside = rng.random() < 0.35
        up = rng.random() < 0.6
        step = rng.choice([1, 1, 1, 2, 3, 7])
        lo = rng.randint(0 if self.vtype != "unsigned" else 1, N // 4)
        # src[v + 1] reads b[v + 2] (offset-pointer).
        top = N - 3 if self.has("offset-pointer") else N - 1
        hi = rng.randint(max(lo + 1, N // 2), top)
        if self.has("guarded-stencil"):
            # Sections that reach below D's element 0 and past its end.
            lo = 0 if self.vtype != "unsigned" else 1
            hi = top
        elif self.has("offset-pointer") and rng.random() < 0.7:
            # A section that reaches below src's element 0 (at v = 0).
            lo = 0 if self.vtype != "unsigned" else 1
        # Bounds as parameters (n, lo) or as constants.
        params = rng.random() < 0.5
        self.args = {"n": hi, "lo": lo}
        lo_text = "lo" if params else str(lo)
        if up:
            start_text = lo_text
            compare = rng.choice(["<", "<=", "!=", ">"])
            if compare == "<":
                bound_text = "n" if params else str(hi)
            elif compare == "<=":
                bound_text = "n - 1" if params else str(hi - 1)
            else:  # != (or the bound on the left: `bound > v`)
                trips = (hi - lo) // step
                bound_text = str(lo + trips * step)
            if compare == ">":
                test = "%s > v" % bound_text
            else:
                test = "v %s %s" % (compare, bound_text)
        else:
            start_text = "n" if params else str(hi)
            compare = rng.choice([">", ">=", "!=", "<"])
            # An unsigned variable stepping below 0 would wrap around and
            # go on (the serial loop too): stop at `step` or above.
            low = max(lo, step) if self.vtype == "unsigned" else lo
            if compare in (">", ">="):
                bound_text = lo_text if low == lo else str(low)
            else:
                trips = (hi - low) // step
                bound_text = str(hi - trips * step)
            if compare == "<":
                test = "%s < v" % bound_text
            else:
                test = "v %s %s" % (compare, bound_text)
        if step == 1 and rng.random() < 0.6:
            inc = ("v++" if rng.random() < 0.5 else "++v") if up else \
                  ("v--" if rng.random() < 0.5 else "--v")
        else:
            form = rng.choice(["+=", "-=", "= v +"])
            if up:
                inc = {"+=": "v += %d", "-=": "v -= -%d",
                       "= v +": "v = v + %d"}[form] % step
            else:
                inc = {"+=": "v += -%d", "-=": "v -= %d",
                       "= v +": "v = v + -%d"}[form] % step
        init = ("v = %s" if self.declared_outside else
                self.vtype + " v = %s") % start_text
        return "for (%s; %s; %s)" % (init, test, inc)

    def generate(self):
        rng = self.stream("base")
        types = ["int", "long", "float", "double"]
        self.a_type = rng.choice(types)  # the output
        self.b_type = rng.choice(types)
        self.c_type = rng.choice(types)
        self.g_type = rng.choice(types)  # the 2-D output
        self.floating = self.a_type in ("float", "double")
        self.domain = "double" if self.floating else "long"
        self.header_text = self.header(self.stream("header"))
        if self.declared_outside:
            self.locals.append("%s v;" % self.vtype)
        self.target = "a[v]"
        self.store = False  # the write is store(&a[...], value)
        self.target_macro = False  # the write is AT(v) = ... (macros)
        self.g_row = "v"  # the row of g the inner loop writes
        self.b_length = "N"  # the length of b's section
        self.clauses = (self.offload or self.refused or
                        self.chance("data-clauses", 0.75))
        self.inner = self.chance("inner", 0.3)
        self.conditional = self.chance("conditional", 0.15)
        self.inout = not self.conditional and self.chance("inout", 0.2)
        for shape in self.shapes:
            getattr(self, "shape_" + shape.replace("-", "_"))(
                self.stream(shape))
        self.write_value()
        if self.clauses:
            self.ins[:0] = ["b[0:%s]" % self.b_length, "c[0:N]"]
            if self.target == "a[v]":
                (self.inouts if self.inout else self.outs).insert(0,
                                                                  "a[v:1]")
            if self.inner:
                self.outs.append("g[v:1][0:M]" if self.g_row == "v"
                                 else "g[0:N][0:M]")
        self.pragma = self.pragma_text(self.stream("clauses"))

    def write_value(self):
        """The body's write of the output (and of the 2-D output)."""
        rng = self.stream("value")
        value = self.expr(rng, self.floating, self.names(self.floating), 3)
        if self.g_type in ("float", "double"):
            gvalue = self.expr(rng, True, ["(double)b[v]", "(double)j"], 2)
        else:
            gvalue = self.expr(rng, False, ["(long)b[v]", "(long)j"], 2)
        if self.target_macro and self.target == "a[v]":
            self.setup.append("#define AT(i) a[(i)]")
            self.after.insert(0, "#undef AT")
            self.target = "AT(v)"
        # An update through a permutation (scatter) is refused as a possible
        # histogram: fpm cannot see that perm is one. Such a program only
        # writes.
        if self.inout and not self.has("scatter"):
            value = "(%s + (%s)%s)" % (value, self.domain, self.target)
        body = []
        if self.chance("private", 0.3) or self.has("repeated-clauses"):
            self.locals.append("%s t;" % self.domain)
            body.append("t = %s;" % value)
            value = "t * 2 - t"
            self.private.insert(0, "t")
        for text, floating in self.terms:
            if floating and not self.floating:
                text = "(long)(%s)" % text
            value = "%s + %s" % (value, text)
        if self.store:
            write = "store(&%s, %s);" % (self.target, value)
        else:
            write = "%s = (%s)(%s);" % (self.target, self.a_type, value)
        if self.conditional:
            write = "if (((long)v + s) %% 3 != 0) %s" % write
        body.append(write)
        if self.inner:
            body.append("for (j = 0; j < M; j++) g[%s][j] = (%s)(%s);"
                        % (self.g_row, self.g_type, gvalue))
        self.body += body

    def pragma_text(self, rng):
        repeat = self.has("repeated-clauses")
        clauses = []

        def lists(kind, items):
            if items:
                clauses.extend(["%s(%s)" % (kind, item) for item in items]
                               if repeat else
                               ["%s(%s)" % (kind, ", ".join(items))])
        lists("private", self.private)
        ops = []
        for op, _ in self.reductions:
            if op not in ops:
                ops.append(op)
        for op in ops:
            names = [name for o, name in self.reductions if o == op]
            if repeat:
                clauses.extend("reduction(%s: %s)" % (op, name)
                               for name in names)
            else:
                clauses.append("reduction(%s: %s)" % (op, ", ".join(names)))
        if not self.has("derived") or self.refused:
            lists("in", self.ins)
            lists("out", self.outs)
            lists("inout", self.inouts)
        if self.chance("schedule", 0.7):
            clauses.append("schedule(%s)" % rng.choice(SCHEDULES))
        if self.chance("devices", 0.3):
            devices = rng.choice(["cpu", "all"])
            clauses.append("devices(%s)" % ("all" if self.offload
                                            else devices))
        if self.chance("grain", 0.2):
            clauses.append("grain(%d)" % rng.choice([1, 3, 16, 64]))
        clauses.append("name(differential.s%d.p%d)" % (self.seed, self.index))
        rng.shuffle(clauses)
        return "#pragma fpm partition " + " ".join(clauses)

    # The shapes, each given its own stream ------------------------------

    def shape_derived(self, rng):
        pass  # pragma_text leaves the data clauses out

    def shape_struct_member(self, rng):
        et = rng.choice(["long", "double"])
        fields = "%s v[N]; %s scale;" % (et, et)
        style = rng.choice(["file", "struct", "typedef"])
        if style == "file":
            self.file_lines.append("typedef struct { %s } Vec;" % fields)
            self.locals.append("Vec rec = {{0}, 3};")
        elif style == "struct":
            self.local_types.append("struct Rec { %s };" % fields)
            self.locals.append("struct Rec rec = {{0}, 3};")
        else:
            self.local_types.append("typedef struct { %s } Rec;" % fields)
            self.locals.append("Rec rec = {{0}, 3};")
        floating = et == "double"
        self.body.append("rec.v[v] = (%s)%s * rec.scale;" % (
            et, self.expr(rng, floating, self.names(floating), 2)))
        self.after += self.print_array("rec", "rec.v[k]", et)
        if rng.random() < 0.5:
            # One the body only reads (copied into the outlined body's
            # context, in C).
            self.local_types.append("struct Par { long k; long m; };")
            self.locals.append("struct Par prm = {2, 7};")
            self.terms.append(("prm.k * prm.m", False))

    def shape_struct_helper(self, rng):
        et = rng.choice(["long", "double"])
        self.file_lines += [
            "typedef struct { %s v[N]; %s scale; } Acc;" % (et, et),
            "static void put(Acc *p, long i, %s x) { p->v[i] = x * p->scale; }"
            % et]
        self.locals.append("Acc q = {{0}, %s};" % ("2" if et == "long"
                                                    else "0.5"))
        floating = et == "double"
        self.body.append("put(&q, v, %s);" % self.expr(
            rng, floating, self.names(floating), 2))
        self.after += self.print_array("q", "q.v[k]", et)

    def shape_atomic(self, rng):
        self.includes.append("<stdatomic.h>")
        self.locals.append(rng.choice(["atomic_int hits = 0;",
                                       "_Atomic long hits = 0;"]))
        if rng.random() < 0.5:
            self.body.append("if (%s) atomic_fetch_add(&hits, 1);"
                             % self.condition(rng))
        else:
            self.body.append("atomic_fetch_add(&hits, (long)b[v] %% %d);"
                             % rng.randint(3, 9))
        self.after.append('printf("hits %ld\\n", (long)atomic_load(&hits));')

    def shape_cell_helper(self, rng):
        if rng.random() < 0.5 and not self.offload:
            self.file_lines.append(
                "static void put_cell(long *cell, long i, long x) "
                "{ *cell = 2 * x + i; }")
            self.locals.append("long cells[N];")
            self.setup.append("for (k = 0; k < N; k++) cells[k] = -1;")
            self.body.append("put_cell(&cells[v], (long)v, %s);" % self.expr(
                rng, False, self.names(False), 2))
            self.after += self.print_array("cells", "cells[k]", "long")
        else:
            self.file_lines.append(
                "static void store(%s *cell, %s x) { *cell = (%s)x; }"
                % (self.a_type, self.domain, self.a_type))
            self.store = True

    def shape_local_types(self, rng):
        kinds = [k for k in ("typedef", "enum", "struct")
                 if rng.random() < 0.6 and not (self.offload and
                                                k == "struct")] or \
            ["typedef"]
        wide = "long"
        if "typedef" in kinds:
            self.local_types.append("typedef long wide;")
            wide = "wide"
        if "enum" in kinds:
            self.local_types.append("enum Scale { LOW = 2, HIGH = 7 };")
        low, high = ("LOW", "HIGH") if "enum" in kinds else ("2", "7")
        value = "(%s)%s * %s" % (wide, self.expr(rng, False, self.names(False),
                                                 1), low)
        if "struct" in kinds:
            self.local_types.append("struct Pair { %s x; %s y; };"
                                    % (wide, wide))
            self.body += ["struct Pair pr;", "pr.x = %s;" % value,
                          "pr.y = (%s)v %% %s;" % (wide, high)]
            self.terms.append(("(pr.x + pr.y)", False))
        else:
            self.body.append("%s w = %s;" % (wide, value))
            self.terms.append(("w", False))
            if self.offload and rng.random() < 0.5:
                # A struct that the body names only in sizeof.
                self.local_types.append("struct Pair { %s x; %s y; };"
                                        % (wide, wide))
                self.terms.append(("(long)sizeof(struct Pair)", False))
        if "enum" in kinds and rng.random() < 0.5:
            self.body.append("enum Scale e = v % 2 ? LOW : HIGH;")
            self.terms.append(("e", False))
        if "enum" in kinds and rng.random() < 0.4:
            self.body += ["long part[HIGH];", "part[v % HIGH] = (long)c[v];"]
            self.terms.append(("part[v % HIGH]", False))
        if rng.random() < 0.4:
            self.local_types.append("typedef %s elem;" % self.b_type)
            self.terms.append(("(long)(elem)b[v]", False))

    def shape_macros(self, rng):
        name = rng.choice(["A", "TERM"])
        self.setup += ["#define K %d" % rng.randint(2, 5),
                       "#define %s(i) ((long)(i) %% K + K)" % name]
        self.terms.append(("%s(%s)" % (name, rng.choice(["v", "b[v]"])),
                           False))
        if rng.random() < 0.5:
            self.after.append("#undef %s" % name)
        else:
            self.after += ["#undef %s" % name, "#define %s(i) (-(i))" % name,
                           'printf("%s %%ld\\n", (long)%s(4));'
                           % (name, name)]
        self.after += ["#undef K", "#define K %d" % rng.randint(11, 19),
                       'printf("K %d\\n", K);', "#undef K"]
        if rng.random() < 0.4:
            # The body's #ifdef sees SHIFT as it is at the loop, whatever
            # the function does with it after the loop.
            defined = rng.random() < 0.5
            if defined:
                self.setup.append("#define SHIFT %d" % rng.randint(2, 9))
            self.body += ["#ifdef SHIFT", "long sh = SHIFT;", "#else",
                          "long sh = -1;", "#endif"]
            self.terms.append(("sh", False))
            self.after.append("#undef SHIFT" if defined else
                              "#define SHIFT 9")
        if rng.random() < 0.3:
            # A macro in a clause, as it is at the pragma.
            self.setup.append("#define LEN N")
            self.after += ["#undef LEN", "#define LEN 1"]
            self.b_length = "LEN"
        self.target_macro = rng.random() < 0.3
        if rng.random() < 0.3:
            # A #define in the body reaches the code after the loop.
            self.body.append("#define LATER %d" % rng.randint(1, 9))
            self.after += ['printf("LATER %d\\n", LATER);', "#undef LATER"]

    def shape_offset_pointer(self, rng):
        self.locals.append("const %s *src = %s + 1;"
                           % (self.b_type, rng.choice(["b", "B"])))
        cast = "(%s)" % self.domain
        self.terms.append(("(%ssrc[v - 1] + %ssrc[v] + %ssrc[v + 1])"
                           % (cast, cast, cast), False))
        self.ins.append("src[v - 1:3]")

    def shape_guarded_stencil(self, rng):
        dt = rng.choice(["int", "long", "double"])
        self.arrays.append(("static %s D[N];" % dt,
                            "D[k] = (%s)((k * 29 + 5) %% 61 - 30);" % dt))
        cast = "(%s)" % self.domain
        self.body += ["%s st = 0;" % self.domain,
                      "if (v > lo && v < n - 1)",
                      "  st = %sD[v - 1] + %sD[v] + %sD[v + 1];"
                      % (cast, cast, cast)]
        self.terms.append(("st", False))
        self.ins.append("D[v - 1:3]")

    def shape_overloads(self, rng):
        kinds = [k for k in ("overload", "template", "namespace")
                 if rng.random() < 0.6] or ["overload"]
        if "overload" in kinds:
            self.file_lines += [
                "static long f(float x) { return (long)(x * 2.0f) + 1; }",
                "static long f(double x) { return (long)(x * 4.0) - 3; }"]
            self.terms.append(("f((float)b[v]) + f((double)c[N - 1 - v])",
                               False))
        if "template" in kinds:
            self.file_lines.append(
                "template <typename T> static T twice(T x) "
                "{ return x + x + 1; }")
            self.terms.append(("twice((long)v) + (long)twice((double)b[v] "
                               "* 0.5)", False))
        if "namespace" in kinds:
            self.file_lines += [
                "namespace up { static long shift(long x) { return x + 3; } }",
                "namespace down { static long shift(long x) "
                "{ return x - 5; } }"]
            self.terms.append(("up::shift((long)v) + down::shift(s)", False))

    def shape_builtin_names(self, rng):
        names = rng.sample(sorted(BUILTINS), rng.randint(1, 3))
        for name in names:
            definition, call = BUILTINS[name]
            self.file_lines.append(definition)
            self.terms.append((call.format(b="b[v]", c="c[N - 1 - v]",
                                           v="(long)v"), True))

    def shape_abs(self, rng):
        if self.cxx:
            self.includes += ["<cmath>", "<cstdlib>"]
            pool = ["std::abs((double)b[v] - 20.5)",
                    "std::abs((float)c[N - 1 - v] - 3)",
                    "std::abs((int)b[v] - (int)s)",
                    "std::abs((long)c[N - 1 - v] * 3)",
                    "abs((int)b[v] - 7)", "abs((double)c[N - 1 - v] * 0.5)",
                    "fabs((long)v - 300)", "std::fabs((float)b[v])"]
        else:
            self.includes += ["<math.h>", "<stdlib.h>"]
            pool = ["abs((int)b[v] - (int)s)", "labs((long)c[N - 1 - v] * 3)",
                    "fabs((double)b[v] - 20.5)",
                    "fabsf((float)c[N - 1 - v] - 3)",
                    "abs((double)c[N - 1 - v] * 0.5)",
                    "fabs((long)v - 300)"]
        for call in rng.sample(pool, rng.randint(1, 3)):
            self.terms.append((call, True))

    def shape_gather(self, rng):
        self.arrays.append(("static int IDX[N];",
                            "IDX[k] = (k * k + 7) % N;"))
        self.params.append(("const int *idx", "IDX"))
        self.terms.append(("(%s)%s[idx[v]]" % (self.domain,
                                               rng.choice(["b", "c"])),
                           False))
        self.ins.append(rng.choice(["idx[0:N]", "idx[v:1]"]))

    def scatter(self, rng, section):
        self.arrays.append(("static int PERM[N];",
                            "PERM[k] = (k * 7 + 3) % N;"))
        self.params.append(("const int *perm", "PERM"))
        self.ins.append(rng.choice(["perm[0:N]", "perm[v:1]"]))
        self.target = "a[perm[v]]"
        self.g_row = "perm[v]"
        if self.inout or rng.random() < 0.3:
            self.inouts.insert(0, section)
        else:
            self.outs.insert(0, section)

    def shape_scatter(self, rng):
        if not self.refused:
            self.scatter(rng, "a[0:N]")

    def shape_refused_section(self, rng):
        self.scatter(rng, "a[perm[v]:1]")

    def shape_columns(self, rng):
        if rng.random() < 0.5:
            rows = rng.randint(2, 5)
            self.arrays.append(("static double H[%d][N];" % rows,
                                "for (j = 0; j < %d; j++) H[j][k] = "
                                "(double)((k * 7 + j * 3) %% 23);" % rows))
            body = ("for (j = 0; j < %d; j++) H[j][v] = %s(double)b[v] "
                    "* 0.5 + j;" % (rows, "H[j][v] * 0.25 + "
                                    if rng.random() < 0.6 else ""))
            (self.inouts if "H[j][v] *" in body else self.outs).append(
                "H[0:%d][v:1]" % rows)
            self.after += ["for (j = 0; j < %d; j++)" % rows,
                           "  for (k = 0; k < N; k++)",
                           '    printf("h %d %d %a\\n", j, k, H[j][k]);']
        else:
            self.arrays.append(("static long U[2][N][3];",
                                "for (j = 0; j < 6; j++) U[j / 3][k][j % 3]"
                                " = k * 5 + j;"))
            body = ("for (j = 0; j < 6; j++) U[j / 3][v][j % 3] = "
                    "U[j / 3][v][j % 3] * 3 + (long)c[N - 1 - v];")
            self.inouts.append("U[0:2][v:1][0:3]")
            self.after += ["for (j = 0; j < 6; j++)",
                           "  for (k = 0; k < N; k++)",
                           '    printf("u %d %d %ld\\n", j, k, '
                           'U[j / 3][k][j % 3]);']
        self.body.append(body)

    def shape_in_place(self, rng):
        self.arrays.append(("static double P[2][N];",
                            "P[0][k] = (double)((k * 11) % 17); P[1][k] = -1;"))
        self.body.append("P[1][v] = P[0][v] * 0.5 + P[0][N - 1 - v];")
        self.ins.append("P[0:1][0:N]")
        self.outs.append("P[1:1][v:1]")
        self.after += ["for (k = 0; k < N; k++)",
                       '  printf("p %d %a\\n", k, P[1][k]);']

    def shape_reduction(self, rng):
        kinds = {
            "+": ("long sum = %d;", "sum += {t};", "sum", "long"),
            "*": ("unsigned long prod = %d;",
                  "prod *= (unsigned long)({t}) | 1;", "prod",
                  "unsigned long"),
            "max": ("long top = %d;", None, "top", "long"),
            "min": ("long low = %d;", "low = low < {t} ? low : {t};", "low",
                    "long"),
            "^": ("long bits = %d;", "bits ^= {t};", "bits", "long"),
            "|": ("long ors = %d;", "ors |= {t};", "ors", "long"),
            "&": ("long ands = %d;", "ands &= {t} | 4096;", "ands", "long"),
            "double +": ("double dsum = %d;",
                         "dsum += (double)c[v] * 0.25;", "dsum", "double"),
        }
        for kind in rng.sample(sorted(kinds), rng.randint(1, 3)):
            decl, statement, name, ctype = kinds[kind]
            term = self.expr(rng, False, ["(long)b[v]", "(long)c[v]"], 2)
            if kind == "max":
                statement = rng.choice(["top = top > {t} ? top : {t};",
                                        "if ({t} > top) top = {t};"])
            if rng.random() < 0.2:
                # A variable of the file, not of the function.
                self.arrays.append(("static " + decl % rng.randint(-3, 3),
                                    None))
            else:
                self.locals.append(decl % rng.randint(-3, 3))
            self.body.append(statement.format(t=term))
            self.reductions.append((kind.split()[-1], name))
            self.after += self.print_scalar(name, ctype)

    def shape_flags(self, rng):
        boolean = "bool" if self.cxx else "_Bool"
        kinds = [k for k in ("||", "max", "&&") if rng.random() < 0.5] or \
            [rng.choice(["||", "max"])]
        for kind in kinds:
            cond = self.condition(rng)
            if kind == "||":
                ctype = rng.choice(["int", boolean])
                self.locals.append("%s found = 0;" % ctype)
                self.body.append("if (%s) found = 1;" % cond)
                name = "found"
            elif kind == "max":
                ctype = "int"
                self.locals.append("int flag = %d;" % rng.choice([-1, 0]))
                self.body.append("if (%s) flag = 1;" % cond)
                name = "flag"
            else:
                ctype = rng.choice(["int", boolean])
                self.locals.append("%s every = 1;" % ctype)
                self.body.append("if (!(%s)) every = 0;" % cond)
                name = "every"
            self.reductions.append((kind, name))
            self.after += self.print_scalar(name, ctype)

    def shape_repeated_clauses(self, rng):
        # write_value() adds the private t; u is the second private scalar.
        self.locals.append("long u;")
        self.body.append("u = (long)c[v] %% %d;" % rng.randint(3, 9))
        self.terms.append(("u", False))
        self.private.append("u")

    def shape_preprocessor_lines(self, rng):
        self.lines_between = rng.choice(["#else", "#endif", "#define"])

    # The text -----------------------------------------------------------

    def loop_lines(self):
        """The pragma (in its #ifdef) and the loop."""
        lines = [self.pragma]
        if self.has("preprocessor-lines") and self.lines_between == "#define":
            lines.append("#define IN_LOOP 1")
        elif self.has("preprocessor-lines"):
            lines = ["#ifdef USE_FPM"] + lines
            if self.lines_between == "#else":
                omp = "#pragma omp parallel for"
                private = self.private + (["j"] if self.inner else [])
                if private:
                    omp += " private(%s)" % ", ".join(private)
                for op, name in self.reductions:
                    omp += " reduction(%s: %s)" % (op, name)
                lines += ["#else", omp]
            lines.append("#endif")
        lines += ["  %s {" % self.header_text]
        lines += indented("    ", self.body)
        lines += ["  }"]
        return lines

    def source(self):
        fmt, cast = FORMATS[self.a_type]
        gfmt, gcast = FORMATS[self.g_type]
        params = ["long n", "long lo", "long s", "double x",
                  "%s *a" % self.a_type, "const %s *b" % self.b_type,
                  "const %s *c" % self.c_type, "%s (*g)[M]" % self.g_type]
        args = [str(self.args["n"]), str(self.args["lo"]),
                str(self.stream("arguments").randint(-5, 5)),
                repr(self.stream("arguments x").choice([0.5, -1.25, 3.0,
                                                         0.1])),
                "A", "B", "C", "G"]
        for param, arg in self.params:
            params.append(param)
            args.append(arg)
        out = ["/* differential.py, seed %d, program %d: %s; base: %s */"
               % (self.seed, self.index, ", ".join(self.shapes) or "no shape",
                  ", ".join(self.base) or "-")]
        out += ["#include %s" % h for h in self.includes]
        out += ["", "#define N %d" % N, "#define M %d" % M, "",
                "static %s A[N];" % self.a_type,
                "static %s B[N];" % self.b_type,
                "static %s C[N];" % self.c_type,
                "static %s G[N][M];" % self.g_type]
        out += [decl for decl, _ in self.arrays]
        if self.file_lines:
            out += [""] + self.file_lines
        out += ["", "static void run(%s) {" % ", ".join(params)]
        out += indented("  ", self.local_types + self.locals)
        out += ["  (void)n; (void)lo; (void)s; (void)x; (void)g;"]
        out += indented("  ", self.setup)
        out += self.loop_lines()
        if self.declared_outside:
            out.append('  printf("v %ld\\n", (long)v);')
        out += indented("  ", self.after)
        out += ["}", "",
                "int main(void) {",
                "  int k, j;",
                "  for (k = 0; k < N; k++) {",
                "    A[k] = (%s)(k %% 13 - 6);" % self.a_type,
                "    B[k] = (%s)((k * 37 + 11) %% 101 - 50);" % self.b_type,
                "    C[k] = (%s)((k * 53 + 7) %% 89 - 44) / 4;" % self.c_type,
                "    for (j = 0; j < M; j++) G[k][j] = (%s)(k - j);"
                % self.g_type]
        out += ["    " + init for _, init in self.arrays if init]
        out += ["  }",
                "  run(%s);" % ", ".join(args),
                "  for (k = 0; k < N; k++) {",
                '    printf("a %%d %s\\n", k, %sA[k]);' % (fmt, cast),
                "    for (j = 0; j < M; j++)",
                '      printf("g %%d %%d %s\\n", k, j, %sG[k][j]);'
                % (gfmt, gcast),
                "  }",
                "  return 0;",
                "}", ""]
        return "\n".join(out)


# Checking -------------------------------------------------------------------

class Outcome:
    """What checking one program gave: `kind` is "match", "refused" or
    what failed (the same kind is the same failure, for --minimize)."""

    def __init__(self, kind, report=""):
        self.kind = kind
        self.report = report

    def ok(self):
        return self.kind in ("match", "refused")


def run(command, env=None):
    try:
        return subprocess.run(command, capture_output=True, env=env,
                              timeout=300)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(command, 124, e.stdout or b"",
                                           (e.stderr or b"") +
                                           b"\n(timed out after 300 s)\n")


def tail(result):
    """The end of what a command wrote: stderr, or stdout if that is empty."""
    return (result.stderr or result.stdout).decode(errors="replace")[-2000:]


def check(program, stem, options, env):
    """Builds and runs `program` as stem.c (or .cpp); its Outcome."""
    ext = ".cpp" if program.cxx else ".c"
    source = stem + ext
    rewritten = stem + ".fpm" + ext
    # What an earlier program of this name (--minimize's) left.
    for old in (stem + ".c", stem + ".cpp", stem + ".fpm.c", stem + ".fpm.cpp",
                stem + ".serial", stem + ".parallel"):
        if os.path.exists(old):
            os.remove(old)
    with open(source, "w") as f:
        f.write(program.source())
    compiler = options.cxx if program.cxx else options.cc
    std = ("-std=c++17" if program.cxx else
           "-std=c11" if program.has("atomic") else "-std=c99")
    common = [std, "-O1", "-ffp-contract=off", "-w"]
    rewrite = [options.rewrite, source, "-o", rewritten, "--", std,
               "-DUSE_FPM"]
    serial_build = [compiler] + common + [source, "-o", stem + ".serial",
                                          "-lm"]
    result = run(serial_build)
    if result.returncode != 0:
        return Outcome("the serial build failed (the generator's fault)",
                       " ".join(serial_build) + "\n" + tail(result))
    if program.refused:
        result = run(rewrite)
        if (result.returncode != 0 and b"error:" in result.stderr and
                not os.path.exists(rewritten)):
            return Outcome("refused")
        return Outcome("fpm-rewrite did not refuse the data-dependent section",
                       " ".join(rewrite) + "\n" + tail(result))
    steps = [
        (rewrite, "fpm-rewrite failed"),
        ([compiler] + common + options.cflags + ["-DUSE_FPM", rewritten, "-o",
                                                 stem + ".parallel"] +
         options.ldflags + ["-lm"], "the rewritten build failed"),
    ]
    for command, what in steps:
        result = run(command)
        if result.returncode != 0:
            return Outcome(what, " ".join(command) + "\n" + tail(result))
    serial = run([stem + ".serial"])
    if serial.returncode != 0:
        return Outcome("the serial program failed (the generator's fault)",
                       tail(serial))
    # Three of the ways it may run: on the OpenCL devices (the CPU runs a
    # loop that they cannot), with every PE, then with the CPU only or every
    # PE again; 1 to 3 threads; with every PE and 2 threads, no stealing, so
    # that a device runs its planned part.
    rng = program.stream("run")
    for devices in ("gpu", "all", rng.choice(["cpu", "all"])):
        threads = rng.randint(1, 3)
        where = {"FPM_DEVICES": devices, "OMP_NUM_THREADS": str(threads)}
        if devices == "all" and threads == 2:
            where["FPM_STEAL"] = "0"
        result = run([stem + ".parallel"], env={**env, **where})
        how = " ".join("%s=%s" % item for item in sorted(where.items()))
        if result.returncode != 0:
            return Outcome("exit status %d" % result.returncode,
                           "under %s:\n%s" % (how, tail(result)))
        if result.stderr:
            return Outcome("a message on stderr",
                           "under %s:\n%s" % (how, tail(result)))
        if result.stdout != serial.stdout:
            mine = result.stdout.decode().splitlines()
            theirs = serial.stdout.decode().splitlines()
            first = next((k for k in range(min(len(mine), len(theirs)))
                          if mine[k] != theirs[k]),
                         min(len(mine), len(theirs)))
            return Outcome(
                "output differs",
                "under %s at line %d: serial '%s', rewritten '%s'\n"
                % (how, first + 1,
                   theirs[first] if first < len(theirs) else "<end>",
                   mine[first] if first < len(mine) else "<end>"))
    return Outcome("match")


def minimize(options, env, index, outcome):
    """The program `index` with each feature left out whose absence keeps
    the failure's kind, as p<index>.min.c; its features."""
    off = set()
    stem = os.path.join(options.work, "p%d.min" % index)
    for feature in Program(options.seed, index, options.shapes).features():
        trial = Program(options.seed, index, options.shapes, off | {feature})
        if check(trial, stem, options, env).kind == outcome.kind:
            off.add(feature)
    program = Program(options.seed, index, options.shapes, off)
    check(program, stem, options, env)
    return program


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="shapes: " + "; ".join("%s: %s" % item
                                      for item in SHAPES.items()),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--first", type=int, default=0,
                        help="the first program's number (default 0)")
    parser.add_argument("--shapes", default=",".join(DEFAULT_SHAPES),
                        help="comma-separated shapes, 'all', or 'none' "
                        "(default: %s)" % ("all but " + ", ".join(NOT_YET)
                                            if NOT_YET else "all"))
    parser.add_argument("--work", required=True)
    parser.add_argument("--rewrite", required=True)
    parser.add_argument("--cc", required=True)
    parser.add_argument("--cxx", required=True)
    parser.add_argument("--cflags", default="")
    parser.add_argument("--ldflags", default="")
    parser.add_argument("--jobs", type=int, default=1,
                        help="programs checked at once (default 1)")
    parser.add_argument("--minimize", action="store_true",
                        help="also print each failing program with the "
                        "features left out that the failure does not need")
    options = parser.parse_args()
    if options.shapes == "all":
        options.shapes = list(SHAPES)
    elif options.shapes == "none":
        options.shapes = []
    else:
        options.shapes = options.shapes.split(",")
    unknown = [s for s in options.shapes if s not in SHAPES]
    if unknown:
        parser.error("unknown shape %s (known: %s)"
                     % (", ".join(unknown), ", ".join(SHAPES)))
    options.cflags = shlex.split(options.cflags)
    options.ldflags = shlex.split(options.ldflags)
    os.makedirs(options.work, exist_ok=True)
    env = dict(os.environ)
    for name in ("FPM_SCHEDULE", "FPM_DEVICES", "FPM_STEAL", "FPM_VERBOSE",
                 "FPM_TRACE", "FPM_INJECT_FAULT", "FPM_BENCHMARK"):
        env.pop(name, None)
    env["FPM_CACHE_DIR"] = os.path.join(options.work, "fpm-cache")
    # PoCL builds each kernel anew: what its compiler writes on stderr must
    # not depend on what its cache (~/.cache/pocl) holds.
    env["POCL_KERNEL_CACHE"] = "0"
    env.setdefault("FPM_PROFILE_DIR", os.path.join(options.work, "profiles"))

    def one(index):
        program = Program(options.seed, index, options.shapes)
        stem = os.path.join(options.work, "p%d" % index)
        return program, stem, check(program, stem, options, env)

    def report(program, stem, outcome):
        ext = ".cpp" if program.cxx else ".c"
        print("FAILED %s%s: %s\n%s\n%s" % (stem, ext, outcome.kind,
                                          outcome.report.rstrip(),
                                          program.source()), flush=True)
        if options.minimize:
            smaller = minimize(options, env, program.index, outcome)
            print("MINIMIZED %s.min%s:\n%s"
                  % (stem, ".cpp" if smaller.cxx else ".c", smaller.source()),
                  flush=True)

    indices = range(options.first, options.first + options.count)
    results = []
    failed = []
    with concurrent.futures.ThreadPoolExecutor(options.jobs) as pool:
        for program, stem, outcome in pool.map(one, indices):
            results.append((program, stem, outcome))
            if not outcome.ok():
                report(program, stem, outcome)
                failed.append(program.index)
    for shape in options.shapes + ["(the base only)"]:
        having = [p.index for p, _, _ in results
                  if (shape in p.shapes if shape in SHAPES else not p.shapes)]
        bad = [k for k in having if k in failed]
        print("shape %s: %d programs, %d failed%s"
              % (shape, len(having), len(bad),
                 "".join(" p%d" % k for k in bad)))
    refused = [o.kind == "refused" for p, _, o in results if p.refused]
    ran = [o.kind == "match" for p, _, o in results if not p.refused]
    print("differential: %d programs, %d of %d match the serial build, "
          "%d of %d refused as expected"
          % (options.count, sum(ran), len(ran), sum(refused), len(refused)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
