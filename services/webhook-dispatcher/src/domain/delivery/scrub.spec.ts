import { REDACTED, scrubSecrets, secretPart } from './scrub';

const TOKEN = 'Zq81mPx0LwHv5Tn2';

describe('scrubSecrets (no fragment of a secret in what an owner reads)', () => {
  it.each([
    ['the whole value', `{"authorization":"Bearer ${TOKEN}"}`, `{"authorization":"Bearer ${REDACTED}"}`],
    ['it in upper case', `got ${TOKEN.toUpperCase()}!`, `got ${REDACTED}!`],
    ['a piece of six characters', 'token starts Zq81mP and', `token starts ${REDACTED} and`],
    ['a piece cut at the end', 'echo: Lw5ZZ x0LwHv5', `echo: Lw5ZZ ${REDACTED}`],
    ['two pieces', `${TOKEN.slice(0, 7)} / ${TOKEN.slice(-7)}`, `${REDACTED} / ${REDACTED}`],
  ])('removes %s', (_what, text, scrubbed) => {
    expect(scrubSecrets(text, [TOKEN])).toBe(scrubbed);
  });

  it('leaves five characters, other text and the scheme word alone', () => {
    expect(scrubSecrets('Zq81m and Bearer realm="x"', [secretPart(`Bearer ${TOKEN}`)])).toBe(
      'Zq81m and Bearer realm="x"',
    );
  });

  it('matches a secret shorter than six characters whole only', () => {
    expect(scrubSecrets('key abc1 and abc', ['abc1'])).toBe(`key ${REDACTED} and abc`);
  });

  it('takes what follows an auth scheme as the secret, or the whole value', () => {
    expect(secretPart(`Bearer ${TOKEN}`)).toBe(TOKEN);
    expect(secretPart('Token a b')).toBe('a b');
    expect(secretPart(TOKEN)).toBe(TOKEN);
  });
});
