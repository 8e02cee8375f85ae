// A test fixture with a fresh directory of the test's own, removed afterwards.
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "support/temp_files.h"

namespace testkit {

class DirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fresh_dir(std::string(::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name()) + "-" +
                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::filesystem::path dir_;
};

}  // namespace testkit
