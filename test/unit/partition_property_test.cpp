//===- partition_property_test.cpp - Every partitioner on every FPM family ===//
//
// The synthetic FPM families (test/support) and the properties every
// registered partitioner must have on them: a valid distribution, and a
// makespan no better than optimal's, since optimal is exact.

#include "partition/partition.hpp"
#include "support/fpm_families.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

using namespace fpm;
using fpm::test::AllFamilies;
using fpm::test::Family;
using fpm::test::familyName;
using fpm::test::makeFamily;

namespace {

std::vector<double> speedsOf(const Profile &profile) {
  std::vector<double> speeds;
  for (const ProfilePoint &point : profile.points)
    speeds.push_back(point.speed());
  return speeds;
}

bool sameProfiles(const std::vector<Profile> &a, const std::vector<Profile> &b,
                  std::size_t count) {
  for (std::size_t pe = 0; pe < count; ++pe) {
    if (a[pe].device != b[pe].device ||
        a[pe].points.size() != b[pe].points.size())
      return false;
    for (std::size_t i = 0; i < a[pe].points.size(); ++i)
      if (a[pe].points[i].size != b[pe].points[i].size ||
          a[pe].points[i].time != b[pe].points[i].time)
        return false;
  }
  return true;
}

} // namespace

TEST(FpmFamilies, ProfilesAreValidAndDeterministic) {
  struct Shape {
    std::int64_t maxSize, granularity;
    int points;
  };
  // One point only, maxSize off the grid, fewer points than granules, and
  // more points asked for than there are granules.
  const Shape shapes[] = {
      {4, 4, 0}, {30, 4, 0}, {1000, 1, 0}, {640, 10, 16}, {12, 3, 100}};
  for (Family family : AllFamilies)
    for (const Shape &shape : shapes)
      for (std::uint64_t seed : {0, 1, 2}) {
        SCOPED_TRACE(std::string(familyName(family)) + " maxSize " +
                     std::to_string(shape.maxSize) + " G " +
                     std::to_string(shape.granularity) + " seed " +
                     std::to_string(seed));
        auto profiles = makeFamily(family, 8, shape.maxSize, shape.granularity,
                                   seed, shape.points);
        ASSERT_EQ(profiles.size(), 8u);
        std::int64_t granules = shape.maxSize / shape.granularity;
        std::int64_t expected =
            std::min<std::int64_t>(granules, shape.points ? shape.points : 64);
        for (const Profile &profile : profiles) {
          EXPECT_EQ(validate(profile), "");
          EXPECT_EQ(std::ssize(profile.points), expected);
          if (family != Family::FullyRandom)
            EXPECT_EQ(profile.smallestSize(), shape.granularity);
          EXPECT_LE(profile.largestSize(), shape.maxSize);
          for (const ProfilePoint &point : profile.points)
            EXPECT_EQ(point.size % shape.granularity, 0);
        }
        // A seed names its profiles; the first PEs of a larger p are the PEs
        // of a smaller one.
        auto again = makeFamily(family, 3, shape.maxSize, shape.granularity,
                                seed, shape.points);
        EXPECT_TRUE(sameProfiles(profiles, again, 3));
        auto other = makeFamily(family, 8, shape.maxSize, shape.granularity,
                                seed + 10, shape.points);
        EXPECT_FALSE(sameProfiles(profiles, other, 8));
      }
  EXPECT_THROW(makeFamily(Family::Smooth, 0, 8, 1, 0), std::invalid_argument);
  EXPECT_THROW(makeFamily(Family::Smooth, 2, 3, 4, 0), std::invalid_argument);
  EXPECT_THROW(makeFamily(Family::Smooth, 2, 8, 0, 0), std::invalid_argument);
  EXPECT_THROW(makeFamily(Family::Smooth, 2, 8, 1, 0, -1),
               std::invalid_argument);
  EXPECT_EQ(fpm::test::parseFamily("semi-random"), Family::SemiRandom);
  EXPECT_EQ(fpm::test::parseFamily("chaotic"), std::nullopt);
}

TEST(FpmFamilies, ShapesFollowTheThesis) {
  bool realDrops = true, randomGrids = false;
  double widestSpread = 1;
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    // Smooth: speeds never fall, and one PE is at most 10x another at peak.
    auto smooth = makeFamily(Family::Smooth, 8, 256, 4, seed);
    double fastest = 0, slowest = INFINITY;
    for (const Profile &profile : smooth) {
      auto speeds = speedsOf(profile);
      EXPECT_TRUE(std::is_sorted(speeds.begin(), speeds.end()));
      fastest = std::max(fastest, speeds.back());
      slowest = std::min(slowest, speeds.back());
    }
    EXPECT_LE(fastest / slowest, 10.0);
    widestSpread = std::max(widestSpread, fastest / slowest);

    // Real: somewhere a speed falls abruptly from one point to the next.
    bool drop = false;
    for (const Profile &profile : makeFamily(Family::Real, 4, 256, 4, seed)) {
      auto speeds = speedsOf(profile);
      for (std::size_t i = 1; i < speeds.size(); ++i)
        drop = drop || speeds[i] < 0.85 * speeds[i - 1];
    }
    realDrops = realDrops && drop;

    // Semi-random (3.4): a climb from the smallest size to a peak further on.
    for (const Profile &profile :
         makeFamily(Family::SemiRandom, 8, 256, 4, seed)) {
      auto speeds = speedsOf(profile);
      auto peak = std::max_element(speeds.begin(), speeds.end());
      EXPECT_NE(peak, speeds.begin());
      EXPECT_LT(speeds.front(), 0.6 * *peak);
    }

    auto random = makeFamily(Family::FullyRandom, 2, 256, 4, seed, 16);
    randomGrids =
        randomGrids || random[0].points[0].size != random[1].points[0].size;
  }
  EXPECT_TRUE(realDrops);
  EXPECT_GT(widestSpread, 4.0);
  EXPECT_TRUE(randomGrids);
}

namespace {

/// A relative slack for rounding: nothing may beat optimal by more.
constexpr double Tolerance = 1e-9;

/// Collects failures per partitioner and reports the first few of each, so a
/// broken algorithm gives one readable failure, not hundreds.
class Failures {
public:
  void add(std::string_view algorithm, std::string message) {
    Entry &entry = entries_[std::string(algorithm)];
    if (++entry.count <= 5)
      entry.examples += "\n  " + message;
  }
  void report() const {
    for (const auto &[algorithm, entry] : entries_)
      ADD_FAILURE() << algorithm << ": " << entry.count
                    << " failing cases, first ones:" << entry.examples;
  }

private:
  struct Entry {
    int count = 0;
    std::string examples;
  };
  std::map<std::string, Entry> entries_;
};

std::string formatPackages(const Distribution &distribution) {
  std::ostringstream out;
  for (std::size_t pe = 0; pe < distribution.packages.size(); ++pe) {
    out << (pe ? " | " : "");
    for (std::size_t i = 0; i < distribution.packages[pe].size(); ++i)
      out << (i ? "," : "") << distribution.packages[pe][i];
  }
  return out.str();
}

class EveryPartitioner : public ::testing::TestWithParam<Family> {};

} // namespace

// So that GoogleTest (and CTest's test names) print a family by name.
namespace fpm::test {
void PrintTo(Family family, std::ostream *out) { *out << familyName(family); }
} // namespace fpm::test

TEST_P(EveryPartitioner, IsValidAndNeverBeatsOptimal) {
  const Family family = GetParam();
  const Partitioner *optimal = findPartitioner("optimal");
  const Partitioner *hpopta = findPartitioner("hpopta");
  ASSERT_NE(optimal, nullptr);
  ASSERT_NE(hpopta, nullptr);

  // Profiles of 64 granules, with N = 0, N = 1, N < G, N = G, N off the
  // grid, N inside the profiles and N far beyond them; then profiles of 400
  // granules that reach N and further.
  struct Grid {
    std::int64_t granularity, maxSize;
    int points; ///< 0: every granule
    std::vector<std::int64_t> sizes;
  };
  const Grid grids[] = {{1, 64, 0, {0, 1, 2, 17, 64, 333, 2000}},
                        {4, 256, 0, {1, 3, 4, 30, 101, 256, 1002, 4000}},
                        {4, 256, 24, {7, 64, 255, 1001}},
                        {3, 1200, 48, {2, 299, 1199, 1200, 1201}}};
  Failures failures;
  for (const Grid &grid : grids)
    for (int p : {1, 2, 3, 5, 8})
      for (std::uint64_t seed : {1, 2, 3, 4}) {
        CostModel model(makeFamily(family, p, grid.maxSize, grid.granularity,
                                   seed, grid.points));
        for (std::int64_t size : grid.sizes) {
          PartitionRequest request{size, grid.granularity, 100};
          std::ostringstream where;
          where << familyName(family) << " p=" << p << " G=" << grid.granularity
                << " seed=" << seed << " N=" << size << " (profiles up to "
                << grid.maxSize << ", points " << grid.points << ")";

          std::map<std::string_view, double> makespans;
          for (const Partitioner &partitioner : partitioners()) {
            std::string name(partitioner.name);
            Distribution distribution;
            try {
              distribution = partition(partitioner, model, request);
            } catch (const std::exception &error) {
              failures.add(name, where.str() + ": threw " + error.what());
              continue;
            }
            std::string problem =
                checkDistribution(distribution, request, model.size());
            if (problem.empty() && partitioner.singleShare)
              for (const auto &packages : distribution.packages)
                if (packages.size() > 1)
                  problem = "a single-share partitioner gave one PE " +
                            std::to_string(packages.size()) + " packages";
            if (!problem.empty()) {
              failures.add(name, where.str() + ": " + problem + " [" +
                                     formatPackages(distribution) + "]");
              continue;
            }
            makespans[partitioner.name] =
                evaluate(model, distribution).makespan;
          }

          auto best = makespans.find(optimal->name);
          if (best == makespans.end())
            continue; // optimal's own failure is already recorded
          for (const auto &[name, makespan] : makespans)
            if (makespan < best->second * (1 - Tolerance)) {
              std::ostringstream message;
              message.precision(17);
              message << where.str() << ": makespan " << makespan
                      << " beats optimal's " << best->second;
              failures.add(name, message.str());
            }
          // hpopta is exact over one package per PE; with no remainder every
          // single-share partitioner plays in that set.
          auto exact = makespans.find(hpopta->name);
          if (request.remainder() != 0 || exact == makespans.end())
            continue;
          for (const Partitioner &partitioner : partitioners()) {
            auto other = makespans.find(partitioner.name);
            if (partitioner.singleShare && other != makespans.end() &&
                other->second < exact->second * (1 - Tolerance)) {
              std::ostringstream message;
              message.precision(17);
              message << where.str() << ": " << partitioner.name
                      << "'s makespan " << other->second << " beats hpopta's "
                      << exact->second;
              failures.add(hpopta->name, message.str());
            }
          }
        }
      }
  failures.report();
}

INSTANTIATE_TEST_SUITE_P(PartitionProperty, EveryPartitioner,
                         ::testing::ValuesIn(AllFamilies),
                         [](const ::testing::TestParamInfo<Family> &info) {
                           std::string name(familyName(info.param));
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });
