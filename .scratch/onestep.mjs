// Quick A/B: one-step runs started at once vs no-op jobs. env BATCH (startBatch), N, ROUNDS
import { randomUUID } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { DirectiveLoader } from '../dist/src/engine/directive-loader.js';
import { RunWorker } from '../dist/src/queue/run-worker.js';
import { ToolWorker } from '../dist/src/queue/tool-worker.js';
import { RunsClient } from '../dist/src/queue/runs-client.js';
import { runSourceOf } from '../dist/src/queue/run-source.js';
import { echoSequenceDirective } from '../dist/bench/echo-sequence-directive.js';

const N = Number(process.env.N ?? 200), ROUNDS = Number(process.env.ROUNDS ?? 6), REPS = 5;
const redis = new Redis({ maxRetriesPerRequest: null });
async function clean(prefix) { let c = '0'; do { const [n, keys] = await redis.scan(c, 'MATCH', prefix + '*', 'COUNT', 1000); c = n; if (keys.length) await redis.del(...keys); } while (c !== '0'); }

async function runs(batch) {
  const prefix = `dscratch:${randomUUID()}`;
  const conn = redis.duplicate();
  const tools = new ToolWorker({ redis: conn, prefix, concurrency: Number(process.env.TC ?? 50) });
  const rw = new RunWorker({ redis: conn, prefix, concurrency: 50, tools });
  const client = new RunsClient(conn, prefix, undefined, { startBatch: batch });
  const loader = new DirectiveLoader(process.cwd());
  const g = echoSequenceDirective(1);
  const loaded = loader.fromText(g.file, g.text);
  const source = await runSourceOf(loaded, loader.items);
  const done = new Map(); let want; let resolve;
  const kinds = new Map(); rw.worker.on('completed', (job, v) => { kinds.set(job.data.kind, (kinds.get(job.data.kind) ?? 0) + 1); const rs = Array.isArray(v) ? v : [v]; for (const r of rs) { if (want?.delete(r.runId) && want.size === 0) resolve(); } });
  await rw.worker.waitUntilReady(); await tools.worker.waitUntilReady();
  const once = async (n) => { const p = new Promise((r) => (resolve = r)); want = new Set(); const ids = await Promise.all(Array.from({ length: n }, () => client.start(source, {}))); for (const id of ids) want.add(id); await p; };
  // Note: record completions could arrive before ids known; guard by small race: fine for measurement
  await once(20); await once(20);
  globalThis.__writes?.();
  const t0 = performance.now(); for (let i = 0; i < REPS; i++) await once(N); const t = performance.now() - t0;
  if (globalThis.__writes) console.log(globalThis.__writes());
  if (process.env.KINDS) console.log(kinds);
  await client.close(); await rw.close(); await tools.close(); conn.disconnect(); await clean(prefix);
  return (t * 1000) / (REPS * N);
}
async function noop() {
  const prefix = `dscratch:${randomUUID()}`;
  const conn = redis.duplicate();
  const q = new Queue('noop', { connection: conn, prefix });
  const w = new Worker('noop', async () => ({}), { connection: conn.duplicate(), prefix, concurrency: 50 });
  let want; let resolve;
  w.on('completed', (job) => { if (want?.delete(job.id) && want.size === 0) resolve(); });
  await w.waitUntilReady();
  let b = 0;
  const once = async (n) => { const ids = Array.from({ length: n }, (_, i) => `${b}.${i}`); b++; want = new Set(ids); const p = new Promise((r) => (resolve = r)); await Promise.all(ids.map((jobId) => q.add('noop', {}, { jobId, removeOnComplete: true }))); await p; };
  await once(20); await once(20);
  const t0 = performance.now(); for (let i = 0; i < REPS; i++) await once(N); const t = performance.now() - t0;
  await w.close(); await q.close(); conn.disconnect(); await clean(prefix);
  return (t * 1000) / (REPS * N);
}
const B = Number(process.env.BATCH ?? 25);
if (process.env.MODE === 'only') { for (let r = 0; r < ROUNDS; r++) console.log(`runs(batch ${B}) ${(await runs(B)).toFixed(0)} µs`); await redis.quit(); process.exit(0); }
for (let r = 0; r < ROUNDS; r++) {
  const a = await runs(B), n = await noop(), s = await runs(1);
  console.log(`round ${r}: runs(batch ${B}) ${a.toFixed(0)} µs, single ${s.toFixed(0)} µs, noop ${n.toFixed(0)} µs → batched ${(n / a).toFixed(2)}×, single ${(n / s).toFixed(2)}×`);
}
await redis.quit();
process.exit(0);
