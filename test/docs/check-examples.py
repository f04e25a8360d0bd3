#!/usr/bin/env python3
"""Builds and runs the manual's code examples: every fenced block of
README.md and docs/*.md whose language is exactly `c` or `cpp`.

    check-examples.py --fpm-cc BIN --fpm-cxx BIN --cc BIN --cxx BIN
                      --work DIR [--flags FLAGS] SOURCE_DIR

A block with `main(` is a whole program; any other is a fragment, and the
line before its fence names the program it runs in,
`<!-- example: NAME -->`: test/docs/examples/NAME.c (or .cpp), whose
comment `/* @EXAMPLE@ */` the fragment replaces (a comment, so that
clang-format keeps it). Each program is built with fpm-cc
(fpm-c++), which rewrites its pragmas and links the runtime, and must exit
0. A program that does not include an fpm header is also built by the
plain compiler, which ignores the pragmas: both must print the same, the
serial answer. A block after `<!-- example-file: NAME -->` (a kernel's
`.cl` file) is the file NAME beside every program. A block that is no C,
shown for reading only, takes another language (`text`).

Prints each failure with its page and line and exits 1; prints one line
and exits 0 when all pass."""
import argparse
import concurrent.futures
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys

PLACE = "/* @EXAMPLE@ */"
FENCE = re.compile(r"^```(\S*)\s*$")
MARK = re.compile(r"^<!--\s*(example|example-file):\s*([\w.-]+)\s*-->\s*$")


def blocks(page):
    """(line of the fence, language, mark or None, code): the mark is the
    (kind, name) of the comment on the line before the fence."""
    lines = page.read_text().splitlines()
    found, index = [], 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        start, language = index + 1, opening.group(1)
        mark = MARK.match(lines[index - 1]) if index else None
        index += 1
        body = []
        while index < len(lines) and lines[index].rstrip() != "```":
            body.append(lines[index])
            index += 1
        index += 1
        found.append((start, language, mark and mark.groups(),
                      "\n".join(body) + "\n"))
    return found


def run(command, cwd, environment=None, timeout=120):
    """(exit status, stdout, stderr); 124 on a timeout."""
    try:
        done = subprocess.run(command, cwd=cwd, capture_output=True,
                              text=True, timeout=timeout,
                              env=dict(os.environ, **(environment or {})))
        return done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired:
        return 124, "", f"timed out after {timeout} s"


def check(example, options, examples, files):
    """Builds and runs one example, with `files` ({name: text}) beside it;
    returns a failure message or None."""
    where, language, harness, code = example
    cxx = language == "cpp"
    extension = ".cpp" if cxx else ".c"
    if not re.search(r"\bmain\s*\(", code):
        if not harness:
            return (f"{where}: a `{language}` block that is no whole program "
                    "needs `<!-- example: NAME -->` on the line before it "
                    "(test/docs/examples/NAME" + extension + "), or another "
                    "language if it is not C")
        path = examples / (harness + extension)
        if not path.is_file():
            return f"{where}: no program {path} for the fragment"
        if PLACE not in path.read_text():
            return f"{where}: {path} has no {PLACE}"
        code = path.read_text().replace(PLACE, code.rstrip("\n"))
    folder = pathlib.Path(options.work) / re.sub(r"[^\w]+", "-", where)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    source = folder / ("example" + extension)
    source.write_text(code)
    standard = (["-std=c++20"] if cxx else []) + shlex.split(options.flags)
    libraries = [] if cxx else ["-lm"]
    wrapper = options.fpm_cxx if cxx else options.fpm_cc
    status, out, err = run([wrapper, "-O1", *standard, source.name, "-o",
                            "fpm", *libraries], folder)
    if status:
        return f"{where}: {pathlib.Path(wrapper).name} failed:\n{out}{err}"
    # The PEs a user gets, then the devices alone: the loop's kernel runs.
    outputs = []
    for devices in ("all", "gpu"):
        status, out, err = run(["./fpm"], folder, {
            "FPM_DEVICES": devices,
            "FPM_PROFILE_DIR": str(folder / "profiles")})
        if status:
            return (f"{where}: the program built by fpm exited {status} "
                    f"with FPM_DEVICES={devices}:\n{out}{err}")
        outputs.append((devices, out))
    if re.search(r"#\s*include\s*<fpm/", code):
        return None
    compiler = options.cxx if cxx else options.cc
    status, out, err = run([compiler, "-O1", *standard,
                            "-Wno-unknown-pragmas", source.name, "-o",
                            "serial", *libraries], folder)
    if status:
        return f"{where}: {compiler} failed:\n{out}{err}"
    status, serialOut, err = run(["./serial"], folder)
    if status:
        return f"{where}: the serial program exited {status}:\n{err}"
    for devices, out in outputs:
        if out != serialOut:
            return (f"{where}: fpm's build printed\n{out}with "
                    f"FPM_DEVICES={devices}, but the serial build\n"
                    f"{serialOut}")
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for name in ("--fpm-cc", "--fpm-cxx", "--cc", "--cxx", "--work"):
        parser.add_argument(name, required=True)
    parser.add_argument("--flags", default="",
                        help="more compiler flags (the build's sanitizers)")
    parser.add_argument("source")
    options = parser.parse_args()
    # Programs are built in their own folders: a path given relative to
    # here must still name the tool there.
    for name in ("fpm_cc", "fpm_cxx", "cc", "cxx"):
        tool = getattr(options, name)
        if os.sep in tool:
            setattr(options, name, os.path.abspath(tool))
    source = pathlib.Path(options.source)
    examples = source / "test" / "docs" / "examples"
    pages = [source / "README.md", *sorted((source / "docs").glob("*.md"))]
    found, files = [], {}
    for page in pages:
        for line, language, mark, code in blocks(page):
            where = f"{page.relative_to(source)}:{line}"
            if mark and mark[0] == "example-file":
                files[mark[1]] = code
            elif language in ("c", "cpp"):
                found.append((where, language, mark and mark[1], code))
    # The folder is this test's own: programs of blocks since moved go.
    shutil.rmtree(options.work, ignore_errors=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        failures = [f for f in pool.map(
            lambda e: check(e, options, examples, files), found) if f]
    for failure in failures:
        print(failure)
    if failures:
        print(f"check-examples: {len(failures)} of {len(found)} examples "
              "failed")
        return 1
    programs = sum(1 for e in found if re.search(r"\bmain\s*\(", e[3]))
    print(f"check-examples: {len(found)} examples ({programs} programs, "
          f"{len(found) - programs} fragments) built and run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
