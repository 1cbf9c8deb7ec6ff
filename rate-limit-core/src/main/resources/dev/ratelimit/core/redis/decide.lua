-- Decides every limit of one call (all keys in one hash slot) atomically, in two phases: evaluate every limit,
-- then, only if all allow, apply them. A rejected call changes nothing (see "first sight" below for the one
-- exception, which mirrors the in-memory backend).
--
-- This is a line-by-line port of the Java math in dev.ratelimit.core.algorithm; each function names the Java method
-- it mirrors. Lua numbers are doubles: every value here is an integer below 2^53 (Limit validates the parameters so
-- that the Java longs stay below 2^53), so + - * are exact. Division never uses '/' on inexact operands: fdiv/cdiv
-- divide an exact multiple, and math.fmod is exact in IEEE 754. Numbers that go into keys or members are formatted
-- with '%.0f', never tostring (which keeps only 14 digits).
--
-- KEYS: the state keys, one per distinct keyed limit.
-- ARGV[1] op, one of (the Java enum ScriptOperation has the same codes):
--         'a' acquire: evaluate every key, then apply all if all allow, else record first sight
--         's' see: evaluate every key and record first sight, apply nothing (a cluster's slots after a rejected one)
--         'e' evaluate only: no writes
--         'l' fill a reservoir: one token-bucket key, take between cost and ARGV[5] permits (else first sight)
--         'r' refund: give back what 'a' took
--         'n' renew: concurrency keys only, extra = the lease member "id:cost": push its expiry a lease time on
-- ARGV[2] cost, ARGV[3] the time in microseconds or '' to read Redis TIME, ARGV[4] a floor for key TTLs in ms
--         (0 in production; tests with an explicit clock set it, as their clock is not Redis's), ARGV[5] lease size.
-- then per key, ARGS_PER_KEY values: algorithm, unitsPerMicro, unitsPerPermit, capacity, initial, shape (1/0),
--         maxWait (-1: none), window, retention, extra (the lease member of a concurrency limit; for a refund of
--         another algorithm, the mark its acquire returned).
-- Returns: { now, allAllowed (1/0), then per key: allowed, remaining, retryAfter, resetAfter, delay, exceeds, mark }
-- where mark is what a refund needs: the window start (fixed window, sliding counter), the log time (sliding log)
-- or the permits granted ('l').
--
-- The work of a call is bounded: a few commands of O(1) for a bucket or a window; O(log n) commands of O(log n) for a
-- sliding log of n entries, however full (n <= its permits; see its section); O(m) for the m live leases of a
-- concurrency limit (m <= its max).
--
-- Two forms are built from this text (DecideScript): a Redis 7 function library (this text under a '#!lua name=...'
-- line, registering decide as a function: FUNCTION LOAD once, then FCALL per call), and a script for EVALSHA/EVAL
-- (this text followed by a call of decide with the KEYS and ARGV that EVAL sets). So the top level only defines
-- things, as loading a library requires (redis.call is not allowed there): every helper is created once per load,
-- not on every call as a script's locals are. What one call reads is held in the locals just below and in op, cost,
-- now, ttlFloorMillis and want; decide assigns each before anything reads it (want only on the general path, the
-- only one that reads it), and Redis runs one script or function at a time, so no two calls ever share them.

local ARGS_PER_KEY = 10
local FIRST_KEY_ARG = 6

-- The current call's keys and arguments (shadowing the globals EVAL sets, which a function does not have).
local KEYS, ARGV

-- Java Math.floorDiv(a, b) for integers held exactly.
local function fdiv(a, b)
	local r = math.fmod(a, b)
	if r ~= 0 and ((r < 0) ~= (b < 0)) then
		r = r + b
	end
	return (a - r) / b
end

-- LimitAlgorithm.ceilDiv(a, b) = -Math.floorDiv(-a, b)
local function cdiv(a, b)
	return 0 - fdiv(-a, b)
end

-- Java Math.floorMod(a, b)
local function fmod(a, b)
	local r = math.fmod(a, b)
	if r ~= 0 and ((r < 0) ~= (b < 0)) then
		r = r + b
	end
	return r
end

local function int(x)
	return string.format('%.0f', x)
end

-- The current call's ARGV[1] to ARGV[5] and time, assigned by decide.
local op, cost, now, ttlFloorMillis, want

-- Outcome(allowed, remaining, retryAfter, resetAfter, delay, exceeds)
local function outcome(allowed, remaining, retry, reset, delay, exceeds)
	return { allowed, remaining, retry, reset, delay, exceeds }
end
local function allowed(remaining, reset) return outcome(true, remaining, 0, reset, 0, false) end
local function rejected(remaining, retry, reset) return outcome(false, remaining, retry, reset, 0, false) end
local function neverAllowed(remaining, reset) return outcome(false, remaining, 0, reset, 0, true) end

local function limitAt(i)
	local a = FIRST_KEY_ARG + (i - 1) * ARGS_PER_KEY
	return {
		algorithm = ARGV[a],
		perMicro = tonumber(ARGV[a + 1]),
		perPermit = tonumber(ARGV[a + 2]),
		capacity = tonumber(ARGV[a + 3]),
		initial = tonumber(ARGV[a + 4]),
		shape = ARGV[a + 5] == '1',
		maxWait = tonumber(ARGV[a + 6]),
		window = tonumber(ARGV[a + 7]),
		retention = tonumber(ARGV[a + 8]),
		member = ARGV[a + 9],
	}
end

-- Sets a key's time to live from the time (µs) until its state equals a fresh one; 0 or less deletes it.
local function expire(key, ttlMicros)
	if ttlMicros <= 0 and ttlFloorMillis <= 0 then
		redis.call('DEL', key)
		return
	end
	redis.call('PEXPIRE', key, int(math.max(cdiv(math.max(ttlMicros, 0), 1000), ttlFloorMillis, 1)))
end

---------------------------------------------------------------------------------------------------------------------
-- Token bucket and leaky bucket. State: hash { l = level in units, t = updatedAt }. Fresh: TokenBucket.fresh /
-- LeakyBucket.fresh.

local function loadBucket(key, limit)
	local saved = redis.call('HMGET', key, 'l', 't')
	if saved[1] then
		return { level = tonumber(saved[1]), updatedAt = tonumber(saved[2]), stored = true }
	end
	if limit.algorithm == 'tb' then
		return { level = limit.initial * limit.perPermit, updatedAt = now, stored = false }
	end
	return { level = 0, updatedAt = now, stored = false }
end

-- TokenBucket.refill
local function refill(limit, state, at)
	local full = limit.capacity * limit.perPermit
	local deficit = full - state.level
	if deficit <= 0 then
		return full
	end
	local elapsed = at - state.updatedAt
	if elapsed <= 0 then
		return state.level
	end
	if elapsed >= cdiv(deficit, limit.perMicro) then
		return full
	end
	return state.level + elapsed * limit.perMicro
end

-- TokenBucket.evaluate
local function evaluateTokenBucket(limit, state, c)
	local at = math.max(now, state.updatedAt)
	local lag = at - now
	local perPermit = limit.perPermit
	local perMicro = limit.perMicro
	local full = limit.capacity * perPermit
	local level = refill(limit, state, at)
	if c > limit.capacity then
		return neverAllowed(fdiv(level, perPermit), lag + cdiv(full - level, perMicro))
	end
	local need = c * perPermit
	if need <= level then
		local after = level - need
		return allowed(fdiv(after, perPermit), lag + cdiv(full - after, perMicro))
	end
	return rejected(fdiv(level, perPermit), lag + cdiv(need - level, perMicro), lag + cdiv(full - level, perMicro))
end

-- A token bucket that starts below capacity stays distinguishable from a fresh one once full, so it is kept for
-- retention - window (Limit.PARTIAL_START_RETENTION_MICROS) more; for other buckets that difference is 0.
local function bucketTtl(limit, reset)
	local ttl = reset
	if limit.algorithm == 'tb' then
		ttl = reset + (limit.retention - limit.window)
	end
	return math.min(ttl, limit.retention)
end

-- TokenBucket.apply; returns the new reset (time until full)
local function applyTokenBucket(key, limit, state, c)
	local at = math.max(now, state.updatedAt)
	local level = refill(limit, state, at) - c * limit.perPermit
	redis.call('HSET', key, 'l', int(level), 't', int(at))
	local reset = (at - now) + cdiv(limit.capacity * limit.perPermit - level, limit.perMicro)
	expire(key, bucketTtl(limit, reset))
end

-- LeakyBucket.drain
local function drain(limit, state, at)
	if state.level <= 0 then
		return 0
	end
	local elapsed = at - state.updatedAt
	if elapsed <= 0 then
		return state.level
	end
	if elapsed >= cdiv(state.level, limit.perMicro) then
		return 0
	end
	return state.level - elapsed * limit.perMicro
end

-- LeakyBucket.evaluate
local function evaluateLeakyBucket(limit, state, c)
	local at = math.max(now, state.updatedAt)
	local lag = at - now
	local perPermit = limit.perPermit
	local perMicro = limit.perMicro
	local full = limit.capacity * perPermit
	local water = drain(limit, state, at)
	local reset = lag + cdiv(water, perMicro)
	if c > limit.capacity then
		return neverAllowed(fdiv(full - water, perPermit), reset)
	end
	local need = c * perPermit
	local bound = full - need
	-- A call of cost 0 takes no place in the queue: it neither waits nor is refused for the wait.
	local shape = limit.shape and c > 0
	if shape and limit.maxWait >= 0 and limit.maxWait < cdiv(bound, perMicro) then
		bound = limit.maxWait * perMicro
	end
	if water <= bound then
		local after = water + need
		local delay = 0
		if shape then
			delay = lag + cdiv(water, perMicro)
		end
		return outcome(true, fdiv(full - after, perPermit), 0, lag + cdiv(after, perMicro), delay, false)
	end
	return rejected(fdiv(full - water, perPermit), lag + cdiv(water - bound, perMicro), reset)
end

-- LeakyBucket.apply
local function applyLeakyBucket(key, limit, state, c)
	local at = math.max(now, state.updatedAt)
	local level = drain(limit, state, at) + c * limit.perPermit
	redis.call('HSET', key, 'l', int(level), 't', int(at))
	expire(key, bucketTtl(limit, (at - now) + cdiv(level, limit.perMicro)))
end

---------------------------------------------------------------------------------------------------------------------
-- Fixed window and sliding window counter. State: hash { s = start, c = current, p = previous }.

-- FixedWindow.windowStart
local function windowStart(at, window)
	return at - fmod(at, window)
end

local function loadWindow(key, limit)
	local saved = redis.call('HMGET', key, 's', 'c', 'p')
	if saved[1] then
		return { start = tonumber(saved[1]), current = tonumber(saved[2]), previous = tonumber(saved[3] or '0') }
	end
	return { start = windowStart(now, limit.window), current = 0, previous = 0 }
end

-- FixedWindow.evaluate
local function evaluateFixedWindow(limit, state, c)
	local window = limit.window
	local start = math.max(windowStart(now, window), state.start)
	local count = 0
	if start == state.start then
		count = state.current
	end
	local untilEnd = start + window - now
	local permits = limit.capacity
	if c > permits then
		local reset = untilEnd
		if count == 0 then reset = 0 end
		return neverAllowed(permits - count, reset)
	end
	if count + c <= permits then
		local reset = untilEnd
		if count + c == 0 then reset = 0 end
		return allowed(permits - count - c, reset)
	end
	return rejected(permits - count, untilEnd, untilEnd)
end

-- FixedWindow.apply; returns the window start, the mark a refund needs
local function applyFixedWindow(key, limit, state, c, reset)
	local start = math.max(windowStart(now, limit.window), state.start)
	local current = state.current
	if start ~= state.start then
		current = 0
	end
	current = current + c
	redis.call('HSET', key, 's', int(start), 'c', int(current))
	expire(key, reset)
	return start
end

-- SlidingWindowCounter.roll
local function roll(limit, state)
	local window = limit.window
	local start = windowStart(now, window)
	if start <= state.start then
		return state
	end
	if start == state.start + window then
		return { start = start, current = 0, previous = state.current }
	end
	return { start = start, current = 0, previous = 0 }
end

-- SlidingWindowCounter.remaining
local function swcRemaining(permits, current, weighted, window)
	return math.max(0, permits - current - cdiv(weighted, window))
end

-- SlidingWindowCounter.resetAfter
local function swcResetAfter(seen, window, current)
	if current > 0 then
		return seen.start + 2 * window - now
	end
	if seen.previous > 0 then
		return seen.start + window - now
	end
	return 0
end

-- SlidingWindowCounter.retryAfter
local function swcRetryAfter(seen, window, permits, c, room)
	if room >= 0 and seen.previous > 0 then
		local into = window - fdiv(room * window, seen.previous)
		if into < window then
			return seen.start + into - now
		end
	end
	local nextStart = seen.start + window
	if seen.current == 0 then
		return nextStart - now
	end
	local into = math.max(0, window - fdiv((permits - c) * window, seen.current))
	if into < window then
		return nextStart + into - now
	end
	return nextStart + window - now
end

-- SlidingWindowCounter.evaluate
local function evaluateSlidingCounter(limit, state, c)
	local window = limit.window
	local permits = limit.capacity
	local seen = roll(limit, state)
	local into = math.min(math.max(now - seen.start, 0), window - 1)
	local weighted = seen.previous * (window - into)
	local counted = seen.current
	if c <= permits then
		counted = seen.current + c
	end
	local reset = swcResetAfter(seen, window, counted)
	if c > permits then
		return neverAllowed(swcRemaining(permits, seen.current, weighted, window),
			swcResetAfter(seen, window, seen.current))
	end
	local room = permits - seen.current - c
	if room >= 0 and weighted <= room * window then
		return allowed(swcRemaining(permits, seen.current + c, weighted, window), reset)
	end
	return rejected(swcRemaining(permits, seen.current, weighted, window),
		swcRetryAfter(seen, window, permits, c, room), swcResetAfter(seen, window, seen.current))
end

-- SlidingWindowCounter.apply; returns the window start, the mark a refund needs
local function applySlidingCounter(key, limit, state, c, reset)
	local seen = roll(limit, state)
	redis.call('HSET', key, 's', int(seen.start), 'c', int(seen.current + c), 'p', int(seen.previous))
	expire(key, reset)
	return seen.start
end

---------------------------------------------------------------------------------------------------------------------
-- Sliding window log. State: a sorted set with one member "time:total:cost" per distinct time, scored by the time,
-- where total is the running total of the permits taken up to and including it, modulo LOG_TOTAL_MODULUS. These are
-- the entries of the Java LogState, which merges calls at the same time too and drops the same ones; it holds the
-- total before its oldest entry, where each member here holds its cost, so the total before it is total - cost.
-- The permits inside the window are the newest total less the total before the window's first entry, and a
-- rejection's retry-after is the time of the first entry whose total gets far enough past that: a binary search over
-- ranks. So a call on n members (n <= the limit's permits) costs O(log n) commands of O(log n) each, however full the
-- log and however many members have left the window: ZRANGE -1 -1 and ZRANGEBYSCORE LIMIT 0 1 always; for a
-- rejection ZCOUNT, ZCARD and at most log2(n) + 1 ZRANGE r r; for an allowed call ZCOUNT, ZREMRANGEBYRANK of at most
-- LOG_TRIM_PER_CALL members and a ZADD (and ZREM, to merge). A refund also rewrites the k members taken after the one
-- it gives back to (those of the one round trip between the two calls): O((k + 1) log n).

-- LogState.TOTAL_MODULUS, 2^50: totals and their sums with a cost stay below 2^53.
local LOG_TOTAL_MODULUS = 1125899906842624
-- SlidingWindowLog.TRIM_PER_CALL
local LOG_TRIM_PER_CALL = 8

local function logEntry(member)
	local time, total, c = string.match(member, '^(%d+):(%d+):(%d+)$')
	return { member = member, time = tonumber(time), total = tonumber(total), cost = tonumber(c) }
end

local function logMember(time, total, c)
	return int(time) .. ':' .. int(total) .. ':' .. int(c)
end

-- LogState.permitsBetween
local function permitsBetween(from, to)
	return fmod(to - from, LOG_TOTAL_MODULUS)
end

local function loadLog(key, limit)
	local newest = redis.call('ZRANGE', key, -1, -1)
	-- SlidingWindowLog.at
	local at = now
	local newestEntry = nil
	if newest[1] then
		newestEntry = logEntry(newest[1])
		at = math.max(now, newestEntry.time)
	end
	-- LogState.firstAfter(at - window)
	local first = redis.call('ZRANGEBYSCORE', key, '(' .. int(at - limit.window), '+inf', 'LIMIT', 0, 1)
	local firstEntry = nil
	if first[1] then
		firstEntry = logEntry(first[1])
	end
	return { key = key, at = at, newest = newestEntry, first = firstEntry }
end

-- LogState.firstReaching, from the window's first entry; returns the entry's time
local function firstReachingTime(limit, state, base, permits)
	local key = state.key
	local low = redis.call('ZCOUNT', key, '-inf', int(state.at - limit.window))
	local high = math.min(redis.call('ZCARD', key) - 1, low + permits - 1)
	while low < high do
		local middle = fdiv(low + high, 2)
		if permitsBetween(base, logEntry(redis.call('ZRANGE', key, middle, middle)[1]).total) >= permits then
			high = middle
		else
			low = middle + 1
		end
	end
	return logEntry(redis.call('ZRANGE', key, low, low)[1]).time
end

-- SlidingWindowLog.evaluate
local function evaluateSlidingLog(limit, state, c)
	local window = limit.window
	local permits = limit.capacity
	local at = state.at
	local first = state.first
	local base = 0
	local active = 0
	local resetBefore = 0
	if first then
		-- LogState.totalBefore(first)
		base = first.total - first.cost
		active = permitsBetween(base, state.newest.total)
		resetBefore = state.newest.time + window - now
	end
	if c > permits then
		return neverAllowed(permits - active, resetBefore)
	end
	if active + c <= permits then
		local reset = resetBefore
		if c > 0 then
			reset = at + window - now
		end
		return allowed(permits - active - c, reset)
	end
	local excess = active + c - permits
	return rejected(permits - active, firstReachingTime(limit, state, base, excess) + window - now, resetBefore)
end

-- SlidingWindowLog.apply; returns the log time, the mark a refund needs
local function applySlidingLog(key, limit, state, c, reset)
	local at = state.at
	local expired = redis.call('ZCOUNT', key, '-inf', int(at - limit.window))
	if expired > 0 then
		redis.call('ZREMRANGEBYRANK', key, 0, math.min(expired, LOG_TRIM_PER_CALL) - 1)
	end
	if c > 0 then
		-- LogState.add
		local newest = state.newest
		if newest and newest.time == at then
			redis.call('ZADD', key, int(at), logMember(at, fmod(newest.total + c, LOG_TOTAL_MODULUS), newest.cost + c))
			redis.call('ZREM', key, newest.member)
		else
			local total = 0
			if newest then
				total = newest.total
			end
			redis.call('ZADD', key, int(at), logMember(at, fmod(total + c, LOG_TOTAL_MODULUS), c))
		end
	end
	expire(key, reset)
	return at
end

---------------------------------------------------------------------------------------------------------------------
-- Concurrency. State: a sorted set, one member "leaseId:cost" per lease, scored by its expiry (RedisRateLimiter
-- removes a released lease by that member). The Java state is in insertion order; with a clock that does not go
-- back that is the score order, and members with equal scores are interchangeable for every formula. A call reads
-- every live lease: O(m) for m leases, at most the limit's max (each lease holds at least one permit), so at most
-- Limit.MAX_CONCURRENCY; apply also removes the expired ones, each once.

local function costOf(member)
	return tonumber(string.match(member, ':(%d+)$'))
end

local function loadLeases(key)
	return { entries = redis.call('ZRANGEBYSCORE', key, '(' .. int(now), '+inf', 'WITHSCORES') }
end

-- ConcurrencyLimit.evaluate
local function evaluateConcurrency(limit, state, c)
	local max = limit.capacity
	local entries = state.entries
	local active = 0
	local lastExpiry = now
	for j = 1, #entries, 2 do
		active = active + costOf(entries[j])
		lastExpiry = math.max(lastExpiry, tonumber(entries[j + 1]))
	end
	if c > max then
		return neverAllowed(max - active, lastExpiry - now)
	end
	if active + c <= max then
		local reset = lastExpiry - now
		if c > 0 then
			reset = limit.window
		end
		return allowed(max - active - c, reset)
	end
	local excess = active + c - max
	local freed = 0
	local retry = 0
	for j = 1, #entries, 2 do
		freed = freed + costOf(entries[j])
		if freed >= excess then
			retry = tonumber(entries[j + 1]) - now
			break
		end
	end
	return rejected(max - active, retry, lastExpiry - now)
end

-- ConcurrencyLimit.apply
local function applyConcurrency(key, limit, state, c)
	redis.call('ZREMRANGEBYSCORE', key, '-inf', int(now))
	local lastExpiry = now
	local entries = state.entries
	if #entries > 0 then
		lastExpiry = math.max(lastExpiry, tonumber(entries[#entries]))
	end
	if c > 0 then
		local expiry = now + limit.window
		redis.call('ZADD', key, int(expiry), limit.member .. ':' .. int(c))
		lastExpiry = math.max(lastExpiry, expiry)
	end
	expire(key, lastExpiry - now)
end

-- ConcurrencyLimit.renew: a lease still held (even one past its expiry that no call has removed yet) expires a lease
-- time from now; a lease no longer there (released, or removed once expired) stays gone. Returns 1 if renewed.
local function renewConcurrency(key, limit)
	if redis.call('ZADD', key, 'XX', 'CH', int(now + limit.window), limit.member) == 0
			and not redis.call('ZSCORE', key, limit.member) then
		return 0
	end
	local newest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
	expire(key, tonumber(newest[2]) - now)
	return 1
end

---------------------------------------------------------------------------------------------------------------------

local function load(key, limit)
	local a = limit.algorithm
	if a == 'tb' or a == 'lb' then return loadBucket(key, limit) end
	if a == 'fw' or a == 'swc' then return loadWindow(key, limit) end
	if a == 'swl' then return loadLog(key, limit) end
	return loadLeases(key)
end

local function evaluate(limit, state, c)
	local a = limit.algorithm
	if a == 'tb' then return evaluateTokenBucket(limit, state, c) end
	if a == 'lb' then return evaluateLeakyBucket(limit, state, c) end
	if a == 'fw' then return evaluateFixedWindow(limit, state, c) end
	if a == 'swc' then return evaluateSlidingCounter(limit, state, c) end
	if a == 'swl' then return evaluateSlidingLog(limit, state, c) end
	if a == 'cc' then return evaluateConcurrency(limit, state, c) end
	error('unknown algorithm ' .. tostring(a))
end

local function apply(key, limit, state, c, reset)
	local a = limit.algorithm
	if a == 'tb' then applyTokenBucket(key, limit, state, c) return 0 end
	if a == 'lb' then applyLeakyBucket(key, limit, state, c) return 0 end
	if a == 'fw' then return applyFixedWindow(key, limit, state, c, reset) end
	if a == 'swc' then return applySlidingCounter(key, limit, state, c, reset) end
	if a == 'swl' then return applySlidingLog(key, limit, state, c, reset) end
	applyConcurrency(key, limit, state, c)
	return 0
end

-- Gives back what an earlier acquire took (cluster compensation), capped so that no state ever holds more than a
-- fresh one. 'extra' is the mark that acquire returned, or the lease member for a concurrency limit.
local function refund(key, limit, c, extra)
	local a = limit.algorithm
	if a == 'tb' or a == 'lb' then
		local saved = redis.call('HMGET', key, 'l', 't')
		if not saved[1] then
			return
		end
		local state = { level = tonumber(saved[1]), updatedAt = tonumber(saved[2]) }
		local at = math.max(now, state.updatedAt)
		local full = limit.capacity * limit.perPermit
		local level
		local reset
		if a == 'tb' then
			level = math.min(full, refill(limit, state, at) + c * limit.perPermit)
			reset = (at - now) + cdiv(full - level, limit.perMicro)
		else
			level = math.max(0, drain(limit, state, at) - c * limit.perPermit)
			reset = (at - now) + cdiv(level, limit.perMicro)
		end
		redis.call('HSET', key, 'l', int(level), 't', int(at))
		expire(key, bucketTtl(limit, reset))
	elseif a == 'fw' or a == 'swc' then
		local saved = redis.call('HMGET', key, 's', 'c', 'p')
		if not saved[1] then
			return
		end
		local start = tonumber(extra)
		local savedStart = tonumber(saved[1])
		if savedStart == start then
			redis.call('HSET', key, 'c', int(math.max(0, tonumber(saved[2]) - c)))
		elseif a == 'swc' and savedStart == start + limit.window then
			redis.call('HSET', key, 'p', int(math.max(0, tonumber(saved[3] or '0') - c)))
		end
	elseif a == 'swl' then
		local found = redis.call('ZRANGEBYSCORE', key, extra, extra)
		if found[1] then
			-- the entry gives back up to c permits, and every entry taken after it has its running total lowered by as
			-- much; each new member is added before the old one is removed, so that the key never goes empty in
			-- between, which would delete it and its expiry
			local entry = logEntry(found[1])
			local back = math.min(c, entry.cost)
			local later = redis.call('ZRANGEBYSCORE', key, '(' .. extra, '+inf')
			if entry.cost > back then
				redis.call('ZADD', key, extra,
					logMember(entry.time, fmod(entry.total - back, LOG_TOTAL_MODULUS), entry.cost - back))
			end
			redis.call('ZREM', key, entry.member)
			for j = 1, #later do
				local taken = logEntry(later[j])
				redis.call('ZADD', key, int(taken.time),
					logMember(taken.time, fmod(taken.total - back, LOG_TOTAL_MODULUS), taken.cost))
				redis.call('ZREM', key, taken.member)
			end
		end
	else
		redis.call('ZREM', key, extra .. ':' .. int(c))
	end
end

-- The call most APIs make, one token bucket acquiring (op 'a'), decided without the tables of the general path in
-- decide: the same steps as loadBucket, refill, evaluateTokenBucket and applyTokenBucket, then first sight, with
-- the values held in locals instead of eight tables, and the lease size left unread. On one hot key the server
-- spent about 15% less time per call this way (INFO commandstats, redis-benchmark at 50 connections: 21.5 against
-- 25 us on the benchmark machine, where TIME, HMGET, HSET and PEXPIRE take about 1.2 to 1.6 us each and a
-- '%.0f' format 1 us). DecideScriptPathsTest holds it to the general path, command for command, and
-- RedisDifferentialTest to the in-memory decisions. Returns decide's reply.
local function acquireOneTokenBucket(key)
	local perMicro = tonumber(ARGV[FIRST_KEY_ARG + 1])
	local perPermit = tonumber(ARGV[FIRST_KEY_ARG + 2])
	local capacity = tonumber(ARGV[FIRST_KEY_ARG + 3])
	local full = capacity * perPermit
	local saved = redis.call('HMGET', key, 'l', 't')
	local level = 0
	local updatedAt = now
	local stored = false
	if saved[1] then
		level = tonumber(saved[1])
		updatedAt = tonumber(saved[2])
		stored = true
	else
		level = tonumber(ARGV[FIRST_KEY_ARG + 4]) * perPermit
	end
	local at = math.max(now, updatedAt)
	local lag = at - now
	-- TokenBucket.refill
	if full - level <= 0 then
		level = full
	elseif at - updatedAt > 0 then
		if at - updatedAt >= cdiv(full - level, perMicro) then
			level = full
		else
			level = level + (at - updatedAt) * perMicro
		end
	end
	local retention = tonumber(ARGV[FIRST_KEY_ARG + 8])
	local partialStart = retention - tonumber(ARGV[FIRST_KEY_ARG + 7])
	local need = cost * perPermit
	if cost <= capacity and need <= level then
		local after = level - need
		local reset = lag + cdiv(full - after, perMicro)
		redis.call('HSET', key, 'l', int(after), 't', int(at))
		expire(key, math.min(reset + partialStart, retention))
		return { now, 1, 1, fdiv(after, perPermit), 0, reset, 0, 0, 0 }
	end
	local reset = lag + cdiv(full - level, perMicro)
	if not stored and tonumber(ARGV[FIRST_KEY_ARG + 4]) < capacity then
		-- First sight, as in decide: a fresh state has at = now, so reset is its time until full.
		redis.call('HSET', key, 'l', int(level), 't', int(at))
		expire(key, math.min(reset + partialStart, retention))
	end
	if cost > capacity then
		return { now, 0, 0, fdiv(level, perPermit), 0, reset, 0, 1, 0 }
	end
	return { now, 0, 0, fdiv(level, perPermit), lag + cdiv(need - level, perMicro), reset, 0, 0, 0 }
end

-- Decides one call: the main body, run by FCALL (decide is the registered function) or by the EVAL form's last line.
local function decide(keys, argv)
	KEYS = keys
	ARGV = argv
	op = ARGV[1]
	cost = tonumber(ARGV[2])
	if ARGV[3] ~= '' then
		now = tonumber(ARGV[3])
	else
		local time = redis.call('TIME')
		now = tonumber(time[1]) * 1000000 + tonumber(time[2])
	end
	ttlFloorMillis = tonumber(ARGV[4])
	if op == 'a' and #KEYS == 1 and ARGV[FIRST_KEY_ARG] == 'tb' then
		return acquireOneTokenBucket(KEYS[1])
	end
	want = tonumber(ARGV[5])

	if op == 'r' then
		for i = 1, #KEYS do
			local limit = limitAt(i)
			refund(KEYS[i], limit, cost, limit.member)
		end
		return { now, 1 }
	end

	if op == 'n' then
		-- renew: every key is a concurrency limit, its member the lease ("id:cost"); allowed = renewed
		local reply = { now, 1 }
		for i = 1, #KEYS do
			local renewed = renewConcurrency(KEYS[i], limitAt(i))
			for _, value in ipairs({ renewed, 0, 0, 0, 0, 0, 0 }) do
				table.insert(reply, value)
			end
		end
		return reply
	end

	local limits = {}
	local states = {}
	local outcomes = {}
	local marks = {}
	local allAllowed = true
	for i = 1, #KEYS do
		limits[i] = limitAt(i)
		states[i] = load(KEYS[i], limits[i])
		outcomes[i] = evaluate(limits[i], states[i], cost)
		marks[i] = 0
		allAllowed = allAllowed and outcomes[i][1]
	end

	if op == 'l' and allAllowed then
		-- Lease: take as many permits as the bucket holds, between cost and want, from the one token bucket.
		local limit = limits[1]
		local state = states[1]
		local at = math.max(now, state.updatedAt)
		local level = refill(limit, state, at)
		local grant = math.max(cost, math.min(want, fdiv(level, limit.perPermit)))
		local after = level - grant * limit.perPermit
		outcomes[1] = allowed(fdiv(after, limit.perPermit),
			(at - now) + cdiv(limit.capacity * limit.perPermit - after, limit.perMicro))
		applyTokenBucket(KEYS[1], limit, state, grant)
		marks[1] = grant
	elseif op == 'a' and allAllowed then
		for i = 1, #KEYS do
			marks[i] = apply(KEYS[i], limits[i], states[i], cost, outcomes[i][4])
		end
	elseif op ~= 'e' then
		-- First sight: the in-memory backend creates a key's state when it first decides a call, even a rejected
		-- one. Only a token bucket that starts below capacity tells the difference (its refill starts then).
		for i = 1, #KEYS do
			local limit = limits[i]
			if limit.algorithm == 'tb' and not states[i].stored and limit.initial < limit.capacity then
				applyTokenBucket(KEYS[i], limit, states[i], 0)
			end
		end
	end

	local reply = { now, allAllowed and 1 or 0 }
	for i = 1, #KEYS do
		local o = outcomes[i]
		table.insert(reply, o[1] and 1 or 0)
		table.insert(reply, o[2])
		table.insert(reply, o[3])
		table.insert(reply, o[4])
		table.insert(reply, o[5])
		table.insert(reply, o[6] and 1 or 0)
		table.insert(reply, marks[i])
	end
	return reply
end
