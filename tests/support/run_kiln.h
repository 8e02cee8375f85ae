// Running the built `kiln` binary (KILN_BINARY) as a user would, for command-line tests.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

namespace testkit {

struct Result {
  int status;          // exit status, -1 if killed by a signal
  std::string output;  // stdout and stderr together
};

// Runs a shell command line and collects what it prints.
inline Result run_command(const std::string& cmd) {
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, "popen failed: " + cmd};
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

// `kiln <args>` with stderr folded into the output.
inline Result run_kiln(const std::string& args) { return run_command(std::string(KILN_BINARY) + " " + args + " 2>&1"); }

// Starts `kiln <args>` in the background with stdout and stderr going to `log`.
inline pid_t spawn_kiln(const std::string& args, const std::string& log) {
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string cmd = "exec " + std::string(KILN_BINARY) + " " + args + " >" + log + " 2>&1";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

// Is the Fashion-MNIST package installed? Tests that train on it skip (with a reason) when not.
inline bool have_data() { return std::filesystem::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"); }

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace testkit
