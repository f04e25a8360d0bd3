#!/usr/bin/env python3
"""Reads fpm-partition --format json outputs (one object after another) on
standard input and prints them side by side: makespan, ratio to the best, and each
PE's iterations."""
import json
import sys

text = sys.stdin.read()
decoder = json.JSONDecoder()
runs, position = [], 0
while text[position:].strip():
    position += len(text[position:]) - len(text[position:].lstrip())
    run, position = decoder.raw_decode(text, position)
    runs.append(run)
best = min(run["makespan"] for run in runs)
devices = [device["device"] for device in runs[0]["devices"]]
header = f"{'algorithm':<15} {'makespan (s)':>13} {'vs best':>8}  "
print(header + "  ".join(f"{name:>9}" for name in devices))
for run in runs:
    shares = "  ".join(f"{d['iterations']:>9}" for d in run["devices"])
    ratio = run["makespan"] / best
    print(f"{run['algorithm']:<15} {run['makespan']:>13.6g} {ratio:>8.3f}  {shares}")
