// `--auth oidc` end to end: Chromium signs in at a real OpenID provider
// (npm oidc-provider, tests/e2e/oidc-provider.mjs) through the console's
// authorization code flow with PKCE, acts, and signs out; then the ways in
// that must fail: an expired session, an ID token for another audience, a
// replayed sign-in, a tampered cookie, a cookie of another console, and a
// change without the console's origin.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const h = require('./harness.cjs');

const SECRET = 'e2e-client-secret-7d1b4f9c2a';
const ROLES = 'default = "viewer"\n[groups]\nml-oncall = "operator"\nml-admins = "admin"\n';
const ACCOUNTS = {
  ada: { email: 'ada@example.com', groups: ['ml-oncall'] },
  bob: { email: 'bob@example.com', groups: ['sales'] },
  // Issue 42: an address the provider has not verified, and a username
  // that is a token's name.
  eve: { email: 'ada@example.com', email_verified: false, preferred_username: 'ci-admin', groups: ['ml-oncall'] },
};

const env = {};

test.before(async () => {
  env.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gco-e2e-oidc-'));
  fs.writeFileSync(path.join(env.dir, 'secret'), SECRET);
  fs.writeFileSync(path.join(env.dir, 'roles.toml'), ROLES);
  const [providerPort, mainPort, shortPort] = [await h.freePort(), await h.freePort(), await h.freePort()];
  const { startProvider } = await import('./oidc-provider.mjs');
  env.provider = await startProvider({
    port: providerPort,
    accounts: ACCOUNTS,
    clients: [
      {
        client_id: 'gco-console',
        client_secret: SECRET,
        redirect_uris: [mainPort, shortPort].map((p) => `http://127.0.0.1:${p}/auth/callback`),
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
  });
  const console_ = (port, lifetime) =>
    h.startBackend({
      port,
      args: [
        '--auth', 'oidc',
        '--oidc-issuer', env.provider.issuer,
        '--oidc-client-id', 'gco-console',
        '--oidc-client-secret-file', path.join(env.dir, 'secret'),
        '--oidc-scopes', 'openid,email,profile,groups',
        '--public-url', `http://127.0.0.1:${port}`,
        '--roles-file', path.join(env.dir, 'roles.toml'),
        '--session-lifetime', lifetime,
      ],
    });
  env.main = await console_(mainPort, '8h');
  // Another console: its own key, and sessions of two seconds.
  env.short = await console_(shortPort, '2s');
  assert.equal(env.main.url, `http://127.0.0.1:${mainPort}`, 'the registered redirect port');
  env.browser = await h.launchBrowser();
});

test.after(async () => {
  if (env.browser) await env.browser.close().catch(() => {});
  for (const server of [env.main, env.short]) if (server) await server.stop();
  if (env.provider) await env.provider.stop();
  fs.rmSync(env.dir, { recursive: true, force: true });
});

/** Signs in as `login` from `base`, starting at the console's sign-in route; resolves once back on `next`. */
async function signIn(page, base, login, next = '/') {
  await page.goto(`${base}/auth/sign-in?next=${encodeURIComponent(next)}`);
  await page.locator('input[name=login]').waitFor();
  await page.locator('input[name=login]').fill(login);
  await page.locator('input[name=password]').fill('any');
  await page.locator('button[type=submit]').first().click();
}

async function me(page) {
  return page.evaluate(async () => {
    const r = await fetch('/api/me');
    return { status: r.status, body: await r.json() };
  }).then(({ status, body }) => ({ status, body: body.error ? { error: body.error } : body }));
}

function cookieHeader(cookies, name) {
  const c = cookies.find((c) => c.name === name);
  return c ? `${c.name}=${c.value}` : null;
}

test('sign in, act within the role, sign out', async () => {
  const context = await env.browser.newContext();
  try {
    const page = await h.newPage(context);
    const base = env.main.url;
    assert.equal((await h.api(base, 'GET', '/api/me')).body.error, 'sign in first');
    await signIn(page, base, 'ada', '/?from=e2e');
    await page.waitForURL(`${base}/?from=e2e`);
    assert.deepEqual(await me(page), { status: 200, body: { name: 'ada@example.com', roles: ['operator'] } });
    const session = (await context.cookies(base)).find((c) => c.name === 'gco_session');
    assert.ok(session, 'a session cookie');
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, 'Lax');
    assert.equal(session.secure, false, 'http here; Secure on https');
    assert.ok(!session.value.includes('ada'), 'the cookie is encrypted');

    const deployed = await page.evaluate(async () => {
      const r = await fetch('/api/endpoints', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ endpoint_name: 'oidc-e2e', image: 'nginx:1' }),
      });
      return r.status;
    });
    assert.equal(deployed, 201);
    const deleted = await page.evaluate(async () => {
      const r = await fetch('/api/endpoints/oidc-e2e', { method: 'DELETE' });
      return { status: r.status, body: { error: (await r.json()).error } };
    });
    assert.deepEqual(deleted, {
      status: 403,
      body: { error: 'deleting an endpoint needs the admin role; ada@example.com has the operator role' },
    });

    // The cookie alone is not enough for a change: it must come from the
    // console's page (node's fetch sends no Origin).
    const cookie = cookieHeader(await context.cookies(base), 'gco_session');
    const noOrigin = await h.api(base, 'POST', '/api/endpoints/oidc-e2e/stop', undefined, { cookie });
    assert.equal(noOrigin.status, 403);
    assert.equal(noOrigin.body.error, `changes with a session must come from ${base}`);
    const reads = await h.api(base, 'GET', '/api/endpoints/oidc-e2e', undefined, { cookie });
    assert.equal(reads.status, 200, 'reads need no origin');

    // A tampered cookie, and this cookie at another console: no session.
    const [name, value] = cookie.split('=');
    const flipped = `${name}=${value.slice(0, 10)}${value[10] === 'A' ? 'B' : 'A'}${value.slice(11)}`;
    for (const [target, bad] of [[base, flipped], [env.short.url, cookie]]) {
      const r = await h.api(target, 'GET', '/api/me', undefined, { cookie: bad });
      assert.equal(r.status, 401);
      assert.equal(r.body.error, "the session cookie is not this console's; sign in again");
    }

    // Sign out: a form post from the console's page.
    await page.evaluate(() => {
      const form = document.createElement('form');
      form.method = 'POST';
      form.action = '/auth/sign-out';
      document.body.append(form);
      form.submit();
    });
    await page.waitForURL(`${base}/auth/signed-out`);
    await page.getByRole('heading', { name: 'Signed out' }).waitFor();
    await h.screenshot(page, 'oidc-signed-out', { fullPage: false });
    assert.equal(cookieHeader(await context.cookies(base), 'gco_session'), null, 'the cookie is gone');
    const replayed = await h.api(base, 'GET', '/api/me', undefined, { cookie });
    assert.equal(replayed.status, 401);
    assert.equal(replayed.body.error, 'you signed out; sign in again');
  } finally {
    await context.close();
  }
});

test('a user in no mapped group is a viewer', async () => {
  const context = await env.browser.newContext();
  try {
    const page = await h.newPage(context);
    await signIn(page, env.main.url, 'bob');
    await page.waitForURL(`${env.main.url}/`);
    assert.deepEqual(await me(page), { status: 200, body: { name: 'bob@example.com', roles: ['viewer'] } });
    const refused = await page.evaluate(async () => {
      const r = await fetch('/api/endpoints', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ endpoint_name: 'by-bob', image: 'nginx:1' }),
      });
      return { status: r.status, body: { error: (await r.json()).error } };
    });
    assert.deepEqual(refused, {
      status: 403,
      body: { error: 'deploying an endpoint needs the operator role; bob@example.com has the viewer role' },
    });
  } finally {
    await context.close();
  }
});

test('a sign-in is used once: replaying its callback fails', async () => {
  const context = await env.browser.newContext();
  try {
    const page = await h.newPage(context);
    const base = env.main.url;
    let callback = null;
    page.on('request', (r) => {
      if (r.url().startsWith(`${base}/auth/callback`)) callback = r.url();
    });
    await page.goto(`${base}/auth/sign-in`);
    await page.locator('input[name=login]').waitFor();
    const started = cookieHeader(await context.cookies(`${base}/auth/callback`), 'gco_sign_in');
    assert.ok(started, 'the sign-in cookie');
    await page.locator('input[name=login]').fill('ada');
    await page.locator('input[name=password]').fill('any');
    await page.locator('button[type=submit]').first().click();
    await page.waitForURL(`${base}/`);
    assert.ok(callback, 'the provider sent the browser back');

    // In the browser: its sign-in cookie was consumed.
    await page.goto(callback);
    await page.getByRole('heading', { name: 'Sign-in failed' }).waitFor();
    await page.getByText('This sign-in is unknown, expired or was already used.').waitFor();
    await h.screenshot(page, 'oidc-replayed-sign-in', { fullPage: false });
    // With the sign-in cookie put back: its state was seen.
    const again = await fetch(callback, { headers: { cookie: started }, redirect: 'manual' });
    assert.equal(again.status, 401);
    assert.match(await again.text(), /already used/);
    assert.equal(again.headers.get('set-cookie'), null, 'no session');
  } finally {
    await context.close();
  }
});

test('a session ends when its lifetime does', async () => {
  const context = await env.browser.newContext();
  try {
    const page = await h.newPage(context);
    await signIn(page, env.short.url, 'ada');
    await page.waitForURL(`${env.short.url}/`);
    const first = await me(page);
    assert.equal(first.status, 200);
    // The browser drops the cookie at its Max-Age; one kept past it (a
    // copied cookie) names its own expiry, which the console checks.
    const cookie = cookieHeader(await context.cookies(env.short.url), 'gco_session');
    let last;
    await h.waitUntil(
      async () => {
        last = await h.api(env.short.url, 'GET', '/api/me', undefined, { cookie });
        return last.status === 401;
      },
      { interval: 200, what: 'the session to expire' },
    );
    assert.equal(last.body.error, 'your session has expired; sign in again');
  } finally {
    await context.close();
  }
});

test('an ID token for another audience signs nobody in', async () => {
  const context = await env.browser.newContext();
  env.provider.tamper.audience = 'another-console';
  try {
    const page = await h.newPage(context);
    const base = env.main.url;
    await signIn(page, base, 'ada');
    await page.getByRole('heading', { name: 'Sign-in failed' }).waitFor();
    await page.getByText("The provider's ID token is not valid for this console.").waitFor();
    await h.screenshot(page, 'oidc-wrong-audience', { fullPage: false });
    assert.equal(cookieHeader(await context.cookies(base), 'gco_session'), null);
    assert.equal((await me(page)).status, 401);
    assert.match(env.main.output(), /sign-in refused.*[Aa]udience/);
  } finally {
    env.provider.tamper.audience = null;
    await context.close();
  }
});

test('only a verified email names a user; else the issuer and subject', async () => {
  const context = await env.browser.newContext();
  try {
    const page = await h.newPage(context);
    await signIn(page, env.main.url, 'eve');
    await page.waitForURL(`${env.main.url}/`);
    assert.deepEqual(await me(page), { status: 200, body: { name: `${env.provider.issuer}#eve`, roles: ['operator'] } });
  } finally {
    await context.close();
  }
});

// Issue 42: `next=/%09/evil.example/steal` came back as `Location:
// /\t/evil.example/steal`, which a browser reads as //evil.example.
for (const next of ['/\t/evil.example/steal', '/\t\t/evil.example/steal', '/\\evil.example/steal', '/\r\n/evil.example']) {
  test(`a sign-in with next=${JSON.stringify(next)} stays on the console`, async () => {
    const context = await env.browser.newContext();
    try {
      const page = await h.newPage(context);
      const base = env.main.url;
      await signIn(page, base, 'ada', next);
      await page.waitForURL((url) => !url.href.startsWith(env.provider.issuer) && !url.pathname.startsWith('/auth/'));
      assert.equal(page.url(), `${base}/`);
    } finally {
      await context.close();
    }
  });
}
