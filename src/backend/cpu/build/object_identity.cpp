#include "backend/cpu/build/object_identity.h"

#include <sstream>

#include "cache/key.h"
#include "kiln/ir/dtype.h"
#include "kiln/ir/shape.h"

namespace kiln::cpu {

std::string ObjectIdentity::to_string() const {
  return "key=" + key + " graph=" + graph + " arena=" + std::to_string(arena_bytes) + " signature=" + signature;
}

ObjectIdentity identity_of(const std::string& key, const std::string& graph_hash, const Schedule& schedule) {
  std::ostringstream table;
  for (const Buffer& b : schedule.buffers) {
    const Node& n = schedule.graph.node(b.node);
    table << static_cast<int>(b.kind) << ' ' << b.node << ' ' << n.name << ' ' << dtype_name(n.dtype) << shape_str(n.shape)
          << ' ' << b.bytes << ' ' << b.offset << ' ' << b.variable << '\n';
  }
  return {key, graph_hash, schedule.arena_bytes, cache::hash_hex(table.str())};
}

std::string identity_source(const ObjectIdentity& identity) {
  // The identity holds hex digits, digits, '=' and spaces only: no quoting needed.
  return "\nextern \"C\" const char* kiln_identity() { return \"" + identity.to_string() + "\"; }\n";
}

}  // namespace kiln::cpu
