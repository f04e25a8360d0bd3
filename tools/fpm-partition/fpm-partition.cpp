//===- fpm-partition.cpp - The partitioner on the command line ------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// fpm-partition is the offline face of the runtime's partitioners, as
// docs/profiles.md describes it:
//  - static mode splits N work units over the processing elements (PEs) whose
//    fpm-profile/1 files are given, with any registered partitioner, and
//    scores the result with the one cost model;
//  - chunk mode prints the chunk sizes a self-scheduling master grants
//    (PSS, CSS, GSS, FSS, TSS, and their two-stage weighted forms).
// Both lists of algorithms are fpm/schedules.def's: the partitioners through
// the registry, the schemes read here.
// Over 800 lines because its two modes (static partitioners, self-scheduling
// chunk sequences) share the argument rules, the loading of profiles and
// the two output formats (text, JSON), which are this tool's own. It is a
// thin main: parse the arguments, call runtime/, print. Any problem is
// one line on standard error and exit status 2, with nothing on standard
// output; the output is composed in memory and written only after success.
//
//===----------------------------------------------------------------------===//

#include "common/ToolOutput.h"
#include "fpm/version.h"
#include "model/profile.hpp"
#include "partition/partition.hpp"
#include "schedule/schedule.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <new>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace {

using OrderedJson = nlohmann::ordered_json;

constexpr std::string_view ToolName = "fpm-partition";
constexpr int ExitError = 2;

/// The most chunks chunk mode will compute and print. A schedule such as
/// PSS over 10^12 iterations would otherwise run the machine out of memory.
constexpr std::int64_t MaxChunks = 10'000'000;

/// A problem with the command line or its values; what() is the message.
class UsageError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

//===----------------------------------------------------------------------===//
// The command line
//===----------------------------------------------------------------------===//

/// Every option; all but the flags take one value.
struct OptionInfo {
  std::string_view name;
  bool takesValue;
};

constexpr OptionInfo KnownOptions[] = {
    {"--size", true},      {"--algorithm", true}, {"--granularity", true},
    {"--backtrack", true}, {"--format", true},    {"--workers", true},
    {"--chunk", true},     {"--alpha", true},     {"--weights", true},
    {"--help", false},     {"-h", false},         {"--version", false},
};

const OptionInfo *findOption(std::string_view name) {
  for (const OptionInfo &option : KnownOptions)
    if (option.name == name)
      return &option;
  return nullptr;
}

/// The command line split into option values (as given, unparsed) and the
/// positional arguments (profiles).
struct CommandLine {
  std::map<std::string, std::string, std::less<>> values;
  std::vector<std::string> positional;

  const std::string *value(std::string_view option) const {
    auto it = values.find(option);
    return it == values.end() ? nullptr : &it->second;
  }
  bool has(std::string_view option) const { return value(option) != nullptr; }
};

bool looksLikeOption(std::string_view arg) {
  return arg.size() > 1 && arg.front() == '-';
}

/// Accepts `--opt value` and `--opt=value`; `--` ends the options.
CommandLine splitCommandLine(std::span<const std::string_view> args) {
  CommandLine result;
  bool optionsDone = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (optionsDone || !looksLikeOption(arg)) {
      result.positional.emplace_back(arg);
      continue;
    }
    if (arg == "--") {
      optionsDone = true;
      continue;
    }
    std::string_view name = arg;
    std::optional<std::string_view> value;
    if (auto equals = arg.find('='); equals != std::string_view::npos) {
      name = arg.substr(0, equals);
      value = arg.substr(equals + 1);
    }
    const OptionInfo *option = findOption(name);
    if (!option)
      throw UsageError("unknown option '" + std::string(name) + "'");
    if (!option->takesValue) {
      if (value)
        throw UsageError("option '" + std::string(name) + "' takes no value");
      continue; // --help and --version are handled before splitting.
    }
    if (!value) {
      // The next argument is the value, unless there is none or it is the
      // next option ("--size --algorithm equal"). A lone "-5" is a value.
      if (i + 1 >= args.size() || args[i + 1].starts_with("--"))
        throw UsageError("missing value for " + std::string(name));
      value = args[++i];
    }
    if (value->empty())
      throw UsageError("missing value for " + std::string(name));
    if (result.has(name))
      throw UsageError("option " + std::string(name) + " given twice");
    result.values.emplace(std::string(name), std::string(*value));
  }
  return result;
}

std::int64_t parseInteger(std::string_view option, std::string_view text) {
  std::int64_t value = 0;
  auto [end, error] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  if (error == std::errc::result_out_of_range)
    throw UsageError("value '" + std::string(text) + "' for " +
                     std::string(option) + " is out of range");
  if (error != std::errc() || end != text.data() + text.size())
    throw UsageError("invalid value '" + std::string(text) + "' for " +
                     std::string(option) + ": expected an integer");
  return value;
}

/// An integer that must also fit in an int (P, B).
int parseInt(std::string_view option, std::string_view text) {
  std::int64_t value = parseInteger(option, text);
  if (value < INT_MIN || value > INT_MAX)
    throw UsageError("value '" + std::string(text) + "' for " +
                     std::string(option) + " is out of range");
  return static_cast<int>(value);
}

double parseNumber(std::string_view what, std::string_view text) {
  double value = 0;
  auto [end, error] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  if (error == std::errc::result_out_of_range)
    throw UsageError("value '" + std::string(text) + "' for " +
                     std::string(what) + " is out of range");
  if (error != std::errc() || end != text.data() + text.size())
    throw UsageError("invalid value '" + std::string(text) + "' for " +
                     std::string(what) + ": expected a number");
  if (!std::isfinite(value))
    throw UsageError("value '" + std::string(text) + "' for " +
                     std::string(what) + " must be finite");
  return value;
}

/// W1,...,WP: each a finite number > 0.
std::vector<double> parseWeights(std::string_view text) {
  std::vector<double> weights;
  for (std::size_t begin = 0;;) {
    std::size_t comma = text.find(',', begin);
    std::string_view item = text.substr(
        begin, comma == std::string_view::npos ? comma : comma - begin);
    std::string what =
        "weight " + std::to_string(weights.size() + 1) + " in --weights";
    if (item.empty())
      throw UsageError(what + " is empty");
    double weight = parseNumber(what, item);
    if (weight <= 0)
      throw UsageError(what + " must be > 0, got '" + std::string(item) + "'");
    weights.push_back(weight);
    if (comma == std::string_view::npos)
      break;
    begin = comma + 1;
  }
  return weights;
}

enum class Format { Text, Json };

Format parseFormat(const CommandLine &line) {
  const std::string *format = line.value("--format");
  if (!format || *format == "text")
    return Format::Text;
  if (*format == "json")
    return Format::Json;
  throw UsageError("invalid value '" + *format +
                   "' for --format: expected 'text' or 'json'");
}

/// Refuses the options of the other mode, which signal a confused command.
void refuseOptions(const CommandLine &line,
                   std::initializer_list<std::string_view> options,
                   std::string_view algorithm, std::string_view why) {
  for (std::string_view option : options)
    if (line.has(option))
      throw UsageError("option " + std::string(option) +
                       " does not apply to '" + std::string(algorithm) + "' (" +
                       std::string(why) + ")");
}

//===----------------------------------------------------------------------===//
// Formatting
//===----------------------------------------------------------------------===//

/// One JSON value on one line, spaced as the spec shows it:
/// {"key": value, "key": [1, 2]}. Numbers come from nlohmann's dump, which
/// writes doubles in a form that reads back to the same double.
std::string inlineJson(const OrderedJson &value) {
  std::string out;
  if (value.is_object()) {
    out += '{';
    bool first = true;
    for (const auto &[key, item] : value.items()) {
      out += first ? "" : ", ";
      out += OrderedJson(key).dump() + ": " + inlineJson(item);
      first = false;
    }
    return out + '}';
  }
  if (value.is_array()) {
    out += '[';
    for (std::size_t i = 0; i < value.size(); ++i)
      out += (i ? ", " : "") + inlineJson(value[i]);
    return out + ']';
  }
  return value.dump();
}

/// A double for people: six significant digits.
std::string formatShort(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  return buffer;
}

std::string formatPercent(double part, double whole) {
  if (!(whole > 0))
    return "-";
  char buffer[64];
  // part / whole first: 100 * 1e308 is past the largest double.
  std::snprintf(buffer, sizeof buffer, "%.1f%%", 100.0 * (part / whole));
  return buffer;
}

std::string joinIntegers(std::span<const std::int64_t> values,
                         std::string_view separator) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i)
    out += (i ? std::string(separator) : "") + std::to_string(values[i]);
  return out;
}

/// A PE's packages for the table: "8", "8+4+4", or, for many, the first few
/// and the count; the JSON output always has them all.
std::string formatPackages(std::span<const std::int64_t> packages) {
  constexpr std::size_t Shown = 6;
  if (packages.empty())
    return "-";
  if (packages.size() <= Shown)
    return joinIntegers(packages, "+");
  return joinIntegers(packages.first(Shown - 2), "+") + "+...+" +
         std::to_string(packages.back()) + " (" +
         std::to_string(packages.size()) + " packages)";
}

/// A plain text table: left-aligned text columns, right-aligned numbers.
class Table {
public:
  struct Column {
    std::string title;
    bool rightAligned;
  };

  explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {}

  void addRow(std::vector<std::string> cells) {
    rows_.push_back(std::move(cells));
  }

  std::string render() const {
    std::vector<std::size_t> widths;
    for (const Column &column : columns_)
      widths.push_back(column.title.size());
    for (const auto &row : rows_)
      for (std::size_t c = 0; c < row.size(); ++c)
        widths[c] = std::max(widths[c], row[c].size());

    auto renderRow = [&](auto cellOf) {
      std::string line;
      for (std::size_t c = 0; c < columns_.size(); ++c) {
        const std::string &cell = cellOf(c);
        std::string padding(widths[c] - cell.size(), ' ');
        if (c)
          line += "  ";
        line += columns_[c].rightAligned ? padding + cell : cell + padding;
      }
      while (!line.empty() && line.back() == ' ')
        line.pop_back();
      return line + '\n';
    };
    std::string out = renderRow([&](std::size_t c) -> const std::string & {
      return columns_[c].title;
    });
    for (const auto &row : rows_)
      out += renderRow(
          [&](std::size_t c) -> const std::string & { return row[c]; });
    return out;
  }

private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

/// Integers wrapped to lines of at most `width` columns, each indented.
std::string wrapIntegers(std::span<const std::int64_t> values,
                         std::size_t width, std::string_view indent) {
  std::string out;
  std::string line(indent);
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::string item =
        std::to_string(values[i]) + (i + 1 < values.size() ? "," : "");
    if (line.size() > indent.size() && line.size() + 1 + item.size() > width) {
      out += line + '\n';
      line = indent;
    }
    line += (line.size() > indent.size() ? " " : "") + item;
  }
  if (line.size() > indent.size())
    out += line + '\n';
  return out;
}

//===----------------------------------------------------------------------===//
// Static partitioners
//===----------------------------------------------------------------------===//

/// What a successful run prints: the output, and warnings for stderr.
struct Result {
  std::string output;
  std::vector<std::string> warnings;
};

Result runStatic(const CommandLine &line, const fpm::Partitioner &partitioner,
                 std::int64_t size) {
  refuseOptions(line, {"--workers", "--chunk", "--alpha", "--weights"},
                partitioner.name, "a static partitioner takes PROFILE files");
  Format format = parseFormat(line);
  if (size < 0)
    throw UsageError("the size N must be >= 0, got " + std::to_string(size));
  std::optional<std::int64_t> granularity;
  if (const std::string *text = line.value("--granularity")) {
    granularity = parseInteger("--granularity", *text);
    if (*granularity < 1)
      throw UsageError("the granularity G must be >= 1, got " + *text);
  }
  fpm::PartitionRequest request;
  request.size = size;
  if (const std::string *text = line.value("--backtrack")) {
    request.backtrack = parseInt("--backtrack", *text);
    if (request.backtrack < 1)
      throw UsageError("the backtrack budget B must be >= 1, got " + *text);
    if (request.backtrack > fpm::MaxBacktrack)
      throw UsageError("the backtrack budget B must be at most " +
                       std::to_string(fpm::MaxBacktrack) + ", got " + *text);
  }
  if (line.positional.empty())
    throw UsageError("no PROFILE given: '" + std::string(partitioner.name) +
                     "' needs one fpm-profile/1 file per processing element");

  Result result;
  std::vector<fpm::Profile> profiles;
  for (const std::string &path : line.positional) {
    profiles.push_back(fpm::readProfile(path));
    if (profiles.back().kernel != profiles.front().kernel &&
        result.warnings.empty())
      result.warnings.push_back(
          "profiles are for different kernels: '" + profiles.front().kernel +
          "' (" + line.positional.front() + ") and '" + profiles.back().kernel +
          "' (" + path + "); partitioning anyway");
  }

  fpm::CostModel model(std::move(profiles));
  request.granularity = granularity ? *granularity : model.defaultGranularity();
  fpm::Distribution distribution;
  try {
    distribution = fpm::partition(partitioner, model, request);
  } catch (const std::length_error &error) {
    // An algorithm that tabulates N/G granules; name the cause, not only
    // the library's "vector::_M_default_append".
    throw std::runtime_error(
        "'" + std::string(partitioner.name) + "' cannot handle N/G = " +
        std::to_string(request.units()) + " granules (" + error.what() + ")");
  } catch (const std::bad_alloc &) {
    throw std::runtime_error("'" + std::string(partitioner.name) +
                             "' ran out of memory for N/G = " +
                             std::to_string(request.units()) + " granules");
  }
  if (std::string problem =
          fpm::checkDistribution(distribution, request, model.size());
      !problem.empty())
    throw std::runtime_error("internal error: '" +
                             std::string(partitioner.name) +
                             "' returned an invalid distribution: " + problem);
  fpm::Evaluation evaluation = fpm::evaluate(model, distribution);
  for (std::size_t pe = 0; pe < model.size(); ++pe)
    if (!std::isfinite(evaluation.times[pe]))
      throw std::runtime_error("the cost model gives a non-finite time for "
                               "device '" +
                               model.profile(pe).device + "'");

  if (format == Format::Json) {
    OrderedJson head = OrderedJson::object();
    head["algorithm"] = partitioner.name;
    head["size"] = request.size;
    head["granularity"] = request.granularity;
    head["makespan"] = evaluation.makespan;
    std::string out = inlineJson(head);
    out.pop_back(); // the closing brace; the devices follow.
    out += ",\n \"devices\": [";
    for (std::size_t pe = 0; pe < model.size(); ++pe) {
      OrderedJson device = OrderedJson::object();
      device["device"] = model.profile(pe).device;
      device["iterations"] = distribution.iterations(pe);
      device["packages"] = distribution.packages[pe];
      device["time"] = evaluation.times[pe];
      out += (pe ? ",\n   " : "\n   ") + inlineJson(device);
    }
    out += "]}\n";
    result.output = std::move(out);
    return result;
  }

  std::string out =
      std::string(partitioner.name) + ": N = " + std::to_string(request.size) +
      ", G = " + std::to_string(request.granularity) + ", " +
      std::to_string(model.size()) + (model.size() == 1 ? " PE" : " PEs") +
      ", kernel '" + model.profile(0).kernel + "'\n";
  Table table({{"device", false},
               {"iterations", true},
               {"share", true},
               {"packages", false},
               {"time (s)", true},
               {"busy", true}});
  double busy = 0;
  for (std::size_t pe = 0; pe < model.size(); ++pe) {
    std::int64_t iterations = distribution.iterations(pe);
    double time = evaluation.times[pe];
    // The mean, summed as such: times near 1e308 would sum past the
    // largest double.
    busy += time / static_cast<double>(model.size());
    table.addRow({model.profile(pe).device, std::to_string(iterations),
                  formatPercent(static_cast<double>(iterations),
                                static_cast<double>(request.size)),
                  formatPackages(distribution.packages[pe]), formatShort(time),
                  formatPercent(time, evaluation.makespan)});
  }
  out += table.render();
  out += "makespan: " + formatShort(evaluation.makespan) + " s\n";
  out += "utilisation: " + formatPercent(busy, evaluation.makespan) +
         " (mean busy time / makespan)\n";
  result.output = std::move(out);
  return result;
}

//===----------------------------------------------------------------------===//
// Self-scheduling chunk sequences
//===----------------------------------------------------------------------===//

/// A generous upper bound on the number of chunks `spec` grants, to refuse
/// schedules too long to print before computing them.
double estimateChunks(const fpm::ScheduleSpec &spec) {
  double rest = static_cast<double>(spec.iterations);
  if (spec.alpha)
    rest -= std::ceil(rest * *spec.alpha / 100);
  rest = std::max(rest, 0.0);
  double workers = spec.workers;
  switch (spec.scheme) {
  case fpm::Scheme::Pss:
    return rest;
  case fpm::Scheme::Css:
    return std::ceil(rest / static_cast<double>(spec.chunk));
  default:
    // GSS and FSS shrink the rest geometrically, TSS in about 4P steps.
    return std::min(rest, workers * (2 + 2 * std::log2(rest + 1)));
  }
}

/// The alpha as given when it is a whole number (80, as the spec shows it),
/// otherwise the double.
OrderedJson alphaJson(double alpha) {
  if (alpha == std::floor(alpha) && std::fabs(alpha) < 1e15)
    return static_cast<std::int64_t>(alpha);
  return alpha;
}

Result runSchedule(const CommandLine &line, fpm::Scheme scheme,
                   std::string_view name, std::int64_t size) {
  refuseOptions(line, {"--granularity", "--backtrack"}, name,
                "a self-scheduling scheme takes --workers");
  if (!line.positional.empty())
    throw UsageError("unexpected argument '" + line.positional.front() +
                     "': '" + std::string(name) +
                     "' is a self-scheduling scheme and takes no PROFILE");
  Format format = parseFormat(line);
  if (size < 0)
    throw UsageError("the size I must be >= 0, got " + std::to_string(size));

  fpm::ScheduleSpec spec;
  spec.scheme = scheme;
  spec.iterations = size;
  const std::string *workers = line.value("--workers");
  if (!workers)
    throw UsageError("missing --workers P: '" + std::string(name) +
                     "' needs the number of workers");
  spec.workers = parseInt("--workers", *workers);
  if (spec.workers < 1)
    throw UsageError("the number of workers P must be >= 1, got " + *workers);
  if (const std::string *chunk = line.value("--chunk")) {
    spec.chunk = parseInteger("--chunk", *chunk);
    if (spec.chunk < 1)
      throw UsageError("the chunk size K must be >= 1, got " + *chunk);
  }
  const std::string *alpha = line.value("--alpha");
  const std::string *weights = line.value("--weights");
  if (alpha && !weights)
    throw UsageError("--alpha needs --weights W1,...,WP");
  if (weights && !alpha)
    throw UsageError("--weights needs --alpha A");
  if (alpha) {
    spec.alpha = parseNumber("--alpha", *alpha);
    if (!(*spec.alpha > 0 && *spec.alpha <= 100))
      throw UsageError("the percentage --alpha must be in (0, 100], got " +
                       *alpha);
    spec.weights = parseWeights(*weights);
    if (spec.weights.size() != static_cast<std::size_t>(spec.workers))
      throw UsageError("--weights has " + std::to_string(spec.weights.size()) +
                       (spec.weights.size() == 1 ? " value" : " values") +
                       " but --workers is " + std::to_string(spec.workers));
  }
  if (std::string problem = fpm::validate(spec); !problem.empty())
    throw UsageError(problem);
  if (double chunks = estimateChunks(spec);
      chunks > static_cast<double>(MaxChunks))
    throw UsageError(std::string(name) + " with I = " + std::to_string(size) +
                     " and P = " + std::to_string(spec.workers) +
                     " grants about " + formatShort(chunks) +
                     " chunks; fpm-partition prints at most " +
                     std::to_string(MaxChunks));

  fpm::ChunkSequence sequence = fpm::chunkSequence(spec);
  std::int64_t stage1 = 0, dynamic = 0;
  for (std::int64_t share : sequence.stage1)
    stage1 += share;
  for (std::int64_t chunk : sequence.chunks) {
    if (chunk < 1)
      throw std::runtime_error("internal error: " + std::string(name) +
                               " granted a chunk of " + std::to_string(chunk));
    dynamic += chunk;
  }
  if (stage1 + dynamic != size)
    throw std::runtime_error("internal error: " + std::string(name) +
                             " granted " + std::to_string(stage1 + dynamic) +
                             " iterations, not I = " + std::to_string(size));

  Result result;
  if (format == Format::Json) {
    OrderedJson head = OrderedJson::object();
    head["algorithm"] = name;
    head["size"] = size;
    head["workers"] = spec.workers;
    if (scheme == fpm::Scheme::Css)
      head["chunk"] = spec.chunk;
    if (spec.alpha)
      head["alpha"] = alphaJson(*spec.alpha);
    std::string out = inlineJson(head);
    out.pop_back();
    if (spec.alpha)
      out += ",\n \"stage1\": " + inlineJson(sequence.stage1);
    out += ",\n \"chunks\": " + inlineJson(sequence.chunks) + "}\n";
    result.output = std::move(out);
    return result;
  }

  std::string out = std::string(name);
  if (scheme == fpm::Scheme::Css)
    out += "(" + std::to_string(spec.chunk) + ")";
  out += ": I = " + std::to_string(size) +
         " iterations, P = " + std::to_string(spec.workers) +
         (spec.workers == 1 ? " worker" : " workers");
  if (spec.alpha)
    out += ", two-stage with alpha = " + formatShort(*spec.alpha) + "%";
  out += '\n';
  if (spec.alpha)
    out += "stage 1: " + std::to_string(stage1) +
           " iterations by weight, per worker: " +
           joinIntegers(sequence.stage1, ", ") + '\n';
  out += "chunks: " + std::to_string(sequence.chunks.size()) + " granting " +
         std::to_string(dynamic) + " iterations\n";
  out += wrapIntegers(sequence.chunks, 78, "  ");
  result.output = std::move(out);
  return result;
}

//===----------------------------------------------------------------------===//
// Help, version, main
//===----------------------------------------------------------------------===//

/// The self-scheduling schemes: the FPM_SELF_SCHEDULE lines of
/// fpm/schedules.def, as the static partitioners are the registry's.
struct SchemeHelp {
  std::string_view name;
  std::string_view summary;
};

constexpr SchemeHelp Schemes[] = {
#define FPM_SELF_SCHEDULE(Name, Scheme, Argument, Summary)                     \
  SchemeHelp{Name, Summary},
#include "fpm/schedules.def"
};

/// "a", "a and b", "a, b and c".
std::string joinNames(const std::vector<std::string_view> &names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += std::string(i == 0                  ? ""
                       : i + 1 == names.size() ? " and "
                                               : ", ") +
           std::string(names[i]);
  return out;
}

/// "N/G is at most 32768 for hpopta and optimal, 1048576 for wdah and
/// wdah-heuristic": the partitioners' granule caps, in registry order.
std::string granuleCaps() {
  std::vector<std::pair<std::int64_t, std::vector<std::string_view>>> caps;
  for (const fpm::Partitioner &partitioner : fpm::partitioners()) {
    if (partitioner.maxUnits <= 0)
      continue;
    auto cap = std::find_if(caps.begin(), caps.end(), [&](const auto &c) {
      return c.first == partitioner.maxUnits;
    });
    if (cap == caps.end())
      cap = caps.insert(caps.end(), {partitioner.maxUnits, {}});
    cap->second.push_back(partitioner.name);
  }
  std::string out;
  for (const auto &[units, names] : caps)
    out += (out.empty() ? "N/G is at most " : ", ") + std::to_string(units) +
           " for " + joinNames(names);
  return out;
}

/// `words` as lines of at most `width` columns, each starting with
/// `indent`.
std::string wrapWords(std::string_view words, std::size_t width,
                      std::string_view indent) {
  std::string out;
  std::string line(indent);
  while (!words.empty()) {
    const std::size_t space = words.find(' ');
    const std::string_view word = words.substr(0, space);
    words = space == std::string_view::npos ? "" : words.substr(space + 1);
    if (line.size() > indent.size() && line.size() + 1 + word.size() > width) {
      out += line + '\n';
      line = indent;
    }
    line += (line.size() > indent.size() ? " " : "") + std::string(word);
  }
  return out + line + '\n';
}

// --help spells the budget's cap out.
static_assert(fpm::MaxBacktrack == 100'000);

std::string helpText() {
  std::string out =
      R"(fpm-partition - split a data-parallel loop over unlike processors

USAGE
  fpm-partition --size N --algorithm ALG [--granularity G] [--backtrack B]
                [--format text|json] PROFILE...
  fpm-partition --size I --algorithm )";
  for (const SchemeHelp &scheme : Schemes)
    out +=
        std::string(&scheme == Schemes ? "" : "|") + std::string(scheme.name);
  out += R"( --workers P [--chunk K]
                [--alpha A --weights W1,...,WP] [--format text|json]
  fpm-partition --help | --version

Static mode splits N work units over processing elements (PEs), one
fpm-profile/1 file per PE, in the order given, and scores the split with the
cost model: a package of w units takes the profile's time at w, or w / s(w)
with the speed s linear between profile points and constant beyond them.
Chunk mode prints the chunk sizes a self-scheduling master grants, in order.

STATIC PARTITIONERS (ALG)
)";
  std::size_t width = 0;
  for (const fpm::Partitioner &partitioner : fpm::partitioners())
    width = std::max(width, partitioner.name.size());
  for (const fpm::Partitioner &partitioner : fpm::partitioners())
    out += "  " + std::string(partitioner.name) +
           std::string(width + 2 - partitioner.name.size(), ' ') +
           std::string(partitioner.summary) + '\n';
  out += "\nSELF-SCHEDULING SCHEMES (ALG)\n";
  for (const SchemeHelp &scheme : Schemes)
    out += "  " + std::string(scheme.name) +
           std::string(width + 2 - std::min(width, scheme.name.size()), ' ') +
           std::string(scheme.summary) + '\n';
  out += R"(
OPTIONS
  --size N            work units (loop iterations) to split, N >= 0
  --algorithm ALG     one of the partitioners or schemes above
  --granularity G     every package is a multiple of G units, except one
                      remainder package when G does not divide N
)";
  out +=
      wrapWords("(default: the smallest size in any profile); " + granuleCaps(),
                76, std::string(22, ' '));
  out +=
      R"(  --backtrack B       backtrack budget of wdah, 1 <= B <= 100000 (default 100)
  --workers P         number of workers, P >= 1 (chunk mode)
  --chunk K           chunk size of css, K >= 1 (default 1)
  --alpha A           two-stage scheme: first ceil(I*A/100) iterations are
                      split by weight, 0 < A <= 100; needs --weights
  --weights W1,...,WP one weight > 0 per worker (with --alpha)
  --format text|json  a table for people (default) or one JSON object
  --help, -h          print this help and exit
  --version           print the version and exit
Options take their value as --opt VALUE or --opt=VALUE; -- ends the options.

EXAMPLES
  fpm-partition --size 4096 --algorithm hpopta examples/profiles/*.json
  fpm-partition --size 4096 --algorithm wdah --granularity 256 --format json \
                examples/profiles/*.json
  fpm-partition --size 1000 --algorithm gss --workers 4
  fpm-partition --size 2048 --algorithm fss --workers 5 --alpha 80 \
                --weights 200,200,233,533,1500

EXIT STATUS
  0 on success; 2 on bad arguments or profiles, with one line on standard
  error naming the problem and nothing on standard output.
)";
  return out;
}

std::string knownAlgorithms() {
  std::string out;
  for (const fpm::Partitioner &partitioner : fpm::partitioners())
    out += (out.empty() ? "" : ", ") + std::string(partitioner.name);
  for (const SchemeHelp &scheme : Schemes)
    out += ", " + std::string(scheme.name);
  return out;
}

Result run(std::span<const std::string_view> args) {
  // --help and --version win over everything else on the line.
  for (std::string_view arg : args) {
    if (arg == "--")
      break;
    if (arg == "--help" || arg == "-h")
      return {helpText(), {}};
    if (arg == "--version")
      return {std::string(ToolName) + " (fpm) " FPM_VERSION_STRING "\n", {}};
  }

  CommandLine line = splitCommandLine(args);
  const std::string *algorithm = line.value("--algorithm");
  if (!algorithm)
    throw UsageError("missing --algorithm ALG (see --help)");
  const std::string *sizeText = line.value("--size");
  if (!sizeText)
    throw UsageError("missing --size N (see --help)");
  std::int64_t size = parseInteger("--size", *sizeText);

  if (const fpm::Partitioner *partitioner = fpm::findPartitioner(*algorithm))
    return runStatic(line, *partitioner, size);
  if (std::optional<fpm::Scheme> scheme = fpm::parseScheme(*algorithm))
    return runSchedule(line, *scheme, *algorithm, size);
  throw UsageError("unknown algorithm '" + *algorithm +
                   "' (known: " + knownAlgorithms() + ")");
}

int fail(const std::string &message) {
  return fpm::tools::reportError(ToolName, message, ExitError);
}

} // namespace

int main(int argc, char **argv) {
  Result result;
  try {
    std::vector<std::string_view> args(argv + 1, argv + argc);
    result = run(args);
  } catch (const std::bad_alloc &) {
    return fail("out of memory");
  } catch (const std::exception &error) {
    return fail(error.what());
  } catch (...) {
    return fail("unknown error");
  }
  fpm::tools::reportWarnings(ToolName, result.warnings);
  if (!fpm::tools::writeOutput(result.output))
    return fail("cannot write to standard output");
  return 0;
}
