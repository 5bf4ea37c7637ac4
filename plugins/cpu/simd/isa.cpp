#include "isa.hpp"

#include <cstdlib>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

namespace infer::cpu::simd {
namespace {

#if defined(__x86_64__) || defined(__i386__)
// __builtin_cpu_supports reads CPUID and also checks that the OS saves the wide
// registers (XGETBV), which a raw CPUID bit does not say.
bool cpu_has_avx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
bool cpu_has_avx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") && cpu_has_avx2();
}

// Bit `bit` of register `reg` of CPUID leaf `leaf`, subleaf `sub` (false where the CPU
// has no such leaf).
enum class Reg { kEax, kEbx, kEcx, kEdx };
bool cpuid_bit(unsigned leaf, unsigned sub, Reg reg, unsigned bit) {
  unsigned r[4] = {0, 0, 0, 0};
  if (__get_cpuid_count(leaf, sub, &r[0], &r[1], &r[2], &r[3]) == 0) return false;
  return (r[static_cast<int>(reg)] >> bit & 1u) != 0;
}
#endif

}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
      return "scalar";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
    case Isa::kNeon:
      return "neon";
  }
  return "unknown";
}

std::optional<Isa> parse_isa(std::string_view name) {
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kNeon})
    if (name == isa_name(isa)) return isa;
  return std::nullopt;
}

bool cpu_has_avx512_vnni() {
#if defined(__x86_64__)
  // CPUID.(EAX=7, ECX=0):ECX bit 11 (AVX512_VNNI); the OS support of the zmm state is
  // part of cpu_has_avx512().
  static const bool has = cpu_has_avx512() && cpuid_bit(7, 0, Reg::kEcx, 11);
  return has;
#else
  return false;
#endif
}

bool cpu_has_avx_vnni() {
#if defined(__x86_64__)
  // CPUID.(EAX=7, ECX=1):EAX bit 4 (AVX_VNNI; clang 14's __builtin_cpu_supports does not
  // know it); the OS support of the ymm state is part of cpu_has_avx2().
  static const bool has = cpu_has_avx2() && cpuid_bit(7, 1, Reg::kEax, 4);
  return has;
#else
  return false;
#endif
}

bool cpu_has_avx512_bf16() {
#if defined(__x86_64__)
  // CPUID.(EAX=7, ECX=1):EAX bit 5 (AVX512_BF16; clang 14's __builtin_cpu_supports does
  // not know it); the OS support of the zmm state is part of cpu_has_avx512().
  static const bool has = cpu_has_avx512() && cpuid_bit(7, 1, Reg::kEax, 5);
  return has;
#else
  return false;
#endif
}

bool cpu_has_avx512_vbmi() {
#if defined(__x86_64__)
  // CPUID.(EAX=7, ECX=0):ECX bit 1 (AVX512_VBMI).
  static const bool has = cpu_has_avx512() && cpuid_bit(7, 0, Reg::kEcx, 1);
  return has;
#else
  return false;
#endif
}

bool cpu_has_neon_dotprod() {
#if defined(__aarch64__) && defined(__linux__)
  // HWCAP_ASIMDDP (bit 20 of AT_HWCAP), spelled out: older headers lack the name.
  static const bool has = (getauxval(AT_HWCAP) & (1UL << 20)) != 0;
  return has;
#else
  return false;
#endif
}

bool isa_supported(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
      return true;
#if defined(__x86_64__)
    case Isa::kAvx2:
      return cpu_has_avx2();
    case Isa::kAvx512:
      return cpu_has_avx512();
#endif
#if defined(__aarch64__)
    case Isa::kNeon:
      return true;  // Advanced SIMD is part of the AArch64 base architecture.
#endif
    default:
      return false;
  }
}

std::vector<Isa> supported_isas() {
  std::vector<Isa> out;
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kNeon})
    if (isa_supported(isa)) out.push_back(isa);
  return out;
}

Isa best_isa() {
  for (Isa isa : {Isa::kAvx512, Isa::kAvx2, Isa::kNeon})
    if (isa_supported(isa)) return isa;
  return Isa::kScalar;
}

IsaChoice choose_isa(const char* env_value) {
  IsaChoice c;
  c.isa = best_isa();
  if (env_value == nullptr || *env_value == '\0') return c;
  const std::optional<Isa> asked = parse_isa(env_value);
  if (!asked) {
    c.error =
        std::string("INFER_CPU_ISA='") + env_value + "' is not one of scalar, avx2, avx512, neon";
  } else if (!isa_supported(*asked)) {
    c.error = std::string("INFER_CPU_ISA=") + env_value +
              " but this CPU or build cannot run it (supported here: ";
    bool first = true;
    for (Isa s : supported_isas()) {
      c.error += (first ? "" : ", ") + std::string(isa_name(s));
      first = false;
    }
    c.error += ")";
  } else {
    c.isa = *asked;
  }
  return c;
}

const IsaChoice& selected_isa() {
  static const IsaChoice choice = choose_isa(std::getenv("INFER_CPU_ISA"));
  return choice;
}

}  // namespace infer::cpu::simd
