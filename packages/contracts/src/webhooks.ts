import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from './enums';
import { Run, SuiteRun } from './runs';

/**
 * The events a webhook endpoint can subscribe to. Each is sent once, when its resource reaches a
 * terminal status (never while it is queued or running). The database holds the same set in a
 * CHECK constraint of `webhook_endpoints.events` and `webhook_messages.event`.
 */
export const WEBHOOK_EVENTS = ['run.finished', 'suite_run.finished'] as const;
export const WebhookEvent = StringEnum(WEBHOOK_EVENTS);
export type WebhookEvent = Static<typeof WebhookEvent>;

export function isWebhookEvent(value: string): value is WebhookEvent {
  return (WEBHOOK_EVENTS as readonly string[]).includes(value);
}

/** Where an outbox message stands (a CHECK of `webhook_messages.state`). */
export const WEBHOOK_MESSAGE_STATES = ['pending', 'delivered', 'failed'] as const;
export type WebhookMessageState = (typeof WEBHOOK_MESSAGE_STATES)[number];

/** The body of `run.finished`: the run exactly as `GET /api/v1/runs/{id}` answers, plus the event. */
export const RunFinishedEvent = Type.Composite([Type.Object({ event: Type.Literal('run.finished') }), Run], {
  additionalProperties: false,
});
export type RunFinishedEvent = Static<typeof RunFinishedEvent>;

/** The body of `suite_run.finished`: the suite run as `GET /api/v1/suite-runs/{id}` answers, plus the event. */
export const SuiteRunFinishedEvent = Type.Composite(
  [Type.Object({ event: Type.Literal('suite_run.finished') }), SuiteRun],
  { additionalProperties: false },
);
export type SuiteRunFinishedEvent = Static<typeof SuiteRunFinishedEvent>;
