import { emailSchema } from './user-routes';

describe('emailSchema', () => {
  it.each(['ops@example.com', `${'a'.repeat(64)}@example.com`, `x@${'b'.repeat(63)}.example.com`])(
    'accepts %s',
    (email) => {
      expect(emailSchema.safeParse(email).success).toBe(true);
    },
  );

  it.each([
    ['a local part of 65 characters', `${'a'.repeat(65)}@example.com`],
    ['a domain label of 64 characters', `x@${'b'.repeat(64)}.example.com`],
    ['no @', 'ops.example.com'],
  ])('refuses %s, as the document’s format: email does', (_what, email) => {
    const parsed = emailSchema.safeParse(email);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((issue) => issue.message)).toEqual([
      expect.stringMatching(/^must be an email address/),
    ]);
  });
});
