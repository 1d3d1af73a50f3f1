-- wrk script of scripts/benchmarks.sh's http part: one route per run, chosen
-- by environment variables, and one JSON line appended to $BENCH_OUT when the
-- run is done (wrk's own text output is for people).
--
--   BENCH_ROUTE  trivial | validate | get | list | page | deploy | topology
--   BENCH_N      how many endpoints are seeded (bench-00000 ...): get and
--                topology pick one at random, so requests spread over the
--                table instead of contending for one record
--   BENCH_BODY   file with the deploy request (validate and deploy send it;
--                deploy gives each request a new endpoint_name)
--   BENCH_OUT    file the result line is appended to
--   BENCH_TAG    a JSON object merged into the result line (store, size, ...)

local route = os.getenv("BENCH_ROUTE")
local n = tonumber(os.getenv("BENCH_N") or "1")
local body = nil
if os.getenv("BENCH_BODY") then
  local f = assert(io.open(os.getenv("BENCH_BODY")))
  body = f:read("*a")
  f:close()
end

local thread_id = 0

function setup(thread)
  thread_id = thread_id + 1
  thread:set("id", thread_id)
end

local counter = 0

local function seeded()
  return string.format("bench-%05d", math.random(0, n - 1))
end

function init(args)
  -- Distinct random sequences per thread (id is set by setup before init).
  math.randomseed(os.time() * 100 + (id or 0))
end

-- The request of a route that sends the same bytes every time, formatted
-- once: the figure is the server's, not Lua's string building.
local fixed = nil

function request()
  if fixed then
    return fixed
  end
  counter = counter + 1
  local json = { ["Content-Type"] = "application/json" }
  if route == "trivial" then
    fixed = wrk.format("GET", "/healthz")
    return fixed
  elseif route == "validate" then
    fixed = wrk.format("POST", "/api/validate", json, body)
    return fixed
  elseif route == "list" then
    fixed = wrk.format("GET", "/api/endpoints")
    return fixed
  elseif route == "page" then
    fixed = wrk.format("GET", "/api/endpoints?limit=100")
    return fixed
  elseif route == "get" then
    return wrk.format("GET", "/api/endpoints/" .. seeded())
  elseif route == "deploy" then
    -- A fresh name per request: deploy creates, it never overwrites.
    local name = string.format("load-%d-%d-%d", os.time() % 100000, id, counter)
    local b = body:gsub('"endpoint_name": "[^"]*"', '"endpoint_name": "' .. name .. '"', 1)
    return wrk.format("POST", "/api/endpoints", json, b)
  elseif route == "topology" then
    -- Alternating counts, so every write changes the record.
    local b = string.format('{"prefill": %d, "decode": %d}', 1 + counter % 4, 1 + counter % 3)
    return wrk.format("PUT", "/api/endpoints/" .. seeded() .. "/topology", json, b)
  end
  error("unknown BENCH_ROUTE " .. tostring(route))
end

function done(summary, latency, requests)
  -- wrk counts answers with a status of 400 or more in errors.status (e.g. a
  -- 409 when a deploy name is taken): reported, not hidden.
  local e = summary.errors
  local line = string.format(
    '{"what": "http", "route": "%s", "requests": %d, "seconds": %.3f, "rps": %.1f, ' ..
      '"p50_ms": %.3f, "p99_ms": %.3f, "max_ms": %.3f, "status_errors": %d, ' ..
      '"socket_errors": %d, "timeouts": %d, "tag": %s}\n',
    route, summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000, e.status,
    e.connect + e.read + e.write, e.timeout, os.getenv("BENCH_TAG") or "{}")
  local f = assert(io.open(os.getenv("BENCH_OUT"), "a"))
  f:write(line)
  f:close()
end
