---------------------------------------------------------------------------------------------------------------------
-- WindowState, the state of a fixed window or a sliding window counter: a hash { s = start, c = current,
-- p = previous, v = the parameters it was written under }.

local WindowState = {}

-- The saved state (stored; from: the parameters it was written under, if not the limit's), or a fresh one: the
-- window that starts at freshStart, empty.
function WindowState.load(key, limit, freshStart)
	local saved = redis.call('HMGET', key, 's', 'c', 'p', 'v')
	if saved[1] then
		return { start = tonumber(saved[1]), current = tonumber(saved[2]), previous = tonumber(saved[3] or '0'),
			stored = true, from = writtenUnder(limit, saved[4]) }
	end
	return { start = freshStart, current = 0, previous = 0, stored = false }
end

-- The fields a window's HSET writes besides its counts: the limit's parameters, unless the state was saved under
-- them.
function WindowState.params(limit, state)
	if state.stored and not state.converted then
		return nil
	end
	return limit.params
end
