// A real OpenID provider (the oidc-provider package) for the sign-in tests, run as a child process
// because the package is ESM-only. Configured by environment variables; prints "ready" once it
// listens. The interaction step (the provider's sign-in page) is a list of the accounts, each a
// link to GET /interaction/<uid>?account=<id>, which signs that account in and grants the
// requested scopes (a test that fetches sets the parameter itself).
const http = require('node:http');

async function main() {
  const { default: Provider } = await import('oidc-provider');
  const port = Number(process.env.PORT);
  const issuer = `http://127.0.0.1:${port}`;
  const accounts = JSON.parse(process.env.ACCOUNTS ?? '{}');
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: process.env.CLIENT_ID,
        client_secret: process.env.CLIENT_SECRET,
        redirect_uris: [process.env.REDIRECT_URI],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    cookies: { keys: ['oidc-provider-test-cookie-key'] },
    pkce: { required: () => true },
    claims: {
      openid: ['sub'],
      profile: ['preferred_username', 'groups'],
      email: ['email', 'email_verified'],
    },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    findAccount: (_ctx, sub) =>
      accounts[sub] ? { accountId: sub, claims: () => ({ sub, ...accounts[sub] }) } : undefined,
  });
  const callback = provider.callback();
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', issuer);
    if (!url.pathname.startsWith('/interaction/')) return callback(req, res);
    (async () => {
      const details = await provider.interactionDetails(req, res);
      const accountId = url.searchParams.get('account');
      if (!accountId) {
        const links = Object.entries(accounts).map(
          ([id, claims]) =>
            `<li><a href="?account=${encodeURIComponent(id)}">${claims.preferred_username ?? id}</a></li>`,
        );
        res.setHeader('content-type', 'text/html; charset=utf-8');
        res.end(
          `<!doctype html><title>Test identity provider</title><h1>Sign in as</h1><ul>${links.join('')}</ul>`,
        );
        return;
      }
      const grant = new provider.Grant({ accountId, clientId: details.params.client_id });
      grant.addOIDCScope(String(details.params.scope));
      const grantId = await grant.save();
      await provider.interactionFinished(
        req,
        res,
        { login: { accountId }, consent: { grantId } },
        { mergeWithLastSubmission: false },
      );
    })().catch((error) => {
      res.statusCode = 500;
      res.end(String(error));
    });
  });
  server.listen(port, '127.0.0.1', () => process.stdout.write('ready\n'));
  process.on('SIGTERM', () => {
    server.close(() => process.exit(0));
    // A browser keeps its connections open; they must not hold the provider up.
    server.closeAllConnections();
  });
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
