import { DeliverySlots } from './delivery-slots';

/** The webhook worker's slots per workspace and endpoint, and which deferred job a freed slot wakes. */
const a1 = { workspaceId: 'ws_a', endpointId: 'whe_a1' };
const a2 = { workspaceId: 'ws_a', endpointId: 'whe_a2' };
const a3 = { workspaceId: 'ws_a', endpointId: 'whe_a3' };
const b1 = { workspaceId: 'ws_b', endpointId: 'whe_b1' };

describe('DeliverySlots', () => {
  it('caps the attempts of a workspace and of an endpoint, leaving the other workspaces theirs', () => {
    const slots = new DeliverySlots<string>({ workspace: 2, endpoint: 1 });
    expect(slots.take(a1)).toBe(true);
    expect(slots.take(a1)).toBe(false); // the endpoint's one
    expect(slots.take(a2)).toBe(true);
    expect(slots.take(a3)).toBe(false); // the workspace's two
    expect(slots.take(b1)).toBe(true);
    slots.release(a1, false);
    expect(slots.take(a3)).toBe(true);
  });

  it('an endpoint whose attempt timed out gets one attempt at a time until one ends in time', () => {
    const slots = new DeliverySlots<string>({ workspace: 4, endpoint: 2 });
    expect(slots.take(a1)).toBe(true);
    slots.release(a1, true);
    expect(slots.take(a1)).toBe(true);
    expect(slots.take(a1)).toBe(false);
    slots.release(a1, false);
    expect(slots.take(a1)).toBe(true);
    expect(slots.take(a1)).toBe(true);
  });

  it('wakes the oldest deferred job of the workspace that has room, and none whose wait is nearly over', () => {
    const slots = new DeliverySlots<string>({ workspace: 1, endpoint: 1 });
    const now = 1_000_000;
    expect(slots.take(a1)).toBe(true);
    slots.defer(a1, 'early', now + 500); // its own wait ends too soon: another process may have it
    slots.defer(a1, 'first', now + 10_000);
    slots.defer(a2, 'second', now + 10_000);
    expect(slots.wake('ws_a', now)).toBeUndefined(); // the workspace is full
    slots.release(a1, false);
    expect(slots.wake('ws_b', now)).toBeUndefined();
    expect(slots.wake('ws_a', now)).toBe('first');
    expect(slots.take(a2)).toBe(true);
    slots.release(a2, false);
    expect(slots.wake('ws_a', now)).toBe('second');
    expect(slots.wake('ws_a', now)).toBeUndefined();
  });
});
