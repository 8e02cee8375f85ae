// Text for character-level language models: a corpus of bytes (a UTF-8 file, or a folder
// of them such as the Debian `fortunes` package's cookie files), its vocabulary (the
// distinct bytes), and batch sources of token windows for training and validation.
//
// Problems with the input (a missing path, an empty text, bytes that are not UTF-8, a
// text shorter than one window) are kiln::DataError naming the path and what was wrong.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/data/dataset.h"

namespace kiln::data {

// Where the `fortunes` Debian package installs its cookie files.
inline constexpr const char* kDefaultFortunesDir = "/usr/share/games/fortunes";

struct TextCorpus {
  std::vector<std::string> files;  // what was read, in order
  std::string text;                // their bytes, concatenated
  std::string vocabulary;          // the distinct bytes of text, ascending
  std::vector<int32_t> tokens;     // text as indices into vocabulary
};

// Reads `path`: a file, or every regular file of a folder (not links, not subfolders)
// whose name does not end in ".dat" or ".u8" (the fortune indexes and links), in byte
// order of their names, concatenated. Every file must be valid UTF-8 (the error names
// the file and the byte offset). DataError for a path that does not exist or cannot be
// read, a folder without such files, or an empty text.
TextCorpus load_text_corpus(const std::string& path);

// The first `train_fraction` of the tokens (rounded down) and the rest.
struct TextSplit {
  std::vector<int32_t> train, validation;
};
TextSplit split_tokens(const std::vector<int32_t>& tokens, double train_fraction = 0.9);

// Text to tokens of `vocabulary` (DataError naming the first byte it lacks) and back
// (DataError for a token outside the vocabulary).
std::vector<int32_t> encode_text(std::string_view vocabulary, std::string_view text);
std::string decode_tokens(std::string_view vocabulary, const std::vector<int32_t>& tokens);

// The vocabulary as lowercase hex, two digits a byte (how checkpoints record it), and
// back (DataError for text that is not such hex, or not ascending distinct bytes).
std::string vocabulary_to_hex(std::string_view vocabulary);
std::string vocabulary_from_hex(std::string_view hex);

// Endless training batches: features i32 [batch, context] = tokens[s, s+context) and
// labels i32 [batch, context] = tokens[s+1, s+context+1) for starts s drawn uniformly
// from 0..n-context-1. Batch k depends only on (seed, k), so skip() is O(1) and a resumed
// run sees the batches an uninterrupted one would. DataError when the tokens hold no
// window (n < context + 1) or batch/context < 1.
std::unique_ptr<BatchSource> random_windows(std::shared_ptr<const std::vector<int32_t>> tokens, int64_t batch,
                                            int64_t context, uint64_t seed);

// One pass over consecutive, non-overlapping windows (starts 0, context, 2*context, ...),
// at most `max_windows` of them (0: all), in batches of `batch` (the last may be
// smaller): the same validation windows every time. Same errors as random_windows.
std::unique_ptr<BatchSource> consecutive_windows(std::shared_ptr<const std::vector<int32_t>> tokens, int64_t batch,
                                                 int64_t context, int64_t max_windows = 0);

}  // namespace kiln::data
