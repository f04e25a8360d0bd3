//===- benchmark/partitioners.cpp - Every partitioner on every FPM family -===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Scores every registered partitioner on the synthetic FPM families of
// the WDAH thesis, 5.2.3, as 5.2.3 and 5.2.4 do: the makespan of its
// distribution over optimal's (both under the one cost model), and its solve
// time. Prints markdown tables (or one JSON object with --json); progress goes
// to stderr.
//
//   fpm-bench-partitioners [--quick] [--json] [--seeds K] [--family NAME]...
//   fpm-bench-partitioners --show FAMILY,P,N,SEED[,PROFILE_MAX]
//
// --show prints every algorithm's distribution for one case, to look into a
// number from the tables or an anomaly.
//
//===----------------------------------------------------------------------===//

#include "partition/partition.hpp"
#include "support/fpm_families.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <typeinfo>
#include <vector>

using namespace fpm;
using fpm::test::Family;

namespace {

using Clock = std::chrono::steady_clock;

/// A relative slack for rounding when asking whether optimal was beaten.
constexpr double Tolerance = 1e-9;

struct Config {
  std::vector<Family> families{fpm::test::AllFamilies.begin(),
                               fpm::test::AllFamilies.end()};
  std::vector<int> processors{2, 4, 8};
  std::vector<std::int64_t> granules{16, 256, 1024, 4096}; ///< N / G
  /// How far the profiles reach, in granules; 0 is "up to N". HPOPTA and the
  /// partitioners of the multidimensional-solvers paper want an FPM over the
  /// whole range; WDAH is built for FPMs of small packages only (the WDAH
  /// thesis, 4.2 and 6.1), beyond which the cost model holds the last speed.
  std::vector<std::int64_t> coverages{0, 64};
  std::int64_t granularity = 4;
  int seeds = 10;
  /// At most this many points per profile, as a profiler samples a range.
  int points = 128;
  /// Fast solves are repeated until a batch takes this long, so that the
  /// clock's resolution does not show; the fastest of a few batches is
  /// kept, so that a preempted batch does not either.
  std::chrono::microseconds minBatch{200};
  int batches = 3;
  bool json = false;
  /// --show's case: family, p, N, seed, profile reach (units).
  struct Show {
    Family family;
    int p;
    std::int64_t size;
    std::uint64_t seed;
    std::int64_t maxSize;
  };
  std::optional<Show> show;
};

/// What one algorithm did on one family (over p, N and seeds).
struct Cell {
  std::vector<double> ratios; ///< makespan / optimal's, where both ran
  std::vector<double> micros; ///< solve times
  int cases = 0;
  int unavailable = 0; ///< not implemented yet (a bare std::logic_error)
  int errors = 0;      ///< any other exception
  int invalid = 0;     ///< checkDistribution found a problem
  int beatOptimal = 0; ///< a bug somewhere: optimal is exact
  double worstRatio = 0;
  std::string worstCase; ///< --show's argument for the worst ratio
};

/// Linear interpolation between order statistics (R's type 7).
double quantile(std::vector<double> values, double q) {
  if (values.empty())
    return NAN;
  std::sort(values.begin(), values.end());
  double rank = q * static_cast<double>(values.size() - 1);
  auto below = static_cast<std::size_t>(std::floor(rank));
  std::size_t above = std::min(below + 1, values.size() - 1);
  return values[below] +
         (values[above] - values[below]) * (rank - static_cast<double>(below));
}

double maximum(const std::vector<double> &values) {
  return values.empty() ? NAN : *std::max_element(values.begin(), values.end());
}

std::string fixed(double value, int decimals) {
  if (std::isnan(value))
    return "n/a";
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

/// Three significant digits or so, for times from 0.1 us to seconds.
std::string micros(double value) {
  if (std::isnan(value))
    return "n/a";
  return fixed(value, value < 10 ? 2 : value < 100 ? 1 : 0);
}

std::string coverageTitle(std::int64_t coverage) {
  return coverage == 0 ? "profiles span G..N"
                       : "profiles stop at " + std::to_string(coverage) + " G";
}

/// Per-call time of `solve` in microseconds (see Config::minBatch).
template <typename Solve>
double timeMicros(Solve &&solve, const Config &config) {
  double best = INFINITY;
  Clock::duration total{};
  for (int batch = 0; batch < config.batches; ++batch) {
    int reps = 0;
    Clock::time_point start = Clock::now();
    Clock::duration elapsed;
    do {
      solve();
      ++reps;
      elapsed = Clock::now() - start;
    } while (elapsed < config.minBatch && reps < 100000);
    best = std::min(best,
                    std::chrono::duration<double, std::micro>(elapsed).count() /
                        reps);
    // Past 20 ms a case, preemption is a small part of a run; repeating it
    // would only slow the benchmark.
    if ((total += elapsed) > std::chrono::milliseconds(20))
      break;
  }
  return best;
}

/// What came of one call: a distribution, or why not.
struct Outcome {
  std::optional<Distribution> distribution;
  bool unavailable = false;
  std::string error;
};

/// Runs one partitioner. A bare std::logic_error is the stub of an algorithm
/// not written yet, reported as n/a rather than as an error.
template <typename Solve> Outcome attempt(Solve &&solve) {
  Outcome outcome;
  try {
    outcome.distribution = solve();
  } catch (const std::exception &error) {
    if (typeid(error) == typeid(std::logic_error))
      outcome.unavailable = true;
    else
      outcome.error = error.what();
  }
  return outcome;
}

[[noreturn]] void usage(const std::string &problem) {
  if (!problem.empty())
    std::cerr << "fpm-bench-partitioners: " << problem << "\n";
  (problem.empty() ? std::cout : std::cerr)
      << "usage: fpm-bench-partitioners [--quick] [--json] [--seeds K] "
         "[--family NAME]...\n"
         "       fpm-bench-partitioners --show FAMILY,P,N,SEED[,PROFILE_MAX]\n";
  std::exit(problem.empty() ? 0 : 2);
}

template <typename Int> Int parseInt(std::string_view text, Int least) {
  Int value{};
  auto [end, error] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < least)
    usage("expected an integer >= " + std::to_string(least) + ", got '" +
          std::string(text) + "'");
  return value;
}

Family parseFamilyOrFail(std::string_view name) {
  auto family = fpm::test::parseFamily(name);
  if (!family)
    usage("unknown family '" + std::string(name) +
          "' (smooth, real, semi-random, fully-random)");
  return *family;
}

Config::Show parseShow(std::string_view text) {
  std::vector<std::string_view> fields;
  for (std::size_t start = 0;;) {
    std::size_t comma = text.find(',', start);
    fields.push_back(text.substr(start, comma - start));
    if (comma == std::string_view::npos)
      break;
    start = comma + 1;
  }
  if (fields.size() != 4 && fields.size() != 5)
    usage("--show needs FAMILY,P,N,SEED[,PROFILE_MAX]");
  Config::Show show{parseFamilyOrFail(fields[0]), parseInt<int>(fields[1], 1),
                    parseInt<std::int64_t>(fields[2], 1),
                    parseInt<std::uint64_t>(fields[3], 0), 0};
  show.maxSize =
      fields.size() == 5 ? parseInt<std::int64_t>(fields[4], 1) : show.size;
  return show;
}

Config parseArguments(int argc, char **argv) {
  Config config;
  std::vector<Family> families;
  int seeds = 0;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    auto value = [&]() -> std::string_view {
      if (i + 1 >= argc)
        usage(std::string(arg) + " needs a value");
      return argv[++i];
    };
    if (arg == "--quick") {
      config.granules = {16, 256, 1024};
      config.seeds = 3;
      config.minBatch = std::chrono::microseconds(50);
    } else if (arg == "--json") {
      config.json = true;
    } else if (arg == "--seeds") {
      seeds = parseInt<int>(value(), 1);
    } else if (arg == "--family") {
      families.push_back(parseFamilyOrFail(value()));
    } else if (arg == "--show") {
      config.show = parseShow(value());
    } else if (arg == "--help" || arg == "-h") {
      usage("");
    } else {
      usage("unknown argument '" + std::string(arg) + "'");
    }
  }
  // --seeds and --family win over --quick wherever they stand.
  if (seeds)
    config.seeds = seeds;
  if (!families.empty())
    config.families = families;
  return config;
}

/// "p0: 3x64, 32 | p1: 128": each PE's packages, runs of one size folded.
std::string formatPackages(const Distribution &distribution) {
  std::ostringstream out;
  for (std::size_t pe = 0; pe < distribution.packages.size(); ++pe) {
    out << (pe ? " | " : "") << "p" << pe << ":";
    const auto &packages = distribution.packages[pe];
    for (std::size_t i = 0; i < packages.size();) {
      std::size_t j = i;
      while (j < packages.size() && packages[j] == packages[i])
        ++j;
      out << (i ? ", " : " ");
      if (j - i > 1)
        out << j - i << "x";
      out << packages[i];
      i = j;
    }
    if (packages.empty())
      out << " -";
  }
  return out.str();
}

/// --show: one case in full.
int showCase(const Config &config) {
  const Config::Show &show = *config.show;
  const std::int64_t g = config.granularity;
  if (show.maxSize < g)
    usage("PROFILE_MAX must be at least G = " + std::to_string(g));
  CostModel model(fpm::test::makeFamily(show.family, show.p, show.maxSize, g,
                                        show.seed, config.points));
  PartitionRequest request{show.size, g, 100};
  std::cout << fpm::test::familyName(show.family) << " p=" << show.p
            << " N=" << show.size << " G=" << g << " seed=" << show.seed
            << ", profiles up to " << show.maxSize << "\n\n";
  for (std::size_t pe = 0; pe < model.size(); ++pe) {
    const auto &points = model.profile(pe).points;
    auto peak = std::max_element(
        points.begin(), points.end(),
        [](const auto &a, const auto &b) { return a.speed() < b.speed(); });
    std::printf("p%zu: %zu points, peak speed %.4g units/s at size %lld, "
                "%.4g at the smallest, %.4g at the largest\n",
                pe, points.size(), peak->speed(),
                static_cast<long long>(peak->size), points.front().speed(),
                points.back().speed());
  }
  std::cout << "\n";

  std::optional<double> best;
  if (const Partitioner *optimal = findPartitioner("optimal"))
    if (Outcome outcome =
            attempt([&] { return partition(*optimal, model, request); });
        outcome.distribution)
      best = evaluate(model, *outcome.distribution).makespan;
  for (const Partitioner &partitioner : partitioners()) {
    Outcome outcome =
        attempt([&] { return partition(partitioner, model, request); });
    std::printf("%-15s ", std::string(partitioner.name).c_str());
    if (!outcome.distribution) {
      std::cout << (outcome.unavailable ? "n/a" : "error: " + outcome.error)
                << "\n";
      continue;
    }
    Evaluation evaluation = evaluate(model, *outcome.distribution);
    std::printf("makespan %.6g", evaluation.makespan);
    if (best)
      std::printf(" (x%.4f)", evaluation.makespan / *best);
    std::string problem =
        checkDistribution(*outcome.distribution, request, model.size());
    std::cout << (problem.empty() ? "" : " INVALID: " + problem) << "\n    "
              << formatPackages(*outcome.distribution) << "\n    times:";
    for (double time : evaluation.times)
      std::printf(" %.4g", time);
    std::cout << "\n";
  }
  return 0;
}

class Benchmark {
public:
  explicit Benchmark(Config config)
      : config_(std::move(config)), algorithms_(partitioners()),
        cells_(config_.coverages.size(),
               std::vector<std::vector<Cell>>(
                   config_.families.size(),
                   std::vector<Cell>(algorithms_.size()))),
        bySize_(config_.coverages.size(),
                std::vector<std::vector<std::vector<double>>>(
                    algorithms_.size(), std::vector<std::vector<double>>(
                                            config_.granules.size()))) {
    for (std::size_t a = 0; a < algorithms_.size(); ++a)
      if (algorithms_[a].name == "optimal")
        optimal_ = a;
  }

  void run() {
    std::size_t groups = config_.coverages.size() * config_.families.size() *
                         config_.processors.size() * config_.granules.size();
    std::size_t group = 0;
    for (std::size_t c = 0; c < config_.coverages.size(); ++c)
      for (std::size_t f = 0; f < config_.families.size(); ++f)
        for (int p : config_.processors)
          for (std::size_t s = 0; s < config_.granules.size(); ++s) {
            Clock::time_point start = Clock::now();
            for (int seed = 1; seed <= config_.seeds; ++seed)
              runCase({c, f, p, s, static_cast<std::uint64_t>(seed)});
            std::fprintf(
                stderr, "[%zu/%zu] %s, %s p=%d N/G=%lld: %.2f s\n", ++group,
                groups, coverageTitle(config_.coverages[c]).c_str(),
                std::string(familyName(config_.families[f])).c_str(), p,
                static_cast<long long>(config_.granules[s]),
                std::chrono::duration<double>(Clock::now() - start).count());
          }
  }

  bool json() const { return config_.json; }
  void printMarkdown() const;
  void printJson() const;

private:
  /// One case: indices into the config, and the seed.
  struct Case {
    std::size_t coverage, family;
    int p;
    std::size_t size;
    std::uint64_t seed;
  };

  static std::string_view familyName(Family family) {
    return fpm::test::familyName(family);
  }

  std::int64_t profileReach(const Case &at) const {
    const std::int64_t size = config_.granules[at.size] * config_.granularity;
    const std::int64_t coverage = config_.coverages[at.coverage];
    return coverage == 0 ? size
                         : std::min(size, coverage * config_.granularity);
  }

  void runCase(const Case &at) {
    const std::int64_t g = config_.granularity;
    const std::int64_t size = config_.granules[at.size] * g;
    CostModel model(fpm::test::makeFamily(config_.families[at.family], at.p,
                                          profileReach(at), g, at.seed,
                                          config_.points));
    PartitionRequest request{size, g, 100};
    std::vector<Cell> &cells = cells_[at.coverage][at.family];

    std::vector<double> makespans(algorithms_.size(), NAN);
    for (std::size_t a = 0; a < algorithms_.size(); ++a) {
      Cell &cell = cells[a];
      ++cell.cases;
      double time = NAN;
      Outcome outcome = attempt([&] {
        Distribution distribution;
        time = timeMicros(
            [&] { distribution = partition(algorithms_[a], model, request); },
            config_);
        return distribution;
      });
      if (outcome.unavailable) {
        ++cell.unavailable;
        continue;
      }
      if (!outcome.distribution) {
        ++cell.errors;
        note(at, a, "threw: " + outcome.error);
        continue;
      }
      cell.micros.push_back(time);
      bySize_[at.coverage][a][at.size].push_back(time);
      if (std::string problem =
              checkDistribution(*outcome.distribution, request, model.size());
          !problem.empty()) {
        ++cell.invalid;
        note(at, a, "invalid distribution: " + problem);
        continue;
      }
      makespans[a] = evaluate(model, *outcome.distribution).makespan;
    }

    if (!optimal_ || std::isnan(makespans[*optimal_]))
      return;
    const double best = makespans[*optimal_];
    for (std::size_t a = 0; a < algorithms_.size(); ++a) {
      if (std::isnan(makespans[a]))
        continue;
      const double ratio = makespans[a] / best;
      cells[a].ratios.push_back(ratio);
      if (ratio > cells[a].worstRatio) {
        cells[a].worstRatio = ratio;
        cells[a].worstCase = showArgument(at);
      }
      if (makespans[a] < best * (1 - Tolerance)) {
        ++cells[a].beatOptimal;
        std::ostringstream message;
        message.precision(17);
        message << "makespan " << makespans[a] << " beats optimal's " << best;
        note(at, a, message.str());
      }
    }
  }

  /// Keeps the first anomalies, each with the --show argument that
  /// rebuilds it.
  void note(const Case &at, std::size_t a, const std::string &what) {
    if (notes_.size() >= 20) {
      ++notesLeftOut_;
      return;
    }
    notes_.push_back(std::string(algorithms_[a].name) + " on --show " +
                     showArgument(at) + ": " + what);
  }

  /// FAMILY,P,N,SEED,PROFILE_MAX: what --show needs to rebuild a case.
  std::string showArgument(const Case &at) const {
    std::ostringstream out;
    out << familyName(config_.families[at.family]) << "," << at.p << ","
        << config_.granules[at.size] * config_.granularity << "," << at.seed
        << "," << profileReach(at);
    return out.str();
  }

  static std::string remarks(const Cell &cell) {
    if (cell.cases > 0 && cell.unavailable == cell.cases)
      return "not implemented";
    std::vector<std::string> parts;
    if (cell.unavailable)
      parts.push_back(std::to_string(cell.unavailable) + " n/a");
    if (cell.errors)
      parts.push_back(std::to_string(cell.errors) + " errors");
    if (cell.invalid)
      parts.push_back(std::to_string(cell.invalid) + " invalid");
    if (cell.beatOptimal)
      parts.push_back(std::to_string(cell.beatOptimal) + " beat optimal");
    std::string out;
    for (const std::string &part : parts)
      out += (out.empty() ? "" : ", ") + part;
    return out;
  }

  Config config_;
  std::span<const Partitioner> algorithms_;
  std::optional<std::size_t> optimal_;
  std::vector<std::vector<std::vector<Cell>>> cells_; ///< [cov][fam][alg]
  /// Solve times by [coverage][algorithm][N/G], over families, p and seeds.
  std::vector<std::vector<std::vector<std::vector<double>>>> bySize_;
  std::vector<std::string> notes_;
  int notesLeftOut_ = 0;
};

void Benchmark::printMarkdown() const {
  auto join = [](const auto &values) {
    std::string out;
    for (const auto &value : values)
      out += (out.empty() ? "" : ", ") + std::to_string(value);
    return out;
  };
  std::cout << "## Partitioners on synthetic FPM families\n\n"
            << "p = " << join(config_.processors)
            << "; N/G = " << join(config_.granules)
            << "; G = " << config_.granularity << "; seeds 1.." << config_.seeds
            << ": "
            << config_.processors.size() * config_.granules.size() *
                   static_cast<std::size_t>(config_.seeds)
            << " cases per family and algorithm; at most " << config_.points
            << " points per profile; WDAH's backtrack budget B = 100. "
#ifdef NDEBUG
            << "Optimised build"
#else
            << "Build with assertions"
#endif
            << ", " << std::thread::hardware_concurrency()
            << " hardware threads, one used. Ratio: makespan over optimal's "
               "(1 is optimal); solve time: the fastest of a few batches of "
               "calls, per call.\n";

  for (std::size_t c = 0; c < config_.coverages.size(); ++c) {
    std::cout << "\n### " << coverageTitle(config_.coverages[c]) << "\n\n"
              << "| family | algorithm | ratio, median | p90 | max | solve "
                 "us, median | max | notes |\n"
              << "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |\n";
    for (std::size_t f = 0; f < config_.families.size(); ++f)
      for (std::size_t a = 0; a < algorithms_.size(); ++a) {
        const Cell &cell = cells_[c][f][a];
        std::cout << "| " << familyName(config_.families[f]) << " | "
                  << algorithms_[a].name << " | "
                  << fixed(quantile(cell.ratios, 0.5), 4) << " | "
                  << fixed(quantile(cell.ratios, 0.9), 4) << " | "
                  << fixed(maximum(cell.ratios), 4) << " | "
                  << micros(quantile(cell.micros, 0.5)) << " | "
                  << micros(maximum(cell.micros)) << " | " << remarks(cell)
                  << " |\n";
      }

    std::cout << "\nSolve time (us, median over families, p and seeds) by "
                 "N/G, "
              << coverageTitle(config_.coverages[c]) << ":\n\n| algorithm |";
    for (std::int64_t granules : config_.granules)
      std::cout << " " << granules << " |";
    std::cout << "\n| --- |";
    for (std::size_t s = 0; s < config_.granules.size(); ++s)
      std::cout << " ---: |";
    std::cout << "\n";
    for (std::size_t a = 0; a < algorithms_.size(); ++a) {
      std::cout << "| " << algorithms_[a].name << " |";
      for (std::size_t s = 0; s < config_.granules.size(); ++s)
        std::cout << " " << micros(quantile(bySize_[c][a][s], 0.5)) << " |";
      std::cout << "\n";
    }
  }

  if (!notes_.empty()) {
    std::cout << "\nAnomalies (bugs somewhere):\n\n";
    for (const std::string &note : notes_)
      std::cout << "- " << note << "\n";
    if (notesLeftOut_)
      std::cout << "- ... and " << notesLeftOut_ << " more\n";
  }
}

void Benchmark::printJson() const {
  using Json = nlohmann::json;
  // NaN (nothing measured) becomes null.
  auto number = [](double value) -> Json {
    return std::isnan(value) ? Json(nullptr) : Json(value);
  };
  Json results = Json::array();
  Json bySize = Json::array();
  for (std::size_t c = 0; c < config_.coverages.size(); ++c) {
    for (std::size_t f = 0; f < config_.families.size(); ++f)
      for (std::size_t a = 0; a < algorithms_.size(); ++a) {
        const Cell &cell = cells_[c][f][a];
        results.push_back({{"coverage", config_.coverages[c]},
                           {"family", familyName(config_.families[f])},
                           {"algorithm", algorithms_[a].name},
                           {"cases", cell.cases},
                           {"ratio",
                            {{"median", number(quantile(cell.ratios, 0.5))},
                             {"p90", number(quantile(cell.ratios, 0.9))},
                             {"max", number(maximum(cell.ratios))}}},
                           {"solve_us",
                            {{"median", number(quantile(cell.micros, 0.5))},
                             {"max", number(maximum(cell.micros))}}},
                           {"unavailable", cell.unavailable},
                           {"errors", cell.errors},
                           {"invalid", cell.invalid},
                           {"beat_optimal", cell.beatOptimal},
                           {"worst_case", cell.worstCase}});
      }
    for (std::size_t a = 0; a < algorithms_.size(); ++a)
      for (std::size_t s = 0; s < config_.granules.size(); ++s)
        bySize.push_back(
            {{"coverage", config_.coverages[c]},
             {"algorithm", algorithms_[a].name},
             {"granules", config_.granules[s]},
             {"solve_us_median", number(quantile(bySize_[c][a][s], 0.5))}});
  }
  Json families = Json::array();
  for (Family family : config_.families)
    families.push_back(familyName(family));
  // "coverage": how far the profiles reach, in granules; 0 is up to N.
  Json out = {{"config",
               {{"families", families},
                {"processors", config_.processors},
                {"granules", config_.granules},
                {"coverages", config_.coverages},
                {"granularity", config_.granularity},
                {"seeds", config_.seeds},
                {"points", config_.points},
                {"backtrack", 100}}},
              {"results", results},
              {"solve_us_by_size", bySize},
              {"anomalies", notes_}};
  std::cout << out.dump(2) << "\n";
}

} // namespace

int main(int argc, char **argv) {
  Config config = parseArguments(argc, argv);
  if (config.show)
    return showCase(config);
  Benchmark benchmark(std::move(config));
  benchmark.run();
  if (benchmark.json())
    benchmark.printJson();
  else
    benchmark.printMarkdown();
  return 0;
}
