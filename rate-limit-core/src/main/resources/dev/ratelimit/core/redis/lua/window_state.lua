---------------------------------------------------------------------------------------------------------------------
-- WindowState, the state of a fixed window or a sliding window counter: a hash { s = start, c = current,
-- p = previous }.

local WindowState = {}

-- The saved state, or nil for a missing key.
function WindowState.read(key)
	local saved = redis.call('HMGET', key, 's', 'c', 'p')
	if saved[1] then
		return { start = tonumber(saved[1]), current = tonumber(saved[2]), previous = tonumber(saved[3] or '0') }
	end
	return nil
end

-- The saved state, or a fresh one: the window that starts at freshStart, empty.
function WindowState.load(key, freshStart)
	return WindowState.read(key) or { start = freshStart, current = 0, previous = 0 }
end
