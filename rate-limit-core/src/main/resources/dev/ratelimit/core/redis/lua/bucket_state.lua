---------------------------------------------------------------------------------------------------------------------
-- BucketState, the state of a token or a leaky bucket: a hash { l = level in units, t = updatedAt, v = the
-- parameters it was written under }.

local BucketState = {}

-- The saved state (stored; from: the parameters it was written under, if not the limit's), or a fresh one holding
-- freshLevel at now (TokenBucket.fresh, LeakyBucket.fresh).
function BucketState.load(key, limit, freshLevel)
	local saved = redis.call('HMGET', key, 'l', 't', 'v')
	if saved[1] then
		return { level = tonumber(saved[1]), updatedAt = tonumber(saved[2]), stored = true,
			from = writtenUnder(limit, saved[3]) }
	end
	return { level = freshLevel, updatedAt = now, stored = false }
end

-- Saves the level at the time, to live ttlMicros (see expire); with the limit's parameters unless the state was
-- saved under them.
function BucketState.save(key, limit, state, level, at, ttlMicros)
	if state.stored and not state.converted then
		redis.call('HSET', key, 'l', int(level), 't', int(at))
	else
		redis.call('HSET', key, 'l', int(level), 't', int(at), 'v', limit.params)
	end
	expire(key, ttlMicros)
end

-- TokenBucket.sameBucket
function BucketState.sameBucket(from, to)
	return from.capacity == to.capacity and from.perPermit == to.perPermit and from.perMicro == to.perMicro
end

-- TokenBucket.carryOver
function BucketState.carryOver(from, to, units)
	local full = to.capacity * to.perPermit
	if from.perPermit == to.perPermit then
		return math.min(units, full)
	end
	local permits = cdiv(units, from.perPermit)
	if permits >= to.capacity then
		return full
	end
	return permits * to.perPermit
end
