export {
  checkAddress,
  checkAddressFor,
  DEFAULT_REMEDY,
  isAllowedAddress,
  PRIVATE_NETWORK_KINDS,
  parseAllowedCidrs,
  type AddressKind,
  type AddressVerdict,
  type TargetPolicy,
  type AllowedCidr,
  type AllowedCidrs,
} from './address';
export {
  createTargetDispatcher,
  guardedLookup,
  type Resolver,
  type TargetDispatcherOptions,
} from './dispatcher';
export { TargetRefusedError } from './errors';
export { validateTargetUrl, type TargetUrlCheck } from './url';
export { targetUrlCheck, type TargetGuard } from './target-check';
export { identityProviderPolicy } from './identity-provider';
