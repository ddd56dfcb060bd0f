// Runtime ISA detection and the per-ISA kernel tables. Detection runs once (function-local
// static); the active ISA is an atomic so tests may switch it between calls. Thread-safe.
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "isa.h"
#include "isa_impl.h"

namespace dloop::kernels::cpu {
namespace {

#define DLOOP_CPU_KERNELS_TABLE(ns, isa_value)                                                 \
  CpuKernels{isa_value,         ns::kMr,          ns::kNr,          ns::dequantize_row,        \
             ns::pack_a,        ns::pack_b,       ns::gemm_panel,   ns::softmax_cols,          \
             ns::rms_norm_f32,  ns::swiglu_f32,   ns::add_f32,      ns::add_bias_f32,          \
             ns::rope_apply_f32}

const CpuKernels kScalar = DLOOP_CPU_KERNELS_TABLE(scalar, Isa::kScalar);
#if DLOOP_KERNELS_X86
const CpuKernels kAvx2 = DLOOP_CPU_KERNELS_TABLE(avx2, Isa::kAvx2);
const CpuKernels kAvx512 = DLOOP_CPU_KERNELS_TABLE(avx512, Isa::kAvx512);
#endif

#if DLOOP_KERNELS_X86
// F16C from CPUID leaf 1 (ECX bit 29): clang's __builtin_cpu_supports does not know "f16c".
bool has_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & (1u << 29)) != 0;
}
#endif

Isa detect() {
#if DLOOP_KERNELS_X86
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && has_f16c();
  if (avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
    return Isa::kAvx512;
  if (avx2) return Isa::kAvx2;
#endif
  return Isa::kScalar;
}

Isa env_cap(Isa detected) {
  const char* v = std::getenv("DLOOP_KERNELS_ISA");
  if (v == nullptr) return detected;
  Isa want = detected;
  if (std::strcmp(v, "scalar") == 0) want = Isa::kScalar;
  if (std::strcmp(v, "avx2") == 0) want = Isa::kAvx2;
  return static_cast<int>(want) < static_cast<int>(detected) ? want : detected;
}

std::atomic<int>& active_slot() {
  static std::atomic<int> slot{static_cast<int>(env_cap(detected_isa()))};
  return slot;
}

}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
  }
  return "?";
}

Isa detected_isa() {
  static const Isa isa = detect();
  return isa;
}

Isa active_isa() { return static_cast<Isa>(active_slot().load(std::memory_order_relaxed)); }

Isa set_active_isa(Isa isa) {
  int capped = static_cast<int>(isa) < static_cast<int>(detected_isa())
                   ? static_cast<int>(isa)
                   : static_cast<int>(detected_isa());
  active_slot().store(capped, std::memory_order_relaxed);
  return static_cast<Isa>(capped);
}

const CpuKernels& scalar_kernels() { return kScalar; }
#if DLOOP_KERNELS_X86
const CpuKernels& avx2_kernels() { return kAvx2; }
const CpuKernels& avx512_kernels() { return kAvx512; }
#endif

const CpuKernels& kernels_for(Isa isa) {
#if DLOOP_KERNELS_X86
  if (isa == Isa::kAvx512) return kAvx512;
  if (isa == Isa::kAvx2) return kAvx2;
#endif
  (void)isa;
  return kScalar;
}

}  // namespace dloop::kernels::cpu
