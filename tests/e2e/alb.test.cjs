// The console behind an Application Load Balancer that signs users in
// (--auth alb), as deploy/cdk and deploy/helm set it up: every page path
// sends a browser without the ALB's session to the IdP, while /api/*
// answers 401 (the listener rule with OnUnauthenticatedRequest deny; the
// chart's `-api` Ingress). When the session ends under an open page, the
// page must say so and offer its way back: "reload the page to sign in
// again", whose reload goes through the sign-in and comes back working.
//
// A small stand-in plays the ALB: it keeps a session cookie, sends a
// request without one to a sign-in that sets it (the IdP's round trip), and
// forwards the rest with `x-amzn-oidc-data` signed as the ALB signs it
// (ES256, padded segments, its own key endpoint). The console is given the
// Helm chart's --alb-arn pattern (`.../app/<name>/*`).
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const http = require('node:http');
const h = require('./harness.cjs');

const ALB_NAME = 'gco-console';
const ALB_ARN = `arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/app/${ALB_NAME}/50dc6c495c0c9188`;
const ALB_PATTERN = `arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/app/${ALB_NAME}/*`;
const KID = '5f0e7a2c-0000-4000-8000-000000000001';
const SESSION = 'AWSELBAuthSessionCookie-0';

/** Base64url with the `=` padding the ALB keeps. */
function padded(buffer) {
  const text = buffer.toString('base64url');
  return text + '='.repeat((4 - (text.length % 4)) % 4);
}

/** `x-amzn-oidc-data` as the ALB writes it. */
function albToken(key, claims) {
  const exp = Math.floor(Date.now() / 1000) + 3600;
  const header = padded(Buffer.from(JSON.stringify({ alg: 'ES256', kid: KID, signer: ALB_ARN, iss: 'https://idp.test', client: 'gco', exp, typ: 'JWT' })));
  const payload = padded(Buffer.from(JSON.stringify({ ...claims, exp, iss: 'https://idp.test' })));
  const signature = crypto.sign('sha256', Buffer.from(`${header}.${payload}`), { key, dsaEncoding: 'ieee-p1363' });
  return `${header}.${payload}.${padded(signature)}`;
}

/**
 * The ALB stand-in on a free port in front of `backend` (its URL once
 * started). Resolves to { url, keysUrl, signIns, close() }.
 */
async function startAlb(getBackend) {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const pem = publicKey.export({ type: 'spki', format: 'pem' });
  const port = await h.freePort();
  const url = `http://127.0.0.1:${port}`;
  const alb = { url, keysUrl: `${url}/public-keys/`, logoutUrl: `${url}/idp/logout?client_id=gco`, signIns: 0, logouts: 0 };
  const server = http.createServer((req, res) => {
    const path = req.url;
    if (path === `/public-keys/${KID}`) {
      res.writeHead(200, { 'content-type': 'text/plain' });
      return res.end(pem);
    }
    // The IdP's logout URL (issue 43): its session ends there.
    if (path.startsWith('/idp/logout')) {
      alb.logouts += 1;
      res.writeHead(200, { 'content-type': 'text/html' });
      // No favicon request: on the stand-in's origin it would sign in again.
      return res.end('<html><head><title>Signed out</title><link rel="icon" href="data:,"></head><body><h1>Signed out of the IdP</h1></body></html>');
    }
    // The IdP's round trip, ended: the session cookie, then back.
    if (path.startsWith('/oauth2/idpresponse')) {
      alb.signIns += 1;
      const back = new URL(path, url).searchParams.get('state') || '/';
      res.writeHead(302, { location: back, 'set-cookie': `${SESSION}=signed-in; Path=/; HttpOnly` });
      return res.end();
    }
    const signedIn = (req.headers.cookie || '').split(/;\s*/).includes(`${SESSION}=signed-in`);
    if (!signedIn) {
      if (path === '/api' || path.startsWith('/api/')) {
        // OnUnauthenticatedRequest: deny. The ALB's own page, not JSON.
        res.writeHead(401, { 'content-type': 'text/html' });
        return res.end('<html><head><title>401 Authorization Required</title></head><body><center><h1>401 Authorization Required</h1></center></body></html>');
      }
      res.writeHead(302, { location: `/oauth2/idpresponse?state=${encodeURIComponent(path)}` });
      return res.end();
    }
    const headers = { ...req.headers, 'x-amzn-oidc-data': albToken(privateKey, { sub: '0f3c', email: 'ana@corp.test', email_verified: true, groups: ['ml-oncall'] }) };
    delete headers.cookie;
    const target = new URL(getBackend());
    const upstream = http.request(
      { host: target.hostname, port: target.port, method: req.method, path, headers: { ...headers, host: `127.0.0.1:${port}` } },
      (answer) => {
        res.writeHead(answer.statusCode, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', (e) => {
      res.writeHead(502);
      res.end(String(e));
    });
    req.pipe(upstream);
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  alb.close = () => new Promise((resolve) => server.close(resolve));
  return alb;
}

const env = { browser: null, backend: null, alb: null };
test.before(async () => {
  env.alb = await startAlb(() => env.backend.url);
  env.backend = await h.startBackend({
    args: [
      '--auth', 'alb',
      '--alb-arn', ALB_PATTERN,
      '--alb-public-keys', env.alb.keysUrl,
      '--alb-logout-url', env.alb.logoutUrl,
      '--roles', 'default = "viewer"\n[groups]\nml-oncall = "operator"\n',
    ],
  });
  env.browser = await h.launchBrowser();
});
test.after(async () => {
  if (env.browser) await env.browser.close().catch(() => {});
  if (env.backend) await env.backend.stop();
  if (env.alb) await env.alb.close();
});

test('when the ALB session ends, /api/* answers 401 and the page offers to sign in again', async () => {
  const context = await env.browser.newContext();
  try {
    const page = await h.newPage(context);
    // The first visit goes through the sign-in and lands on the list.
    await page.goto(`${env.alb.url}/`);
    assert.equal(env.alb.signIns, 1);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Endpoints', exact: true }).waitFor();
    const me = await page.evaluate(() => fetch('/api/me').then((r) => r.json()));
    assert.deepEqual(me, { name: 'ana@corp.test', roles: ['operator'] });

    // The session ends (its cookie expires): the next API call is refused
    // by the ALB itself, with its HTML, not sent to the IdP.
    await context.clearCookies();
    const refused = await page.evaluate(() => fetch('/api/endpoints').then((r) => ({ status: r.status, redirected: r.redirected })));
    assert.deepEqual(refused, { status: 401, redirected: false });
    const banner = page.getByRole('alert').filter({ hasText: 'The load balancer no longer vouches for you' });
    await banner.waitFor({ timeout: 20_000 });
    assert.match(await banner.innerText(), /reload the page to sign in again/);
    await h.screenshot(page, 'alb-sign-in-again', { fullPage: false });

    // Its link reloads the page, which signs in again and works.
    await banner.getByRole('link', { name: 'Reload', exact: true }).click();
    await h.waitUntil(() => env.alb.signIns === 2, { what: 'the second sign-in' });
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Endpoints', exact: true }).waitFor();
    await banner.waitFor({ state: 'detached' });
    assert.equal(await page.evaluate(() => fetch('/api/me').then((r) => r.status)), 200);
    h.assertNoProblems(page, [401]);
  } finally {
    await context.close();
  }
});

// Issue 43, item 1: behind the ALB, Sign out expires the ALB's session
// cookies (every AWSELBAuthSessionCookie-<n> shard) and goes to the
// IdP's logout URL (--alb-logout-url); the next visit signs in anew.
test('Sign out behind the ALB ends its session and goes to the IdP logout URL', async () => {
  const context = await env.browser.newContext();
  try {
    const page = await h.newPage(context);
    const before = env.alb.signIns;
    await page.goto(`${env.alb.url}/`);
    assert.equal(env.alb.signIns, before + 1);
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByText('ana@corp.test').waitFor();
    // A second shard, as the ALB writes for a large session.
    await context.addCookies([{ name: 'AWSELBAuthSessionCookie-1', value: 'shard', url: env.alb.url }]);
    await nav.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByRole('heading', { name: 'Signed out of the IdP' }).waitFor();
    assert.equal(env.alb.logouts, 1);
    assert.equal(page.url(), env.alb.logoutUrl);
    const left = (await context.cookies(env.alb.url)).filter((c) => c.name.startsWith('AWSELBAuthSessionCookie'));
    assert.deepEqual(left, [], 'every shard of the ALB session is gone');
    await h.screenshot(page, 'alb-signed-out', { fullPage: false });

    // The console again: the ALB has no session, so it signs in anew.
    await page.goto(`${env.alb.url}/`);
    assert.equal(env.alb.signIns, before + 2);
    await nav.getByText('ana@corp.test').waitFor();
  } finally {
    await context.close();
  }
});
