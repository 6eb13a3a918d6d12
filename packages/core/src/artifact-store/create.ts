import { LocalArtifactStore, type ArtifactStore } from './store';
import type { ArtifactStoreConfig } from '../env';
import { S3ArtifactStore } from './s3';

/** Where artifacts go, for a log line: never credentials (the config holds none). */
export function describeArtifactStore(config: ArtifactStoreConfig): string {
  if (config.kind === 'local') return config.dir;
  const where = `s3://${config.bucket}${config.prefix ? `/${config.prefix}` : ''}`;
  return config.endpoint ? `${where} at ${config.endpoint}` : `${where} in ${config.region}`;
}

/** The store a configuration names. */
export function createArtifactStore(config: ArtifactStoreConfig): ArtifactStore {
  return config.kind === 'local' ? new LocalArtifactStore(config.dir) : new S3ArtifactStore(config);
}
