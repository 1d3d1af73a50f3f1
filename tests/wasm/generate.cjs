// Deploy requests for the parity tests: a seeded mix of valid and invalid
// fields (each field alone right or wrong, mooncake by arguments or as a
// block, unknown keys), as JSON text. Every request has `endpoint_name`, so
// it reads as a deploy request.
'use strict';

/** A small seeded generator (mulberry32): the same requests on every run. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function generateRequests(count, seed) {
  const next = random(seed);
  // A clean request picks only from each list's leading valid values; the
  // others from all of it, so both valid and invalid requests come out.
  let clean = false;
  const pick = (list, valid = 1) => list[Math.floor(next() * (clean ? valid : list.length))];
  const maybe = (p) => next() < p;
  const NAMES = ['llm', 'chat-7b', 'a', 'Bad_Name', '', 'x'.repeat(64), 'pd-serve', 5, null, 'n-1'];
  const IMAGES = ['vllm/vllm-openai:v0.8', '123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1', '', 7, null, 'img:1'];
  const REGIONS = [['us-east-1'], ['us-east-1', 'eu-west-1'], [], ['mars-1'], 'us-east-1', ['us-west-2', 'us-west-2'], [5]];
  const MODES = ['both', 'disaggregated', 'store', 'Both', null, 3, []];
  const COUNTS = [1, 2, 1000, 0, 1001, -1, '2', 2.5, true, null];
  const SIZES = ['4294967296', ' 1024 ', 4294967296, '4GiB', -1, '9223372036854775808', true, '0x10', 1.5];
  const request = () => {
    clean = maybe(0.5);
    const r = { endpoint_name: pick(NAMES, 3) };
    if (maybe(0.85)) r.image = pick(IMAGES, 2);
    if (maybe(0.5)) r.target_regions = pick(REGIONS, 3);
    if (maybe(0.4)) r.replicas = pick(COUNTS, 3);
    if (maybe(0.3)) r.gpu_count = pick([1, 8, 0, -1, 'x', 1.5], 2);
    if (maybe(0.3)) r.port = pick([8000, 80, 0, 70000, '8000'], 2);
    if (maybe(0.2)) r.gpu_type = pick(['g5.xlarge', '', 5]);
    if (maybe(0.2)) r.env = pick([{ A: '1' }, {}, { A: 1 }, []], 2);
    if (maybe(0.2)) r.labels = pick([{ team: 'ml' }, { team: 5 }, 'x']);
    if (maybe(0.2)) r.namespace = pick(['default', 'ml-serving', 'Bad NS', 5], 2);
    if (maybe(0.2)) r.extra_args = pick([['--max-model-len', '4096'], '--x', [5], []]);
    if (maybe(0.15)) r.framework = pick(['vllm', 'sglang', 'tgi', 'nope'], 2);
    // GCO's SGLang checks: the model, and a node selector pinning a GPU
    // before Ampere.
    if (r.framework === 'sglang' && maybe(0.5)) r.env = pick([{ MODEL: 'Qwen/Qwen3-8B' }, { MODEL: '' }], 2);
    if (maybe(0.1)) r.node_selector = pick([{ 'eks.amazonaws.com/instance-gpu-name': 'T4' }, { 'eks.amazonaws.com/instance-family': 'G4DN' }, { 'eks.amazonaws.com/instance-gpu-name': 'a10g' }], 2);
    if (maybe(0.15)) r.capacity_type = pick(['on-demand', 'spot', 'reserved'], 2);
    if (maybe(0.1)) r.rewrite_image = pick([true, false, 'yes'], 2);
    if (!clean && maybe(0.1)) r[pick(['imagee', 'replica', 'zzz'])] = 1;
    if (maybe(0.35)) {
      r.mooncake_mode = pick(MODES, 3);
      if (maybe(0.5)) r.prefill_replicas = pick(COUNTS, 3);
      if (maybe(0.5)) r.decode_replicas = pick(COUNTS, 3);
      if (maybe(0.4)) r.mooncake_store = { global_segment_size: pick(SIZES, 3), ...(maybe(0.3) ? { local_buffer_size: pick(SIZES, 3) } : {}) };
      if (maybe(0.2)) r.mooncake_transfer = pick([{ protocol: 'rdma' }, { protocol: 'udp' }, { protocol: 'tcp', device_name: 5 }]);
      if (maybe(0.2)) r.mooncake_autoscaling = pick([{ enabled: true }, { prefill: { min_replicas: 3, max_replicas: 2 } }, 5]);
      if (maybe(0.15)) r.mooncake_proxy = pick([{ scheduling: 'round_robin' }, { image: 'proxy:1' }, { schedulng: 'x' }]);
    } else if (maybe(0.25)) {
      const block = { mode: pick(MODES, 3) };
      if (maybe(0.6)) block.topology = { prefill: pick(COUNTS, 3), decode: pick(COUNTS, 3) };
      if (maybe(0.3)) block.store = { global_segment_size: pick(SIZES, 3) };
      if (maybe(0.2)) block.topology = { ...(block.topology || {}), prefil: 1 };
      r.mooncake = block;
    }
    return JSON.stringify(r);
  };
  return Array.from({ length: count }, request);
}

module.exports = { generateRequests };
