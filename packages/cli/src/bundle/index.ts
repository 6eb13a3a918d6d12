import { hasBundle, uploadBundle, type TestrunClient } from '@testrun/client';
import { needsBundle, type PlaywrightSection } from '@testrun/contracts';
import { planBundle } from './collect';
import { packBundle, type PackedBundle } from './pack';
export type { PackedBundle } from './pack';

/** Why a project's bundle could not be packed: every reason, one a line. */
export class BundleRefusal extends Error {
  override readonly name = 'BundleRefusal';
  constructor(readonly reasons: string[]) {
    super(reasons.join('\n'));
  }
}

/** The bundle of a project file with a `playwright:` section (null without one); a {@link BundleRefusal} when it cannot be packed. */
export async function bundleOf(
  file: string,
  project: Record<string, unknown>,
  maxBytes?: number,
): Promise<PackedBundle | null> {
  if (!needsBundle(project)) return null;
  const raw: unknown = project.playwright;
  // A section the schema refuses: the service names what is wrong with it.
  if (typeof raw !== 'object' || raw === null || typeof (raw as { config?: unknown }).config !== 'string') return null;
  const section = raw as PlaywrightSection;
  const plan = planBundle(file, section);
  if (plan.refusals.length > 0) throw new BundleRefusal(plan.refusals);
  const packed = await packBundle(plan, maxBytes);
  if ('refusal' in packed) throw new BundleRefusal([packed.refusal]);
  return packed;
}

/** Uploads a bundle unless the workspace has it already (asked with HEAD); true when it was sent. */
export async function ensureUploaded(client: TestrunClient, projectSlug: string, bundle: PackedBundle) {
  if (await hasBundle(client, projectSlug, bundle.digest)) return false;
  await uploadBundle(client, projectSlug, bundle.digest, bundle.bytes);
  return true;
}

/** `12 files, 3.4 KB`. */
export function describeBundle(bundle: PackedBundle): string {
  const size = bundle.bytes.length;
  const shown =
    size < 1024
      ? `${size} B`
      : size < 1024 * 1024
        ? `${(size / 1024).toFixed(1)} KB`
        : `${(size / 1048576).toFixed(1)} MB`;
  return `${bundle.files} files, ${shown} (${bundle.digest})`;
}
