//===- loop_agreement_test.cpp - What every rank must call alike ----------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// cluster/loop_agreement.hpp: a loop call's shape survives its message,
// and where two ranks' shapes differ is said in one line; a message fpm did
// not write is refused, never read past its end.
//
//===----------------------------------------------------------------------===//

#include "cluster/loop_agreement.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace fpm {
namespace {

LoopShape heat(std::int64_t tripCount) {
  fpm_arg data[2]{};
  data[0].kind = FPM_ARG_IN;
  data[0].size = 8;
  data[0].length = tripCount + 2;
  data[0].stride = 1;
  data[0].count = 3;
  data[1].kind = FPM_ARG_OUT;
  data[1].size = 8;
  data[1].length = tripCount;
  data[1].stride = 1;
  data[1].count = 1;
  double sum = 0;
  const fpm_reduction reductions[1] = {{FPM_REDUCE_ADD, FPM_TYPE_DOUBLE, &sum}};
  return loopShape("loop 'heat' (heat.c:12)", tripCount, "gss, 80", 4, data,
                   reductions);
}

TEST(LoopAgreement, AShapeSurvivesItsMessage) {
  const LoopShape shape = heat(1000);
  EXPECT_EQ(decodeLoopShape(encodeLoopShape(shape)), shape);
  EXPECT_EQ(decodeLoopShape(encodeLoopShape(LoopShape{})), LoopShape{});
}

TEST(LoopAgreement, AlikeRanksAgree) {
  const std::vector<LoopShape> ranks{heat(1000), heat(1000), heat(1000)};
  EXPECT_EQ(describeDisagreement(ranks), "");
  EXPECT_EQ(describeDisagreement(std::span<const LoopShape>()), "");
}

TEST(LoopAgreement, TheFirstDifferenceIsNamedWithItsRanks) {
  std::vector<LoopShape> ranks{heat(1000), heat(1000), heat(999)};
  EXPECT_EQ(describeDisagreement(ranks),
            "loop 'heat' (heat.c:12) called with 1000 iterations on rank 0 "
            "but 999 on rank 2");
  ranks[2] = heat(1000);
  ranks[1].label = "loop 'cool' (heat.c:40)";
  EXPECT_EQ(describeDisagreement(ranks),
            "ranks called different loops at once: loop 'heat' (heat.c:12) "
            "on rank 0 but loop 'cool' (heat.c:40) on rank 1");
  ranks[1] = heat(1000);
  ranks[1].schedule = "equal";
  EXPECT_EQ(describeDisagreement(ranks),
            "loop 'heat' (heat.c:12) called with schedule 'gss, 80' on rank "
            "0 but 'equal' on rank 1");
  ranks[1] = heat(1000);
  ranks[2].sections[1].stride = 2;
  EXPECT_EQ(describeDisagreement(ranks),
            "loop 'heat' (heat.c:12) called with data argument 1's stride 1 "
            "on rank 0 but 2 on rank 2");
  ranks[2] = heat(1000);
  ranks[2].sections.pop_back();
  EXPECT_EQ(describeDisagreement(ranks),
            "loop 'heat' (heat.c:12) called with 2 data arguments on rank 0 "
            "but 1 on rank 2");
  ranks[2] = heat(1000);
  ranks[1].reductions[0].type = FPM_TYPE_FLOAT;
  EXPECT_EQ(describeDisagreement(ranks),
            "loop 'heat' (heat.c:12) called with reduction 0 (op 0, type 10) "
            "on rank 0 but (op 0, type 9) on rank 1");
}

TEST(LoopAgreement, AMessageFpmDidNotWriteIsRefused) {
  const std::string bytes = encodeLoopShape(heat(1000));
  // Every truncation, and one byte too many.
  for (std::size_t size = 0; size < bytes.size(); ++size)
    EXPECT_THROW(decodeLoopShape(std::string_view(bytes).substr(0, size)),
                 std::invalid_argument)
        << size;
  EXPECT_THROW(decodeLoopShape(bytes + 'x'), std::invalid_argument);
  // A list that claims more entries than the message holds.
  std::string huge(8, '\0');
  huge += std::string(8, '\0') + std::string(8, '\0') + std::string(8, '\0');
  huge += std::string("\xff\xff\xff\xff\xff\xff\xff\x0f", 8);
  try {
    decodeLoopShape(huge);
    FAIL() << "accepted";
  } catch (const std::invalid_argument &error) {
    EXPECT_NE(std::string(error.what()).find("runs past its end"),
              std::string::npos)
        << error.what();
  }
}

} // namespace
} // namespace fpm
