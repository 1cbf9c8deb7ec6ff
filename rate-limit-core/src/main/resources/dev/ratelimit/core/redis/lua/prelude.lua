-- Decides every limit of one call (all keys in one hash slot) atomically, in two phases: evaluate every limit,
-- then, only if all allow, apply them. A rejected call changes nothing, but for what the in-memory backend writes
-- too: a token bucket's first sight and a state converted to new parameters (see TokenBucket.see).
--
-- KEYS: the state keys, one per distinct keyed limit, then the penalty keys of their policies and client keys that
--         carry a penalty (penalties.lua), each once, then for the keys whose limits name counterparts the keys that
--         hold until when the shares they took over count and their counterparts' state keys (carried_shares.lua),
--         each once.
-- ARGV[1] op, one of (the Java enum ScriptOperation has the same codes):
--         'a' acquire: evaluate every key, then apply all if all allow, else record first sight
--         's' see: evaluate every key and record first sight, apply nothing (a cluster's slots after a rejected one)
--         'e' evaluate only: no writes
--         'l' fill reservoirs: evaluate every key for the permits its reservoir needs; if all allow, take from each
--             between that and the most it wants, as many as it holds (else first sight); extra =
--             'need:want:own:until'
--         'r' refund: give back what 'a' took
--         'n' renew: concurrency keys only, extra = the lease member "id:cost": push its expiry a lease time on
-- ARGV[2] cost, ARGV[3] the time in microseconds or '' to read Redis TIME, ARGV[4] a floor for key TTLs in ms
--         (0 in production; tests with an explicit clock set it, as their clock is not Redis's), ARGV[5] the
--         reservoir size (unused: a fill's keys each say what they want).
-- then per key, ARGS_PER_KEY values: algorithm, unitsPerMicro, unitsPerPermit, capacity, initial, shape (1/0),
--         maxWait (-1: none), window, retention, penalty (µs, 0: none), penaltyKey (the place in KEYS of the
--         penalty key of the limit's policy and client key, 0: none), carry (what the key reads to take a spent share
--         over, see CarriedShares.read; '' for none, and in ops 'r' and 'n'), extra (the lease member of a concurrency
--         limit; for a refund of another algorithm, the mark its acquire returned; for 'l', 'need:want:own:until', the
--         least and the most permits the key grants, and the permits of the call's own in its reservoir, which it
--         grants too if their window has ended by until, by this script's clock; decide.lua's fillAsk). A fixed
--         window aligned to the calendar sends for its window the starts of four windows around the application's
--         time, 'b1,b2,b3,b4' (CalendarWindow.around):
--         Lua knows no time zones, so the application computes the boundaries, and the script picks among them
--         the window that holds its time, Redis's.
-- Returns: { now, allAllowed (1/0), then per key: allowed, remaining, retryAfter, resetAfter, delay, exceeds, mark,
-- penalized } where mark is what a refund needs: the window start (fixed window, sliding counter), the log time
-- (sliding log) or the permits granted ('l'), and penalized (1/0) says that a penalty of the key's policy and client
-- key rejected it (penalties.lua).
--
-- A key's name holds no parameter of its limit (RedisKeys): the hash of a bucket or a window also holds, in its field
-- v, the parameters it was written under (limit.params). A call with other parameters converts the state first
-- (each algorithm's convert, after LimitAlgorithm.convert: spent stays spent), then decides under its own; the
-- converted state is written with the call's parameters, whether the call is allowed or not ('e' writes nothing).
--
-- The script is assembled from these sources, in the order of DecideScript.PARTS: this prelude; one source per
-- algorithm, named after the Java class in dev.ratelimit.core.internal.algorithm whose math it ports line by line
-- (token_bucket.lua for TokenBucket, ...), each after the state it shares with another algorithm (bucket_state.lua,
-- window_state.lua); and decide.lua, which dispatches each key to its algorithm and runs the operation. A part uses
-- only what the parts before it define. An algorithm is a table of functions named after the Java methods they
-- mirror: load (the key's state, or the algorithm's fresh one), evaluate (the six values of an Outcome), apply (the
-- mark a refund needs, or nothing), refund, and for some an operation of their own.
--
-- Lua numbers are doubles: every value here is an integer below 2^53 (Limit validates the parameters so that the
-- Java longs stay below 2^53), so + - * are exact. Division never uses '/' on inexact operands: fdiv/cdiv divide
-- an exact multiple, and math.fmod is exact in IEEE 754. Numbers that go into keys or members are formatted with
-- '%.0f', never tostring (which keeps only 14 digits).
--
-- The work of a call is bounded: a few commands of O(1) for a bucket or a window; O(log n) commands of O(log n) for a
-- sliding log of n entries, however full (n <= its permits; see sliding_window_log.lua); O(m) for the m live leases
-- of a concurrency limit (m <= its max).
--
-- Two forms are built from the assembled text (DecideScript): a Redis 7 function library (the text under a
-- '#!lua name=...' line, registering decide as a function: FUNCTION LOAD once, then FCALL per call), and a script
-- for EVALSHA/EVAL (the text followed by a call of decide with the KEYS and ARGV that EVAL sets). So the top level
-- only defines things, as loading a library requires (redis.call is not allowed there): every helper is created
-- once per load, not on every call as a script's locals are. What one call reads is held in the locals just below,
-- in op, cost, now and ttlFloorMillis, and in limits; decide assigns each before anything reads it, and Redis runs
-- one script or function at a time, so no two calls ever share them.

local ARGS_PER_KEY = 13
local FIRST_KEY_ARG = 6

-- The current call's keys and arguments (shadowing the globals EVAL sets, which a function does not have).
local KEYS, ARGV

-- Java Math.floorDiv(a, b) for integers held exactly.
local function fdiv(a, b)
	local r = math.fmod(a, b)
	if r ~= 0 and ((r < 0) ~= (b < 0)) then
		r = r + b
	end
	return (a - r) / b
end

-- LimitAlgorithm.ceilDiv(a, b) = -Math.floorDiv(-a, b): the quotient truncated, plus one if a remainder is left
-- and the quotient is positive. (Not through fdiv: it runs several times on every call.)
local function cdiv(a, b)
	local r = math.fmod(a, b)
	local q = (a - r) / b
	if r ~= 0 and ((r < 0) == (b < 0)) then
		q = q + 1
	end
	return q
end

-- LimitAlgorithm.mulDivCeil: a * b / c rounded up, exactly, for 0 <= a <= c and 1 <= b, c < 2^53. A product of 2^53
-- or more would lose digits: the quotient is then built one bit of b at a time, every step below 2^53.
local function mulDivCeil(a, b, c)
	if a * b < 9007199254740992 then
		return cdiv(a * b, c)
	end
	-- q * c + r = a * x, 0 <= r < c, for x the bits of b read so far, highest first
	local q, r, rest = 0, 0, b
	local bit = 4503599627370496
	while bit >= 1 do
		q = 2 * q
		if r >= c - r then
			r = r - (c - r)
			q = q + 1
		else
			r = r + r
		end
		if rest >= bit then
			rest = rest - bit
			if r >= c - a then
				r = r - (c - a)
				q = q + 1
			else
				r = r + a
			end
		end
		bit = bit / 2
	end
	if r > 0 then
		return q + 1
	end
	return q
end

-- Java Math.floorMod(a, b)
local function fmod(a, b)
	local r = math.fmod(a, b)
	if r ~= 0 and ((r < 0) ~= (b < 0)) then
		r = r + b
	end
	return r
end

local function int(x)
	return string.format('%.0f', x)
end

-- The current call's ARGV[1] to ARGV[4], time, and number of state keys (the keys that ARGV describes), assigned
-- by decide.
local op, cost, now, ttlFloorMillis, keyCount

-- Outcome(allowed, remaining, retryAfter, resetAfter, delay, exceeds), as six values rather than a table: an
-- evaluate returns them, and decide writes them straight into its reply.
local function outcome(allowed, remaining, retry, reset, delay, exceeds)
	return allowed, remaining, retry, reset, delay, exceeds
end
local function allowed(remaining, reset) return true, remaining, 0, reset, 0, false end
local function rejected(remaining, retry, reset) return false, remaining, retry, reset, 0, false end
local function neverAllowed(remaining, reset) return false, remaining, 0, reset, 0, true end

-- The limits of the current call's keys, by place: limitAt(i) reads key i's from ARGV. A limit stays in limits[i]
-- after its call, and the next call takes it again if it sends the same arguments at the same place, as the calls
-- of one policy do: its numbers are then not parsed again, which was about 8% of a call's work on the server
-- (one token bucket, counted with callgrind). The extra value, a concurrency lease's member, is read on every call.
-- Only a function library keeps limits from call to call; a script starts each call with none.
local limits = {}

-- Whether ARGV holds, from a on, the arguments a limit was read from (all but the extra value).
local function sameArguments(arguments, a)
	return arguments[1] == ARGV[a] and arguments[2] == ARGV[a + 1] and arguments[3] == ARGV[a + 2]
		and arguments[4] == ARGV[a + 3] and arguments[5] == ARGV[a + 4] and arguments[6] == ARGV[a + 5]
		and arguments[7] == ARGV[a + 6] and arguments[8] == ARGV[a + 7] and arguments[9] == ARGV[a + 8]
		and arguments[10] == ARGV[a + 9] and arguments[11] == ARGV[a + 10] and arguments[12] == ARGV[a + 11]
end

-- A limit read from its eleven values (v[1] the algorithm's code ... v[11] the penalty key's place).
local function readLimit(v)
	local limit = {
		algorithm = v[1],
		perMicro = tonumber(v[2]),
		perPermit = tonumber(v[3]),
		capacity = tonumber(v[4]),
		initial = tonumber(v[5]),
		shape = v[6] == '1',
		maxWait = tonumber(v[7]),
		window = tonumber(v[8]),
		retention = tonumber(v[9]),
		penalty = tonumber(v[10]),
		penaltyKey = tonumber(v[11]),
	}
	-- what a state remembers of the limit it was written under: capacity, perMicro, perPermit and its windows,
	-- the length, or for a calendar window c, the nominal length (FixedWindow.nominal), @ and the zone
	local windows = v[8]
	if not limit.window then
		local zone, list = string.match(v[8], '^([^|]*)|(.*)$')
		limit.bounds = {}
		for bound in string.gmatch(list, '[^,]+') do
			table.insert(limit.bounds, tonumber(bound))
		end
		windows = 'c' .. int(limit.capacity / limit.perMicro * limit.perPermit) .. '@' .. zone
	end
	limit.windows = windows
	limit.params = v[4] .. ':' .. v[2] .. ':' .. v[3] .. ':' .. windows
	return limit
end

local function limitAt(i)
	local a = FIRST_KEY_ARG + (i - 1) * ARGS_PER_KEY
	local limit = limits[i]
	if not (limit and sameArguments(limit.arguments, a)) then
		local arguments = { ARGV[a], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], ARGV[a + 5], ARGV[a + 6],
			ARGV[a + 7], ARGV[a + 8], ARGV[a + 9], ARGV[a + 10], ARGV[a + 11] }
		limit = readLimit(arguments)
		limit.arguments = arguments
		-- read by CarriedShares.read, once per limit read
		limit.carry = ARGV[a + 11]
		limits[i] = limit
	end
	limit.member = ARGV[a + 12]
	return limit
end

-- The parameters a saved state was written under (its field v), when they are not the limit's: a table with the
-- fields of a limit that the algorithms' convert reads. Else (or for a state saved without them) nil.
local function writtenUnder(limit, saved)
	if not saved or saved == limit.params then
		return nil
	end
	local capacity, perMicro, perPermit, windows = string.match(saved, '^(%d+):(%d+):(%d+):(.+)$')
	return { capacity = tonumber(capacity), perMicro = tonumber(perMicro), perPermit = tonumber(perPermit),
		window = tonumber(windows), windows = windows }
end

-- Sets a key's time to live from the time (µs) until its state equals a fresh one; 0 or less deletes it.
local function expire(key, ttlMicros)
	if ttlMicros <= 0 and ttlFloorMillis <= 0 then
		redis.call('DEL', key)
		return
	end
	redis.call('PEXPIRE', key, int(math.max(cdiv(math.max(ttlMicros, 0), 1000), ttlFloorMillis, 1)))
end
