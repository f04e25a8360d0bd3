#!/usr/bin/env python3
"""Checks fpm-partition's JSON output against docs/profiles.md.

Usage: check-distribution.py [--single] [--granularity G] [--makespan M]
                             [--at-most OTHER_JSON]... JSON_FILE PROFILE...

Reads the JSON object the tool printed and the profiles it was given, and
checks, independently of the tool's code:
  - the fields the spec names, in the profiles' order;
  - every package positive and a multiple of G, except at most one package
    holding the remainder N mod G (alone or on top of multiples of G);
  - iterations == sum(packages) per PE, and they sum to N;
  - with --single, at most one package per PE;
  - each PE's time == the cost model's time of its packages, recomputed here
    (profile time at a profile point, else w / s(w) with s linear between the
    points and constant beyond), and makespan == the largest time;
  - with --makespan M, that the makespan is M;
  - with --at-most OTHER_JSON, that the makespan is no larger than the one in
    OTHER_JSON (an exact algorithm against the others).
Prints "OK: ..." or the first problem (exit status 1).
"""

import json
import sys


def speed(points, w):
    if w <= points[0][0]:
        return points[0][0] / points[0][1]
    if w >= points[-1][0]:
        return points[-1][0] / points[-1][1]
    for (x0, t0), (x1, t1) in zip(points, points[1:]):
        if x0 <= w < x1:
            s0, s1 = x0 / t0, x1 / t1
            return s0 + (s1 - s0) * (w - x0) / (x1 - x0)
    raise AssertionError("unreachable")


def package_time(points, w):
    for x, t in points:
        if x == w:
            return t
    return w / speed(points, w)


def close(a, b):
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1e-300)


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def main(argv):
    single = False
    granularity = None
    makespan = None
    at_most = []
    args = []
    i = 0
    while i < len(argv):
        if argv[i] == "--single":
            single = True
        elif argv[i] == "--granularity":
            i += 1
            granularity = int(argv[i])
        elif argv[i] == "--at-most":
            i += 1
            at_most.append(argv[i])
        elif argv[i] == "--makespan":
            i += 1
            makespan = float(argv[i])
        else:
            args.append(argv[i])
        i += 1
    output_path, profile_paths = args[0], args[1:]

    with open(output_path) as f:
        text = f.read()
    try:
        out = json.loads(text)
    except ValueError as error:
        fail("not one JSON object: %s" % error)
    profiles = []
    for path in profile_paths:
        with open(path) as f:
            profiles.append(json.load(f))

    for key in ["algorithm", "size", "makespan", "devices"]:
        if key not in out:
            fail("no field '%s'" % key)
    n = out["size"]
    if granularity is None:
        granularity = out.get("granularity")
        if granularity is None:
            granularity = min(p["points"][0]["size"] for p in profiles)
    remainder = n % granularity
    devices = out["devices"]
    if len(devices) != len(profiles):
        fail("%d devices for %d profiles" % (len(devices), len(profiles)))

    total = 0
    off_grid = 0
    largest = 0.0
    for device, profile in zip(devices, profiles):
        for key in ["device", "iterations", "packages", "time"]:
            if key not in device:
                fail("a device has no field '%s'" % key)
        name = device["device"]
        if name != profile["device"]:
            fail("device '%s' where the profile says '%s'" % (name, profile["device"]))
        packages = device["packages"]
        if single and len(packages) > 1:
            fail("%s has %d packages, expected one share" % (name, len(packages)))
        for package in packages:
            if not isinstance(package, int) or package <= 0:
                fail("%s has a package %r" % (name, package))
            if package % granularity != 0:
                if remainder == 0 or package % granularity != remainder:
                    fail("%s has a package of %d, not a multiple of G = %d"
                         % (name, package, granularity))
                off_grid += 1
        if sum(packages) != device["iterations"]:
            fail("%s: packages sum to %d, iterations say %d"
                 % (name, sum(packages), device["iterations"]))
        total += device["iterations"]
        points = [(p["size"], p["time"]) for p in profile["points"]]
        expected = sum(package_time(points, w) for w in packages)
        if not isinstance(device["time"], float):
            fail("%s: time %r is not written as a JSON double" % (name, device["time"]))
        if not close(device["time"], expected):
            fail("%s: time %r, the cost model gives %r" % (name, device["time"], expected))
        largest = max(largest, device["time"])
    if off_grid > 1:
        fail("the remainder is spread over %d packages" % off_grid)
    if total != n:
        fail("iterations sum to %d, not N = %d" % (total, n))
    if out["makespan"] != largest:
        fail("makespan %r is not the largest time %r" % (out["makespan"], largest))
    if makespan is not None and not close(out["makespan"], makespan):
        fail("makespan %r, expected %r" % (out["makespan"], makespan))
    for path in at_most:
        with open(path) as f:
            other = json.load(f)
        if out["makespan"] > other["makespan"] * (1 + 1e-12):
            fail("makespan %r is larger than %r of %s"
                 % (out["makespan"], other["makespan"], other["algorithm"]))
    print("OK: %s, N = %d over %d PEs, makespan %r"
          % (out["algorithm"], n, len(devices), out["makespan"]))


if __name__ == "__main__":
    main(sys.argv[1:])
