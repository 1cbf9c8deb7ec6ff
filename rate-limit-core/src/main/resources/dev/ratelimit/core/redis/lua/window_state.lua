---------------------------------------------------------------------------------------------------------------------
-- WindowState, the state of a fixed window or a sliding window counter: a hash { s = start, c = current,
-- p = previous }.

local WindowState = {}

-- The saved state (stored), or a fresh one: the window that starts at freshStart, empty.
function WindowState.load(key, freshStart)
	local saved = redis.call('HMGET', key, 's', 'c', 'p')
	if saved[1] then
		return { start = tonumber(saved[1]), current = tonumber(saved[2]), previous = tonumber(saved[3] or '0'),
			stored = true }
	end
	return { start = freshStart, current = 0, previous = 0, stored = false }
end
