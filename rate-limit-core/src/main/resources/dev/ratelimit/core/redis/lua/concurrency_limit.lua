---------------------------------------------------------------------------------------------------------------------
-- ConcurrencyLimit. State: a sorted set, one member "leaseId:cost" per lease, scored by its expiry (RedisRateLimiter
-- removes a released lease by that member). The Java state is in insertion order; with a clock that does not go
-- back that is the score order, and members with equal scores are interchangeable for every formula. A call reads
-- every live lease: O(m) for m leases, at most the limit's max (each lease holds at least one permit), so at most
-- Limit.MAX_CONCURRENCY; apply also removes the expired ones, each once.

local ConcurrencyLimit = {}

local function costOf(member)
	return tonumber(string.match(member, ':(%d+)$'))
end

-- ConcurrencyLimit.fresh, or the saved state: the live leases
function ConcurrencyLimit.load(key, limit)
	return { entries = redis.call('ZRANGEBYSCORE', key, '(' .. int(now), '+inf', 'WITHSCORES') }
end

-- ConcurrencyLimit.evaluate
function ConcurrencyLimit.evaluate(limit, state, c)
	local max = limit.capacity
	local entries = state.entries
	local active = 0
	local lastExpiry = now
	for j = 1, #entries, 2 do
		active = active + costOf(entries[j])
		lastExpiry = math.max(lastExpiry, tonumber(entries[j + 1]))
	end
	-- more in flight than max after max was lowered: none left until enough end
	local left = math.max(0, max - active)
	if c > max then
		return neverAllowed(left, lastExpiry - now)
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
	return rejected(left, retry, lastExpiry - now)
end

-- ConcurrencyLimit.apply
function ConcurrencyLimit.apply(key, limit, state, c)
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

-- ConcurrencyLimit.renew (op 'n'): a lease still held (even one past its expiry that no call has removed yet)
-- expires a lease time from now; a lease no longer there (released, or removed once expired) stays gone. Returns 1
-- if renewed.
function ConcurrencyLimit.renew(key, limit)
	if redis.call('ZADD', key, 'XX', 'CH', int(now + limit.window), limit.member) == 0
			and not redis.call('ZSCORE', key, limit.member) then
		return 0
	end
	local newest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
	expire(key, tonumber(newest[2]) - now)
	return 1
end

-- Gives back the lease "mark:c" that an acquire took (mark is the lease id).
function ConcurrencyLimit.refund(key, limit, c, mark)
	redis.call('ZREM', key, mark .. ':' .. int(c))
end
