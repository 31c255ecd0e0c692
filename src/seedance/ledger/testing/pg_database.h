#pragma once

// Tests against the real PostgreSQL peer that src/seedance/ledger/pg_test.sh starts: a fresh,
// empty database per test, named by a postgresql:// URL (the form `seedance server
// --admission-db` takes). Header-only; needs SEEDANCE_HAVE_POSTGRESQL.

#include <cctype>
#include <cstdlib>
#include <string>

#include "seedance/core/status.h"
#include "seedance/ledger/internal/pg.h"

namespace seedance::ledger::testing {

// $SEEDANCE_PG_URL (postgresql://user@host:port), or "" when no peer was started.
inline std::string PgPeerUrl() {
  const char* url = std::getenv("SEEDANCE_PG_URL");
  return url != nullptr ? url : "";
}

// Drops and creates database `name` (lower-cased, other characters than [a-z0-9_] become '_')
// on the peer; returns its URL.
inline Result<std::string> FreshPgDatabase(std::string name) {
  const std::string base = PgPeerUrl();
  if (base.empty()) return FailedPreconditionError("SEEDANCE_PG_URL is not set (run through pg_test.sh)");
  for (char& c : name) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  name = "t_" + name.substr(0, 60);
  SEEDANCE_ASSIGN_OR_RETURN(auto admin, internal::PgConn::Open(base + "/postgres"));
  SEEDANCE_RETURN_IF_ERROR(admin->Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"));
  SEEDANCE_RETURN_IF_ERROR(admin->Exec("CREATE DATABASE " + name));
  return base + "/" + name;
}

}  // namespace seedance::ledger::testing
