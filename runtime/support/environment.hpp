//===- support/environment.hpp - FPM_* variables, read one way -*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What this file offers: the readers of the environment variables that
// tune the runtime, so that each kind of value is parsed one way wherever
// it is read: unset or empty is "not set", and a malformed value is an
// error naming the variable, never a silent default.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <optional>

namespace fpm {

/// The value of environment variable `name`, or null when it is unset or
/// empty: an empty value counts as unset everywhere (as the XDG
/// specification asks of its variables).
const char *textFromEnvironment(const char *name);

/// The integer in environment variable `name`, nothing when it is unset or
/// empty. Throws std::invalid_argument naming the variable when it is not
/// an integer in [low, high].
std::optional<long> integerFromEnvironment(const char *name, long low,
                                           long high);

/// The on/off in environment variable `name`: 1, yes, true or on; 0, no,
/// false or off, in any case; nothing when it is unset or empty. Throws
/// std::invalid_argument naming the variable for anything else.
std::optional<bool> flagFromEnvironment(const char *name);

} // namespace fpm
