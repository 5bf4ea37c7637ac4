// Text from files (node and tensor names, keys, paths) reaches error lines and logs. A
// corrupted or hostile file may put any byte there, so what is printed is made safe
// first: valid UTF-8 passes through unchanged, and every control byte and every byte
// that is not part of a valid UTF-8 sequence is written as "\xNN" (two upper-case hex
// digits). The result is valid UTF-8 with no control characters (but the newlines that
// `keep_newlines` lets through), whatever the input.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace infer {

namespace printable_detail {

// Length of the valid UTF-8 sequence that starts at s[i] (1-4), or 0 when the bytes there
// are not one (a stray continuation byte, an overlong form, a surrogate, a code point
// above U+10FFFF, or a sequence cut short).
inline size_t utf8_sequence_length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;  // no overlong forms
    if (b0 == 0xED) hi = 0x9F;  // no UTF-16 surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;  // no overlong forms
    if (b0 == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return n;
}

inline bool is_escaped_control(unsigned char c, bool keep_newlines) {
  if (c == '\n') return !keep_newlines;
  return c < 0x20 || c == 0x7F;
}

}  // namespace printable_detail

// `text` with control bytes and invalid UTF-8 escaped as "\xNN" (see above).
inline std::string printable(std::string_view text, bool keep_newlines = false) {
  using namespace printable_detail;
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const size_t n = utf8_sequence_length(text, i);
    if (n == 0 || (n == 1 && is_escaped_control(c, keep_newlines))) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
      ++i;
      continue;
    }
    out.append(text.data() + i, n);
    i += n;
  }
  return out;
}

// True when printable(text, keep_newlines) would return `text` unchanged.
inline bool is_printable(std::string_view text, bool keep_newlines = false) {
  using namespace printable_detail;
  for (size_t i = 0; i < text.size();) {
    const size_t n = utf8_sequence_length(text, i);
    if (n == 0 || (n == 1 && is_escaped_control(static_cast<unsigned char>(text[i]), keep_newlines)))
      return false;
    i += n;
  }
  return true;
}

}  // namespace infer
