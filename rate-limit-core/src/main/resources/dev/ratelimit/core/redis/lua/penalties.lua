---------------------------------------------------------------------------------------------------------------------
-- Penalties, as Penalties in dev.ratelimit.core.memory keeps them: per policy and client key, the key
-- PREFIX:{POLICY:HASH}:penalty (in the slot of the policy's state keys) holds the time (µs) until which that client
-- key is refused; it expires as the penalty ends. A limit with a penalty (limit.penaltyKey > 0) whose policy and
-- client key serve one rejects the call with the time left as both waits; one that rejects a call on its own starts
-- one.

local Penalties = {}

-- The time left (µs) of the penalty of a limit's policy and client key, or 0; each penalty key is read once per
-- call, into read.
function Penalties.left(limit, read)
	local at = limit.penaltyKey
	if at == 0 then
		return 0
	end
	local left = read[at]
	if not left then
		local ends = tonumber(redis.call('GET', KEYS[at]) or 0)
		left = math.max(ends - now, 0)
		read[at] = left
	end
	return left
end

-- Refuses a limit's policy and client key for its penalty from now on; a penalty already running longer is kept.
function Penalties.impose(limit)
	local key = KEYS[limit.penaltyKey]
	local ends = now + limit.penalty
	if ends > tonumber(redis.call('GET', key) or 0) then
		redis.call('SET', key, int(ends))
		expire(key, limit.penalty)
	end
end
