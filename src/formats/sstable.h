// The leveldb table format TensorFlow's checkpoint index (.index) uses, with TensorFlow's
// options: 256 KiB data blocks, restart points every 16 keys in data blocks and every key
// in the index block, no compression, each block followed by a type byte and the masked
// CRC-32C of its contents and type, a 48-byte footer ending in leveldb's magic number.
// The writer makes the bytes TensorFlow's TableBuilder makes (tests hold it to files real
// TensorFlow wrote); the reader checks every CRC.
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::formats {

// Keys strictly increasing (bytewise) -> the table's bytes.
std::string write_table(const std::vector<std::pair<std::string, std::string>>& entries);

// Every entry of a table, in order. CheckpointError "[checkpoint] '<what>' ..." (naming `what`,
// the file) for anything that is not a sound table: a bad footer or magic, a handle out
// of range, a CRC that does not match, a compressed block, keys out of order.
std::vector<std::pair<std::string, std::string>> read_table(std::string_view bytes, const std::string& what);

}  // namespace kiln::formats
