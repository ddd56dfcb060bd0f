// libFuzzer entry for the HTTP request parser (built with -DDLOOP_FUZZ=ON and clang).
#include "http_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  dloop::fuzz::fuzz_http_request(data, size);
  return 0;
}
