// Loading a generated shared object and finding its entry points.
#pragma once
#include <string>

#include "backend/cpu/abi.h"

namespace kiln::cpu {

class SharedObject {
 public:
  // dlopen()s the file and checks its ABI version; throws SystemError naming the file.
  explicit SharedObject(const std::string& path);
  ~SharedObject();
  SharedObject(const SharedObject&) = delete;
  SharedObject& operator=(const SharedObject&) = delete;

  StepFn step() const { return step_; }

 private:
  void* handle_ = nullptr;
  StepFn step_ = nullptr;
};

}  // namespace kiln::cpu
