/**
 * The Lua of the run store's scripts (see `run-store-scripts.ts` for their commands, and
 * `run-hash.ts` for the keys they touch).
 */
import { MAX_JOB_KEEP_SECONDS } from '../queue-options.js';

/**
 * The pseudo-field with which a read answers a run's directive text, when the run keeps it at its
 * text key (see `run-hash.ts`): not a field of the hash, and no field is named so.
 */
export const TEXT_FIELD = '.text';

/**
 * The pseudo-field with which a read answers a run's body (see `run-hash.ts`), when it has one:
 * not a field of the hash, and no field is named so.
 */
export const BODY_FIELD = '.body';

/**
 * The pseudo-field with which a read answers a run's id, which the key of its hash names (and its
 * body leaves out): not a field of the hash, and no field is named so.
 */
export const ID_FIELD = '.id';

/**
 * The field of a run's hash that counts the events of its feed: the id of its last event, and the
 * position a follower of the run's record goes on from (see `pending-events.ts`).
 */
export const FEED_FIELD = 'feed';

/** The most events a run's feed keeps: older ones are trimmed. */
export const FEED_MAX_EVENTS = 10_000;

/**
 * Lua appending to the reply `out` of a read of hash `KEYS[1]` the pseudo-fields `ID_FIELD` with
 * the run's id, and `BODY_FIELD` with its body and `TEXT_FIELD` with its directive's text when it
 * has them. A run id holds no `:` (see `operations/check-run-id.ts`), so the key of a run's hash,
 * `<prefix>:run:<id>`, names both its prefix and its id. The text's key is named by the hash's
 * `texthash`, or, in a run stored before, by its `textkey`.
 */
const APPEND_PARTS = `
local prefix, runId = string.match(KEYS[1], '^(.*):run:([^:]*)$')
out[#out + 1] = '${ID_FIELD}'; out[#out + 1] = runId
local body = redis.call('GET', KEYS[1] .. ':body')
if body then out[#out + 1] = '${BODY_FIELD}'; out[#out + 1] = body end
local textKey = redis.call('HGET', KEYS[1], 'textkey')
local textHash = redis.call('HGET', KEYS[1], 'texthash')
if textHash then textKey = prefix .. ':directive-text:' .. textHash end
if textKey then
  local text = redis.call('GET', textKey)
  if text then out[#out + 1] = '${TEXT_FIELD}'; out[#out + 1] = text end
end`;

/** Lua shared by the scripts: forgetting a run, and retiring the index entries of expired ones. */
const LUA_LIBRARY = `
local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- A directive's text is kept once, at its text key, for as long as a run of it is stored: the
-- key's ':count' counts them (stores before kept their ids in a set, ':runs', which counts too).
-- A run names the text's content hash in its hash's texthash (runs stored before: its key, in
-- textkey), and, once its hash may expire, in text-of: a run is counted while it names the text,
-- and let go when it stops (forgotten, or saved with another text).
local function heldText(prefix, hash, runId)
  local h = redis.call('HGET', hash, 'texthash')
  if h then return h end
  local key = redis.call('HGET', hash, 'textkey')
  if key then return string.sub(key, #prefix + 17) end
  return redis.call('HGET', prefix .. ':runs:text-of', runId)
end
local function letGoText(prefix, runId, h)
  redis.call('HDEL', prefix .. ':runs:text-of', runId)
  local textKey = prefix .. ':directive-text:' .. h
  local count = textKey .. ':count'
  local left
  if redis.call('SREM', textKey .. ':runs', runId) == 1 then left = tonumber(redis.call('GET', count) or '0')
  else left = redis.call('DECR', count) end
  if left <= 0 and redis.call('SCARD', textKey .. ':runs') == 0 then redis.call('DEL', textKey, count) end
end
-- Deletes a run's hash and every index entry of it; hint: a directive it may be indexed under.
local function forget(prefix, runId, hint)
  local hash, of = prefix .. ':run:' .. runId, prefix .. ':runs:directive-of'
  local held = heldText(prefix, hash, runId)
  if held then letGoText(prefix, runId, held) end
  local directives = {}
  local d = redis.call('HGET', hash, 'directive')
  if d then directives[d] = true end
  d = redis.call('HGET', of, runId)
  if d then directives[d] = true end
  if hint ~= '' then directives[hint] = true end
  for name in pairs(directives) do redis.call('ZREM', prefix .. ':runs:directive:' .. name, runId) end
  for _, s in ipairs({'running', 'waiting', 'paused', 'completed', 'failed', 'cancelled'}) do
    redis.call('ZREM', prefix .. ':runs:status:' .. s, runId)
  end
  local tagsOf = prefix .. ':runs:tags-of'
  local tags = redis.call('HGET', hash, 'tags') or redis.call('HGET', tagsOf, runId)
  if tags then
    for t in string.gmatch(tags, '[^\\n]+') do redis.call('ZREM', prefix .. ':runs:tag:' .. t, runId) end
  end
  redis.call('HDEL', tagsOf, runId)
  redis.call('ZREM', prefix .. ':runs', runId)
  redis.call('ZREM', prefix .. ':runs:expiring', runId)
  redis.call('HDEL', of, runId)
  redis.call('DEL', hash .. ':feed', hash .. ':body')
  return redis.call('DEL', hash)
end
-- Forgets up to max runs whose retention is over; returns how many.
local function sweep(prefix, now, max)
  local expiring, removed = prefix .. ':runs:expiring', 0
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', expiring, '-inf', now, 'LIMIT', 0, max)) do
    local left = redis.call('PTTL', prefix .. ':run:' .. id)
    if left == -2 then
      forget(prefix, id, '')
      removed = removed + 1
    elseif left == -1 then
      redis.call('ZREM', expiring, id)
    else
      redis.call('ZADD', expiring, now + left, id)
    end
  end
  return removed
end
`;

/**
 * KEYS: run hash, the index of all runs that stores kept before (a save takes the run out of it),
 * the five status sets (in STATUSES order), the run's directive set,
 * expiring, directive-of, the run's feed, then the hash and the feed of each of its parents
 * (nearest first). The run's body is the key of its hash with `:body`.
 * ARGV: prefix, mode (full | diff | steps), expectVersion or '', base etag or '', new etag, run
 * id, status, directive, startedAt, retention seconds (0: keep), fence, owner, the content hash
 * of the directive's text or '' (a write that leaves the run's meta as it was), '=' and the text,
 * or '' (the store sent it before: the script answers `needtext` if it is no longer kept), n, n
 * fields to delete, m, m feed events, b, b pairs of a body line's number (from 1) and its JSON,
 * field/value pairs.
 * Feed events (see `pending-events.ts`) are appended to the run's feed, a list of the events' JSON
 * (a list, not a stream: Redis 7.0 gives a new stream 4 KB, a waiting run's whole record), and
 * counted in its hash's `${FEED_FIELD}` field, so the nth event of a feed has id n; those marked
 * `+` go to its parents' feeds too. A feed keeps its last ${FEED_MAX_EVENTS} events; each feed
 * written is told on the channel of its own name. The feed expires with the run.
 * The body's lines replace those it had (a full save gives them all; a diff of a run whose body
 * is gone answers `stale`, writing nothing); its expiry is the hash's.
 * `full` also deletes the step fields (and the redrive point) it is not given, and the fields of
 * runs stored before the body; `diff` requires the base etag (else answers `stale`, writing
 * nothing); `steps` writes step fields of an existing run only. A full save, or a diff that
 * changes the run's status or directive, also moves the run in the indexes, sets its expiry (an
 * expiring run is noted in directive-of, text-of and tags-of, any other taken out) and retires up
 * to two expired runs' index entries, so that they never pile up; a diff that changes neither
 * leaves all that as the last write left it.
 * Fencing (see `run-claims.ts`): a fence of '' writes unconditionally; '0' creates a run no one
 * has claimed (its `epoch` becomes 1 and its `owner` the given owner); any other fence writes only
 * if the run's `epoch` still equals it, else answers `fenced` with the current owner. A save of an
 * ended run clears its owner. A write whose etag the run holds already (the same write, sent again
 * after a reconnect) answers `ok` and writes nothing.
 */
export const SAVE_SCRIPT = `${LUA_LIBRARY}
local hash, prefix, mode = KEYS[1], ARGV[1], ARGV[2]
local bodyKey = hash .. ':body'
local current = tonumber(redis.call('HGET', hash, 'version') or '0')
-- This very write landed already: sent again after a reconnect (a failover), it is not applied
-- twice, nor its events told twice.
if ARGV[5] ~= '' and redis.call('HGET', hash, 'etag') == ARGV[5] then return {'ok', current} end
local fence = ARGV[11]
if fence ~= '' then
  local epoch = redis.call('HGET', hash, 'epoch')
  if (fence == '0' and epoch) or (fence ~= '0' and epoch ~= fence) then
    return {'fenced', current, redis.call('HGET', hash, 'owner') or ''}
  end
end
if ARGV[3] ~= '' and tonumber(ARGV[3]) ~= current then return {'conflict', current} end
if mode == 'steps' and current == 0 then return {'missing', 0} end
local ndel = tonumber(ARGV[15])
local events = 16 + ndel
local nev = tonumber(ARGV[events])
local lines = events + 1 + nev
local nlines = tonumber(ARGV[lines])
local first = lines + 1 + 2 * nlines
local based = ARGV[4] ~= '' and redis.call('HGET', hash, 'etag') == ARGV[4]
if mode == 'diff' and not based then return {'stale', current} end
if mode == 'diff' and nlines > 0 and redis.call('EXISTS', bodyKey) == 0 then return {'stale', current} end
local runId, status, directive = ARGV[6], ARGV[7], ARGV[8]
local statuses = {running = 3, waiting = 4, completed = 5, failed = 6, cancelled = 7}
local own = statuses[status]
-- A paused run's index is named here, not passed: runs pause seldom, and the keys stay as they are.
local pausedIndex = prefix .. ':runs:status:paused'
if mode ~= 'steps' and not own and status ~= 'paused' then return redis.error_reply('unknown run status ' .. status) end
local textHash, text = ARGV[13], ARGV[14]
local textKey = prefix .. ':directive-text:' .. textHash
if textHash ~= '' and text == '' and redis.call('EXISTS', textKey) == 0 then
  return {'needtext', current}
end
local function chunked(cmd, from, to)
  local i = from
  while i <= to do
    local j = math.min(i + 999, to)
    redis.call(cmd, hash, unpack(ARGV, i, j))
    i = j + 1
  end
end
if mode == 'full' then
  local given = {}
  for i = first, #ARGV, 2 do given[ARGV[i]] = true end
  for _, field in ipairs(redis.call('HKEYS', hash)) do
    local kind = string.sub(field, 1, 5)
    local step = kind == 'step:' or string.sub(field, 1, 2) == 's:'
    if (step or kind == 'entry' or field == 'redrive') and not given[field] then redis.call('HDEL', hash, field) end
  end
  redis.call('HDEL', hash, 'record', 'snapshot', 'meta', 'counters', 'children', 'textkey')
end
chunked('HDEL', 16, events - 1)
chunked('HSET', first, #ARGV)
if nlines > 0 then
  local body = {}
  if mode ~= 'full' then
    for line in string.gmatch(redis.call('GET', bodyKey) .. '\\n', '([^\\n]*)\\n') do body[#body + 1] = line end
  end
  for i = lines + 1, first - 1, 2 do body[tonumber(ARGV[i])] = ARGV[i + 1] end
  redis.call('SET', bodyKey, table.concat(body, '\\n'), 'KEEPTTL')
end
if textHash ~= '' then
  if text ~= '' then redis.call('SET', textKey, string.sub(text, 2), 'NX') end
  local was = heldText(prefix, hash, runId)
  if was ~= textHash then
    if was then letGoText(prefix, runId, was) end
    redis.call('INCR', textKey .. ':count')
  end
  redis.call('HSET', hash, 'texthash', textHash)
end
local version = current + 1
redis.call('HSET', hash, 'version', version, 'etag', ARGV[5])
if nev > 0 then
  local function append(h, feed, body)
    redis.call('HINCRBY', h, '${FEED_FIELD}', 1)
    if redis.call('RPUSH', feed, body) > ${FEED_MAX_EVENTS} then redis.call('LTRIM', feed, -${FEED_MAX_EVENTS}, -1) end
  end
  local shared = false
  for i = events + 1, events + nev do
    local body = string.sub(ARGV[i], 2)
    append(hash, KEYS[11], body)
    if string.sub(ARGV[i], 1, 1) == '+' then
      shared = true
      for k = 12, #KEYS, 2 do append(KEYS[k], KEYS[k + 1], body) end
    end
  end
  redis.call('PUBLISH', KEYS[11], '')
  if shared then for k = 13, #KEYS, 2 do redis.call('PUBLISH', KEYS[k], '') end end
end
if fence == '0' then redis.call('HSET', hash, 'epoch', 1, 'owner', ARGV[12]) end
if mode == 'steps' then return {based and 'ok' or 'unbased', version} end
local ended = status == 'completed' or status == 'failed' or status == 'cancelled'
if ended then redis.call('HDEL', hash, 'owner') end
local old = redis.call('HGET', hash, 'directive')
-- A diff builds on this store's last write, so the indexes are as that write left them.
if mode == 'diff' and old == directive and redis.call('HGET', hash, 'status') == status then
  return {'ok', version}
end
if old and old ~= directive then redis.call('ZREM', prefix .. ':runs:directive:' .. old, runId) end
redis.call('HSET', hash, 'status', status, 'directive', directive)
local score = ARGV[9]
-- All runs are the status indexes merged: the index of all runs that stores kept before is
-- emptied as their runs are saved.
redis.call('ZREM', KEYS[2], runId)
for _, k in pairs(statuses) do
  if k == own then redis.call('ZADD', KEYS[k], score, runId) else redis.call('ZREM', KEYS[k], runId) end
end
if status == 'paused' then redis.call('ZADD', pausedIndex, score, runId) else redis.call('ZREM', pausedIndex, runId) end
redis.call('ZADD', KEYS[8], score, runId)
-- A run's tags never change: each is an index of its own.
local tags = redis.call('HGET', hash, 'tags')
if tags then
  for t in string.gmatch(tags, '[^\\n]+') do redis.call('ZADD', prefix .. ':runs:tag:' .. t, score, runId) end
end
local retention, now = tonumber(ARGV[10]), nowMs()
-- A run kept for less than its finished jobs are is due to have them removed when it expires
-- (see expired-run-jobs.ts): jobs-due holds 'id@startedAt', scored by the run's expiry.
local jobsDue, jobsOf = prefix .. ':runs:jobs-due', runId .. '@' .. ARGV[9]
-- What finds a run's index entries once its hash has expired: kept for the runs that expire.
local directiveOf, textOf, tagsOf = KEYS[10], prefix .. ':runs:text-of', prefix .. ':runs:tags-of'
if retention > 0 and ended then
  redis.call('EXPIRE', hash, retention)
  redis.call('EXPIRE', bodyKey, retention)
  redis.call('EXPIRE', KEYS[11], retention)
  redis.call('ZADD', KEYS[9], now + retention * 1000, runId)
  if retention < ${MAX_JOB_KEEP_SECONDS} then redis.call('ZADD', jobsDue, now + retention * 1000, jobsOf)
  else redis.call('ZREM', jobsDue, jobsOf) end
  redis.call('HSET', directiveOf, runId, directive)
  local held = heldText(prefix, hash, runId)
  if held then redis.call('HSET', textOf, runId, held) end
  if tags then redis.call('HSET', tagsOf, runId, tags) end
else
  redis.call('PERSIST', hash)
  redis.call('PERSIST', bodyKey)
  redis.call('PERSIST', KEYS[11])
  redis.call('ZREM', KEYS[9], runId)
  redis.call('ZREM', jobsDue, jobsOf)
  redis.call('HDEL', directiveOf, runId)
  redis.call('HDEL', textOf, runId)
  redis.call('HDEL', tagsOf, runId)
end
sweep(prefix, now, 2)
return {'ok', version}
`;

/**
 * KEYS: run hash. ARGV: prefix, run id, mode (delete | dangling), a directive the id may be
 * indexed under or ''. `dangling` does nothing (answers -1) while the hash exists; otherwise
 * answers 1 if a hash was deleted, else 0.
 */
export const FORGET_SCRIPT = `${LUA_LIBRARY}
if ARGV[3] == 'dangling' and redis.call('EXISTS', KEYS[1]) == 1 then return -1 end
return forget(ARGV[1], ARGV[2], ARGV[4])
`;

/**
 * KEYS: run hash. Answers the hash as `HGETALL` does, followed by the pseudo-fields `BODY_FIELD`
 * with the run's body and `TEXT_FIELD` with its directive's text, when it has them.
 */
export const READ_SCRIPT = `
local out = redis.call('HGETALL', KEYS[1])
${APPEND_PARTS}
return out
`;

/**
 * Reads a run's feed. KEYS: run hash, the run's feed. ARGV: the id after which to read, the most
 * events to answer. Answers `{'ok', id of the last event, events after ARGV[1]…}`, or
 * `{'gone', id of the last event}` when the feed no longer holds the event after ARGV[1] (trimmed,
 * or the run expired), or `{'ahead', id of the last event}` when ARGV[1] is past the last event.
 */
export const READ_FEED_SCRIPT = `
local last = tonumber(redis.call('HGET', KEYS[1], '${FEED_FIELD}') or '0')
local after = tonumber(ARGV[1])
if after > last then return {'ahead', last} end
local first = last - redis.call('LLEN', KEYS[2]) + 1
if after + 1 < first then return {'gone', last} end
local from = after + 1 - first
return {'ok', last, unpack(redis.call('LRANGE', KEYS[2], from, from + tonumber(ARGV[2]) - 1))}
`;

/** KEYS: expiring. ARGV: prefix, max. Answers how many expired runs were forgotten. */
export const PRUNE_SCRIPT = `${LUA_LIBRARY}
return sweep(ARGV[1], nowMs(), tonumber(ARGV[2]))
`;

/**
 * Claims a run for a worker (see `run-claims.ts`). KEYS: run hash, the workers' leases.
 * ARGV: the claiming worker's lease name, and 'revive' to claim an ended run too (a redrive).
 * Answers `{'missing'}` when the run is not stored,
 * `{'busy', owner}` while another worker whose lease is live holds it, else
 * `{'ok', epoch, previous owner or '', field, value, …}` with the run's hash: the run's `owner`
 * becomes the claimer and its `epoch` grows (unless the claimer held it already), which fences
 * off every later write of the previous holder. An ended run is read, not claimed (epoch ''),
 * unless revived.
 */
export const CLAIM_SCRIPT = `${LUA_LIBRARY}
local hash, me = KEYS[1], ARGV[1]
if redis.call('EXISTS', hash) == 0 then return {'missing'} end
local out = {'ok', '', ''}
local status = redis.call('HGET', hash, 'status')
if (status == 'completed' or status == 'failed' or status == 'cancelled') and ARGV[2] ~= 'revive' then
  for _, v in ipairs(redis.call('HGETALL', hash)) do out[#out + 1] = v end
  ${APPEND_PARTS}
  return out
end
local owner = redis.call('HGET', hash, 'owner')
local previous = ''
if owner and owner ~= me then
  local lease = redis.call('ZSCORE', KEYS[2], owner)
  if lease and tonumber(lease) > nowMs() then return {'busy', owner} end
  previous = owner
end
local epoch = redis.call('HGET', hash, 'epoch')
if owner ~= me or not epoch then
  epoch = redis.call('HINCRBY', hash, 'epoch', 1)
  redis.call('HSET', hash, 'owner', me)
end
out = {'ok', tostring(epoch), previous}
for _, v in ipairs(redis.call('HGETALL', hash)) do out[#out + 1] = v end
${APPEND_PARTS}
return out
`;

/** KEYS: run hash. ARGV: the holder's lease name. Lets the run go if that worker holds it. */
export const RELEASE_SCRIPT = `
if redis.call('HGET', KEYS[1], 'owner') == ARGV[1] then return redis.call('HDEL', KEYS[1], 'owner') end
return 0
`;
