import { ownerTag } from '../owner';

/**
 * The names of what the partition harness makes on this machine, each carrying its owner's pid
 * (ownerTag): namespaces `packnet-<owner>-<host>`, links `pkn<owner>...` (15 characters at most,
 * the kernel's limit). A later run removes those whose owner is gone (leftover-networks.ts).
 */
export const NAMESPACE_PREFIX = 'packnet-';
export const LINK_PREFIX = 'pkn';

export const namespaceName = (host: string, owner = ownerTag()) => `${NAMESPACE_PREFIX}${owner}-${host}`;
export const bridgeName = (owner = ownerTag()) => `${LINK_PREFIX}${owner}`;
/** The root-side end of host number `index`'s veth pair. */
export const vethName = (index: number, owner = ownerTag()) => `${LINK_PREFIX}${owner}h${index}`;
/** The end moved into the namespace (renamed eth0 there). */
export const peerName = (index: number, owner = ownerTag()) => `${LINK_PREFIX}${owner}n${index}`;
/** A link kept down: what a lossy link's dropped packets are redirected to. */
export const sinkName = (owner = ownerTag()) => `${LINK_PREFIX}${owner}x`;
export const sinkPeerName = (owner = ownerTag()) => `${LINK_PREFIX}${owner}y`;

/** The owner's pid in a name the harness made, or undefined for any other name. */
export function ownerOfName(name: string): number | undefined {
  const match =
    new RegExp(`^${NAMESPACE_PREFIX}([0-9a-f]{8})-`).exec(name) ??
    new RegExp(`^${LINK_PREFIX}([0-9a-f]{8})`).exec(name);
  return match ? parseInt(match[1]!, 16) : undefined;
}
