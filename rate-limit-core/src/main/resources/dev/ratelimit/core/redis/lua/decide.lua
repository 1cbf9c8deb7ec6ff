---------------------------------------------------------------------------------------------------------------------
-- The entry point: runs the operation of ARGV[1] (see the prelude) on every key, each by the algorithm its limit
-- names.

-- LimitAlgorithm.of: the math of each algorithm code (ScriptArguments.code)
local ALGORITHMS = {
	tb = TokenBucket,
	lb = LeakyBucket,
	fw = FixedWindow,
	swc = SlidingWindowCounter,
	swl = SlidingWindowLog,
	cc = ConcurrencyLimit,
}

local function algorithmOf(limit)
	local algorithm = ALGORITHMS[limit.algorithm]
	if not algorithm then
		error('unknown algorithm ' .. tostring(limit.algorithm))
	end
	return algorithm
end

-- Writes the outcome of key i (the six values an evaluate returns) and a mark of 0 into the reply; returns whether
-- it allowed the call.
local function record(reply, i, allowed, remaining, retry, reset, delay, exceeds)
	local at = 2 + (i - 1) * 7
	reply[at + 1] = allowed and 1 or 0
	reply[at + 2] = remaining
	reply[at + 3] = retry
	reply[at + 4] = reset
	reply[at + 5] = delay
	reply[at + 6] = exceeds and 1 or 0
	reply[at + 7] = 0
	return allowed
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
	want = tonumber(ARGV[5])

	if op == 'r' then
		-- refund: the extra value of each key is its mark, or its lease member
		for i = 1, #KEYS do
			local limit = limitAt(i)
			algorithmOf(limit).refund(KEYS[i], limit, cost, limit.member)
		end
		return { now, 1 }
	end

	local reply = { now, 1 }
	if op == 'n' then
		-- renew: every key is a concurrency limit, its member the lease ("id:cost"); allowed = renewed
		for i = 1, #KEYS do
			record(reply, i, ConcurrencyLimit.renew(KEYS[i], limitAt(i)) == 1, 0, 0, 0, 0, false)
		end
		return reply
	end

	local limits = {}
	local states = {}
	local allAllowed = true
	for i = 1, #KEYS do
		local limit = limitAt(i)
		local algorithm = algorithmOf(limit)
		local state = algorithm.load(KEYS[i], limit)
		limits[i] = limit
		states[i] = state
		if not record(reply, i, algorithm.evaluate(limit, state, cost)) then
			allAllowed = false
		end
	end

	if op == 'l' and allAllowed then
		-- Fill a reservoir from the one token bucket. The state is the one loaded before the fill, which evaluate
		-- never changes.
		local grant = TokenBucket.fill(KEYS[1], limits[1], states[1], cost, want)
		record(reply, 1, TokenBucket.evaluate(limits[1], states[1], grant))
		reply[9] = grant
	elseif op == 'a' and allAllowed then
		for i = 1, #KEYS do
			local limit = limits[i]
			-- the reset of key i's outcome
			local reset = reply[2 + (i - 1) * 7 + 4]
			reply[2 + i * 7] = ALGORITHMS[limit.algorithm].apply(KEYS[i], limit, states[i], cost, reset) or 0
		end
	elseif op ~= 'e' then
		-- First sight (a rejected 'a' or 'l', or 's'): see TokenBucket.firstSight.
		for i = 1, #KEYS do
			local firstSight = ALGORITHMS[limits[i].algorithm].firstSight
			if firstSight then
				firstSight(KEYS[i], limits[i], states[i])
			end
		end
	end

	if not allAllowed then
		reply[2] = 0
	end
	return reply
end
