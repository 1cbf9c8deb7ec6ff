-- wrk script of the reliability campaign (Wrk.java writes it out and sets the environment).
-- Each request names a client in the X-Client header: RELIABILITY_PREFIX followed by a number that rotates over
-- RELIABILITY_KEYS clients (1: one hot client). done() prints the responses by status on one line, a 503 that
-- carries Retry-After (the answer of on-backend-failure: deny) counted apart as 503-planned.

local keys = tonumber(os.getenv("RELIABILITY_KEYS") or "1")
local prefix = os.getenv("RELIABILITY_PREFIX") or "client-"
local threads = {}

counts = {}
local counter = 0

function setup(thread)
   thread:set("id", #threads)
   table.insert(threads, thread)
end

function init(args)
   -- threads start apart, so that they do not send the same clients in step
   counter = id * 7919
end

function request()
   counter = counter + 1
   return wrk.format(nil, nil, { ["X-Client"] = prefix .. (counter % keys) })
end

function response(status, headers, body)
   local name = tostring(status)
   if status == 503 then
      for header, _ in pairs(headers) do
         if string.lower(header) == "retry-after" then
            name = "503-planned"
         end
      end
   end
   counts[name] = (counts[name] or 0) + 1
end

function done(summary, latency, requests)
   local total = {}
   for _, thread in ipairs(threads) do
      for status, count in pairs(thread:get("counts")) do
         total[status] = (total[status] or 0) + count
      end
   end
   io.write("statuses")
   for status, count in pairs(total) do
      io.write(" ", status, "=", count)
   end
   io.write("\n")
end
