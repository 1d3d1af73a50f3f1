// The console's container image (scripts/image.sh, the Containerfile):
// built, then run as a container with the environment deploy/cdk gives the
// task (--auth alb, the roles as inline TOML) against a dynalite this test
// starts and a server handing out the "load balancer's" public key, and
// checked from outside: /healthz and the console's page answer, a request
// with a signed x-amzn-oidc-data header reads the table with the mapped
// role, the process runs as the image's unprivileged user, the image holds
// only the binary, the console, CA certificates and the user's entry, and
// with no DynamoDB configured it refuses to start and says why.
//
// Runs with docker when a daemon answers, else with buildah (vfs storage,
// chroot isolation: the container shares the host's network, so it listens
// on a free port of 127.0.0.1). GCO_IMAGE=<ref> uses an image already built
// by scripts/image.sh instead of building it here.
'use strict';

const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const http = require('node:http');
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { test, before, after } = require('node:test');

const ROOT = path.resolve(__dirname, '..', '..');
const UID = 65532;
const ALB_ARN = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/app/gco-console/50dc6c495c0c9188';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (...args) => console.log('[image]', ...args);

function run(cmd, args, { input, allowFail = false, timeout = 120_000 } = {}) {
  const r = spawnSync(cmd, args, { cwd: ROOT, input, encoding: 'utf8', timeout, maxBuffer: 64 << 20 });
  if (!allowFail && r.status !== 0) {
    throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}${r.error ? ` (${r.error.message})` : ''}:\n${r.stderr}`);
  }
  return r;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

async function waitFor(url, ms, isDone = () => false) {
  const deadline = Date.now() + ms;
  let last;
  while (Date.now() < deadline) {
    if (isDone()) break;
    try {
      const r = await fetch(url);
      if (r.ok) return r;
      last = new Error(`${url}: ${r.status}`);
    } catch (e) {
      last = e;
    }
    await sleep(100);
  }
  throw last || new Error(`${url} did not answer`);
}

const dockerWorks = () => spawnSync('docker', ['info'], { stdio: 'ignore' }).status === 0;
const BUILDER = process.env.GCO_IMAGE_BUILDER || (dockerWorks() ? 'docker' : 'buildah');
const BUILDAH = ['--storage-driver', 'vfs'];

/** The engine's operations, one shape for docker and buildah. */
const engine = {
  docker: {
    config(image) {
      return JSON.parse(run('docker', ['image', 'inspect', image]).stdout)[0].Config;
    },
    size(image) {
      return Number(run('docker', ['image', 'inspect', '-f', '{{.Size}}', image]).stdout.trim());
    },
    files(image) {
      const id = run('docker', ['create', image]).stdout.trim();
      try {
        const tar = spawnSync('sh', ['-c', `docker export ${id} | tar -tv`], { encoding: 'utf8', maxBuffer: 64 << 20 });
        return tarListing(tar.stdout);
      } finally {
        run('docker', ['rm', '-f', id], { allowFail: true });
      }
    },
    // Started in the background, in the host's network.
    start(image, env) {
      const args = ['run', '--rm', '--network', 'host', '--name', `gco-image-test-${process.pid}-${Date.now()}`];
      for (const [k, v] of Object.entries(env)) args.push('-e', `${k}=${v}`);
      args.push(image);
      const name = args[args.indexOf('--name') + 1];
      const child = spawn('docker', args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      child.cleanup = () => run('docker', ['rm', '-f', name], { allowFail: true });
      return child;
    },
  },
  buildah: {
    config(image) {
      return JSON.parse(run('buildah', [...BUILDAH, 'inspect', '--type', 'image', image]).stdout).OCIv1.config;
    },
    // The image's bytes: its layers and config, as its manifest lists them.
    size(image) {
      const manifest = JSON.parse(JSON.parse(run('buildah', [...BUILDAH, 'inspect', '--type', 'image', image]).stdout).Manifest);
      return manifest.config.size + manifest.layers.reduce((sum, l) => sum + l.size, 0);
    },
    files(image) {
      const ctr = run('buildah', [...BUILDAH, 'from', '--pull-never', image]).stdout.trim();
      try {
        const dir = run('buildah', [...BUILDAH, 'mount', ctr]).stdout.trim();
        return walk(dir);
      } finally {
        run('buildah', [...BUILDAH, 'rm', ctr], { allowFail: true });
      }
    },
    start(image, env) {
      // `buildah run` takes the command: the image's own entrypoint.
      const entrypoint = this.config(image).Entrypoint;
      const ctr = run('buildah', [...BUILDAH, 'from', '--pull-never', image]).stdout.trim();
      const args = [...BUILDAH, 'run', '--isolation', 'chroot'];
      for (const [k, v] of Object.entries(env)) args.push('--env', `${k}=${v}`);
      args.push(ctr, '--', ...entrypoint);
      const child = spawn('buildah', args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      child.cleanup = () => run('buildah', [...BUILDAH, 'rm', ctr], { allowFail: true });
      return child;
    },
  },
}[BUILDER];

/** Every file under `dir` as { path, mode, uid, size }, paths from "/". */
function walk(dir, rel = '') {
  const out = [];
  for (const name of fs.readdirSync(path.join(dir, rel))) {
    const p = path.join(rel, name);
    const st = fs.lstatSync(path.join(dir, p));
    if (st.isDirectory()) out.push(...walk(dir, p));
    else out.push({ path: `/${p}`, mode: st.mode, uid: st.uid, size: st.size });
  }
  return out;
}

// What `docker export` adds to any container's files (the runtime's own).
const DOCKER_RUNTIME_FILES = /^\/(\.dockerenv|dev\/.*|proc|sys|etc\/(hostname|hosts|mtab|resolv\.conf))$/;

function tarListing(text) {
  return text
    .split('\n')
    .filter((l) => l && !l.startsWith('d'))
    .map((l) => ({ path: `/${l.split(/\s+/).pop().replace(/^\.?\//, '')}` }))
    .filter((f) => !DOCKER_RUNTIME_FILES.test(f.path));
}

/** The host's view of the process listening on `port` in the container. */
function consoleProcess(port) {
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    let environ;
    try {
      environ = fs.readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0');
    } catch {
      continue;
    }
    if (!environ.includes(`GCO_CONSOLE_ADDR=0.0.0.0:${port}`)) continue;
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const ids = (key) => status.match(new RegExp(`^${key}:\\s+(.*)$`, 'm'))[1].split(/\s+/).map(Number);
    const exe = fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0')[0];
    if (!exe.endsWith('gco-console')) continue;
    return { pid: Number(pid), exe, uid: ids('Uid'), gid: ids('Gid'), environ };
  }
  return null;
}

/** Output collected from a started container, and its exit. */
function watch(child) {
  const state = { output: '', exited: null };
  child.stdout.on('data', (d) => (state.output += d));
  child.stderr.on('data', (d) => (state.output += d));
  child.on('exit', (code, signal) => (state.exited = { code, signal }));
  return state;
}

async function stop(child, state, proc) {
  if (!state.exited && proc) {
    try {
      process.kill(proc.pid, 'SIGTERM');
    } catch {}
  }
  for (let i = 0; i < 100 && !state.exited; i++) await sleep(100);
  if (!state.exited) child.kill('SIGKILL');
  for (let i = 0; i < 50 && !state.exited; i++) await sleep(100);
  child.cleanup();
}

let image;
let dynalite;
let dynamoEndpoint;
let work;

before(async () => {
  if (process.env.GCO_IMAGE) {
    image = process.env.GCO_IMAGE;
  } else {
    log('building: scripts/image.sh');
    const started = Date.now();
    const r = run('bash', ['scripts/image.sh'], { timeout: 3_600_000 });
    image = r.stdout.trim().split('\n').pop();
    log(`built ${image} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'gco-image-test-'));
  fs.chmodSync(work, 0o755);
  const port = await freePort();
  dynalite = spawn(path.join(ROOT, 'node_modules', '.bin', 'dynalite'), ['--port', String(port), '--path', path.join(work, 'dynalite')], {
    stdio: 'ignore',
  });
  dynamoEndpoint = `http://127.0.0.1:${port}`;
  for (let tries = 0; !(await fetch(dynamoEndpoint).then(() => true, () => false)); tries++) {
    if (tries > 200) throw new Error('dynalite did not start');
    await sleep(50);
  }
});

after(() => {
  if (dynalite) dynalite.kill('SIGKILL');
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

test('the image: FROM scratch contents, unprivileged user, port 8080, DynamoDB required', () => {
  const config = engine.config(image);
  assert.equal(config.User, `${UID}:${UID}`);
  assert.deepEqual(config.Entrypoint, ['/usr/local/bin/gco-console']);
  const env = Object.fromEntries(config.Env.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
  assert.equal(env.GCO_CONSOLE_ADDR, '0.0.0.0:8080');
  assert.equal(env.GCO_REQUIRE_DYNAMODB, 'true');
  assert.ok(Object.keys(config.ExposedPorts || {}).includes('8080/tcp'), JSON.stringify(config.ExposedPorts));

  const files = engine.files(image).map((f) => f.path).sort();
  const dist = files.filter((f) => f.startsWith('/srv/gco-console/dist/'));
  assert.ok(dist.includes('/srv/gco-console/dist/index.html'), files.join('\n'));
  assert.deepEqual(
    files.filter((f) => !f.startsWith('/srv/gco-console/dist/')),
    ['/etc/group', '/etc/passwd', '/etc/ssl/certs/ca-certificates.crt', '/usr/local/bin/gco-console'],
    'nothing but the binary, the console, CA certificates and the user: no shell',
  );
  const size = engine.size(image);
  log(`image size: ${size} bytes (${(size / 1048576).toFixed(1)} MiB), ${files.length} files, built with ${BUILDER}`);
});

test('with no DynamoDB configured, the container refuses to start and says why', async () => {
  const child = engine.start(image, {});
  const state = watch(child);
  for (let i = 0; i < 300 && !state.exited; i++) await sleep(100);
  await stop(child, state, null);
  assert.notEqual(state.exited && state.exited.code, 0, state.output);
  assert.match(state.output, /no DynamoDB table is configured/);
  assert.match(state.output, /lost when the container is replaced/);
});

/** The load balancer's side of `--auth alb`: its key, served as the
 * region's endpoint serves it (PEM at <prefix><kid>), and headers signed as
 * the ALB signs them (each segment padded, the signature over the padded
 * text, ES256 as r || s). */
async function albKeyServer() {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const kid = crypto.randomUUID();
  const pem = publicKey.export({ type: 'spki', format: 'pem' });
  const server = http.createServer((req, res) => {
    if (req.url === `/keys/${kid}`) {
      res.writeHead(200, { 'content-type': 'text/plain' }).end(pem);
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const padded = (buf) => Buffer.from(buf).toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
  const sign = (claims) => {
    const exp = Math.floor(Date.now() / 1000) + 600;
    const header = padded(JSON.stringify({ typ: 'JWT', kid, alg: 'ES256', iss: 'https://idp.example.com', client: 'gco-console', signer: ALB_ARN, exp }));
    const payload = padded(JSON.stringify({ ...claims, exp, iss: 'https://idp.example.com' }));
    const signature = crypto.sign('sha256', Buffer.from(`${header}.${payload}`), { key: privateKey, dsaEncoding: 'ieee-p1363' });
    return `${header}.${payload}.${padded(signature)}`;
  };
  return { url: `http://127.0.0.1:${server.address().port}/keys/`, sign, close: () => server.close() };
}

test('as the CDK app runs it (--auth alb) against DynamoDB: /healthz, the page, a signed-in read, as the unprivileged user', async () => {
  const port = await freePort();
  const keys = await albKeyServer();
  // The environment deploy/cdk gives the task (GCO_ROLES is the roles
  // file's TOML as gco_console_stack.roles_toml writes it), with the
  // table on dynalite and the ALB's keys from the test's server.
  const env = {
    GCO_CONSOLE_ADDR: `0.0.0.0:${port}`,
    GCO_AUTH: 'alb',
    GCO_ALB_ARN: ALB_ARN,
    GCO_ALB_PUBLIC_KEYS: keys.url,
    GCO_ROLES: 'default = "viewer"\n\n[groups]\n"ml-engineers" = "operator"\n"platform-admins" = "admin"\n',
    GCO_GROUPS_CLAIM: 'groups',
    GCO_ALLOWED_HOSTS: 'gco-console.example.com',
    INFERENCE_ENDPOINTS_TABLE_NAME: 'gco-inference-endpoints',
    DYNAMODB_REGION: 'us-east-1',
    GCO_DYNAMODB_ENDPOINT: dynamoEndpoint,
    GCO_CREATE_TABLE: 'true',
    // dynalite has no transactions: history off (issue 32).
    GCO_HISTORY_TABLE: 'off',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    RUST_LOG: 'info',
  };
  const child = engine.start(image, env);
  const state = watch(child);
  let proc = null;
  try {
    const base = `http://127.0.0.1:${port}`;
    const health = await waitFor(`${base}/healthz`, 60_000, () => state.exited).catch((e) => {
      throw new Error(`${e.message}\n${JSON.stringify(state.exited)}\n${state.output}`);
    });
    assert.equal(health.status, 200);

    proc = consoleProcess(port);
    assert.ok(proc, 'the console process is visible from the host');
    assert.deepEqual(proc.uid, [UID, UID, UID, UID], `uid of ${proc.exe} (pid ${proc.pid})`);
    assert.deepEqual(proc.gid, [UID, UID, UID, UID], `gid of ${proc.exe} (pid ${proc.pid})`);

    // The page and its files need no identity (the ALB signed the user in).
    const page = await fetch(`${base}/`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type'), /text\/html/);
    const html = await page.text();
    assert.match(html, /gco-web/, 'the console page loads the console');
    // The wasm the page names (by its content), sent compressed from the image.
    const wasmName = html.match(/\/gco-web_bg-[0-9a-f]{16}\.wasm/)[0];
    const wasm = await fetch(`${base}${wasmName}`, { headers: { 'accept-encoding': 'br' } });
    assert.equal(wasm.status, 200);
    assert.equal(wasm.headers.get('content-type'), 'application/wasm');
    assert.equal(wasm.headers.get('content-encoding'), 'br');

    // The API needs the ALB's signed header; a user in ml-engineers is an operator.
    assert.equal((await fetch(`${base}/api/endpoints`)).status, 401);
    const signedIn = { 'x-amzn-oidc-data': keys.sign({ sub: '0f3c', email: 'ada@example.com', email_verified: true, groups: ['ml-engineers'] }) };
    const me = await fetch(`${base}/api/me`, { headers: signedIn });
    assert.equal(me.status, 200);
    assert.deepEqual(await me.json(), { name: 'ada@example.com', roles: ['operator'] });
    // A read of the table through the console: DynamoDB it is.
    const list = await fetch(`${base}/api/endpoints`, { headers: signedIn });
    assert.equal(list.status, 200, await list.clone().text());
    assert.deepEqual((await list.json()).endpoints, []);
    assert.match(state.output, /using DynamoDB/);
  } finally {
    keys.close();
    await stop(child, state, proc);
  }
  assert.ok(state.exited, 'the container stopped');
});
