// Loading a generated shared object and finding its entry points.
#pragma once
#include <string>

#include "backend/cpu/run/abi.h"

namespace kiln::cpu {

class SharedObject {
 public:
  // dlopen()s the file and checks its ABI version and, when `identity` is not empty, that
  // its kiln_identity() is exactly `identity` (object_identity.h): an object built for
  // another graph or key is refused. Throws SystemError naming the file and what differs.
  explicit SharedObject(const std::string& path, const std::string& identity = "");
  ~SharedObject();
  SharedObject(const SharedObject&) = delete;
  SharedObject& operator=(const SharedObject&) = delete;

  StepFn step() const { return step_; }

 private:
  void* handle_ = nullptr;
  StepFn step_ = nullptr;
};

}  // namespace kiln::cpu
