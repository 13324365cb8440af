#include <kernelwatch/detail/run_options.hpp>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kernelwatch::detail {
namespace {

constexpr std::string_view kernelwatch_prefix = "--kernelwatch_";
constexpr std::string_view min_time_prefix = "--benchmark_min_time";

// How Google Benchmark (1.7 and 1.8 alike: IsTruthyFlagValue) reads a boolean flag's value, so
// that kernelwatch agrees with it on whether a run only lists: empty (the bare flag) is true;
// one character is true unless it is 0, f, F, n, N or not alphanumeric; a longer value is true
// unless it is false, no or off in any case. "--benchmark_list_tests=on" once listed while
// kernelwatch prepared a GPU (exit 4 on a GPU-less runner).
bool google_benchmark_truthy(std::string_view value) {
  if (value.size() == 1) {
    const char c = value[0];
    return std::isalnum(static_cast<unsigned char>(c)) != 0 && c != '0' && c != 'f' &&
           c != 'F' && c != 'n' && c != 'N';
  }
  std::string lower(value);
  for (char& c : lower) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return lower != "false" && lower != "no" && lower != "off";
}

// The value Google Benchmark gives boolean flag `name` ("--flag" or "--flag=VALUE") if
// `argument` sets it.
std::optional<bool> google_benchmark_bool(std::string_view argument, std::string_view name) {
  if (argument.substr(0, name.size()) != name) {
    return std::nullopt;
  }
  const std::string_view rest = argument.substr(name.size());
  if (rest.empty()) {
    return true;
  }
  if (rest[0] != '=') {
    return std::nullopt;
  }
  return google_benchmark_truthy(rest.substr(1));
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

// A number in `range` that is all of `text`; anything else is check_number's one-line error.
double parse_number(std::string_view flag, std::string_view text, const number_range& range) {
  const std::string copy(text);
  char* end = nullptr;
  const double value = std::strtod(copy.c_str(), &end);
  const bool whole_text = !copy.empty() && end == copy.c_str() + copy.size();
  return check_number(flag, whole_text ? value : NAN, range, copy);
}

// --flag alone, or =true|1|yes|false|0|no, as Google Benchmark's boolean flags take them.
bool parse_bool(std::string_view flag, std::string_view text, bool given) {
  if (!given || text == "true" || text == "1" || text == "yes") {
    return true;
  }
  if (text == "false" || text == "0" || text == "no") {
    return false;
  }
  throw std::invalid_argument(std::string(flag) + " must be true or false, not '" +
                              std::string(text) + "'");
}

injected_slowdown parse_injection(std::string_view text) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    throw std::invalid_argument("--kernelwatch_inject must be REGEX:FRACTION, not '" +
                                std::string(text) + "'");
  }
  injected_slowdown inject{std::string(text.substr(0, colon)),
                           parse_number("--kernelwatch_inject's FRACTION",
                                        text.substr(colon + 1), {0.0, 10.0})};
  try {
    [[maybe_unused]] const std::regex check(inject.pattern);
  } catch (const std::regex_error& error) {
    throw std::invalid_argument("--kernelwatch_inject: bad regex '" + inject.pattern +
                                "': " + error.what());
  }
  return inject;
}

run_options current_options;

}  // namespace

double check_number(std::string_view name, double value, const number_range& range,
                    std::string_view given) {
  const bool too_low = range.low_excluded ? value <= range.low : value < range.low;
  if (!std::isfinite(value) || too_low || value > range.high ||
      (range.whole && value != std::floor(value))) {
    char limits[96];
    std::snprintf(limits, sizeof(limits),
                  range.low_excluded ? " must be %s above %g, at most %g, not '"
                                     : " must be %s from %g to %g, not '",
                  range.whole ? "a whole number" : "a number", range.low, range.high);
    throw std::invalid_argument(std::string(name) + limits + std::string(given) + "'");
  }
  return value;
}

run_options parse_run_options(int& argc, char** argv) {
  run_options options;
  // Google Benchmark takes a flag's default from its upper-case environment variable, and the
  // last occurrence on the command line wins.
  if (const char* listing = std::getenv("BENCHMARK_LIST_TESTS")) {
    options.list_only = google_benchmark_truthy(listing);
  }
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view argument = argv[i];
    if (argument.substr(0, min_time_prefix.size()) == min_time_prefix) {
      options.min_time_dropped = true;
      continue;
    }
    if (argument.substr(0, kernelwatch_prefix.size()) != kernelwatch_prefix) {
      if (const auto listing = google_benchmark_bool(argument, "--benchmark_list_tests")) {
        options.list_only = *listing;
      }
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
    } else if (name == "--kernelwatch_noise_target") {
      options.sampling.noise_target = parse_number(name, value, noise_target_range);
    } else if (name == "--kernelwatch_max_time") {
      options.sampling.max_time = parse_number(name, value, max_time_range);
    } else if (name == "--kernelwatch_min_samples") {
      options.sampling.min_samples = static_cast<int>(parse_number(name, value, min_samples_range));
    } else if (name == "--kernelwatch_throttle_threshold") {
      options.sampling.throttle_threshold = parse_number(name, value, {0.0, 1.0});
    } else if (name == "--kernelwatch_inject") {
      options.inject = parse_injection(value);
    } else if (name == "--kernelwatch_blocking_kernel") {
      options.blocking_kernel = parse_bool(name, value, equals != std::string_view::npos);
    } else if (name == "--kernelwatch_hang_timeout") {
      options.hang_timeout = parse_number(name, value, {0.0, 86400.0});
    } else if (name == "--kernelwatch_keep_set_ups") {
      if (value == "declared") {
        options.keep_set_ups = set_up_keeping::declared;
      } else if (value == "all") {
        options.keep_set_ups = set_up_keeping::all;
      } else if (value == "running") {
        options.keep_set_ups = set_up_keeping::running;
      } else {
        throw std::invalid_argument(
            "--kernelwatch_keep_set_ups must be 'declared', 'all' or 'running', not '" +
            std::string(value) + "'");
      }
    } else {
      throw std::invalid_argument("unknown flag '" + std::string(argument) + "'");
    }
  }
  argc = kept;
  argv[argc] = nullptr;
  return options;
}

const char* minimal_min_time_flag() {
  // Google Benchmark 1.8 wants a unit suffix (and warns without one); 1.7 refuses it.
  return KERNELWATCH_MINIMAL_MIN_TIME_FLAG;
}

const run_options& current_run_options() { return current_options; }

void set_current_run_options(const run_options& options) { current_options = options; }

const char* to_string(cache_mode mode) noexcept { return mode == cache_mode::hot ? "hot" : "cold"; }

const char* to_string(set_up_keeping keeping) noexcept {
  switch (keeping) {
    case set_up_keeping::all:
      return "all";
    case set_up_keeping::running:
      return "running";
    case set_up_keeping::declared:
      break;
  }
  return "declared";
}

std::string run_options_help() {
  return "kernelwatch flags:\n"
         "  --kernelwatch_cache=cold|hot   cold (default): evict L2 before every timed launch;\n"
         "                                 hot: inputs may stay in L2 between launches\n"
         "  --kernelwatch_device=N         CUDA device ordinal to run on (default 0)\n"
         "  --kernelwatch_noise_target=F   sample each repetition until the 95% confidence\n"
         "                                 interval of its median is F wide, relative (0.005)\n"
         "  --kernelwatch_max_time=S       ... or S seconds of sampling have passed (0.25;\n"
         "                                 host-bound benchmarks: 0.1 at most)\n"
         "  --kernelwatch_min_samples=N    samples before the noise target is checked (10)\n"
         "  --kernelwatch_throttle_threshold=F\n"
         "                                 discard samples taken below F x the maximum SM\n"
         "                                 clock (0.75)\n"
         "  --kernelwatch_inject=REGEX:F   make matching benchmarks exactly F slower (selftest)\n"
         "  --kernelwatch_blocking_kernel=true|false\n"
         "                                 hold the stream while a sample is enqueued, so\n"
         "                                 host latency is not timed (true; host-bound\n"
         "                                 benchmarks never are held)\n"
         "  --kernelwatch_hang_timeout=S   end the process (exit 5) when a benchmark makes no\n"
         "                                 progress for S seconds: a kernel that never\n"
         "                                 finishes (120; 0: never)\n"
         "  --kernelwatch_keep_set_ups=declared|all|running\n"
         "                                 keep set_up_kept objects while other instances run,\n"
         "                                 set_up_once ones only while theirs does (declared,\n"
         "                                 default); keep every object (all); or none past its\n"
         "                                 instance (running)\n"
         "Exit codes: 0 ran, 2 bad arguments, 3 CUDA context lost (sticky error), 4 no GPU,\n"
         "5 a benchmark hung (--kernelwatch_hang_timeout).\n";
}

}  // namespace kernelwatch::detail
