---------------------------------------------------------------------------------------------------------------------
-- BucketState, the state of a token or a leaky bucket: a hash { l = level in units, t = updatedAt }.

local BucketState = {}

-- The saved state (stored), or a fresh one holding freshLevel at now (TokenBucket.fresh, LeakyBucket.fresh).
function BucketState.load(key, freshLevel)
	local saved = redis.call('HMGET', key, 'l', 't')
	if saved[1] then
		return { level = tonumber(saved[1]), updatedAt = tonumber(saved[2]), stored = true }
	end
	return { level = freshLevel, updatedAt = now, stored = false }
end

-- Saves the level at the time, to live ttlMicros (see expire).
function BucketState.save(key, level, at, ttlMicros)
	redis.call('HSET', key, 'l', int(level), 't', int(at))
	expire(key, ttlMicros)
end
