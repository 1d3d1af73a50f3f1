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
// Issue 43, item 8: a console that gives users in no mapped group no role.
const NO_DEFAULT_ROLES = 'default = "none"\n[groups]\nml-oncall = "operator"\n';
const ACCOUNTS = {
  ada: { email: 'ada@example.com', groups: ['ml-oncall'] },
  bob: { email: 'bob@example.com', groups: ['sales'] },
  // Issue 42: an address the provider has not verified, and a username
  // that is a token's name.
  eve: { email: 'ada@example.com', email_verified: false, preferred_username: 'ci-admin', groups: ['ml-oncall'] },
  nora: { email: 'nora@example.com', groups: ['sales'] },
};

const env = {};

test.before(async () => {
  env.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gco-e2e-oidc-'));
  fs.writeFileSync(path.join(env.dir, 'secret'), SECRET);
  fs.writeFileSync(path.join(env.dir, 'roles.toml'), ROLES);
  fs.writeFileSync(path.join(env.dir, 'no-default.toml'), NO_DEFAULT_ROLES);
  const ports = {};
  for (const name of ['provider', 'plainProvider', 'main', 'short', 'expiring', 'noRole', 'plain']) ports[name] = await h.freePort();
  const client = (consoles) => ({
    client_id: 'gco-console',
    client_secret: SECRET,
    redirect_uris: consoles.map((p) => `http://127.0.0.1:${p}/auth/callback`),
    post_logout_redirect_uris: consoles.map((p) => `http://127.0.0.1:${p}/auth/signed-out`),
    grant_types: ['authorization_code'],
    response_types: ['code'],
  });
  const { startProvider } = await import('./oidc-provider.mjs');
  env.provider = await startProvider({
    port: ports.provider,
    accounts: ACCOUNTS,
    clients: [client([ports.main, ports.short, ports.expiring, ports.noRole])],
  });
  // Issue 43, item 1: a provider whose discovery names no end_session_endpoint.
  env.plainProvider = await startProvider({
    port: ports.plainProvider,
    accounts: ACCOUNTS,
    endSession: false,
    clients: [client([ports.plain])],
  });
  const console_ = (port, lifetime, { provider = env.provider, roles = 'roles.toml' } = {}) =>
    h.startBackend({
      port,
      args: [
        '--auth', 'oidc',
        '--oidc-issuer', provider.issuer,
        '--oidc-client-id', 'gco-console',
        '--oidc-client-secret-file', path.join(env.dir, 'secret'),
        '--oidc-scopes', 'openid,email,profile,groups',
        '--public-url', `http://127.0.0.1:${port}`,
        '--roles-file', path.join(env.dir, roles),
        '--session-lifetime', lifetime,
      ],
    });
  env.main = await console_(ports.main, '8h');
  // Another console: its own key, and sessions of two seconds.
  env.short = await console_(ports.short, '2s');
  // Issue 43, item 2: sessions short enough to watch one end.
  env.expiring = await console_(ports.expiring, '20s');
  env.noRole = await console_(ports.noRole, '8h', { roles: 'no-default.toml' });
  env.plain = await console_(ports.plain, '8h', { provider: env.plainProvider });
  assert.equal(env.main.url, `http://127.0.0.1:${ports.main}`, 'the registered redirect port');
  env.browser = await h.launchBrowser();
});

test.after(async () => {
  if (env.browser) await env.browser.close().catch(() => {});
  for (const server of [env.main, env.short, env.expiring, env.noRole, env.plain]) if (server) await server.stop();
  for (const provider of [env.provider, env.plainProvider]) if (provider) await provider.stop();
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
  }).then(({ status, body }) => ({ status, body: body.error ? { error: body.error } : { name: body.name, roles: body.roles } }));
}

/** The session's end as `GET /api/me` tells it (issue 43, item 2). */
async function sessionOf(page) {
  return page.evaluate(() => fetch('/api/me').then((r) => r.json()).then((b) => b.session));
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

    // Sign out: the header's form post from the console's page.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: 'Sign out', exact: true }).click();
    // The provider's own sign-out (RP-initiated logout), then back.
    await page.getByRole('button', { name: 'Yes, sign me out' }).click();
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
    // The sign-in lands on `/api/me` itself, not the console's page: its
    // script, loading under a busy CI, could outlive two seconds and
    // sign in again on its own.
    const landed = page.waitForResponse(`${env.short.url}/api/me`);
    await signIn(page, env.short.url, 'ada', '/api/me');
    const first = await landed;
    assert.equal(first.status(), 200);
    assert.equal((await first.json()).name, 'ada@example.com');
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

// --- Issue 43 ---------------------------------------------------------------

const header = (page) => page.getByRole('navigation', { name: 'Main' });

/** A new browser context signed in as `login` at `base`, on the list. */
async function signedIn(base, login) {
  const context = await env.browser.newContext();
  const page = await h.newPage(context);
  await signIn(page, base, login);
  await page.waitForURL(`${base}/`);
  return { context, page };
}

/** Fills the provider's login form (it must be asking) as `login`. */
async function giveCredentials(page, login) {
  await page.locator('input[name=login]').fill(login);
  await page.locator('input[name=password]').fill('any');
  await page.locator('button[type=submit]').first().click();
}

test('Sign out ends the provider session too: signing in again asks who, and can be another user', async () => {
  const base = env.main.url;
  const { context, page } = await signedIn(base, 'ada');
  try {
    await header(page).getByText('ada@example.com').waitFor();
    const logout = [];
    page.on('request', (r) => {
      if (r.url().startsWith(`${env.provider.issuer}/session/end`)) logout.push(new URL(r.url()));
    });
    await header(page).getByRole('button', { name: 'Sign out', exact: true }).click();
    // RP-initiated logout at the provider's end_session_endpoint.
    await page.getByRole('button', { name: 'Yes, sign me out' }).waitFor();
    const asked = logout.find((u) => u.pathname === '/session/end');
    assert.ok(asked, 'the provider was asked to sign out');
    assert.ok(asked.searchParams.get('id_token_hint'), 'with the session ID token as a hint');
    assert.equal(asked.searchParams.get('post_logout_redirect_uri'), `${base}/auth/signed-out`);
    assert.equal(asked.searchParams.get('client_id'), 'gco-console');
    await page.getByRole('button', { name: 'Yes, sign me out' }).click();
    await page.waitForURL(`${base}/auth/signed-out`);
    await page.getByText('You are signed out of the GCO console, and your identity provider was asked to end its session too.').waitFor();
    await h.screenshot(page, 'oidc-sign-out-and-back-1-signed-out', { fullPage: false });

    // Signing in again asks for credentials (no silent sign-in as ada)...
    await page.getByRole('link', { name: 'Sign in again' }).click();
    await page.locator('input[name=login]').waitFor();
    await h.screenshot(page, 'oidc-sign-out-and-back-2-asks-again', { fullPage: false });
    // ...so another user can sign in at the same browser.
    await giveCredentials(page, 'bob');
    await page.waitForURL(`${base}/`);
    assert.deepEqual(await me(page), { status: 200, body: { name: 'bob@example.com', roles: ['viewer'] } });
    await header(page).getByText('bob@example.com').waitFor();
    await h.screenshot(page, 'oidc-sign-out-and-back-3-another-user', { fullPage: false });
  } finally {
    await context.close();
  }
});

test('without an end_session_endpoint, the sign-in after a sign-out asks the provider to prompt', async () => {
  const base = env.plain.url;
  const { context, page } = await signedIn(base, 'ada');
  try {
    await header(page).getByText('ada@example.com').waitFor();
    await header(page).getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL(`${base}/auth/signed-out`);
    await page.getByText('Signing in again asks your identity provider for your credentials.').waitFor();
    // Opening the console again (not only the link) goes to the provider
    // with prompt=login, which asks, although its own session is open.
    const authorize = [];
    page.on('request', (r) => {
      if (r.url().startsWith(`${env.plainProvider.issuer}/auth?`)) authorize.push(new URL(r.url()));
    });
    await page.goto(`${base}/`);
    await page.locator('input[name=login]').waitFor();
    assert.equal(authorize.at(-1).searchParams.get('prompt'), 'login');
    await giveCredentials(page, 'bob');
    await page.waitForURL(`${base}/`);
    assert.deepEqual(await me(page), { status: 200, body: { name: 'bob@example.com', roles: ['viewer'] } });
    // Once signed in, the next sign-in (a renewal) asks nothing: the
    // sign-out is forgotten.
    await page.goto(`${base}/auth/sign-in?next=%2F%3Frenewed`);
    await page.waitForURL(`${base}/?renewed`);
    assert.equal(authorize.length, 2);
    assert.equal(authorize[1].searchParams.get('prompt'), null);
  } finally {
    await context.close();
  }
});

test('a user in no mapped group sees their name, no role, and Sign out', async () => {
  const base = env.noRole.url;
  const { context, page } = await signedIn(base, 'nora');
  try {
    assert.deepEqual(await me(page), { status: 200, body: { name: 'nora@example.com', roles: [] } });
    const nav = header(page);
    await nav.getByText('nora@example.com').waitFor();
    assert.equal(await nav.locator('.badge.role').innerText(), 'no role');
    await nav.getByRole('button', { name: 'Sign out', exact: true }).waitFor();
    // Everything else is refused in the server's words.
    await page.getByText('reading endpoints needs the viewer role; nora@example.com has no role').waitFor();
    assert.equal(await nav.getByRole('link', { name: 'New endpoint' }).isVisible(), false);
    await h.screenshot(page, 'oidc-no-role-header', { fullPage: false });
    await nav.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByRole('button', { name: 'Yes, sign me out' }).click();
    await page.waitForURL(`${base}/auth/signed-out`);
  } finally {
    await context.close();
  }
});

test('an expiring session warns, and a pending review and its edits survive the sign-in round trip', async () => {
  const base = env.expiring.url;
  const { context, page } = await signedIn(base, 'ada');
  try {
    const deployed = await page.evaluate(async () => {
      const r = await fetch('/api/endpoints', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ endpoint_name: 'expiry-e2e', image: 'nginx:1', replicas: 4 }),
      });
      return r.status;
    });
    assert.equal(deployed, 201);
    await page.goto(`${base}/endpoints/expiry-e2e`);
    const replicas = page.getByLabel('Replicas', { exact: true });
    await page.waitForFunction(() => document.querySelector('#new-replicas')?.value === '4');
    // A pending "scale 4 -> 6", and an unsent edit in another form.
    await replicas.fill('6');
    await page.getByLabel('New image', { exact: true }).fill('nginx:2');
    await page.getByRole('button', { name: 'Review scale' }).click();
    const review = page.getByRole('dialog', { name: 'Review: scale' });
    await review.waitFor();
    assert.match(await review.locator('table.diff').innerText(), /spec\.replicas\s+4\s+6/);

    // A warning before the end (half of a 20 s session), with the way to renew.
    const warning = page.locator('.session-ending');
    await warning.getByText(/Your session ends in \d+ s \(at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\S*\)/).waitFor({ timeout: 15_000 });
    await warning.getByRole('button', { name: 'Sign in again now' }).waitFor();
    await h.screenshot(page, 'session-expiry-warning', { fullPage: false });

    // The session ends under the page: its next read signs in again (the
    // provider asks nothing while its own session lasts) and comes back.
    const restored = page.locator('#restored-notice');
    await restored.waitFor({ timeout: 30_000 });
    assert.equal(
      await restored.innerText().then((t) => t.replace(/\s*Dismiss$/, '')),
      'Restored after signing in again: your unsent edits and the review of \u201cscale\u201d, as you left them. The review is computed again on the endpoint as it is now.',
    );
    assert.equal(page.url(), `${base}/endpoints/expiry-e2e`);
    await review.waitFor();
    assert.match(await review.locator('table.diff').innerText(), /spec\.replicas\s+4\s+6/);
    assert.equal(await replicas.inputValue(), '6');
    assert.equal(await page.getByLabel('New image', { exact: true }).inputValue(), 'nginx:2');
    await h.screenshot(page, 'session-restored-review', { fullPage: false });
    // The review applies with the new session.
    await review.getByRole('button', { name: 'Apply', exact: true }).click();
    await page.locator('#outcome').filter({ hasText: /./ }).waitFor();
    const stored = await page.evaluate(() => fetch('/api/endpoints/expiry-e2e').then((r) => r.json()));
    assert.equal(stored.spec.replicas, 6);

    // "Sign in again now" renews before the end, back on the same page.
    const callback = page.waitForRequest((r) => r.url().startsWith(`${base}/auth/callback`), { timeout: 30_000 });
    await warning.getByRole('button', { name: 'Sign in again now' }).click({ timeout: 15_000 });
    await callback;
    await page.waitForURL(`${base}/endpoints/expiry-e2e`);
    await page.locator('.record').waitFor();
    const renewed = await sessionOf(page);
    assert.equal(renewed.lifetime, 20);
    assert.ok(renewed.expires_in > 12, `a new session: ${JSON.stringify(renewed)}`);
  } finally {
    await context.close();
  }
});
