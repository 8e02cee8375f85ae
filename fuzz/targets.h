// The fuzz targets: each takes arbitrary bytes to one of kiln's readers of outside data
// and returns normally whatever the bytes are. A reader may reject its input only with a
// kiln::Error (the message a user sees); anything else (a crash, a sanitizer report, a
// std::exception that is not a kiln error, a hang) is a bug.
//
// Built two ways: with libFuzzer (clang, -fsanitize=fuzzer; fuzz/CMakeLists.txt, one
// executable per target) and into the test suite (tests/fuzz/regression_test.cpp), which
// runs every file of fuzz/corpus/<target>/ through the same function, so the seeds and the
// inputs of crashes found and fixed stay regression tests without clang.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln::fuzz {

using Target = int (*)(const uint8_t* data, size_t size);

int idx_reader(const uint8_t* data, size_t size);         // data::read_idx, plain and gzip'd
int checkpoint_reader(const uint8_t* data, size_t size);  // parse_checkpoint
int cache_metadata(const uint8_t* data, size_t size);     // cache::parse_entry_meta
int graph_parser(const uint8_t* data, size_t size);       // parse_graph (the canonical text)
int accelerate_mode(const uint8_t* data, size_t size);    // AccelerateTrainMode::parse
int summary_records(const uint8_t* data, size_t size);    // parse_records + the report's run_from_records
int checkpoint_manifest(const uint8_t* data, size_t size);  // parse_checkpoint past its checksum: the manifest
int bounded_json(const uint8_t* data, size_t size);       // parse_bounded_json's limits
int tfrecord_reader(const uint8_t* data, size_t size);    // formats::RecordReader (first byte: compression)
int checkpoint_index(const uint8_t* data, size_t size);   // formats::read_table (a checkpoint's .index)
int example_parser(const uint8_t* data, size_t size);     // formats::parse_examples, read_example
int image_decoder(const uint8_t* data, size_t size);      // formats::decode_png / decode_jpeg (first byte: which)
int tensor_bundle(const uint8_t* data, size_t size);      // formats::read_bundle, list_bundle (index, then data)

struct NamedTarget {
  const char* name;  // also the folder of its corpus under fuzz/corpus/
  Target run;
};
const std::vector<NamedTarget>& all_targets();

}  // namespace kiln::fuzz
