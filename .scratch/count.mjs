import { Redis } from 'ioredis';
const r = new Redis();
r.monitor().then((m) => { const c = new Map(); m.on('monitor', (t, args) => { const k = args[0].toLowerCase() === 'evalsha' ? 'evalsha' : args[0].toLowerCase(); c.set(k, (c.get(k) ?? 0) + 1); }); setTimeout(() => { console.log([...c].sort((a,b)=>b[1]-a[1]).slice(0,15)); process.exit(0); }, Number(process.env.MS ?? 8000)); });
