import { readFileSync } from 'node:fs';
const p = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const self = new Map(); const byId = new Map(p.nodes.map((n) => [n.id, n]));
const dt = new Map(); for (let i = 0; i < p.samples.length; i++) dt.set(p.samples[i], (dt.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));
let total = 0;
for (const n of p.nodes) { const t = dt.get(n.id) ?? 0; total += t; const cf = n.callFrame; const k = `${cf.functionName || '(anon)'} ${cf.url.split('/').slice(-2).join('/')}:${cf.lineNumber}`; self.set(k, (self.get(k) ?? 0) + t); }
const byFile = new Map(); for (const n of p.nodes) { const t = dt.get(n.id) ?? 0; const u = n.callFrame.url; const k = u.includes('node_modules') ? u.split('node_modules/')[1].split('/')[0] : u.includes('/dist/') ? 'dist/' + u.split('/dist/')[1].split('/').slice(0,2).join('/') : (u || n.callFrame.functionName); byFile.set(k, (byFile.get(k) ?? 0) + t); }
console.log('total ms', (total / 1000).toFixed(0));
for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.TOP ?? 30))) console.log((v / 1000).toFixed(1).padStart(8), k);
console.log('--- by package/file');
for (const [k, v] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log((v / 1000).toFixed(1).padStart(8), k);
