#include <kernelwatch/run_options.hpp>

#include <cstring>
#include <stdexcept>
#include <string_view>

namespace kernelwatch {
namespace {

constexpr std::string_view kernelwatch_prefix = "--kernelwatch_";

// Google Benchmark's boolean flag syntax: "--flag", "--flag=true|1|yes", "--flag=false|0|no".
bool is_true_flag(std::string_view argument, std::string_view name) {
  if (argument.substr(0, name.size()) != name) {
    return false;
  }
  const std::string_view rest = argument.substr(name.size());
  return rest.empty() || rest == "=true" || rest == "=1" || rest == "=yes";
}

int parse_device(std::string_view text) {
  int value = 0;
  if (text.empty()) {
    throw std::invalid_argument("--kernelwatch_device needs a device ordinal");
  }
  for (char c : text) {
    if (c < '0' || c > '9' || value > 1000) {
      throw std::invalid_argument("--kernelwatch_device: not a device ordinal: '" +
                                  std::string(text) + "'");
    }
    value = value * 10 + (c - '0');
  }
  return value;
}

run_options current_options;

}  // namespace

run_options parse_run_options(int& argc, char** argv) {
  run_options options;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view argument = argv[i];
    if (argument.substr(0, kernelwatch_prefix.size()) != kernelwatch_prefix) {
      options.list_only = options.list_only || is_true_flag(argument, "--benchmark_list_tests");
      options.help = options.help || argument == "--help" || argument == "-h";
      argv[kept++] = argv[i];
      continue;
    }
    const std::size_t equals = argument.find('=');
    const std::string_view name = argument.substr(0, equals);
    const std::string_view value =
        equals == std::string_view::npos ? std::string_view{} : argument.substr(equals + 1);
    if (name == "--kernelwatch_cache") {
      if (value == "cold") {
        options.cache = cache_mode::cold;
      } else if (value == "hot") {
        options.cache = cache_mode::hot;
      } else {
        throw std::invalid_argument("--kernelwatch_cache must be 'cold' or 'hot', not '" +
                                    std::string(value) + "'");
      }
    } else if (name == "--kernelwatch_device") {
      options.device = parse_device(value);
    } else {
      throw std::invalid_argument("unknown flag '" + std::string(argument) + "'");
    }
  }
  argc = kept;
  argv[argc] = nullptr;
  return options;
}

const run_options& current_run_options() { return current_options; }

void set_current_run_options(const run_options& options) { current_options = options; }

const char* to_string(cache_mode mode) noexcept { return mode == cache_mode::hot ? "hot" : "cold"; }

std::string run_options_help() {
  return "kernelwatch flags:\n"
         "  --kernelwatch_cache=cold|hot   cold (default): evict L2 before every timed launch;\n"
         "                                 hot: inputs may stay in L2 between launches\n"
         "  --kernelwatch_device=N         CUDA device ordinal to run on (default 0)\n"
         "Exit codes: 0 ran, 2 bad arguments, 3 CUDA context lost (sticky error), 4 no GPU.\n";
}

}  // namespace kernelwatch
