// ledger_inspect DB: prints "integrity=<result> samples=<n>". Test helper.
#include <iostream>

#include "seedance/ledger/ledger.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: ledger_inspect DB\n";
    return 2;
  }
  auto ledger = seedance::ledger::Ledger::Open(argv[1]);
  if (!ledger.has_value()) {
    std::cerr << ledger.error().ToString() << "\n";
    return 1;
  }
  auto ic = (*ledger)->IntegrityCheck();
  auto n = (*ledger)->CountSamples();
  if (!ic.has_value() || !n.has_value()) return 1;
  std::cout << "integrity=" << *ic << " samples=" << *n << "\n";
  return 0;
}
