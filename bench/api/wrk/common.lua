-- Shared by the bench scripts: reads ids (one per line) and the auth header
-- from the environment the runner exports.
local M = {}

function M.lines(path)
  local out = {}
  for line in io.lines(path) do
    if line ~= "" then out[#out + 1] = line end
  end
  return out
end

-- wrk starts every thread's Lua state with the same random seed, so without
-- this all threads send the same ids in lockstep (PATCHes then queue on the
-- same row locks) and every run repeats the last one's values (a PATCH that
-- changes nothing costs far less than one that writes). setup() runs once per
-- thread, in the main state, before the thread's init().
local threads = 0
function M.setup(thread)
  threads = threads + 1
  thread:set("bench_thread", threads)
end

-- Seeds math.random apart per thread and per run; returns a tag unique to
-- this thread and run, for values that must not repeat.
function M.seed()
  local number = tonumber(bench_thread) or 0
  local now = os.time()
  math.randomseed(now * 1000 + number)
  return number .. "." .. now
end

M.auth = os.getenv("BENCH_AUTH")
M.dir = os.getenv("BENCH_DIR")

-- Makes this script send GETs of `prefix .. key` for a random key of `file`
-- (under BENCH_DIR), with `headers`. The requests are formatted once, in
-- init(): wrk shares the two cores with the server and PostgreSQL, and
-- formatting a request in Lua per call cost wrk about a quarter of its CPU.
-- Defines wrk's init() and request().
function M.gets(file, prefix, headers)
  local requests
  init = function(args)
    M.seed()
    requests = {}
    for _, key in ipairs(M.lines(M.dir .. "/" .. file)) do
      requests[#requests + 1] = wrk.format("GET", prefix() .. key, headers())
    end
  end
  request = function()
    return requests[math.random(#requests)]
  end
end

-- Makes this script send `method` with If-Match: * to a random id of
-- BENCH_DIR/ids.txt under BENCH_PATH_PREFIX; body(unique, kinto) gives the
-- JSON, `unique` differing per request, thread and run (a write that changes
-- nothing costs less than one that does). Each id's request head is formatted
-- once, in init(), up to its Content-Length; a request then only appends the
-- body's length and the body (wrk.format per request cost wrk about half its
-- CPU per PATCH). Defines wrk's init() and request().
function M.write(method, body)
  local heads, kinto, n, tag
  init = function(args)
    local prefix = os.getenv("BENCH_PATH_PREFIX")
    kinto = os.getenv("BENCH_KINTO") == "1"
    n = 0
    tag = M.seed()
    heads = {}
    for _, id in ipairs(M.lines(M.dir .. "/ids.txt")) do
      heads[#heads + 1] = method .. " " .. prefix .. id .. " HTTP/1.1\r\n"
        .. "Host: " .. wrk.headers["Host"] .. "\r\n"
        .. "Authorization: " .. M.auth .. "\r\n"
        .. "Content-Type: application/json\r\n"
        .. "If-Match: *\r\n"
        .. "Content-Length: "
    end
  end
  request = function()
    n = n + 1
    local b = body(tag .. "." .. n, kinto)
    return heads[math.random(#heads)] .. #b .. "\r\n\r\n" .. b
  end
end

return M
