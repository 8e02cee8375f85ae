// The cases that must fail cleanly, through the real `kiln` process: each bad input exits
// with status 2, says in one message what was wrong (the option in brackets or by name),
// and writes nothing into the model directory but its lock file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/run_kiln.h"
#include "support/temp_files.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testkit::contains;
using testkit::run_command;

struct BadInput {
  const char* what;
  std::string env;   // prefix of the command line, e.g. "TMPDIR=/nonexistent"
  std::string args;  // after `kiln`
  std::vector<std::string> says;  // every one of these in the output
};

void PrintTo(const BadInput& c, std::ostream* os) { *os << c.what; }

// A short real run: small data, one step.
const std::string kShort = " --steps 1 --train-limit 64 --test-limit 64 --batch-size 32 --quiet";

class CliError : public ::testing::TestWithParam<BadInput> {};

TEST_P(CliError, ExitsTwoWithAClearMessageAndWritesNothing) {
  const BadInput& c = GetParam();
  const fs::path dir = testkit::fresh_dir("cli-error");
  fs::create_directories(dir);
  { std::ofstream(dir / "a-file") << "x"; }
  std::string args = c.args;
  for (size_t at; (at = args.find("@DIR")) != std::string::npos;) args.replace(at, 4, dir.string());
  std::string env = c.env;
  for (size_t at; (at = env.find("@DIR")) != std::string::npos;) env.replace(at, 4, dir.string());
  const fs::path model_dir = dir / "model";
  const testkit::Result r =
      run_command(env + " " + KILN_BINARY + " " + args + " --model-dir " + model_dir.string() + " 2>&1");
  EXPECT_EQ(r.status, 2) << c.what << "\n" << r.output;
  for (const std::string& s : c.says) EXPECT_TRUE(contains(r.output, s)) << c.what << ": expected '" << s << "' in\n" << r.output;
  EXPECT_FALSE(contains(r.output, "terminate called")) << r.output;
  // The model directory may have been created to hold the run's lock file, but nothing
  // else: no checkpoint, no partial state.
  if (fs::exists(model_dir)) {
    for (const auto& e : fs::directory_iterator(model_dir)) {
      EXPECT_EQ(e.path().filename(), ".kiln-lock") << c.what << ": a failed run wrote " << e.path();
    }
  }
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(
    Train, CliError,
    ::testing::Values(
        BadInput{"ratio out of range", "", "train --dry-run --accelerate-train-mode 'fast|step|0.95'",
                 {"[--accelerate-train-mode]", "'0.95'", "0.2..0.9"}},
        BadInput{"unknown accelerate type", "", "train --dry-run --accelerate-train-mode 'fast2|step'",
                 {"[--accelerate-train-mode]", "fast2"}},
        BadInput{"unknown precision mode", "", "train --dry-run --precision-mode fp8",
                 {"[--precision-mode] unknown value 'fp8'", "must_keep_origin_dtype"}},
        BadInput{"both precision modes", "", "train --dry-run --precision-mode force_fp32 --precision-mode-v2 origin",
                 {"[--precision-mode]", "precision_mode_v2"}},
        BadInput{"accelerate with a low base precision", "",
                 "train --dry-run --accelerate-train-mode 'fast1|step' --precision-mode allow_mix_precision_bf16",
                 {"[--accelerate-train-mode]", "allow_mix_precision_bf16"}},
        BadInput{"bad cache size", "", "train --dry-run --cache-size-cap 12Q", {"[--cache-size-cap]", "12Q"}},
        BadInput{"bad bucket size", "", "train --dry-run --all-reduce-bucket-size -1M", {"--all-reduce-bucket-size", "-1M"}},
        BadInput{"bucket size outside a data-parallel job", "", "train --dry-run --all-reduce-bucket-size 1M",
                 {"[--all-reduce-bucket-size]", "alone", "mpirun -np N"}},
        BadInput{"bad overlap", "", "train --dry-run --all-reduce-overlap maybe", {"--all-reduce-overlap", "maybe"}},
        BadInput{"overlap outside a data-parallel job", "", "train --dry-run --all-reduce-overlap off",
                 {"[--all-reduce-overlap]", "alone", "mpirun -np N"}},
        BadInput{"small loop of zero", "", "train --dry-run --iterations-per-loop 0", {"[--iterations-per-loop]", "'0'"}},
        BadInput{"unknown model", "", "train --dry-run --model resnet", {"--model", "resnet"}},
        BadInput{"unknown backend", "", "train --dry-run --backend gpu", {"--backend", "gpu"}},
        BadInput{"zero steps", "", "train --steps 0", {"--steps", "'0'"}},
        BadInput{"missing data", "", "train --data @DIR/nonexistent" + kShort, {"[--data]", "nonexistent"}},
        BadInput{"loss split without a target", "", "train --accelerate-train-mode 'fast1|loss'" + kShort,
                 {"[--final-loss]", "--final-loss"}},
        BadInput{"code dump under a file", "KILN_DUMP_CODE=@DIR/a-file/sub", "train" + kShort,
                 {"[KILN_DUMP_CODE]", "a-file/sub"}},
        BadInput{"IR dump under a file", "KILN_DUMP_IR=@DIR/a-file/sub", "train" + kShort,
                 {"[KILN_DUMP_IR]", "a-file/sub"}},
        BadInput{"TMPDIR missing", "TMPDIR=@DIR/nonexistent", "train" + kShort, {"[TMPDIR]", "nonexistent"}},
        BadInput{"TMPDIR is a file", "TMPDIR=@DIR/a-file", "train" + kShort, {"[TMPDIR]", "a-file"}},
        // Sizes: each option's range is checked before any work, and so is the memory a
        // run needs (a crash inside OpenMP, std::bad_alloc, or a compile with no end before).
        BadInput{"threads beyond the range", "", "train --dry-run --threads 100000",
                 {"[--threads]", "'100000'", "0 to 1024"}},
        BadInput{"layers beyond the range", "", "train --dry-run --model gpt --layers 2147483647",
                 {"--layers", "2147483647", "1 to 256"}},
        BadInput{"a width the machine cannot hold", "", "train --dry-run --model gpt --width 65536 --heads 1",
                 {"[memory]", "training gpt", "more than this machine's"}},
        BadInput{"a batch beyond the range", "", "train --dry-run --batch-size 99999999999", {"--batch-size", "99999999999"}}),
    [](const ::testing::TestParamInfo<BadInput>& info) {
      std::string name;
      for (const char* p = info.param.what; *p; ++p) name += std::isalnum(static_cast<unsigned char>(*p)) ? *p : '_';
      return name;
    });

}  // namespace
}  // namespace kiln
