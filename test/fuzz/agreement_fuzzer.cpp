//===- agreement_fuzzer.cpp - The message ranks agree on a loop with ------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The bytes each MPI rank sends rank 0 before a collective loop
// (cluster/loop_agreement), as another process of a program could garble
// them: decodeLoopShape() either throws std::invalid_argument or returns a
// shape that survives its own encoding and agrees with itself.
//
//===----------------------------------------------------------------------===//

#include "fuzz_check.hpp"

#include "cluster/loop_agreement.hpp"

#include <cstdint>
#include <stdexcept>
#include <string_view>

using namespace fpm;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
                                      std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char *>(data), size);
  LoopShape shape;
  try {
    shape = decodeLoopShape(bytes);
  } catch (const std::invalid_argument &) {
    return 0;
  }
  FUZZ_CHECK(decodeLoopShape(encodeLoopShape(shape)) == shape,
             "a shape does not survive its encoding");
  const LoopShape twice[] = {shape, shape};
  FUZZ_CHECK(describeDisagreement(twice).empty(),
             "a shape disagrees with itself");
  return 0;
}
