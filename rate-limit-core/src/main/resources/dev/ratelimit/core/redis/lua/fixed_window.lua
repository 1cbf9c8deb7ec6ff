---------------------------------------------------------------------------------------------------------------------
-- FixedWindow. State: WindowState.

local FixedWindow = {}

-- FixedWindow.windowStart
function FixedWindow.windowStart(at, window)
	return at - fmod(at, window)
end

-- The place in a calendar window's bounds (see limitAt) of the window that holds at; an error if no window there
-- does: the application's clock and Redis's are then more than a window apart.
local function calendarWindowAt(bounds, at)
	for i = 1, #bounds - 1 do
		if at >= bounds[i] and at < bounds[i + 1] then
			return i
		end
	end
	error('calendar window: the time ' .. int(at) .. ' is outside the windows the application sent, from '
		.. int(bounds[1]) .. ' to ' .. int(bounds[#bounds]) .. '; are its clock and Redis\'s a window apart?')
end

-- FixedWindow.startOf (CalendarWindow.start)
function FixedWindow.startOf(limit, at)
	local bounds = limit.bounds
	if not bounds then
		return FixedWindow.windowStart(at, limit.window)
	end
	return bounds[calendarWindowAt(bounds, at)]
end

-- FixedWindow.endOf (CalendarWindow.end)
function FixedWindow.endOf(limit, start)
	local bounds = limit.bounds
	if not bounds then
		return start + limit.window
	end
	return bounds[calendarWindowAt(bounds, start) + 1]
end

-- FixedWindow.fresh, or the saved state converted to the limit (FixedWindow.convert)
function FixedWindow.load(key, limit)
	local state = WindowState.load(key, limit, FixedWindow.startOf(limit, now))
	if state.from then
		return FixedWindow.convert(state.from, limit, state)
	end
	return state
end

-- FixedWindow.convert: the count, at most the new limit, while the window it was counted in lasts; under other
-- windows, the count of the window that holds now. Under the same windows a window ends where it does; under
-- others, where the old length says (a calendar window's nominal length, as the zone is not known here).
function FixedWindow.convert(from, limit, state)
	local same = from.windows == limit.windows
	if same and from.capacity == limit.capacity then
		state.converted = true
		return state
	end
	local ended
	if same then
		ended = (limit.bounds and state.start < limit.bounds[1]) or now >= FixedWindow.endOf(limit, state.start)
	else
		ended = now >= state.start + from.capacity / from.perMicro * from.perPermit
	end
	if ended then
		return { start = FixedWindow.startOf(limit, now), current = 0, previous = 0, stored = true, converted = true }
	end
	local start = state.start
	if not same then
		start = FixedWindow.startOf(limit, now)
	end
	return { start = start, current = math.min(state.current, limit.capacity), previous = 0, stored = true,
		converted = true }
end

-- FixedWindow.evaluate
function FixedWindow.evaluate(limit, state, c)
	local start = math.max(FixedWindow.startOf(limit, now), state.start)
	local count = 0
	if start == state.start then
		count = state.current
	end
	local untilEnd = FixedWindow.endOf(limit, start) - now
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

-- FixedWindow.isUnspent
function FixedWindow.isUnspent(limit, state)
	local start = math.max(FixedWindow.startOf(limit, now), state.start)
	return start ~= state.start or state.current == 0
end

-- FixedWindow.spentShare: the permits spent, of the limit, until when
function FixedWindow.spentShare(limit, state)
	local start = math.max(FixedWindow.startOf(limit, now), state.start)
	if start ~= state.start or state.current == 0 then
		return 0, limit.capacity, now
	end
	return math.min(state.current, limit.capacity), limit.capacity, FixedWindow.endOf(limit, start)
end

-- FixedWindow.takeOver, as a new state (written as a converted one is)
function FixedWindow.takeOver(limit, state, permits)
	return { start = math.max(FixedWindow.startOf(limit, now), state.start), current = permits,
		previous = state.previous, stored = true, converted = true }
end

-- FixedWindow.apply; returns the window start, the mark a refund needs
function FixedWindow.apply(key, limit, state, c, reset)
	local start = math.max(FixedWindow.startOf(limit, now), state.start)
	local current = state.current
	if start ~= state.start then
		current = 0
	end
	current = current + c
	local params = WindowState.params(limit, state)
	if params then
		redis.call('HSET', key, 's', int(start), 'c', int(current), 'v', params)
	else
		redis.call('HSET', key, 's', int(start), 'c', int(current))
	end
	expire(key, reset)
	return start
end

-- A state converted to new parameters is written by a call that applies nothing too (see TokenBucket.see).
function FixedWindow.see(key, limit, state)
	if state.converted then
		local _, _, _, reset = FixedWindow.evaluate(limit, state, 0)
		FixedWindow.apply(key, limit, state, 0, reset)
	end
end

-- Gives back c permits taken in the window that starts at mark, if it is still the current one. A window left empty
-- is deleted: it decides as a key never seen does, and a refunded success keeps nothing in Redis.
function FixedWindow.refund(key, limit, c, mark)
	local state = WindowState.load(key, limit, 0)
	if state.stored and not state.from and state.start == tonumber(mark) then
		local current = math.max(0, state.current - c)
		if current == 0 then
			redis.call('DEL', key)
		else
			redis.call('HSET', key, 'c', int(current))
		end
	end
end
