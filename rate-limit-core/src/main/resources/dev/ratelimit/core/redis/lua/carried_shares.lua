---------------------------------------------------------------------------------------------------------------------
-- CarriedShares, as InMemoryRateLimiter.carry and CarriedShares in dev.ratelimit.core.memory decide them: a key whose
-- limit names counterparts (limits of other algorithms of the same policy and client key, such as another tier's at
-- the same position) and whose state holds nothing spent takes over the largest spent share of their states that
-- counts later than the shares it took over before. The key KEYS[carried] (PREFIX:{POLICY:HASH}:NAME:LAYOUT:carried,
-- in the slot of the state keys) holds until when those count, and expires then, so that no share is taken over
-- twice. A counterpart's state is only read.

local CarriedShares = {}

-- What a key's limit reads, from its carry value (ScriptArguments.carry): 'carried;place v1 ... v11;place v1 ...',
-- the place in KEYS of its carried key, then per counterpart the place of its state key and its limit's eleven values.
-- Read once per limit read (limitAt), into { carried, counterparts = { { place, candidates = { limit, ... } } } }: each
-- counterpart state once, with the limits that name it, in order.
function CarriedShares.read(limit)
	local read = limit.carryFrom
	if read then
		return read
	end
	read = { counterparts = {} }
	local byPlace = {}
	for entry in string.gmatch(limit.carry, '[^;]+') do
		if not read.carried then
			read.carried = tonumber(entry)
		else
			local values = {}
			for value in string.gmatch(entry, '%S+') do
				table.insert(values, value)
			end
			local place = tonumber(table.remove(values, 1))
			local counterpart = byPlace[place]
			if not counterpart then
				counterpart = { place = place, candidates = {} }
				byPlace[place] = counterpart
				table.insert(read.counterparts, counterpart)
			end
			table.insert(counterpart.candidates, readLimit(values))
		end
	end
	limit.carryFrom = read
	return read
end

-- Slot.pick: the limit a counterpart's state is read as, the first of those naming it with the parameters it was
-- written under (its field v), else the first; a sliding log records none.
local function pickCounterpart(key, candidates)
	if #candidates > 1 and candidates[1].algorithm ~= 'swl' then
		local saved = redis.call('HGET', key, 'v')
		for _, candidate in ipairs(candidates) do
			if candidate.params == saved then
				return candidate
			end
		end
	end
	return candidates[1]
end

-- The state a key's limit sees: if it holds nothing spent, after taking over the largest share of its counterparts'
-- that counts later than those it took over before (CarriedShares.carry), marked for a write as a converted state is
-- (see TokenBucket.see), with state.carriedUntil, until when the shares read count; else the state as it is.
function CarriedShares.take(algorithms, algorithm, limit, state)
	if not algorithm.isUnspent(limit, state) then
		return state
	end
	local read = CarriedShares.read(limit)
	local carriedUntil = tonumber(redis.call('GET', KEYS[read.carried]) or 0)
	local permits, untilTime = 0, carriedUntil
	for _, counterpart in ipairs(read.counterparts) do
		local key = KEYS[counterpart.place]
		local from = pickCounterpart(key, counterpart.candidates)
		local fromAlgorithm = algorithms[from.algorithm]
		local fromState = fromAlgorithm.load(key, from)
		-- a bucket or window not stored is fresh: nothing spent (a log not stored holds no entry)
		if fromState.stored ~= false then
			local spent, capacity, counts = fromAlgorithm.spentShare(from, fromState)
			if spent > 0 then
				if counts > carriedUntil then
					-- SpentShare.permitsOf
					permits = math.max(permits, mulDivCeil(spent, limit.capacity, capacity))
				end
				untilTime = math.max(untilTime, counts)
			end
		end
	end
	if permits == 0 then
		return state
	end
	local taken = algorithm.takeOver(limit, state, permits)
	taken.carriedUntil = untilTime
	return taken
end

-- CarriedShares.took: records that a key's limit took shares over that count until untilTime; a later time kept.
function CarriedShares.took(limit, untilTime)
	local key = KEYS[CarriedShares.read(limit).carried]
	if untilTime > tonumber(redis.call('GET', key) or 0) then
		redis.call('SET', key, int(untilTime))
		expire(key, untilTime - now)
	end
end
