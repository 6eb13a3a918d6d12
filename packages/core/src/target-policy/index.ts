export {
  createTargetPolicy,
  narrowPolicy,
  type ProtectedEndpoint,
  type TargetBlockRule,
  type TargetDecision,
  type TargetPolicy,
  type TargetPolicyOptions,
  type TargetRefusal,
  type WorkspaceTargetRules,
} from './policy';
export {
  readTargetPolicyConfig,
  resolveTargetPolicy,
  resolveTargetPolicyConfig,
  targetPolicyOf,
  type TargetPolicyConfig,
} from './config';
export { parseTargetRules, TargetRuleError, type TargetRule } from './rules';
export { isUnsafePort } from './unsafe-ports';
export {
  protectedEndpointsFromUrls,
  resolveProtectedEndpoints,
  resolveTarget,
  systemLookup,
  TargetUnresolvedError,
  type CheckedTarget,
  type LookupAll,
  type ResolvedAddress,
} from './resolve';
export { broadAllowWarnings } from './broad-allow';
