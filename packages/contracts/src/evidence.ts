import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from './enums';

/**
 * What a run keeps as evidence of what happened: a Playwright trace, a video and a screenshot after
 * each step. Each is chosen on its own, with Playwright's words: `on` keeps it for every run,
 * `on-failure` records it and keeps it only when the run does not pass, `off` never records it.
 */
export const EVIDENCE_MODES = ['on', 'on-failure', 'off'] as const;
export type EvidenceMode = (typeof EVIDENCE_MODES)[number];
export const EvidenceMode = StringEnum(EVIDENCE_MODES);

export const EVIDENCE_KINDS = ['trace', 'video', 'screenshots'] as const;
export type EvidenceKind = (typeof EVIDENCE_KINDS)[number];

const DESCRIPTIONS: Record<EvidenceKind, string> = {
  trace: 'The Playwright trace (actions, DOM snapshots, network).',
  video: 'A video of the run (needs a worker with video recording).',
  screenshots: 'A screenshot after each step; `on-failure` keeps only the failing step’s.',
};

/**
 * Evidence settings as a request, a project or a test states them: any of the three keys, each a
 * mode. A key left out falls through to the next level (request > test > project > default).
 */
export const EvidenceSettings = Type.Object(
  {
    trace: Type.Optional(StringEnum(EVIDENCE_MODES, { description: DESCRIPTIONS.trace })),
    video: Type.Optional(StringEnum(EVIDENCE_MODES, { description: DESCRIPTIONS.video })),
    screenshots: Type.Optional(StringEnum(EVIDENCE_MODES, { description: DESCRIPTIONS.screenshots })),
  },
  {
    additionalProperties: false,
    description:
      'What the run keeps: `on` always, `on-failure` only when the run does not pass, `off` never. Keys left out come from the test, then the project, then the default (trace on-failure, video off, screenshots on-failure).',
  },
);
export type EvidenceSettings = Static<typeof EvidenceSettings>;

/** The policy a run was created with: every key resolved. */
export const EvidencePolicy = Type.Object(
  {
    trace: StringEnum(EVIDENCE_MODES, { description: DESCRIPTIONS.trace }),
    video: StringEnum(EVIDENCE_MODES, { description: DESCRIPTIONS.video }),
    screenshots: StringEnum(EVIDENCE_MODES, { description: DESCRIPTIONS.screenshots }),
  },
  { additionalProperties: false, description: 'The evidence policy resolved when the run was created.' },
);
export type EvidencePolicy = Static<typeof EvidencePolicy>;

/**
 * The deployment's default: for every run that does not pass, what a person needs to see why (the
 * failing step's screenshot, the steps and a trace); for a passing run nothing but its steps. No
 * video: its encoder costs CPU and memory on every run, and the trace already shows the page.
 */
export const DEFAULT_EVIDENCE: Readonly<EvidencePolicy> = Object.freeze({
  trace: 'on-failure',
  video: 'off',
  screenshots: 'on-failure',
});

/** The levels a run's policy comes from; any may be absent. */
export type EvidenceLevels = {
  project?: EvidenceSettings | null;
  test?: EvidenceSettings | null;
  request?: EvidenceSettings | null;
};

/** Resolves each key on its own: request, else test, else project, else `defaults`. */
export function resolveEvidence(levels: EvidenceLevels, defaults: EvidencePolicy = DEFAULT_EVIDENCE): EvidencePolicy {
  const pick = (kind: EvidenceKind): EvidenceMode =>
    levels.request?.[kind] ?? levels.test?.[kind] ?? levels.project?.[kind] ?? defaults[kind];
  return { trace: pick('trace'), video: pick('video'), screenshots: pick('screenshots') };
}

/** Whether a mode records at all (`off` never starts the recorder). */
export function recordsEvidence(mode: EvidenceMode): boolean {
  return mode !== 'off';
}

/** Whether a mode keeps what was recorded, given whether the run passed. */
export function keepsEvidence(mode: EvidenceMode, passed: boolean): boolean {
  return mode === 'on' || (mode === 'on-failure' && !passed);
}

function isEvidenceMode(value: unknown): value is EvidenceMode {
  return (EVIDENCE_MODES as readonly unknown[]).includes(value);
}

/**
 * Settings as stored (a JSON column of a project, test or run): each key that holds a mode is
 * taken, anything else is left out. Null or absent gives no settings.
 */
export function readEvidenceSettings(stored: unknown): EvidenceSettings {
  const rec = stored !== null && typeof stored === 'object' ? (stored as Record<string, unknown>) : {};
  const out: EvidenceSettings = {};
  for (const kind of EVIDENCE_KINDS) {
    const value = rec[kind];
    if (isEvidenceMode(value)) out[kind] = value;
  }
  return out;
}

/** A run's stored policy; keys it lacks (a run created before policies existed has none) are the defaults. */
export function readEvidencePolicy(stored: unknown, defaults: EvidencePolicy = DEFAULT_EVIDENCE): EvidencePolicy {
  return resolveEvidence({ request: readEvidenceSettings(stored) }, defaults);
}

/** Settings with at least one key, or null: what a project or test stores. */
export function evidenceSettingsOrNull(settings: EvidenceSettings | undefined): EvidenceSettings | null {
  return settings && Object.keys(settings).length > 0 ? { ...settings } : null;
}
