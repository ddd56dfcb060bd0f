// ApiError: an HTTP error answer in the OpenAI shape,
//   {"error": {"message": ..., "type": ..., "param": ... or null, "code": ... or null}}
// with the status code that carries it. Every malformed request the server sees becomes one of
// these (never a crash or a dropped connection). Plain value; thread-safe to copy.
#pragma once

#include <string>

#include "dloop/base/json.h"

namespace dloop::server {

struct ApiError {
  int status = 400;
  std::string type = "invalid_request_error";  // invalid_request_error, rate_limit_error, server_error, ...
  std::string message;                         // names the field, value or byte offset at fault
  std::string param;                           // "" -> null; e.g. "messages[2].content"
  std::string code;                            // "" -> null; e.g. "model_not_found"

  base::Json to_json() const;                  // the {"error": {...}} body
};

inline ApiError bad_request(std::string message, std::string param = "", std::string code = "") {
  return ApiError{400, "invalid_request_error", std::move(message), std::move(param), std::move(code)};
}

}  // namespace dloop::server
