---------------------------------------------------------------------------------------------------------------------
-- FixedWindow. State: WindowState.

local FixedWindow = {}

-- FixedWindow.windowStart
function FixedWindow.windowStart(at, window)
	return at - fmod(at, window)
end

-- FixedWindow.fresh, or the saved state
function FixedWindow.load(key, limit)
	return WindowState.load(key, FixedWindow.windowStart(now, limit.window))
end

-- FixedWindow.evaluate
function FixedWindow.evaluate(limit, state, c)
	local window = limit.window
	local start = math.max(FixedWindow.windowStart(now, window), state.start)
	local count = 0
	if start == state.start then
		count = state.current
	end
	local untilEnd = start + window - now
	local permits = limit.capacity
	if c > permits then
		local reset = untilEnd
		if count == 0 then reset = 0 end
		return neverAllowed(permits - count, reset)
	end
	if count + c <= permits then
		local reset = untilEnd
		if count + c == 0 then reset = 0 end
		return allowed(permits - count - c, reset)
	end
	return rejected(permits - count, untilEnd, untilEnd)
end

-- FixedWindow.apply; returns the window start, the mark a refund needs
function FixedWindow.apply(key, limit, state, c, reset)
	local start = math.max(FixedWindow.windowStart(now, limit.window), state.start)
	local current = state.current
	if start ~= state.start then
		current = 0
	end
	current = current + c
	redis.call('HSET', key, 's', int(start), 'c', int(current))
	expire(key, reset)
	return start
end

-- Gives back c permits taken in the window that starts at mark, if it is still the current one.
function FixedWindow.refund(key, limit, c, mark)
	local state = WindowState.load(key, 0)
	if state.stored and state.start == tonumber(mark) then
		redis.call('HSET', key, 'c', int(math.max(0, state.current - c)))
	end
end
