/** A cap a bundle passed: its name in BUNDLE_LIMITS and the value it was held to. */
export interface BundleCap {
  name: 'BUNDLE_LIMITS.maxBytes' | 'BUNDLE_LIMITS.maxUnpackedBytes' | 'BUNDLE_LIMITS.maxFiles';
  value: number;
}

/**
 * Why a bundle was refused: over a cap (`cap` names it), not the digest named, not a bundle, an
 * entry that may not be written (a link, a device, a path out of the bundle), or a package the
 * service provides.
 */
export class BundleError extends Error {
  override readonly name = 'BundleError';
  constructor(
    readonly reason:
      | 'too_large'
      | 'unpacked_too_large'
      | 'too_many_files'
      | 'digest_mismatch'
      | 'invalid_format'
      | 'forbidden_entry'
      | 'provided_package',
    message: string,
    readonly cap?: BundleCap,
  ) {
    super(message);
  }
}
