// The instruction sets the CPU kernels are written for, the detection of what this CPU
// runs, and the INFER_CPU_ISA override. Every SIMD routine in this library takes the Isa
// to use as an argument, so one process can run (and a test can compare) several
// variants; the plugin resolves selected_isa() once at load and passes it everywhere.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace infer::cpu::simd {

enum class Isa {
  kScalar,  // portable C++, the reference every variant is tested against
  kAvx2,    // x86-64 AVX2 + FMA (+ F16C)
  kAvx512,  // x86-64 AVX-512 F/BW/DQ/VL (+ FMA)
  kNeon,    // AArch64 Advanced SIMD
};

const char* isa_name(Isa isa);
// "scalar", "avx2", "avx512", "neon" (case-sensitive, as the variable documents).
std::optional<Isa> parse_isa(std::string_view name);

// Whether this build has code for `isa` AND this CPU (and OS) can run it.
bool isa_supported(Isa isa);
// The integer dot-product extensions, which the Isa levels do not imply (Zen 4 and Ice
// Lake have AVX512-VNNI but not AVX-VNNI; Skylake-SP has AVX-512 without either): qgemm
// checks them at run time and falls back to vpmaddwd. False off x86-64.
bool cpu_has_avx512_vnni();  // AVX512-VNNI (vpdpbusd on zmm), with AVX-512 usable
bool cpu_has_avx_vnni();     // AVX-VNNI (VEX vpdpbusd on ymm), with AVX2 usable
// AVX512_BF16 (vcvtne2ps2bf16, vdpbf16ps), with AVX-512 usable: the bfloat16 GEMM
// (gemm.hpp, GemmPrecision::kBfloat16) runs only where this holds (Zen 4/5, Cooper Lake,
// Sapphire Rapids; not Skylake-SP or Ice Lake).
bool cpu_has_avx512_bf16();
// AVX512_VBMI (vpermi2b: a 128-byte table lookup per instruction), with AVX-512 usable
// (Ice Lake and later, Zen 4/5; not Skylake-SP).
bool cpu_has_avx512_vbmi();
// AArch64's dot-product extension (sdot / udot, FEAT_DotProd); false elsewhere.
bool cpu_has_neon_dotprod();

// Every supported ISA, scalar first: the variants a test should run.
std::vector<Isa> supported_isas();
// The best supported ISA (AVX-512 > AVX2 > scalar on x86-64; NEON on AArch64).
Isa best_isa();

// The ISA the plugin uses: INFER_CPU_ISA when set (and valid and supported), else
// best_isa(). Resolved once, on first call. `error` is non-empty when the variable asked
// for something unknown or unsupported; the plugin then refuses to load its device with
// that message rather than silently running another ISA.
struct IsaChoice {
  Isa isa = Isa::kScalar;
  std::string error;
};
const IsaChoice& selected_isa();
// Resolves a value of INFER_CPU_ISA (nullptr or "" = unset) without caching: the logic
// behind selected_isa(), exposed for tests.
IsaChoice choose_isa(const char* env_value);

}  // namespace infer::cpu::simd
