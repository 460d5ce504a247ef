-- PATCH one row: a new definition, unconditional (If-Match: *).
package.path = os.getenv("BENCH_LUA") .. "/?.lua;" .. package.path
local c = require("common")
local ids, prefix, kinto, n
function init(args)
  ids = c.lines(c.dir .. "/ids.txt")
  prefix = os.getenv("BENCH_PATH_PREFIX")
  kinto = os.getenv("BENCH_KINTO") == "1"
  n = 0
end
function request()
  n = n + 1
  local body
  if kinto then
    body = '{"data":{"definition":"patched ' .. n .. '"}}'
  else
    body = '{"definition":"patched ' .. n .. '"}'
  end
  return wrk.format("PATCH", prefix .. ids[math.random(#ids)],
    { ["Authorization"] = c.auth, ["Content-Type"] = "application/json", ["If-Match"] = "*" }, body)
end
