#!/usr/bin/env python3
"""Keeps the manual (docs/) true to the code, from the code's own tables:
every clause the pragma parser knows has its section in docs/pragma.md,
every FPM_* variable the runtime reads is in docs/environment.md, and every
remark the rewriter gives (lib/: its Level::Remark reports) is in
docs/remarks.md.

    check-docs.py SOURCE_DIR

Prints what is missing and exits 1; prints one line and exits 0 when all
is there."""
import pathlib
import re
import sys


def clauses(source):
    """The clauses of lib/Record/Clauses.def, the parser's table."""
    text = (source / "lib" / "Record" / "Clauses.def").read_text()
    names = re.findall(r'^FPM_CLAUSE\("([a-z_]+)"', text, re.M)
    if not names:
        sys.exit("check-docs: cannot find the clauses in lib/Record/Clauses.def")
    return sorted(names)


def variables(source):
    """String literals FPM_* in the runtime that are no identifier of the
    public headers (FPM_ARG_IN, FPM_REDUCE_ADD, ... are C names, not
    variables): the names of the environment variables it reads."""
    identifiers = set()
    for header in (source / "include" / "fpm").glob("*.h*"):
        code = re.sub(r"/\*.*?\*/|//[^\n]*", "", header.read_text(),
                      flags=re.S)
        identifiers |= set(re.findall(r"\bFPM_[A-Z0-9_]+\b", code))
    names = set()
    for path in (source / "runtime").rglob("*"):
        if path.suffix in (".cpp", ".hpp", ".h"):
            names |= set(re.findall(r'"(FPM_[A-Z0-9_]+)"', path.read_text()))
    return sorted(names - identifiers)


def remarks(source):
    """The first fixed words (12 characters or more between placeholders)
    of each remark the rewriter reports, whitespace folded."""
    found = []
    for path in sorted((source / "lib").rglob("*.cpp")):
        text = path.read_text()
        for call in re.finditer(r'Level::Remark,\s*((?:"(?:[^"\\]|\\.)*"\s*)+)',
                                text):
            message = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"',
                                         call.group(1)))
            pieces = [" ".join(p.split()) for p in re.split(r"%\d", message)]
            words = next((p for p in pieces if len(p) >= 12), None)
            if words:
                found.append((path.name, words))
    return found


def main():
    source = pathlib.Path(sys.argv[1])
    docs = source / "docs"
    pragma = (docs / "pragma.md").read_text()
    environment = (docs / "environment.md").read_text()
    missing = [f"docs/pragma.md: no section for the clause '{c}' (`{c}(...)`)"
               for c in clauses(source) if f"`{c}(" not in pragma]
    missing += [f"docs/environment.md: the runtime reads {v}, not documented"
                for v in variables(source) if f"`{v}" not in environment]
    remarkPage = " ".join((docs / "remarks.md").read_text().split())
    missing += [f"docs/remarks.md: no section for {file}'s remark "
                f"'...{words}...'"
                for file, words in remarks(source) if words not in remarkPage]
    for line in missing:
        print(line)
    if missing:
        return 1
    print(f"check-docs: {len(clauses(source))} clauses, "
          f"{len(variables(source))} variables and "
          f"{len(remarks(source))} remarks documented")
    return 0


if __name__ == "__main__":
    sys.exit(main())
