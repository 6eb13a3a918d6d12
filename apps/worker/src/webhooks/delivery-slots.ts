/** Whom an attempt is for: the workspace and the endpoint it is sent to. */
export type SlotKey = { workspaceId: string; endpointId: string };

/** How many attempts may be in flight at once in one process. */
export type SlotLimits = {
  /** WEBHOOK_WORKSPACE_CONCURRENCY: attempts of one workspace at once. */
  workspace: number;
  /** WEBHOOK_ENDPOINT_CONCURRENCY: attempts to one endpoint at once (1 while it is slow). */
  endpoint: number;
};

/** A job put back because its workspace or endpoint had no room, and until when it waits. */
type Deferred<T> = { key: SlotKey; item: T; until: number };

/** A deferred job is taken back early only this long before its own wait ends at the latest. */
const WAKE_MARGIN_MS = 1_000;
/** Deferred jobs remembered per workspace (more still come back when their wait ends). */
const MAX_DEFERRED = 1_000;
/** Endpoints remembered as slow (the oldest is forgotten first). */
const MAX_SLOW = 10_000;

/**
 * The webhook worker's slots of one process, shared between workspaces and endpoints. Every attempt
 * holds a slot for as long as its endpoint takes to answer (up to the attempt timeout), so without
 * a cap one workspace's slow endpoints would hold every slot and delay every other workspace's
 * events. A workspace gets at most `limits.workspace` slots and an endpoint `limits.endpoint`, one
 * only while its last attempt ran out of time (a slow endpoint backs off to one attempt at a time
 * until it answers again). A job over its cap is put back in the queue (see the worker) and
 * remembered here, so the next slot its workspace frees takes it back at once instead of waiting
 * for its deferral to end: a busy workspace keeps its own slots full.
 */
export class DeliverySlots<T> {
  private readonly byWorkspace = new Map<string, number>();
  private readonly byEndpoint = new Map<string, number>();
  private readonly slow = new Set<string>();
  private readonly deferred = new Map<string, Array<Deferred<T>>>();

  constructor(private readonly limits: SlotLimits) {}

  /** Takes a slot for `key` if its workspace and endpoint have room; false otherwise. */
  take(key: SlotKey): boolean {
    if (!this.hasRoom(key)) return false;
    this.byWorkspace.set(key.workspaceId, (this.byWorkspace.get(key.workspaceId) ?? 0) + 1);
    this.byEndpoint.set(key.endpointId, (this.byEndpoint.get(key.endpointId) ?? 0) + 1);
    return true;
  }

  /** Gives back a slot {@link take} gave; `timedOut` says whether the attempt ran out of time. */
  release(key: SlotKey, timedOut: boolean): void {
    decrement(this.byWorkspace, key.workspaceId);
    decrement(this.byEndpoint, key.endpointId);
    this.slow.delete(key.endpointId);
    if (!timedOut) return;
    this.slow.add(key.endpointId);
    if (this.slow.size > MAX_SLOW) this.slow.delete(this.slow.values().next().value ?? '');
  }

  /** Remembers a job put back until `until` (epoch ms) for want of room. */
  defer(key: SlotKey, item: T, until: number): void {
    const list = this.deferred.get(key.workspaceId) ?? [];
    if (list.length >= MAX_DEFERRED) return;
    list.push({ key, item, until });
    this.deferred.set(key.workspaceId, list);
  }

  /**
   * The oldest job of `workspaceId` put back that now has room and is surely still waiting (its wait
   * ends more than a margin from `now`, so no other process has taken it yet); forgotten here.
   */
  wake(workspaceId: string, now = Date.now()): T | undefined {
    const list = this.deferred.get(workspaceId);
    if (!list) return undefined;
    const live = list.filter((d) => d.until - WAKE_MARGIN_MS > now);
    const index = live.findIndex((d) => this.hasRoom(d.key));
    const [found] = index >= 0 ? live.splice(index, 1) : [];
    if (live.length > 0) this.deferred.set(workspaceId, live);
    else this.deferred.delete(workspaceId);
    return found?.item;
  }

  private hasRoom(key: SlotKey): boolean {
    const endpointCap = this.slow.has(key.endpointId) ? 1 : this.limits.endpoint;
    return (
      (this.byWorkspace.get(key.workspaceId) ?? 0) < this.limits.workspace &&
      (this.byEndpoint.get(key.endpointId) ?? 0) < endpointCap
    );
  }
}

function decrement(counts: Map<string, number>, key: string): void {
  const n = (counts.get(key) ?? 0) - 1;
  if (n > 0) counts.set(key, n);
  else counts.delete(key);
}
