//===- fpm-profile.cpp - The profile store on the command line ------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// fpm-profile shows the functional performance models (FPMs) that named
// loops store as they run: --show prints them as tables, --plot draws speed
// against size as an SVG figure. Running a program on purpose to profile it
// (`fpm-profile -- ./app`) is refused for now. It is a thin main: parse the
// arguments, call runtime/store/profile_report, print.
//
// Exit status: 0 on success; 1 when the profiles are at fault (none, no such
// loop, a bad file, a folder or figure that cannot be read or written); 2 for
// a bad command line. A bad file is a warning, not an error, so that the good
// profiles are still shown.
//
//===----------------------------------------------------------------------===//

#include "common/ToolOutput.h"
#include "fpm/version.h"
#include "store/profile_report.hpp"
#include "store/profile_store.hpp"
#include "support/atomic_file.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <new>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr std::string_view ToolName = "fpm-profile";
constexpr int ExitProblem = 1;
constexpr int ExitUsage = 2;

/// A problem with the command line; what() is the message.
class UsageError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// A problem with the profiles or files, not the command line; exit 1.
class ProblemError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

std::string helpText() {
  return R"(fpm-profile - show the performance profiles fpm keeps for named loops

USAGE
  fpm-profile --show [--dir DIR] [LOOP]
  fpm-profile --plot FILE.svg [--dir DIR] [LOOP]
  fpm-profile --help | --version

A named loop stores one fpm-profile/1 file per processing element (PE) in the
profile folder as it runs, LOOP@DEVICE.json. This tool reads that folder.

MODES
  --show           print every loop's profiles (or LOOP's): per PE a header
                   (device, device_name, host) and a table of its points:
                   size, time (s), speed (iterations/s) = size / time, reps
                   and ci
  --plot FILE.svg  write an SVG figure, one panel per loop (or LOOP's): speed
                   against size, one line per PE
Not implemented yet: `fpm-profile -- PROGRAM ARGS...` (running a program to
profile it); run the program itself, and its named loops store their profiles
in FPM_PROFILE_DIR as they run.

OPTIONS
  --dir DIR        the profile folder (default: $FPM_PROFILE_DIR if set, else
                   $XDG_CACHE_HOME/fpm/profiles/HOST or
                   ~/.cache/fpm/profiles/HOST, as the runtime uses)
  --help, -h       print this help and exit
  --version        print the version and exit
Options take their value as --opt VALUE or --opt=VALUE.

EXAMPLES
  fpm-profile --show
  fpm-profile --show matmul.rows
  fpm-profile --plot profiles.svg --dir examples/profiles

EXIT STATUS
  0 on success; 1 when there are no profiles, no profiles of LOOP, the
  folder or the figure cannot be read or written, or any profile file is
  bad (each bad file is a warning on standard error and is skipped; the
  others are still shown); 2 on bad arguments.
)";
}

struct Options {
  bool show = false;
  std::optional<std::string> plot;
  std::optional<std::string> dir;
  std::optional<std::string> loop;
};

/// Takes the value of `--opt VALUE` or `--opt=VALUE` at args[i].
std::string takeValue(std::span<const std::string_view> args, std::size_t &i,
                      std::string_view name,
                      std::optional<std::string_view> inlineValue) {
  std::string_view value;
  if (inlineValue) {
    value = *inlineValue;
  } else {
    if (i + 1 >= args.size() || args[i + 1].starts_with("--"))
      throw UsageError("missing value for " + std::string(name));
    value = args[++i];
  }
  if (value.empty())
    throw UsageError("missing value for " + std::string(name));
  return std::string(value);
}

Options parseOptions(std::span<const std::string_view> args) {
  Options options;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg.size() < 2 || arg.front() != '-') {
      if (options.loop)
        throw UsageError("more than one LOOP given: '" + *options.loop +
                         "' and '" + std::string(arg) + "'");
      options.loop = std::string(arg);
      continue;
    }
    std::string_view name = arg;
    std::optional<std::string_view> value;
    if (auto equals = arg.find('='); equals != std::string_view::npos) {
      name = arg.substr(0, equals);
      value = arg.substr(equals + 1);
    }
    auto once = [&](bool given) {
      if (given)
        throw UsageError("option " + std::string(name) + " given twice");
    };
    if (name == "--show") {
      if (value)
        throw UsageError("option '--show' takes no value");
      once(options.show);
      options.show = true;
    } else if (name == "--plot") {
      once(options.plot.has_value());
      options.plot = takeValue(args, i, name, value);
    } else if (name == "--dir") {
      once(options.dir.has_value());
      options.dir = takeValue(args, i, name, value);
    } else if (name == "--help" || name == "-h" || name == "--version") {
      throw UsageError("option '" + std::string(name) + "' takes no value");
    } else {
      throw UsageError("unknown option '" + std::string(name) + "'");
    }
  }
  if (options.show == options.plot.has_value())
    throw UsageError(options.show ? "--show and --plot cannot be combined"
                                  : "missing --show or --plot (see --help)");
  return options;
}

/// What a run prints: the output, the warnings and a final message for
/// stderr, and the exit status.
struct Result {
  std::string output;
  std::vector<std::string> warnings;
  std::string message;
  int status = 0;
};

Result run(std::span<const std::string_view> args) {
  // --help and --version win over everything before a `--`.
  for (std::string_view arg : args) {
    if (arg == "--")
      break;
    if (arg == "--help" || arg == "-h")
      return {helpText(), {}, {}, 0};
    if (arg == "--version")
      return {
          std::string(ToolName) + " (fpm) " FPM_VERSION_STRING "\n", {}, {}, 0};
  }
  if (std::find(args.begin(), args.end(), "--") != args.end())
    throw UsageError(
        "running a program to profile it is not implemented yet; named loops "
        "store their profiles as they run (FPM_PROFILE_DIR)");

  Options options = parseOptions(args);
  std::filesystem::path dir = options.dir ? std::filesystem::path(*options.dir)
                                          : fpm::profileDirectory();
  if (dir.empty())
    throw ProblemError("no profile folder: set FPM_PROFILE_DIR or HOME, or "
                       "give --dir DIR");

  Result result;
  fpm::ProfileListing listing;
  try {
    listing = fpm::listProfiles(dir, options.loop);
  } catch (const fpm::ProfileError &error) {
    throw ProblemError(error.what());
  }
  result.warnings = std::move(listing.problems);
  if (!result.warnings.empty())
    result.status = ExitProblem;
  if (listing.loops.empty()) {
    result.status = ExitProblem;
    result.message =
        options.loop
            ? std::string(ToolName) + ": error: no profiles of loop '" +
                  *options.loop + "' in " + dir.string()
            : std::string(ToolName) + ": no profiles in " + dir.string();
    return result;
  }

  if (options.show) {
    for (std::size_t i = 0; i < listing.loops.size(); ++i)
      result.output +=
          (i ? "\n" : "") + fpm::formatLoopTables(listing.loops[i]);
    return result;
  }
  try {
    fpm::writeFileAtomically(*options.plot,
                             fpm::renderSpeedPlot(listing.loops));
  } catch (const std::runtime_error &error) {
    throw ProblemError(error.what());
  }
  return result;
}

int fail(const std::string &message, int status) {
  return fpm::tools::reportError(ToolName, message, status);
}

} // namespace

int main(int argc, char **argv) {
  Result result;
  try {
    std::vector<std::string_view> args(argv + 1, argv + argc);
    result = run(args);
  } catch (const UsageError &error) {
    return fail(error.what(), ExitUsage);
  } catch (const ProblemError &error) {
    return fail(error.what(), ExitProblem);
  } catch (const std::bad_alloc &) {
    return fail("out of memory", ExitProblem);
  } catch (const std::exception &error) {
    return fail(error.what(), ExitProblem);
  } catch (...) {
    return fail("unknown error", ExitProblem);
  }
  fpm::tools::reportWarnings(ToolName, result.warnings);
  if (!fpm::tools::writeOutput(result.output))
    return fail("cannot write to standard output", ExitProblem);
  if (!result.message.empty())
    std::fprintf(stderr, "%s\n", fpm::tools::oneLine(result.message).c_str());
  return result.status;
}
