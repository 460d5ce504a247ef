-- PATCH one row: a new definition, unconditional (If-Match: *).
package.path = os.getenv("BENCH_LUA") .. "/?.lua;" .. package.path
local c = require("common")
setup = c.setup
local ids, prefix, kinto, n, tag
function init(args)
  ids = c.lines(c.dir .. "/ids.txt")
  prefix = os.getenv("BENCH_PATH_PREFIX")
  kinto = os.getenv("BENCH_KINTO") == "1"
  n = 0
  tag = c.seed()
end
function request()
  n = n + 1
  local body
  if kinto then
    body = '{"data":{"definition":"patched ' .. tag .. '.' .. n .. '"}}'
  else
    body = '{"definition":"patched ' .. tag .. '.' .. n .. '"}'
  end
  return wrk.format("PATCH", prefix .. ids[math.random(#ids)],
    { ["Authorization"] = c.auth, ["Content-Type"] = "application/json", ["If-Match"] = "*" }, body)
end
