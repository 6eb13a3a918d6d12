/**
 * Entry point of the bundle (dist/index.js) that action.yml runs as both its `main` and its
 * `post` step: the state the main step saves tells the two apart.
 */
import * as core from '@actions/core';
import { runMain } from './main';
import { runPost } from './post';
import { isPostPhase } from './state';

async function start(): Promise<void> {
  if (isPostPhase()) await runPost();
  else await runMain(process.env);
}

start().catch((e: unknown) => core.setFailed(e instanceof Error ? e.message : String(e)));
