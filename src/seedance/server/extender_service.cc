// Placeholder for the extender part (B): a part with no routes, so this branch links. The integrator takes the
// real file from its branch.
#include "seedance/server/app.h"

namespace seedance::server {
namespace {
class Placeholder final : public Service {
 public:
  void Register(httplib::Server& /*http*/) override {}
};
}  // namespace

std::unique_ptr<Service> MakeExtenderService(App& /*app*/) { return std::make_unique<Placeholder>(); }

}  // namespace seedance::server
