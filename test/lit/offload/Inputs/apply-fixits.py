#!/usr/bin/env python3
"""Applies the insertions of Clang's parseable fix-its to a file.

Reads diagnostics on stdin (compiled with -fdiagnostics-parseable-fixits:
`fix-it:"FILE":{L:C-L:C}:"TEXT"`), applies those that insert text into FILE
(the one argument) and prints the result: a test pastes what a remark's
fix-it suggests, as an editor would.

Usage: apply-fixits.py FILE < diagnostics
"""

import re
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: apply-fixits.py FILE < diagnostics")
    path = sys.argv[1]
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    pattern = re.compile(r'^fix-it:"(.*)":\{(\d+):(\d+)-(\d+):(\d+)\}:"(.*)"$')
    edits = []
    for line in sys.stdin:
        m = pattern.match(line.rstrip("\n"))
        if not m or not m.group(1).endswith(path.split("/")[-1]):
            continue
        l1, c1, l2, c2 = (int(m.group(k)) for k in range(2, 6))
        if (l1, c1) != (l2, c2):
            sys.exit("apply-fixits.py: only insertions: " + line)
        text = m.group(6).encode().decode("unicode_escape")
        edits.append((l1, c1, text))
    # Last first, so that earlier positions stay where they were.
    for l, c, text in sorted(edits, reverse=True):
        row = lines[l - 1]
        lines[l - 1] = row[: c - 1] + text + row[c - 1 :]
    sys.stdout.write("\n".join(lines))


if __name__ == "__main__":
    main()
