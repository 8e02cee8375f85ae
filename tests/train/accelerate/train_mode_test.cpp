// AccelerateTrainMode::parse, to_string and switch_step: TYPE|SPLIT[|RATIO] with TYPE fast or
// fast1, SPLIT step (ratio 0.2-0.9, default 0.9) or loss (1.01-1.5, default 1.05); anything
// else is a ConfigError naming the field, the value and what is valid (docs/accelerate.md).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/train/config.h"
#include "kiln/base/error.h"

namespace kiln {
namespace {

using Mode = AccelerateTrainMode;
using T = Mode::LowType;
using S = Mode::Split;

// The ConfigError message of parse(text), or a failure if it does not throw one.
std::string parse_error(std::string_view text) {
  try {
    const Mode m = Mode::parse(text);
    ADD_FAILURE() << "'" << text << "' parsed as " << m.to_string();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return {};
}

struct Valid {
  std::string text;
  T type;
  S split;
  double ratio;
  bool ratio_given;
  std::string canonical;
};

TEST(AccelerateTrainMode, ParsesEveryValidForm) {
  const std::vector<Valid> cases = {
      {"fast|step", T::float16, S::step, 0.9, false, "fast|step|0.9"},
      {"fast1|step", T::bfloat16, S::step, 0.9, false, "fast1|step|0.9"},
      {"fast|loss", T::float16, S::loss, 1.05, false, "fast|loss|1.05"},
      {"fast1|loss", T::bfloat16, S::loss, 1.05, false, "fast1|loss|1.05"},
      {"fast|step|0.9", T::float16, S::step, 0.9, true, "fast|step|0.9"},
      {"fast1|step|0.9", T::bfloat16, S::step, 0.9, true, "fast1|step|0.9"},
      {"fast|step|0.2", T::float16, S::step, 0.2, true, "fast|step|0.2"},
      {"fast1|step|0.2", T::bfloat16, S::step, 0.2, true, "fast1|step|0.2"},
      {"fast|step|0.5", T::float16, S::step, 0.5, true, "fast|step|0.5"},
      {"fast|step|0.90", T::float16, S::step, 0.9, true, "fast|step|0.9"},
      {"fast|step|0.2000", T::float16, S::step, 0.2, true, "fast|step|0.2"},
      {"fast|step|9e-1", T::float16, S::step, 0.9, true, "fast|step|0.9"},
      {"fast|step|0.75", T::float16, S::step, 0.75, true, "fast|step|0.75"},
      {"fast|loss|1.05", T::float16, S::loss, 1.05, true, "fast|loss|1.05"},
      {"fast|loss|1.01", T::float16, S::loss, 1.01, true, "fast|loss|1.01"},
      {"fast|loss|1.5", T::float16, S::loss, 1.5, true, "fast|loss|1.5"},
      {"fast1|loss|1.01", T::bfloat16, S::loss, 1.01, true, "fast1|loss|1.01"},
      {"fast1|loss|1.5", T::bfloat16, S::loss, 1.5, true, "fast1|loss|1.5"},
      {"fast1|loss|1.2", T::bfloat16, S::loss, 1.2, true, "fast1|loss|1.2"},
      {"fast|loss|1.50", T::float16, S::loss, 1.5, true, "fast|loss|1.5"},
  };
  for (const Valid& c : cases) {
    SCOPED_TRACE(c.text);
    const Mode m = Mode::parse(c.text);
    EXPECT_EQ(m.type, c.type);
    EXPECT_EQ(m.split, c.split);
    EXPECT_EQ(m.ratio, c.ratio);
    EXPECT_EQ(m.ratio_given, c.ratio_given);
    EXPECT_EQ(m.to_string(), c.canonical);
    const Mode again = Mode::parse(m.to_string());
    EXPECT_EQ(again.type, m.type);
    EXPECT_EQ(again.split, m.split);
    EXPECT_EQ(again.ratio, m.ratio);
  }
}

struct Invalid {
  std::string text;
  std::vector<std::string> expect;  // substrings of the message besides "[accelerate_train_mode]"
};

TEST(AccelerateTrainMode, RejectsInvalidFormsNamingFieldAndValue) {
  const std::vector<Invalid> cases = {
      // field structure
      {"", {"''", "empty", "TYPE|SPLIT[|RATIO]"}},
      {"fast", {"'fast'", "has 1 field;", "TYPE|SPLIT[|RATIO]"}},
      {"fast|step|0.9|1", {"'fast|step|0.9|1'", "has 4 fields"}},
      {"fast|step|0.9|", {"'fast|step|0.9|'", "has 4 fields"}},
      {"fast|step|0.9|0.9|x", {"has 5 fields"}},
      {"|step", {"'|step'", "empty TYPE field", "fast, fast1"}},
      {"fast|", {"'fast|'", "empty SPLIT field", "step, loss"}},
      {"fast||0.9", {"'fast||0.9'", "empty SPLIT field"}},
      {"||", {"'||'", "empty TYPE field"}},
      {"fast|step|", {"'fast|step|'", "empty RATIO field", "0.2..0.9", "default 0.9"}},
      {"fast|loss|", {"'fast|loss|'", "empty RATIO field", "1.01..1.5", "default 1.05"}},
      // unknown names, wrong case
      {"slow|step", {"unknown type 'slow'", "fast (float16), fast1 (bfloat16)"}},
      {"fast2|step", {"unknown type 'fast2'"}},
      {"fp16|step|0.9", {"unknown type 'fp16'"}},
      {"FAST|step", {"unknown type 'FAST'", "lower-case: 'fast'"}},
      {"Fast1|loss", {"unknown type 'Fast1'", "lower-case: 'fast1'"}},
      {"fast|epoch", {"unknown split 'epoch'", "valid: step, loss"}},
      {"fast|Step", {"unknown split 'Step'", "lower-case: 'step'"}},
      {"fast|LOSS|1.05", {"unknown split 'LOSS'", "lower-case: 'loss'"}},
      {"step|fast|0.9", {"unknown type 'step'"}},
      // ratio out of range, both sides, both splits
      {"fast|step|0.95", {"ratio '0.95' is out of range 0.2..0.9 for split 'step'"}},
      {"fast|step|0.19", {"ratio '0.19' is out of range 0.2..0.9 for split 'step'"}},
      {"fast|step|0.1999999", {"ratio '0.1999999' is out of range"}},
      {"fast|step|0.9000001", {"ratio '0.9000001' is out of range"}},
      {"fast|step|1.05", {"ratio '1.05' is out of range 0.2..0.9 for split 'step'"}},
      {"fast|step|0", {"ratio '0' is out of range"}},
      {"fast|step|-0.5", {"ratio '-0.5' is out of range"}},
      {"fast|step|1e999", {"ratio '1e999' is out of range"}},
      {"fast|loss|0.9", {"ratio '0.9' is out of range 1.01..1.5 for split 'loss'"}},
      {"fast|loss|1.0", {"ratio '1.0' is out of range 1.01..1.5 for split 'loss'"}},
      {"fast|loss|1.009", {"ratio '1.009' is out of range 1.01..1.5"}},
      {"fast1|loss|1.51", {"ratio '1.51' is out of range 1.01..1.5 for split 'loss'"}},
      {"fast1|loss|2", {"ratio '2' is out of range"}},
      // ratio not a number
      {"fast|step|abc", {"ratio 'abc' is not a number", "0.2..0.9"}},
      {"fast|step|0.9x", {"ratio '0.9x' is not a number"}},
      {"fast|step|0..9", {"ratio '0..9' is not a number"}},
      {"fast|step|0,9", {"ratio '0,9' is not a number"}},
      {"fast|step|+0.9", {"ratio '+0.9' is not a number"}},
      {"fast|step|0x1p-1", {"ratio '0x1p-1' is not a number"}},
      {"fast|loss|1.05%", {"ratio '1.05%' is not a number", "1.01..1.5"}},
      {"fast|step|nan", {"ratio 'nan' is not a finite number"}},
      {"fast|loss|NaN", {"ratio 'NaN' is not a finite number"}},
      {"fast|step|inf", {"ratio 'inf' is not a finite number"}},
      {"fast|step|-inf", {"ratio '-inf' is not a finite number"}},
      {"fast|loss|infinity", {"ratio 'infinity' is not a finite number"}},
      // whitespace anywhere
      {" fast|step", {"' fast|step'", "contains whitespace"}},
      {"fast|step ", {"'fast|step '", "contains whitespace"}},
      {"fast | step", {"'fast | step'", "contains whitespace"}},
      {"fast|step| 0.9", {"'fast|step| 0.9'", "contains whitespace"}},
      {"fast|step|0.9\n", {"contains whitespace"}},
      {"fast|\tloss", {"contains whitespace"}},
  };
  for (const Invalid& c : cases) {
    SCOPED_TRACE("'" + c.text + "'");
    const std::string msg = parse_error(c.text);
    EXPECT_EQ(msg.rfind("[accelerate_train_mode] ", 0), 0u) << msg;
    for (const std::string& s : c.expect) EXPECT_NE(msg.find(s), std::string::npos) << "missing \"" << s << "\" in: " << msg;
  }
}

TEST(AccelerateTrainMode, OutOfRangeMessageIsExact) {
  EXPECT_EQ(parse_error("fast|step|0.95"),
            "[accelerate_train_mode] ratio '0.95' is out of range 0.2..0.9 for split 'step'");
}

struct SwitchCase {
  std::string ratio;
  int64_t total;
  int64_t expected;
};

TEST(AccelerateTrainMode, SwitchStepIsFloorOfTheDecimalRatio) {
  const std::vector<SwitchCase> cases = {
      {"0.9", 10, 9},       {"0.2", 7, 1},      {"0.5", 1, 0},       {"0.9", 10000, 9000},
      {"0.3", 10, 3},       {"0.7", 10, 7},     {"0.57", 100, 57},   {"0.29", 100, 29},
      {"0.9", 0, 0},        {"0.2", 1, 0},      {"0.6", 5, 3},       {"0.34", 3, 1},
      {"0.33", 3, 0},       {"0.2", 5, 1},      {"0.9", 1, 0},       {"0.9", 11, 9},
      {"0.35", 20, 7},      {"0.9", 9223372036854775807, 8301034833169298226},
  };
  for (const SwitchCase& c : cases) {
    SCOPED_TRACE(c.ratio + " * " + std::to_string(c.total));
    EXPECT_EQ(Mode::parse("fast|step|" + c.ratio).switch_step(c.total), c.expected);
  }
  EXPECT_EQ(Mode::parse("fast1|step").switch_step(10000), 9000);
}

TEST(AccelerateTrainMode, SwitchStepRejectsNegativeTotal) {
  try {
    (void)Mode::parse("fast|step").switch_step(-1);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("[total_step]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("-1"), std::string::npos) << e.what();
  }
}

TEST(AccelerateTrainMode, NamesTypesAndTarget) {
  EXPECT_EQ(low_type_name(T::float16), "fast");
  EXPECT_EQ(low_type_name(T::bfloat16), "fast1");
  EXPECT_EQ(split_name(S::step), "step");
  EXPECT_EQ(split_name(S::loss), "loss");
  EXPECT_EQ(Mode::parse("fast|step").low_dtype(), DType::f16);
  EXPECT_EQ(Mode::parse("fast1|step").low_dtype(), DType::bf16);
  EXPECT_DOUBLE_EQ(Mode::parse("fast|loss|1.5").loss_target(2.0), 3.0);
}

}  // namespace
}  // namespace kiln
