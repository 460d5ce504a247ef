-- PUT one row: every client field, unconditional (If-Match: *). Ferry: the
-- term's set_id is read-only and left out, so the row stays in its set.
-- Kinto (BENCH_KINTO=1): the record's data is replaced, set_id and all.
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
  local body = '{"word":"put","definition":"put ' .. tag .. '.' .. n .. '","rank":"0050V"}'
  if kinto then body = '{"data":' .. body .. '}' end
  return wrk.format("PUT", prefix .. ids[math.random(#ids)],
    { ["Authorization"] = c.auth, ["Content-Type"] = "application/json", ["If-Match"] = "*" }, body)
end
