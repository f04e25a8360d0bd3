//===- fpm-profile.cpp - The profile store on the command line ------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// fpm-profile builds and shows the functional performance models (FPMs) of
// named loops. `fpm-profile -- ./app args` runs the program with
// FPM_BENCHMARK set, so that the runtime benchmarks each loop on each PE
// at its first call (runtime/profiling/benchmark.hpp) and stores the
// profiles; --show prints stored profiles as tables, --plot draws speed
// against size as an SVG figure. It is a thin main: parse the arguments,
// run the program or call runtime/store/profile_report, print.
//
// Exit status: 0 on success; 1 when the profiles are at fault (none, no such
// loop, a bad file, a folder or figure that cannot be read or written, a
// program that wrote none); 2 for a bad command line; a profiled program's
// own non-zero status (128 + N for signal N, 127 when it cannot be run). A
// bad file is a warning, not an error, so that the good profiles are still
// shown.
//
//===----------------------------------------------------------------------===//

#include "common/ToolOutput.h"
#include "fpm/version.h"
#include "profiling/benchmark.hpp"
#include "store/profile_report.hpp"
#include "store/profile_store.hpp"
#include "support/atomic_file.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <map>
#include <new>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

extern char **environ;

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
  return R"(fpm-profile - build and show the performance profiles of fpm's named loops

USAGE
  fpm-profile [--dir DIR] [BENCHMARK OPTIONS] -- PROGRAM [ARGS...]
  fpm-profile --show [--dir DIR] [LOOP]
  fpm-profile --plot FILE.svg [--dir DIR] [LOOP]
  fpm-profile --help | --version

A named loop stores one fpm-profile/1 file per processing element (PE) in the
profile folder, LOOP@DEVICE.json: points measured as it runs (online), and
full profiles built on purpose by running the program under fpm-profile.

MODES
  -- PROGRAM ARGS  run PROGRAM; at the first call of each named loop the
                   runtime benchmarks the loop on each PE it runs on, over a
                   ladder of sizes (multiples of the loop's grain up to its
                   trip count), repeating each size until the 95% confidence
                   interval of its mean time is within --error of the mean,
                   or --time runs out; then the loop runs as usual. A loop
                   is re-run only when it says what it writes (out/inout
                   clauses, or its kernel's written arguments): those
                   sections are saved first and put back after every run, so
                   the program's results do not change. Other loops are
                   named on stderr and only profiled online. A progress line
                   per loop and PE goes to stderr.
  --show           print every loop's profiles (or LOOP's): per PE a header
                   (device, device_name, host) and a table of its points:
                   size, time (s), speed (iterations/s) = size / time, reps
                   and ci
  --plot FILE.svg  write an SVG figure, one panel per loop (or LOOP's): speed
                   against size, one line per PE

OPTIONS
  --dir DIR        the profile folder (default: $FPM_PROFILE_DIR if set, else
                   $XDG_CACHE_HOME/fpm/profiles/HOST or
                   ~/.cache/fpm/profiles/HOST, as the runtime uses); a
                   profiled program gets it as FPM_PROFILE_DIR
  --help, -h       print this help and exit
  --version        print the version and exit
Options take their value as --opt VALUE or --opt=VALUE.

BENCHMARK OPTIONS (with -- PROGRAM only)
  --points N       sizes per loop and PE (default 10)
  --error E        relative half-width of the 95% confidence interval to
                   stop repeating a size at (default 0.05)
  --reps MIN:MAX   runs per size: at least MIN while time allows, at most
                   MAX (default 3:30)
  --time S         seconds per size: no new run starts after S (default 1)
  --budget S       seconds per loop and PE: no new size starts after S
                   (default: no limit)
  --fresh          replace the benchmarked loops' stored points instead of
                   adding to them (after the loop's code or the machine
                   changed)

EXAMPLES
  fpm-profile -- ./solver input.dat
  fpm-profile --error 0.02 --points 16 --dir profiles -- ./solver
  fpm-profile --show
  fpm-profile --show matmul.rows
  fpm-profile --plot profiles.svg --dir profiles

EXIT STATUS
  0 on success; 1 when there are no profiles, no profiles of LOOP, the
  folder or the figure cannot be read or written, any profile file is bad
  (each bad file is a warning on standard error and is skipped; the others
  are still shown), or a profiled program wrote no profile; 2 on bad
  arguments; a profiled program's own status when it fails (128 + N when
  signal N ended it, 127 when it cannot be run).
)";
}

struct Options {
  bool show = false;
  std::optional<std::string> plot;
  std::optional<std::string> dir;
  std::optional<std::string> loop;
  /// `-- PROGRAM ARGS`: the program to profile, and how.
  std::vector<std::string> program;
  fpm::BenchmarkSettings settings;
  bool benchmarkOptions = false;
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
  std::string settings; // FPM_BENCHMARK's fields, checked at the end
  bool dashes = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "--") {
      options.program.assign(args.begin() + i + 1, args.end());
      dashes = true;
      break;
    }
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
    } else if (name == "--fresh") {
      if (value)
        throw UsageError("option '--fresh' takes no value");
      once(settings.find("fresh=") != std::string::npos);
      settings += std::string(settings.empty() ? "" : ",") + "fresh=1";
      options.benchmarkOptions = true;
    } else if (name == "--points" || name == "--error" || name == "--reps" ||
               name == "--time" || name == "--budget") {
      const std::string field(name.substr(2));
      once(settings.find(field + "=") != std::string::npos);
      settings += (settings.empty() ? "" : ",") + field + "=" +
                  takeValue(args, i, name, value);
      options.benchmarkOptions = true;
    } else if (name == "--help" || name == "-h" || name == "--version") {
      throw UsageError("option '" + std::string(name) + "' takes no value");
    } else {
      throw UsageError("unknown option '" + std::string(name) + "'");
    }
  }

  if (dashes) {
    if (options.program.empty())
      throw UsageError("missing PROGRAM after '--'");
    if (options.show || options.plot || options.loop)
      throw UsageError("--show, --plot and LOOP do not go with -- PROGRAM");
    try {
      if (!settings.empty())
        options.settings = fpm::BenchmarkSettings::parse(settings);
    } catch (const std::invalid_argument &error) {
      throw UsageError("--" + std::string(error.what()));
    }
    return options;
  }
  if (options.benchmarkOptions)
    throw UsageError("benchmark options need a program: -- PROGRAM [ARGS...]");
  if (options.show == options.plot.has_value())
    throw UsageError(options.show
                         ? "--show and --plot cannot be combined"
                         : "missing --show, --plot or -- PROGRAM (see --help)");
  return options;
}

/// Every profile file in `dir` with when and how big it was: what a
/// profiled program wrote is what changed.
std::map<std::filesystem::path,
         std::pair<std::filesystem::file_time_type, std::uintmax_t>>
profileFiles(const std::filesystem::path &dir) {
  std::map<std::filesystem::path,
           std::pair<std::filesystem::file_time_type, std::uintmax_t>>
      files;
  std::error_code error;
  for (std::filesystem::directory_iterator it(dir, error), end;
       !error && it != end; it.increment(error)) {
    std::error_code ignored;
    if (it->path().extension() == ".json" && it->is_regular_file(ignored))
      files[it->path()] = {it->last_write_time(ignored),
                           it->file_size(ignored)};
  }
  return files;
}

/// Runs `program` with FPM_BENCHMARK and FPM_PROFILE_DIR set, waits for it
/// and returns its exit status as a shell reports it (128 + N for signal N,
/// 127 when it cannot be run). Interrupts go to the program: fpm-profile
/// ignores them meanwhile, and reports how the program ended.
int runProgram(const std::vector<std::string> &program,
               const fpm::BenchmarkSettings &settings,
               const std::filesystem::path &dir) {
  if (::setenv("FPM_BENCHMARK", settings.format().c_str(), 1) != 0 ||
      ::setenv("FPM_PROFILE_DIR", dir.c_str(), 1) != 0)
    throw ProblemError(std::string("cannot set the environment: ") +
                       std::strerror(errno));
  std::vector<char *> argv;
  for (const std::string &arg : program)
    argv.push_back(const_cast<char *>(arg.c_str()));
  argv.push_back(nullptr);

  struct sigaction ignore{};
  ignore.sa_handler = SIG_IGN;
  struct sigaction oldInt{}, oldQuit{};
  ::sigaction(SIGINT, &ignore, &oldInt);
  ::sigaction(SIGQUIT, &ignore, &oldQuit);
  // The child gets the default dispositions back.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGQUIT);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF);
  pid_t child = 0;
  const int spawned =
      posix_spawnp(&child, argv[0], nullptr, &attributes, argv.data(), environ);
  posix_spawnattr_destroy(&attributes);
  int status = 0;
  if (spawned == 0)
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
  ::sigaction(SIGINT, &oldInt, nullptr);
  ::sigaction(SIGQUIT, &oldQuit, nullptr);
  if (spawned != 0) {
    std::fprintf(stderr, "%s: error: cannot run '%s': %s\n", ToolName.data(),
                 program.front().c_str(), std::strerror(spawned));
    return 127;
  }
  if (WIFSIGNALED(status)) {
    std::fprintf(stderr, "%s: error: '%s' was ended by signal %d (%s)\n",
                 ToolName.data(), program.front().c_str(), WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    return 128 + WTERMSIG(status);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
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
  Options options = parseOptions(args);
  std::filesystem::path dir = options.dir ? std::filesystem::path(*options.dir)
                                          : fpm::profileDirectory();
  if (dir.empty())
    throw ProblemError("no profile folder: set FPM_PROFILE_DIR or HOME, or "
                       "give --dir DIR");

  if (!options.program.empty()) {
    std::error_code error;
    dir = std::filesystem::absolute(dir, error);
    const auto before = profileFiles(dir);
    Result result;
    result.status = runProgram(options.program, options.settings, dir);
    std::vector<std::string> written;
    for (const auto &[path, stamp] : profileFiles(dir))
      if (auto it = before.find(path);
          it == before.end() || it->second != stamp)
        written.push_back(path.filename().string());
    if (!written.empty()) {
      result.message = std::string(ToolName) + ": " +
                       std::to_string(written.size()) + " profile" +
                       (written.size() == 1 ? "" : "s") + " written to " +
                       dir.string() + " (fpm-profile --show prints them)";
    } else if (result.status == 0) {
      result.status = ExitProblem;
      result.message =
          std::string(ToolName) + ": error: '" + options.program.front() +
          "' wrote no profile to " + dir.string() +
          ": does it run named fpm loops (built with fpm-rewrite or calling "
          "libfpmrt)?";
    }
    return result;
  }

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
    fpm::writeUserFile(*options.plot, fpm::renderSpeedPlot(listing.loops));
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
