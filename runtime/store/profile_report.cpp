//===- store/profile_report.cpp - The profile store, for people -----------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "store/profile_report.hpp"

#include "store/profile_store.hpp"
#include "support/text.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <exception>
#include <map>
#include <string>
#include <system_error>
#include <utility>

namespace fpm {

namespace fs = std::filesystem;

namespace {

int hexValue(char c) {
  // Upper case only: profilePath() writes that, and accepting another
  // spelling would list a file the runtime never reads.
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

bool isPlain(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
         (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

/// The inverse of profile_store.cpp's percentEncode, on its outputs only.
std::optional<std::string> percentDecode(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (isPlain(c)) {
      out += c;
      continue;
    }
    if (c != '%' || i + 2 >= text.size())
      return std::nullopt;
    int high = hexValue(text[i + 1]);
    int low = hexValue(text[i + 2]);
    if (high < 0 || low < 0)
      return std::nullopt;
    auto byte = static_cast<char>(high * 16 + low);
    // A plain byte written as %XX is not what profilePath() writes.
    if (isPlain(byte))
      return std::nullopt;
    out += byte;
    i += 2;
  }
  return out;
}

/// Control characters would break a table's line or an SVG's XML; names
/// are shown with '?' in their place.
std::string printable(std::string_view text) {
  std::string out(text);
  for (char &c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F)
      c = '?';
  return out;
}

std::string formatNumber(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  return buffer;
}

std::string formatFixed(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.2f", value);
  return buffer;
}

/// The code point of the well-formed UTF-8 sequence at the start of
/// `text` and its length in bytes, or a length of 0 when none starts there
/// (a stray byte, an overlong form, a surrogate, past U+10FFFF).
std::pair<char32_t, std::size_t> decodeUtf8(std::string_view text) {
  auto byte = [&](std::size_t i) {
    return static_cast<unsigned char>(text[i]);
  };
  const unsigned char lead = byte(0);
  if (lead < 0x80)
    return {lead, 1};
  const std::size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
  if (lead < 0xC2 || lead > 0xF4 || text.size() < length)
    return {0, 0};
  char32_t code = lead & (0x7F >> length);
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xC0) != 0x80)
      return {0, 0};
    code = (code << 6) | (byte(i) & 0x3F);
  }
  constexpr char32_t Least[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < Least[length] || code > 0x10FFFF ||
      (code >= 0xD800 && code <= 0xDFFF))
    return {0, 0};
  return {code, length};
}

/// `text` as XML 1.0 character data or an attribute value: markup escaped,
/// control characters (which would also break a line) as '?', and what
/// XML 1.0 does not allow at all (U+FFFE, U+FFFF, invalid UTF-8) as
/// U+FFFD, so that any name makes a well-formed figure.
std::string escapeXml(std::string_view text) {
  constexpr std::string_view Replacement = "\xEF\xBF\xBD"; // U+FFFD
  std::string out;
  while (!text.empty()) {
    const auto [code, length] = decodeUtf8(text);
    if (length == 0 || code == 0xFFFE || code == 0xFFFF) {
      out += Replacement;
      text.remove_prefix(std::max<std::size_t>(length, 1));
      continue;
    }
    if (length > 1) {
      out += text.substr(0, length);
      text.remove_prefix(length);
      continue;
    }
    const char c = text.front();
    text.remove_prefix(1);
    if (code < 0x20 || code == 0x7F) {
      out += '?';
      continue;
    }
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&apos;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

/// A tick step of 1, 2 or 5 times a power of ten that cuts [0, top] into
/// about five intervals, as plotting tools choose them.
double niceStep(double top) {
  double raw = top / 5;
  double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double fraction = raw / magnitude;
  double nice = fraction < 1.5 ? 1 : fraction < 3 ? 2 : fraction < 7 ? 5 : 10;
  return nice * magnitude;
}

struct Axis {
  double top = 1;
  double step = 1;
};

/// An axis from 0 to a whole number of steps at or above `largest`.
Axis makeAxis(double largest) {
  if (!(largest > 0) || !std::isfinite(largest))
    largest = 1;
  Axis axis;
  axis.step = niceStep(largest);
  axis.top = std::ceil(largest / axis.step - 1e-9) * axis.step;
  // Near the largest double the nice top overflows (a speed of 1.7e308
  // rounds up to 2e308 = inf, and every coordinate with it): the axis then
  // ends at the largest value itself, in five steps.
  if (!std::isfinite(axis.top) || !(axis.step > 0)) {
    axis.top = largest;
    axis.step = largest / 5;
  }
  return axis;
}

constexpr std::array<std::string_view, 10> Colors = {
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

std::string legendLabel(const Profile &profile) {
  return profile.deviceName.empty()
             ? profile.device
             : profile.device + " (" + profile.deviceName + ")";
}

// The geometry of one panel, in SVG user units.
constexpr double PlotLeft = 90, PlotRight = 540;
constexpr double PlotTop = 50, PlotBottom = 350;
constexpr double PanelHeight = 420;
constexpr double LegendX = 565;

void renderPanel(std::string &out, const LoopProfiles &loop, double offsetY) {
  double largestSize = 0, largestSpeed = 0;
  for (const Profile &profile : loop.profiles)
    for (const ProfilePoint &point : profile.points) {
      largestSize = std::max(largestSize, static_cast<double>(point.size));
      largestSpeed = std::max(largestSpeed, point.speed());
    }
  Axis xAxis = makeAxis(largestSize);
  Axis yAxis = makeAxis(largestSpeed);
  // The fraction of the axis first: 300 * 1e308 overflows.
  auto toX = [&](double size) {
    return PlotLeft + (PlotRight - PlotLeft) * (size / xAxis.top);
  };
  auto toY = [&](double speed) {
    return PlotBottom - (PlotBottom - PlotTop) * (speed / yAxis.top);
  };

  out += "<g transform=\"translate(0," + formatFixed(offsetY) + ")\">\n";
  out += "<text x=\"" + formatFixed((PlotLeft + PlotRight) / 2) +
         "\" y=\"30\" text-anchor=\"middle\" font-size=\"16\">loop '" +
         escapeXml(loop.loop) + "'</text>\n";
  out += "<rect x=\"" + formatFixed(PlotLeft) + "\" y=\"" +
         formatFixed(PlotTop) + "\" width=\"" +
         formatFixed(PlotRight - PlotLeft) + "\" height=\"" +
         formatFixed(PlotBottom - PlotTop) +
         "\" fill=\"none\" stroke=\"black\"/>\n";

  // Ticks with their values and a light grid line, on both axes. Counting
  // steps, not adding them, keeps rounding from losing the last tick.
  int xTicks = static_cast<int>(std::lround(xAxis.top / xAxis.step));
  for (int i = 0; i <= xTicks; ++i) {
    double value = i * xAxis.step;
    std::string x = formatFixed(toX(value));
    out += "<line x1=\"" + x + "\" y1=\"" + formatFixed(PlotTop) + "\" x2=\"" +
           x + "\" y2=\"" + formatFixed(PlotBottom) +
           "\" stroke=\"#dddddd\"/>\n";
    out += "<line x1=\"" + x + "\" y1=\"" + formatFixed(PlotBottom) +
           "\" x2=\"" + x + "\" y2=\"" + formatFixed(PlotBottom + 5) +
           "\" stroke=\"black\"/>\n";
    out += "<text x=\"" + x + "\" y=\"" + formatFixed(PlotBottom + 20) +
           "\" text-anchor=\"middle\">" + formatNumber(value) + "</text>\n";
  }
  int yTicks = static_cast<int>(std::lround(yAxis.top / yAxis.step));
  for (int i = 0; i <= yTicks; ++i) {
    double value = i * yAxis.step;
    std::string y = formatFixed(toY(value));
    out += "<line x1=\"" + formatFixed(PlotLeft) + "\" y1=\"" + y + "\" x2=\"" +
           formatFixed(PlotRight) + "\" y2=\"" + y +
           "\" stroke=\"#dddddd\"/>\n";
    out += "<line x1=\"" + formatFixed(PlotLeft - 5) + "\" y1=\"" + y +
           "\" x2=\"" + formatFixed(PlotLeft) + "\" y2=\"" + y +
           "\" stroke=\"black\"/>\n";
    out += "<text x=\"" + formatFixed(PlotLeft - 8) + "\" y=\"" + y +
           "\" text-anchor=\"end\" dominant-baseline=\"middle\">" +
           formatNumber(value) + "</text>\n";
  }
  out += "<text x=\"" + formatFixed((PlotLeft + PlotRight) / 2) + "\" y=\"" +
         formatFixed(PlotBottom + 45) +
         "\" text-anchor=\"middle\">size (iterations)</text>\n";
  double middleY = (PlotTop + PlotBottom) / 2;
  out += "<text x=\"20\" y=\"" + formatFixed(middleY) +
         "\" text-anchor=\"middle\" transform=\"rotate(-90 20 " +
         formatFixed(middleY) + ")\">speed (iterations/s)</text>\n";

  for (std::size_t i = 0; i < loop.profiles.size(); ++i) {
    const Profile &profile = loop.profiles[i];
    std::string color(Colors[i % Colors.size()]);
    std::string points;
    for (const ProfilePoint &point : profile.points)
      points += (points.empty() ? "" : " ") +
                formatFixed(toX(static_cast<double>(point.size))) + "," +
                formatFixed(toY(point.speed()));
    out += "<polyline points=\"" + points + "\" fill=\"none\" stroke=\"" +
           color + "\" stroke-width=\"2\"/>\n";
    for (const ProfilePoint &point : profile.points)
      out += "<circle cx=\"" +
             formatFixed(toX(static_cast<double>(point.size))) + "\" cy=\"" +
             formatFixed(toY(point.speed())) + "\" r=\"3\" fill=\"" + color +
             "\"/>\n";

    double legendY = PlotTop + 10 + 20.0 * static_cast<double>(i);
    out += "<line x1=\"" + formatFixed(LegendX) + "\" y1=\"" +
           formatFixed(legendY) + "\" x2=\"" + formatFixed(LegendX + 24) +
           "\" y2=\"" + formatFixed(legendY) + "\" stroke=\"" + color +
           "\" stroke-width=\"2\"/>\n";
    out += "<circle cx=\"" + formatFixed(LegendX + 12) + "\" cy=\"" +
           formatFixed(legendY) + "\" r=\"3\" fill=\"" + color + "\"/>\n";
    out += "<text x=\"" + formatFixed(LegendX + 32) + "\" y=\"" +
           formatFixed(legendY) + "\" dominant-baseline=\"middle\">" +
           escapeXml(legendLabel(profile)) + "</text>\n";
  }
  out += "</g>\n";
}

} // namespace

std::optional<ProfileFileName> parseProfileFileName(std::string_view name) {
  constexpr std::string_view Suffix = ".json";
  if (!name.ends_with(Suffix))
    return std::nullopt;
  name.remove_suffix(Suffix.size());
  // '@' is always encoded inside the names, so the one raw '@' separates.
  std::size_t at = name.find('@');
  if (at == std::string_view::npos ||
      name.find('@', at + 1) != std::string_view::npos)
    return std::nullopt;
  // A shortened name: its readable part, '~', 16 lower-case hex digits.
  bool shortened = false;
  auto decode = [&](std::string_view part) -> std::optional<std::string> {
    const std::size_t tilde = part.find('~');
    if (tilde == std::string_view::npos)
      return percentDecode(part);
    const std::string_view hash = part.substr(tilde + 1);
    if (hash.size() != 16 || !std::all_of(hash.begin(), hash.end(), [](char c) {
          return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
        }))
      return std::nullopt;
    shortened = true;
    return percentDecode(part.substr(0, tilde));
  };
  std::optional<std::string> loop = decode(name.substr(0, at));
  std::optional<std::string> device = decode(name.substr(at + 1));
  if (!loop || !device || loop->empty() || device->empty())
    return std::nullopt;
  return ProfileFileName{std::move(*loop), std::move(*device), shortened};
}

ProfileListing listProfiles(const fs::path &dir,
                            std::optional<std::string_view> loop) {
  ProfileListing listing;
  std::error_code error;
  // A folder that does not exist yet holds nothing (no loop has stored a
  // profile); one that cannot be looked at is an error, not "no profiles".
  bool exists = fs::exists(dir, error);
  if (error)
    throw ProfileError(dir.string() +
                       ": cannot open the folder: " + error.message());
  if (!exists)
    return listing;
  if (!fs::is_directory(dir, error))
    throw ProfileError(dir.string() + ": not a folder");

  // Sorted, so that the problems come out in the same order every time.
  std::vector<fs::directory_entry> entries;
  fs::directory_iterator it(dir, error);
  for (; !error && it != fs::directory_iterator(); it.increment(error))
    entries.push_back(*it);
  if (error)
    throw ProfileError(dir.string() +
                       ": cannot list the folder: " + error.message());
  std::sort(entries.begin(), entries.end(),
            [](const auto &a, const auto &b) { return a.path() < b.path(); });

  std::map<std::string, std::map<std::string, Profile>> byLoop;
  for (const fs::directory_entry &entry : entries) {
    std::string fileName = entry.path().filename().string();
    if (fileName.starts_with(".") || !fileName.ends_with(".json"))
      continue;
    std::string file = entry.path().string();
    std::optional<ProfileFileName> name = parseProfileFileName(fileName);
    if (!entry.is_regular_file(error)) {
      if (name && (!loop || name->shortened || name->loop == *loop))
        listing.problems.push_back(file + ": not a regular file");
      continue;
    }
    if (loop && name && !name->shortened && name->loop != *loop)
      continue;
    try {
      Profile profile = readProfile(entry.path());
      if (!name) {
        // Not named as the store names its files (profiles gathered by
        // hand, such as examples/profiles/cpu0.json): the names it holds
        // say whose it is.
        if (loop && profile.kernel != *loop)
          continue;
        if (!byLoop[profile.kernel].emplace(profile.device, profile).second)
          listing.problems.push_back(
              file + ": another file holds the profile of loop '" +
              excerpt(profile.kernel) + "' on '" + excerpt(profile.device) +
              "' too; this one is not shown");
        continue;
      }
      if (name->shortened) {
        // The whole names are in the file; its name must be theirs.
        if (profilePath(dir, profile.kernel, profile.device).filename() ==
            entry.path().filename()) {
          name->loop = profile.kernel;
          name->device = profile.device;
        }
        if (loop && name->loop != *loop)
          continue;
      }
      if (profile.kernel != name->loop || profile.device != name->device) {
        listing.problems.push_back(file + ": holds the profile of loop '" +
                                   excerpt(profile.kernel) + "' on '" +
                                   excerpt(profile.device) +
                                   "', not the one its name says");
        continue;
      }
      byLoop[name->loop].emplace(name->device, std::move(profile));
    } catch (const ProfileError &problem) {
      std::string what = problem.what(); // "FILE: problem"
      if (!name && loop)
        continue; // not asked for, as far as its name says
      if (!name)
        what = file +
               ": not a profile's file name (<loop>@<device>.json, with %XX "
               "for other bytes than A-Z a-z 0-9 . _ -) nor a profile (" +
               what.substr(std::min(what.size(), file.size() + 2)) + ")";
      listing.problems.push_back(std::move(what));
    } catch (const std::exception &problem) {
      listing.problems.push_back(file + ": " + problem.what());
    }
  }

  for (auto &[name, profiles] : byLoop) {
    LoopProfiles &entry = listing.loops.emplace_back();
    entry.loop = name;
    for (auto &[device, profile] : profiles)
      entry.profiles.push_back(std::move(profile));
  }
  return listing;
}

std::string formatLoopTables(const LoopProfiles &loop) {
  std::string out = "loop '" + printable(loop.loop) + "'\n";
  for (const Profile &profile : loop.profiles) {
    auto orDash = [](const std::string &text) {
      return text.empty() ? std::string("-") : printable(text);
    };
    out += "\n  device: " + printable(profile.device) +
           "  device_name: " + orDash(profile.deviceName) +
           "  host: " + orDash(profile.host) + "\n";

    constexpr std::size_t Columns = 5;
    using Row = std::array<std::string, Columns>;
    std::vector<Row> rows = {
        {"size", "time (s)", "speed (iterations/s)", "reps", "ci"}};
    for (const ProfilePoint &point : profile.points)
      rows.push_back({std::to_string(point.size), formatNumber(point.time),
                      formatNumber(point.speed()),
                      point.reps ? std::to_string(*point.reps) : "",
                      point.ci ? formatNumber(*point.ci) : ""});
    std::array<std::size_t, Columns> widths{};
    for (const Row &row : rows)
      for (std::size_t c = 0; c < Columns; ++c)
        widths[c] = std::max(widths[c], row[c].size());
    // Numbers right-aligned, so that their digits line up.
    for (const Row &row : rows) {
      std::string line = "   ";
      for (std::size_t c = 0; c < Columns; ++c)
        line += " " + std::string(widths[c] - row[c].size(), ' ') + row[c] +
                (c + 1 < Columns ? " " : "");
      while (line.back() == ' ')
        line.pop_back();
      out += line + '\n';
    }
  }
  return out;
}

std::string renderSpeedPlot(std::span<const LoopProfiles> loops) {
  // Wide enough for the longest legend label, at about 7 units a character
  // in the default 12-unit sans-serif font.
  std::size_t longest = 0;
  for (const LoopProfiles &loop : loops)
    for (const Profile &profile : loop.profiles)
      longest = std::max(longest, legendLabel(profile).size());
  double width =
      std::max(760.0, LegendX + 40 + 7.0 * static_cast<double>(longest));
  double height =
      PanelHeight * static_cast<double>(std::max<std::size_t>(loops.size(), 1));

  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" +
         formatFixed(width) + "\" height=\"" + formatFixed(height) +
         "\" viewBox=\"0 0 " + formatFixed(width) + " " + formatFixed(height) +
         "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  out += "<title>fpm profiles: speed against size</title>\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  for (std::size_t i = 0; i < loops.size(); ++i)
    renderPanel(out, loops[i], PanelHeight * static_cast<double>(i));
  out += "</svg>\n";
  return out;
}

} // namespace fpm
