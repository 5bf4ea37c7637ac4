#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "simd/isa.hpp"

namespace infer::cpu::simd {
namespace {

TEST(Isa, NamesRoundTrip) {
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kNeon}) {
    auto parsed = parse_isa(isa_name(isa));
    ASSERT_TRUE(parsed.has_value()) << isa_name(isa);
    EXPECT_EQ(*parsed, isa);
  }
  EXPECT_FALSE(parse_isa("sse2").has_value());
  EXPECT_FALSE(parse_isa("AVX2").has_value());
}

TEST(Isa, ScalarAlwaysSupportedAndFirst) {
  const auto isas = supported_isas();
  ASSERT_FALSE(isas.empty());
  EXPECT_EQ(isas.front(), Isa::kScalar);
  EXPECT_TRUE(isa_supported(best_isa()));
}

TEST(Isa, ArchitectureSpecificSetsAreExclusive) {
#if defined(__x86_64__)
  EXPECT_FALSE(isa_supported(Isa::kNeon));
  // AVX-512 implies AVX2 in this library's definition (its kernels use both).
  if (isa_supported(Isa::kAvx512)) {
    EXPECT_TRUE(isa_supported(Isa::kAvx2));
  }
#elif defined(__aarch64__)
  EXPECT_TRUE(isa_supported(Isa::kNeon));
  EXPECT_FALSE(isa_supported(Isa::kAvx2));
  EXPECT_FALSE(isa_supported(Isa::kAvx512));
  EXPECT_EQ(best_isa(), Isa::kNeon);
#endif
}

TEST(Isa, Avx512Bf16DetectionAgreesWithTheKernel) {
  // The kernel's own flag list (Linux) names avx512_bf16 exactly when CPUID leaf 7.1 EAX
  // bit 5 is set; the library also requires usable AVX-512.
  if (cpu_has_avx512_bf16()) {
    EXPECT_TRUE(isa_supported(Isa::kAvx512));
  }
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    bool listed = false;
    for (std::string w; words >> w;) listed = listed || w == "avx512_bf16";
    EXPECT_EQ(cpu_has_avx512_bf16(), listed && isa_supported(Isa::kAvx512));
    return;
  }
  GTEST_SKIP() << "/proc/cpuinfo has no flags line to compare with (not Linux on x86-64)";
}

TEST(Isa, OverrideChoosesTheNamedVariant) {
  IsaChoice unset = choose_isa(nullptr);
  EXPECT_TRUE(unset.error.empty());
  EXPECT_EQ(unset.isa, best_isa());
  EXPECT_EQ(choose_isa("").isa, best_isa());

  IsaChoice scalar = choose_isa("scalar");
  EXPECT_TRUE(scalar.error.empty());
  EXPECT_EQ(scalar.isa, Isa::kScalar);
}

TEST(Isa, OverrideRejectsUnknownAndUnsupportedNames) {
  IsaChoice bad = choose_isa("avx9");
  EXPECT_NE(bad.error.find("INFER_CPU_ISA='avx9'"), std::string::npos) << bad.error;
  EXPECT_NE(bad.error.find("scalar, avx2, avx512, neon"), std::string::npos) << bad.error;

  for (Isa isa : {Isa::kAvx2, Isa::kAvx512, Isa::kNeon}) {
    if (isa_supported(isa)) continue;
    IsaChoice c = choose_isa(isa_name(isa));
    EXPECT_NE(c.error.find("cannot run it"), std::string::npos) << c.error;
    EXPECT_NE(c.error.find("supported here: scalar"), std::string::npos) << c.error;
  }
}

}  // namespace
}  // namespace infer::cpu::simd
