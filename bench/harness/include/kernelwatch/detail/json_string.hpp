#pragma once
// A string as a JSON string literal, for the harness's own JSON lines (kernel records, the
// timeline): the harness does not depend on a JSON library.

#include <string>

namespace kernelwatch::detail {

/// `text` quoted, with `"`, `\` and control characters escaped.
[[nodiscard]] std::string json_string(const std::string& text);

}  // namespace kernelwatch::detail
