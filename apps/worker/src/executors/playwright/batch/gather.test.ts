import { Gatherings } from './gather';

describe('Gatherings', () => {
  it('lets runs of the same key join an open gathering and tells them its batch; a closed one takes nobody', async () => {
    const gatherings = new Gatherings();
    const run = (runId: string) => ({ runId, definition: {} as never, recorded: Promise.resolve() });
    expect(gatherings.join('k', run('early'))).toBeNull();
    const gathering = gatherings.lead('k');
    const joined = gatherings.join('k', run('b'));
    expect(gatherings.join('other', run('c'))).toBeNull();
    gathering.close();
    expect(gatherings.join('k', run('late'))).toBeNull();
    expect(gathering.joined.map((r) => r.runId)).toEqual(['b']);
    gathering.resolve(null);
    await expect(joined).resolves.toBeNull();
  });
});
