export { namespacesUnavailable } from './commands';
export {
  removeLeftoverNetworks,
  ownedLinks,
  ownedNamespaces,
  type RemovedNetworks,
} from './leftover-networks';
export { Relay, type Delay } from './relay';
export { PartitionNet, type Host, type HostedService } from './net';
export { NamespacedRabbitCluster, type RabbitNode } from './rabbit-cluster';
export { NamespacedDatabase } from './database-host';
