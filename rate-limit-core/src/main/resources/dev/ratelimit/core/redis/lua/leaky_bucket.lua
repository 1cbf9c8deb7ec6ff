---------------------------------------------------------------------------------------------------------------------
-- LeakyBucket. State: BucketState, water in units.

local LeakyBucket = {}

-- LeakyBucket.fresh, or the saved state converted to the limit (LeakyBucket.convert)
function LeakyBucket.load(key, limit)
	local state = BucketState.load(key, limit, 0)
	if state.from then
		return LeakyBucket.convert(state.from, limit, state)
	end
	return state
end

-- LeakyBucket.drain
function LeakyBucket.drain(limit, state, at)
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

-- LeakyBucket.convert: the water, drained under the old leak up to now, at most the new depth
function LeakyBucket.convert(from, limit, state)
	if BucketState.sameBucket(from, limit) then
		state.converted = true
		return state
	end
	local at = math.max(now, state.updatedAt)
	return { level = BucketState.carryOver(from, limit, LeakyBucket.drain(from, state, at)), updatedAt = at,
		stored = true, converted = true }
end

-- LeakyBucket.evaluate
function LeakyBucket.evaluate(limit, state, c)
	local at = math.max(now, state.updatedAt)
	local lag = at - now
	local perPermit = limit.perPermit
	local perMicro = limit.perMicro
	local full = limit.capacity * perPermit
	local water = LeakyBucket.drain(limit, state, at)
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

-- LeakyBucket.isUnspent
function LeakyBucket.isUnspent(limit, state)
	return LeakyBucket.drain(limit, state, math.max(now, state.updatedAt)) == 0
end

-- LeakyBucket.spentShare: the permits spent, of the capacity, until when
function LeakyBucket.spentShare(limit, state)
	local at = math.max(now, state.updatedAt)
	local water = LeakyBucket.drain(limit, state, at)
	return math.min(cdiv(water, limit.perPermit), limit.capacity), limit.capacity, at + cdiv(water, limit.perMicro)
end

-- LeakyBucket.takeOver, as a new state (written as a converted one is)
function LeakyBucket.takeOver(limit, state, permits)
	local at = math.max(now, state.updatedAt)
	return { level = math.max(LeakyBucket.drain(limit, state, at), permits * limit.perPermit), updatedAt = at,
		stored = true, converted = true }
end

-- LeakyBucket.apply; reset is evaluate's for the same cost: the time until empty after it
function LeakyBucket.apply(key, limit, state, c, reset)
	local at = math.max(now, state.updatedAt)
	local level = LeakyBucket.drain(limit, state, at) + c * limit.perPermit
	BucketState.save(key, limit, state, level, at, math.min(reset, limit.retention))
end

-- A state converted to new parameters is written by a call that applies nothing too (see TokenBucket.see).
function LeakyBucket.see(key, limit, state)
	if state.converted then
		local _, _, _, reset = LeakyBucket.evaluate(limit, state, 0)
		LeakyBucket.apply(key, limit, state, 0, reset)
	end
end

-- Takes back c permits' worth of the water that an acquire poured, down to empty.
function LeakyBucket.refund(key, limit, c)
	local state = BucketState.load(key, limit, 0)
	if not state.stored or state.from then
		return
	end
	local at = math.max(now, state.updatedAt)
	local level = math.max(0, LeakyBucket.drain(limit, state, at) - c * limit.perPermit)
	if level == 0 and at == now then
		-- empty again, as a key never seen is: a refunded success keeps nothing in Redis
		redis.call('DEL', key)
		return
	end
	BucketState.save(key, limit, state, level, at, math.min((at - now) + cdiv(level, limit.perMicro), limit.retention))
end
