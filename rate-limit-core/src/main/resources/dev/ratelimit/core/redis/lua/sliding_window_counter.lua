---------------------------------------------------------------------------------------------------------------------
-- SlidingWindowCounter. State: WindowState.

local SlidingWindowCounter = {}

-- SlidingWindowCounter.fresh, or the saved state
function SlidingWindowCounter.load(key, limit)
	return WindowState.load(key, FixedWindow.windowStart(now, limit.window))
end

-- SlidingWindowCounter.roll
function SlidingWindowCounter.roll(limit, state)
	local window = limit.window
	local start = FixedWindow.windowStart(now, window)
	if start <= state.start then
		return state
	end
	if start == state.start + window then
		return { start = start, current = 0, previous = state.current }
	end
	return { start = start, current = 0, previous = 0 }
end

-- SlidingWindowCounter.remaining
function SlidingWindowCounter.remaining(permits, current, weighted, window)
	return math.max(0, permits - current - cdiv(weighted, window))
end

-- SlidingWindowCounter.resetAfter
function SlidingWindowCounter.resetAfter(seen, window, current)
	if current > 0 then
		return seen.start + 2 * window - now
	end
	if seen.previous > 0 then
		return seen.start + window - now
	end
	return 0
end

-- SlidingWindowCounter.retryAfter
function SlidingWindowCounter.retryAfter(seen, window, permits, c, room)
	if room >= 0 and seen.previous > 0 then
		local into = window - fdiv(room * window, seen.previous)
		if into < window then
			return seen.start + into - now
		end
	end
	local nextStart = seen.start + window
	if seen.current == 0 then
		return nextStart - now
	end
	local into = math.max(0, window - fdiv((permits - c) * window, seen.current))
	if into < window then
		return nextStart + into - now
	end
	return nextStart + window - now
end

-- SlidingWindowCounter.evaluate
function SlidingWindowCounter.evaluate(limit, state, c)
	local window = limit.window
	local permits = limit.capacity
	local seen = SlidingWindowCounter.roll(limit, state)
	local into = math.min(math.max(now - seen.start, 0), window - 1)
	local weighted = seen.previous * (window - into)
	local counted = seen.current
	if c <= permits then
		counted = seen.current + c
	end
	local reset = SlidingWindowCounter.resetAfter(seen, window, counted)
	if c > permits then
		return neverAllowed(SlidingWindowCounter.remaining(permits, seen.current, weighted, window),
			SlidingWindowCounter.resetAfter(seen, window, seen.current))
	end
	local room = permits - seen.current - c
	if room >= 0 and weighted <= room * window then
		return allowed(SlidingWindowCounter.remaining(permits, seen.current + c, weighted, window), reset)
	end
	return rejected(SlidingWindowCounter.remaining(permits, seen.current, weighted, window),
		SlidingWindowCounter.retryAfter(seen, window, permits, c, room),
		SlidingWindowCounter.resetAfter(seen, window, seen.current))
end

-- SlidingWindowCounter.apply; returns the window start, the mark a refund needs
function SlidingWindowCounter.apply(key, limit, state, c, reset)
	local seen = SlidingWindowCounter.roll(limit, state)
	redis.call('HSET', key, 's', int(seen.start), 'c', int(seen.current + c), 'p', int(seen.previous))
	expire(key, reset)
	return seen.start
end

-- Gives back c permits taken in the window that starts at mark: from the current window's count, or from the
-- previous window's once the window has moved on by one.
function SlidingWindowCounter.refund(key, limit, c, mark)
	local state = WindowState.load(key, 0)
	if not state.stored then
		return
	end
	local start = tonumber(mark)
	if state.start == start then
		redis.call('HSET', key, 'c', int(math.max(0, state.current - c)))
	elseif state.start == start + limit.window then
		redis.call('HSET', key, 'p', int(math.max(0, state.previous - c)))
	end
end
