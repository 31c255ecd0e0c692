#pragma once

// The server follows the cluster by itself (issue 26): two kube::Reflectors, Nodes and Pods of
// all namespaces, feed the Extender. A list replaces the extender's nodes (nodes gone are
// removed) and bound pods (pods gone are released); watch events add, update and delete. A pod
// with spec.nodeName that is not Succeeded/Failed is bound where it runs, whichever scheduler
// placed it; Succeeded, Failed or deleted frees its GPUs and quota. A pod whose node is not
// known yet (the pod watch ran ahead of the node watch) waits and is bound when the node arrives.
// POST /v1/nodes|pods remain the manual path; the next relist or resync overrides them.
//
// Readiness: App::readiness names "cluster_watch" until both first lists are applied (GET
// /readyz answers 503 meanwhile; /healthz stays live). Metrics: seedance_cluster_nodes,
// seedance_cluster_pods_bound (gauges), seedance_watch_relists_total{resource},
// seedance_watch_reconnects_total{resource}, seedance_watch_events_total{resource},
// seedance_watch_lists_total{resource}.
// GET /v1/cluster answers Extender::Snapshot().
//
// Credentials, in order: ServerOptions::kubeconfig (--kubeconfig), server.kubeconfig, then
// in-cluster (KUBERNETES_SERVICE_HOST and the service account); none: no watch.

#include <memory>
#include <optional>

#include "seedance/core/status.h"
#include "seedance/kube/credentials.h"
#include "seedance/kube/leader_election.h"
#include "seedance/kube/reflector.h"
#include "seedance/server/app.h"
#include "seedance/server/extender.h"

namespace seedance::server {

// nullopt when no source is configured. Errors name the kubeconfig field or in-cluster file.
Result<std::optional<kube::Credentials>> ClusterCredentials(const ServerOptions& options, const ServerConfig& config,
                                                            const kube::InClusterEnv& env);

class ClusterWatch {
 public:
  ClusterWatch(App& app, Extender& extender, kube::Credentials credentials);
  ~ClusterWatch();  // Stop()

  void Start();  // the reflectors' threads
  void Stop();
  bool synced() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Leader election among replicas (kube::LeaderElector on a coordination.k8s.io/v1 Lease named
// "seedance"): on a follower /readyz names "leader_election" (the Service routes to the leader);
// seedance_leader is 1 on the leader, 0 elsewhere. Stop() releases a held lease.
class LeaderElection {
 public:
  LeaderElection(App& app, kube::Credentials credentials);
  ~LeaderElection();  // Stop()

  void Start();
  void Stop();
  bool leader() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace seedance::server
