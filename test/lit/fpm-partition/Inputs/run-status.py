#!/usr/bin/env python3
"""Runs a command and summarises how it ended, for FileCheck:

    status N, stdout B bytes, stderr L lines
    stderr: <each line of stderr>

Usage: run-status.py [--timeout=SECONDS] COMMAND [ARG...]

With --timeout, a command still running after SECONDS is killed and the
first line is "timed out after SECONDS s" instead.
"""

import subprocess
import sys

args = sys.argv[1:]
timeout = None
if args and args[0].startswith("--timeout="):
    timeout = float(args.pop(0)[len("--timeout="):])
try:
    result = subprocess.run(args, capture_output=True, timeout=timeout)
except subprocess.TimeoutExpired:
    print("timed out after %g s" % timeout)
    sys.exit(0)
lines = result.stderr.decode(errors="replace").splitlines()
print("status %d, stdout %d bytes, stderr %d lines"
      % (result.returncode, len(result.stdout), len(lines)))
for line in lines:
    print("stderr: " + line)
