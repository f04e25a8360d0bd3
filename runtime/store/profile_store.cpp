//===- store/profile_store.cpp - Profiles kept across runs ----------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "store/profile_store.hpp"
#include "support/environment.hpp"
#include "support/hash.hpp"
#include "support/text.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <limits>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <sys/file.h>
#include <system_error>
#include <thread>
#include <unistd.h>
#include <utility>

namespace fpm {
namespace {

namespace fs = std::filesystem;

/// Holds a T that is never destroyed. The runtime merges its profiles at
/// exit, possibly from a static destructor that runs after ours would
/// have; process-wide state must therefore outlive every destructor.
template <typename T> union Immortal {
  Immortal() : value() {}
  ~Immortal() {}
  T value;
};

/// The keys reported in this process.
struct Reported {
  std::mutex mutex;
  std::set<std::string> keys;
};
Reported &reported() {
  static Immortal<Reported> all;
  return all.value;
}

/// Tells whether `key` is reported for the first time in this process.
bool firstReport(const std::string &key) {
  Reported &all = reported();
  std::lock_guard lock(all.mutex);
  return all.keys.insert(key).second;
}

/// Tells whether `key` was reported in this process.
bool wasReported(const std::string &key) {
  Reported &all = reported();
  std::lock_guard lock(all.mutex);
  return all.keys.contains(key);
}

/// Writes "fpm: MESSAGE" once per `key`, in one call so that the line of
/// one thread is not interleaved with another's.
void reportOnce(const std::string &key, const std::string &message) {
  if (firstReport(key))
    std::fprintf(stderr, "fpm: %s\n", message.c_str());
}

/// The mutex of one profile file, the same for every ProfileStore of the
/// process. flock(2) alone excludes two threads that open the lock file
/// separately, but on NFS Linux emulates flock with fcntl locks, which
/// belong to the process and so do not exclude its threads.
std::mutex &fileMutex(const fs::path &file) {
  struct Mutexes {
    std::mutex mutex;
    std::map<std::string, std::mutex> byFile; // node-based: stable mutexes
  };
  static Immortal<Mutexes> mutexes;
  std::lock_guard lock(mutexes.value.mutex);
  return mutexes.value.byFile.try_emplace(file.string()).first->second;
}

/// How long a merge waits for another process's lock on a profile:
/// FPM_PROFILE_LOCK_WAIT seconds, 5 by default. Profiles are a cache, so a
/// holder that is stopped or hung costs a run its merge, never its end.
std::chrono::milliseconds lockWait() {
  constexpr long DefaultSeconds = 5;
  return std::chrono::seconds(
      integerFromEnvironment("FPM_PROFILE_LOCK_WAIT", 0, 3600)
          .value_or(DefaultSeconds));
}

/// An exclusive flock(2) on a lock file, held for the object's life. The
/// kernel releases it when the descriptor closes, even if the process
/// dies, so a lock file left behind locks nothing. The lock file itself is
/// never removed: a process could hold the lock on the removed file while
/// a third one locks a new file of the same name.
class FileLock {
public:
  /// The lock, or nothing when another holder keeps it for `wait`.
  static std::optional<FileLock> acquire(const fs::path &lockFile,
                                         const fs::path &file,
                                         std::chrono::milliseconds wait) {
    FileLock lock(lockFile, file);
    const auto deadline = std::chrono::steady_clock::now() + wait;
    auto pause = std::chrono::milliseconds(1);
    while (::flock(lock.fd_, LOCK_EX | LOCK_NB) != 0) {
      if (errno == EINTR)
        continue;
      if (errno != EWOULDBLOCK)
        fail(lockFile, file, "cannot lock", errno);
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline)
        return std::nullopt;
      std::this_thread::sleep_for(
          std::min<std::chrono::nanoseconds>(pause, deadline - now));
      pause = std::min(pause * 2, std::chrono::milliseconds(50));
    }
    return lock;
  }
  ~FileLock() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  FileLock(FileLock &&other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  FileLock(const FileLock &) = delete;
  FileLock &operator=(const FileLock &) = delete;
  FileLock &operator=(FileLock &&) = delete;

private:
  /// Opens the lock file, unlocked.
  FileLock(const fs::path &lockFile, const fs::path &file) {
    fd_ = ::open(lockFile.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    // flock needs no write access; a lock file another user created in a
    // shared folder may be read-only to us.
    if (fd_ < 0 && errno == EACCES) {
      fd_ = ::open(lockFile.c_str(), O_RDONLY | O_CLOEXEC);
      // No lock file to share: the folder is what we may not write.
      if (fd_ < 0 && errno == ENOENT)
        throw ProfileError(
            file.string() + ": cannot create the lock file '" +
            lockFile.string() + "': " + std::strerror(EACCES) +
            ": the folder '" + lockFile.parent_path().string() +
            "' is not writable (make it writable, or set FPM_PROFILE_DIR to "
            "a folder you may write)");
    }
    if (fd_ < 0)
      fail(lockFile, file, "cannot open", errno);
  }

  [[noreturn]] static void fail(const fs::path &lockFile, const fs::path &file,
                                const char *what, int error) {
    throw ProfileError(file.string() + ": " + what + " the lock file '" +
                       lockFile.string() + "': " + std::strerror(error));
  }
  int fd_ = -1;
};

/// Every byte outside [A-Za-z0-9._-] as %XX.
std::string percentEncode(std::string_view text) {
  static constexpr char Hex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : text) {
    auto byte = static_cast<unsigned char>(c);
    bool plain = (byte >= 'A' && byte <= 'Z') || (byte >= 'a' && byte <= 'z') ||
                 (byte >= '0' && byte <= '9') || byte == '.' || byte == '_' ||
                 byte == '-';
    if (plain) {
      out += c;
    } else {
      out += '%';
      out += Hex[byte >> 4];
      out += Hex[byte & 0xF];
    }
  }
  return out;
}

std::string hostName() {
  std::array<char, 256> name{};
  if (::gethostname(name.data(), name.size() - 1) != 0)
    return {};
  return name.data();
}

/// Now as ISO 8601 in UTC, "2026-11-21T10:00:00Z".
std::string utcNow() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  std::array<char, 32> text{};
  std::strftime(text.data(), text.size(), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text.data();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  std::size_t half = values.size() / 2;
  return values.size() % 2 ? values[half]
                           : (values[half - 1] + values[half]) / 2;
}

/// A sample summarised: count, mean, and the sum of squared deviations
/// from the mean, from which pooled statistics follow exactly.
struct Moments {
  double count = 0;
  double mean = 0;
  double squares = 0;
};

Moments momentsOf(const ProfilePoint &point) {
  Moments moments;
  moments.count = static_cast<double>(point.reps.value_or(1));
  moments.mean = point.time;
  // ci = t * s / sqrt(n), so s = ci * sqrt(n) / t; squares = (n - 1) s^2.
  if (point.ci && point.reps && *point.reps >= 2) {
    double s =
        *point.ci * std::sqrt(moments.count) / studentT975(*point.reps - 1);
    moments.squares = (moments.count - 1) * s * s;
  }
  return moments;
}

Moments pool(const Moments &a, const Moments &b) {
  Moments pooled;
  pooled.count = a.count + b.count;
  // a.count * a.mean overflows for means near the largest double; a step
  // from one mean towards the other by a weight in [0, 1] cannot, and stays
  // between them (so finite and > 0, as a profile's time must be).
  pooled.mean =
      std::clamp(a.mean + (b.mean - a.mean) * (b.count / pooled.count),
                 std::min(a.mean, b.mean), std::max(a.mean, b.mean));
  double gap = a.mean - b.mean;
  pooled.squares =
      a.squares + b.squares + gap * gap * a.count * b.count / pooled.count;
  return pooled;
}

/// What a writer writes for a statistic too large for a double: the
/// largest one, since the reader refuses what is not finite (JSON has no
/// infinity; nlohmann writes null).
double finite(double value) {
  return std::isfinite(value) ? value : std::numeric_limits<double>::max();
}

ProfilePoint pointOf(std::int64_t size, const Moments &moments) {
  ProfilePoint point;
  point.size = size;
  point.time = moments.mean;
  // Reps saturate at the largest int64 (2^63 is the first double past it):
  // merging into 2^63 - 1 wrapped to -2^63, which the reader refuses.
  constexpr double Past = 9223372036854775808.0;
  const std::int64_t reps =
      moments.count < Past
          ? static_cast<std::int64_t>(std::llround(moments.count))
          : std::numeric_limits<std::int64_t>::max();
  point.reps = reps;
  if (reps >= 2) {
    double s = std::sqrt(moments.squares / (moments.count - 1));
    point.ci = finite(studentT975(reps - 1) * s / std::sqrt(moments.count));
  }
  return point;
}

/// What keeps a parsed file from being the profile of `loop` on `device`,
/// or "" when nothing does.
std::string mismatch(const Profile &profile, std::string_view loop,
                     std::string_view device) {
  // The file holds the names as JSON can: storedText().
  if (profile.kernel != storedText(loop))
    return "its kernel is '" + excerpt(profile.kernel) + "', not '" +
           excerpt(loop) + "'";
  if (profile.device != storedText(device))
    return "its device is '" + excerpt(profile.device) + "', not '" +
           excerpt(device) + "'";
  return {};
}

/// Reads `file` as the profile of `loop` on `device`. Returns the problem
/// as "FILE: problem" when it is not one, and leaves `profile` alone.
std::string readAs(const fs::path &file, std::string_view loop,
                   std::string_view device, std::optional<Profile> &profile) {
  try {
    Profile read = readProfile(file);
    if (std::string problem = mismatch(read, loop, device); !problem.empty())
      return file.string() + ": " + problem;
    profile = std::move(read);
    return {};
  } catch (const ProfileError &error) {
    return error.what(); // already "FILE: problem"
  }
}

} // namespace

fs::path profileDirectory() {
  if (const char *dir = textFromEnvironment("FPM_PROFILE_DIR"))
    return dir;
  std::string host = hostName();
  // Percent-encoded like every file name here, so that a strange host name
  // cannot reach outside the folder; "localhost" if the name is unknown.
  fs::path perHost = fs::path("fpm") / "profiles" /
                     (host.empty() ? "localhost" : percentEncode(host));
  // The XDG spec says relative values are invalid and to be ignored.
  if (const char *cache = textFromEnvironment("XDG_CACHE_HOME");
      cache && fs::path(cache).is_absolute())
    return fs::path(cache) / perHost;
  if (const char *home = textFromEnvironment("HOME"))
    return fs::path(home) / ".cache" / perHost;
  return {};
}

namespace {

/// One name in a profile's file name: percent-encoded, or, when that is
/// longer than 100 bytes, its first bytes, '~' and a hash of the whole
/// name, so that a file name (two of these, '@', ".json", and the atomic
/// writer's and the lock's suffixes) stays below the 255 bytes a file
/// system allows. '~' is never in an encoding, so it marks a shortened name.
std::string fileNamePart(std::string_view name) {
  constexpr std::size_t Longest = 100, Kept = 80;
  std::string encoded = percentEncode(name);
  if (encoded.size() <= Longest)
    return encoded;
  std::size_t cut = Kept; // not inside a %XX
  while (encoded[cut - 1] == '%' || encoded[cut - 2] == '%')
    --cut;
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx",
                static_cast<unsigned long long>(fnv1a(name)));
  return encoded.substr(0, cut) + "~" + hash;
}

} // namespace

fs::path profilePath(const fs::path &dir, std::string_view loop,
                     std::string_view device) {
  return dir / (fileNamePart(loop) + "@" + fileNamePart(device) + ".json");
}

double studentT975(std::int64_t df) {
  static constexpr std::array<double, 30> Table = {
      12.706204736, 4.302652730, 3.182446305, 2.776445105, 2.570581836,
      2.446911851,  2.364624252, 2.306004135, 2.262157163, 2.228138852,
      2.200985160,  2.178812830, 2.160368656, 2.144786688, 2.131449546,
      2.119905299,  2.109815578, 2.100922040, 2.093024054, 2.085963447,
      2.079613845,  2.073873068, 2.068657610, 2.063898562, 2.059538553,
      2.055529439,  2.051830516, 2.048407142, 2.045229642, 2.042272456};
  if (df < 1)
    return 0;
  if (df <= static_cast<std::int64_t>(Table.size()))
    return Table[static_cast<std::size_t>(df - 1)];
  // Cornish-Fisher: t = z + g1/n + g2/n^2 + g3/n^3 with z the normal
  // quantile (Abramowitz and Stegun 26.7.5).
  constexpr double Z = 1.959963984540054;
  constexpr double Z3 = Z * Z * Z, Z5 = Z3 * Z * Z, Z7 = Z5 * Z * Z;
  double n = static_cast<double>(df);
  return Z + (Z3 + Z) / (4 * n) + (5 * Z5 + 16 * Z3 + 3 * Z) / (96 * n * n) +
         (3 * Z7 + 19 * Z5 + 17 * Z3 - 15 * Z) / (384 * n * n * n);
}

Samples::Samples(std::int64_t grain, std::size_t capacity)
    : grain_(std::max<std::int64_t>(grain, 1)),
      capacity_(std::max<std::size_t>(capacity, 1)) {}

void Samples::add(std::int64_t size, double seconds) {
  if (size <= 0 || !std::isfinite(seconds) || seconds <= 0)
    return;
  // Nearest multiple, halves up, without the overflow of size + grain / 2
  // or of 2 * rest; down where up is past INT64_MAX.
  std::int64_t units = size / grain_;
  const std::int64_t rest = size % grain_;
  if (rest >= grain_ - rest && units < INT64_MAX / grain_)
    ++units;
  std::int64_t bucket = std::max<std::int64_t>(units, 1) * grain_;
  double scaled =
      seconds * static_cast<double>(bucket) / static_cast<double>(size);
  if (!(scaled > 0) || !std::isfinite(static_cast<double>(bucket) / scaled))
    return;

  Bucket &samples = buckets_[bucket];
  if (samples.seconds.size() < capacity_) {
    samples.seconds.push_back(scaled);
  } else {
    samples.seconds[samples.next] = scaled;
    samples.next = (samples.next + 1) % capacity_;
  }
}

std::vector<ProfilePoint> Samples::summarize() const {
  std::vector<ProfilePoint> points;
  for (const auto &[size, bucket] : buckets_) {
    const std::vector<double> &all = bucket.seconds;
    double middle = median(all);
    std::vector<double> deviations;
    for (double x : all)
      deviations.push_back(std::abs(x - middle));
    // 1.4826 * MAD estimates the standard deviation of normal noise while
    // ignoring the outliers themselves. Only slow outliers are cut: a
    // package cannot run faster than the machine, but can be held up.
    double mad = median(std::move(deviations));
    double limit = mad > 0 ? middle + 3 * 1.4826 * mad : 3 * middle;

    Moments moments;
    for (double x : all)
      if (x <= limit) {
        moments.count += 1;
        moments.mean += x;
      }
    moments.mean /= moments.count; // the median is kept: count >= 1
    for (double x : all)
      if (x <= limit)
        moments.squares += (x - moments.mean) * (x - moments.mean);
    points.push_back(pointOf(size, moments));
  }
  return points;
}

Profile mergeProfiles(const Profile &stored,
                      std::span<const ProfilePoint> fresh) {
  std::map<std::int64_t, ProfilePoint> bySize;
  for (const ProfilePoint &point : stored.points)
    bySize.emplace(point.size, point);
  for (const ProfilePoint &point : fresh) {
    if (point.size <= 0 || !std::isfinite(point.time) || point.time <= 0 ||
        !std::isfinite(point.speed()))
      throw std::invalid_argument(
          "a profile point needs a positive size and a finite time > 0 "
          "(and so a finite speed), got size " +
          std::to_string(point.size) + ", time " + std::to_string(point.time));
    // What the reader refuses, the store must not write.
    if ((point.reps && *point.reps < 1) ||
        (point.ci && !(std::isfinite(*point.ci) && *point.ci >= 0)))
      throw std::invalid_argument(
          "a profile point's reps must be >= 1 and its ci finite and >= 0, "
          "got reps " +
          (point.reps ? std::to_string(*point.reps) : std::string("none")) +
          ", ci " +
          (point.ci ? std::to_string(*point.ci) : std::string("none")));
    auto [it, inserted] = bySize.emplace(point.size, point);
    if (!inserted)
      it->second =
          pointOf(point.size, pool(momentsOf(it->second), momentsOf(point)));
  }
  Profile merged = stored;
  merged.points.clear();
  for (auto &[size, point] : bySize)
    merged.points.push_back(std::move(point));
  return merged;
}

ProfileStore::ProfileStore(fs::path dir) : dir_(std::move(dir)) {}

std::optional<Profile> ProfileStore::load(std::string_view loop,
                                          std::string_view device) {
  fs::path file = profilePath(dir_, loop, device);
  std::error_code error;
  if (!fs::exists(file, error))
    return std::nullopt;
  std::optional<Profile> profile;
  if (std::string problem = readAs(file, loop, device, profile);
      !problem.empty())
    reportOnce(file.string(), problem + "; ignoring it");
  return profile;
}

void ProfileStore::merge(std::string_view loop, std::string_view device,
                         std::string_view deviceName,
                         std::span<const ProfilePoint> fresh, bool replace) {
  if (fresh.empty())
    return;
  fs::path file = profilePath(dir_, loop, device);
  std::error_code error;
  fs::create_directories(dir_, error);
  if (error)
    throw ProfileError(file.string() + ": cannot create the folder '" +
                       dir_.string() + "': " + error.message());

  std::lock_guard inProcess(fileMutex(file));
  const fs::path lockFile = fs::path(file) += ".lock";
  // Waits once per file and process: a holder that kept it that long is
  // taken to keep it.
  const std::string timedOut = lockFile.string() + "#timed-out";
  const std::chrono::milliseconds wait =
      wasReported(timedOut) ? std::chrono::milliseconds(0) : lockWait();
  const std::optional<FileLock> lock = FileLock::acquire(lockFile, file, wait);
  if (!lock) {
    reportOnce(timedOut,
               lockFile.string() + ": another process has held this lock for " +
                   std::to_string(wait.count() / 1000) +
                   " s (a stopped or hung fpm program?); running on without "
                   "storing this run's measurements in " +
                   file.string() +
                   " (FPM_PROFILE_LOCK_WAIT sets the wait in seconds)");
    return;
  }

  // Re-read under the lock: what another process merged since our last
  // look must be in what we write.
  std::optional<Profile> stored;
  if (fs::exists(file, error)) {
    if (std::string problem = readAs(file, loop, device, stored);
        !problem.empty()) {
      // New measurements are worth more than a file no run can use; the
      // user may still want to see what was wrong with it.
      fs::path kept = fs::path(file) += ".corrupt";
      fs::rename(file, kept, error);
      reportOnce(
          file.string() + "#replaced",
          problem + "; replacing it" +
              (error ? std::string()
                     : " (the old file is kept as " + kept.string() + ")"));
    }
  }

  Profile base;
  if (stored && !replace) {
    base = std::move(*stored);
  } else {
    base.kernel = loop;
    base.device = device;
    base.created = utcNow();
  }
  Profile merged = mergeProfiles(base, fresh);
  if (!deviceName.empty())
    merged.deviceName = deviceName;
  merged.host = hostName();
  if (merged.created.empty())
    merged.created = utcNow();
  writeProfile(file, merged);
}

} // namespace fpm
