import { Router } from 'express';
import type { ArtifactStore, Db, DerivedKeys, Logger } from '@testrun/core';

/** What the detailed view needs from the API process. */
export type ViewDeps = {
  db: Db;
  store: ArtifactStore;
  keys: DerivedKeys;
  publicBaseUrl: string;
  logger: Logger;
};

/** The detailed view behind suiteRunUrl, mounted at /view. No API key: every URL carries a signed token. */
export function createViewRouter(_deps: ViewDeps): Router {
  return Router();
}
