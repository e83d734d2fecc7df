// gpu_allreduce: one rank per GPU under ddplaunch (or torchrun). Each rank takes the device
// LOCAL_RANK, creates an NCCL communicator over WORLD_SIZE ranks, all-reduces a buffer of
// (rank + 1) on the device and checks every element of the sum. Host code only (CUDA
// runtime API + NCCL), so g++ or nvcc builds it.
//
//   gpu_allreduce ID_DIR [--fail-first-generation] [--hold-ms MS]
//
// ID_DIR: a folder shared by the ranks of one node (world = GPUs of one node); rank 0 writes
// NCCL's unique id there per generation (TORCHELASTIC_RESTART_COUNT), the others read it.
// --fail-first-generation: in generation 0, rank 0 sets NCCL_SOCKET_IFNAME to an interface
// that does not exist, so ncclGetUniqueId fails with NCCL's own error — a real NCCL init
// failure — and the launcher should restart the group; generation 1 runs normally.
// --hold-ms: stay alive MS ms after the check (so the launcher sees every rank running).
// Prints one line per step ("rank R ..."); exits 0 when the sum is right.
#include <cuda_runtime.h>
#include <nccl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

int fail(int rank, const std::string& what) {
  std::printf("rank %d FAILED: %s\n", rank, what.c_str());
  std::fflush(stdout);
  return 1;
}

bool write_id(const std::string& path, const ncclUniqueId& id) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(id.internal, sizeof(id.internal));
    if (!out) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;  // readers see all or nothing
}

// Waits for rank 0's id, at most `limit` (the launcher ends the group long before).
bool read_id(const std::string& path, ncclUniqueId& id, std::chrono::seconds limit) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    std::ifstream in(path, std::ios::binary);
    if (in && in.read(id.internal, sizeof(id.internal))) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: gpu_allreduce ID_DIR [--fail-first-generation] [--hold-ms MS]\n");
    return 2;
  }
  const std::string id_dir = argv[1];
  bool fail_first = false;
  int hold_ms = 0;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--fail-first-generation") == 0) fail_first = true;
    else if (std::strcmp(argv[i], "--hold-ms") == 0 && i + 1 < argc) hold_ms = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "gpu_allreduce: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  const int rank = env_int("RANK", 0), world = env_int("WORLD_SIZE", 1);
  const int local_rank = env_int("LOCAL_RANK", 0);
  const int generation = env_int("TORCHELASTIC_RESTART_COUNT", 0);
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");

  int devices = 0;
  if (cudaError_t e = cudaGetDeviceCount(&devices); e != cudaSuccess)
    return fail(rank, std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e));
  if (cudaError_t e = cudaSetDevice(local_rank); e != cudaSuccess)
    return fail(rank, "cudaSetDevice(" + std::to_string(local_rank) + "): " + cudaGetErrorString(e));
  char bus_id[32] = {0};
  cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), local_rank);
  std::printf("rank %d local_rank %d world %d generation %d device %d of %d pci %s visible %s\n",
              rank, local_rank, world, generation, local_rank, devices, bus_id,
              visible ? visible : "(unset)");
  std::fflush(stdout);

  const std::string id_path = id_dir + "/nccl-id.gen" + std::to_string(generation);
  ncclUniqueId id;
  if (rank == 0) {
    if (fail_first && generation == 0) setenv("NCCL_SOCKET_IFNAME", "ddpl_no_such0", 1);
    if (ncclResult_t r = ncclGetUniqueId(&id); r != ncclSuccess)
      return fail(rank, std::string("ncclGetUniqueId: ") + ncclGetErrorString(r) + " (" +
                            ncclGetLastError(nullptr) + ")");
    if (!write_id(id_path, id)) return fail(rank, "could not write " + id_path);
  } else if (!read_id(id_path, id, std::chrono::seconds(120))) {
    return fail(rank, "no NCCL id from rank 0 in " + id_path + " within 120 s");
  }

  ncclComm_t comm;
  if (ncclResult_t r = ncclCommInitRank(&comm, world, id, rank); r != ncclSuccess)
    return fail(rank, std::string("ncclCommInitRank: ") + ncclGetErrorString(r) + " (" +
                          ncclGetLastError(nullptr) + ")");
  std::printf("rank %d nccl communicator ready\n", rank);

  const size_t count = 1 << 20;
  std::vector<float> host(count, static_cast<float>(rank + 1));
  float* device = nullptr;
  cudaStream_t stream;
  if (cudaMalloc(&device, count * sizeof(float)) != cudaSuccess ||
      cudaStreamCreate(&stream) != cudaSuccess ||
      cudaMemcpy(device, host.data(), count * sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess)
    return fail(rank, "device buffer set-up failed");
  if (ncclResult_t r = ncclAllReduce(device, device, count, ncclFloat, ncclSum, comm, stream);
      r != ncclSuccess)
    return fail(rank, std::string("ncclAllReduce: ") + ncclGetErrorString(r));
  if (cudaStreamSynchronize(stream) != cudaSuccess ||
      cudaMemcpy(host.data(), device, count * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess)
    return fail(rank, "copy back failed");
  const float expected = static_cast<float>(world) * (world + 1) / 2;
  for (size_t i = 0; i < count; ++i)
    if (host[i] != expected)
      return fail(rank, "element " + std::to_string(i) + " is " + std::to_string(host[i]) +
                            ", expected " + std::to_string(expected));
  std::printf("rank %d allreduce ok sum %.0f over %zu floats\n", rank, expected, count);
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms));
  ncclCommDestroy(comm);
  cudaFree(device);
  return 0;
}
