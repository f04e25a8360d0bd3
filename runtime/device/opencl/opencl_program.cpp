//===- device/opencl/opencl_program.cpp - Building OpenCL programs --------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "device/opencl/opencl_program.hpp"

#include "support/hash.hpp"

#include <optional>

namespace fpm::opencl {

std::string trimmed(std::string text) {
  auto blank = [](char c) {
    return c == '\0' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
  };
  while (!text.empty() && blank(text.back()))
    text.pop_back();
  std::size_t first = 0;
  while (first < text.size() && blank(text[first]))
    ++first;
  return text.substr(first);
}

namespace {

// A cache file is this header and then the driver's binary. The header
// catches a truncated or damaged file before the driver sees it (some
// drivers crash, rather than fail, on a binary that is not theirs), and an
// entry copied or renamed onto another key's name: it holds its own key.
// Little-endian words: the key's length, the key, the binary's size and
// its FNV-1a hash.
constexpr std::string_view CacheMagic = "FPMCLB02";

void putWord(std::string &out, std::uint64_t word) {
  for (int i = 0; i < 8; ++i)
    out += static_cast<char>((word >> (8 * i)) & 0xff);
}

/// The next word of `in`, consumed; nothing when `in` is too short.
std::optional<std::uint64_t> takeWord(std::string_view &in) {
  if (in.size() < 8)
    return std::nullopt;
  std::uint64_t word = 0;
  for (int i = 0; i < 8; ++i)
    word |= std::uint64_t(static_cast<unsigned char>(in[i])) << (8 * i);
  in.remove_prefix(8);
  return word;
}

} // namespace

std::string encodeCacheFile(std::string_view key, std::string_view binary) {
  std::string out(CacheMagic);
  putWord(out, key.size());
  out += key;
  putWord(out, binary.size());
  putWord(out, fnv1a(binary));
  out += binary;
  return out;
}

std::string_view decodeCacheFile(std::string_view key, std::string_view file) {
  if (!file.starts_with(CacheMagic))
    return {};
  file.remove_prefix(CacheMagic.size());
  const std::optional<std::uint64_t> keySize = takeWord(file);
  if (!keySize || *keySize != key.size() || !file.starts_with(key))
    return {};
  file.remove_prefix(key.size());
  const std::optional<std::uint64_t> size = takeWord(file);
  const std::optional<std::uint64_t> hash = takeWord(file);
  if (!size || !hash || file.empty() || file.size() != *size ||
      fnv1a(file) != *hash)
    return {};
  return file;
}

namespace {

std::string buildLog(cl_program program, cl_device_id device) {
  std::size_t size = 0;
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr,
                            &size) != CL_SUCCESS)
    return "(no build log)";
  std::string log(size, '\0');
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size,
                            log.data(), nullptr) != CL_SUCCESS)
    return "(no build log)";
  log = trimmed(std::move(log));
  // The first errors are the ones that explain the rest.
  constexpr std::size_t Limit = 4000;
  if (log.size() > Limit)
    log = log.substr(0, Limit) + "\n... (" +
          std::to_string(log.size() - Limit) + " more characters)";
  return log;
}

} // namespace

ProgramRef buildFromSource(cl_context context, cl_device_id device,
                           const std::string &source,
                           const std::string &options, const std::string &who) {
  const char *text = source.c_str();
  std::size_t length = source.size();
  cl_int status = CL_SUCCESS;
  ProgramRef program(
      clCreateProgramWithSource(context, 1, &text, &length, &status));
  check(status, "clCreateProgramWithSource on " + who);
  status = clBuildProgram(program.get(), 1, &device, options.c_str(), nullptr,
                          nullptr);
  if (status != CL_SUCCESS) {
    std::string message = "cannot build OpenCL program for " + who;
    if (!options.empty())
      message += " with options '" + options + "'";
    message +=
        ": " + errorName(status) + "\n" + buildLog(program.get(), device);
    throw Error(std::move(message), status);
  }
  return program;
}

ProgramRef buildFromBinary(cl_context context, cl_device_id device,
                           std::string_view binary,
                           const std::string &options) {
  const auto *bytes = reinterpret_cast<const unsigned char *>(binary.data());
  std::size_t length = binary.size();
  cl_int binaryStatus = CL_SUCCESS, status = CL_SUCCESS;
  ProgramRef program(clCreateProgramWithBinary(context, 1, &device, &length,
                                               &bytes, &binaryStatus, &status));
  if (status != CL_SUCCESS || binaryStatus != CL_SUCCESS || !program)
    return {};
  if (clBuildProgram(program.get(), 1, &device, options.c_str(), nullptr,
                     nullptr) != CL_SUCCESS)
    return {};
  return program;
}

std::string programBinary(cl_program program) {
  std::size_t size = 0;
  if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size,
                       nullptr) != CL_SUCCESS ||
      size == 0)
    return {};
  std::string binary(size, '\0');
  auto *bytes = reinterpret_cast<unsigned char *>(binary.data());
  if (clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof bytes, &bytes,
                       nullptr) != CL_SUCCESS)
    return {};
  return binary;
}

} // namespace fpm::opencl
