#!/usr/bin/env python3
"""Checks fpm-partition's chunk-mode JSON output against the spec's rules.

Usage: check-chunks.py JSON_FILE

The fields the spec names; workers >= 1; every chunk >= 1; stage1 (present
exactly when alpha is) has one share >= 0 per worker; stage1 and chunks sum
to the size I. Prints "OK: ..." or the first problem (exit status 1).
"""

import json
import sys


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def main(path):
    with open(path) as f:
        try:
            out = json.loads(f.read())
        except ValueError as error:
            fail("not one JSON object: %s" % error)
    for key in ["algorithm", "size", "workers", "chunks"]:
        if key not in out:
            fail("no field '%s'" % key)
    if ("alpha" in out) != ("stage1" in out):
        fail("alpha and stage1 must come together")
    stage1 = out.get("stage1", [])
    if "stage1" in out and len(stage1) != out["workers"]:
        fail("stage1 has %d shares for %d workers" % (len(stage1), out["workers"]))
    if any(not isinstance(s, int) or s < 0 for s in stage1):
        fail("a stage-1 share is negative")
    if any(not isinstance(c, int) or c < 1 for c in out["chunks"]):
        fail("a chunk is smaller than one iteration")
    total = sum(stage1) + sum(out["chunks"])
    if total != out["size"]:
        fail("stage1 and chunks sum to %d, not I = %d" % (total, out["size"]))
    print("OK: %s, I = %d, %d chunks" % (out["algorithm"], out["size"], len(out["chunks"])))


if __name__ == "__main__":
    main(sys.argv[1])
