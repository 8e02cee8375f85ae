// The kiln command: `kiln train`, `kiln sample`, `kiln cache`, `kiln report`, `kiln settings`.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include <CLI/CLI.hpp>

#include "kiln/train/checkpoint.h"
#include "kiln/base/error.h"
#include "kiln/process/interrupts.h"
#include "kiln/process/process.h"
#include "kiln/dist/world.h"

// CLI-private headers, beside this file.
#include "cache_command.h"
#include "report_command.h"
#include "sample_command.h"
#include "settings_command.h"
#include "option_names.h"
#include "train/command.h"

namespace {
// The command that ran, for its option names in errors (nullptr: none).
const CLI::App* g_command = nullptr;

void report(const std::exception& e) {
  // On a terminal the live progress line may still be open: end it first.
  if (::isatty(STDOUT_FILENO) == 1) std::fputs("\n", stdout);
  std::fflush(stdout);
  std::cerr << "kiln: " << kiln::World::get().prefix() << "error: " << (g_command ? kiln::cli::with_option_names(e.what(), *g_command) : e.what()) << "\n";
}

// Output that could not be written (a full disk behind a redirection) fails the command,
// as in GNU tools: nothing kiln reports may be lost silently.
int with_output_checked(int status) {
  errno = 0;
  std::cout.flush();  // (synchronised with stdio: this flushes stdout)
  const bool flush_failed = std::fflush(stdout) != 0 || !std::cout;
  const int err = errno;  // set only by a write that failed just now
  if (!flush_failed && !std::ferror(stdout)) return status;
  std::cerr << "kiln: error: [stdout] output was lost: " << (err ? std::strerror(err) : "an earlier write failed")
            << "\n";
  return status == 0 ? 1 : status;
}
}  // namespace

static int run_command(int argc, char** argv) {
  CLI::App app{"kiln: a graph compiler and training runtime for neural networks on CPUs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("kiln ") + KILN_VERSION);
  // A repeated option: the last one wins, as in GNU tools and argparse (subcommands take
  // their option defaults from here).
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  kiln::cli::TrainCommand train(app);
  kiln::cli::CacheCommand cache(app);
  kiln::cli::ReportCommand report_command(app);
  kiln::cli::SampleCommand sample(app);
  kiln::cli::SettingsCommand settings(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Usage errors (unknown option, bad value) exit 2, like other Unix tools.
    app.exit(e);
    return 2;
  }
  try {
    if (train.selected()) {
      g_command = train.command();
      return with_output_checked(train.run());
    }
    if (sample.selected()) {
      g_command = sample.command();
      return with_output_checked(sample.run());
    }
    if (cache.selected()) return with_output_checked(cache.run());
    if (report_command.selected()) return with_output_checked(report_command.run());
    if (settings.selected()) return with_output_checked(settings.run());
  } catch (const kiln::ConfigError& e) {
    report(e);
    return 2;
  } catch (const kiln::DataError& e) {
    // Missing or damaged data is bad input too: nothing was trained or overwritten.
    report(e);
    return 2;
  } catch (const kiln::CheckpointError& e) {
    // A checkpoint or model_dir that cannot be used is bad input, like a bad option.
    report(e);
    return 2;
  } catch (const kiln::Error& e) {
    report(e);
    return 1;
  } catch (const std::exception& e) {
    // Not a kiln error: a bug, or a library's exception kiln should have turned into one.
    // Still a message and an exit status, never an abort.
    report(e);
    return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  kiln::tune_process(argv);  // heap thresholds, short OpenMP spin waits (may re-exec)
  kiln::route_interrupts_to_watcher();  // before any other thread exists (MPI's too)
  // Under mpirun: join the job now (MPI_Init), after the re-exec and with SIGINT blocked.
  kiln::World& world = kiln::World::get();
  const int status = run_command(argc, argv);
  // A failing rank ends the whole job at once: the others may be waiting for it in a
  // collective. mpirun then stops every rank and names this one.
  if (status != 0 && status != 130) world.abort(status);
  return status;
}
