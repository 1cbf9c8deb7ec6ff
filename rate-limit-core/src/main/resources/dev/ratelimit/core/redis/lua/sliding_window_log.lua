---------------------------------------------------------------------------------------------------------------------
-- SlidingWindowLog. State: a sorted set with one member "time:total:cost" per distinct time, scored by the time,
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

local SlidingWindowLog = {}

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

-- SlidingWindowLog.fresh, or the saved state: the newest entry and the window's first entry
function SlidingWindowLog.load(key, limit)
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

-- SlidingWindowLog.isUnspent
function SlidingWindowLog.isUnspent(limit, state)
	return state.first == nil
end

-- SlidingWindowLog.spentShare: the permits spent (in the window), of the limit, until when
function SlidingWindowLog.spentShare(limit, state)
	local first = state.first
	if not first then
		return 0, limit.capacity, now
	end
	local active = permitsBetween(first.total - first.cost, state.newest.total)
	return math.min(active, limit.capacity), limit.capacity, state.newest.time + limit.window
end

-- SlidingWindowLog.takeOver: the log with an entry at its time that holds the permits, the only one in the window,
-- marked taken until apply or see writes it (writeTakenOver), so that the call's other keys read the counterparts
-- as they were
function SlidingWindowLog.takeOver(limit, state, permits)
	local total = permits
	if state.newest then
		total = fmod(state.newest.total + permits, LOG_TOTAL_MODULUS)
	end
	local entry = { member = logMember(state.at, total, permits), time = state.at, total = total, cost = permits,
		taken = true }
	return { key = state.key, at = state.at, newest = entry, first = entry, taken = true }
end

-- Writes the entry of a log that took a share over, as the Java apply that takeOver calls does: after dropping at
-- most LOG_TRIM_PER_CALL entries that have left the window.
local function writeTakenOver(key, limit, state)
	local expired = redis.call('ZCOUNT', key, '-inf', int(state.at - limit.window))
	if expired > 0 then
		redis.call('ZREMRANGEBYRANK', key, 0, math.min(expired, LOG_TRIM_PER_CALL) - 1)
	end
	redis.call('ZADD', key, int(state.newest.time), state.newest.member)
	state.newest.taken = nil
	state.taken = nil
end

-- SlidingWindowLog.evaluate
function SlidingWindowLog.evaluate(limit, state, c)
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
	-- more in the window than the limit after it was lowered: none left
	local left = math.max(0, permits - active)
	if c > permits then
		return neverAllowed(left, resetBefore)
	end
	if active + c <= permits then
		local reset = resetBefore
		if c > 0 then
			reset = at + window - now
		end
		return allowed(permits - active - c, reset)
	end
	local excess = active + c - permits
	if first.taken then
		-- the share taken over, not written yet, is the only entry in the window
		return rejected(left, first.time + window - now, resetBefore)
	end
	return rejected(left, firstReachingTime(limit, state, base, excess) + window - now, resetBefore)
end

-- SlidingWindowLog.apply; returns the log time, the mark a refund needs
function SlidingWindowLog.apply(key, limit, state, c, reset)
	if state.taken then
		writeTakenOver(key, limit, state)
	end
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

-- A log that took a share over is written by a call that applies nothing too (see TokenBucket.see).
function SlidingWindowLog.see(key, limit, state)
	if state.taken then
		local _, _, _, reset = SlidingWindowLog.evaluate(limit, state, 0)
		writeTakenOver(key, limit, state)
		expire(key, reset)
	end
end

-- Gives back up to c permits to the entry at the log time mark.
function SlidingWindowLog.refund(key, limit, c, mark)
	local found = redis.call('ZRANGEBYSCORE', key, mark, mark)
	if found[1] then
		-- the entry gives back up to c permits, and every entry taken after it has its running total lowered by as
		-- much; each new member is added before the old one is removed, so that the key never goes empty in
		-- between, which would delete it and its expiry
		local entry = logEntry(found[1])
		local back = math.min(c, entry.cost)
		local later = redis.call('ZRANGEBYSCORE', key, '(' .. mark, '+inf')
		if entry.cost > back then
			redis.call('ZADD', key, mark,
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
end
