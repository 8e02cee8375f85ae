// One compile per data-parallel job (CompileOptions::share_in_job): rank 0 loads or
// compiles a graph's shared object, and the other ranks receive its bytes over MPI instead
// of compiling it again — on hosts that share no file system as on one host.
//
// Every rank calls object_for_job() for the same graph at the same point (the Estimator's
// training and evaluation graphs). The ranks first compare their cache keys: ranks that
// built different graphs each compile their own, as without sharing (the Estimator's
// settings check then names what differs). Rank 0 then gets the object as a lone process
// would (its cache, else the host compiler, publishing to its cache) and says whether it
// has one; a rank 0 that could not build it makes every rank fail as it did. The other
// ranks look in their own cache next (in a cache directory shared with rank 0 they find
// rank 0's entry there); only if one of them still lacks the object does rank 0 send it,
// with its XXH3-128 checksum. A receiver checks the checksum, loads the bytes from a
// private temporary file (SharedObject checks the identity the object carries: kiln's
// key, graph, arena and signature) and stores them in its own cache when it has one, as
// if it had compiled them.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "backend/cpu/run/loader.h"
#include "cache/session.h"
#include "kiln/backend/compiler.h"

namespace kiln::cpu {

// `obtain(bytes)`: this rank's object as a lone process gets it, with the object file's
// bytes in `bytes`. `meta`: the metadata a receiver stores with the entry.
using ObtainObject = std::function<std::unique_ptr<SharedObject>(std::string& bytes)>;
std::unique_ptr<SharedObject> object_for_job(const std::string& key, const std::string& identity,
                                             cache::Session* cache, CompileReport& report, const ObtainObject& obtain,
                                             const std::function<nlohmann::json()>& meta);

}  // namespace kiln::cpu
