---------------------------------------------------------------------------------------------------------------------
-- TokenBucket. State: BucketState, tokens in units.

local TokenBucket = {}

-- TokenBucket.fresh, or the saved state converted to the limit (TokenBucket.convert)
function TokenBucket.load(key, limit)
	local state = BucketState.load(key, limit, limit.initial * limit.perPermit)
	if state.from then
		return TokenBucket.convert(state.from, limit, state)
	end
	return state
end

-- TokenBucket.refill
function TokenBucket.refill(limit, state, at)
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

-- TokenBucket.convert: refilled under the old parameters up to now, what was spent then stays spent
function TokenBucket.convert(from, limit, state)
	if BucketState.sameBucket(from, limit) then
		state.converted = true
		return state
	end
	local at = math.max(now, state.updatedAt)
	local spent = from.capacity * from.perPermit - TokenBucket.refill(from, state, at)
	return { level = limit.capacity * limit.perPermit - BucketState.carryOver(from, limit, spent), updatedAt = at,
		stored = true, converted = true }
end

-- TokenBucket.evaluate
function TokenBucket.evaluate(limit, state, c)
	local at = math.max(now, state.updatedAt)
	local lag = at - now
	local perPermit = limit.perPermit
	local perMicro = limit.perMicro
	local full = limit.capacity * perPermit
	local level = TokenBucket.refill(limit, state, at)
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

-- A bucket that starts below capacity stays distinguishable from a fresh one once full, so it is kept for
-- retention - window (Limit.PARTIAL_START_RETENTION_MICROS) more; for a bucket that starts full that is 0.
local function tokenBucketTtl(limit, reset)
	return math.min(reset + (limit.retention - limit.window), limit.retention)
end

-- TokenBucket.isUnspent
function TokenBucket.isUnspent(limit, state)
	return TokenBucket.refill(limit, state, math.max(now, state.updatedAt)) >= limit.initial * limit.perPermit
end

-- TokenBucket.spentShare: the permits spent, of the capacity, until when
function TokenBucket.spentShare(limit, state)
	local at = math.max(now, state.updatedAt)
	local missing = limit.capacity * limit.perPermit - TokenBucket.refill(limit, state, at)
	return cdiv(missing, limit.perPermit), limit.capacity, at + cdiv(missing, limit.perMicro)
end

-- TokenBucket.takeOver, as a new state (written as a converted one is)
function TokenBucket.takeOver(limit, state, permits)
	local at = math.max(now, state.updatedAt)
	return { level = math.min(TokenBucket.refill(limit, state, at), (limit.capacity - permits) * limit.perPermit),
		updatedAt = at, stored = true, converted = true }
end

-- TokenBucket.apply; reset is evaluate's for the same cost: the time until full after it
function TokenBucket.apply(key, limit, state, c, reset)
	local at = math.max(now, state.updatedAt)
	BucketState.save(key, limit, state, TokenBucket.refill(limit, state, at) - c * limit.perPermit, at,
		tokenBucketTtl(limit, reset))
end

-- What a call that applies nothing (rejected, or op 's') writes, as the in-memory backend does. A state converted to
-- new parameters, so that they count from the first call that saw them. And first sight: the in-memory backend
-- creates a key's state when it first decides a call, even a rejected one; only a token bucket that starts below
-- capacity tells the difference (its refill starts then).
function TokenBucket.see(key, limit, state)
	if state.converted or (not state.stored and limit.initial < limit.capacity) then
		local _, _, _, reset = TokenBucket.evaluate(limit, state, 0)
		TokenBucket.apply(key, limit, state, 0, reset)
	end
end

-- What a reservoir fill (op 'l') takes once evaluate allowed c: as many permits as the bucket holds, between c and
-- want.
function TokenBucket.reservoirGrant(limit, state, c, want)
	local level = TokenBucket.refill(limit, state, math.max(now, state.updatedAt))
	return math.max(c, math.min(want, fdiv(level, limit.perPermit)))
end

-- Gives back c permits that an acquire took, capped at the capacity.
function TokenBucket.refund(key, limit, c)
	local state = BucketState.load(key, limit, 0)
	if not state.stored or state.from then
		-- another call converted the state to other parameters meanwhile: what was taken stays spent
		return
	end
	local at = math.max(now, state.updatedAt)
	local full = limit.capacity * limit.perPermit
	local level = math.min(full, TokenBucket.refill(limit, state, at) + c * limit.perPermit)
	if level == full and limit.initial == limit.capacity and at == now then
		-- full again, as a key never seen is: a refunded success keeps nothing in Redis
		redis.call('DEL', key)
		return
	end
	BucketState.save(key, limit, state, level, at, tokenBucketTtl(limit, (at - now) + cdiv(full - level, limit.perMicro)))
end
