#include <kernelwatch/detail/json_string.hpp>
#include <kernelwatch/detail/kernel_record.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <vector>

namespace kernelwatch::detail {
namespace {

std::string triple(const dim3& d) {
  return "[" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + "]";
}

std::string kernel_json(const cudaKernelNodeParams& params) {
  std::ostringstream out;
  const char* name = nullptr;
  if (cudaFuncGetName(&name, params.func) != cudaSuccess || name == nullptr) {
    (void)cudaGetLastError();
    name = "";
  }
  out << "{\"name\":" << json_string(name) << ",\"grid\":" << triple(params.gridDim)
      << ",\"block\":" << triple(params.blockDim)
      << ",\"dynamic_shared_bytes\":" << params.sharedMemBytes;
  cudaFuncAttributes attributes{};
  if (cudaFuncGetAttributes(&attributes, params.func) == cudaSuccess) {
    const unsigned threads = params.blockDim.x * params.blockDim.y * params.blockDim.z;
    int blocks_per_sm = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, params.func,
                                                      static_cast<int>(threads),
                                                      params.sharedMemBytes) != cudaSuccess) {
      (void)cudaGetLastError();
      blocks_per_sm = -1;
    }
    out << ",\"registers\":" << attributes.numRegs
        << ",\"static_shared_bytes\":" << attributes.sharedSizeBytes
        << ",\"local_bytes\":" << attributes.localSizeBytes
        << ",\"const_bytes\":" << attributes.constSizeBytes
        << ",\"binary_version\":" << attributes.binaryVersion
        << ",\"blocks_per_sm\":" << blocks_per_sm;
  } else {
    (void)cudaGetLastError();
  }
  out << "}";
  return out.str();
}

const char* node_kind(cudaGraphNodeType type) {
  switch (type) {
    case cudaGraphNodeTypeMemcpy: return "memcpy";
    case cudaGraphNodeTypeMemset: return "memset";
    case cudaGraphNodeTypeHost: return "host";
    case cudaGraphNodeTypeEventRecord: return "event_record";
    case cudaGraphNodeTypeWaitEvent: return "event_wait";
    case cudaGraphNodeTypeEmpty: return "empty";
    default: return "other";
  }
}

// Kernel nodes in the graph's order (the capture order), child graphs expanded.
void walk(cudaGraph_t graph, std::vector<std::string>& kernels, std::map<std::string, int>& other) {
  std::size_t count = 0;
  if (cudaGraphGetNodes(graph, nullptr, &count) != cudaSuccess) {
    return;
  }
  std::vector<cudaGraphNode_t> nodes(count);
  if (cudaGraphGetNodes(graph, nodes.data(), &count) != cudaSuccess) {
    return;
  }
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type{};
    if (cudaGraphNodeGetType(node, &type) != cudaSuccess) {
      continue;
    }
    if (type == cudaGraphNodeTypeKernel) {
      cudaKernelNodeParams params{};
      if (cudaGraphKernelNodeGetParams(node, &params) == cudaSuccess) {
        kernels.push_back(kernel_json(params));
      }
    } else if (type == cudaGraphNodeTypeGraph) {
      cudaGraph_t child = nullptr;
      if (cudaGraphChildGraphNodeGetGraph(node, &child) == cudaSuccess) {
        walk(child, kernels, other);
      }
    } else {
      ++other[node_kind(type)];
    }
  }
}

struct record_file {
  std::mutex mutex;
  std::set<std::string> recorded;
};

record_file& records() {
  static record_file file;
  return file;
}

}  // namespace

void record_kernels(const std::function<void(cudaStream_t)>& launch, const std::string& instance) {
  const char* path = std::getenv(kernel_record_env);
  if (path == nullptr || *path == '\0' || instance.empty()) {
    return;
  }
  record_file& file = records();
  std::lock_guard<std::mutex> lock(file.mutex);
  if (!file.recorded.insert(instance).second) {
    return;
  }
  std::string error;
  std::vector<std::string> kernels;
  std::map<std::string, int> other;
  cudaStream_t stream = nullptr;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
    error = cudaGetErrorString(cudaGetLastError());
  } else {
    // Thread-local mode: another thread's CUDA calls cannot invalidate this capture, and a call
    // of this thread that capture forbids fails here instead of executing.
    cudaError_t status = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
    if (status == cudaSuccess) {
      try {
        launch(stream);
      } catch (const std::exception& failure) {
        error = failure.what();
      } catch (...) {
        error = "the launch function threw";
      }
      cudaGraph_t graph = nullptr;
      status = cudaStreamEndCapture(stream, &graph);
      if (status == cudaSuccess && graph != nullptr) {
        walk(graph, kernels, other);
        (void)cudaGraphDestroy(graph);
      } else if (error.empty()) {
        error = cudaGetErrorString(status);
      }
    } else {
      error = cudaGetErrorString(status);
    }
    (void)cudaGetLastError();  // the capture's errors are not the benchmark's
    (void)cudaStreamDestroy(stream);
  }
  (void)cudaGetLastError();

  std::string line = "{\"benchmark\":" + json_string(instance) + ",\"kernels\":[";
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    line += (i ? "," : "") + kernels[i];
  }
  line += "],\"other_nodes\":{";
  bool first = true;
  for (const auto& [kind, count] : other) {
    line += (first ? "" : ",") + json_string(kind) + ":" + std::to_string(count);
    first = false;
  }
  line += "}";
  if (!error.empty()) {
    line += ",\"error\":" + json_string(error);
  }
  line += "}\n";
  // Appended line by line: several processes of one run write to their own files, and a
  // crash later in the run keeps what was recorded before it.
  if (std::FILE* out = std::fopen(path, "a")) {
    std::fputs(line.c_str(), out);
    std::fclose(out);
  }
}

}  // namespace kernelwatch::detail
