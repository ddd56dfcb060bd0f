// Internal: includes the x86 intrinsics headers. GCC 12 reports false -Wmaybe-uninitialized
// warnings inside the AVX-512 intrinsics that use _mm512_undefined_* (GCC bug 105593, fixed in
// 13); those warnings are located in the header, so they are silenced for the header only.
#pragma once

#if defined(__x86_64__) || defined(__i386__)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#include <immintrin.h>
#endif
#endif
