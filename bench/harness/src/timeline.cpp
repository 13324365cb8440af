#include <kernelwatch/detail/json_string.hpp>
#include <kernelwatch/detail/timeline.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>

namespace kernelwatch::detail {
namespace {

struct timeline_file {
  std::mutex mutex;
  std::FILE* file = nullptr;
  bool opened = false;
};

timeline_file& the_file() {
  static timeline_file file;
  return file;
}

double unix_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Seconds since this process was exec'd: field 22 of /proc/self/stat (start time in clock
// ticks since boot) against /proc/uptime. -1 where /proc is not Linux's.
double process_age_seconds() noexcept try {
  std::ifstream stat("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto name_end = text.rfind(')');  // the command name may hold spaces
  std::ifstream uptime_file("/proc/uptime");
  double uptime = -1.0;
  if (name_end == std::string::npos || !(uptime_file >> uptime)) {
    return -1.0;
  }
  std::istringstream fields(text.substr(name_end + 2));
  std::string field;
  for (int index = 3; index <= 22 && fields >> field; ++index) {
    if (index == 22) {
      return uptime - std::stod(field) / static_cast<double>(sysconf(_SC_CLK_TCK));
    }
  }
  return -1.0;
} catch (...) {  // a field that is not a number: the timeline never ends a run
  return -1.0;
}

void write_line(const std::string& line) {
  timeline_file& timeline = the_file();
  const std::lock_guard<std::mutex> lock(timeline.mutex);
  if (!timeline.opened) {
    timeline.opened = true;
    const char* folder = std::getenv(timeline_env);
    const std::string path = std::string(folder) + "/" + std::to_string(getpid()) + ".jsonl";
    timeline.file = std::fopen(path.c_str(), "a");
    if (timeline.file == nullptr) {
      std::fprintf(stderr, "kernelwatch: note: cannot write the timeline %s; it is off\n",
                   path.c_str());
    }
  }
  if (timeline.file != nullptr) {
    std::fputs(line.c_str(), timeline.file);
    std::fflush(timeline.file);  // a process that crashes keeps its marks so far
  }
}

bool timeline_on() {
  const char* folder = std::getenv(timeline_env);
  return folder != nullptr && *folder != '\0';
}

// One line: the phase, then text fields (empty ones left out), then numbers.
void mark(const char* phase, const std::vector<std::pair<const char*, std::string>>& texts,
          const timeline_fields& fields) {
  try {
    char head[96];
    std::snprintf(head, sizeof head, "{\"t\": %.6f, \"pid\": %d, \"phase\": ", unix_seconds(),
                  static_cast<int>(getpid()));
    std::string line = head + json_string(phase);
    for (const auto& [name, text] : texts) {
      if (!text.empty()) {
        line += ", " + json_string(name) + ": " + json_string(text);
      }
    }
    for (const auto& [name, value] : fields) {
      char number[64];
      std::snprintf(number, sizeof number, "%.9g", value);
      line += ", " + json_string(name) + ": " + number;
    }
    write_line(line + "}\n");
  } catch (...) {
    // A timeline is a diagnostic: it never ends a run.
  }
}

}  // namespace

void timeline_mark(const char* phase, const std::string& instance, const timeline_fields& fields) {
  if (timeline_on()) {
    mark(phase, {{"instance", instance}}, fields);
  }
}

void timeline_start(int argc, char** argv) {
  if (!timeline_on()) {
    return;
  }
  std::string arguments;
  for (int i = 1; i < argc; ++i) {
    arguments += (i > 1 ? " " : "") + std::string(argv[i]);
  }
  mark("main", {{"args", arguments}}, {{"process_age_s", process_age_seconds()}});
}

}  // namespace kernelwatch::detail
