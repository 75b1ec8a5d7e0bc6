import net from 'node:net';
const w = net.Socket.prototype.write; let n = 0; const cmds = new Map();
net.Socket.prototype.write = function (chunk, ...a) { n++; const st = new Error().stack.split('\n').filter((l) => l.includes('/dist/src/') || l.includes('bullmq/dist')).slice(0, 3).map((l) => l.trim().replace(/\(.*\/(dist\/[^)]*)\)/, '$1')).join(' < '); cmds.set(st, (cmds.get(st) ?? 0) + 1); return w.call(this, chunk, ...a); };
globalThis.__writes = () => { const r = { n, cmds: Object.fromEntries([...cmds].sort((a,b)=>b[1]-a[1]).slice(0,12)) }; n = 0; cmds.clear(); return r; };
