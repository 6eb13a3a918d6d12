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

  it('compiles and masks values of 4,096 characters (the longest a variable may have), cut ones too', () => {
    const values = Array.from({ length: 8 }, (_, i) =>
      Array.from({ length: 4_096 }, (_, j) => "ab!@ é-_~%'"[(i * 3 + j * 7) % 11]).join(''),
    );
    const mask = new SecretMask(values);
    const [first = ''] = values;
    expect(mask.text(`<${first}>`)).toBe(`<${MASK}>`);
    expect(mask.text(`<${encodeURIComponent(first)}>`)).toBe(`<${MASK}>`);
    expect(mask.text(`it was "${first.slice(0, 3_000)}…"`)).toBe(`it was "${MASK}…"`);
  });

  it('adds a value found later and keeps the ones it had', () => {
    const mask = new SecretMask(['first-secret']);
    const more = mask.with('typed-pass', '');
    expect(more.text('first-secret typed-pass')).toBe(`${MASK} ${MASK}`);
    expect(mask.text('typed-pass')).toBe('typed-pass');
    expect(more.with('typed-pass')).toBe(more);
  });

  it("merges another mask's values with its own (a batch member's with its batch's)", () => {
    const own = new SecretMask(['member-header']);
    const batch = new SecretMask(['leader-secret', 'member-header']);
    const merged = own.merged(batch);
    expect(merged.text('member-header leader-secret other')).toBe(`${MASK} ${MASK} other`);
    expect(own.text('leader-secret')).toBe('leader-secret');
    expect(own.merged(own)).toBe(own);
  });

  it('changes nothing when there is no secret', () => {
    const mask = new SecretMask(['']);
    expect(mask.isEmpty).toBe(true);
    expect(mask.text('anything')).toBe('anything');
  });

  describe('every spelling a browser or a server gives a value', () => {
    const secret = 'p@ss w0rd!x';
    const mask = new SecretMask([secret]);

    it("masks a form-encoded value (space as +, !'()*~ percent-encoded, either hex case)", () => {
      expect(mask.text('Failed: it was "/echo?pw=p%40ss+w0rd%21x"')).toBe(`Failed: it was "/echo?pw=${MASK}"`);
      expect(mask.text('pw=p%40ss+w0rd%21x&go=1')).toBe(`pw=${MASK}&go=1`);
      expect(mask.text('pw=p%40ss%20w0rd%21x')).toBe(`pw=${MASK}`);
      const marks = new SecretMask(["a!'()*~b"]);
      expect(marks.text('v=a%21%27%28%29%2A%7Eb')).toBe(`v=${MASK}`);
      expect(marks.text('v=a%21%27%28%29%2a%7eb')).toBe(`v=${MASK}`);
      expect(marks.text(`v=${new URLSearchParams({ v: "a!'()*~b" }).toString().slice(2)}`)).toBe(`v=${MASK}`);
    });

    it("masks a value in a URL as the browser's parser encodes it (space as %20, @ and ! kept)", () => {
      const url = new URL(`http://127.0.0.1/echo/${secret}?q=${secret}#${secret}`).href;
      expect(url).toContain('p@ss%20w0rd!x');
      expect(mask.text(url)).toBe(`http://127.0.0.1/echo/${MASK}?q=${MASK}#${MASK}`);
      expect(mask.text(encodeURI(`/a/${secret}`))).toBe(`/a/${MASK}`);
    });

    it('masks escapes of other writers: JSON \\u escapes, \\/, numeric HTML entities', () => {
      const other = new SecretMask(['ä/<b>"&\'']);
      expect(other.text('{"v":"\\u00e4\\/\\u003Cb\\u003E\\"\\u0026\'"}')).toBe(`{"v":"${MASK}"}`);
      expect(other.text('<i>&#228;/&lt;b&gt;&#x22;&amp;&#39;</i>')).toBe(`<i>${MASK}</i>`);
    });

    it('masks its base64, standard and url-safe, padded or not, and inside a longer base64 string', () => {
      const base64 = Buffer.from('a secret?>~').toString('base64');
      expect(base64).toMatch(/[+/]/);
      const b64 = new SecretMask(['a secret?>~']);
      expect(b64.text(`x ${base64} y`)).toBe(`x ${MASK} y`);
      expect(b64.text(`x ${base64.replace(/=+$/, '')} y`)).toBe(`x ${MASK} y`);
      expect(b64.text(`x ${Buffer.from('a secret?>~').toString('base64url')} y`)).toBe(`x ${MASK} y`);
      expect(b64.text(`x=${encodeURIComponent(base64)}`)).toBe(`x=${MASK}`);
      for (const before of ['', 'u', 'us', 'use'])
        for (const after of ['', '!', '!!']) {
          const whole = Buffer.from(`${before}:a secret?>~${after}`).toString('base64');
          expect(b64.text(whole)).toContain(MASK);
        }
    });

    it('masks the start of a value cut off by an ellipsis in an encoded spelling too', () => {
      expect(mask.text('it was "/echo?pw=p%40ss+w0…"')).toBe(`it was "/echo?pw=${MASK}…"`);
      expect(mask.text('it was "/echo?pw=p%40ss+w0rd%2…"')).toBe(`it was "/echo?pw=${MASK}…"`);
      expect(mask.text('it was "p%4…"')).toBe('it was "p%4…"');
    });
  });

  describe('credentials inside Authorization-style values', () => {
    it('masks the credential of a Bearer or token value where a page echoes it alone', () => {
      const mask = new SecretMask(['Bearer tok-8812-Xy', 'token gh-77aa-bb']);
      expect(mask.text('401: invalid token tok-8812-Xy')).toBe(`401: invalid token ${MASK}`);
      expect(mask.text('bad credentials gh-77aa-bb')).toBe(`bad credentials ${MASK}`);
      expect(mask.text('{"authorization":"Bearer tok-8812-Xy"}')).toBe(`{"authorization":"${MASK}"}`);
    });

    it("masks a Basic credential's base64, its user:password and its password; the user name alone stays", () => {
      const credential = Buffer.from('ada:s3cret-pw!').toString('base64');
      const mask = new SecretMask([`Basic ${credential}`]);
      expect(mask.text(`token ${credential}`)).toBe(`token ${MASK}`);
      expect(mask.text('as ada:s3cret-pw!')).toBe(`as ${MASK}`);
      expect(mask.text('user ada, password s3cret-pw!')).toBe(`user ada, password ${MASK}`);
      const keyAsUser = new SecretMask([`basic ${Buffer.from('sk_live_4242:').toString('base64')}`]);
      expect(keyAsUser.text('key sk_live_4242 refused')).toBe(`key ${MASK} refused`);
    });

    it('masks a credential of 1 to 3 characters by the rule for short values: where it stands alone', () => {
      const mask = new SecretMask(['Bearer ab7']);
      expect(mask.text('invalid token ab7; tab7 and ab70 stay')).toBe(`invalid token ${MASK}; tab7 and ab70 stay`);
    });

    it('leaves values that are not credentials whole', () => {
      const mask = new SecretMask(['Basic not base64!', 'Bearer']);
      expect(mask.text('Basic not base64!')).toBe(MASK);
      expect(mask.text('not base64!')).toBe('not base64!');
    });
  });
});
