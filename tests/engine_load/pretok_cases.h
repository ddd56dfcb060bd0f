// Expected pre-tokenizer splits, generated with Python's `regex` module (the engine the
// Hugging Face and llama.cpp patterns are written for) from the same patterns:
//   regex.compile(PATTERN).findall(text)
// Non-ASCII spaces and controls are written as \u escapes.
#pragma once

#include <string>
#include <vector>

namespace dloop::testing {

inline const std::vector<std::string> kPretokTexts = {
    "Hello, world! It's 2024.",
    "  héllo wörld\n\n  naïve café 12345678",
    "日本語のテキスト、東京123。",
    "Привет, мир! I'M HERE'LL",
    "emoji 😀👍🏽 ok?!\r\n\tx",
    "x\u00a0y\u2003z \u3000end",
    "١٢٣ arabic digits and ½ ² Ⅻ",
    "a\n\n\nb   \n c",
};
inline const std::vector<std::vector<std::string>> kPretokQwen2 = {
    {"Hello", ",", " world", "!", " It", "'s", " ", "2", "0", "2", "4", "."},
    {" ", " héllo", " wörld", "\n\n", " ", " naïve", " café", " ", "1", "2", "3", "4", "5", "6", "7", "8"},
    {"日本語のテキスト", "、東京", "1", "2", "3", "。"},
    {"Привет", ",", " мир", "!", " I", "'M", " HERE", "'LL"},
    {"emoji", " 😀👍🏽", " ok", "?!\r\n", "\tx"},
    {"x", "\u00a0y", "\u2003z", " ", "\u3000end"},
    {"١", "٢", "٣", " arabic", " digits", " and", " ", "½", " ", "²", " ", "Ⅻ"},
    {"a", "\n\n\n", "b", "   \n", " c"},
};
inline const std::vector<std::vector<std::string>> kPretokLlama3 = {
    {"Hello", ",", " world", "!", " It", "'s", " ", "202", "4", "."},
    {" ", " héllo", " wörld", "\n\n", " ", " naïve", " café", " ", "123", "456", "78"},
    {"日本語のテキスト", "、東京", "123", "。"},
    {"Привет", ",", " мир", "!", " I", "'M", " HERE", "'LL"},
    {"emoji", " 😀👍🏽", " ok", "?!\r\n", "\tx"},
    {"x", "\u00a0y", "\u2003z", " ", "\u3000end"},
    {"١٢٣", " arabic", " digits", " and", " ", "½", " ", "²", " ", "Ⅻ"},
    {"a", "\n\n\n", "b", "   \n", " c"},
};
inline const std::vector<std::vector<std::string>> kPretokGpt2 = {
    {"Hello", ",", " world", "!", " It", "'s", " 2024", "."},
    {" ", " héllo", " wörld", "\n\n ", " naïve", " café", " 12345678"},
    {"日本語のテキスト", "、", "東京", "123", "。"},
    {"Привет", ",", " мир", "!", " I", "'", "M", " HERE", "'", "LL"},
    {"emoji", " 😀👍🏽", " ok", "?!", "\r\n", "\t", "x"},
    {"x", "\u00a0", "y", "\u2003", "z", " ", "\u3000", "end"},
    {"١٢٣", " arabic", " digits", " and", " ½", " ²", " Ⅻ"},
    {"a", "\n\n", "\n", "b", "   \n", " c"},
};

}  // namespace dloop::testing
