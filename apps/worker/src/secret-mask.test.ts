import { MASK, SecretMask } from './secret-mask';

describe('SecretMask', () => {
  it('masks a long value wherever it occurs, in its escaped spellings too', () => {
    const mask = new SecretMask(['p@ss "w" 1&2']);
    expect(mask.text('typed p@ss "w" 1&2 into #pw')).toBe(`typed ${MASK} into #pw`);
    expect(mask.text('?q=p%40ss%20%22w%22%201%262')).toBe(`?q=${MASK}`);
    expect(mask.text('{"v":"p@ss \\"w\\" 1&2"}')).toBe(`{"v":"${MASK}"}`);
    expect(mask.text('<b>p@ss &quot;w&quot; 1&amp;2</b>')).toBe(`<b>${MASK}</b>`);
  });

  it('masks 1 to 3 character values where they stand alone, never inside a longer word or number', () => {
    const mask = new SecretMask(['42', 'x', 'ж§']);
    expect(mask.text('pin 42, code 1421, x marks, xylophone, ж§!')).toBe(
      `pin ${MASK}, code 1421, ${MASK} marks, xylophone, ${MASK}!`,
    );
    expect(mask.longValues('pin 42')).toBe('pin 42');
  });

  it('treats regular-expression characters in a short value literally', () => {
    expect(new SecretMask(['.*']).text('a .* b and abc')).toBe(`a ${MASK} b and abc`);
  });

  it('masks the longer of two overlapping values whole', () => {
    expect(new SecretMask(['abcd', 'abcdefgh']).text('abcdefgh')).toBe(MASK);
  });

  it('masks the start of a value cut off by an ellipsis', () => {
    expect(new SecretMask(['hdr-debug-Zq81']).text('it was "x: hdr-debu…"')).toBe(`it was "x: ${MASK}…"`);
  });

  it('adds a value found later and keeps the ones it had', () => {
    const mask = new SecretMask(['first-secret']);
    const more = mask.with('typed-pass', '');
    expect(more.text('first-secret typed-pass')).toBe(`${MASK} ${MASK}`);
    expect(mask.text('typed-pass')).toBe('typed-pass');
    expect(more.with('typed-pass')).toBe(more);
  });

  it('changes nothing when there is no secret', () => {
    const mask = new SecretMask(['']);
    expect(mask.isEmpty).toBe(true);
    expect(mask.text('anything')).toBe('anything');
  });
});
