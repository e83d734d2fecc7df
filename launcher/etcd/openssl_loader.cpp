// OpenSSL loaded at the first TLS use; see openssl_loader.h and openssl_functions.h.
#include "etcd/openssl_loader.h"

#include <dlfcn.h>
#include <unistd.h>

#include <filesystem>
#include <iterator>

#include "etcd/openssl_functions.h"

#if defined(DDPLAUNCH_OPENSSL_LINKED)
// Without trampolines (not x86-64) libssl is linked as usual: nothing to load.
namespace ddplaunch::etcd::detail {
const std::string& load_openssl() {
  static const std::string none;
  return none;
}
}  // namespace ddplaunch::etcd::detail
#else

#define DDPLAUNCH_SLOT(name) 1 +
#define DDPLAUNCH_NAME(name) #name,

namespace {
constexpr int kFunctions = DDPLAUNCH_OPENSSL_FUNCTIONS(DDPLAUNCH_SLOT) 0;
constexpr const char* kNames[] = {DDPLAUNCH_OPENSSL_FUNCTIONS(DDPLAUNCH_NAME)};
static_assert(std::size(kNames) == kFunctions);
}  // namespace

// The trampolines' jump table, in the order of openssl_functions.h.
extern "C" {
__attribute__((visibility("hidden"))) void* ddplaunch_openssl_table[kFunctions] = {};
}

namespace ddplaunch::etcd::detail {
namespace {

// dlopen by path or soname; libssl finds a libcrypto loaded before it by its soname.
void* open(const std::string& name) { return ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL); }

std::string load() {
  std::error_code ec;
  const auto deps = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / "../lib/ddplaunch/deps";
  void* ssl = nullptr;
  if (!ec && ::access((deps / "libssl.so.3").c_str(), R_OK) == 0 && open(deps / "libcrypto.so.3"))
    ssl = open(deps / "libssl.so.3");
  if (ssl == nullptr) ssl = open("libssl.so.3");
  if (ssl == nullptr) {
    const char* why = ::dlerror();
    return std::string("cannot load OpenSSL 3's libssl.so.3 (") + (why ? why : "unknown error") +
           "); install it (Debian/Ubuntu: libssl3)";
  }
  for (int i = 0; i < kFunctions; ++i) {
    ddplaunch_openssl_table[i] = ::dlsym(ssl, kNames[i]);
    if (ddplaunch_openssl_table[i] == nullptr) return std::string("libssl.so.3 lacks ") + kNames[i];
  }
  return {};
}

}  // namespace

const std::string& load_openssl() {
  static const std::string error = load();
  return error;
}

}  // namespace ddplaunch::etcd::detail

#endif  // DDPLAUNCH_OPENSSL_LINKED
