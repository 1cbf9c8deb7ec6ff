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

local function unknownAlgorithm(limit)
	error('unknown algorithm ' .. tostring(limit.algorithm))
end

-- How many permits a reservoir fill takes from a key whose limit allows need: as many as the limit allows now, at most
-- want. A bucket says at once (its reservoirGrant); for the others, the most that evaluate allows, found by bisection
-- (evaluate allows a smaller cost whenever it allows a larger one, and writes nothing).
local function reservoirGrant(algorithm, limit, state, need, want)
	if algorithm.reservoirGrant then
		return algorithm.reservoirGrant(limit, state, need, want)
	end
	local low, high = need, math.max(need, want)
	while low < high do
		local middle = low + fdiv(high - low + 1, 2)
		if algorithm.evaluate(limit, state, middle) then
			low = middle
		else
			high = middle - 1
		end
	end
	return low
end

-- What a fill asks of a key, from its extra value 'need:want:own:until': between need and want permits; and, if the
-- window of the own permits the call holds of the key's reservoir ended by until (this call's clock), those too, as
-- they lapsed with it (PermitReservoirs.Claimed.lapsed).
local function fillAsk(limit)
	local need, want, own, ends = string.match(limit.member, '^(%d+):(%d+):(%d+):(-?%d+)$')
	need, want, own = tonumber(need), tonumber(want), tonumber(own)
	if own > 0 and now >= tonumber(ends) then
		return need + own, want + own
	end
	return need, want
end

-- The reply holds now, allAllowed, then REPLY_PER_KEY values per key: key i's follow 2 + (i - 1) * REPLY_PER_KEY.
local REPLY_PER_KEY = 8

-- Gives back what an acquire took: the extra value of each key is its mark, or its lease member.
local function refund()
	for i = 1, keyCount do
		local limit = limitAt(i)
		local algorithm = ALGORITHMS[limit.algorithm] or unknownAlgorithm(limit)
		algorithm.refund(KEYS[i], limit, cost, limit.member)
	end
	return { now, 1 }
end

-- Renews leases: every key is a concurrency limit, its member the lease ("id:cost"); allowed = renewed.
local function renew()
	local reply = { now, 1 }
	for i = 1, keyCount do
		local at = 2 + (i - 1) * REPLY_PER_KEY
		reply[at + 1] = ConcurrencyLimit.renew(KEYS[i], limitAt(i))
		for j = 2, REPLY_PER_KEY do
			reply[at + j] = 0
		end
	end
	return reply
end

-- The commonest call, one key without a penalty acquiring: the steps of the loops in decide for that one key, without their tables
-- and index arithmetic, which takes about 4% off the server's instructions per call (callgrind, one token bucket).
-- It calls the same algorithm functions as the loops; DecideScriptTest holds it to them, reply for reply and command
-- for command.
local function acquireOneKey()
	local limit = limitAt(1)
	local algorithm = ALGORITHMS[limit.algorithm] or unknownAlgorithm(limit)
	local state = algorithm.load(KEYS[1], limit)
	local allowed, remaining, retry, reset, delay, exceeds = algorithm.evaluate(limit, state, cost)
	local mark = 0
	if allowed then
		mark = algorithm.apply(KEYS[1], limit, state, cost, reset) or 0
	elseif algorithm.see then
		algorithm.see(KEYS[1], limit, state)
	end
	local allowedFlag = allowed and 1 or 0
	return { now, allowedFlag, allowedFlag, remaining, retry, reset, delay, exceeds and 1 or 0, mark, 0 }
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
	keyCount = (#ARGV - FIRST_KEY_ARG + 1) / ARGS_PER_KEY
	if op == 'r' then
		return refund()
	end
	if op == 'n' then
		return renew()
	end
	if op == 'a' and keyCount == 1 and ARGV[FIRST_KEY_ARG + 9] == '0' and ARGV[FIRST_KEY_ARG + 11] == '' then
		return acquireOneKey()
	end

	-- Evaluate every key, writing each outcome (and a mark of 0) into the reply; a key whose policy and client key
	-- serve a penalty is rejected with its time left. Sized for one key; more keys extend it.
	local reply = { now, 1, 0, 0, 0, 0, 0, 0, 0, 0 }
	local states = {}
	local allAllowed = true
	-- the time left of each penalty key read, by its place in KEYS
	local penaltiesRead = {}
	-- whether a key with a penalty rejected the call on its own
	local imposing = false
	-- whether a key took a spent share over (carried_shares.lua)
	local carrying = false
	for i = 1, keyCount do
		local limit = limitAt(i)
		local algorithm = ALGORITHMS[limit.algorithm] or unknownAlgorithm(limit)
		local state = algorithm.load(KEYS[i], limit)
		if limit.carry ~= '' then
			state = CarriedShares.take(ALGORITHMS, algorithm, limit, state)
			carrying = carrying or state.carriedUntil ~= nil
		end
		states[i] = state
		-- a fill asks each key for the permits its reservoir lacks
		local c = cost
		if op == 'l' then
			c = fillAsk(limit)
		end
		local allowed, remaining, retry, reset, delay, exceeds = algorithm.evaluate(limit, state, c)
		local penalized = 0
		if limit.penaltyKey ~= 0 then
			local left = Penalties.left(limit, penaltiesRead)
			if left > 0 then
				allowed, remaining, retry, reset, delay, exceeds = false, 0, left, left, 0, false
				penalized = 1
			elseif not allowed then
				imposing = true
			end
		end
		local at = 2 + (i - 1) * REPLY_PER_KEY
		reply[at + 1] = allowed and 1 or 0
		reply[at + 2] = remaining
		reply[at + 3] = retry
		reply[at + 4] = reset
		reply[at + 5] = delay
		reply[at + 6] = exceeds and 1 or 0
		reply[at + 7] = 0
		reply[at + 8] = penalized
		allAllowed = allAllowed and allowed
	end

	if op == 'l' and allAllowed then
		-- Fill reservoirs: each key takes as many permits as its limit allows now, between the permits it needs and
		-- the most it wants (fillAsk); its outcome is that of taking them, from the state loaded before the fill
		-- (which writes Redis, not the state).
		for i = 1, keyCount do
			local limit = limits[i]
			local algorithm = ALGORITHMS[limit.algorithm]
			local need, want = fillAsk(limit)
			local grant = reservoirGrant(algorithm, limit, states[i], need, want)
			local _, remaining, _, reset = algorithm.evaluate(limit, states[i], grant)
			algorithm.apply(KEYS[i], limit, states[i], grant, reset)
			local at = 2 + (i - 1) * REPLY_PER_KEY
			reply[at + 2] = remaining
			reply[at + 4] = reset
			reply[at + 7] = grant
		end
	elseif op == 'a' and allAllowed then
		-- Apply every key, with its outcome's reset; the mark a refund needs is the key's last value.
		for i = 1, keyCount do
			local limit = limits[i]
			local at = 2 + (i - 1) * REPLY_PER_KEY
			reply[at + 7] = ALGORITHMS[limit.algorithm].apply(KEYS[i], limit, states[i], cost, reply[at + 4]) or 0
		end
	elseif op ~= 'e' then
		-- What a call that applies nothing writes (a rejected 'a' or 'l', or 's'): see TokenBucket.see.
		for i = 1, keyCount do
			local limit = limits[i]
			local see = ALGORITHMS[limit.algorithm].see
			if see then
				see(KEYS[i], limit, states[i])
			end
		end
	end

	if carrying and op ~= 'e' then
		-- each key whose state took a share over, written above, takes it over no more
		for i = 1, keyCount do
			if states[i].carriedUntil then
				CarriedShares.took(limits[i], states[i].carriedUntil)
			end
		end
	end

	if imposing and op ~= 'e' then
		-- Each key with a penalty that rejected the call on its own starts its penalty (after the loop above, which
		-- read every running penalty before this call's).
		for i = 1, keyCount do
			local limit = limits[i]
			local at = 2 + (i - 1) * REPLY_PER_KEY
			if limit.penaltyKey ~= 0 and reply[at + 1] == 0 and reply[at + 8] == 0 then
				Penalties.impose(limit)
				-- the call that starts a penalty waits for it, as every call during it does
				reply[at + 3] = math.max(reply[at + 3], limit.penalty)
				reply[at + 4] = math.max(reply[at + 4], limit.penalty)
			end
		end
	end

	if not allAllowed then
		reply[2] = 0
	end
	return reply
end
