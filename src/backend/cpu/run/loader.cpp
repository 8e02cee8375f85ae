#include "backend/cpu/run/loader.h"

#include <dlfcn.h>

#include "kiln/base/error.h"

namespace kiln::cpu {

SharedObject::SharedObject(const std::string& path, const std::string& identity) {
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) KILN_THROW(SystemError) << "[loader] cannot load '" << path << "': " << dlerror();
  auto abi = reinterpret_cast<int (*)()>(dlsym(handle_, "kiln_abi_version"));
  step_ = reinterpret_cast<StepFn>(dlsym(handle_, "kiln_step"));
  if (!abi || !step_) {
    dlclose(handle_);
    KILN_THROW(SystemError) << "[loader] '" << path << "' is not a kiln step (missing kiln_step/kiln_abi_version)";
  }
  if (abi() != kAbiVersion) {
    const int v = abi();
    dlclose(handle_);
    KILN_THROW(SystemError) << "[loader] '" << path << "' was built for code ABI " << v << ", this kiln uses "
                            << kAbiVersion;
  }
  if (identity.empty()) return;
  auto says = reinterpret_cast<const char* (*)()>(dlsym(handle_, "kiln_identity"));
  const std::string got = says ? says() : "(no kiln_identity)";
  if (got != identity) {
    dlclose(handle_);
    KILN_THROW(SystemError) << "[loader] '" << path << "' was built for another graph: it says " << got
                            << "; this compile needs " << identity;
  }
}

SharedObject::~SharedObject() {
  if (handle_) dlclose(handle_);
}

}  // namespace kiln::cpu
