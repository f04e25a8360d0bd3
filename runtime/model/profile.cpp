//===- model/profile.cpp - The fpm-profile/1 file format ------------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "model/profile.hpp"
#include "support/atomic_file.hpp"
#include "support/text.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <sstream>

namespace fpm {
namespace {

using Json = nlohmann::json;

/// The deepest nesting of arrays and objects a profile may have. A valid
/// one needs 3 (the object, its points, a point); unknown fields may nest
/// further, but a value nested 200,000 deep would overflow the stack of
/// anything that walks it recursively, nlohmann's dump() included.
constexpr int MaxDepth = 64;

/// Whether arrays and objects in `text` nest deeper than MaxDepth; brackets
/// in strings do not count. One pass, before the parse: nlohmann's
/// callback mode, which could stop at the first container too deep, costs
/// time quadratic in an array's elements.
bool nestsTooDeep(std::string_view text) {
  int depth = 0;
  bool inString = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i; // the escaped character cannot end the string
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > MaxDepth)
        return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

/// A JSON value as an error message echoes it: its start only.
std::string echo(const Json &value) {
  return excerpt(value.dump(-1, ' ', false, Json::error_handler_t::replace));
}

[[noreturn]] void fail(const std::string &origin, const std::string &what) {
  throw ProfileError(origin + ": " + what);
}

std::string requiredString(const Json &object, const char *key,
                           const std::string &origin) {
  auto it = object.find(key);
  if (it == object.end())
    fail(origin, std::string("missing required field '") + key + "'");
  if (!it->is_string())
    fail(origin, std::string("field '") + key + "' must be a string");
  return it->get<std::string>();
}

std::string optionalString(const Json &object, const char *key,
                           const std::string &origin) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null())
    return {};
  if (!it->is_string())
    fail(origin, std::string("field '") + key + "' must be a string");
  return it->get<std::string>();
}

ProfilePoint parsePoint(const Json &json, std::size_t index,
                        const std::string &origin) {
  std::string where = "points[" + std::to_string(index) + "]";
  if (!json.is_object())
    fail(origin, where + " must be an object");
  ProfilePoint point;

  auto size = json.find("size");
  if (size == json.end())
    fail(origin, where + " has no 'size'");
  if (!size->is_number_integer())
    fail(origin, where + ".size must be an integer, got " + echo(*size));
  if (size->is_number_unsigned() &&
      size->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
    fail(origin, where + ".size is too large: " + echo(*size));
  point.size = size->get<std::int64_t>();

  auto time = json.find("time");
  if (time == json.end())
    fail(origin, where + " has no 'time'");
  if (!time->is_number())
    fail(origin, where + ".time must be a number, got " + echo(*time));
  point.time = time->get<double>();

  if (auto reps = json.find("reps"); reps != json.end()) {
    if (!reps->is_number_integer() || reps->get<std::int64_t>() < 1)
      fail(origin, where + ".reps must be a positive integer");
    point.reps = reps->get<std::int64_t>();
  }
  if (auto ci = json.find("ci"); ci != json.end()) {
    if (!ci->is_number() || !std::isfinite(ci->get<double>()) ||
        ci->get<double>() < 0)
      fail(origin, where + ".ci must be a finite number >= 0");
    point.ci = ci->get<double>();
  }
  return point;
}

} // namespace

std::string validate(const Profile &profile) {
  if (profile.kernel.empty())
    return "field 'kernel' is empty";
  if (profile.device.empty())
    return "field 'device' is empty";
  if (profile.points.empty())
    return "'points' must hold at least one point";
  for (std::size_t i = 0; i < profile.points.size(); ++i) {
    const ProfilePoint &point = profile.points[i];
    std::string where = "points[" + std::to_string(i) + "]";
    if (point.size <= 0)
      return where + ".size must be positive, got " +
             std::to_string(point.size);
    if (i > 0 && point.size <= profile.points[i - 1].size)
      return "sizes must be strictly increasing: " + where + ".size " +
             std::to_string(point.size) + " follows " +
             std::to_string(profile.points[i - 1].size);
    if (!std::isfinite(point.time) || point.time <= 0) {
      std::ostringstream out;
      out << where << ".time must be finite and > 0, got " << point.time;
      return out.str();
    }
    // Speed is size / time; every model and partitioner works in speeds,
    // and an infinite one is NaN as soon as it is interpolated.
    if (!std::isfinite(point.speed())) {
      std::ostringstream out;
      out << where << ".time " << point.time << " is too small: size "
          << point.size << " / time is not a finite speed";
      return out.str();
    }
  }
  return {};
}

Profile parseProfile(std::string_view text, const std::string &origin) {
  if (nestsTooDeep(text))
    fail(origin, "invalid JSON: arrays and objects nested more than " +
                     std::to_string(MaxDepth) + " deep");
  Json json;
  try {
    json = Json::parse(text);
  } catch (const Json::exception &error) {
    // A syntax error, or a number too large for a double. Drop nlohmann's
    // "[json.exception.parse_error.101] " prefix.
    std::string message = error.what();
    if (auto close = message.find("] "); close != std::string::npos)
      message = message.substr(close + 2);
    // It quotes the token it stopped at ("last read: '...'"), which may be
    // a megabyte of digits.
    if (auto open = message.find('\''), close = message.rfind('\'');
        open != std::string::npos && close > open)
      message = message.substr(0, open + 1) +
                excerpt(std::string_view(message).substr(open + 1,
                                                         close - open - 1)) +
                message.substr(close);
    fail(origin, "invalid JSON: " + message);
  }
  if (!json.is_object())
    fail(origin, "the top level must be a JSON object");

  std::string format = requiredString(json, "format", origin);
  if (format != ProfileFormat)
    fail(origin, "unsupported format '" + excerpt(format) + "' (expected '" +
                     std::string(ProfileFormat) + "')");

  Profile profile;
  profile.kernel = requiredString(json, "kernel", origin);
  profile.device = requiredString(json, "device", origin);
  profile.deviceName = optionalString(json, "device_name", origin);
  profile.host = optionalString(json, "host", origin);
  profile.created = optionalString(json, "created", origin);

  auto points = json.find("points");
  if (points == json.end())
    fail(origin, "missing required field 'points'");
  if (!points->is_array())
    fail(origin, "field 'points' must be an array");
  for (std::size_t i = 0; i < points->size(); ++i)
    profile.points.push_back(parsePoint((*points)[i], i, origin));

  if (std::string problem = validate(profile); !problem.empty())
    fail(origin, problem);
  return profile;
}

Profile readProfile(const std::filesystem::path &path) {
  std::string text;
  try {
    text = readRegularFile(path, MaxProfileBytes);
  } catch (const std::runtime_error &error) {
    throw ProfileError(error.what()); // already "FILE: problem"
  }
  return parseProfile(text, path.string());
}

std::string storedText(std::string_view text) {
  const std::string written =
      Json(std::string(text))
          .dump(-1, ' ', false, Json::error_handler_t::replace);
  return Json::parse(written).get<std::string>();
}

std::string formatProfile(const Profile &profile) {
  // Written by hand around nlohmann's number formatting so that each point
  // stays on one line, as a person editing the file expects.
  // Names come from programs and drivers, and may hold bytes that are not
  // UTF-8, which JSON cannot: each is written as U+FFFD (storedText()).
  auto field = [](const char *key, const Json &value) {
    return "  " + Json(key).dump() + ": " +
           value.dump(-1, ' ', false, Json::error_handler_t::replace);
  };
  std::string out = "{\n";
  out += field("format", ProfileFormat) + ",\n";
  out += field("kernel", profile.kernel) + ",\n";
  out += field("device", profile.device) + ",\n";
  if (!profile.deviceName.empty())
    out += field("device_name", profile.deviceName) + ",\n";
  if (!profile.host.empty())
    out += field("host", profile.host) + ",\n";
  if (!profile.created.empty())
    out += field("created", profile.created) + ",\n";
  out += "  \"points\": [\n";
  for (std::size_t i = 0; i < profile.points.size(); ++i) {
    const ProfilePoint &point = profile.points[i];
    Json json = Json::object();
    json["size"] = point.size;
    json["time"] = point.time;
    if (point.reps)
      json["reps"] = *point.reps;
    if (point.ci)
      json["ci"] = *point.ci;
    // nlohmann sorts keys; put size first as the spec shows it.
    std::string line = "{\"size\": " + json["size"].dump() +
                       ", \"time\": " + json["time"].dump();
    if (point.reps)
      line += ", \"reps\": " + json["reps"].dump();
    if (point.ci)
      line += ", \"ci\": " + json["ci"].dump();
    line += "}";
    out += "    " + line + (i + 1 < profile.points.size() ? ",\n" : "\n");
  }
  out += "  ]\n}\n";
  return out;
}

void writeProfile(const std::filesystem::path &path, const Profile &profile) {
  if (std::string problem = validate(profile); !problem.empty())
    fail(path.string(), "refusing to write an invalid profile: " + problem);

  try {
    writeFileAtomically(path, formatProfile(profile));
  } catch (const std::runtime_error &error) {
    // Already "FILE: problem", as every ProfileError reads.
    throw ProfileError(error.what());
  }
}

} // namespace fpm
