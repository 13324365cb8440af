#include <kernelwatch/detail/json_string.hpp>

#include <cstdio>

namespace kernelwatch::detail {

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char ch : valid_utf8(text)) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (static_cast<unsigned char>(ch) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", static_cast<unsigned>(ch));
      out += escaped;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  std::size_t at = 0;
  while (at < text.size()) {
    // The sequence's length by its lead byte, and the range of its second byte (the Unicode
    // Standard's table 3-7: the narrow ranges rule out overlong forms, surrogates and code
    // points past U+10FFFF); 0: a byte that starts no sequence.
    const unsigned char lead = byte(at);
    std::size_t length = 0;
    unsigned char low = 0x80;
    unsigned char high = 0xBF;
    if (lead < 0x80) {
      length = 1;
    } else if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      low = lead == 0xE0 ? 0xA0 : 0x80;
      high = lead == 0xED ? 0x9F : 0xBF;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      low = lead == 0xF0 ? 0x90 : 0x80;
      high = lead == 0xF4 ? 0x8F : 0xBF;
    }
    std::size_t taken = 1;  // well-formed so far
    while (taken < length && at + taken < text.size() &&
           byte(at + taken) >= (taken == 1 ? low : 0x80) &&
           byte(at + taken) <= (taken == 1 ? high : 0xBF)) {
      ++taken;
    }
    if (taken == length) {
      out.append(text, at, taken);
    } else {
      out += "\xEF\xBF\xBD";
    }
    at += taken;
  }
  return out;
}

}  // namespace kernelwatch::detail
