import { AnchorFilter } from './secret-anchors';

describe('AnchorFilter', () => {
  const filter = AnchorFilter.of(['hdr-debug-Zq81', 'w0rd', 'cEBzcyB3MHJk']);

  it('finds an anchor at the start, in the middle and at the end of a text, in any text', () => {
    expect(filter?.test('hdr-debug-Zq81 first')).toBe(true);
    expect(filter?.test('é Ъ p%40ss+w0rd%21x é')).toBe(true);
    expect(filter?.test('basic cEBzcyB3MHJk')).toBe(true);
  });

  it('finds none where the text only shares some characters with an anchor', () => {
    expect(filter?.test('hdr-debug-Zq8 w0r word cEBzcyB3MHJ é')).toBe(false);
    expect(filter?.test('')).toBe(false);
    // Same low bytes as "w0rd" (U+0177 is 0x77 like "w"), not the anchor.
    expect(filter?.test('ŷ0rd')).toBe(false);
  });

  it('is not built when an anchor is shorter than 4 characters: every text is then scanned', () => {
    expect(AnchorFilter.of(['abc', 'long-enough'])).toBeNull();
  });
});
