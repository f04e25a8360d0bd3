#!/usr/bin/env python3
"""Compares two program outputs token by token: the same tokens, but numbers
may differ by a relative tolerance (for results of exp, pow and the like,
whose last bits may differ between libm and OpenCL C). Exit 0 when they
match; else 1, with the first difference on stderr.

Usage: compare-numbers.py --tolerance REL EXPECTED ACTUAL
"""
import argparse
import math
import sys


def number(token):
    try:
        return float(token)
    except ValueError:
        return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tolerance", type=float, required=True)
    parser.add_argument("expected")
    parser.add_argument("actual")
    args = parser.parse_args()
    with open(args.expected) as f:
        expected = f.read().split()
    with open(args.actual) as f:
        actual = f.read().split()
    if len(expected) != len(actual):
        print("%d tokens, expected %d" % (len(actual), len(expected)),
              file=sys.stderr)
        return 1
    for k, (e, a) in enumerate(zip(expected, actual)):
        if e == a:
            continue
        x, y = number(e), number(a)
        if x is None or y is None or math.isnan(x) or math.isnan(y) or \
                abs(x - y) > args.tolerance * max(abs(x), abs(y)):
            print("token %d: '%s', expected '%s'" % (k + 1, a, e),
                  file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
