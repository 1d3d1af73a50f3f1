// A real OpenID provider for the sign-in tests: npm `oidc-provider` (an
// OpenID Certified implementation) with its development login pages, on
// 127.0.0.1. Accounts sign in with their id as login (any password) and
// carry an email (verified unless `email_verified: false`), a `groups`
// claim and, when given, a `preferred_username` in the ID token.
//
// `endSession: false` leaves out RP-initiated logout: discovery then names
// no `end_session_endpoint`, as some providers do.
//
// `tamper.audience`, when set, re-signs the token endpoint's ID token with
// the provider's own key and that audience: a genuine token issued for
// another client, which a console must refuse.
import crypto from 'node:crypto';
import Provider from 'oidc-provider';

export async function startProvider({ port, clients, accounts, endSession = true }) {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'e2e-key', alg: 'RS256', use: 'sig' };
  const issuer = `http://127.0.0.1:${port}`;
  const tamper = { audience: null };
  const provider = new Provider(issuer, {
    clients,
    jwks: { keys: [jwk] },
    cookies: { keys: [crypto.randomBytes(32).toString('hex')] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'preferred_username'], groups: ['groups'] },
    // The claims of the scopes asked for go into the ID token itself.
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: endSession } },
    async findAccount(ctx, id) {
      const account = accounts[id];
      if (!account) return undefined;
      return {
        accountId: id,
        async claims() {
          const verified = account.email_verified ?? true;
          const claims = { sub: id, email: account.email, email_verified: verified, name: id, groups: account.groups };
          return account.preferred_username ? { ...claims, preferred_username: account.preferred_username } : claims;
        },
      };
    },
    // First-party console: no consent screen.
    async loadExistingGrant(ctx) {
      const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
      grant.addOIDCScope('openid email profile groups');
      grant.addOIDCClaims(['email', 'groups']);
      await grant.save();
      return grant;
    },
  });
  provider.use(async (ctx, next) => {
    await next();
    if (tamper.audience && ctx.path === '/token' && ctx.body && ctx.body.id_token) {
      ctx.body = { ...ctx.body, id_token: resign(ctx.body.id_token, { aud: tamper.audience }, privateKey) };
    }
  });
  const server = provider.listen(port, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { issuer, tamper, stop: () => new Promise((resolve) => server.close(resolve)) };
}

function resign(token, changes, privateKey) {
  const [header, payload] = token.split('.');
  const claims = { ...JSON.parse(Buffer.from(payload, 'base64url')), ...changes };
  const signed = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  const signature = crypto.sign('sha256', Buffer.from(signed), privateKey).toString('base64url');
  return `${signed}.${signature}`;
}
