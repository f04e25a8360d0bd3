#!/usr/bin/env python3
"""Runs a command and summarises how it ended, for FileCheck:

    status N, stdout B bytes, stderr L lines
    stderr: <each line of stderr>

Usage: run-status.py COMMAND [ARG...]
"""

import subprocess
import sys

result = subprocess.run(sys.argv[1:], capture_output=True)
lines = result.stderr.decode(errors="replace").splitlines()
print("status %d, stdout %d bytes, stderr %d lines"
      % (result.returncode, len(result.stdout), len(lines)))
for line in lines:
    print("stderr: " + line)
