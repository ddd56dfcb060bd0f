// Small string utilities shared by every module: UTF-8 validation, trimming, splitting, edit
// distance for did-you-mean suggestions, and duration parsing ("250ms", "10s", "2m").
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dloop::base {

// Byte offset of the first invalid UTF-8 sequence, or nullopt when s is valid UTF-8.
std::optional<size_t> find_invalid_utf8(std::string_view s);

std::string_view trim(std::string_view s);
std::vector<std::string> split(std::string_view s, char sep);
bool starts_with(std::string_view s, std::string_view prefix);
bool ends_with(std::string_view s, std::string_view suffix);

// Levenshtein distance (bytes).
size_t edit_distance(std::string_view a, std::string_view b);
// The candidate closest to `word` when it is plausibly a typo of it (distance <= max(1, len/3)).
std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates);

// "1500ms", "10s", "2.5s", "3m", "1h" -> milliseconds; nullopt when malformed or negative.
std::optional<int64_t> parse_duration_ms(std::string_view text);

}  // namespace dloop::base
