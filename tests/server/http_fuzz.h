// The HTTP request fuzz entry shared by the libFuzzer target (http_fuzz_main.cpp, built with
// -DDLOOP_FUZZ=ON) and the GoogleTest replay (http_fuzz_test.cpp): bytes -> Beast's request
// parser under the server's limits -> parse_chat_request() on the body. Aborts on a broken
// invariant (an error that is not a well-formed 4xx); errors are expected. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace dloop::fuzz {

enum class HttpFuzzLevel { kHttpRejected = 0, kJsonRejected = 1, kFieldRejected = 2, kAccepted = 3 };

HttpFuzzLevel fuzz_http_request(const uint8_t* data, size_t size);

}  // namespace dloop::fuzz
