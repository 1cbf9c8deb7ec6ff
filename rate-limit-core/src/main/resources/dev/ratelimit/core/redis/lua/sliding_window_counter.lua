---------------------------------------------------------------------------------------------------------------------
-- SlidingWindowCounter. State: WindowState.

local SlidingWindowCounter = {}

-- SlidingWindowCounter.fresh, or the saved state converted to the limit (SlidingWindowCounter.convert)
function SlidingWindowCounter.load(key, limit)
	local state = WindowState.load(key, limit, FixedWindow.windowStart(now, limit.window))
	if state.from then
		return SlidingWindowCounter.convert(state.from, limit, state)
	end
	return state
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

-- SlidingWindowCounter.convert: the counts under the same window length; under a new one, the old estimate at now,
-- at most the new limit, as the count of the window that holds now
function SlidingWindowCounter.convert(from, limit, state)
	local window = from.window
	if window == limit.window then
		state.converted = true
		return state
	end
	local seen = SlidingWindowCounter.roll(from, state)
	local into = math.min(math.max(now - seen.start, 0), window - 1)
	local estimate = seen.current + cdiv(seen.previous * (window - into), window)
	return { start = FixedWindow.windowStart(now, limit.window), current = math.min(estimate, limit.capacity),
		previous = 0, stored = true, converted = true }
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

-- SlidingWindowCounter.isUnspent
function SlidingWindowCounter.isUnspent(limit, state)
	local seen = SlidingWindowCounter.roll(limit, state)
	return seen.current == 0 and seen.previous == 0
end

-- SlidingWindowCounter.spentShare: the permits spent (the weighted count, rounded up), of the limit, until when
function SlidingWindowCounter.spentShare(limit, state)
	local window = limit.window
	local seen = SlidingWindowCounter.roll(limit, state)
	local into = math.min(math.max(now - seen.start, 0), window - 1)
	local estimate = seen.current + cdiv(seen.previous * (window - into), window)
	local untilTime = seen.start + window
	if seen.current > 0 then
		untilTime = seen.start + 2 * window
	end
	return math.min(estimate, limit.capacity), limit.capacity, untilTime
end

-- SlidingWindowCounter.takeOver, as a new state (written as a converted one is)
function SlidingWindowCounter.takeOver(limit, state, permits)
	return { start = SlidingWindowCounter.roll(limit, state).start, current = permits, previous = 0, stored = true,
		converted = true }
end

-- SlidingWindowCounter.apply; returns the window start, the mark a refund needs
function SlidingWindowCounter.apply(key, limit, state, c, reset)
	local seen = SlidingWindowCounter.roll(limit, state)
	local params = WindowState.params(limit, state)
	if params then
		redis.call('HSET', key, 's', int(seen.start), 'c', int(seen.current + c), 'p', int(seen.previous), 'v', params)
	else
		redis.call('HSET', key, 's', int(seen.start), 'c', int(seen.current + c), 'p', int(seen.previous))
	end
	expire(key, reset)
	return seen.start
end

-- A state converted to new parameters is written by a call that applies nothing too (see TokenBucket.see).
function SlidingWindowCounter.see(key, limit, state)
	if state.converted then
		local _, _, _, reset = SlidingWindowCounter.evaluate(limit, state, 0)
		SlidingWindowCounter.apply(key, limit, state, 0, reset)
	end
end

-- Gives back c permits taken in the window that starts at mark: from the current window's count, or from the
-- previous window's once the window has moved on by one.
function SlidingWindowCounter.refund(key, limit, c, mark)
	local state = WindowState.load(key, limit, 0)
	if not state.stored or state.from then
		return
	end
	local start = tonumber(mark)
	local current, previous = state.current, state.previous
	if state.start == start then
		current = math.max(0, current - c)
	elseif state.start == start + limit.window then
		previous = math.max(0, previous - c)
	else
		return
	end
	if current == 0 and previous == 0 then
		-- empty windows decide as a key never seen does
		redis.call('DEL', key)
	else
		redis.call('HSET', key, 'c', int(current), 'p', int(previous))
	end
end
