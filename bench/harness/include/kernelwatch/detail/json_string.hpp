#pragma once
// A string as a JSON string literal, for the harness's own JSON lines (kernel records, the
// timeline): the harness does not depend on a JSON library.

#include <string>
#include <string_view>

namespace kernelwatch::detail {

/// `text` quoted, with `"`, `\` and control characters escaped, as valid_utf8 makes it.
[[nodiscard]] std::string json_string(const std::string& text);

/// `text` with each ill-formed UTF-8 subpart (Unicode's "maximal subpart": overlong forms,
/// surrogates, stray or missing continuation bytes) replaced by U+FFFD. A JSON text is UTF-8:
/// one bad byte from a device or host name made a whole result file unreadable.
[[nodiscard]] std::string valid_utf8(std::string_view text);

}  // namespace kernelwatch::detail
